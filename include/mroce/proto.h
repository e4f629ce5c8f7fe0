/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * MetaRoCE wire protocol, version 2: the one source of truth shared by the
 * XDP program (bpf/), the library (lib/) and the tests. docs/protocol.md
 * explains every field and rule; keep both in step.
 *
 * All multi-byte fields are big-endian on the wire. Headers are packed and
 * placed right after the UDP header, so nothing here may assume alignment.
 */
#ifndef MROCE_PROTO_H
#define MROCE_PROTO_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define MROCE_VERSION		2	/* wire protocol version (1: before per-path sequences) */
/* Between RoCEv2 (4791) and Ultra Ethernet (4793); configurable at attach. */
#define MROCE_DEFAULT_PORT	4792

enum mroce_opcode {
	MROCE_OP_WRITE		= 0x01,
	MROCE_OP_WRITE_IMM	= 0x02,
	MROCE_OP_SEND		= 0x03,
	MROCE_OP_SEND_IMM	= 0x04,
	MROCE_OP_READ_REQ	= 0x05,
	MROCE_OP_READ_RESP	= 0x06,
	MROCE_OP_VOID		= 0x07,	/* gives up a PSN whose request was refused (RNR) */
	MROCE_OP_ACK		= 0x10,
	MROCE_OP_NACK		= 0x11,
	/*
	 * Reserved, rejected as unknown by version 2 receivers:
	 * 0x20-0x2f atomics (compare-and-swap, fetch-and-add),
	 * 0x30-0x3f congestion control (probes, credit grants).
	 */
};

/* bth.flags */
#define MROCE_F_FIRST		0x0001	/* first packet of its message (offset 0) */
#define MROCE_F_LAST		0x0002	/* last packet (offset + payload == msg_len) */
#define MROCE_F_ACK_REQ		0x0004	/* receiver should ACK without coalescing; on an ACK,
					 * an ask: answer with an ACK at once, echoing this
					 * packet's bth.ts (protocol.md, "Asking before resending") */
#define MROCE_F_RETX		0x0008	/* retransmission of an earlier PSN */
#define MROCE_F_SOLICITED	0x0010	/* completion should wake the receiver */
#define MROCE_F_ECN_ECHO	0x0020	/* ACK: CE marks were seen (see aeth.ecn_ce) */
/*
 * A plane's probe (protocol.md, "Planes"), on a data packet or, from a QP
 * that sends no data, on a copy of an ACK: bth.ts is a nonce, not a time.
 * The receiver's next ACK echoes it (aeth.ts_echo, plus the hold), even
 * for a duplicate: the proof that what is sent to that plane's address
 * reaches the peer.
 */
#define MROCE_F_PLANE_PROBE	0x0040
#define MROCE_F_KNOWN		0x7f	/* other bits: senders send 0, receivers ignore */
/* A duplicate with one of these is answered (goes to the engine, rate-limited): others die. */
#define MROCE_F_DUP_ANSWER	(MROCE_F_RETX | MROCE_F_PLANE_PROBE)

/* Base transport header: in every packet, right after UDP. 32 bytes. */
struct mroce_bth {
	__u8	ver;		/* MROCE_VERSION */
	__u8	opcode;		/* enum mroce_opcode */
	__u8	flags;		/* MROCE_F_* */
	__u8	path;		/* sender's path slot (which entropy value): pseq's space */
	__be32	dqpn;		/* destination queue pair number */
	__be32	psn;		/* packet sequence number (ACK/NACK: sender's next PSN) */
	__be32	msn;		/* message sequence number of the request this packet serves */
	__be64	token;		/* per-connection secret agreed at setup */
	__be32	ts;		/* sender clock in microseconds, echoed by ACKs for RTT
				 * (F_PLANE_PROBE: a nonce instead) */
	__be16	payload_len;	/* bytes after the opcode's extension headers */
	__be16	pseq;		/* data: the path slot's own sequence, one per packet sent on it */
} __attribute__((packed));

/* RDMA extension: remote memory target (WRITE, WRITE_IMM, READ_REQ). 16 bytes. */
struct mroce_reth {
	__be64	raddr;		/* remote virtual address of the message's byte 0 */
	__be32	rkey;		/* remote key of the registered region */
	__be32	rsvd;		/* zero */
} __attribute__((packed));

/*
 * Data extension: where the payload sits in its message, and for a
 * receive-consuming message (SEND, SEND_IMM, WRITE_IMM) which ordered
 * stream it belongs to; bth.msn is then its sequence in that stream. A
 * message refused for want of a receive (RNR) is sent again later, with new
 * PSNs and a newer epoch: a receiver keeps the bytes of a message's newest
 * epoch only. Other opcodes send zeros there. 12 bytes.
 */
struct mroce_deth {
	__be32	msg_len;	/* total message length in bytes */
	__be32	offset;		/* byte offset of this packet's payload in the message */
	__be16	stream;		/* the message's stream, < the QP's streams */
	__be16	epoch;		/* which attempt at the message this copy belongs to */
} __attribute__((packed));

/* Immediate data (WRITE_IMM, SEND_IMM), carried by every packet of the message. */
struct mroce_immeth {
	__be32	imm;
} __attribute__((packed));

/* READ request range: bytes [deth.offset, deth.offset + length) are wanted. */
struct mroce_rreqeth {
	__be32	length;
} __attribute__((packed));

/*
 * Selective ACK bitmap: 960 bits, the whole receive window beyond cum_psn
 * (MROCE_RXWIN_PSNS in dp_maps.h), so that every ACK says of every PSN the
 * sender may have in flight whether it arrived: a sender stuck behind a hole
 * learns all the other holes in one round trip, and counts everything else
 * out of flight.
 */
#define MROCE_SACK_WORDS	15

/* Per-path selective ACK: 256 bits, the newest first (MetaRoCE's per-path SACK). */
#define MROCE_PSACK_WORDS	4
#define MROCE_PSACK_BITS	(64 * MROCE_PSACK_WORDS)

/* aeth.pflags */
#define MROCE_PF_VALID		0x01	/* the per-path SACK fields describe slot ppath */
#define MROCE_PF_ASKS		0x02	/* this receiver answers asks (MROCE_F_ACK_REQ on an ACK) */

/* ACK extension. 180 bytes. */
struct mroce_aeth {
	__be32	cum_psn;	/* every PSN before this one has been placed */
	__be32	ts_echo;	/* bth.ts of the newest packet this ACK covers, plus the
				 * microseconds the receiver held it before this ACK */
	/* bit i of word w (LSB first) set: PSN cum_psn + 1 + 64 * w + i placed */
	__be64	sack[MROCE_SACK_WORDS];
	__be16	ecn_ce;		/* data packets that arrived CE-marked since the last ACK */
	__be16	ecn_pkts;	/* data packets that arrived since the last ACK */
	__be32	msn;		/* messages completed at the receiver so far */
	__be32	rwnd;		/* PSNs the receiver can still take beyond cum_psn */
	/* the receiver's grant to this sender, kbit/s: its share of the inbound link; 0: none */
	__be32	rate;
	__u8	pflags;		/* MROCE_PF_* */
	__u8	ppath;		/* the sender's path slot the per-path SACK describes */
	__be16	ppsn_next;	/* one past the newest bth.pseq that arrived on slot ppath */
	/* bit i of word w (LSB first) set: pseq ppsn_next - 1 - (64 * w + i) arrived */
	__be64	psack[MROCE_PSACK_WORDS];
} __attribute__((packed));

enum mroce_nak_code {
	MROCE_NAK_OUT_OF_WINDOW	= 1,	/* PSN beyond the receive window */
	MROCE_NAK_REMOTE_ACCESS	= 2,	/* bad rkey, rights or address range */
	MROCE_NAK_INVALID_REQ	= 3,	/* malformed or unsupported request */
	MROCE_NAK_RNR		= 4,	/* receiver not ready: no receive posted */
	MROCE_NAK_REMOTE_OP	= 5,	/* responder failed to execute the request */
	MROCE_NAK_PSN_SEQ	= 6,	/* go-back-N: gap detected, resend from psn */
};

/* naketh.flags: every PSN before naketh.psn has been placed (a cumulative ACK too). */
#define MROCE_NAKF_CUM		0x01

/* NACK extension. 20 bytes. */
struct mroce_naketh {
	__be32	psn;		/* offending PSN (PSN_SEQ: first missing PSN) */
	__be32	msn;		/* message the NACK refers to */
	__u8	code;		/* enum mroce_nak_code */
	__u8	flags;		/* MROCE_NAKF_* */
	__be16	stream;		/* RNR: the refused copy's deth.stream */
	__be32	ts_echo;	/* bth.ts of the packet refused: which copy of it */
	__be16	epoch;		/* RNR: the refused copy's deth.epoch */
	__be16	rsvd;		/* zero */
} __attribute__((packed));

_Static_assert(sizeof(struct mroce_bth) == 32, "bth layout");
_Static_assert(__builtin_offsetof(struct mroce_bth, dqpn) == 4, "bth.dqpn");
_Static_assert(__builtin_offsetof(struct mroce_bth, psn) == 8, "bth.psn");
_Static_assert(__builtin_offsetof(struct mroce_bth, msn) == 12, "bth.msn");
_Static_assert(__builtin_offsetof(struct mroce_bth, token) == 16, "bth.token");
_Static_assert(__builtin_offsetof(struct mroce_bth, ts) == 24, "bth.ts");
_Static_assert(__builtin_offsetof(struct mroce_bth, payload_len) == 28, "bth.payload_len");
_Static_assert(__builtin_offsetof(struct mroce_bth, pseq) == 30, "bth.pseq");
_Static_assert(sizeof(struct mroce_reth) == 16, "reth layout");
_Static_assert(sizeof(struct mroce_deth) == 12, "deth layout");
_Static_assert(sizeof(struct mroce_immeth) == 4, "immeth layout");
_Static_assert(sizeof(struct mroce_rreqeth) == 4, "rreqeth layout");
_Static_assert(sizeof(struct mroce_aeth) == 180, "aeth layout");
_Static_assert(__builtin_offsetof(struct mroce_aeth, sack) == 8, "aeth.sack");
_Static_assert(__builtin_offsetof(struct mroce_aeth, rate) == 140, "aeth.rate");
_Static_assert(__builtin_offsetof(struct mroce_aeth, psack) == 148, "aeth.psack");
_Static_assert(sizeof(struct mroce_naketh) == 20, "naketh layout");

/* Which extension headers follow the BTH, in this order, for an opcode. */
#define MROCE_EXT_RETH		0x01
#define MROCE_EXT_DETH		0x02
#define MROCE_EXT_IMM		0x04
#define MROCE_EXT_RREQ		0x08
#define MROCE_EXT_AETH		0x10
#define MROCE_EXT_NAK		0x20
/* Not a header: the opcode carries payload, or consumes a PSN. */
#define MROCE_EXT_PAYLOAD	0x100
#define MROCE_EXT_SEQ		0x200

static __always_inline int mroce_op_layout(__u8 opcode)
{
	switch (opcode) {
	case MROCE_OP_WRITE:
		return MROCE_EXT_RETH | MROCE_EXT_DETH | MROCE_EXT_PAYLOAD | MROCE_EXT_SEQ;
	case MROCE_OP_WRITE_IMM:
		return MROCE_EXT_RETH | MROCE_EXT_DETH | MROCE_EXT_IMM |
		       MROCE_EXT_PAYLOAD | MROCE_EXT_SEQ;
	case MROCE_OP_SEND:
		return MROCE_EXT_DETH | MROCE_EXT_PAYLOAD | MROCE_EXT_SEQ;
	case MROCE_OP_SEND_IMM:
		return MROCE_EXT_DETH | MROCE_EXT_IMM | MROCE_EXT_PAYLOAD | MROCE_EXT_SEQ;
	case MROCE_OP_READ_REQ:
		return MROCE_EXT_RETH | MROCE_EXT_DETH | MROCE_EXT_RREQ | MROCE_EXT_SEQ;
	case MROCE_OP_READ_RESP:
		return MROCE_EXT_DETH | MROCE_EXT_PAYLOAD | MROCE_EXT_SEQ;
	case MROCE_OP_VOID:
		return MROCE_EXT_SEQ;
	case MROCE_OP_ACK:
		return MROCE_EXT_AETH;
	case MROCE_OP_NACK:
		return MROCE_EXT_NAK;
	default:
		return -1;
	}
}

/* Bytes of extension headers that follow the BTH for a layout. */
static __always_inline __u32 mroce_ext_len(int layout)
{
	__u32 len = 0;

	if (layout & MROCE_EXT_RETH)
		len += sizeof(struct mroce_reth);
	if (layout & MROCE_EXT_DETH)
		len += sizeof(struct mroce_deth);
	if (layout & MROCE_EXT_IMM)
		len += sizeof(struct mroce_immeth);
	if (layout & MROCE_EXT_RREQ)
		len += sizeof(struct mroce_rreqeth);
	if (layout & MROCE_EXT_AETH)
		len += sizeof(struct mroce_aeth);
	if (layout & MROCE_EXT_NAK)
		len += sizeof(struct mroce_naketh);
	return len;
}

/* Largest header stack (BTH + AETH); a frame's headers never exceed it. */
#define MROCE_HDR_MAX	(sizeof(struct mroce_bth) + sizeof(struct mroce_aeth))
_Static_assert(sizeof(struct mroce_reth) + sizeof(struct mroce_deth) +
	       sizeof(struct mroce_immeth) <= sizeof(struct mroce_aeth),
	       "data headers fit the header budget");

/* Byte order for code shared by BPF and user space (both little- or big-endian). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define mroce_be16(x)	((__u16)__builtin_bswap16(x))
#define mroce_be32(x)	((__u32)__builtin_bswap32(x))
#define mroce_be64(x)	((__u64)__builtin_bswap64(x))
#else
#define mroce_be16(x)	((__u16)(x))
#define mroce_be32(x)	((__u32)(x))
#define mroce_be64(x)	((__u64)(x))
#endif

#endif /* MROCE_PROTO_H */
