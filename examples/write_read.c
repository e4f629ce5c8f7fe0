// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libmroce in one page: the server exposes a buffer, the client WRITEs a
 * pattern into it and READs it back, both one-sided.
 *
 *   server:  write_read server DEV ADDR PORT [SIZE]
 *   client:  write_read client DEV SERVER_ADDR PORT [SIZE]
 *
 * The server tells the client where its buffer is (address, rkey) with one
 * SEND; the client tells it "done" with another. Everything in between
 * happens without the server's application doing anything.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mroce/mroce.h>

struct region {			/* what the server SENDs: where to WRITE and READ */
	__u64	addr;
	__u32	rkey;
	__u32	len;
};

static int die(const char *what, int err)
{
	char msg[128];

	mroce_strerror(err, msg, sizeof(msg));
	fprintf(stderr, "write_read: %s: %s\n", what, msg);
	return 1;
}

/* Wait for one completion, sleeping on the CQ's file descriptor. */
static int wait_wc(struct mroce_cq *cq, struct mroce_wc *wc, int timeout_ms)
{
	struct pollfd pfd = { .fd = mroce_cq_fd(cq), .events = POLLIN };
	int n;

	while ((n = mroce_poll_cq(cq, 1, wc)) == 0)
		if (poll(&pfd, 1, timeout_ms) == 0)
			return -ETIMEDOUT;
	if (n < 0)
		return n;
	if (wc->status != MROCE_WC_SUCCESS) {
		fprintf(stderr, "write_read: wr %llu: %s\n", (unsigned long long)wc->wr_id,
			mroce_wc_status_str(wc->status));
		return -EIO;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
	struct mroce_dev_attr da;
	struct mroce_dev *dev;
	struct mroce_cq *cq;
	struct mroce_qp *qp;
	struct mroce_mr *mr, *ctl_mr;
	struct mroce_wc wc;
	struct region reg = {}, *ctl;
	size_t size;
	__u8 *buf;
	int err;
	bool server;

	if (argc < 5 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: write_read server DEV ADDR PORT [SIZE]\n"
				"       write_read client DEV SERVER_ADDR PORT [SIZE]\n");
		return 2;
	}
	server = !strcmp(argv[1], "server");
	size = argc > 5 ? strtoul(argv[5], NULL, 0) : 1 << 20;

	/* 1. Device: attaches the XDP datapath if needed, opens an AF_XDP socket. */
	err = mroce_dev_open(argv[2], NULL, &dev);
	if (err)
		return die(argv[2], err);
	mroce_dev_query(dev, &da);
	printf("%s: %s queue %u, %s mode, MTU %u\n", argv[1], da.ifname, da.queue,
	       da.zero_copy ? "zero-copy" : "copy", da.mtu);

	/* 2. Memory: the data buffer (2 x size for the client: source and READ target), a control slot. */
	buf = malloc(2 * size);
	ctl = calloc(1, sizeof(*ctl));
	if (!buf || !ctl)
		return die("memory", -ENOMEM);
	memset(buf, 0, 2 * size);	/* fault the pages in now, not during the transfer */
	err = mroce_reg_mr(dev, buf, 2 * size, MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE |
			   MROCE_ACCESS_REMOTE_READ, &mr);
	if (!err)
		err = mroce_reg_mr(dev, ctl, sizeof(*ctl), MROCE_ACCESS_LOCAL_WRITE, &ctl_mr);
	if (!err)
		err = mroce_create_cq(dev, 64, &cq);
	if (err)
		return die("setup", err);
	attr.send_cq = attr.recv_cq = cq;

	/* 3. Connection: a TCP side channel exchanges QP numbers, PSNs, keys, token halves. */
	if (server) {
		struct mroce_listener *l;

		err = mroce_listen(dev, argv[3], (__u16)atoi(argv[4]), &l);
		if (!err)
			err = mroce_accept(l, &attr, 30000, &qp);
		mroce_listener_close(l);
	} else {
		err = mroce_connect(dev, argv[3], (__u16)atoi(argv[4]), &attr, 10000, &qp);
	}
	if (err)
		return die("connect", err);

	{
		struct mroce_sge csge = { (__u64)(unsigned long)ctl, sizeof(*ctl), mroce_mr_lkey(ctl_mr) };
		struct mroce_recv_wr rwr = { .wr_id = 1, .sg_list = &csge, .num_sge = 1 };

		if ((err = mroce_post_recv(qp, &rwr)))
			return die("post_recv", err);
		if (server) {
			struct mroce_send_wr swr = { .wr_id = 2, .opcode = MROCE_WR_SEND, .sg_list = &csge,
						     .num_sge = 1 };

			/* 4s. Tell the client where the buffer is, then wait for "done". */
			*ctl = (struct region){ (__u64)(unsigned long)buf, mroce_mr_rkey(mr), (__u32)size };
			if ((err = mroce_post_send(qp, &swr)) || (err = wait_wc(cq, &wc, 5000)))
				return die("send region", err);
			err = wait_wc(cq, &wc, 600000);
			if (err)
				return die("wait for done", err);
			printf("server: client is done; first bytes %02x %02x %02x\n", buf[0], buf[1], buf[2]);
			/* Give a lost ACK of "done" the chance to be sent again before the QP goes. */
			usleep(100000);
		} else {
			struct mroce_sge sge = { (__u64)(unsigned long)buf, (__u32)size, mroce_mr_lkey(mr) };
			struct mroce_sge rsge = { (__u64)(unsigned long)(buf + size), (__u32)size, mroce_mr_lkey(mr) };
			struct mroce_send_wr w = { .wr_id = 10, .opcode = MROCE_WR_RDMA_WRITE, .sg_list = &sge,
						   .num_sge = 1 };
			double t0, t1, t2;

			if ((err = wait_wc(cq, &wc, 5000)))
				return die("wait for region", err);
			reg = *ctl;
			if (reg.len < size)
				return die("server buffer too small", -EMSGSIZE);
			for (size_t i = 0; i < size; i++)
				buf[i] = (__u8)(i * 13 + (i >> 10));

			/* 4c. One-sided WRITE, then READ it back. */
			w.remote_addr = reg.addr;
			w.rkey = reg.rkey;
			t0 = now_s();
			if ((err = mroce_post_send(qp, &w)) || (err = wait_wc(cq, &wc, 60000)))
				return die("write", err);
			t1 = now_s();
			w = (struct mroce_send_wr){ .wr_id = 11, .opcode = MROCE_WR_RDMA_READ, .sg_list = &rsge,
						    .num_sge = 1, .remote_addr = reg.addr, .rkey = reg.rkey };
			if ((err = mroce_post_send(qp, &w)) || (err = wait_wc(cq, &wc, 60000)))
				return die("read", err);
			t2 = now_s();
			if (memcmp(buf, buf + size, size))
				return die("READ returned other bytes than were written", -EIO);
			printf("client: WRITE %zu bytes in %.3f ms (%.2f Gbit/s), READ back in %.3f ms "
			       "(%.2f Gbit/s), data verified\n", size, (t1 - t0) * 1e3,
			       (double)size * 8 / (t1 - t0) / 1e9, (t2 - t1) * 1e3,
			       (double)size * 8 / (t2 - t1) / 1e9);
			w = (struct mroce_send_wr){ .wr_id = 12, .opcode = MROCE_WR_SEND, .sg_list = &sge,
						    .num_sge = 0 };
			if ((err = mroce_post_send(qp, &w)) || (err = wait_wc(cq, &wc, 5000)))
				return die("send done", err);
		}
		{
			struct mroce_dev_stats st;

			mroce_dev_stats(dev, &st);
			printf("%s: packets tx %llu rx %llu, retransmitted %llu, out of order %llu, "
			       "duplicates %llu, timeouts %llu\n", argv[1], (unsigned long long)st.tx_pkts,
			       (unsigned long long)st.rx_pkts, (unsigned long long)st.retx_pkts,
			       (unsigned long long)st.ooo_pkts, (unsigned long long)st.dup_pkts,
			       (unsigned long long)st.rto_events);
		}
	}
	mroce_destroy_qp(qp);
	mroce_destroy_cq(cq);
	mroce_dereg_mr(mr);
	mroce_dereg_mr(ctl_mr);
	mroce_dev_close(dev);
	free(buf);
	free(ctl);
	return 0;
}
