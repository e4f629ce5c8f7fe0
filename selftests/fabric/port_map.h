/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by fabric.bpf.c and port.c: a port's AF_XDP socket for receive
 * queue q sits in fabric_xsks at slot * XPORT_MAX_QUEUES + q.
 */
#ifndef MROCE_FABRIC_PORT_MAP_H
#define MROCE_FABRIC_PORT_MAP_H

#define XPORT_MAX_SLOTS		64	/* ports (interfaces) one program serves */
#define XPORT_MAX_QUEUES	16	/* receive queues per port */

#endif
