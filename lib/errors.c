// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Error and counter descriptions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mroce/mroce.h"

/* libxdp's own codes (newer releases; 1.3 passes libbpf's through). */
#define LIBXDP_ERR_START	5000
#define LIBXDP_ERR_END		5100

static const char *const mroce_err_text[__MROCE_ERR_END - __MROCE_ERR_START] = {
	[MROCE_ERR_NOT_ATTACHED - __MROCE_ERR_START] = "mroce datapath is not attached to the interface",
	[MROCE_ERR_FOREIGN_PROG - __MROCE_ERR_START] = "another XDP program is attached to the interface",
	[MROCE_ERR_BAD_OBJ - __MROCE_ERR_START] = "BPF object does not hold a matching mroce program and maps",
	[MROCE_ERR_ATTACHED - __MROCE_ERR_START] = "mroce datapath is already attached to the interface",
	[MROCE_ERR_VERSION - __MROCE_ERR_START] =
		"peer speaks another MetaRoCE wire protocol version (this library speaks version 2)",
	[MROCE_ERR_STREAMS - __MROCE_ERR_START] =
		"peer's queue pair has another number of ordered streams (attr.streams)",
	[MROCE_ERR_PEER_ADDR - __MROCE_ERR_START] =
		"peer named an address other than the connection's for its queue pair (refused)",
	[MROCE_ERR_CAP_NET_ADMIN - __MROCE_ERR_START] =
		"not permitted: needs CAP_NET_ADMIN (to attach or detach XDP)",
	[MROCE_ERR_CAP_BPF - __MROCE_ERR_START] = "not permitted: needs CAP_BPF (to load the XDP program)",
	[MROCE_ERR_CAP_PERFMON - __MROCE_ERR_START] =
		"not permitted: needs CAP_PERFMON (the verifier's checks of the XDP program)",
	[MROCE_ERR_CAP_SYS_ADMIN - __MROCE_ERR_START] =
		"not permitted: needs CAP_SYS_ADMIN (the attached program and maps by id)",
	[MROCE_ERR_CAP_NET_RAW - __MROCE_ERR_START] =
		"not permitted: needs CAP_NET_RAW (to open the AF_XDP socket)",
	[MROCE_ERR_MEMLOCK - __MROCE_ERR_START] =
		"UMEM over the locked-memory limit: needs CAP_IPC_LOCK or a higher ulimit -l",
	[MROCE_ERR_CAP_SYS_PTRACE - __MROCE_ERR_START] =
		"not permitted: needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (others' AF_XDP sockets)",
	[MROCE_ERR_QUEUES_BUSY - __MROCE_ERR_START] =
		"receive queues taken by other processes: ask for fewer (libmroce(7), QUEUES)",
};

int mroce_strerror(int err, char *buf, size_t size)
{
	if (!buf || !size)
		return -EINVAL;
	if (err < 0)
		err = -err;
	if (err >= __MROCE_ERR_START && err < __MROCE_ERR_END) {
		snprintf(buf, size, "%s", mroce_err_text[err - __MROCE_ERR_START]);
		return 0;
	}
	/* The libraries under us return their own codes through our calls. */
	if (err >= __LIBBPF_ERRNO__START && err < __LIBBPF_ERRNO__END)
		return libbpf_strerror(err, buf, size) ? -EINVAL : 0;
	if (err >= LIBXDP_ERR_START && err < LIBXDP_ERR_END)
		return libxdp_strerror(err, buf, size) ? -EINVAL : 0;
	if (err == EPERM) {
		snprintf(buf, size, "operation not permitted (libmroce(7), CAPABILITIES, lists what each needs)");
		return 0;
	}
	if (strerror_r(err, buf, size)) {
		snprintf(buf, size, "unknown error %d", err);
		return -EINVAL;
	}
	return 0;
}

static const char *const mroce_stat_names[MROCE_STAT_MAX] = {
#define MROCE_STAT_NAME(NAME, name, desc) [MROCE_STAT_##NAME] = #name,
	MROCE_STATS(MROCE_STAT_NAME)
#undef MROCE_STAT_NAME
};

static const char *const mroce_stat_descs[MROCE_STAT_MAX] = {
#define MROCE_STAT_DESC(NAME, name, desc) [MROCE_STAT_##NAME] = desc,
	MROCE_STATS(MROCE_STAT_DESC)
#undef MROCE_STAT_DESC
};

const char *mroce_stat_name(int stat)
{
	return stat >= 0 && stat < MROCE_STAT_MAX ? mroce_stat_names[stat] : NULL;
}

const char *mroce_stat_desc(int stat)
{
	return stat >= 0 && stat < MROCE_STAT_MAX ? mroce_stat_descs[stat] : NULL;
}
