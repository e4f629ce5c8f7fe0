// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-sim: run one scenario on the simulated fabric and report it
 * (docs/scale.md). Exit 0 if the workload completed (and, with --verify,
 * every byte arrived where it belongs), 1 if not, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <mroce/proto.h>	/* MROCE_VERSION, the wire protocol's */

#include "sim.h"

#ifndef MROCE_TOOL_VERSION	/* the Makefile's VERSION */
#define MROCE_TOOL_VERSION MROCE_VERSION_STRING
#endif

static void usage(FILE *f)
{
	fprintf(f,
"usage: mroce-sim [options]\n"
"The mroce transport engine on every host of a simulated two-tier Clos, in virtual time.\n"
"Fabric:\n"
"  --hosts N            hosts (default 32)\n"
"  --hosts-per-leaf N   hosts under each leaf (default 8)\n"
"  --spines N           spines per plane (default 4)\n"
"  --planes N           planes: a NIC, a leaf and spines of each per host (1..8, default 1)\n"
"  --rate G             host links, Gbit/s (default 400)\n"
"  --spine-rate G       leaf-spine links, Gbit/s (default: from --oversub)\n"
"  --oversub X          leaf down : up capacity (default 1)\n"
"  --prop-ns N          propagation delay of every link, ns (0..1000000, default 500)\n"
"  --buffer B           a switch port's buffer, tail drop beyond (default 1M)\n"
"  --ecn B              mark CE above this queue depth, 0: never (default 128K)\n"
"  --nic-ring B         a host NIC's transmit ring (default 64K)\n"
"  --detect-us N        a failed link leaves ECMP groups after (default 1000)\n"
"  --loss P             end-to-end loss of every frame, 0.01 or 1%% (default 0)\n"
"  --link-loss P        loss on every switch link (default 0)\n"
"  --fail WHAT@T[:T2]   WHAT down at T us from the start (back up at T2): spine:S[/P],\n"
"                       link:L.S[/P] (leaf L to spine S), plane:P\n"
"  --flap WHAT@T:PER:N  WHAT down at T, up PER/2 later, N times every PER us\n"
"Transport:\n"
"  --mode M             sprayed (mroce), ecmp (one static path), gbn (static, go-back-N)\n"
"  --paths N            entropy values a sprayed connection uses (default 16)\n"
"  --cc C               default (the library's: ECN), none, ecn, delay, both\n"
"  --no-grants          receivers grant senders no rates (default: they do)\n"
"  --mtu N              (default 4096)\n"
"  --rto-low-us N --rto-high-us N   the QPs' timeouts (default: the library's, 200 and 1000)\n"
"Workload:\n"
"  --workload W         collectives, run by libmroce-coll's own algorithms on every\n"
"                       host: alltoall, allreduce, reduce-scatter, allgather,\n"
"                       broadcast; flows: permutation, incast\n"
"  --size B             bytes per host (all-to-all, reduce-scatter: its whole send\n"
"                       buffer; all-gather: its whole receive buffer; default 1M)\n"
"  --algo NAME          the collective's algorithm (default: the library's table)\n"
"  --chunk B            collectives' pipelining unit, chunk_bytes (default 256K)\n"
"  --window N           all-to-all peers in flight per host (default 0: the\n"
"                       library's, MROCE_COLL_A2A_WINDOW's default)\n"
"  --conns N            connections a host keeps open; idle ones beyond close,\n"
"                       least recently used first (default 64)\n"
"  --keep-connections   collectives: never close a connection\n"
"  --iterations N       collectives: N of them, one after another at each host; the\n"
"                       completion time is the last one's, from the end of the one\n"
"                       before (default 1)\n"
"  --incast N           incast senders into host 0 (default 8)\n"
"  --background N       endless flows between random pairs besides (default 0)\n"
"Run and output:\n"
"  --seed N             (default 1); a seed replays exactly\n"
"  --limit-us N         virtual time allowed (default 10 s)\n"
"  --verify             real memory per host, every byte checked at the end\n"
"  --json FILE          results; --dat FILE a time series for gnuplot\n"
"  --flows FILE         one line per flow: its ends, start, completion time, resends\n"
"  --trace FILE --trace-hosts A,B   every frame between hosts A and B as it leaves,\n"
"                       arrives or is dropped, with its transport header's fields\n"
"  --sample-us N        its period (default 10)\n"
"  --quiet              no text report\n"
"  -h, --help           this text;  -V, --version  the version\n");
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': x <<= 10; end++; break;
	case 'm': case 'M': x <<= 20; end++; break;
	case 'g': case 'G': x <<= 30; end++; break;
	}
	if (*end)
		return -EINVAL;
	*v = x;
	return 0;
}

static int parse_u32(const char *s, __u32 *v)
{
	__u64 x;

	if (parse_u64(s, &x) || x > UINT_MAX)
		return -EINVAL;
	*v = (__u32)x;
	return 0;
}

/* "A,B": two host numbers */
static int parse_pair(const char *s, __u32 v[2])
{
	const char *comma = strchr(s, ',');
	char a[24];

	if (!comma || (size_t)(comma - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(comma - s));
	a[comma - s] = 0;
	return parse_u32(a, &v[0]) ?: parse_u32(comma + 1, &v[1]);
}

static int parse_frac(const char *s, double *v)
{
	char *end;
	double x = strtod(s, &end);

	if (end == s)
		return -EINVAL;
	if (*end == '%') {
		x /= 100;
		end++;
	}
	if (*end || !(x >= 0 && x < 1))	/* NaN too */
		return -EINVAL;
	*v = x;
	return 0;
}

/* spine:S[/P], link:L.S[/P] or plane:P, then @T[:T2] or (flap) @T:PER:N */
static int parse_fault(const char *arg, bool flap, struct sim_cfg *c)
{
	struct sim_fault *f;
	unsigned int a = 0, b = 0, p = 0;
	unsigned long long t = 0, t2 = 0, per = 0, n = 0;
	const char *at = strchr(arg, '@');
	int k;

	if (c->nfaults == SIM_FAULTS_MAX || !at)
		return -EINVAL;
	f = &c->faults[c->nfaults];
	memset(f, 0, sizeof(*f));
	if (sscanf(arg, "spine:%u%n", &a, &k) == 1 && (arg[k] == '@' ||
	    sscanf(arg + k, "/%u", &p) == 1)) {
		f->kind = SIM_F_SPINE;
		f->spine = a;
	} else if (sscanf(arg, "link:%u.%u%n", &a, &b, &k) == 2 && (arg[k] == '@' ||
		   sscanf(arg + k, "/%u", &p) == 1)) {
		f->kind = SIM_F_LINK;
		f->leaf = a;
		f->spine = b;
	} else if (sscanf(arg, "plane:%u", &p) == 1) {
		f->kind = SIM_F_PLANE;
	} else {
		return -EINVAL;
	}
	f->plane = p;
	f->up_ps = SIM_NEVER;
	if (flap) {
		if (sscanf(at, "@%llu:%llu:%llu%n", &t, &per, &n, &k) != 3 || at[k] || !per || !n)
			return -EINVAL;
		f->period_ps = per * PS_PER_US;
		f->count = (__u32)n;
	} else {
		int m = sscanf(at, "@%llu:%llu%n", &t, &t2, &k);

		if (m == 1 && sscanf(at, "@%llu%n", &t, &k) == 1 && !at[k])
			;
		else if (m != 2 || at[k] || t2 <= t)
			return -EINVAL;
		if (m == 2)
			f->up_ps = t2 * PS_PER_US;
	}
	f->at_ps = t * PS_PER_US;
	c->nfaults++;
	return 0;
}

enum {
	O_HPL = 256, O_SPINES, O_PLANES, O_RATE, O_SRATE, O_OVERSUB, O_PROP, O_BUF, O_ECN, O_NIC,
	O_DETECT, O_LOSS, O_LLOSS, O_FAIL, O_FLAP, O_MODE, O_PATHS, O_CC, O_MTU, O_WORK, O_SIZE,
	O_CHUNK, O_ALGO, O_WINDOW, O_CONNS, O_KEEP, O_ITER, O_NOGRANT, O_INCAST, O_BG, O_SEED, O_LIMIT, O_VERIFY, O_JSON, O_DAT, O_FLOWS, O_SAMPLE,
	O_QUIET, O_HOSTS, O_RTOL, O_RTOH, O_TRACE, O_TRACE_HOSTS,
};

static const struct option opts[] = {
	{ "hosts", 1, 0, O_HOSTS }, { "hosts-per-leaf", 1, 0, O_HPL }, { "spines", 1, 0, O_SPINES },
	{ "planes", 1, 0, O_PLANES }, { "rate", 1, 0, O_RATE }, { "spine-rate", 1, 0, O_SRATE },
	{ "oversub", 1, 0, O_OVERSUB }, { "prop-ns", 1, 0, O_PROP }, { "buffer", 1, 0, O_BUF },
	{ "ecn", 1, 0, O_ECN }, { "nic-ring", 1, 0, O_NIC }, { "detect-us", 1, 0, O_DETECT },
	{ "loss", 1, 0, O_LOSS }, { "link-loss", 1, 0, O_LLOSS }, { "fail", 1, 0, O_FAIL },
	{ "flap", 1, 0, O_FLAP }, { "mode", 1, 0, O_MODE }, { "paths", 1, 0, O_PATHS },
	{ "cc", 1, 0, O_CC }, { "mtu", 1, 0, O_MTU }, { "workload", 1, 0, O_WORK },
	{ "size", 1, 0, O_SIZE }, { "chunk", 1, 0, O_CHUNK }, { "window", 1, 0, O_WINDOW },
	{ "algo", 1, 0, O_ALGO }, { "conns", 1, 0, O_CONNS },
	{ "keep-connections", 0, 0, O_KEEP }, { "iterations", 1, 0, O_ITER },
	{ "no-grants", 0, 0, O_NOGRANT },
	{ "incast", 1, 0, O_INCAST }, { "background", 1, 0, O_BG }, { "seed", 1, 0, O_SEED },
	{ "limit-us", 1, 0, O_LIMIT }, { "verify", 0, 0, O_VERIFY }, { "json", 1, 0, O_JSON },
	{ "dat", 1, 0, O_DAT }, { "flows", 1, 0, O_FLOWS }, { "sample-us", 1, 0, O_SAMPLE }, { "quiet", 0, 0, O_QUIET },
	{ "rto-low-us", 1, 0, O_RTOL }, { "rto-high-us", 1, 0, O_RTOH },
	{ "trace", 1, 0, O_TRACE }, { "trace-hosts", 1, 0, O_TRACE_HOSTS },
	{ "help", 0, 0, 'h' }, { "version", 0, 0, 'V' }, {},
};

static int parse(int argc, char **argv, struct sim_cfg *c)
{
	int o, err;

	sim_cfg_defaults(c);
	while ((o = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		const char *a = optarg;
		char *end;

		err = 0;
		switch (o) {
		case O_HOSTS: err = parse_u32(a, &c->hosts); break;
		case O_HPL: err = parse_u32(a, &c->hosts_per_leaf); break;
		case O_SPINES: err = parse_u32(a, &c->spines); break;
		case O_PLANES: err = parse_u32(a, &c->planes); break;
		case O_RATE: err = parse_u32(a, &c->host_gbps); break;
		case O_SRATE: err = parse_u32(a, &c->spine_gbps); err = err ? err : c->spine_gbps ? 0 : -EINVAL; break;
		case O_OVERSUB:
			c->oversub = strtod(a, &end);
			err = end == a || *end ? -EINVAL : 0;
			break;
		case O_PROP: err = parse_u32(a, &c->prop_ns); break;
		case O_BUF: err = parse_u32(a, &c->buf_bytes); break;
		case O_ECN: err = parse_u32(a, &c->ecn_bytes); break;
		case O_NIC: err = parse_u32(a, &c->nic_bytes); break;
		case O_DETECT: err = parse_u32(a, &c->detect_us); break;
		case O_LOSS: err = parse_frac(a, &c->loss); break;
		case O_LLOSS: err = parse_frac(a, &c->link_loss); break;
		case O_FAIL: err = parse_fault(a, false, c); break;
		case O_FLAP: err = parse_fault(a, true, c); break;
		case O_MODE:
			if (!strcmp(a, "sprayed"))
				c->mode = SIM_SPRAY;
			else if (!strcmp(a, "ecmp"))
				c->mode = SIM_ECMP;
			else if (!strcmp(a, "gbn"))
				c->mode = SIM_GBN;
			else
				err = -EINVAL;
			break;
		case O_PATHS: err = parse_u32(a, &c->paths); break;
		case O_CC:
			c->cc_ecn = !strcmp(a, "ecn") || !strcmp(a, "both");
			c->cc_delay = !strcmp(a, "delay") || !strcmp(a, "both");
			c->no_cc = !strcmp(a, "none");
			err = c->cc_ecn || c->cc_delay || c->no_cc || !strcmp(a, "default") ? 0 : -EINVAL;
			break;
		case O_MTU: err = parse_u32(a, &c->mtu); break;
		case O_RTOL: err = parse_u32(a, &c->rto_low_us); break;
		case O_RTOH: err = parse_u32(a, &c->rto_high_us); break;
		case O_WORK:
			err = -EINVAL;
			for (int w = SIM_ALLTOALL; w <= SIM_INCAST; w++)
				if (!strcmp(a, sim_work_name(w))) {
					c->work = w;
					err = 0;
				}
			break;
		case O_SIZE: err = parse_u64(a, &c->size); break;
		case O_CHUNK: err = parse_u32(a, &c->chunk); break;
		case O_WINDOW: err = parse_u32(a, &c->window); break;
		case O_CONNS: err = parse_u32(a, &c->conns); break;
		case O_ALGO: c->algo = a; break;
		case O_KEEP: c->keep_conns = true; break;
		case O_NOGRANT: c->no_grants = true; break;
		case O_ITER: err = parse_u32(a, &c->iterations); break;
		case O_INCAST: err = parse_u32(a, &c->incast); break;
		case O_BG: err = parse_u32(a, &c->background); break;
		case O_SEED: err = parse_u64(a, &c->seed); break;
		case O_LIMIT: err = parse_u64(a, &c->limit_us); break;
		case O_VERIFY: c->verify = true; break;
		case O_JSON: c->json = a; break;
		case O_DAT: c->dat = a; break;
		case O_FLOWS: c->flows_out = a; break;
		case O_TRACE: c->trace_out = a; break;
		case O_TRACE_HOSTS: err = parse_pair(a, c->trace_host); c->trace_hosts_set = true; break;
		case O_SAMPLE: err = parse_u32(a, &c->sample_us); break;
		case O_QUIET: c->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V':
			printf("mroce-sim %s (wire protocol version %d)\n", MROCE_TOOL_VERSION, MROCE_VERSION);
			exit(0);
		default: return -EINVAL;
		}
		if (err) {
			const struct option *op = opts;

			while (op->name && op->val != o)
				op++;
			fprintf(stderr, "mroce-sim: --%s: '%s' is not valid\n", op->name, a);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mroce-sim: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Three descriptors per device (its wake-up eventfd, timerfd, epoll): raise the soft limit. */
static void raise_nofile(__u32 hosts)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= 4 * hosts + 64)
		return;
	r.rlim_cur = r.rlim_max < 4 * hosts + 64 ? r.rlim_max : 4 * hosts + 64;
	setrlimit(RLIMIT_NOFILE, &r);
}

/*
 * glibc backs its heap with transparent huge pages only if told so when the
 * process starts (the glibc.malloc.hugetlb tunable). A run at 256 hosts
 * touches a gigabyte of fresh QP state, and faulting it in 4 KiB at a time
 * was a tenth of the run: run again once with the tunable set, unless the
 * caller set it (hugetlb=0 keeps small pages). Outcomes do not change.
 */
static void want_huge_pages(char **argv)
{
	const char *t = getenv("GLIBC_TUNABLES");
	char v[512];

	if ((t && strstr(t, "glibc.malloc.hugetlb")) ||
	    snprintf(v, sizeof(v), "%s%sglibc.malloc.hugetlb=1", t ? t : "", t ? ":" : "") >=
		    (int)sizeof(v) ||
	    setenv("GLIBC_TUNABLES", v, 1))
		return;
	execv("/proc/self/exe", argv);	/* returns only if it failed: small pages then */
}

int main(int argc, char **argv)
{
	static struct sim s;
	struct sim_result r;
	char why[160];
	double t0;
	int err, rc;

	if (parse(argc, argv, &s.cfg)) {
		usage(stderr);
		return 2;
	}
	if (sim_cfg_check(&s.cfg, why, sizeof(why))) {
		fprintf(stderr, "mroce-sim: %s\n", why);
		return 2;
	}
	want_huge_pages(argv);
	raise_nofile(s.cfg.hosts);
	/* frames and QPs come and go by the million: keep freed memory instead of faulting it in again */
	mallopt(M_MMAP_THRESHOLD, 16 << 20);	/* glibc caps it at 32 MiB */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	t0 = mono_s();
	sim_run(&s);
	sim_result(&s, mono_s() - t0, &r);
	if (!s.cfg.quiet)
		sim_print(&s, &r, stdout);
	else if (s.err)
		fprintf(stderr, "mroce-sim: %s: %s\n", s.errmsg,
			mroce_strerror(s.err, why, sizeof(why)) ? "error" : why);	/* as the report */
	rc = s.err || s.st.verify_bad ? 1 : 0;
	if (s.cfg.json && (err = sim_write_json(&s, &r, s.cfg.json))) {
		fprintf(stderr, "mroce-sim: %s: %s\n", s.cfg.json, strerror(-err));
		rc = 1;
	}
	if (s.cfg.dat && (err = sim_write_dat(&s, s.cfg.dat))) {
		fprintf(stderr, "mroce-sim: %s: %s\n", s.cfg.dat, strerror(-err));
		rc = 1;
	}
	if (s.cfg.flows_out && (err = sim_write_flows(&s, s.cfg.flows_out))) {
		fprintf(stderr, "mroce-sim: %s: %s\n", s.cfg.flows_out, strerror(-err));
		rc = 1;
	}
	if ((err = sim_trace_close(&s))) {
		fprintf(stderr, "mroce-sim: %s: %s\n", s.cfg.trace_out, strerror(-err));
		rc = 1;
	}
	sim_free(&s);
	return rc;
}
