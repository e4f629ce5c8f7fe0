/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mroce-sim: the unmodified transport engine (lib/, the objects libmroce is
 * built from) on every host of a packet-level model of a two-tier Clos
 * fabric, in virtual time. docs/scale.md describes the model and its
 * studies. Internal to sim/.
 *
 * Time is in picoseconds (a 4 KiB frame takes 82 ns at 400 Gbit/s); the
 * engines see microseconds, as from the clock of an AF_XDP port.
 */
#ifndef MROCE_SIM_H
#define MROCE_SIM_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "../lib/engine.h"

#define PS_PER_US	1000000ull
#define SIM_NEVER	(~0ull)
#define SIM_FAULTS_MAX	32

/* ---- configuration (main.c parses it; every default lives in cfg.c) */

enum sim_mode {
	SIM_SPRAY,	/* mroce: paths sprayed over many entropy values */
	SIM_ECMP,	/* one static path per connection: ECMP as RoCEv2 gets it */
	SIM_GBN,	/* one static path and go-back-N: RoCEv2-like */
};

/*
 * The collectives (SIM_ALLTOALL .. SIM_BROADCAST) run libmroce-coll's own
 * algorithms on every host (work.c); the rest are flows of the simulator's.
 */
enum sim_workload {
	SIM_ALLTOALL,		/* all-to-all: size is a host's whole send buffer */
	SIM_ALLREDUCE,		/* all-reduce (sum) of size bytes */
	SIM_REDUCE_SCATTER,	/* size in, size / hosts out */
	SIM_ALLGATHER,		/* size / hosts in, size out */
	SIM_BROADCAST,		/* size bytes from host 0 */
	SIM_PERMUTATION,	/* every host to one other, a random derangement */
	SIM_INCAST,		/* incast senders into host 0 */
};

static inline bool sim_work_coll(enum sim_workload w)
{
	return w <= SIM_BROADCAST;
}

enum sim_fault_kind {
	SIM_F_SPINE,	/* a spine switch (all its links) */
	SIM_F_LINK,	/* one leaf-spine link, both directions */
	SIM_F_PLANE,	/* every link of one plane, the hosts' NICs included */
};

struct sim_fault {
	enum sim_fault_kind kind;
	__u32	plane, leaf, spine;
	__u64	at_ps;		/* goes down */
	__u64	up_ps;		/* comes back (SIM_NEVER: stays down) */
	__u64	period_ps;	/* a flap: down and up again every period ... */
	__u32	count;		/* ... this many times */
};

struct sim_cfg {
	__u32	hosts, hosts_per_leaf, spines, planes;
	__u32	host_gbps;	/* host NIC links (per plane) */
	__u32	spine_gbps;	/* leaf-spine links (0: from oversub) */
	double	oversub;	/* leaf downlink : uplink capacity */
	__u32	prop_ns;	/* propagation delay of every link */
	__u32	buf_bytes;	/* a switch port's buffer (tail drop beyond) */
	__u32	ecn_bytes;	/* CE above this queue depth (0: no marking) */
	__u32	nic_bytes;	/* a host NIC's transmit ring, in bytes */
	__u32	detect_us;	/* a failed link leaves ECMP groups this long after */
	double	loss;		/* end-to-end loss: every frame, at its first hop */
	double	link_loss;	/* loss on every switch link */
	__u32	mtu;
	__u64	seed;
	enum sim_mode mode;
	__u32	paths;		/* sprayed: entropy values per connection */
	bool	cc_ecn, cc_delay;	/* the QPs' congestion control (neither: the library's default) */
	bool	no_cc;		/* ... or none (mroce_qp_attr.no_cc) */
	bool	no_grants;	/* receivers grant no rates (mroce_dev_opts.no_rate_grants) */
	__u32	rto_low_us, rto_high_us;	/* the QPs' timeouts (0: the library's defaults) */
	enum sim_workload work;
	__u64	size;		/* bytes per host (all-to-all: its whole send buffer) */
	__u32	chunk;		/* pipelining unit of the collectives */
	const char *algo;	/* the collective's algorithm by name (NULL: the library's table) */
	__u32	window;		/* all-to-all: peers in flight per host (0: the library's choice) */
	__u32	conns;		/* collectives: connections a host keeps open (idle ones close beyond) */
	bool	keep_conns;	/* collectives: connections never closed */
	__u32	iterations;	/* collectives: how many, one after another at each host */
	__u32	incast;		/* incast senders */
	__u32	background;	/* extra endless flows between random host pairs */
	__u64	limit_us;	/* give up after this much virtual time */
	bool	verify;		/* real buffers per host and their bytes checked */
	__u32	sample_us;	/* time series period */
	const char *json, *dat;	/* output files (NULL: none) */
	const char *flows_out;	/* one line per flow (NULL: none) */
	const char *trace_out;	/* every frame between trace_host[0] and [1] (NULL: none) */
	__u32	trace_host[2];
	bool	trace_hosts_set;
	bool	quiet;
	struct sim_fault faults[SIM_FAULTS_MAX];
	__u32	nfaults;
};

void sim_cfg_defaults(struct sim_cfg *c);
/* 0, or -EINVAL with why in err. */
int sim_cfg_check(struct sim_cfg *c, char *err, size_t errlen);
const char *sim_mode_name(enum sim_mode m);
const char *sim_work_name(enum sim_workload w);

/* ---- events (evq.c) */

enum sim_ev {
	EV_FRAME,	/* a frame reaches the far end of the link it was queued on */
	EV_HOST,	/* a host's engine runs */
	EV_FAULT,	/* a failure starts or ends */
	EV_SAMPLE,	/* the time series takes a sample */
};

struct sim_event {
	__u64	t;
	__u64	seq;		/* ties keep the order they were made in: deterministic */
	void	*p;
	__u32	type, arg;
};

struct sim_evnode;

/* A timing wheel, a heap beyond it (evq.c says how they share the events). */
struct sim_evq {
	struct sim_event *cur;		/* the current bucket, sorted: [cur_i, cur_n) */
	size_t	cur_i, cur_n, cur_cap;
	__u64	cursor;			/* its bucket number */
	__u32	*head, *tail;		/* the wheel's buckets: lists of nodes */
	__u64	*bits;			/* buckets with events */
	struct sim_evnode *nodes;
	size_t	nodes_cap;
	__u32	nodes_n, free_node;
	size_t	wheel_n;
	struct sim_event *h;		/* the heap */
	size_t	n, cap;
	__u64	seq;
	size_t	count[4];		/* events queued, by type */
	int	err;			/* a pop found no memory: -ENOMEM */
};

/* 0 or -ENOMEM. */
int sim_evq_push(struct sim_evq *q, __u64 t, __u32 type, void *p, __u32 arg);
/* The earliest event (ties: the first pushed); false if none, or q->err set. */
bool sim_evq_pop(struct sim_evq *q, struct sim_event *e);
size_t sim_evq_count(const struct sim_evq *q, __u32 type);
void sim_evq_free(struct sim_evq *q);

/* ---- the fabric (fabric.c) */

struct sim_link {
	__u32	ps_per_byte;
	__u32	prop_ps;
	__u32	buf, ecn;
	__u32	loss_ppm;
	bool	down;		/* frames queued on it vanish */
	bool	routed;		/* in ECMP groups (follows down after detect_us) */
	__u64	free_ps;	/* when what is queued has been sent */
	__u64	tx_bytes, tx_frames, drops_full, marks;	/* drops_full: its buffer full */
	__u32	peak;		/* deepest queue seen, bytes */
	__u32	peak_sample;	/* ... since the last sample */
};

enum sim_hop { HOP_LEAF_UP, HOP_SPINE, HOP_LEAF_DOWN, HOP_HOST };

#define SIM_NO_SPINE	0xffff

struct sim_frame {
	__u32	len;
	__u16	src, dst;	/* hosts */
	__u8	plane, hop;	/* where it arrives next (enum sim_hop) */
	__u8	pool;		/* the free list it returns to (frame.c) */
	__u8	pad;
	__u16	sport;		/* entropy, for ECMP */
	__u16	spine;		/* the spine ECMP chose (SIM_NO_SPINE: none yet) */
	__u64	sent_ps;	/* left its host */
	__u8	data[];
};

struct sim_plane {
	struct sim_link *up_h;	/* [hosts] host -> leaf */
	struct sim_link *dn_h;	/* [hosts] leaf -> host */
	struct sim_link *up_s;	/* [leaves * spines] leaf -> spine */
	struct sim_link *dn_s;	/* [spines * leaves] spine -> leaf */
	/*
	 * The spines that route from one leaf to another ([src * leaves + dst]):
	 * worked out when a frame first needs them after the routes changed
	 * (route_gen), not per frame.
	 */
	__u8		*ecmp_ok;	/* [leaves * leaves * spines] */
	__u16		*ecmp_n;	/* [leaves * leaves] */
	__u32		*ecmp_gen;	/* [leaves * leaves] the route_gen they were worked out at */
	__u32		route_gen;	/* counts changes to the links' routed (from 1) */
};

struct sim;

/*
 * ---- frames (frame.c): the len is set, the header otherwise zero; NULL if out of memory.
 * A frame carries sim_frame_kept(s, len) bytes of its len: all of them with
 * --verify; otherwise, when nobody reads a payload, the first SIM_FRAME_KEPT
 * (every header, and the whole of an ACK or a short packet). Every link
 * still takes len bytes' time; host.c hands the engine len bytes.
 */
#define SIM_FRAME_KEPT	512
struct sim_frame *sim_frame_new(struct sim *s, __u32 len);
__u32 sim_frame_kept(const struct sim *s, __u32 len);
void sim_frame_free(struct sim *s, struct sim_frame *f);
void sim_frames_release(struct sim *s);

int sim_fabric_init(struct sim *s);
void sim_fabric_free(struct sim *s);
/* A frame leaves host src on plane: queue it on the host's uplink. */
void sim_fabric_send(struct sim *s, struct sim_frame *f);
/* A frame reached the end of a link (EV_FRAME). */
void sim_fabric_arrive(struct sim *s, struct sim_frame *f);
/* Apply a fault event (EV_FAULT). */
void sim_fabric_fault(struct sim *s, __u32 arg);
void sim_fabric_schedule_faults(struct sim *s);
__u32 sim_ip(__u32 plane, __u32 host);

/* ---- hosts (host.c): one libmroce device each, on a simulated port */

struct sim_flow;

struct sim_host {
	struct sim	*s;
	__u32		id;
	struct mroce_dev *dev;
	struct mroce_cq	*cq;
	struct sim_flow	*by_qpn[MROCE_MAX_QPS];	/* the flow a QP serves */
	/* frames delivered, not yet taken by the engine */
	struct sim_frame **rxq;
	size_t		rx_head, rx_n, rx_cap;
	__u8		txbuf[MROCE_FRAME_MAX];
	__u8		rxbuf[MROCE_FRAME_MAX];	/* a frame whose payload was not kept, whole */
	__u32		tx_plane;
	__u64		wake_ps;	/* the EV_HOST pending (SIM_NEVER: none) */
	__u64		ran_us;		/* the engine tick it last ran in */
	bool		ran;
	bool		tx_blocked;	/* the NIC ring was full */
	__u8		*buf;		/* its memory (shared by all hosts unless verify) */
	struct mroce_mr	*mr;
	__u64		rx_bytes;	/* frame bytes delivered to it */
	__u64		rx_sampled;	/* ... at the last sample */
	void		*work;		/* the workload's per-host state */
};

/* The byte at offset i of host h's data, with --verify (each host's differs). */
static inline __u8 sim_pattern(__u32 h, __u64 i)
{
	return (__u8)(h * 131 + i * 7 + (i >> 12));
}

/*
 * A host's memory: [0, size) its data, [size, 2 size) what peers write to
 * it, then one chunk the background flows write into.
 */
static inline __u64 sim_bg_off(const struct sim_cfg *c)
{
	return 2 * c->size;
}

static inline __u64 sim_mem_len(const struct sim_cfg *c)
{
	return sim_bg_off(c) + c->chunk;
}

int sim_hosts_init(struct sim *s);
void sim_hosts_free(struct sim *s);
/* A frame for host h arrived. */
void sim_host_deliver(struct sim *s, struct sim_frame *f);
/* Run host h's engine and workload until idle, then schedule its next wake. */
void sim_host_run(struct sim_host *h);
void sim_host_wake(struct sim_host *h, __u64 t);

/* ---- connections and flows (flow.c) */

/* One direction of data from src to dst, over a QP pair of its own. */
struct sim_flow {
	__u32		id;
	__u32		src, dst;
	struct mroce_qp	*qs, *qd;	/* sender's and receiver's QP */
	__u64		bytes;		/* payload the workload moved over it */
	__u64		start_ps, done_ps;
	__u32		sends_out, recvs_posted;
	__u64		retx, tx_pkts, rtos, probes, retired, ce, psack_lost, suspected, plane_downs;
	struct sim_flow	*base;		/* its counters at the last sim_flow_account (NULL: none) */
	bool		background;
	bool		conn;		/* a collective's connection: no flow of the report's */
	void		*ctx;		/* the workload's */
};

/* Create and connect a QP pair for src -> dst (both ways usable). */
int sim_flow_open(struct sim *s, struct sim_flow *f, __u32 src, __u32 dst);
/* Gather its counters, then destroy both QPs. */
void sim_flow_close(struct sim *s, struct sim_flow *f);
void sim_flow_stats(struct sim_flow *f);
int sim_flow_write(struct sim *s, struct sim_flow *f, bool to_dst, __u64 loff, __u64 roff,
		   __u32 len, __u32 imm, __u64 wr_id);
int sim_flow_post_recv(struct sim *s, struct sim_flow *f, bool at_dst, __u64 wr_id);
/* A collective's connection: QPs on src and dst completing on those CQs; not in s->flows. */
int sim_conn_open(struct sim *s, struct sim_flow *f, __u32 src, __u32 dst, struct mroce_cq *cq_src,
		  struct mroce_cq *cq_dst);
/* Add its counters since the last account to the run's (closing accounts too). */
void sim_flow_account(struct sim *s, struct sim_flow *f);
/* Gather its counters into the run's, destroy both QPs. */
void sim_conn_close(struct sim *s, struct sim_flow *f);

/* ---- workloads (work.c) */

struct sim_work_ops {
	const char *name;
	int	(*start)(struct sim *s);
	/* a completion on host h */
	void	(*on_wc)(struct sim *s, struct sim_host *h, const struct mroce_wc *wc);
	/* after each run of host h's engine: what moved (0: nothing) */
	int	(*step)(struct sim *s, struct sim_host *h);
	bool	(*done)(struct sim *s);
	/* with --verify, once done: bytes not where the workload put them */
	__u64	(*verify)(struct sim *s);
	void	(*free)(struct sim *s);
};

const struct sim_work_ops *sim_work_ops(enum sim_workload w);

/* ---- the whole simulation */

struct sim_sample {
	__u64	t_ps;
	__u64	rx_bytes;	/* delivered to hosts so far */
	__u64	rx_busiest;	/* delivered to the host that got most in the period */
	__u32	q_spine_max;	/* deepest leaf-spine or spine-leaf queue in the period */
	__u32	q_host_max;	/* deepest leaf-host queue in the period */
};

struct sim_stats {
	__u64	frames;		/* frames that entered the fabric */
	__u64	delivered;	/* ... reached their host */
	__u64	latency_max_ps;	/* the longest a frame took, its host's NIC ring included */
	__u64	hops;		/* link traversals */
	__u64	drops_buf, drops_loss, drops_down;
	__u64	marks;
	__u64	events;
	__u64	host_runs, progress_calls;	/* engine wake-ups, mroce_dev_progress() calls */
	__u64	flows_done;
	__u64	retx, tx_pkts, rtos, probes, retired, ce, psack_lost, suspected, plane_downs;
	__u64	bytes_done;
	const char *algo;	/* collectives: the algorithm that ran */
	__u64	conns_opened;	/* collectives: connections made (and made again) */
	__u32	conns_max;	/* ... most open at one host at once */
	__u64	conns_waited;	/* ... times a host waited for room to make one */
	__u64	errors;		/* completions in error */
	__u64	verify_bad;
	__u64	qp_bytes;	/* heap one connection end (a QP) takes, measured */
	__u64	qp_new_heap;	/* mroce_qp_heap_bytes of the first, when created */
	__u64	qp_used_bytes;	/* ... and once its flow is done (the first flow's larger end) */
	__u64	host_bytes;	/* heap one host's device and CQ take, measured */
};

struct sim {
	struct sim_cfg	cfg;
	__u64		now;		/* ps */
	__u64		rng;
	struct sim_evq	q;
	__u32		leaves;
	struct sim_plane *planes;
	struct sim_host	*hosts;
	const struct sim_work_ops *work;
	void		*wstate;
	struct sim_flow	**flows;	/* every flow opened, for the report */
	size_t		nflows, cap_flows;
	__u32		next_flow;
	__u64		start_ps, end_ps;
	__u64		*iter_start_ps, *iter_end_ps;	/* per iteration: first host in, last out */
	struct sim_stats st;
	struct sim_sample *samples;
	size_t		nsamples, cap_samples;
	__u8		*shared_buf;
	struct sim_frame *free_small, *free_big;	/* frames to reuse (frame.c) */
	__u64		frames_live;	/* taken and not given back: on links, in hosts' queues */
	FILE		*trace;		/* --trace (trace.c) */
	int		err;		/* first fatal error */
	char		errmsg[160];
};

__u32 sim_rand(struct sim *s);
int sim_fail(struct sim *s, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sim_run(struct sim *s);
/* Frames still on links (queued events): with delivered and the drops, all that entered. */
__u64 sim_frames_in_flight(const struct sim *s);
void sim_free(struct sim *s);

/* ---- --trace: one pair's frames (trace.c) */

int sim_trace_open(struct sim *s);
void sim_trace_frame(struct sim *s, const struct sim_frame *f, const char *ev);
/* 0, or the negative errno of writing it out */
int sim_trace_close(struct sim *s);

static inline void sim_trace(struct sim *s, const struct sim_frame *f, const char *ev)
{
	if (s->trace)
		sim_trace_frame(s, f, ev);
}

/* ---- results (report.c) */

struct sim_result {
	double	completion_us, ideal_us, ratio;
	double	goodput_gbps_mean, goodput_gbps_min;
	double	fct_p50_us, fct_p99_us, fct_max_us;
	double	jain;
	const struct sim_flow *slowest;	/* the flow with the longest completion time */
	__u32	peak_q_spine, peak_q_host;
	__u64	drops_full_spine, drops_full_host;	/* at full buffers: leaf-spine layer, host links */
	double	wall_s, pkts_per_min;
	long	rss_kib;
	__u64	state_host_bytes, state_conn_bytes, state_conn_used_bytes;
	double	cpu_ns_per_pkt;
};

double sim_ideal_us(const struct sim *s);
double sim_iter_us(const struct sim *s, __u32 i);
void sim_result(const struct sim *s, double wall_s, struct sim_result *r);
int sim_write_json(const struct sim *s, const struct sim_result *r, const char *path);
int sim_write_dat(const struct sim *s, const char *path);
int sim_write_flows(const struct sim *s, const char *path);
/* fclose, and -EIO if any write to f failed */
int sim_fclose(FILE *f);
void sim_print(const struct sim *s, const struct sim_result *r, FILE *out);

#endif /* MROCE_SIM_H */
