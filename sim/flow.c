// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connections: a QP on each of two hosts, created with the library's
 * defaults except what the mode sets (paths and their entropy, go-back-N,
 * congestion control), connected by the manual path (mroce_qp_local_info,
 * then connect with the next hops given, as tests/test_planes.c does; the
 * handshake's bytes are not what the fabric studies measure).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "sim.h"

static void addr6(__u32 ip, struct in6_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = a->s6_addr[11] = 0xff;
	ip = htonl(ip);
	memcpy(&a->s6_addr[12], &ip, 4);
}

static int qp_new(struct sim *s, struct sim_host *h, struct mroce_cq *cq, struct mroce_qp **qp)
{
	const struct sim_cfg *c = &s->cfg;
	MROCE_OPTS(mroce_qp_attr, a, .send_cq = cq ? cq : h->cq, .recv_cq = cq ? cq : h->cq, .mtu = c->mtu,
		   .cc_ecn = c->cc_ecn, .cc_delay = c->cc_delay, .no_cc = c->no_cc, .rto_low_us = c->rto_low_us,
		   .rto_high_us = c->rto_high_us);

	if (c->mode == SIM_SPRAY) {
		a.paths = c->paths;
	} else {
		a.paths = 1;
		a.static_paths = true;
		a.go_back_n = c->mode == SIM_GBN;
	}
	return mroce_create_qp(h->dev, &a, qp);
}

static int connect_one(struct mroce_qp *qp, const struct mroce_qp_info *remote)
{
	int err;

	pthread_mutex_lock(&qp->dev->lock);
	err = mroce_qp_connect_locked(qp, remote, remote->mac,
				      (const __u8 (*)[6])remote->plane_mac, remote->planes);
	pthread_mutex_unlock(&qp->dev->lock);
	return err;
}

static int flow_add(struct sim *s, struct sim_flow *f)
{
	s->hosts[f->src].by_qpn[mroce_qp_num(f->qs)] = f;
	s->hosts[f->dst].by_qpn[mroce_qp_num(f->qd)] = f;
	if (s->nflows == s->cap_flows) {
		size_t cap = s->cap_flows ? 2 * s->cap_flows : 1024;
		struct sim_flow **v = realloc(s->flows, cap * sizeof(*v));

		if (!v)
			return sim_fail(s, -ENOMEM, "flows: out of memory");
		s->flows = v;
		s->cap_flows = cap;
	}
	s->flows[s->nflows++] = f;
	return 0;
}

/* Both QPs, connected to each other. */
static int pair_open(struct sim *s, struct sim_flow *f, __u32 src, __u32 dst,
		     struct mroce_cq *cq_src, struct mroce_cq *cq_dst)
{
	struct sim_host *hs = &s->hosts[src], *hd = &s->hosts[dst];
	struct mroce_qp_info is, id;
	struct in6_addr as, ad;
	int err;

	f->id = s->next_flow++;
	f->src = src;
	f->dst = dst;
	f->start_ps = s->now;
	f->done_ps = 0;
	free(f->base);
	f->base = NULL;
	if (!s->st.qp_bytes) {	/* the state one connection end holds */
		struct mallinfo2 m0 = mallinfo2(), m1;

		if ((err = qp_new(s, hs, cq_src, &f->qs)))
			return sim_fail(s, err, "flow %u -> %u: create QP", src, dst);
		m1 = mallinfo2();
		s->st.qp_bytes = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
		s->st.qp_new_heap = mroce_qp_heap_bytes(f->qs);
	}
	if ((!f->qs && (err = qp_new(s, hs, cq_src, &f->qs))) ||
	    (err = qp_new(s, hd, cq_dst, &f->qd)))
		return sim_fail(s, err, "flow %u -> %u: create QP", src, dst);
	addr6(sim_ip(0, src), &as);
	addr6(sim_ip(0, dst), &ad);
	if ((err = mroce_qp_local_info(f->qs, &as, AF_INET, &is)) ||
	    (err = mroce_qp_local_info(f->qd, &ad, AF_INET, &id)) ||
	    (err = connect_one(f->qs, &id)) || (err = connect_one(f->qd, &is)))
		return sim_fail(s, err, "flow %u -> %u: connect", src, dst);
	return 0;
}

int sim_flow_open(struct sim *s, struct sim_flow *f, __u32 src, __u32 dst)
{
	int err = pair_open(s, f, src, dst, NULL, NULL);

	return err ? err : flow_add(s, f);
}

int sim_conn_open(struct sim *s, struct sim_flow *f, __u32 src, __u32 dst, struct mroce_cq *cq_src,
		  struct mroce_cq *cq_dst)
{
	int err = pair_open(s, f, src, dst, cq_src, cq_dst);

	f->conn = true;
	if (err)
		return err;
	s->hosts[src].by_qpn[mroce_qp_num(f->qs)] = f;
	s->hosts[dst].by_qpn[mroce_qp_num(f->qd)] = f;
	return 0;
}

static void add_stats(struct sim_flow *f, struct mroce_qp *qp)
{
	MROCE_OPTS(mroce_qp_stats, st);

	if (!qp || mroce_qp_query_stats(qp, &st))
		return;
	f->retx += st.retx_pkts;
	f->tx_pkts += st.tx_pkts;
	f->rtos += st.rto_events;
	f->probes += st.tail_probes;
	f->retired += st.paths_retired;
	f->ce += st.ecn_ce;
	f->psack_lost += st.psack_lost;
	f->suspected += st.paths_suspected;
	f->plane_downs += st.plane_downs;
}

void sim_flow_stats(struct sim_flow *f)
{
	const struct sim_flow *b = f->base;

	f->retx = f->tx_pkts = f->rtos = f->probes = f->retired = f->ce = f->psack_lost = f->suspected = f->plane_downs = 0;
	add_stats(f, f->qs);
	add_stats(f, f->qd);
	if (!b)
		return;
	f->retx -= b->retx;
	f->tx_pkts -= b->tx_pkts;
	f->rtos -= b->rtos;
	f->probes -= b->probes;
	f->retired -= b->retired;
	f->ce -= b->ce;
	f->psack_lost -= b->psack_lost;
	f->suspected -= b->suspected;
	f->plane_downs -= b->plane_downs;
}

/* Its counters since the last time into the run's (sim_flow_account), then close it. */
static void flow_account(struct sim *s, struct sim_flow *f)
{
	sim_flow_account(s, f);
	if (f->qs)
		s->hosts[f->src].by_qpn[mroce_qp_num(f->qs)] = NULL;
	if (f->qd)
		s->hosts[f->dst].by_qpn[mroce_qp_num(f->qd)] = NULL;
	if (f->qs)
		mroce_destroy_qp(f->qs);
	if (f->qd)
		mroce_destroy_qp(f->qd);
	f->qs = f->qd = NULL;
	free(f->base);
	f->base = NULL;
}

void sim_flow_account(struct sim *s, struct sim_flow *f)
{
	struct sim_flow *base = f->base, tot;

	if (!s->st.qp_used_bytes && f->qs && f->qd) {	/* what the rings and records grew to */
		size_t a = mroce_qp_heap_bytes(f->qs), b = mroce_qp_heap_bytes(f->qd);

		s->st.qp_used_bytes = a > b ? a : b;
	}
	f->base = NULL;
	sim_flow_stats(f);
	tot = *f;
	f->base = base;
	sim_flow_stats(f);
	s->st.retx += f->retx;
	s->st.tx_pkts += f->tx_pkts;
	s->st.rtos += f->rtos;
	s->st.probes += f->probes;
	s->st.retired += f->retired;
	s->st.ce += f->ce;
	s->st.psack_lost += f->psack_lost;
	s->st.suspected += f->suspected;
	s->st.plane_downs += f->plane_downs;
	/* what is counted now is the base of the next account */
	if (!base && !(base = malloc(sizeof(*base)))) {
		sim_fail(s, -ENOMEM, "flows: out of memory");
		return;
	}
	*base = tot;
	base->base = NULL;
	f->base = base;
}

void sim_flow_close(struct sim *s, struct sim_flow *f)
{
	if (!f->qs && !f->qd)
		return;
	flow_account(s, f);
}

void sim_conn_close(struct sim *s, struct sim_flow *f)
{
	sim_flow_close(s, f);
}


int sim_flow_write(struct sim *s, struct sim_flow *f, bool to_dst, __u64 loff, __u64 roff,
		   __u32 len, __u32 imm, __u64 wr_id)
{
	struct sim_host *from = &s->hosts[to_dst ? f->src : f->dst];
	struct sim_host *to = &s->hosts[to_dst ? f->dst : f->src];
	struct mroce_sge sge = {
		.addr = (__u64)(unsigned long)(from->buf + loff), .length = len,
		.lkey = mroce_mr_lkey(from->mr),
	};
	struct mroce_send_wr wr = {
		.wr_id = wr_id, .opcode = MROCE_WR_RDMA_WRITE_WITH_IMM, .sg_list = &sge,
		.num_sge = 1, .remote_addr = (__u64)(unsigned long)(to->buf + roff),
		.rkey = mroce_mr_rkey(to->mr), .imm_data = imm,
	};

	return mroce_post_send(to_dst ? f->qs : f->qd, &wr);
}

int sim_flow_post_recv(struct sim *s, struct sim_flow *f, bool at_dst, __u64 wr_id)
{
	struct mroce_recv_wr wr = { .wr_id = wr_id };

	(void)s;
	return mroce_post_recv(at_dst ? f->qd : f->qs, &wr);
}
