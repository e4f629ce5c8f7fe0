// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* placeholder: the device list (replaced by the core's device.c) */
#include "mrv.h"
