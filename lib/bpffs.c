// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpffs: `ip netns exec` mounts a fresh sysfs, so /sys/fs/bpf is an empty
 * directory there; mount a bpffs on it when pinning needs one.
 */
#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "internal.h"

#define BPFFS_DIR "/sys/fs/bpf"

int mroce_bpffs_ensure(void)
{
	struct statfs st;

	if (!statfs(BPFFS_DIR, &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir(BPFFS_DIR, 0700) && errno != EEXIST)
		return -errno;
	if (mount("bpf", BPFFS_DIR, "bpf", 0, "mode=0700"))
		return -errno;
	return 0;
}
