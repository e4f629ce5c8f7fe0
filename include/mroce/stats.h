/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The XDP datapath's counters: one list shared by the BPF program
 * (dp_maps.h), the library and applications (mroce_dp_stats()), so that
 * none of them disagree. Self-contained: no other header needed.
 */
#ifndef MROCE_STATS_H
#define MROCE_STATS_H

#include <linux/types.h>

/*
 * The counters, X(NAME, name, description): enum mroce_stat indexes them,
 * struct mroce_dp_counters names them. One list so the BPF program, the
 * library, `mroce status` (text, JSON, Prometheus) and `bpftool map dump`
 * never disagree.
 */
#define MROCE_STATS(X)								\
	X(PASS,          pass,           "non-MetaRoCE frames passed to the kernel") \
	X(RX,            rx,             "MetaRoCE packets redirected to an AF_XDP socket") \
	X(RX_BYTES,      rx_bytes,       "bytes of redirected frames") \
	X(TRUNCATED,     truncated,      "drop: frame shorter than its IP/UDP lengths") \
	X(FRAGMENT,      fragment,       "drop: IP fragment to the MetaRoCE port") \
	X(BAD_LENGTH,    bad_length,     "drop: length fields inconsistent") \
	X(BAD_VERSION,   bad_version,    "drop: unsupported protocol version") \
	X(BAD_OPCODE,    bad_opcode,     "drop: unknown opcode") \
	X(BAD_FLAGS,     bad_flags,      "drop: first/last flags contradict offsets") \
	X(UNKNOWN_QP,    unknown_qp,     "drop: no flow for the destination QP") \
	X(BAD_TOKEN,     bad_token,      "drop: wrong connection token") \
	X(DUPLICATE,     duplicate,      "drop: PSN already placed") \
	X(DUP_RETX,      dup_retx,       "resent duplicate passed up, to be acknowledged again") \
	X(DUP_RETX_LIMIT, dup_retx_limit, "drop: resent duplicate, its flow was re-acknowledged < 1 ms ago") \
	X(OUT_OF_WINDOW, out_of_window,  "drop: PSN beyond the receive window") \
	X(OUT_OF_ORDER,  out_of_order,   "drop: go-back-N flow, PSN is not the next, its gap reported < 1 ms ago") \
	X(GAP_REPORT,    gap_report,     "go-back-N flow, PSN is not the next: passed up so the gap is NACKed") \
	X(NO_XSK,        no_xsk,         "drop: no AF_XDP socket on the receive queue") \
	X(WRONG_QUEUE,   wrong_queue,    "drop: arrived on a receive queue its QP's device does not serve (steer it: docs/datapath.md)") \
	X(NOT_LOCAL,     not_local,      "MetaRoCE port, but for another MAC or IP: passed to the kernel") \
	X(PLACED,        placed,         "WRITE payloads placed in device memory by XDP (frame cut to its headers)") \
	X(PLACED_BYTES,  placed_bytes,   "payload bytes placed by XDP") \
	X(BAD_CSUM,      bad_csum,       "drop: UDP checksum wrong (checked by XDP before it places)")

enum mroce_stat {
#define MROCE_STAT_ENUM(NAME, name, desc) MROCE_STAT_##NAME,
	MROCE_STATS(MROCE_STAT_ENUM)
#undef MROCE_STAT_ENUM
	MROCE_STAT_MAX
};

/*
 * Value of the XDP program's stats map (a per-CPU array of one entry): one
 * named __u64 per counter, in the order of enum mroce_stat, so the map's BTF
 * names every counter (`bpftool map dump name mroce_stats`) and counter s is
 * also word s of the struct (dp_maps.h checks that there is no padding).
 */
struct mroce_dp_counters {
#define MROCE_STAT_FIELD(NAME, name, desc) __u64 name;
	MROCE_STATS(MROCE_STAT_FIELD)
#undef MROCE_STAT_FIELD
};

#endif /* MROCE_STATS_H */
