/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_TOPOLOGY_H
#define DC_TOPOLOGY_H

#include <stddef.h>

/*
 * Starts reading the node's topology on a thread of its own: hwloc's
 * discovery takes 10-15 ms, which the BPF load (about 100 ms) hides. Call
 * it after any fork whose child does more than exec, and at most once.
 */
void dc_topology_prefetch(void);

/* Waits for the prefetch, if it runs: before a fork whose child does more
 * than exec (the detaching child), when setup failed before the summary. */
void dc_topology_wait(void);

/* A one-line hwloc summary of this node ("packages=1 numa=1 cores=2 pus=2
 * memory_mb=24000"): the prefetched one, or read now. */
int dc_topology_summary(char *out, size_t len);

#endif
