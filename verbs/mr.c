// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Protection domains and memory regions: libmroce's, one for one. The
 * first PD opens the interface's mroce device (mrv_dev_get); lkey and rkey
 * are mroce's keys, which its peers check on every packet.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "mrv.h"

MRV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct mrv_context *ctx;
	struct mrv_pd *pd;
	int err;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	ctx = mrv_ctx(context);
	err = mrv_dev_get(ctx);
	if (err) {
		errno = -err;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = mroce_alloc_pd(ctx->mdev, &pd->pd);
	if (err) {
		free(pd);
		errno = mrv_errno(err);
		return NULL;
	}
	pd->ibpd.context = context;
	pd->ibpd.handle = 0;
	return &pd->ibpd;
}

/* EBUSY while a region or QP is in it (libmroce checks). */
MRV_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct mrv_pd *pd;
	int err;

	if (!ibpd)
		return EINVAL;
	pd = mrv_of(ibpd, struct mrv_pd, ibpd);
	err = mroce_dealloc_pd(pd->pd);
	if (err)
		return mrv_errno(err);
	free(pd);
	return 0;
}

/*
 * Verbs access flags onto mroce's. What mroce has no notion of is refused
 * (atomics, memory windows, zero-based, on-demand paging), bits unknown
 * to rdma-core 44 are invalid; the optional range (relaxed ordering and later ones) may be
 * ignored by any device, as libibverbs lets it; HUGETLB is only a hint.
 */
static int access_of(int access, unsigned int *out)
{
	unsigned int a = (unsigned int)access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;

	if (a & (IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
		 IBV_ACCESS_ON_DEMAND))
		return EOPNOTSUPP;
	a &= ~(unsigned int)IBV_ACCESS_HUGETLB;
	if (a & ~(unsigned int)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ))
		return EINVAL;
	/* as the IB spec: remote write needs local write */
	if ((a & IBV_ACCESS_REMOTE_WRITE) && !(a & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	*out = ((a & IBV_ACCESS_LOCAL_WRITE) ? MROCE_ACCESS_LOCAL_WRITE : 0) |
	       ((a & IBV_ACCESS_REMOTE_WRITE) ? MROCE_ACCESS_REMOTE_WRITE : 0) |
	       ((a & IBV_ACCESS_REMOTE_READ) ? MROCE_ACCESS_REMOTE_READ : 0);
	return 0;
}

/*
 * iova: mroce's peers name remote memory by its virtual address in the
 * owner's process (RETH raddr is checked against the region's addr), so a
 * region can only be known by its own address; another iova is refused.
 */
MRV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *ibpd, void *addr, size_t length,
					   uint64_t iova, unsigned int access)
{
	struct mrv_pd *pd;
	struct mrv_mr *mr;
	unsigned int macc;
	int err;

	if (!ibpd || (!addr && length)) {
		errno = EINVAL;
		return NULL;
	}
	if (iova != (uint64_t)(uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = access_of((int)access, &macc);
	if (err) {
		errno = err;
		return NULL;
	}
	pd = mrv_of(ibpd, struct mrv_pd, ibpd);
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	err = mroce_reg_mr_pd(pd->pd, addr, length, macc, &mr->mr);
	if (err) {
		free(mr);
		errno = mrv_errno(err);
		return NULL;
	}
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.lkey = mroce_mr_lkey(mr->mr);
	mr->ibmr.rkey = mroce_mr_rkey(mr->mr);
	return &mr->ibmr;
}

#undef ibv_reg_mr
MRV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
MRV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

MRV_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct mrv_mr *mr;
	int err;

	if (!ibmr)
		return EINVAL;
	mr = mrv_of(ibmr, struct mrv_mr, ibmr);
	err = mroce_dereg_mr(mr->mr);
	if (err)
		return mrv_errno(err);
	free(mr);
	return 0;
}
