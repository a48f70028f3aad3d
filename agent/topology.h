/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_TOPOLOGY_H
#define DC_TOPOLOGY_H

#include <stddef.h>

/* A one-line hwloc summary of this node ("packages=1 numa=1 cores=2 pus=2 memory_mb=24000"). */
int dc_topology_summary(char *out, size_t len);

#endif
