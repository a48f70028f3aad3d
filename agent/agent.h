/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside dc-agent: the agent's state and the steps main() takes, each file
 * one part of its life: setup.c (sets, BPF, probes, the node file),
 * tracing.c (the loop: ring buffer, ranks and their rings, signals),
 * main.c (options, the end, the report).
 */
#ifndef DC_AGENT_H
#define DC_AGENT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>

#include "bpf_load.h"
#include "clock.h"
#include "config.h"
#include "kernel_features.h"
#include "launch.h"
#include "options.h"

#define POLL_MS 50
/* While ranks hand MPI-IO over in rings (which wake no one): a ring of
 * DC_RING_SLOTS_DEFAULT slots holds 10 ms of calls at 3 M calls/s. */
#define RING_POLL_MS 10
/* ...and while they are busy (dc_rank_rings_busy): a loop of buffered STDIO
 * calls records 7-10 M calls a second, half a default ring in 2 ms. */
#define RING_BUSY_POLL_MS 1
#define FLUSH_MS 1000
/* Events taken from the ring buffer before signals and the control socket
 * are looked at again: under a flood the ring never empties, and SIGTERM
 * and a rank's registration must still be answered within a second. */
#define BATCH_EVENTS 32768
/* Above the job's processes (nice 0): see main(). */
#define AGENT_NICE -10
#define MAX_SETS 64

struct agent {
	struct dc_options opt;
	struct dc_probe_set sets[MAX_SETS];
	int nsets;
	struct dc_features feat;
	struct dc_load_plan plan;
	struct dc_ksyms *ksyms; /* the kernel's functions, for kernel: sets */
	struct datacrumbs_bpf *skel;
	struct dc_probes *probes;
	struct dc_writer *writer;
	struct dc_recorder *recorder;
	struct dc_rank_rings *rings; /* the ranks' MPI-IO (wrapper sets) */
	struct dc_event_rings *events; /* the BPF side's records */
	bool backlog; /* the last round took a whole batch: more may wait */
	struct dc_child child;
	struct dc_control *control;
	struct dc_proc_watch *watch; /* processes tracked by registration or --pid */
	struct dc_lib_files *libs; /* other files of the uprobe sets' libraries (NULL: not watched) */
	int epoll_fd;
	int child_fd; /* a pidfd of the command, in epoll_fd (0: none) */
	struct dc_cpu_stats *stats;
	int ncpus;
	char job[64];
	char socket_path[108];
	int lock_fd; /* held: one agent per control socket */
	uid_t uid; /* the job's user */
	gid_t gid;
	char path[PATH_MAX];
	char preload[PATH_MAX]; /* libdcpreload.so, preloaded into the command ("": not) */
	bool write_failed;
	/* -v: where start and stop go (ns). */
	struct {
		__u64 start, setup, features, load, attach, ready, detach;
	} t;
	__u64 probes_decode_ns;
	/* The agent's own work while it traced: CPU (all its threads) at
	 * ready, and the loop's wake-ups. */
	__u64 cpu_at_ready_ns;
	unsigned long long wakeups;
};

/* This process's CPU time so far (user and system, every thread), ns. */
__u64 agent_cpu_ns(void);

/* The signal that asks the agent to stop (SIGINT, SIGTERM), 0 for none. */
extern volatile sig_atomic_t stop_signal;

void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double ms(__u64 ns);

/* setup.c */
int agent_setup(struct agent *a);
/* --check: the kernel's features and each level's mechanism. */
int agent_check_kernel(struct agent *a);

/* tracing.c */
/* Each record of the BPF side, in time order (a dc_event_fn). */
void agent_on_record(void *ctx, void *data, size_t len, __u64 time);
int agent_open_control(struct agent *a);
int agent_start_targets(struct agent *a);
void agent_write_ready_file(const char *path);
/* Until the command ends or a signal says stop; *status is the command's. */
int agent_run(struct agent *a, int *status);
void agent_stop_probes(struct agent *a);
/* The node file could not be written (a full disk): said once, the same
 * whether the loop or the last drain met it. */
void agent_report_write_error(struct agent *a, int err);
/* Every probe and link away (in the background where that is slow). */
void agent_detach_all(struct agent *a);
void agent_profile_snapshot(struct agent *a);
void agent_record_stats(struct agent *a);
unsigned long long agent_programs_missed(const struct agent *a);

#endif
