/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Test-only hooks into the transport (not installed, not exported from the
 * shared library): tests/test_random.c links the static library.
 */
#ifndef MROCE_TESTHOOK_H
#define MROCE_TESTHOOK_H

#include <stdbool.h>
#include <linux/types.h>

struct mroce_qp;

/*
 * Start a fresh QP's free-running counters where a test wants them (near
 * 2^31 or 2^32, to cross the wrap within a few requests): the send-queue
 * sequence, the receive-queue sequence, the message sequence of receive-
 * consuming requests and the first PSN. Only before connect (the peer
 * learns the PSN through mroce_qp_local_info) and with both queues empty.
 * The peer's receive sequence must equal this QP's msn: the receiver picks
 * the receive a message consumes by its message number.
 * 0, -EINVAL (NULL), -EISCONN (not in INIT) or -EBUSY (requests queued).
 */
int mroce_qp_test_seed_seq(struct mroce_qp *qp, __u32 sq_seq, __u32 rq_seq, __u32 msn, __u32 psn);

/*
 * Draw a device's QPNs, first PSNs, secrets and keys from a repeatable
 * stream started at seed instead of getrandom(), so that a simulated run
 * replays exactly. Only for single-threaded tests (no_thread devices).
 * 0 or -EINVAL (NULL device, seed 0).
 */
struct mroce_dev;
int mroce_dev_test_seed_random(struct mroce_dev *dev, __u64 seed);

/*
 * True if the XDP program would drop this frame before user space saw it
 * (bpf/mroce.bpf.c's shared checks: not ours, no such QP or token, beyond
 * the receive window, a duplicate that is not a resend, out of order under
 * go-back-N but for the gap reports, dp_maps.h's mroce_gbn_check). For ports with no XDP program in front: the unit tests' wire
 * (tests/sim.h) and the simulator's hosts (sim/). dev->lock not needed:
 * single-threaded callers only.
 */
bool mroce_dev_test_xdp_drops(struct mroce_dev *dev, const void *frame, __u32 len);

/* Packets the device sent from where their payload is (its UMEM's transmit pool), not copied. */
__u64 mroce_dev_test_ref_pkts(struct mroce_dev *dev);

#endif /* MROCE_TESTHOOK_H */
