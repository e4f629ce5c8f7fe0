// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The public API's contracts that are not the transport's: the print hook
 * (libbpf's and libxdp's messages go to it, the library never writes to
 * stderr itself) and mroce_qp_set_error().
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/libbpf.h>

#include "sim.h"

#define NO_IFNAME	"mroce-none0"

static struct {
	int	calls;
	int	warns;
	char	last[256];
} seen;

static int record(enum mroce_print_level level, const char *fmt, va_list ap)
{
	seen.calls++;
	if (level == MROCE_WARN)
		seen.warns++;
	vsnprintf(seen.last, sizeof(seen.last), fmt, ap);
	return 0;
}

/* Make libbpf warn: /etc/passwd is not an ELF object. */
static void libbpf_complains(void)
{
	struct bpf_object *obj = bpf_object__open_file("/etc/passwd", NULL);

	assert_true(libbpf_get_error(obj) != 0 || obj == NULL);
}

static void test_print_hook_gets_libbpf_messages(void **state)
{
	struct mroce_dp *dp = NULL;
	mroce_print_fn_t old;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	old = mroce_set_print(record);
	assert_int_equal(mroce_set_print(record), record);	/* returns the previous one */
	assert_true(mroce_dp_open(NO_IFNAME, &dp) < 0);	/* any entry routes libbpf's logs */
	assert_null(dp);
	libbpf_complains();
	assert_true(seen.warns >= 1);
	assert_non_null(strstr(seen.last, "elf") ? seen.last : strstr(seen.last, "ELF"));
	mroce_set_print(old);
}

/* Run fn with fd 2 on a pipe; returns the bytes it wrote there. */
static ssize_t stderr_bytes_of(void (*fn)(void), char *buf, size_t size)
{
	int pfd[2], saved;
	ssize_t n;

	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(fcntl(pfd[0], F_SETFL, O_NONBLOCK), 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(pfd[1], 2), 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(pfd[1]);
	n = read(pfd[0], buf, size - 1);
	close(pfd[0]);
	if (n < 0 && errno == EAGAIN)
		n = 0;
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static void open_missing_then_libbpf(void)
{
	struct mroce_dev *dev = NULL;

	assert_true(mroce_dev_open(NO_IFNAME, NULL, &dev) < 0);
	assert_null(dev);
	assert_true(mroce_dp_attach(NO_IFNAME, NULL) < 0);
	assert_true(mroce_dp_detach(NO_IFNAME) < 0);
	libbpf_complains();
}

static void test_library_never_writes_stderr(void **state)
{
	char buf[512];
	ssize_t n;

	(void)state;
	mroce_set_print(NULL);	/* the default: silent */
	n = stderr_bytes_of(open_missing_then_libbpf, buf, sizeof(buf));
	if (n)
		fail_msg("%zd bytes on stderr: %s", n, buf);
}

/* ---- mroce_qp_set_error ------------------------------------------------- */

struct qp_env {
	struct sim_net	*net;
	struct mroce_dev *da, *db;
	struct mroce_cq	*ca, *cb;
	struct mroce_qp	*qa, *qb;
	struct mroce_mr	*mr;
	__u8		buf[4096];
};

static void env_open(struct qp_env *e)
{
	MROCE_OPTS(mroce_qp_attr, attr);

	memset(e, 0, sizeof(*e));
	e->net = sim_new(7);
	e->da = sim_dev(e->net, false, NULL);
	e->db = sim_dev(e->net, true, NULL);
	assert_non_null(e->da);
	assert_non_null(e->db);
	assert_int_equal(mroce_create_cq(e->da, 64, &e->ca), 0);
	assert_int_equal(mroce_create_cq(e->db, 64, &e->cb), 0);
	attr.send_cq = attr.recv_cq = e->ca;
	assert_int_equal(mroce_create_qp(e->da, &attr, &e->qa), 0);
	attr.send_cq = attr.recv_cq = e->cb;
	assert_int_equal(mroce_create_qp(e->db, &attr, &e->qb), 0);
	assert_int_equal(mroce_reg_mr(e->da, e->buf, sizeof(e->buf), MROCE_ACCESS_LOCAL_WRITE,
				      &e->mr), 0);
	assert_int_equal(sim_connect(e->qa, e->qb), 0);
}

static void env_close(struct qp_env *e)
{
	mroce_destroy_qp(e->qa);
	mroce_destroy_qp(e->qb);
	mroce_dereg_mr(e->mr);
	mroce_destroy_cq(e->ca);
	mroce_destroy_cq(e->cb);
	mroce_dev_close(e->da);
	mroce_dev_close(e->db);
	sim_free_net(e->net);
}

static int post_send(struct qp_env *e, __u64 wr_id)
{
	struct mroce_sge sge = { .addr = (__u64)(uintptr_t)e->buf, .length = 2048,
				 .lkey = mroce_mr_lkey(e->mr) };
	struct mroce_send_wr wr = { .wr_id = wr_id, .opcode = MROCE_WR_SEND,
				    .sg_list = &sge, .num_sge = 1 };

	return mroce_post_send(e->qa, &wr);
}

static int post_recv(struct qp_env *e, __u64 wr_id)
{
	struct mroce_sge sge = { .addr = (__u64)(uintptr_t)e->buf + 2048, .length = 2048,
				 .lkey = mroce_mr_lkey(e->mr) };
	struct mroce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(e->qa, &wr);
}

/* Device memory needs the XDP datapath: without one, a clear error, nothing allocated. */
static void test_dm_without_datapath(void **state)
{
	struct sim_net *net = sim_new(3);
	struct mroce_dev *d = sim_dev(net, false, NULL);
	struct mroce_dm *dm = (struct mroce_dm *)1;

	(void)state;
	assert_non_null(d);
	assert_int_equal(mroce_alloc_dm(d, 4096, &dm), -EOPNOTSUPP);
	assert_null(dm);
	assert_int_equal(mroce_alloc_dm(d, 0, &dm), -EINVAL);
	assert_int_equal(mroce_alloc_dm(NULL, 4096, &dm), -EINVAL);
	assert_int_equal(mroce_free_dm(NULL), -EINVAL);
	assert_null(mroce_dm_addr(NULL));
	assert_int_equal(mroce_dm_length(NULL), 0);
	mroce_dev_close(d);
	sim_free_net(net);
}

static void test_qp_set_error_flushes(void **state)
{
	struct qp_env *e = malloc(sizeof(*e));
	struct mroce_wc wc[8];
	bool got[4] = {};
	int n;

	(void)state;
	env_open(e);
	/* Posted and never progressed: all four are outstanding. */
	assert_int_equal(post_send(e, 1), 0);
	assert_int_equal(post_send(e, 2), 0);
	assert_int_equal(post_recv(e, 3), 0);
	assert_int_equal(mroce_poll_cq(e->ca, 8, wc), 0);

	assert_int_equal(mroce_qp_set_error(e->qa), 0);
	assert_int_equal(mroce_qp_state(e->qa), MROCE_QPS_ERR);
	n = mroce_poll_cq(e->ca, 8, wc);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, MROCE_WC_WR_FLUSH_ERR);
		assert_true(wc[i].wr_id >= 1 && wc[i].wr_id <= 3);
		assert_false(got[wc[i].wr_id]);
		got[wc[i].wr_id] = true;
		assert_int_equal(wc[i].opcode, wc[i].wr_id == 3 ? MROCE_WC_RECV : MROCE_WC_SEND);
	}

	/* Idempotent: no second flush, no new completions. */
	assert_int_equal(mroce_qp_set_error(e->qa), 0);
	assert_int_equal(mroce_poll_cq(e->ca, 8, wc), 0);
	assert_int_equal(post_send(e, 4), -EIO);
	assert_int_equal(post_recv(e, 5), -EIO);
	assert_int_equal(mroce_poll_cq(e->ca, 8, wc), 0);
	assert_int_equal(mroce_qp_set_error(NULL), -EINVAL);
	env_close(e);
	free(e);
}

/* A QP in error sends nothing: the peer's progress sees no data. */
static void test_qp_set_error_stops_sending(void **state)
{
	struct qp_env *e = malloc(sizeof(*e));
	struct mroce_dev_stats st;

	(void)state;
	env_open(e);
	assert_int_equal(post_send(e, 1), 0);
	assert_int_equal(mroce_qp_set_error(e->qa), 0);
	for (int i = 0; i < 100; i++) {
		mroce_dev_progress(e->da, 0);
		mroce_dev_progress(e->db, 0);
		e->net->now += 100;
	}
	assert_int_equal(mroce_dev_stats(e->da, &st), 0);
	assert_int_equal(st.tx_bytes, 0);
	env_close(e);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_print_hook_gets_libbpf_messages),
		cmocka_unit_test(test_library_never_writes_stderr),
		cmocka_unit_test(test_dm_without_datapath),
		cmocka_unit_test(test_qp_set_error_flushes),
		cmocka_unit_test(test_qp_set_error_stops_sending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
