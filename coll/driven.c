// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: a communicator driven from outside (coll_internal.h,
 * struct coll_driven_opts). mroce-sim runs 1024 ranks in one process this
 * way, through the same algorithms and channels as the library's blocking
 * calls.
 *
 * Connections are made when an algorithm first sends to a peer
 * (coll_peer_use, from the channel's posts) and hold what a connection
 * needs: a QP (the driver's), receive buffers, an inbox (dry: one region
 * for all). Open connections are kept in use order; above max_open the
 * least recently used ones that are idle at both ends close, a few looked
 * at per new connection, so the count stays near the cap without ever
 * closing a connection with anything in flight. A closed pair's channel is
 * fresh at both ends when it opens again; what belongs to operations rather
 * than to the connection (all-to-all's buffer offers, the last direct write)
 * stays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll_internal.h"

#define RX_SLAB		16	/* receive buffer blocks registered at once */
#define EVICT_LOOK	8	/* idle candidates looked at per new connection */

static void evict(struct mroce_coll_comm *c, unsigned int room);

static size_t rx_block(void)
{
	return (size_t)COLL_CTRL_BUFS * COLL_CTRL_LEN;
}

int coll_driven_create(const struct coll_driven_opts *o, struct mroce_coll_comm **cp)
{
	struct mroce_coll_comm *c;
	size_t ctrl_tx, pool;
	int err;

	if (!o || !cp || !o->dev || !o->cq || !o->connect || o->size < 1 ||
	    o->size > COLL_DRIVEN_MAX_RANKS || o->rank < 0 || o->rank >= o->size || o->chunk < 64 ||
	    o->chunk % 64 || (o->dry && !o->dry_inbox) ||
	    (o->max_open && !o->disconnect))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->driven = true;
	c->drv = *o;
	c->rank = o->rank;
	c->size = o->size;
	c->chunk = o->chunk;
	c->small_bytes = o->small_bytes ? o->small_bytes : 16 * 1024;
	c->a2a_window = o->a2a_window > 0 ? o->a2a_window : 0;
	c->dry = o->dry;
	c->dev = o->dev;
	c->cq = o->cq;
	c->timeout_ms = 0;	/* unused: the driver bounds the time */
	c->pend_head = c->lru_head = c->lru_tail = -1;
	c->peers = calloc((size_t)c->size, sizeof(*c->peers));
	err = c->peers ? 0 : -ENOMEM;
	if (!err && o->force_algo && !(c->force_algo = strdup(o->force_algo)))
		err = -ENOMEM;
	/* local: the control sends' sources (every peer: all-to-all writes them
	 * before it posts), then the staging pool; dry, nobody writes the pool
	 * and its pages stay unmapped */
	ctrl_tx = (size_t)c->size * COLL_ADV_RING * COLL_CTRL_LEN;
	pool = (size_t)COLL_POOL * c->chunk;
	c->mem_len = ctrl_tx + pool;
	if (!err) {
		c->mem = mmap(NULL, c->mem_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (c->mem == MAP_FAILED) {
			c->mem = NULL;
			err = -ENOMEM;
		}
	}
	if (!err) {
		c->pool = c->mem + ctrl_tx;
		c->pool_free = ~0ull;
		err = mroce_reg_mr(c->dev, c->mem, c->mem_len, MROCE_ACCESS_LOCAL_WRITE,
				   &c->mr_local);
	}
	for (int p = 0; !err && p < c->size; p++) {
		struct coll_peer *pe = &c->peers[p];

		pe->ctrl_tx = c->mem + (size_t)p * COLL_ADV_RING * COLL_CTRL_LEN;
		pe->credits = COLL_SLOTS;
		pe->direct_op = ~0u;	/* no operation's number */
		pe->lru_prev = pe->lru_next = -1;
	}
	if (err) {
		coll_driven_destroy(c);
		return err;
	}
	*cp = c;
	return 0;
}

void coll_driven_destroy(struct mroce_coll_comm *c)
{
	if (!c)
		return;
	for (int p = 0; c->peers && p < c->size; p++)
		if (c->peers[p].inbox_own)
			mroce_dereg_mr(c->peers[p].inbox_own);
	for (size_t i = 0; i < c->nrx_mrs; i++) {
		mroce_dereg_mr(c->rx_mrs[i]);
		free(c->rx_slabs[i]);
	}
	for (int p = 0; !c->dry && c->peers && p < c->size; p++)
		if (c->peers[p].inbox_own)
			free(c->peers[p].inbox);
	if (c->mr_local)
		mroce_dereg_mr(c->mr_local);
	if (c->mem)
		munmap(c->mem, c->mem_len);
	free(c->rx_mrs);
	free(c->rx_slabs);
	free(c->rx_free);
	free(c->rx_free_lkey);
	free(c->peers);
	free(c->force_algo);
	free(c);
}

int coll_driven_poll(struct mroce_coll_comm *c)
{
	int n, total = 0, err;

	c->conn_wait = false;	/* a connection refused may be made now */
	/* coll_step takes 32 at a time: as long as it gets a full batch */
	do {
		if (c->err)
			return c->err;
		err = coll_step(c, false);
		if (err)
			return err;
		n = c->last_polled;
		total += n;
	} while (n == 32);
	/* above the cap since connections were made in a burst: what went idle closes */
	if (total && c->drv.max_open && c->nopen > c->drv.max_open)
		evict(c, 0);
	return total;
}

/* ---- the use order of open connections */

static void lru_unlink(struct mroce_coll_comm *c, int p)
{
	struct coll_peer *pe = &c->peers[p];

	if (pe->lru_prev >= 0)
		c->peers[pe->lru_prev].lru_next = pe->lru_next;
	else
		c->lru_head = pe->lru_next;
	if (pe->lru_next >= 0)
		c->peers[pe->lru_next].lru_prev = pe->lru_prev;
	else
		c->lru_tail = pe->lru_prev;
	pe->lru_prev = pe->lru_next = -1;
}

static void lru_push(struct mroce_coll_comm *c, int p)
{
	struct coll_peer *pe = &c->peers[p];

	pe->lru_prev = -1;
	pe->lru_next = c->lru_head;
	if (c->lru_head >= 0)
		c->peers[c->lru_head].lru_prev = p;
	c->lru_head = p;
	if (c->lru_tail < 0)
		c->lru_tail = p;
}

unsigned int coll_open_peers(const struct mroce_coll_comm *c)
{
	return c->nopen;
}

/* Until room more fit under the cap: close the least recently used idle
 * connections, a few looked at. */
static void evict(struct mroce_coll_comm *c, unsigned int room)
{
	int p = c->lru_tail;

	for (int look = 0; p >= 0 && look < EVICT_LOOK && c->drv.max_open &&
			   c->nopen + room > c->drv.max_open; look++) {
		int prev = c->peers[p].lru_prev;

		c->drv.disconnect(c->drv.ctx, c, p);	/* -EBUSY: it stays */
		p = prev;
	}
}

int coll_peer_use(struct mroce_coll_comm *c, int peer, bool may_wait)
{
	struct coll_peer *pe = &c->peers[peer];
	int err;

	if (!c->driven)
		return 0;
	if (pe->qp) {
		if (c->lru_head != peer) {
			lru_unlink(c, peer);
			lru_push(c, peer);
		}
		return 0;
	}
	if (peer == c->rank || peer < 0 || peer >= c->size)
		return -EINVAL;
	if (may_wait && c->conn_wait)
		return -EAGAIN;	/* refused since the last poll: not again in this step */
	evict(c, 1);	/* room first: the driver may refuse beyond its own bound */
	err = c->drv.connect(c->drv.ctx, c, peer, may_wait);
	if (err == -EAGAIN && !may_wait)
		err = -EIO;
	if (err == -EAGAIN)
		c->conn_wait = true;
	if (!err && !pe->qp)
		err = -ENOTCONN;	/* the hook did not attach us */
	return err;
}

/* ---- connections: the hooks' helpers */

static int rx_take(struct mroce_coll_comm *c, __u8 **buf, __u32 *lkey)
{
	if (!c->nrx_free) {
		size_t blk = rx_block();
		__u8 *slab = calloc(RX_SLAB, blk);
		struct mroce_mr *mr, **mrs;
		__u8 **slabs;
		int err;

		if (!slab)
			return -ENOMEM;
		mrs = realloc(c->rx_mrs, (c->nrx_mrs + 1) * sizeof(*mrs));
		if (mrs)
			c->rx_mrs = mrs;
		slabs = realloc(c->rx_slabs, (c->nrx_mrs + 1) * sizeof(*slabs));
		if (slabs)
			c->rx_slabs = slabs;
		if (!mrs || !slabs) {
			free(slab);
			return -ENOMEM;
		}
		/* room for every block there is: all may come back */
		if ((c->nrx_mrs + 1) * RX_SLAB > c->cap_rx_free) {
			size_t cap = (c->nrx_mrs + 1) * RX_SLAB;
			__u8 **f = realloc(c->rx_free, cap * sizeof(*f));
			__u32 *k = f ? realloc(c->rx_free_lkey, cap * sizeof(*k)) : NULL;

			if (f)
				c->rx_free = f;
			if (k)
				c->rx_free_lkey = k;
			if (!f || !k) {
				free(slab);
				return -ENOMEM;
			}
			c->cap_rx_free = cap;
		}
		err = mroce_reg_mr(c->dev, slab, RX_SLAB * blk, MROCE_ACCESS_LOCAL_WRITE, &mr);
		if (err) {
			free(slab);
			return err;
		}
		c->rx_slabs[c->nrx_mrs] = slab;
		c->rx_mrs[c->nrx_mrs++] = mr;
		for (size_t i = 0; i < RX_SLAB; i++) {
			c->rx_free[c->nrx_free] = slab + i * blk;
			c->rx_free_lkey[c->nrx_free++] = mroce_mr_lkey(mr);
		}
	}
	c->nrx_free--;
	*buf = c->rx_free[c->nrx_free];
	*lkey = c->rx_free_lkey[c->nrx_free];
	return 0;
}

int coll_peer_prepare(struct mroce_coll_comm *c, int peer, __u64 *inbox, __u32 *rkey)
{
	struct coll_peer *pe;
	int err;

	if (!c->driven || peer < 0 || peer >= c->size || peer == c->rank || c->peers[peer].qp)
		return -EINVAL;
	pe = &c->peers[peer];
	if (!pe->ctrl_rx && (err = rx_take(c, &pe->ctrl_rx, &pe->ctrl_lkey)))
		return err;
	/* a region per connection either way: dry runs draw the device's
	 * random numbers (keys) as real ones do, so they replay the same */
	if (!pe->inbox_own) {
		size_t len = (size_t)COLL_SLOTS * c->chunk;

		pe->inbox = c->dry ? c->drv.dry_inbox : malloc(len);
		if (!pe->inbox)
			return -ENOMEM;
		err = mroce_reg_mr(c->dev, pe->inbox, len,
				   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE,
				   &pe->inbox_own);
		if (err) {
			if (!c->dry)
				free(pe->inbox);
			pe->inbox = NULL;
			return err;
		}
	}
	*rkey = mroce_mr_rkey(pe->inbox_own);
	*inbox = (__u64)(unsigned long)pe->inbox;
	return 0;
}

/* A fresh channel: nothing sent, nothing received, every slot free. */
static void chan_reset(struct coll_peer *pe)
{
	pe->rx_seq = pe->tx_seq = 0;
	memset(pe->rx_ready, 0, sizeof(pe->rx_ready));
	pe->credits_owed = 0;
	pe->credits = COLL_SLOTS;
	pe->nrepost = 0;
	pe->tx_msgs = pe->rx_msgs = 0;
	pe->gen++;	/* receives of the connection before are stale */
}

int coll_peer_attach(struct mroce_coll_comm *c, int peer, struct mroce_qp *qp, __u64 r_inbox,
		     __u32 r_rkey)
{
	struct coll_peer *pe;
	int err;

	if (!c->driven || peer < 0 || peer >= c->size || peer == c->rank || !qp ||
	    c->peers[peer].qp || !c->peers[peer].ctrl_rx || !c->peers[peer].inbox)
		return -EINVAL;
	evict(c, 1);
	pe = &c->peers[peer];
	chan_reset(pe);
	pe->qp = qp;
	pe->r_inbox = r_inbox;
	pe->r_rkey = r_rkey;
	lru_push(c, peer);
	c->nopen++;
	err = coll_post_recvs(c, peer);
	if (err)
		coll_peer_detach(c, peer);
	return err;
}

bool coll_pair_idle(const struct mroce_coll_comm *a, int b_rank, const struct mroce_coll_comm *b,
		    int a_rank)
{
	const struct coll_peer *pa = &a->peers[b_rank], *pb = &b->peers[a_rank];

	if (!pa->qp || !pb->qp)
		return false;
	/* every message either end sent has been taken off the other's queue */
	if (pa->tx_msgs != pb->rx_msgs || pb->tx_msgs != pa->rx_msgs)
		return false;
	for (int i = 0; i < COLL_SLOTS; i++)
		if (pa->rx_ready[i] || pb->rx_ready[i])
			return false;	/* a chunk not consumed yet */
	/* an all-to-all's direct block offered and not written yet, or written
	 * and not taken yet */
	return !pa->offer_out && !pb->offer_out && !pa->direct_got && !pb->direct_got;
}

struct mroce_qp *coll_peer_detach(struct mroce_coll_comm *c, int peer)
{
	struct coll_peer *pe = &c->peers[peer];
	struct mroce_qp *qp = pe->qp;

	if (!qp)
		return NULL;
	lru_unlink(c, peer);
	c->nopen--;
	pe->qp = NULL;
	chan_reset(pe);
	/* its receive buffers go back (flushed receives name them, not their
	 * bytes), its own inbox too */
	c->rx_free[c->nrx_free] = pe->ctrl_rx;
	c->rx_free_lkey[c->nrx_free++] = pe->ctrl_lkey;
	pe->ctrl_rx = NULL;
	if (pe->inbox_own) {
		mroce_dereg_mr(pe->inbox_own);
		if (!c->dry)
			free(pe->inbox);
		pe->inbox_own = NULL;
	}
	pe->inbox = NULL;
	return qp;
}
