// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which capability a refused operation lacked. The kernel answers EPERM (or
 * EACCES, from the verifier) without saying why; the caller knows which
 * capabilities its operation needs (libmroce(7), CAPABILITIES) and this
 * names the first one the process does not have in its effective set.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "mroce/mroce.h"
#include "internal.h"

static bool cap_effective(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return true;	/* cannot tell: do not blame a capability */
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* The kernel's bpf_capable() and perfmon_capable(): CAP_SYS_ADMIN stands in for both. */
static bool has(int cap)
{
	if ((cap == CAP_BPF || cap == CAP_PERFMON) && cap_effective(CAP_SYS_ADMIN))
		return true;
	return cap_effective(cap);
}

bool mroce_has_cap(int cap)
{
	return has(cap);
}

int mroce_cap_err(int err, unsigned int need)
{
	static const struct { unsigned int bit; int cap, code; } caps[] = {
		{ MROCE_NEED_NET_ADMIN, CAP_NET_ADMIN, MROCE_ERR_CAP_NET_ADMIN },
		{ MROCE_NEED_BPF, CAP_BPF, MROCE_ERR_CAP_BPF },
		{ MROCE_NEED_PERFMON, CAP_PERFMON, MROCE_ERR_CAP_PERFMON },
		{ MROCE_NEED_SYS_ADMIN, CAP_SYS_ADMIN, MROCE_ERR_CAP_SYS_ADMIN },
		{ MROCE_NEED_NET_RAW, CAP_NET_RAW, MROCE_ERR_CAP_NET_RAW },
	};

	if (err == -ENOBUFS && (need & MROCE_NEED_MEMLOCK) && !cap_effective(CAP_IPC_LOCK))
		return -MROCE_ERR_MEMLOCK;
	if (err != -EPERM && err != -EACCES)
		return err;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if ((need & caps[i].bit) && !has(caps[i].cap))
			return -caps[i].code;
	return err;
}
