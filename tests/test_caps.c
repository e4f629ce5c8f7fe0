// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A refusal names the first capability of the operation's set that the
 * process lacks (lib/caps.c). Each case runs in a child whose effective set
 * holds exactly the capabilities given (a root child lowers it with capset;
 * a user's is empty already), so the answer depends on nothing else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <cmocka.h>

#include "mroce/mroce.h"
#include "../lib/internal.h"

/* Lower the effective set to caps (a list ending in -1); false if it cannot be. */
static bool effective_only(const int *caps)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, d))
		return false;
	d[0].effective = d[1].effective = 0;
	for (; *caps >= 0; caps++) {
		if (!(d[*caps / 32].permitted & (1u << (*caps % 32))))
			return false;
		d[*caps / 32].effective |= 1u << (*caps % 32);
	}
	return !syscall(SYS_capset, &hdr, d);
}

/* mroce_cap_err(err, need) in a child holding exactly caps: its answer, or 1 when skipped. */
static int answer(const int *caps, int err, unsigned int need)
{
	int st, r = 1, fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (effective_only(caps))
			r = mroce_cap_err(err, need);
		_exit(write(fds[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &r, sizeof(r)), sizeof(r));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return r;
}

static void test_first_missing_named(void **state)
{
	static const int none[] = { -1 };
	static const int netadm[] = { CAP_NET_ADMIN, -1 };
	static const int netadm_bpf[] = { CAP_NET_ADMIN, CAP_BPF, -1 };
	static const int load[] = { CAP_NET_ADMIN, CAP_BPF, CAP_PERFMON, -1 };
	static const int netadm_sysadm[] = { CAP_NET_ADMIN, CAP_SYS_ADMIN, -1 };
	static const int raw[] = { CAP_NET_RAW, -1 };
	static const int raw_lock[] = { CAP_NET_RAW, CAP_IPC_LOCK, -1 };

	(void)state;
	/* a user: nothing held, the first of each set is named */
	assert_int_equal(answer(none, -EPERM, MROCE_NEED_LOAD), -MROCE_ERR_CAP_NET_ADMIN);
	assert_int_equal(answer(none, -EACCES, MROCE_NEED_BPF), -MROCE_ERR_CAP_BPF);
	assert_int_equal(answer(none, -EPERM, MROCE_NEED_SYS_ADMIN), -MROCE_ERR_CAP_SYS_ADMIN);
	assert_int_equal(answer(none, -EPERM, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK),
			 -MROCE_ERR_CAP_NET_RAW);
	assert_int_equal(answer(none, -ENOBUFS, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK),
			 -MROCE_ERR_MEMLOCK);
	/* other errors pass untouched; ENOBUFS only where locked memory is the cause */
	assert_int_equal(answer(none, -ENOENT, MROCE_NEED_LOAD), -ENOENT);
	assert_int_equal(answer(none, -ENOBUFS, MROCE_NEED_LOAD), -ENOBUFS);
	if (geteuid() != 0 || answer(netadm, -EPERM, MROCE_NEED_LOAD) == 1)
		skip();	/* the rest lowers a root's set */
	assert_int_equal(answer(netadm, -EPERM, MROCE_NEED_LOAD), -MROCE_ERR_CAP_BPF);
	assert_int_equal(answer(netadm_bpf, -EACCES, MROCE_NEED_LOAD), -MROCE_ERR_CAP_PERFMON);
	/* everything held: the kernel's refusal has another cause, passed as is */
	assert_int_equal(answer(load, -EPERM, MROCE_NEED_LOAD), -EPERM);
	/* CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON, as in the kernel */
	assert_int_equal(answer(netadm_sysadm, -EPERM, MROCE_NEED_LOAD), -EPERM);
	assert_int_equal(answer(load, -EPERM, MROCE_NEED_LOAD | MROCE_NEED_SYS_ADMIN),
			 -MROCE_ERR_CAP_SYS_ADMIN);
	assert_int_equal(answer(raw, -ENOBUFS, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK),
			 -MROCE_ERR_MEMLOCK);
	assert_int_equal(answer(raw_lock, -ENOBUFS, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK),
			 -ENOBUFS);
	assert_int_equal(answer(raw_lock, -EPERM, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK), -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_missing_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
