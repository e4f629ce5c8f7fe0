// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Memory regions: registration, keys, and the key lookups placement uses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"


/*
 * Keys: the low 12 bits index the table, the other 20 are random, so a
 * remote key cannot be guessed (and a packet must already carry the right
 * 64-bit connection token before its rkey is looked at). The slot is picked
 * at random among the free ones, so the index does not tell how many
 * regions were registered before or which key comes next either; lkey and
 * rkey differ, so an lkey a peer learns is no rkey.
 */
#define KEY_INDEX(k)	((k) & (MROCE_MAX_MRS - 1))
#define KEY_RANDOM	(~(__u32)(MROCE_MAX_MRS - 1))

__u64 mroce_pd_cookie(void)
{
	__u64 v = 0;

	while (getrandom(&v, sizeof(v), 0) != sizeof(v))
		;
	return v | 1;
}

int mroce_alloc_pd(struct mroce_dev *dev, struct mroce_pd **pdp)
{
	struct mroce_pd *pd;

	if (!dev || !pdp)
		return -EINVAL;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->dev = dev;
	pd->cookie = mroce_pd_cookie();
	*pdp = pd;
	return 0;
}

int mroce_dealloc_pd(struct mroce_pd *pd)
{
	int err = 0;

	if (!pd || pd->is_default)
		return -EINVAL;
	pthread_mutex_lock(&pd->dev->lock);
	if (pd->users)
		err = -EBUSY;
	pthread_mutex_unlock(&pd->dev->lock);
	if (!err)
		free(pd);
	return err;
}

/*
 * A free slot, searched from a random one; -1 if the table is full. For a
 * region XDP will place into, the same index of the datapath's region table
 * (shared by every process on the interface) must be ours too: it is
 * claimed here. dev->lock held.
 */
static int free_slot(struct mroce_dev *dev, bool dmr)
{
	__u32 start = (__u32)mroce_dev_random64(dev);

	for (__u32 n = 0; n < MROCE_MAX_MRS; n++) {
		__u32 i = KEY_INDEX(start + n);

		if (!dev->mrs[i].used && (!dmr || mroce_dmr_claim(dev, i)))
			return (int)i;
	}
	return -1;
}

static void make_keys(struct mroce_mr *mr, __u32 i)
{
	__u64 r;

	do
		r = mroce_dev_random64(mr->dev);
	while (((__u32)r & KEY_RANDOM) == ((__u32)(r >> 32) & KEY_RANDOM));
	mr->lkey = ((__u32)r & KEY_RANDOM) | i;
	mr->rkey = ((__u32)(r >> 32) & KEY_RANDOM) | i;
}

int mroce_reg_mr_pd(struct mroce_pd *pd, void *addr, size_t length, unsigned int access,
		    struct mroce_mr **mrp)
{
	unsigned int known = MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE |
			     MROCE_ACCESS_REMOTE_READ;
	struct mroce_dev *dev;
	struct mroce_dm *dm;
	struct mroce_mr *mr;
	bool dmr;
	int i;

	if (!pd || !mrp || (!addr && length) || (access & ~known))
		return -EINVAL;
	/* Remote writers need local write permission too (as in ibverbs). */
	if ((access & MROCE_ACCESS_REMOTE_WRITE) && !(access & MROCE_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if ((__u64)(unsigned long)addr + length < (__u64)(unsigned long)addr)
		return -EINVAL;
	dev = pd->dev;
	pthread_mutex_lock(&dev->lock);
	dm = length ? mroce_dm_find(dev, addr, length) : NULL;
	dmr = dm && (access & MROCE_ACCESS_REMOTE_WRITE);
	i = free_slot(dev, dmr);
	if (i < 0) {
		pthread_mutex_unlock(&dev->lock);
		return -ENOSPC;
	}
	mr = &dev->mrs[i];
	mr->dev = dev;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	make_keys(mr, (__u32)i);
	mr->dm = dm;
	mr->used = true;
	pd->users++;
	if (dm)
		dm->users++;
	if (dmr)
		mroce_dmr_publish(mr, (__u32)i);
	pthread_mutex_unlock(&dev->lock);
	*mrp = mr;
	return 0;
}

int mroce_reg_mr(struct mroce_dev *dev, void *addr, size_t length, unsigned int access,
		 struct mroce_mr **mrp)
{
	return dev ? mroce_reg_mr_pd(&dev->pd0, addr, length, access, mrp) : -EINVAL;
}

int mroce_dereg_mr(struct mroce_mr *mr)
{
	struct mroce_dev *dev;

	if (!mr || !mr->used)
		return -EINVAL;
	dev = mr->dev;
	pthread_mutex_lock(&dev->lock);
	/* XDP stops placing into it first: nothing lands after this returns but bytes in flight. */
	if (mr->dmr)
		mroce_dmr_unpublish(dev, mr, KEY_INDEX(mr->rkey));
	if (mr->dm)
		mr->dm->users--;
	mr->pd->users--;
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
 * while work still names it): the key names a live region of the accessing
 * QP's protection domain that covers the range and grants `need`. A zero-length access needs no region.
 */
bool mroce_mr_grants(const struct mroce_pd *pd, __u32 key, bool remote, __u64 addr, __u64 len,
		     unsigned int need)
{
	struct mroce_mr *mr;

	if (!len)
		return true;
	mr = remote ? mroce_mr_by_rkey(pd->dev, key) : mroce_mr_by_lkey(pd->dev, key);
	/* A region of another PD is refused exactly like an unknown key. */
	return mr && mr->pd == pd && (mr->access & need) == need &&
	       mroce_mr_covers(mr, addr, len);
}
