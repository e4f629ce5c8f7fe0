// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hosts: one libmroce device each (lib/dev.c's mroce_dev_create, no
 * progress thread) over a port whose frames go into the fabric model: the
 * same port seam (lib/port.h) the AF_XDP port fills. A host's NIC ring is
 * its uplink's queue: when it is full, tx_buf() refuses and the engine
 * tries again when the host is next woken, as a full AF_XDP ring makes it.
 * Engines run in zero virtual time; a host runs when a frame reaches it, a
 * timer of its engine falls due, or its NIC ring has room again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>

#include "sim.h"
#include "../lib/testhook.h"

static struct sim_link *nic(struct sim_host *h)
{
	return &h->s->planes[h->tx_plane].up_h[h->id];
}

static void *host_tx_buf(void *port, __u32 *cap)
{
	struct sim_host *h = port;
	struct sim_link *l = nic(h);
	__u64 now = h->s->now;
	__u64 depth = l->free_ps > now ? (l->free_ps - now) / l->ps_per_byte : 0;

	if (depth + MROCE_FRAME_MAX > l->buf) {
		h->tx_blocked = true;
		return NULL;
	}
	*cap = MROCE_FRAME_MAX;
	return h->txbuf;
}

static void host_tx_send(void *port, void *buf, __u32 len)
{
	struct sim_host *h = port;
	struct sim_frame *f;

	if (!len)
		return;
	f = sim_frame_new(h->s, len);
	if (!f) {
		sim_fail(h->s, -ENOMEM, "frames: out of memory");
		return;
	}
	memcpy(f->data, buf, sim_frame_kept(h->s, len));
	f->src = (__u16)h->id;
	sim_fabric_send(h->s, f);
}

static void host_tx_flush(void *port) { (void)port; }

static int host_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	struct sim_host *h = port;
	int n = 0;

	while (n < budget && h->rx_n) {
		struct sim_frame *f = h->rxq[h->rx_head];
		__u32 kept = sim_frame_kept(h->s, f->len);
		__u8 *data = f->data;

		h->rx_head = (h->rx_head + 1) % h->rx_cap;
		h->rx_n--;
		if (kept < f->len) {	/* its payload was not kept: stale bytes stand in */
			memcpy(h->rxbuf, f->data, kept);
			data = h->rxbuf;
		}
		if (!mroce_dev_test_xdp_drops(ctx, data, f->len))
			cb(ctx, data, f->len, 0);
		sim_frame_free(h->s, f);
		n++;
	}
	return n;
}

static void host_wait(void *port, int us, int fd) { (void)port; (void)us; (void)fd; }

static __u64 host_now(void *port)
{
	return ((struct sim_host *)port)->s->now / PS_PER_US;
}

static void host_select_plane(void *port, __u32 plane)
{
	struct sim_host *h = port;

	h->tx_plane = plane < h->s->cfg.planes ? plane : 0;
}

static const struct mroce_port_ops host_ops = {
	.tx_buf = host_tx_buf, .tx_send = host_tx_send, .tx_flush = host_tx_flush,
	.rx_burst = host_rx_burst, .wait = host_wait, .now_us = host_now,
	.select_plane = host_select_plane,
	.csum_offload = true,	/* the model has no corruption to catch: a NIC's offload */
};

static void host_route(__u32 id, __u32 plane, struct mroce_route *r)
{
	memset(r, 0, sizeof(*r));
	r->family = AF_INET;
	r->src_mac[0] = 0x02;
	r->src_mac[3] = (__u8)plane;
	r->src_mac[4] = (__u8)(id >> 8);
	r->src_mac[5] = (__u8)id;
	r->src.v4.s_addr = htonl(sim_ip(plane, id));
}

static int host_open(struct sim *s, struct sim_host *h, __u32 id)
{
	MROCE_OPTS(mroce_dev_opts, o, .no_thread = true, .no_rate_grants = s->cfg.no_grants);
	const struct sim_cfg *c = &s->cfg;
	unsigned int acc = MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE |
			   MROCE_ACCESS_REMOTE_READ;
	struct mroce_route local;
	int err;

	h->s = s;
	h->id = id;
	h->wake_ps = SIM_NEVER;
	h->rx_cap = 256;
	h->rxq = malloc(h->rx_cap * sizeof(*h->rxq));
	if (!h->rxq)
		return -ENOMEM;
	host_route(id, 0, &local);
	err = mroce_dev_create(&host_ops, h, NULL, &local, &o, &h->dev);
	if (err)
		return err;
	h->dev->attr.mtu = c->mtu;
	/* QPNs, PSNs and keys from the seed: a seed replays exactly */
	mroce_dev_test_seed_random(h->dev, (s->cfg.seed + 1) * 0x9e3779b97f4a7c15ull ^ (id + 1));
	if (c->planes > 1) {
		h->dev->nplanes = (__u8)c->planes;
		for (__u32 p = 1; p < c->planes; p++)
			host_route(id, p, &h->dev->plane_local[p]);
	}
	err = mroce_create_cq(h->dev, 8192, &h->cq);
	if (err)
		return err;
	if (c->verify) {
		h->buf = mmap(NULL, sim_mem_len(c), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (h->buf == MAP_FAILED) {
			h->buf = NULL;
			return -ENOMEM;
		}
		for (__u64 i = 0; i < c->size; i++)
			h->buf[i] = sim_pattern(id, i);
	} else {
		h->buf = s->shared_buf;	/* bytes move, but nobody reads them */
	}
	return mroce_reg_mr(h->dev, h->buf, sim_mem_len(c), acc, &h->mr);
}

int sim_hosts_init(struct sim *s)
{
	const struct sim_cfg *c = &s->cfg;
	int err;

	if (!c->verify) {
		s->shared_buf = mmap(NULL, sim_mem_len(c), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s->shared_buf == MAP_FAILED) {
			s->shared_buf = NULL;
			return sim_fail(s, -ENOMEM, "cannot map %llu bytes of host memory",
					(unsigned long long)(sim_mem_len(c)));
		}
	}
	s->hosts = calloc(c->hosts, sizeof(*s->hosts));
	if (!s->hosts)
		return sim_fail(s, -ENOMEM, "hosts: out of memory");
	for (__u32 i = 0; i < c->hosts; i++) {
		struct mallinfo2 m0 = mallinfo2(), m1;

		if ((err = host_open(s, &s->hosts[i], i)))
			return sim_fail(s, err, "host %u", i);
		m1 = mallinfo2();
		if (!i)	/* the state a host holds, its memory aside */
			s->st.host_bytes = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
	}
	return 0;
}

void sim_hosts_free(struct sim *s)
{
	for (__u32 i = 0; s->hosts && i < s->cfg.hosts; i++) {
		struct sim_host *h = &s->hosts[i];

		if (h->mr)
			mroce_dereg_mr(h->mr);
		if (h->cq)
			mroce_destroy_cq(h->cq);
		if (h->dev)
			mroce_dev_close(h->dev);
		while (h->rx_n) {
			sim_frame_free(s, h->rxq[h->rx_head]);
			h->rx_head = (h->rx_head + 1) % h->rx_cap;
			h->rx_n--;
		}
		free(h->rxq);
		if (s->cfg.verify && h->buf)
			munmap(h->buf, sim_mem_len(&s->cfg));
	}
	free(s->hosts);
	s->hosts = NULL;
	if (s->shared_buf)
		munmap(s->shared_buf, sim_mem_len(&s->cfg));
	s->shared_buf = NULL;
}

void sim_host_wake(struct sim_host *h, __u64 t)
{
	if (t >= h->wake_ps)
		return;
	h->wake_ps = t;
	if (sim_evq_push(&h->s->q, t, EV_HOST, h, 0))
		sim_fail(h->s, -ENOMEM, "event queue: out of memory");
}

void sim_host_deliver(struct sim *s, struct sim_frame *f)
{
	struct sim_host *h = &s->hosts[f->dst];

	if (h->rx_n == h->rx_cap) {
		size_t cap = 2 * h->rx_cap;
		struct sim_frame **q = malloc(cap * sizeof(*q));

		if (!q) {
			sim_fail(s, -ENOMEM, "frames: out of memory");
			sim_frame_free(s, f);
			return;
		}
		for (size_t i = 0; i < h->rx_n; i++)
			q[i] = h->rxq[(h->rx_head + i) % h->rx_cap];
		free(h->rxq);
		h->rxq = q;
		h->rx_head = 0;
		h->rx_cap = cap;
	}
	h->rxq[(h->rx_head + h->rx_n++) % h->rx_cap] = f;
	h->rx_bytes += f->len;
	s->st.delivered++;
	if (s->now - f->sent_ps > s->st.latency_max_ps)
		s->st.latency_max_ps = s->now - f->sent_ps;
	/*
	 * Receive coalescing, as NAPI polls: a frame wakes an idle host at
	 * once; one that ran in this microsecond (the engine's clock tick)
	 * takes what else arrived in it at the next tick.
	 */
	sim_host_wake(h, s->now / PS_PER_US > h->ran_us || !h->ran ? s->now :
			 (s->now / PS_PER_US + 1) * PS_PER_US);
}

void sim_host_run(struct sim_host *h)
{
	struct sim *s = h->s;
	struct mroce_wc wc[64];
	__u64 next, now_us = s->now / PS_PER_US;

	h->wake_ps = SIM_NEVER;
	h->ran = true;
	h->ran_us = now_us;
	s->st.host_runs++;
	for (int round = 0; round < 64; round++) {
		int work, n;

		h->tx_blocked = false;
		work = mroce_dev_progress(h->dev, 0);
		s->st.progress_calls++;
		n = mroce_poll_cq(h->cq, 64, wc);
		for (int i = 0; i < n; i++)
			s->work->on_wc(s, h, &wc[i]);
		if (s->work->step && s->work->step(s, h) > 0)
			n = 1;	/* the collective moved: its posts go out in the next round */
		if (work <= 0 && n <= 0)
			break;
	}
	pthread_mutex_lock(&h->dev->lock);
	next = mroce_engine_next_timer(h->dev);
	pthread_mutex_unlock(&h->dev->lock);
	if (next != UINT64_MAX) {
		/* the engine's clock ticks in microseconds: a timer due now fires in the next one */
		next = next > now_us ? next * PS_PER_US : (now_us + 1) * PS_PER_US;
	} else {
		next = SIM_NEVER;
	}
	if (h->tx_blocked) {
		struct sim_link *l = nic(h);
		/* as TX completions come in batches: when half the ring has drained */
		__u64 room = l->free_ps - (__u64)(l->buf / 2) * l->ps_per_byte;

		if (room <= s->now)
			room = s->now + 1;
		if (room < next)
			next = room;
	}
	if (h->rx_n)
		next = s->now;	/* frames left over after the rounds */
	if (next != SIM_NEVER)
		sim_host_wake(h, next);
}
