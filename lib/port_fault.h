/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Test-only fault injection as a port decorator: it wraps another port and
 * drops, duplicates, reorders and corrupts frames in either direction, as
 * struct mroce_faults asks. Not installed.
 */
#ifndef MROCE_PORT_FAULT_H
#define MROCE_PORT_FAULT_H

#include "port.h"

extern const struct mroce_port_ops mroce_port_fault_ops;

/*
 * Wrap inner (ops, port) into a fault-injecting port, to be used with
 * mroce_port_fault_ops; every frame it touches counts in *faults. Closing
 * it closes the inner port too.
 */
int mroce_port_fault_new(const struct mroce_port_ops *ops, void *port, const struct mroce_faults *cfg,
			 __u64 *faults, void **fport);
/* Free a fault port without closing the inner one (a device that failed to start). */
void mroce_port_fault_free(void *fport);

#endif /* MROCE_PORT_FAULT_H */
