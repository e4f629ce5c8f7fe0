// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbs_dv: a Verbs program that uses mroce's extension calls (mrocedv.h)
 * as an application would: a device over several planes
 * (mrocedv_open_device), a QP with its own paths and congestion control
 * (mrocedv_create_qp), the peer's planes exchanged with its QPN, PSN and
 * GIDs over TCP (mrocedv_query_planes / mrocedv_set_remote_planes). The
 * client WRITEs a pattern into the server's region and SENDs "done"; the
 * server checks every byte and answers over TCP. Both print the QP's
 * counters (mrocedv_query_qp_stats) and check that it sprays over the
 * paths asked for.
 *
 *   verbs_dv -d DEV [-P IF,IF..] [-p PATHS] [-c ecn|delay|none] [-b BYTES] [-t PORT] [SERVER_IP]
 *   verbs_dv --refusals -d DEV    the extension calls' errors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <mroce/mrocedv.h>

#define CHUNK	(1u << 20)
#define DEPTH	16

struct peer_msg {
	uint32_t	qpn, psn, n_gids, rkey;
	uint64_t	addr;
	union ibv_gid	gids[MROCEDV_MAX_PLANES];
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "verbs_dv: %s: %s\n", what, strerror(err));
	return 1;
}

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i * 2654435761u >> 13);
}

static int tcp_pair(const char *server, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	if (server) {
		inet_pton(AF_INET, server, &sa.sin_addr);
		for (int i = 0; i < 100; i++) {
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				return fd;
			usleep(100000);
		}
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	printf("listening\n");
	fflush(stdout);
	int c = accept(fd, NULL, NULL);

	close(fd);
	return c;
}

static int xfer(int fd, void *buf, size_t len, bool out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? write(fd, (char *)buf + done, len - done) :
				  read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (long spins = 0; spins < 2000000000L; spins++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs_dv: completion %s (wr_id %llu)\n",
					ibv_wc_status_str(wc->status), (unsigned long long)wc->wr_id);
				return -1;
			}
			return 0;
		}
	}
	return -1;
}

static struct ibv_device *find_dev(struct ibv_device **list, const char *name)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

/* Each extension call's refusal, on a device of ours. */
static int refusals(struct ibv_device *dev)
{
	const char *bad[] = { "" };
	struct mrocedv_context_attr ca = { .sz = sizeof(ca), .planes = bad, .n_planes = 1 };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int bad_count = 0;

#define EXPECT(cond, what) do { if (!(cond)) { fprintf(stderr, "refusal: %s\n", what); bad_count++; } } while (0)
	EXPECT(!mrocedv_open_device(dev, &ca) && errno == EINVAL, "empty plane name: EINVAL");
	ca.n_planes = MROCEDV_MAX_PLANES;
	EXPECT(!mrocedv_open_device(dev, &ca) && errno == EINVAL, "too many planes: EINVAL");
	ca.sz = 3;
	ca.n_planes = 0;
	EXPECT(!mrocedv_open_device(dev, &ca) && errno == EINVAL, "short sz: EINVAL");
	EXPECT(!mrocedv_is_supported(NULL), "NULL device not supported");
	EXPECT(mrocedv_is_supported(dev), "our device supported");

	ctx = ibv_open_device(dev);
	if (!ctx)
		return fail("ibv_open_device", errno);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		return fail("pd/cq", errno);
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd, .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mrocedv_qp_init_attr ma = { .sz = sizeof(ma), .paths = 257 };

	EXPECT(!mrocedv_create_qp(ctx, &qa, &ma) && errno == EINVAL, "257 paths: EINVAL");
	ma.paths = 4;
	ma.cc = (enum mrocedv_cc)7;
	EXPECT(!mrocedv_create_qp(ctx, &qa, &ma) && errno == EINVAL, "unknown cc: EINVAL");
	ma.cc = MROCEDV_CC_NONE;
	ma.udp_sport = 1000;
	EXPECT(!mrocedv_create_qp(ctx, &qa, &ma) && errno == EINVAL, "sport below 49152: EINVAL");
	ma.udp_sport = 0;
	ma.unordered = true;
	EXPECT(!mrocedv_create_qp(ctx, &qa, &ma) && errno == EOPNOTSUPP, "unordered: EOPNOTSUPP");
	ma.unordered = false;
	qa.qp_type = IBV_QPT_UD;
	EXPECT(!mrocedv_create_qp(ctx, &qa, &ma) && errno == EOPNOTSUPP, "UD: EOPNOTSUPP");
	qa.qp_type = IBV_QPT_RC;

	struct ibv_qp *qp = mrocedv_create_qp(ctx, &qa, &ma);
	union ibv_gid g[2] = {};
	struct mrocedv_qp_stats st = { .sz = sizeof(st) };
	uint32_t n = 0;

	EXPECT(qp, "a good QP");
	if (qp) {
		EXPECT(mrocedv_set_remote_planes(qp, g, 1) == EINVAL, "a GID not IPv4-mapped: EINVAL");
		EXPECT(mrocedv_set_remote_planes(qp, g, 9) == EINVAL, "9 planes: EINVAL");
		EXPECT(mrocedv_query_qp_stats(qp, &st) == 0 && st.tx_pkts == 0, "stats of a new QP: nothing sent");
		st.sz = 4;
		EXPECT(mrocedv_query_qp_stats(qp, &st) == EINVAL, "stats with short sz: EINVAL");
		ibv_destroy_qp(qp);
	}
	EXPECT(mrocedv_query_planes(ctx, g, &n) == ENOSPC, "no room for GIDs: ENOSPC");
	n = 2;
	EXPECT(mrocedv_query_planes(ctx, g, &n) == 0 && n == 1 && g[0].raw[10] == 0xff,
	       "one plane's GID");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("refusals: %s (%d wrong)\n", bad_count ? "FAILED" : "ok", bad_count);
	return bad_count ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *planes_arg = NULL, *server = NULL;
	const char *plane_names[MROCEDV_MAX_PLANES];
	uint32_t paths = 8, n_planes = 0;
	enum mrocedv_cc cc = MROCEDV_CC_DEFAULT;
	uint64_t bytes = 64ull << 20;
	int port = 18900, opt, do_refusals = 0;
	static const struct option lo[] = { { "refusals", 0, NULL, 'R' }, { NULL, 0, NULL, 0 } };

	while ((opt = getopt_long(argc, argv, "d:P:p:c:b:t:", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'P': planes_arg = optarg; break;
		case 'p': paths = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': cc = !strcmp(optarg, "ecn") ? MROCEDV_CC_ECN : !strcmp(optarg, "delay") ?
			       MROCEDV_CC_DELAY : MROCEDV_CC_NONE; break;
		case 'b': bytes = strtoull(optarg, NULL, 0); break;
		case 't': port = atoi(optarg); break;
		case 'R': do_refusals = 1; break;
		default: return 2;
		}
	}
	if (optind < argc)
		server = argv[optind];
	if (!devname || !bytes || bytes % CHUNK) {
		fprintf(stderr, "usage: verbs_dv -d DEV [-P IF,..] [-p PATHS] [-c ecn|delay|none] "
				"[-b BYTES, a multiple of 1 MiB] [-t PORT] [--refusals] [SERVER]\n");
		return 2;
	}
	char *s = planes_arg ? strdup(planes_arg) : NULL;

	if (s) {
		for (char *t = strtok(s, ","); t && n_planes < MROCEDV_MAX_PLANES; t = strtok(NULL, ","))
			plane_names[n_planes++] = t;
	}

	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = find_dev(list, devname);

	if (!dev)
		return fail(devname, ENODEV);
	if (do_refusals) {
		int r = refusals(dev);

		ibv_free_device_list(list);
		free(s);
		return r;
	}

	struct mrocedv_context_attr ca = { .sz = sizeof(ca), .planes = plane_names, .n_planes = n_planes };
	struct ibv_context *ctx = mrocedv_open_device(dev, &ca);

	if (!ctx)
		return fail("mrocedv_open_device", errno);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		return fail("ibv_alloc_pd (opens the device over its planes)", errno);
	uint8_t *buf = aligned_alloc(4096, bytes);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
	uint32_t done_msg = 0;
	struct ibv_mr *dmr = ibv_reg_mr(pd, &done_msg, sizeof(done_msg), IBV_ACCESS_LOCAL_WRITE);

	if (!mr || !cq || !dmr)
		return fail("reg_mr / create_cq", errno);
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd, .cap = { .max_send_wr = DEPTH, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mrocedv_qp_init_attr ma = { .sz = sizeof(ma), .paths = paths, .cc = cc };
	struct ibv_qp *qp = mrocedv_create_qp(ctx, &qa, &ma);

	if (!qp)
		return fail("mrocedv_create_qp", errno);

	struct peer_msg me = { .qpn = qp->qp_num, .psn = (uint32_t)getpid() & 0xffffff,
			       .rkey = mr->rkey, .addr = (uintptr_t)buf }, rem;
	int err;

	me.n_gids = MROCEDV_MAX_PLANES;
	err = mrocedv_query_planes(ctx, me.gids, &me.n_gids);
	if (err)
		return fail("mrocedv_query_planes", err);
	int fd = tcp_pair(server, port);

	if (fd < 0 || xfer(fd, &me, sizeof(me), true) || xfer(fd, &rem, sizeof(rem), false))
		return fail("TCP exchange", errno ? errno : EIO);
	if (rem.n_gids > MROCEDV_MAX_PLANES || !rem.n_gids)
		return fail("peer's planes", EPROTO);
	err = mrocedv_set_remote_planes(qp, rem.gids, rem.n_gids);
	if (err)
		return fail("mrocedv_set_remote_planes", err);

	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };

	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS)))
		return fail("INIT", err);
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &(struct ibv_sge){ (uintptr_t)&done_msg,
			sizeof(done_msg), dmr->lkey }, .num_sge = 1 }, *bad_r;

	if (!server && (err = ibv_post_recv(qp, &rwr, &bad_r)))
		return fail("post_recv", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = rem.qpn;
	a.rq_psn = rem.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = rem.gids[0];
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER)))
		return fail("RTR", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me.psn;
	a.max_rd_atomic = 1;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)))
		return fail("RTS", err);

	struct ibv_wc wc;
	char verdict[8] = "";

	if (server) {
		for (uint64_t i = 0; i < bytes; i++)
			buf[i] = pattern(i);
		uint64_t posted = 0, completed = 0, chunks = bytes / CHUNK;

		while (completed < chunks) {
			while (posted < chunks && posted - completed < DEPTH) {
				struct ibv_sge sge = { (uintptr_t)buf + posted * CHUNK, CHUNK, mr->lkey };
				struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sge, .num_sge = 1,
							  .opcode = IBV_WR_RDMA_WRITE,
							  .send_flags = IBV_SEND_SIGNALED }, *bad;

				wr.wr.rdma.remote_addr = rem.addr + posted * CHUNK;
				wr.wr.rdma.rkey = rem.rkey;
				if ((err = ibv_post_send(qp, &wr, &bad)))
					return fail("post_send WRITE", err);
				posted++;
			}
			if (wait_wc(cq, &wc))
				return fail("WRITE completion", EIO);
			completed++;
		}
		done_msg = 0x646f6e65;
		struct ibv_sge sge = { (uintptr_t)&done_msg, sizeof(done_msg), dmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 99, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		if ((err = ibv_post_send(qp, &wr, &bad)) || wait_wc(cq, &wc))
			return fail("SEND done", err ? err : EIO);
		if (xfer(fd, verdict, 2, false) || memcmp(verdict, "ok", 2))
			return fail("the server's check", EIO);
	} else {
		if (wait_wc(cq, &wc) || wc.opcode != IBV_WC_RECV || done_msg != 0x646f6e65)
			return fail("the done message", EIO);
		for (uint64_t i = 0; i < bytes; i++)
			if (buf[i] != pattern(i)) {
				fprintf(stderr, "verbs_dv: byte %llu is %u, not %u\n",
					(unsigned long long)i, buf[i], pattern(i));
				xfer(fd, "no", 2, true);
				return 1;
			}
		if (xfer(fd, "ok", 2, true))
			return fail("verdict", EIO);
	}

	struct mrocedv_qp_stats st = { .sz = sizeof(st) };

	if ((err = mrocedv_query_qp_stats(qp, &st)))
		return fail("mrocedv_query_qp_stats", err);
	printf("%s: %llu bytes %s, planes %u+%u, paths %u, tx_pkts %llu, retx %llu, plane_downs %llu\n",
	       server ? "client" : "server", (unsigned long long)bytes,
	       server ? "written" : "checked", me.n_gids, rem.n_gids, st.paths,
	       (unsigned long long)st.tx_pkts, (unsigned long long)st.retx_pkts,
	       (unsigned long long)st.plane_downs);
	if (st.paths != paths) {
		fprintf(stderr, "verbs_dv: the QP sprays over %u paths, not %u\n", st.paths, paths);
		return 1;
	}
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(dmr);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	free(s);
	return 0;
}
