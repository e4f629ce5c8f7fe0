/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The NCCL network plugin ABI, version 8 (ncclNet_v8_t, NCCL 2.19 and
 * later, which still load v8 plugins), declared from NCCL's published
 * ext-net documentation and headers (ext-net/README.md, nccl/net_v8.h,
 * err.h, net_device.h). Written for mroce; the layout, order and types
 * below are the ABI: change nothing without checking against NCCL.
 */
#ifndef MROCE_NCCL_NET_ABI_H
#define MROCE_NCCL_NET_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes a plugin may return (NCCL's values; 5 and 7 are core-only). */
typedef enum {
	ncclSuccess		= 0,
	ncclUnhandledCudaError	= 1,
	ncclSystemError		= 2,
	ncclInternalError	= 3,
	ncclInvalidArgument	= 4,
	ncclInvalidUsage	= 5,
	ncclRemoteError		= 6,
} ncclResult_t;

/* The logger NCCL hands to init(). */
typedef enum {
	NCCL_LOG_NONE		= 0,
	NCCL_LOG_VERSION	= 1,
	NCCL_LOG_WARN		= 2,
	NCCL_LOG_INFO		= 3,
	NCCL_LOG_ABORT		= 4,
	NCCL_LOG_TRACE		= 5,
} ncclDebugLogLevel;

#define NCCL_INIT	1ul
#define NCCL_NET	16ul
#define NCCL_ALL	(~0ul)

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags,
				  const char *file, int line, const char *fmt, ...);

#define NCCL_NET_HANDLE_MAXSIZE	128

#define NCCL_PTR_HOST	0x1
#define NCCL_PTR_CUDA	0x2
#define NCCL_PTR_DMABUF	0x4

/* Requests per comm NCCL may have outstanding: 8 in the headers of the v8
 * era's first releases, 32 in later ones (both load v8 plugins). */
#define NCCL_NET_MAX_REQUESTS_V8_MIN	8
#define NCCL_NET_MAX_REQUESTS		32

/* Device offload (none here: NCCL_NET_DEVICE_HOST). */
typedef enum {
	NCCL_NET_DEVICE_HOST	= 0,
	NCCL_NET_DEVICE_UNPACK	= 1,
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_INVALID_VERSION	0x0

typedef struct {
	ncclNetDeviceType	netDeviceType;
	int			netDeviceVersion;
	void			*handle;
	size_t			size;
	int			needsProxyProgress;
} ncclNetDeviceHandle_v8_t;

typedef struct {
	char			*name;		/* for logs */
	char			*pciPath;	/* PCI device directory in /sys, NULL if virtual */
	uint64_t		guid;		/* same guid: same port to the fabric */
	int			ptrSupport;	/* NCCL_PTR_* */
	int			regIsGlobal;	/* regMr not tied to one comm */
	int			speed;		/* Mbit/s */
	int			port;
	float			latency;	/* microseconds */
	int			maxComms;
	int			maxRecvs;	/* grouped receives */
	ncclNetDeviceType	netDeviceType;
	int			netDeviceVersion;
} ncclNetProperties_v8_t;

/* The function table, in the ABI's order. */
typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v8_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v8_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

/* The symbol NCCL looks up in libnccl-net-<NCCL_NET_PLUGIN>.so. */
#define NCCL_NET_PLUGIN_SYMBOL_V8	"ncclNetPlugin_v8"

#ifdef __cplusplus
}
#endif

#endif /* MROCE_NCCL_NET_ABI_H */
