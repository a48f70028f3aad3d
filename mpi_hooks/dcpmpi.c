// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libdcpmpi.so: preloaded into an MPI job, tells the node's dc-agent which
 * pid is which rank, with this rank's clock offset to rank 0, and says when
 * it finalizes. It wraps MPI_Init, MPI_Init_thread and MPI_Finalize (and
 * the Fortran mpi_init_/mpi_init_thread_/mpi_finalize_) and calls the PMPI
 * versions. A missing or refusing agent never stops the job: one warning,
 * and the job runs on untraced.
 *
 * It also records the rank's MPI-IO calls (mpiio.c), HDF5 calls (hdf5.c)
 * and C library STDIO calls (stdio.c) into a shared ring it passes to the
 * agent with its registration (session.c), when the agent's probe sets
 * ask for them (wrapper sets); DC_RING_SLOTS sets the ring's size.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "mpiio.h"
#include "session.h"
#include "test_hooks.h"

/*
 * Clock offset ping-pongs with rank 0, per rank: at least PINGS_MIN; then
 * on until the shortest round trip is at most RTT_GOOD_NS, or PINGS_MAX,
 * or PING_BUDGET_NS spent on this rank. A busy node (ranks and agents
 * starting on few cores) can hold every one of a few round trips to
 * milliseconds; a longer run mostly finds a short one. A quiet node, and
 * any fast network, stops at PINGS_MIN.
 */
#define PINGS_MIN 8
#define PINGS_MAX 64
#define RTT_GOOD_NS 100000ll
#define PING_BUDGET_NS 250000000ll
#define TAG 0x4443

static struct dc_session session = { .lib = "libdcpmpi", .who = "rank -1", .prefault = true };
static int my_rank = -1, world_size;

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec + dc_test_clock_skew_ns();
}

/* Rank 0: tells rank r its turn has come, then answers its pings with
 * its clock until r says stop. */
static void clock_serve(MPI_Comm comm, int r)
{
	long slow = dc_test_count("DC_TEST_SLOW_PONGS");
	int64_t go = 0;

	PMPI_Send(&go, 1, MPI_INT64_T, r, TAG, comm);
	for (;;) {
		int64_t ping[2], now;

		PMPI_Recv(ping, 2, MPI_INT64_T, r, TAG, comm, MPI_STATUS_IGNORE);
		if (ping[1])
			return;
		if (slow-- > 0)
			nanosleep(&(struct timespec){ .tv_nsec = 3000000 }, NULL);
		now = realtime_ns();
		PMPI_Send(&now, 1, MPI_INT64_T, r, TAG, comm);
	}
}

/*
 * Rank r: waits for its turn asleep, not spinning in MPI's progress loop:
 * on a node with more ranks than cores the waiting ranks would take the
 * cores from rank 0 and the rank whose turn it is, and every round trip
 * would last a time slice.
 */
static void clock_wait_turn(MPI_Comm comm)
{
	MPI_Request req;
	int64_t go;
	int done = 0;

	if (PMPI_Irecv(&go, 1, MPI_INT64_T, 0, TAG, comm, &req) != MPI_SUCCESS)
		return;
	while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
}

/* Rank r: pings rank 0, keeping the offset of the shortest round trip,
 * whose half is the error bound; then tells rank 0 to stop. */
static void clock_ask(MPI_Comm comm, int64_t *offset, uint64_t *error)
{
	int64_t best_rtt = INT64_MAX, start = 0, stop[2] = { 0, 1 };

	for (int i = 0; i < PINGS_MAX; i++) {
		int64_t ping[2] = { realtime_ns(), 0 }, remote, t1;

		PMPI_Send(ping, 2, MPI_INT64_T, 0, TAG, comm);
		PMPI_Recv(&remote, 1, MPI_INT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
		t1 = realtime_ns();
		/* The budget runs from rank 0's first answer: before it, rank 0
		 * was serving the ranks before this one. */
		if (!i)
			start = t1;
		if (t1 - ping[0] < best_rtt) {
			best_rtt = t1 - ping[0];
			*offset = remote - (ping[0] + t1) / 2;
			*error = (uint64_t)best_rtt / 2;
		}
		if (i + 1 >= PINGS_MIN && (best_rtt <= RTT_GOOD_NS || t1 - start >= PING_BUDGET_NS))
			break;
	}
	PMPI_Send(stop, 2, MPI_INT64_T, 0, TAG, comm);
}

/*
 * Each rank's offset to rank 0, one rank at a time, on a private
 * communicator, so the application's messages are never seen.
 */
static void clock_offset(MPI_Comm comm, int64_t *offset, uint64_t *error)
{
	*offset = 0;
	*error = 0;
	for (int r = 1; r < world_size; r++) {
		if (my_rank == 0)
			clock_serve(comm, r);
		else if (my_rank == r) {
			clock_wait_turn(comm);
			clock_ask(comm, offset, error);
		}
	}
}

static void after_init(void)
{
	static int done;
	MPI_Comm comm;
	int64_t offset;
	uint64_t error;
	int up = 0;

	/* Once, even if a Fortran init reaches the C one too. */
	if (done++ || MPI_Initialized(&up) != MPI_SUCCESS || !up)
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
		return;
	clock_offset(comm, &offset, &error);
	PMPI_Comm_free(&comm);
	snprintf(session.who, sizeof(session.who), "rank %d", my_rank);
	dc_session_start(&session, DC_CTL_REGISTER, my_rank, world_size, offset, error);
}

static void before_finalize(void)
{
	if (session.ring)
		dc_mpiio_flush_pending();
	dc_session_end(&session, DC_CTL_FINALIZE, my_rank, world_size);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Finalize(void)
{
	before_finalize();
	return PMPI_Finalize();
}

/* Fortran: the library's own pmpi_ entry points do the Fortran-side work. */
typedef void (*f_init)(MPI_Fint *);
typedef void (*f_init_thread)(MPI_Fint *, MPI_Fint *, MPI_Fint *);

void mpi_init_(MPI_Fint *ierr)
{
	f_init real = (f_init)dlsym(RTLD_NEXT, "pmpi_init_");

	if (!real) {
		*ierr = MPI_Init(NULL, NULL);
		return;
	}
	real(ierr);
	if (*ierr == MPI_SUCCESS)
		after_init();
}

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	f_init_thread real = (f_init_thread)dlsym(RTLD_NEXT, "pmpi_init_thread_");

	if (!real) {
		int p;

		*ierr = MPI_Init_thread(NULL, NULL, *required, &p);
		*provided = p;
		return;
	}
	real(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		after_init();
}

void mpi_finalize_(MPI_Fint *ierr)
{
	f_init real = (f_init)dlsym(RTLD_NEXT, "pmpi_finalize_");

	before_finalize();
	if (real)
		real(ierr);
	else
		*ierr = PMPI_Finalize();
}
