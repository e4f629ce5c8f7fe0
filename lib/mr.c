// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Memory regions: registration, keys, and the key lookups placement uses. */
#include <errno.h>
#include <string.h>

#include "engine.h"


/*
 * Keys: the low 12 bits index the table, the other 20 are random, so a
 * remote key cannot be guessed (and a packet must already carry the right
 * 64-bit connection token before its rkey is looked at).
 */
#define KEY_INDEX(k)	((k) & (MROCE_MAX_MRS - 1))

int mroce_reg_mr(struct mroce_dev *dev, void *addr, size_t length, unsigned int access,
		 struct mroce_mr **mrp)
{
	unsigned int known = MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE |
			     MROCE_ACCESS_REMOTE_READ;
	int err = -ENOSPC;

	if (!dev || !mrp || (!addr && length) || (access & ~known))
		return -EINVAL;
	/* Remote writers need local write permission too (as in ibverbs). */
	if ((access & MROCE_ACCESS_REMOTE_WRITE) && !(access & MROCE_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if ((__u64)(unsigned long)addr + length < (__u64)(unsigned long)addr)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	for (__u32 i = 0; i < MROCE_MAX_MRS; i++) {
		struct mroce_mr *mr = &dev->mrs[i];
		__u64 r;

		if (mr->used)
			continue;
		r = mroce_random64();
		mr->dev = dev;
		mr->addr = addr;
		mr->length = length;
		mr->access = access;
		mr->lkey = ((__u32)r & ~(__u32)(MROCE_MAX_MRS - 1)) | i;
		mr->rkey = ((__u32)(r >> 32) & ~(__u32)(MROCE_MAX_MRS - 1)) | i;
		mr->used = true;
		*mrp = mr;
		err = 0;
		break;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int mroce_dereg_mr(struct mroce_mr *mr)
{
	struct mroce_dev *dev;

	if (!mr || !mr->used)
		return -EINVAL;
	dev = mr->dev;
	pthread_mutex_lock(&dev->lock);
	memset(mr, 0, sizeof(*mr));
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

__u32 mroce_mr_lkey(const struct mroce_mr *mr) { return mr ? mr->lkey : 0; }
__u32 mroce_mr_rkey(const struct mroce_mr *mr) { return mr ? mr->rkey : 0; }

struct mroce_mr *mroce_mr_by_rkey(struct mroce_dev *dev, __u32 rkey)
{
	struct mroce_mr *mr = &dev->mrs[KEY_INDEX(rkey)];

	return mr->used && mr->rkey == rkey ? mr : NULL;
}

struct mroce_mr *mroce_mr_by_lkey(struct mroce_dev *dev, __u32 lkey)
{
	struct mroce_mr *mr = &dev->mrs[KEY_INDEX(lkey)];

	return mr->used && mr->lkey == lkey ? mr : NULL;
}

bool mroce_mr_covers(const struct mroce_mr *mr, __u64 addr, __u64 len)
{
	__u64 start = (__u64)(unsigned long)mr->addr;

	return addr >= start && addr - start <= mr->length && len <= mr->length - (addr - start);
}

/*
 * The one check of every access to registered memory, at post time and
 * again for every packet that touches it (a region may be deregistered
 * while work still names it): the key names a live region that covers the
 * range and grants `need`. A zero-length access needs no region.
 */
bool mroce_mr_grants(struct mroce_dev *dev, __u32 key, bool remote, __u64 addr, __u64 len,
		     unsigned int need)
{
	struct mroce_mr *mr;

	if (!len)
		return true;
	mr = remote ? mroce_mr_by_rkey(dev, key) : mroce_mr_by_lkey(dev, key);
	return mr && (mr->access & need) == need && mroce_mr_covers(mr, addr, len);
}
