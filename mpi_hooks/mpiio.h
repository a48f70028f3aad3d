/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The rank's MPI-IO level (mpiio.c), started and stopped by dcpmpi.c. */
#ifndef DC_MPIIO_H
#define DC_MPIIO_H

struct dc_ring_head;

/* Records into ring what the agent asked for in its header (mode and
 * functions), from now on. */
void dc_mpiio_start(struct dc_ring_head *ring);
/* Nothing more is recorded; nonblocking calls not yet seen complete are
 * recorded now, with no bytes. */
void dc_mpiio_stop(void);

#endif
