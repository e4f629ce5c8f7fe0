// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbs_token: the connection token a Verbs-created QP pair carries, as an
 * attacker who knows the derivation (verbs/token.c, public) computes it from
 * what is not secret: both ends' GIDs (IPv4 addresses) and verbs QPNs, and a
 * key. The key is what MROCE_VERBS_KEY_FILE names, else /etc/mroce/verbs.key,
 * else the built-in constant: run without either and it is the built-in one,
 * which every copy of the library (and every attacker) has.
 *
 *   verbs_token IPV4_A VQPN_A IPV4_B VQPN_B     prints "token 0x..." (hex, 64 bits)
 *
 * test_verbs_rogue.sh: with a fabric key installed, frames carrying this
 * (built-in) token must die as bad tokens; without one, only the start PSN
 * (a keyed hash of the random 24-bit verbs PSN) stands in the attacker's way.
 * Compiled with the library's own verbs/token.c, so it follows any change to it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpint.h"

static int gid_of(const char *ip, union ibv_gid *gid)
{
	struct in_addr a;

	if (inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &a, 4);	/* ::ffff:a.b.c.d, as the library's GID 0 */
	return 0;
}

static int qpn_of(const char *s, uint32_t *qpn)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || v >> 24)
		return -1;
	*qpn = (uint32_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	union ibv_gid ga, gb;
	uint32_t qa, qb;
	uint8_t key[16];
	int err;

	if (argc != 5 || gid_of(argv[1], &ga) || qpn_of(argv[2], &qa) || gid_of(argv[3], &gb) ||
	    qpn_of(argv[4], &qb)) {
		fprintf(stderr, "usage: verbs_token IPV4_A VQPN_A IPV4_B VQPN_B (QPNs below 2^24)\n");
		return 2;
	}
	err = mrv_fabric_key(key);
	if (err) {
		fprintf(stderr, "verbs_token: the fabric key: %s\n", strerror(-err));
		return 1;
	}
	printf("token 0x%016llx\n", (unsigned long long)mrv_conn_token(key, &ga, qa, &gb, qb));
	return 0;
}
