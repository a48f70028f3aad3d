// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dc-agent's loop: the ring buffer, the ranks at the control socket and
 * their MPI-IO rings, the job's processes, signals. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "control.h"
#include "event_rings.h"
#include "counters.h"
#include "datacrumbs.skel.h"
#include "links.h"
#include "probes.h"
#include "proc_check.h"
#include "lib_files.h"
#include "proc_watch.h"
#include "rank_rings.h"
#include "topology.h"
#include "recorder.h"

/* ---- tracing ---- */

/* The command: the agent's own child, whose pid no other process gets
 * before the agent has waited for it. Its links are made before it execs,
 * and follow it through the exec. */
static int track_child(struct agent *a, pid_t pid)
{
	__u32 key = pid, one = 1;

	if (bpf_map_update_elem(bpf_map__fd(a->skel->maps.dc_tracked), &key, &one, BPF_ANY)) {
		die_msg("cannot track pid %d: %s", pid, strerror(errno));
		return -1;
	}
	dc_probes_track(a->probes, pid); /* its uprobe links, if per process (a failure is said) */
	return dc_recorder_start_process(a->recorder, pid, dc_now_ns(CLOCK_MONOTONIC));
}

/* Any other process: tied to it by its pidfd (taken over), 0 or an errno.
 * A process that registers waits for the answer, so has its links first. */
static int track_process(struct agent *a, int pidfd, pid_t pid, char *why, size_t len)
{
	int err = dc_proc_watch_track(a->watch, pidfd, pid);

	if (err == ESRCH)
		snprintf(why, len, "pid %d has exited", (int)pid);
	else if (err == EMFILE)
		snprintf(why, len, "the agent watches %d registered processes already", DC_PROC_WATCH_MAX);
	else if (err)
		snprintf(why, len, "cannot track pid %d: %s", (int)pid, strerror(err));
	if (err)
		return err;
	dc_probes_track(a->probes, pid); /* its uprobe links, if per process */
	return dc_recorder_start_process(a->recorder, pid, dc_now_ns(CLOCK_MONOTONIC)) ? EIO : 0;
}

static bool is_tracked(struct agent *a, __u32 pid)
{
	__u32 v;

	return bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.dc_tracked), &pid, &v) == 0;
}

/*
 * A rank (libdcpmpi.so) or a preloaded process (libdcpreload.so) that
 * registers joins the job if it was not traced yet (daemon mode); its
 * ring is kept with a pidfd of it, so that the ring goes when the process
 * does, even without a word.
 */
static int on_rank(void *ctx, const struct dc_ctl_msg *m, int ring_fd, int pidfd, char *why, size_t whylen,
		   char *note, size_t len)
{
	struct agent *a = ctx;
	__u64 now = dc_now_ns(CLOCK_MONOTONIC);
	bool rank = DC_CTL_OF_RANK(m->type);
	int err, keep = -1;

	if ((m->flags & DC_CTL_FLAG_RING) && pidfd >= 0)
		keep = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
	if (DC_CTL_STARTS(m->type) && !is_tracked(a, m->pid)) {
		err = track_process(a, pidfd, m->pid, why, whylen);
		if (err) {
			if (ring_fd >= 0)
				close(ring_fd);
			if (keep >= 0)
				close(keep);
			return err;
		}
	} else {
		close(pidfd);
	}
	/* A ring turned down leaves the process registered, its calls unrecorded. */
	if ((m->flags & DC_CTL_FLAG_RING) && dc_rank_rings_add(a->rings, m->pid, ring_fd, keep, note, len)) {
		if (rank)
			fprintf(stderr, "dc-agent: warning: pid %u (rank %d): %s\n", m->pid, m->rank, note);
		else
			fprintf(stderr, "dc-agent: warning: pid %u: %s\n", m->pid, note);
	}
	if (!DC_CTL_STARTS(m->type))
		dc_rank_rings_finish(a->rings, m->pid, now);
	if (a->opt.verbose && rank)
		fprintf(stderr, "dc-agent: pid %u is rank %d of %d%s\n", m->pid, m->rank, m->world_size,
			m->type == DC_CTL_FINALIZE ? " (MPI_Finalize)" : "");
	else if (a->opt.verbose)
		fprintf(stderr, "dc-agent: pid %u %s (libdcpreload)\n", m->pid,
			m->type == DC_CTL_EXIT ? "exits" : "registered");
	if (!rank)
		return 0;
	return dc_recorder_rank(a->recorder, m, now) ? EIO : 0;
}

int agent_open_control(struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char err[256];

	a->watch = dc_proc_watch_new(bpf_map__fd(a->skel->maps.dc_tracked));
	if (!a->watch) {
		die_msg("cannot watch processes: %s", strerror(errno));
		return -1;
	}
	a->control = dc_control_open(a->socket_path, a->uid, a->gid, a->job, on_rank, a, err, sizeof(err));
	if (!a->control) {
		die_msg("%s", err);
		return -1;
	}
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = dc_control_fd(a->control);
	if (a->epoll_fd < 0 || epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev) ||
	    epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, dc_proc_watch_fd(a->watch),
		      &(struct epoll_event){ .events = EPOLLIN, .data.fd = dc_proc_watch_fd(a->watch) })) {
		die_msg("epoll: %s", strerror(errno));
		return -1;
	}
	ev.data.fd = dc_lib_files_fd(a->libs);
	if (dc_event_rings_watch(a->events, a->epoll_fd) ||
	    (ev.data.fd >= 0 && epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))) {
		die_msg("epoll: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void agent_on_record(void *ctx, void *data, size_t len, __u64 time)
{
	struct agent *a = ctx;

	/* The ranks' calls that ended first go first. */
	dc_rank_rings_upto(a->rings, time);
	dc_recorder_handle(a->recorder, data, len);
}

/*
 * Waits for ring buffer data or a rank at the socket, at most POLL_MS
 * (RING_POLL_MS while ranks hold rings, RING_BUSY_POLL_MS while they
 * fill fast); not at all while the last round
 * took a whole batch. A ring wakes the agent once, as it passes its mark
 * (edge-triggered): had the agent slept on with records left above the
 * mark, it would have taken one batch a timer tick, 655 k records a
 * second, and lost the rest of a faster flood.
 */
static int wait_and_consume(struct agent *a)
{
	struct epoll_event evs[4];
	int timeout = a->backlog			   ? 0
		      : dc_rank_rings_busy(a->rings)	   ? RING_BUSY_POLL_MS
		      : dc_rank_rings_active(a->rings) ? RING_POLL_MS
						       : POLL_MS;
	int n = epoll_wait(a->epoll_fd, evs, 4, timeout);
	__u64 upto;

	if (n < 0 && errno != EINTR)
		return -errno;
	/* Each time round, not only when it is ready: silent clients expire. */
	dc_control_serve(a->control);
	dc_proc_watch_serve(a->watch);
	dc_lib_files_serve(a->libs);
	upto = dc_now_ns(CLOCK_MONOTONIC) - DC_RING_SLACK_NS;
	dc_rank_rings_sweep(a->rings, upto);
	dc_rank_rings_begin(a->rings);
	n = dc_event_rings_consume(a->events, false, BATCH_EVENTS);
	a->backlog = n >= BATCH_EVENTS;
	dc_rank_rings_end(a->rings, upto);
	return n < 0 ? n : 0;
}

/*
 * The loop wakes the moment the command ends, not at its next timeout
 * (POLL_MS would be most of a short job's cost): a pidfd is readable once
 * the process has exited. Without one (seccomp, Linux before 5.3) the
 * timeout notices it.
 */
static void watch_child(struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = (int)syscall(SYS_pidfd_open, a->child.pid, 0);

	if (fd < 0)
		return;
	ev.data.fd = fd;
	if (epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		return;
	}
	a->child_fd = fd;
}

/* --pid: a process that runs now (and, run by a user other than root,
 * one that user could trace itself: setup.c checked it before the load). */
static int track_named(struct agent *a, pid_t pid)
{
	char why[256];
	int pidfd = dc_pid_open(pid), err;

	if (pidfd < 0) {
		die_msg("--pid %d: no such process", (int)pid);
		return -1;
	}
	if ((err = dc_proc_check_caller(pidfd, pid, why, sizeof(why)))) {
		close(pidfd);
		die_msg("--pid %d: %s", (int)pid, why);
		return -1;
	}
	if ((err = track_process(a, pidfd, pid, why, sizeof(why)))) {
		die_msg("--pid %d: %s", (int)pid, why);
		return -1;
	}
	return 0;
}

int agent_start_targets(struct agent *a)
{
	char err[512];
	int rc;

	for (int i = 0; i < a->opt.npids; i++)
		if (track_named(a, a->opt.pids[i]))
			return -1;
	if (!a->opt.command)
		return 0;
	if (track_child(a, a->child.pid))
		return -1;
	rc = dc_launch_release(&a->child, a->opt.command[0], err, sizeof(err));
	if (rc < 0) {
		a->child.pid = 0;
		die_msg("%s", err);
		return -1;
	}
	/* Traced to its end, 127 as a shell's, and the agent's exit status too. */
	if (rc > 0)
		die_msg("%s", err);
	watch_child(a);
	return 0;
}

void agent_write_ready_file(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		die_msg("warning: cannot create ready file %s: %s", path, strerror(errno));
		return;
	}
	dprintf(fd, "%d\n", (int)getpid());
	close(fd);
}

/*
 * Runs of the agent's programs the kernel skipped: a kprobe or tracepoint
 * program whose interrupt landed while another such program ran on its
 * CPU (they share one guard), or a program that ran into itself. Counted
 * by Linux 5.12 and later; the per-function copies of older kernels are
 * not asked.
 */
unsigned long long agent_programs_missed(const struct agent *a)
{
	unsigned long long n = 0;
	struct bpf_program *prog;

	if (!a->skel)
		return 0;
	bpf_object__for_each_program(prog, a->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

void agent_record_stats(struct agent *a)
{
	if (dc_stats_read(bpf_map__fd(a->skel->maps.dc_stats), a->stats, a->ncpus) == 0)
		dc_writer_stats(a->writer, a->stats, a->ncpus);
}

void agent_profile_snapshot(struct agent *a)
{
	__u32 exited[256];
	size_t n = dc_recorder_take_exited(a->recorder, exited, 256);

	__u64 now = dc_now_ns(CLOCK_MONOTONIC);

	dc_profile_snapshot(bpf_map__fd(a->skel->maps.dc_profile), a->ncpus, a->writer, now, exited, n);
	dc_rank_rings_snapshot(a->rings, now);
}

/*
 * Nothing new is seen from here on: the programs stop at once, and the
 * probes are detached now where that is quick, else last of all, in the
 * background (dc_probes_destroy_detached).
 */
void agent_stop_probes(struct agent *a)
{
	if (a->skel && a->skel->bss)
		a->skel->bss->dc_stopped = 1;
}

/*
 * Every link and probe in one batch: the kernel waits a grace period to
 * take each away, and waits side by side share it. Probes take 0.1 s (a
 * uprobe_multi link) to seconds (per-function probes, no uprobe_multi)
 * even so: a child detaches those, and this process ends without waiting.
 */
void agent_detach_all(struct agent *a)
{
	struct bpf_link *own[4] = { 0 };
	__u64 t0 = dc_now_ns(CLOCK_MONOTONIC);
	pid_t pid;

	/* The detaching child below does more than exec. */
	dc_topology_wait();
	agent_stop_probes(a);
	/* No process stops from here on: any still stopped goes on. */
	dc_lib_files_free(a->libs);
	a->libs = NULL;
	if (a->skel) {
		struct bpf_link **l[] = { &a->skel->links.dc_fork, &a->skel->links.dc_exit, &a->skel->links.dc_exec,
					  &a->skel->links.dc_exec_bounded };

		for (int i = 0; i < 4; i++) {
			own[i] = *l[i];
			*l[i] = NULL;
		}
	}
	if (!a->probes || dc_probes_adopt_links(a->probes, own, 4)) {
		dc_links_destroy(own, 4);
		dc_probes_destroy(a->probes);
	} else if ((pid = dc_probes_destroy_detached(a->probes)) > 0 && a->opt.verbose) {
		fprintf(stderr, "dc-agent: pid %d detaches the probes in the background (they are stopped)\n",
			(int)pid);
	}
	a->probes = NULL;
	a->t.detach = dc_now_ns(CLOCK_MONOTONIC) - t0;
}

void agent_report_write_error(struct agent *a, int err)
{
	if (!err || a->write_failed)
		return;
	a->write_failed = true;
	die_msg("writing %s: %s; tracing stopped, the file holds everything up to its last "
		"complete chunk", a->path, strerror(err));
}

/* A full disk stops the trace, never the job: detach and keep waiting. */
static void check_writer(struct agent *a)
{
	int err = dc_writer_error(a->writer);

	if (!err || a->write_failed)
		return;
	agent_report_write_error(a, err);
	agent_detach_all(a);
}

static bool command_done(struct agent *a, int *status)
{
	if (!a->opt.command || a->child.pid <= 0)
		return false;
	if (waitpid(a->child.pid, status, WNOHANG) != a->child.pid)
		return false;
	a->child.pid = 0;
	return true;
}

/* Forwards the first SIGINT/SIGTERM to the command; a second stops the agent. */
static bool handle_signal(struct agent *a, int *forwarded)
{
	int sig = stop_signal;

	if (!sig)
		return false;
	if (!a->opt.command || a->child.pid <= 0 || *forwarded)
		return true;
	stop_signal = 0;
	*forwarded = sig;
	kill(a->child.pid, sig);
	return false;
}

int agent_run(struct agent *a, int *status)
{
	__u64 next_flush = dc_now_ns(CLOCK_MONOTONIC) + FLUSH_MS * 1000000ull;
	__u64 next_snapshot = dc_now_ns(CLOCK_MONOTONIC) + a->opt.s.interval_ms * 1000000ull;
	int forwarded = 0;

	for (;;) {
		int n = wait_and_consume(a);
		__u64 now = dc_now_ns(CLOCK_MONOTONIC);

		a->wakeups++;
		if (n < 0 && n != -EINTR) {
			die_msg("reading the ring buffer: %s", strerror(-n));
			return -1;
		}
		if (command_done(a, status) || handle_signal(a, &forwarded))
			break;
		if (a->opt.s.mode == DC_MODE_PROFILE && now >= next_snapshot) {
			agent_profile_snapshot(a);
			next_snapshot = now + a->opt.s.interval_ms * 1000000ull;
		}
		if (now >= next_flush && !a->write_failed) {
			agent_record_stats(a);
			dc_writer_flush(a->writer);
			next_flush = now + FLUSH_MS * 1000000ull;
		}
		check_writer(a);
	}
	return 0;
}
