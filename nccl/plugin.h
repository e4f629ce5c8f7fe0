/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libnccl-net-mroce: an NCCL net plugin (ABI v8) on libmroce's public API.
 * Internal declarations shared by the plugin's files (docs/nccl.md is the
 * design). Every comm has one reliable connected QP and one CQ of its own.
 */
#ifndef MROCE_NCCL_PLUGIN_H
#define MROCE_NCCL_PLUGIN_H

#include <netinet/in.h>
#include <stdbool.h>

#include <mroce/mroce.h>

#include "nccl_net_abi.h"

#define MN_MAX_DEVS	4
#define MN_MAX_REQS	NCCL_NET_MAX_REQUESTS		/* receives in flight per recvComm */
#define MN_RECV_SLOTS	(2 * MN_MAX_REQS)	/* recv request slots: a tested one waits for its CTS */
#define MN_MAX_RECVS	8				/* buffers in one grouped receive */
#define MN_SEND_REQS	(MN_MAX_REQS * MN_MAX_RECVS)	/* sends in flight per sendComm */
#define MN_CTS_BUFS	(2 * MN_MAX_REQS)		/* CTS receive buffers a sender posts */
#define MN_CTS_LEN	256
#define MN_QP_DEPTH	(MN_SEND_REQS + MN_CTS_BUFS)
#define MN_HANDSHAKE_MS	30000	/* a connect/accept not finished by then fails */
#define MN_HELLO_MS	1500	/* an accepted connection silent that long, with another
				 * waiting behind it, is not our peer */
#define MN_LIVE_CHECK_NS 1000000ull	/* side channel checked for a dead peer each ms */

/* One CTS entry per buffer of a grouped receive. */
struct mn_cts_entry {
	__u64	addr;
	__u32	size;
	__u32	rkey;
	__s32	tag;
	bool	used;		/* a send took it */
};

/* A clear-to-send: one irecv() of n buffers, as the sender sees it. */
struct mn_cts {
	bool			valid;
	__u32			seq;
	__u8			ridx;	/* the receiver's request slot */
	__u8			n;
	struct mn_cts_entry	e[MN_MAX_RECVS];
};

struct mn_dev {
	char		ifname[16];
	char		name[40];
	char		*pci_path;	/* realpath of /sys/class/net/IF/device, or NULL */
	struct in_addr	addr;
	int		ifindex;
	int		speed_mbps;
	struct mroce_dev *dev;
};

struct mn_mr {
	struct mroce_mr	*mr;		/* NULL for a 0-byte region */
	__u64		addr;
	size_t		len;
};

enum mn_req_state { MN_REQ_FREE, MN_REQ_POSTED, MN_REQ_DONE };
enum mn_kind { MN_SEND = 1, MN_RECV = 2 };

struct mn_comm;

struct mn_req {
	struct mn_comm		*c;
	enum mn_req_state	state;
	bool			cts_busy;	/* recv: its CTS not yet completed */
	bool			tested;		/* recv: done was reported, slot waits for cts_busy */
	__u8			n;		/* buffers (1 for a send) */
	__u8			got;		/* recv: bitmap of buffers written */
	__u32			seq;		/* recv: CTS sequence */
	__u64			wseq;		/* send: the message's number on the comm */
	int			sizes[MN_MAX_RECVS];
};

struct mn_comm {
	enum mn_kind	kind;
	struct mn_dev	*d;
	int		fd;		/* the TCP side channel, kept open to see the peer die */
	struct mroce_cq	*cq;
	struct mroce_qp	*qp;
	__u8		*ctl;		/* MN_CTS_BUFS x MN_CTS_LEN control buffers */
	struct mroce_mr	*ctl_mr;
	ncclResult_t	err;		/* sticky: the first failure */
	const char	*closed;	/* the peer closed with nothing in flight (why): an
					 * INFO then; a WARN only if the comm is used again */
	__u64		next_live_check;
	__u32		seq;		/* send: next CTS to consume; recv: next CTS to post */
	__u64		nmsgs;		/* send: messages posted; recv: messages received */
	int		nreqs;
	struct mn_req	*reqs;		/* MN_SEND_REQS (send) or MN_RECV_SLOTS (recv) */
	struct mn_cts	cts[MN_MAX_REQS];	/* send: CTSs received, by seq % MN_MAX_REQS */
};

/* plugin.c */
extern ncclDebugLogger_t mn_log;
#define MN_WARN(...) do { if (mn_log) mn_log(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, \
					     "NET/mroce: " __VA_ARGS__); } while (0)
#define MN_INFO(...) do { if (mn_log) mn_log(NCCL_LOG_INFO, NCCL_NET, __func__, __LINE__, \
					     "NET/mroce: " __VA_ARGS__); } while (0)
struct mn_dev *mn_dev_get(int dev);
extern int mn_open_objs;	/* comms and listeners not closed yet (atomic) */
__u64 mn_now_ns(void);

/* conn.c: listen/connect/accept, comm resources */
ncclResult_t mn_listen(int dev, void *handle, void **listen_comm);
ncclResult_t mn_connect(int dev, void *handle, void **send_comm, ncclNetDeviceHandle_v8_t **dc);
ncclResult_t mn_accept(void *listen_comm, void **recv_comm, ncclNetDeviceHandle_v8_t **dc);
ncclResult_t mn_close_listen(void *listen_comm);
void mn_comm_free(struct mn_comm *c);

/* nexthop.c: the next hop's MAC toward tcp_fd's peer, never waiting: 0, or
 * -EAGAIN when the kernel has not resolved it yet (start: make it resolve). */
int mn_next_hop_mac(int tcp_fd, int ifindex, __u8 mac[6], bool start);

/* xfer.c: transfers */
int mn_comm_post_initial(struct mn_comm *c);
ncclResult_t mn_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
		      void **request);
ncclResult_t mn_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
		      void **mhandles, void **request);
ncclResult_t mn_test(void *request, int *done, int *sizes);
ncclResult_t mn_close_comm(void *comm);

#endif /* MROCE_NCCL_PLUGIN_H */
