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
	bool			is_default;	/* dev->pd0: goes with the device */
};

struct mroce_mr {
	struct mroce_dev	*dev;
	struct mroce_pd		*pd;
	__u8			*addr;
	__u64			length;
	unsigned int		access;
	__u32			lkey;
	__u32			rkey;
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

#endif /* MROCE_MR_H */
