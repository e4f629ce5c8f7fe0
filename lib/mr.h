/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Memory regions, as the engine sees them. Not installed. */
#ifndef MROCE_MR_H
#define MROCE_MR_H

#include <stdbool.h>

#include "mroce/mroce.h"

#define MROCE_MAX_MRS		4096

/*
 * A protection domain: a region is reached only through a QP of its own
 * PD. Every device has a default one (dev->pd0) for mroce_reg_mr() and for
 * QPs created without attr.pd.
 */
struct mroce_pd {
	struct mroce_dev	*dev;
	__u32			users;		/* regions and QPs in it */
	__u64			cookie;		/* random, nonzero: names it to XDP (flows, dmr map) */
	bool			is_default;	/* dev->pd0: goes with the device */
};

/* A new PD's cookie (getrandom: a test's repeatable stream is not consumed). */
__u64 mroce_pd_cookie(void);

struct mroce_mr {
	struct mroce_dev	*dev;
	struct mroce_pd		*pd;
	__u8			*addr;
	__u64			length;
	unsigned int		access;
	__u32			lkey;
	__u32			rkey;
	struct mroce_dm		*dm;		/* the device memory it lies in, if any */
	bool			dmr;		/* published to XDP, which places WRITEs into it */
	bool			used;
};

/* The region a key names, or NULL. dev->lock held. */
struct mroce_mr *mroce_mr_by_rkey(struct mroce_dev *dev, __u32 rkey);
struct mroce_mr *mroce_mr_by_lkey(struct mroce_dev *dev, __u32 lkey);
/* Is [addr, addr + len) inside mr? Written so that nothing can overflow. */
bool mroce_mr_covers(const struct mroce_mr *mr, __u64 addr, __u64 len);
/* Does the region of key (an rkey if remote, else an lkey), if it is in pd,
 * grant need over the range? pd is the accessing QP's. */
bool mroce_mr_grants(const struct mroce_pd *pd, __u32 key, bool remote, __u64 addr, __u64 len,
		     unsigned int need);

/* An allocation of device memory (dm.c): whole chunks of the datapath's pool, mapped. */
struct mroce_dm {
	struct mroce_dev	*dev;
	__u8			*addr;
	size_t			length;		/* as asked for */
	size_t			map_len;	/* whole chunks */
	__u32			first, nchunks;	/* in the pool */
	__u32			users;		/* regions registered on it */
	struct mroce_dm		*next;		/* dev->dms */
};

/* Device memory (dm.c). dev->lock held for all of these. */
struct mroce_dm *mroce_dm_find(struct mroce_dev *dev, const void *addr, __u64 len);
bool mroce_dmr_claim(struct mroce_dev *dev, __u32 i);
void mroce_dmr_publish(struct mroce_mr *mr, __u32 i);
void mroce_dmr_unpublish(struct mroce_dev *dev, struct mroce_mr *mr, __u32 i);
/* Device close: unpublish every region, unmap and give back every allocation. */
void mroce_dm_close_all(struct mroce_dev *dev);

#endif /* MROCE_MR_H */
