// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libdcpreload.so: libdcpmpi.so's recording for any process, with no MPI.
 * Preloaded (LD_PRELOAD, or a job's task prolog), it records the process's
 * C library STDIO calls (stdio.c) and HDF5 calls (hdf5.c) into a shared
 * ring the agent drains, when the agent's probe sets ask for them
 * (stdio-wrapper, hdf5-wrapper): a function call's cost, where a uprobe
 * pair traps into the kernel twice in every process on the node.
 *
 * From the process's first call of a recorded function to its exit (its
 * destructor), registered with the node's agent at that first call as a
 * process that is no rank (DC_CTL_PROCESS, then DC_CTL_EXIT). An exec
 * starts anew; a forked child, which would write into its parent's ring,
 * stops recording and registers itself at its first such call. A process killed before its
 * destructor runs is let go by the agent all the same. Where libdcpmpi.so
 * is loaded too (an MPI rank), this library stands aside: one recording
 * of each call, libdcpmpi's.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "control_proto.h"
#include "record.h"
#include "session.h"

static struct dc_session session = { .lib = "libdcpreload", .quiet_unnamed = true };

static void start(void)
{
	snprintf(session.who, sizeof(session.who), "pid %d", (int)getpid());
	if (dc_session_start(&session, DC_CTL_PROCESS, -1, 0, 0, 0))
		dc_stdio_stop(); /* the variadic calls straight to the C library's */
}

/* Registered at the first call of a recorded function, not before: a
 * process that makes none (most of a shell script's) costs the agent
 * nothing and waits for no answer. */
static void start_later(void)
{
	dc_stdio_arm();
	dc_record_start_later(start);
}

/* The child of a fork: its parent's ring and registration are not its. */
static void in_child(void)
{
	session.registered = false;
	session.ring = NULL;
	dc_record_stop();
	start_later();
}

__attribute__((constructor)) static void preload_start(void)
{
	if (dlsym(RTLD_DEFAULT, "dc_mpi_real"))
		return; /* libdcpmpi.so is here: it records */
	pthread_atfork(NULL, NULL, in_child);
	start_later();
}

__attribute__((destructor)) static void preload_end(void)
{
	dc_session_end(&session, DC_CTL_EXIT, -1, 0);
}
