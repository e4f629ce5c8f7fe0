// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collectives' rendezvous sockets under a signal storm: a process with a
 * timer signal installed without SA_RESTART (profilers, language runtimes)
 * sees poll, send, recv, accept and connect fail with EINTR all the time.
 * Every byte must still arrive, and a deadline must still end a wait.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../coll/coll_internal.h"

#define STORM_US	100
#define BIG		(4u << 20)

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* SIGALRM every 100 us, without SA_RESTART: blocking calls return EINTR. */
static void storm(bool on)
{
	struct sigaction sa = { .sa_handler = on ? on_alarm : SIG_IGN };
	struct itimerval it = { .it_interval = { 0, on ? STORM_US : 0 },
				.it_value = { 0, on ? STORM_US : 0 } };

	sigemptyset(&sa.sa_mask);
	if (on) {
		alarms = 0;
		assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	}
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	if (!on)
		assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
}

static __u64 deadline_in(unsigned int ms)
{
	return coll_now_ns() + (__u64)ms * 1000000ull;
}

struct io_xfer {
	int	fd;
	__u8	*buf;
	size_t	len;
	int	err;
};

static void *sender(void *arg)
{
	struct io_xfer *x = arg;

	x->err = coll_io_all(x->fd, x->buf, x->len, true, deadline_in(20000));
	return NULL;
}

static void fill(__u8 *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (__u8)((i * 2654435761u + seed) >> 13);
}

/* Both directions of io_all over a socketpair with small buffers, so the
 * transfer takes many polls and short sends, each exposed to EINTR. */
static void test_io_all_storm(void **state)
{
	__u8 *src = malloc(BIG), *dst = calloc(1, BIG);
	int sv[2], small = 4096;
	struct io_xfer x;
	pthread_t t;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fill(src, BIG, 7);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	x = (struct io_xfer){ .fd = sv[0], .buf = src, .len = BIG };
	storm(true);
	assert_int_equal(pthread_create(&t, NULL, sender, &x), 0);
	assert_int_equal(coll_io_all(sv[1], dst, BIG, false, deadline_in(20000)), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	storm(false);
	assert_int_equal(x.err, 0);
	assert_memory_equal(src, dst, BIG);
	assert_true(alarms > 10);	/* the storm really blew during the transfer */
	close(sv[0]);
	close(sv[1]);
	free(src);
	free(dst);
}

/* A deadline still ends a wait that signals keep interrupting: nothing is
 * ever sent, so the receive must time out, not succeed and not hang. */
static void test_io_all_deadline_storm(void **state)
{
	__u64 start = coll_now_ns();
	__u8 b[16];
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	storm(true);
	assert_int_equal(coll_io_all(sv[1], b, sizeof(b), false, deadline_in(300)), -ETIMEDOUT);
	storm(false);
	assert_true(coll_now_ns() - start >= 290000000ull);
	assert_true(coll_now_ns() - start < 5000000000ull);
	/* The peer closing mid-message is an error, never a complete read. */
	assert_int_equal(write(sv[0], "abc", 3), 3);
	close(sv[0]);
	assert_int_equal(coll_io_all(sv[1], b, sizeof(b), false, deadline_in(1000)), -ECONNRESET);
	close(sv[1]);
}

struct dialer {
	struct sockaddr_in	sa;
	__u8			rec[64 * 1024];
	int			err;
};

/* A peer of the rendezvous: dial the root, send a record, read it back. */
static void *dial_peer(void *arg)
{
	struct dialer *d = arg;
	__u64 deadline = deadline_in(20000);
	__u8 back[sizeof(d->rec)];
	int fd = coll_tcp_dial(&d->sa, deadline);

	d->err = fd < 0 ? fd : 0;
	if (fd < 0)
		return NULL;
	d->err = coll_io_all(fd, d->rec, sizeof(d->rec), true, deadline);
	if (!d->err)
		d->err = coll_io_all(fd, back, sizeof(back), false, deadline);
	if (!d->err && memcmp(back, d->rec, sizeof(back)))
		d->err = -EPROTO;
	close(fd);
	return NULL;
}

/* The rendezvous's connection set-up over loopback: the root accepts four
 * peers while signals interrupt accept, connect and every transfer. */
static void test_rendezvous_storm(void **state)
{
	enum { PEERS = 4 };
	struct dialer *d = calloc(PEERS, sizeof(*d));
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	__u8 rec[sizeof(d->rec)];
	pthread_t t[PEERS];
	int lfd;

	(void)state;
	assert_non_null(d);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	assert_int_equal(listen(lfd, PEERS), 0);
	storm(true);
	for (int i = 0; i < PEERS; i++) {
		d[i].sa = sa;
		fill(d[i].rec, sizeof(d[i].rec), (unsigned int)i + 1);
		assert_int_equal(pthread_create(&t[i], NULL, dial_peer, &d[i]), 0);
	}
	for (int i = 0; i < PEERS; i++) {
		__u64 deadline = deadline_in(20000);
		int fd = coll_tcp_accept(lfd, deadline);

		assert_true(fd >= 0);
		assert_int_equal(coll_io_all(fd, rec, sizeof(rec), false, deadline), 0);
		assert_int_equal(coll_io_all(fd, rec, sizeof(rec), true, deadline), 0);
		close(fd);
	}
	for (int i = 0; i < PEERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(d[i].err, 0);
	}
	storm(false);
	close(lfd);
	free(d);
}

/* Nobody dials: accept must time out at its deadline despite the storm. */
static void test_accept_deadline_storm(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	__u64 start;
	int lfd;

	(void)state;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	storm(true);
	start = coll_now_ns();
	assert_int_equal(coll_tcp_accept(lfd, deadline_in(300)), -ETIMEDOUT);
	storm(false);
	assert_true(coll_now_ns() - start >= 290000000ull);
	assert_true(coll_now_ns() - start < 5000000000ull);
	close(lfd);
}

/* A failed assertion must not leave the storm blowing into the next test. */
static int calm(void **state)
{
	struct itimerval off = { 0 };

	(void)state;
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_io_all_storm, calm),
		cmocka_unit_test_teardown(test_io_all_deadline_storm, calm),
		cmocka_unit_test_teardown(test_rendezvous_storm, calm),
		cmocka_unit_test_teardown(test_accept_deadline_storm, calm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
