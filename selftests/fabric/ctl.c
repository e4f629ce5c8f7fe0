// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fabric emulator's control commands (one text line each, see fabric.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "switch.h"

struct out {
	char	*p;
	size_t	left;
};

static void say(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->p, o->left, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= o->left)
		n = o->left ? (int)o->left - 1 : 0;
	o->p += n;
	o->left -= (size_t)n;
}

/* "10g", "250m", "0": bits per second, decimal suffixes. */
static int parse_rate(const char *s, __u64 *v)
{
	char *end;
	double d = strtod(s, &end);

	if (end == s || d < 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': d *= 1e3; end++; break;
	case 'm': case 'M': d *= 1e6; end++; break;
	case 'g': case 'G': d *= 1e9; end++; break;
	}
	if (*end || d > 1e12)
		return -EINVAL;
	*v = (__u64)d;
	return 0;
}

/* "64k", "1m", "9000": bytes, binary suffixes. */
static int parse_bytes(const char *s, __u32 *v)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);

	if (end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		n <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		n <<= 20, end++;
	if (*end || n > 1ULL << 30)
		return -EINVAL;
	*v = (__u32)n;
	return 0;
}

/* "0.01", "1%": a probability, kept in parts per million. */
static int parse_prob(const char *s, __u32 *ppm)
{
	char *end;
	double d = strtod(s, &end);

	if (end == s)
		return -EINVAL;
	if (*end == '%')
		d /= 100, end++;
	if (*end || d < 0 || d > 1)
		return -EINVAL;
	*ppm = (__u32)(d * 1e6 + 0.5);
	return 0;
}

static int parse_uint(const char *s, __u32 max, __u32 *v)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (end == s || *end || n > max)
		return -EINVAL;
	*v = (__u32)n;
	return 0;
}

/* path P|all [up|down] [rate=R] [delay=US] [buffer=B] [loss=X] [dup=X] [ecn=B] */
static int cmd_path(struct fab_switch *sw, char **tok, int n, struct out *o)
{
	struct fab_path_cfg c;
	__u32 first, last;
	int err = 0;

	if (n < 2) {
		say(o, "error: path P|all [up|down] [rate=R] [delay=US] [buffer=B] [loss=X] [dup=X] [ecn=B]\n");
		return -EINVAL;
	}
	if (!strcmp(tok[1], "all")) {
		first = 0;
		last = sw->npaths - 1;
	} else if (parse_uint(tok[1], sw->npaths - 1, &first)) {
		say(o, "error: no path '%s' (paths 0..%u)\n", tok[1], sw->npaths - 1);
		return -EINVAL;
	} else {
		last = first;
	}
	/* Validate everything against path `first`'s copy, then apply to all. */
	for (__u32 p = first; p <= last; p++) {
		c = sw->cfg[p];
		for (int i = 2; i < n && !err; i++) {
			char *v = strchr(tok[i], '=');

			if (!strcmp(tok[i], "up") || !strcmp(tok[i], "down")) {
				c.up = tok[i][0] == 'u';
				continue;
			}
			if (!v) {
				err = -EINVAL;
				break;
			}
			*v++ = '\0';
			if (!strcmp(tok[i], "rate"))
				err = parse_rate(v, &c.rate_bps);
			else if (!strcmp(tok[i], "delay"))
				err = parse_uint(v, 10000000, &c.delay_us);
			else if (!strcmp(tok[i], "buffer"))
				err = parse_bytes(v, &c.buffer);
			else if (!strcmp(tok[i], "loss"))
				err = parse_prob(v, &c.loss_ppm);
			else if (!strcmp(tok[i], "dup"))
				err = parse_prob(v, &c.dup_ppm);
			else if (!strcmp(tok[i], "ecn"))
				err = parse_bytes(v, &c.ecn_bytes);
			else
				err = -EINVAL;
			v[-1] = '=';	/* the next path parses the same tokens */
		}
		if (err) {
			say(o, "error: bad setting in '%s' (keys: up down rate= delay= buffer= loss= dup= ecn=)\n",
			    tok[1]);
			return err;
		}
		if (c.buffer < FAB_MAX_FRAME) {
			say(o, "error: buffer must hold one frame (%u bytes)\n", FAB_MAX_FRAME);
			return -EINVAL;
		}
		sw->cfg[p] = c;
	}
	return 0;
}

static int cmd_pin(struct fab_switch *sw, char **tok, int n, struct out *o)
{
	__u32 port, path;

	if (n != 3 || parse_uint(tok[1], sw->nports - 1, &port)) {
		say(o, "error: pin PORT PATH|none (ports 0..%u)\n", sw->nports - 1);
		return -EINVAL;
	}
	if (!strcmp(tok[2], "none")) {
		sw->pin[port] = -1;
		return 0;
	}
	if (parse_uint(tok[2], sw->npaths - 1, &path)) {
		say(o, "error: no path '%s'\n", tok[2]);
		return -EINVAL;
	}
	sw->pin[port] = (int)path;
	return 0;
}

/* SRC DST udp|tcp|PROTO SPORT DPORT from tok[0]: 0, or -EINVAL. */
static int parse_flow(char **tok, int n, __u8 *s, __u8 *d, __u32 *alen, __u32 *proto, __u32 *sport,
		      __u32 *dport)
{
	*alen = 0;
	*proto = 256;
	if (n == 5) {
		if (inet_pton(AF_INET, tok[0], s) == 1 && inet_pton(AF_INET, tok[1], d) == 1)
			*alen = 4;
		else if (inet_pton(AF_INET6, tok[0], s) == 1 && inet_pton(AF_INET6, tok[1], d) == 1)
			*alen = 16;
		if (!strcmp(tok[2], "udp"))
			*proto = 17;
		else if (!strcmp(tok[2], "tcp"))
			*proto = 6;
		else if (parse_uint(tok[2], 255, proto))
			*proto = 256;
	}
	if (!*alen || *proto > 255 || parse_uint(tok[3], 65535, sport) || parse_uint(tok[4], 65535, dport))
		return -EINVAL;
	return 0;
}

/* rxq PORT SRC DST udp|tcp|PROTO SPORT DPORT: the host receive queue a flow lands on. */
static int cmd_rxq(struct fab_switch *sw, char **tok, int n, struct out *o)
{
	__u32 port, alen, proto, sport, dport;
	__u8 s[16], d[16];

	if (n != 7 || parse_uint(tok[1], sw->nports - 1, &port) ||
	    parse_flow(tok + 2, n - 2, s, d, &alen, &proto, &sport, &dport)) {
		say(o, "error: rxq PORT SRC DST udp|tcp|PROTO SPORT DPORT (ports 0..%u)\n", sw->nports - 1);
		return -EINVAL;
	}
	say(o, "queue %u\n", fab_queue_of(sw, port, s, d, alen, proto, (__u16)sport, (__u16)dport));
	return 0;
}

/* steer PORT UDPPORT QFIRST [NQ] | steer PORT UDPPORT none | steer PORT clear */
static int cmd_steer(struct fab_switch *sw, char **tok, int n, struct out *o)
{
	__u32 port, dport, first, nq = 1;
	int err;

	if (n < 3 || n > 5 || parse_uint(tok[1], sw->nports - 1, &port) || (n == 3 && strcmp(tok[2], "clear"))) {
		say(o, "error: steer PORT UDPPORT QFIRST [NQ] | steer PORT UDPPORT none | steer PORT clear "
		       "(ports 0..%u)\n", sw->nports - 1);
		return -EINVAL;
	}
	if (n == 3) {
		fab_steer_clear(sw, port);
		return 0;
	}
	if (parse_uint(tok[2], 65535, &dport)) {
		say(o, "error: bad UDP port '%s'\n", tok[2]);
		return -EINVAL;
	}
	if (n == 4 && !strcmp(tok[3], "none")) {
		if (fab_steer_del(sw, port, dport)) {
			say(o, "error: no rule for UDP port %u on port %u\n", dport, port);
			return -EINVAL;
		}
		return 0;
	}
	if (parse_uint(tok[3], 255, &first) || (n == 5 && parse_uint(tok[4], 255, &nq)) ||
	    (err = fab_steer_add(sw, port, dport, first, nq)) == -EINVAL) {
		say(o, "error: queues %s..+%s out of range (host links have queues 0..%u)\n", tok[3],
		    n == 5 ? tok[4] : "1", sw->nqueues - 1);
		return -EINVAL;
	}
	if (err) {
		say(o, "error: port %u has %u rules already\n", port, FAB_MAX_RULES);
		return -EINVAL;
	}
	return 0;
}

/* hash SRC DST udp|tcp|PROTO SPORT DPORT: the path a flow takes. */
static int cmd_hash(struct fab_switch *sw, char **tok, int n, struct out *o)
{
	__u32 alen, proto, sport, dport;
	__u8 s[16], d[16];

	if (n != 6 || parse_flow(tok + 1, n - 1, s, d, &alen, &proto, &sport, &dport)) {
		say(o, "error: hash SRC DST udp|tcp|PROTO SPORT DPORT\n");
		return -EINVAL;
	}
	say(o, "path %u\n", fab_hash(s, d, alen, (__u8)proto, (__u16)sport, (__u16)dport) % sw->npaths);
	return 0;
}

static void cmd_show(const struct fab_switch *sw, struct out *o)
{
	say(o, "%-4s %-4s %12s %9s %9s %9s %9s %9s %5s\n", "path", "up", "rate_bps", "delay_us",
	    "buffer", "loss_ppm", "dup_ppm", "ecn", "pin");
	for (__u32 p = 0; p < sw->npaths; p++) {
		const struct fab_path_cfg *c = &sw->cfg[p];
		char pins[64] = "-", *q = pins;

		for (__u32 e = 0; e < sw->nports; e++)
			if (sw->pin[e] == (int)p)
				q += snprintf(q, sizeof(pins) - (size_t)(q - pins), "%sh%u", q == pins ? "" : ",", e);
		say(o, "%-4u %-4s %12llu %9u %9u %9u %9u %9u %5s\n", p, c->up ? "up" : "down",
		    (unsigned long long)c->rate_bps, c->delay_us, c->buffer, c->loss_ppm, c->dup_ppm,
		    c->ecn_bytes, pins);
	}
	if (sw->nqueues == 1)
		return;
	say(o, "queues: %u per host link; RSS over all of them unless a steering rule matches\n", sw->nqueues);
	for (__u32 e = 0; e < sw->nports; e++) {
		if (!sw->nsteer[e])
			continue;
		say(o, "steer port %u:", e);
		for (__u32 r = 0; r < sw->nsteer[e]; r++) {
			const struct fab_steer *st = &sw->steer[e][r];

			if (st->n == 1)
				say(o, " udp %u->%u", st->dport, st->first);
			else
				say(o, " udp %u->%u-%u", st->dport, st->first, st->first + st->n - 1);
		}
		say(o, "\n");
	}
}

/* ,"tx_queue":[..],"rx_queue":[..] of one port, one entry per queue. */
static void json_queues(const struct fab_switch *sw, __u32 e, struct out *o)
{
	for (int dir = 0; dir < 2; dir++) {
		const __u64 *c = dir ? sw->port[e].rx_queue : sw->port[e].tx_queue;

		say(o, ",\"%s\":[", dir ? "rx_queue" : "tx_queue");
		for (__u32 q = 0; q < sw->nqueues; q++)
			say(o, "%s%llu", q ? "," : "", (unsigned long long)c[q]);
		say(o, "]");
	}
}

static void cmd_stats(const struct fab_switch *sw, bool json, struct out *o)
{
	if (json) {
		say(o, "{\"paths\":[");
		for (__u32 p = 0; p < sw->npaths; p++) {
			say(o, "%s{\"path\":%u,\"up\":%s", p ? "," : "", p, sw->cfg[p].up ? "true" : "false");
#define X(nm, d) say(o, ",\"" #nm "\":%llu", (unsigned long long)sw->st[p].nm);
			FAB_PATH_STATS(X)
#undef X
			say(o, "}");
		}
		say(o, "],\"ports\":[");
		for (__u32 e = 0; e < sw->nports; e++) {
			say(o, "%s{\"port\":%u,\"rx_pkts\":%llu,\"flooded\":%llu,\"tx_pkts\":%llu,\"tx_drop\":%llu,"
			    "\"tx_busy\":%llu", e ? "," : "", e, (unsigned long long)sw->port[e].rx_pkts,
			    (unsigned long long)sw->port[e].flooded, (unsigned long long)sw->port[e].tx_pkts,
			    (unsigned long long)sw->port[e].tx_drop, (unsigned long long)sw->port[e].tx_busy);
			json_queues(sw, e, o);
			say(o, "}");
		}
		say(o, "],\"queues\":%u,\"nomem\":%llu}\n", sw->nqueues, (unsigned long long)sw->nomem);
		return;
	}
	say(o, "%-4s %-4s", "path", "up");
#define X(nm, d) say(o, " %12s", #nm);
	FAB_PATH_STATS(X)
#undef X
	say(o, "\n");
	for (__u32 p = 0; p < sw->npaths; p++) {
		say(o, "%-4u %-4s", p, sw->cfg[p].up ? "up" : "down");
#define X(nm, d) say(o, " %12llu", (unsigned long long)sw->st[p].nm);
		FAB_PATH_STATS(X)
#undef X
		say(o, "\n");
	}
	say(o, "%-4s %12s %12s %12s %12s %12s\n", "port", "rx_pkts", "flooded", "tx_pkts", "tx_drop", "tx_busy");
	for (__u32 e = 0; e < sw->nports; e++)
		say(o, "%-4u %12llu %12llu %12llu %12llu %12llu\n", e, (unsigned long long)sw->port[e].rx_pkts,
		    (unsigned long long)sw->port[e].flooded, (unsigned long long)sw->port[e].tx_pkts,
		    (unsigned long long)sw->port[e].tx_drop, (unsigned long long)sw->port[e].tx_busy);
	if (sw->nqueues > 1) {
		/* tx: frames sent to the host per its receive queue; rx: frames from it per its transmit queue. */
		say(o, "%-4s %-3s", "port", "dir");
		for (__u32 q = 0; q < sw->nqueues; q++) {
			char h[16];

			snprintf(h, sizeof(h), "q%u", q);
			say(o, " %12s", h);
		}
		say(o, "\n");
		for (__u32 e = 0; e < sw->nports; e++) {
			for (int dir = 0; dir < 2; dir++) {
				const __u64 *c = dir ? sw->port[e].rx_queue : sw->port[e].tx_queue;

				say(o, "%-4u %-3s", e, dir ? "rx" : "tx");
				for (__u32 q = 0; q < sw->nqueues; q++)
					say(o, " %12llu", (unsigned long long)c[q]);
				say(o, "\n");
			}
		}
	}
	if (sw->nomem)
		say(o, "dropped for want of queue slots: %llu\n", (unsigned long long)sw->nomem);
}

int fab_command(struct fab_switch *sw, const char *line, __u64 now, char *out, size_t outlen)
{
	struct out o = { out, outlen };
	char copy[512], *tok[16], *save = NULL;
	int n = 0, err = 0;

	if (outlen)
		out[0] = '\0';
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *t = strtok_r(copy, " \t\r\n", &save); t && n < 16; t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (!n) {
		say(&o, "error: empty command\n");
		return -EINVAL;
	}
	if (!strcmp(tok[0], "path"))
		err = cmd_path(sw, tok, n, &o);
	else if (!strcmp(tok[0], "pin"))
		err = cmd_pin(sw, tok, n, &o);
	else if (!strcmp(tok[0], "steer"))
		err = cmd_steer(sw, tok, n, &o);
	else if (!strcmp(tok[0], "hash"))
		return cmd_hash(sw, tok, n, &o);
	else if (!strcmp(tok[0], "rxq"))
		return cmd_rxq(sw, tok, n, &o);
	else if (!strcmp(tok[0], "show"))
		cmd_show(sw, &o);
	else if (!strcmp(tok[0], "stats"))
		cmd_stats(sw, n > 1 && !strcmp(tok[1], "json"), &o);
	else if (!strcmp(tok[0], "reset")) {
		memset(sw->st, 0, sizeof(sw->st));
		memset(sw->port, 0, sizeof(sw->port));
		sw->nomem = 0;
	} else if (!strcmp(tok[0], "stop")) {
		say(&o, "ok stopping\n");
		return 1;
	} else {
		say(&o, "error: unknown command '%s' (path, pin, steer, hash, rxq, show, stats, reset, stop)\n",
		    tok[0]);
		return -EINVAL;
	}
	if (!err && (!strcmp(tok[0], "path") || !strcmp(tok[0], "pin") || !strcmp(tok[0], "steer") ||
		     !strcmp(tok[0], "reset")))
		say(&o, "ok t_ns=%llu\n", (unsigned long long)now);
	return err;
}
