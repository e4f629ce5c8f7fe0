// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writer side of the receive window shared with the XDP program.
 *
 * Only the thread that owns a QP's receive side calls these. The XDP program
 * reads concurrently (mroce_rxwin_check()), so every store is ordered such
 * that any state it can observe never makes it drop a PSN that was not
 * placed: bits are set after placement, words are cleared before the base
 * that brings them into the window is published. docs/datapath.md has the
 * full argument.
 */
#include <string.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

void mroce_rxwin_reset(struct mroce_flow *f, __u32 psn)
{
	for (int i = 0; i < MROCE_RXWIN_WORDS; i++)
		__atomic_store_n(&f->rx_bits[i], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->rx_base, psn, __ATOMIC_RELEASE);
}

int mroce_rxwin_mark(struct mroce_flow *f, __u32 psn)
{
	int verdict = mroce_rxwin_check(f, psn);

	/*
	 * This thread is the bitmap's only writer (XDP only reads it), so a
	 * plain load and a release store set the bit: no locked read-modify-
	 * write per packet, which was a full barrier on x86 each time.
	 */
	if (verdict == MROCE_RXWIN_NEW) {
		__u64 *w = &f->rx_bits[mroce_rxwin_word(psn)];

		__atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) | 1ULL << (psn & 63),
				 __ATOMIC_RELEASE);
	}
	return verdict;
}

__u32 mroce_rxwin_advance(struct mroce_flow *f)
{
	__u32 base = f->rx_base, nbase = base, last_word, grow;
	__u64 word;

	/* Skip whole placed words at once, then single bits. */
	for (;;) {
		word = f->rx_bits[mroce_rxwin_word(nbase)] >> (nbase & 63);
		if (!(word & 1))
			break;
		if (word == ~0ULL >> (nbase & 63)) {
			nbase += 64 - (nbase & 63);
		} else {
			nbase += (__u32)__builtin_ctzll(~word);
			break;
		}
		if (nbase - base >= MROCE_RXWIN_PSNS)
			break;
	}
	/* A full window of placed PSNs still stops at its edge. */
	if (nbase - base > MROCE_RXWIN_PSNS)
		nbase = base + MROCE_RXWIN_PSNS;
	if (nbase == base)
		return base;

	/*
	 * Clear the words the window grows into before anyone can see them as
	 * inside it. Word numbers live modulo 2^26 (2^32 PSNs / 64), so the
	 * distance is taken in that ring too.
	 */
	last_word = (base + MROCE_RXWIN_PSNS - 1) >> 6;
	grow = (((nbase + MROCE_RXWIN_PSNS - 1) >> 6) - last_word) & ((1u << 26) - 1);
	for (__u32 i = 1; i <= grow && i <= MROCE_RXWIN_WORDS; i++)
		__atomic_store_n(&f->rx_bits[(last_word + i) & (MROCE_RXWIN_WORDS - 1)], 0,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&f->rx_base, nbase, __ATOMIC_RELEASE);
	return nbase;
}

__u32 mroce_rxwin_sack(const struct mroce_flow *f, __u64 sack[MROCE_SACK_WORDS])
{
	__u32 base = __atomic_load_n(&f->rx_base, __ATOMIC_ACQUIRE);

	/* Word w takes PSNs start .. start + 63, straddling two ring words. */
	for (__u32 w = 0; w < MROCE_SACK_WORDS; w++) {
		__u32 start = base + 1 + 64 * w, sh = start & 63, d0 = 1 + 64 * w;
		__u64 v = __atomic_load_n(&f->rx_bits[mroce_rxwin_word(start)], __ATOMIC_ACQUIRE) >> sh;

		if (sh)
			v |= __atomic_load_n(&f->rx_bits[mroce_rxwin_word(start + 64)], __ATOMIC_ACQUIRE)
			     << (64 - sh);
		/* The slack word past the window's edge holds nothing to report. */
		if (d0 + 64 > MROCE_RXWIN_PSNS)
			v &= d0 >= MROCE_RXWIN_PSNS ? 0 : ~0ULL >> (d0 + 64 - MROCE_RXWIN_PSNS);
		sack[w] = v;
	}
	return base;
}

unsigned int mroce_rxwin_count(const struct mroce_flow *f)
{
	__u32 base = __atomic_load_n(&f->rx_base, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	for (__u32 d = 0; d < MROCE_RXWIN_PSNS; d++)
		n += mroce_rxwin_check(f, base + d) == MROCE_RXWIN_DUP;
	return n;
}
