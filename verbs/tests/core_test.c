// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The core of mroce's libibverbs as an unmodified application sees it:
 * built against Debian's <infiniband/verbs.h> and -libverbs, run with
 * LD_LIBRARY_PATH=build/verbs. Root, in a namespace with one veth end
 * (verbs/tests/core_test.sh sets it up):
 *   core_test IFNAME IPV4 IP_MTU
 * Every check prints what it saw; the exit code is the number that failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok   ");					\
	} else {							\
		printf("FAIL ");					\
		failed++;						\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
} while (0)

static enum ibv_mtu expect_mtu(int ip_mtu)
{
	int room = ip_mtu - 92;	/* IPv4 + UDP + mroce's largest data header stack */

	return room >= 4096 ? IBV_MTU_4096 : room >= 2048 ? IBV_MTU_2048 :
	       room >= 1024 ? IBV_MTU_1024 : room >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

static struct ibv_device **test_device_list(const char *ifname, struct ibv_device **dev)
{
	char want[64];
	int n = -1;
	struct ibv_device **list = ibv_get_device_list(&n);

	snprintf(want, sizeof(want), "mroce_%s", ifname);
	CHECK(list && n == 1, "device list: %d device(s)", n);
	*dev = NULL;
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), want))
			*dev = list[i];
	CHECK(*dev, "%s listed", want);
	if (*dev) {
		CHECK(ibv_get_device_index(*dev) == (int)if_nametoindex(ifname),
		      "device index %d = ifindex %u", ibv_get_device_index(*dev),
		      if_nametoindex(ifname));
		CHECK((*dev)->transport_type == IBV_TRANSPORT_IB && (*dev)->node_type == IBV_NODE_CA,
		      "transport IB, node CA");
	}
	/* the list may go before the context: the device lives on in it */
	if (*dev) {
		struct ibv_context *c = ibv_open_device(*dev);

		ibv_free_device_list(list);
		CHECK(c && !strcmp(ibv_get_device_name(c->device), want),
		      "device usable after ibv_free_device_list");
		if (c)
			ibv_close_device(c);
	} else if (list) {
		ibv_free_device_list(list);
	}
	/* a fresh list for the rest */
	list = ibv_get_device_list(&n);
	*dev = list && n == 1 ? list[0] : NULL;
	return list;
}

static void test_queries(struct ibv_context *ctx, struct ibv_device *dev, const char *ip, int mtu)
{
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	union ibv_gid gid, want = { 0 };
	struct ibv_gid_entry ge;
	__be16 pkey = 0;
	__be64 guid = ibv_get_device_guid(dev);
	int rc;

	rc = ibv_query_device(ctx, &da);
	CHECK(rc == 0 && da.max_qp == 1023 && da.max_sge == 4 && da.atomic_cap == IBV_ATOMIC_NONE &&
	      da.max_srq == 0 && da.phys_port_cnt == 1 && da.node_guid == guid &&
	      !strncmp(da.fw_ver, "mroce ", 6),
	      "ibv_query_device: rc %d max_qp %d max_qp_wr %d max_sge %d fw '%s'",
	      rc, da.max_qp, da.max_qp_wr, da.max_sge, da.fw_ver);
	rc = ibv_query_device_ex(ctx, NULL, &dx);
	CHECK(rc == 0 && dx.orig_attr.max_qp == 1023 && dx.phys_port_cnt_ex == 1,
	      "ibv_query_device_ex: rc %d", rc);
	rc = ibv_query_port(ctx, 1, &pa);
	CHECK(rc == 0 && pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	      pa.active_mtu == expect_mtu(mtu) && pa.max_mtu == expect_mtu(mtu) &&
	      pa.gid_tbl_len == 1 && pa.pkey_tbl_len == 1,
	      "ibv_query_port: rc %d state %d link %d mtu %d/%d (want %d for IP MTU %d)",
	      rc, pa.state, pa.link_layer, pa.active_mtu, pa.max_mtu, expect_mtu(mtu), mtu);
	CHECK(ibv_query_port(ctx, 2, &pa) == EINVAL, "ibv_query_port(2): EINVAL");

	want.raw[10] = want.raw[11] = 0xff;
	inet_pton(AF_INET, ip, &want.raw[12]);
	rc = ibv_query_gid(ctx, 1, 0, &gid);
	CHECK(rc == 0 && !memcmp(&gid, &want, sizeof(gid)), "GID 0 = ::ffff:%s", ip);
	errno = 0;
	rc = ibv_query_gid(ctx, 1, 1, &gid);
	CHECK(rc && errno == EINVAL, "GID 1: rc %d errno %d (EINVAL)", rc, errno);
	rc = ibv_query_gid_ex(ctx, 1, 0, &ge, 0);
	CHECK(rc == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(&ge.gid, &want, 16) &&
	      ge.ndev_ifindex == (uint32_t)ibv_get_device_index(dev),
	      "ibv_query_gid_ex: rc %d type %u", rc, ge.gid_type);
	CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge, 0) == EINVAL, "ibv_query_gid_ex(1): EINVAL");
	{
		struct ibv_gid_entry t[4];
		ssize_t n = ibv_query_gid_table(ctx, t, 4, 0);

		CHECK(n == 1 && !memcmp(&t[0].gid, &want, 16), "ibv_query_gid_table: %zd entry", n);
	}
	rc = ibv_query_pkey(ctx, 1, 0, &pkey);
	CHECK(rc == 0 && pkey == 0xffff, "P_Key 0 = 0x%x", pkey);
}

static void test_pd_mr(struct ibv_context *ctx)
{
	static char buf[1 << 16];
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2;
	struct ibv_mr *mr, *mr2;

	CHECK(pd, "ibv_alloc_pd: %s", pd ? "ok" : strerror(errno));
	if (!pd)
		return;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	CHECK(mr && mr->addr == buf && mr->length == sizeof(buf) && mr->pd == pd &&
	      mr->context == ctx && mr->lkey && mr->rkey,
	      "ibv_reg_mr: lkey 0x%x rkey 0x%x", mr ? mr->lkey : 0, mr ? mr->rkey : 0);
	/* non-constant access: verbs.h's macro goes through ibv_reg_mr_iova2 */
	{
		volatile int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING;

		mr2 = ibv_reg_mr(pd, buf, 4096, acc);
		CHECK(mr2, "ibv_reg_mr with RELAXED_ORDERING (ignored): %s",
		      mr2 ? "ok" : strerror(errno));
		if (mr2)
			CHECK(ibv_dereg_mr(mr2) == 0, "ibv_dereg_mr");
	}
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(!mr2 && errno == EOPNOTSUPP, "REMOTE_ATOMIC refused: %s", strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND);
	CHECK(!mr2 && errno == EOPNOTSUPP, "MW_BIND refused: %s", strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	CHECK(!mr2 && errno == EINVAL, "REMOTE_WRITE without LOCAL_WRITE: %s", strerror(errno));
	errno = 0;
	mr2 = ibv_reg_mr_iova(pd, buf, 4096, 0x1000, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2 && errno == EOPNOTSUPP, "iova != addr refused: %s", strerror(errno));
	mr2 = ibv_reg_mr_iova(pd, buf, 4096, (uintptr_t)buf, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr2, "iova == addr: %s", mr2 ? "ok" : strerror(errno));
	if (mr2)
		ibv_dereg_mr(mr2);
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "ibv_dealloc_pd with a region: EBUSY");
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd2 && pd2 != pd, "a second PD");
	if (pd2)
		CHECK(ibv_dealloc_pd(pd2) == 0, "ibv_dealloc_pd(second)");
	if (mr)
		CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
}

static void test_cq(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *cq2, *ev_cq;
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc[4];
	void *ev_ctx;
	int rc, flags;

	CHECK(ch && ch->fd >= 0, "ibv_create_comp_channel: fd %d", ch ? ch->fd : -1);
	cq = ibv_create_cq(ctx, 100, (void *)0x1234, ch, 0);
	CHECK(cq && cq->cqe >= 100 && cq->channel == ch && cq->cq_context == (void *)0x1234,
	      "ibv_create_cq on the channel");
	cq2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq2, "ibv_create_cq without a channel");
	errno = 0;
	CHECK(!ibv_create_cq(ctx, 16, NULL, NULL, 5) && errno == EINVAL, "comp_vector 5: EINVAL");
	errno = 0;
	CHECK(!ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL, "cqe 0: EINVAL");
	if (!cq || !cq2 || !ch)
		return;
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "ibv_poll_cq on an empty CQ: 0");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq");
	CHECK(ibv_req_notify_cq(cq, 1) == 0, "ibv_req_notify_cq(solicited_only)");
	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	errno = 0;
	rc = ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	CHECK(rc == -1 && errno == EAGAIN, "ibv_get_cq_event, nothing completed, O_NONBLOCK: EAGAIN");
	fcntl(ch->fd, F_SETFL, flags);
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY, "ibv_destroy_comp_channel with a CQ: EBUSY");
	CHECK(ibv_resize_cq(cq, 50) == 0, "ibv_resize_cq to fewer: 0");
	CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	CHECK(ibv_destroy_cq(cq2) == 0, "ibv_destroy_cq (no channel)");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel");

	{
		struct ibv_cq_init_attr_ex ia = {
			.cqe = 64,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM,
		};
		struct ibv_poll_cq_attr pa = { 0 };

		cqx = ibv_create_cq_ex(ctx, &ia);
		CHECK(cqx, "ibv_create_cq_ex: %s", cqx ? "ok" : strerror(errno));
		if (cqx) {
			CHECK(ibv_start_poll(cqx, &pa) == ENOENT, "ibv_start_poll on an empty CQ: ENOENT");
			CHECK(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 4, wc) == 0, "ibv_poll_cq on a cq_ex: 0");
			CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "ibv_destroy_cq(cq_ex)");
		}
		ia.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		errno = 0;
		cqx = ibv_create_cq_ex(ctx, &ia);
		CHECK(!cqx && errno == EOPNOTSUPP, "ibv_create_cq_ex with timestamps: %s",
		      strerror(errno));
	}
}

static void test_unsupported(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		return;
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, IBV_MW_TYPE_1) && errno == EOPNOTSUPP, "ibv_alloc_mw: %s",
	      strerror(errno));
	ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	struct ibv_device *dev, **list;
	struct ibv_context *ctx;

	if (argc != 4) {
		fprintf(stderr, "usage: %s IFNAME IPV4 IP_MTU\n", argv[0]);
		return 2;
	}
	list = test_device_list(argv[1], &dev);
	if (!dev)
		return 100;
	ctx = ibv_open_device(dev);
	CHECK(ctx, "ibv_open_device");
	if (!ctx)
		return 100;
	test_queries(ctx, dev, argv[2], atoi(argv[3]));
	test_pd_mr(ctx);
	test_cq(ctx);
	test_unsupported(ctx);
	CHECK(ibv_close_device(ctx) == 0, "ibv_close_device");
	ibv_free_device_list(list);
	printf("%d failed\n", failed);
	return failed;
}
