/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_NODE_HEADER_H
#define DC_NODE_HEADER_H

#include <sys/types.h>

#include "nodefile.h"

/* The header of a new node file of job: host, boot id, the clocks read
 * together, the agent's pid, mode and version, the job's user, and the
 * machine's topology. */
void dc_node_header_fill(struct dc_node_header *h, const char *job, int mode, __u32 interval_ms, uid_t uid,
			 int ncpus);

#endif
