// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What protects a Verbs-created QP (docs/security.md): Verbs applications
 * exchange only QPN, PSN and GID, never mroce's connection secret. Both
 * ends derive it instead, keyed by a fabric key:
 *  - the connection token: SipHash-2-4(key, "tok", the two ends' (GID, QPN)
 *    in a canonical order), the same at both ends;
 *  - each direction's 32-bit start PSN: SipHash-2-4(key, "psn", sender's
 *    GID and QPN, receiver's GID and QPN).
 * The 24-bit verbs PSNs cannot be mixed in: at RTR each end knows only the
 * other's (its own comes at RTS, if ever: perftest's servers stay in RTR,
 * receiving WRITEs and answering READs from their own PSN space), and both
 * ends need the same values at RTR. So the secret is the key: with one
 * installed, an off-path injector cannot compute a token or a PSN; without
 * (the built-in constant), everything is computable from the GIDs and QPNs,
 * and only the QPNs' randomness stands in the way, as in plain RoCEv2.
 * The key: MROCE_VERBS_KEY_FILE, else /etc/mroce/verbs.key if it exists
 * (16..64 bytes, mode 0600 or stricter, owned by the user or root); a
 * built-in constant otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qpint.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* SipHash-2-4 (Aumasson and Bernstein), 64-bit output. */
uint64_t mrv_siphash(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t left = len & 7;

	for (const uint8_t *end = p + (len - left); p != end; p += 8) {
		m = le64(p);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t i = 0; i < left; i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* Without a key file: a constant, so two hosts without one still agree (the PSN alone protects). */
static const uint8_t builtin_key[16] = "mroce-verbs-v1\0";

int mrv_fabric_key(uint8_t key[16])
{
	const char *path = getenv("MROCE_VERBS_KEY_FILE");
	uint8_t buf[65];
	struct stat st;
	ssize_t n;
	int fd;

	if (!path || !*path) {
		path = "/etc/mroce/verbs.key";
		if (access(path, F_OK)) {
			memcpy(key, builtin_key, 16);
			return 0;
		}
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -EPERM;
	/* A key others can read or write protects nothing: refuse it rather than run open. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 16 || n > 64)
		return -EPERM;
	/* Any length to SipHash's 128 bits: two keyed hashes of the file under the constant. */
	{
		uint64_t a = mrv_siphash(builtin_key, buf, (size_t)n);
		uint8_t k2[16];

		memcpy(k2, builtin_key, 16);
		k2[15] ^= 1;
		uint64_t b = mrv_siphash(k2, buf, (size_t)n);

		memcpy(key, &a, 8);
		memcpy(key + 8, &b, 8);
	}
	memset(buf, 0, sizeof(buf));
	return 0;
}

/* One end as hashed: GID then QPN (big-endian). */
static void put_end(uint8_t *p, const union ibv_gid *gid, uint32_t qpn)
{
	memcpy(p, gid->raw, 16);
	p[16] = (uint8_t)(qpn >> 24);
	p[17] = (uint8_t)(qpn >> 16);
	p[18] = (uint8_t)(qpn >> 8);
	p[19] = (uint8_t)qpn;
}

uint64_t mrv_conn_token(const uint8_t key[16], const union ibv_gid *lgid, uint32_t lqpn,
			const union ibv_gid *rgid, uint32_t rqpn)
{
	uint8_t m[3 + 40], a[20], b[20];

	put_end(a, lgid, lqpn);
	put_end(b, rgid, rqpn);
	memcpy(m, "tok", 3);
	/* the smaller end first: both ends hash the same bytes */
	if (memcmp(a, b, 20) <= 0) {
		memcpy(m + 3, a, 20);
		memcpy(m + 23, b, 20);
	} else {
		memcpy(m + 3, b, 20);
		memcpy(m + 23, a, 20);
	}
	return mrv_siphash(key, m, sizeof(m));
}

uint32_t mrv_start_psn(const uint8_t key[16], const union ibv_gid *sgid, uint32_t sqpn,
		       const union ibv_gid *rgid, uint32_t rqpn)
{
	uint8_t m[3 + 40];

	memcpy(m, "psn", 3);
	put_end(m + 3, sgid, sqpn);
	put_end(m + 23, rgid, rqpn);
	return (uint32_t)mrv_siphash(key, m, sizeof(m));
}
