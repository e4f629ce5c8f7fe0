/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Memory regions, as the engine sees them. Not installed. */
#ifndef MROCE_MR_H
#define MROCE_MR_H

#include <stdbool.h>

#include "mroce/mroce.h"

#define MROCE_MAX_MRS		4096

struct mroce_mr {
	struct mroce_dev	*dev;
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

#endif /* MROCE_MR_H */
