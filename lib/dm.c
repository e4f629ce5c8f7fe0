// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory: buffers in the XDP datapath's pool (the mroce_dm map,
 * dp_maps.h), which the XDP program can write. An application allocates
 * them here and registers them like any memory; a region on device memory
 * that grants remote write is published to XDP (the dmr map), which then
 * places WRITE payloads into it itself. Chunks and table entries are
 * claimed with compare-and-swap on the mmap'ed maps, so processes sharing
 * an interface never hand out the same one; a dead process's are reclaimed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "internal.h"

/*
 * An owner PID with this bit is a table entry being taken (mroce_dmr_claim):
 * it matches no chunk's owner, so XDP places nothing there meanwhile.
 */
#define DMR_CLAIMING	0x80000000u

/* Whether the process that holds an entry or chunk is gone (it may be taken). */
static bool owner_dead(__u32 pid)
{
	return mroce_pid_dead(pid & ~DMR_CLAIMING);
}

/* Take a chunk: free, or left by a dead process. */
static bool chunk_claim(__u32 *own)
{
	__u32 cur = __atomic_load_n(own, __ATOMIC_ACQUIRE), me = (__u32)getpid();

	if (cur && !owner_dead(cur))
		return false;
	return __atomic_compare_exchange_n(own, &cur, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void chunks_release(__u32 *own, __u32 first, __u32 n)
{
	for (__u32 k = first; k < first + n; k++)
		__atomic_store_n(&own[k], 0, __ATOMIC_RELEASE);
}

int mroce_alloc_dm(struct mroce_dev *dev, size_t length, struct mroce_dm **dmp)
{
	struct mroce_dp_dm pool;
	struct mroce_dm *dm;
	__u32 n, first;
	void *addr;
	int err;

	if (!dev || !dmp || !length)
		return -EINVAL;
	*dmp = NULL;
	if (!dev->dp || mroce_dp_dm(dev->dp, &pool))
		return -EOPNOTSUPP;	/* no XDP datapath under this device */
	if (length > (size_t)pool.chunks * MROCE_DM_CHUNK)
		return -ENOSPC;
	n = (__u32)((length + MROCE_DM_CHUNK - 1) / MROCE_DM_CHUNK);
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	for (first = 0; first + n <= pool.chunks; first++) {
		__u32 k;

		for (k = first; k < first + n && chunk_claim(&pool.own[k]); k++)
			;
		if (k == first + n)
			break;
		chunks_release(pool.own, first, k - first);
		first = k;	/* chunk k is taken: no run through it */
	}
	if (first + n > pool.chunks) {
		err = -ENOSPC;
		goto fail;
	}
	addr = mmap(NULL, (size_t)n * MROCE_DM_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, pool.fd,
		    (off_t)first * MROCE_DM_CHUNK);
	if (addr == MAP_FAILED) {
		err = -errno;
		chunks_release(pool.own, first, n);
		goto fail;
	}
	/* What a previous owner left there is not this one's to read. */
	memset(addr, 0, (size_t)n * MROCE_DM_CHUNK);
	*dm = (struct mroce_dm){ .dev = dev, .addr = addr, .length = length,
				 .map_len = (size_t)n * MROCE_DM_CHUNK, .first = first, .nchunks = n,
				 .next = dev->dms };
	dev->dms = dm;
	pthread_mutex_unlock(&dev->lock);
	*dmp = dm;
	return 0;
fail:
	pthread_mutex_unlock(&dev->lock);
	free(dm);
	return err;
}

/* Unmap and give back; dev->lock held, no region on it. */
static void dm_release(struct mroce_dev *dev, struct mroce_dm *dm)
{
	struct mroce_dp_dm pool;

	for (struct mroce_dm **p = &dev->dms; *p; p = &(*p)->next) {
		if (*p == dm) {
			*p = dm->next;
			break;
		}
	}
	munmap(dm->addr, dm->map_len);
	if (!mroce_dp_dm(dev->dp, &pool))
		chunks_release(pool.own, dm->first, dm->nchunks);
	free(dm);
}

int mroce_free_dm(struct mroce_dm *dm)
{
	struct mroce_dev *dev;
	int err = 0;

	if (!dm)
		return -EINVAL;
	dev = dm->dev;
	pthread_mutex_lock(&dev->lock);
	if (dm->users)
		err = -EBUSY;
	else
		dm_release(dev, dm);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

void *mroce_dm_addr(const struct mroce_dm *dm) { return dm ? dm->addr : NULL; }
size_t mroce_dm_length(const struct mroce_dm *dm) { return dm ? dm->length : 0; }

/* The allocation [addr, addr + len) lies in, if any. dev->lock held. */
struct mroce_dm *mroce_dm_find(struct mroce_dev *dev, const void *addr, __u64 len)
{
	__u64 a = (__u64)(unsigned long)addr;

	for (struct mroce_dm *dm = dev->dms; dm; dm = dm->next) {
		__u64 s = (__u64)(unsigned long)dm->addr;

		if (a >= s && a - s <= dm->length && len <= dm->length - (a - s))
			return dm;
	}
	return NULL;
}

/*
 * Claim region table entry i for this process (false: another live process
 * holds it; the caller tries another key index). dev->lock held.
 */
bool mroce_dmr_claim(struct mroce_dev *dev, __u32 i)
{
	struct mroce_dp_dm pool;
	struct mroce_dmr *r;
	__u32 pid;

	if (mroce_dp_dm(dev->dp, &pool))
		return false;
	r = &pool.dmr[i];
	/*
	 * The owner PID is the entry's lock, as a chunk's: whoever swaps 0 or a
	 * dead process's PID for its own holds it; the state moves under it.
	 * XDP places into an active entry whose owner holds the chunk, so the
	 * PID swapped in first is marked: a dead owner's entry, still active,
	 * never names the new owner's chunks before the state says claimed.
	 */
	pid = __atomic_load_n(&r->owner_pid, __ATOMIC_ACQUIRE);
	if (pid && !owner_dead(pid))
		return false;
	if (!__atomic_compare_exchange_n(&r->owner_pid, &pid, (__u32)getpid() | DMR_CLAIMING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&r->state, MROCE_DMR_CLAIMED, __ATOMIC_RELEASE);	/* XDP stops */
	__atomic_store_n(&r->owner_pid, (__u32)getpid(), __ATOMIC_RELEASE);
	return true;
}

/* Publish region mr (its table entry claimed) to XDP. dev->lock held. */
void mroce_dmr_publish(struct mroce_mr *mr, __u32 i)
{
	struct mroce_dp_dm pool;
	struct mroce_dmr *r;

	if (mroce_dp_dm(mr->dev->dp, &pool))
		return;
	r = &pool.dmr[i];
	r->rkey = mr->rkey;
	r->pd_cookie = mr->pd->cookie;
	r->iova = (__u64)(unsigned long)mr->addr;
	r->length = mr->length;
	r->dm_off = (__u64)mr->dm->first * MROCE_DM_CHUNK + (__u64)(mr->addr - mr->dm->addr);
	r->access = MROCE_DMR_REMOTE_WRITE;
	/* Every field before the state: XDP reads the state first. */
	__atomic_store_n(&r->state, MROCE_DMR_ACTIVE, __ATOMIC_RELEASE);
	mr->dmr = true;
}

/* Take region mr off XDP's table, or give back entry i just claimed (mr NULL). dev->lock held. */
void mroce_dmr_unpublish(struct mroce_dev *dev, struct mroce_mr *mr, __u32 i)
{
	struct mroce_dp_dm pool;
	struct mroce_dmr *r;

	if (mroce_dp_dm(dev->dp, &pool))
		return;
	r = &pool.dmr[i];
	__atomic_store_n(&r->state, MROCE_DMR_CLAIMED, __ATOMIC_RELEASE);
	r->rkey = 0;
	r->pd_cookie = 0;
	r->length = 0;
	__atomic_store_n(&r->state, MROCE_DMR_FREE, __ATOMIC_RELEASE);
	__atomic_store_n(&r->owner_pid, 0, __ATOMIC_RELEASE);	/* the lock last */
	if (mr)
		mr->dmr = false;
}

/* At device close: every region still on device memory, then the memory itself. */
void mroce_dm_close_all(struct mroce_dev *dev)
{
	pthread_mutex_lock(&dev->lock);
	for (__u32 i = 0; i < MROCE_MAX_MRS; i++) {
		struct mroce_mr *mr = &dev->mrs[i];

		if (mr->used && mr->dmr)
			mroce_dmr_unpublish(dev, mr, i);
		if (mr->used && mr->dm) {
			mr->dm->users--;
			mr->dm = NULL;
		}
	}
	while (dev->dms)
		dm_release(dev, dev->dms);
	pthread_mutex_unlock(&dev->lock);
}

/* The transmit pool in the UMEM (port.h pool_alloc): the port's to manage. */
int mroce_alloc_umem(struct mroce_dev *dev, size_t length, void **addr)
{
	int err;

	if (!dev || !addr || !length)
		return -EINVAL;
	*addr = NULL;
	if (!dev->ops->pool_alloc)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&dev->lock);
	err = dev->ops->pool_alloc(dev->port, length, addr);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int mroce_free_umem(struct mroce_dev *dev, void *addr)
{
	int err;

	if (!dev || !addr || !dev->ops->pool_free)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	err = dev->ops->pool_free(dev->port, addr);
	pthread_mutex_unlock(&dev->lock);
	return err;
}
