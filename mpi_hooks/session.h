/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process's session with its node's agent, for libdcpmpi.so (a rank,
 * from MPI_Init to MPI_Finalize) and libdcpreload.so (any process, from
 * its start to its exit): the registration, with a ring of DC_RING_SLOTS
 * records (record.h), and the message that ends it. A missing or refusing
 * agent never stops the process: one warning, and it runs on untraced.
 */
#ifndef DC_SESSION_H
#define DC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

struct dc_ring_head;

struct dc_session {
	const char *lib;   /* "libdcpmpi": the warnings' first word */
	char who[32];      /* "rank 3", "pid 1234" */
	/* Touch the ring's pages at the start (a rank's, in MPI_Init): a fault
	 * a page, which else falls on the records that first reach each page
	 * (on a machine whose page faults are dear, 8 ms for the default
	 * ring). libdcpreload leaves them to the records, so that a short
	 * process pays for the pages it uses alone. */
	bool prefault;
	/* No agent named at all (no socket, no job id): untraced without a
	 * word (libdcpreload, which a program may keep in its environment
	 * outside any trace); a rank is told. */
	bool quiet_unnamed;
	bool warned;
	bool registered;
	struct dc_ring_head *ring; /* recorded into, once the agent took it */
};

/*
 * Registers this process (type DC_CTL_REGISTER with its rank and the
 * world's size and clock offset, or DC_CTL_PROCESS) with a new ring, and
 * starts recording what the agent asked for into it. 0 when the agent
 * registered it (with or without its ring); else -1, warned once.
 */
int dc_session_start(struct dc_session *s, int type, int rank, int world_size, int64_t offset, uint64_t error);
/* Stops recording (the caller's own levels first), then tells the agent
 * the session ends (type DC_CTL_FINALIZE or DC_CTL_EXIT) where it
 * registered. */
void dc_session_end(struct dc_session *s, int type, int rank, int world_size);

#endif
