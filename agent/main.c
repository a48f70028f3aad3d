// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-agent: the per-node DataCrumbs agent. Parses its options, loads the
 * probe sets, loads and attaches the BPF programs, traces the job's processes
 * into a node file until the command exits (or SIGTERM), then cleans up.
 */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "control.h"
#include "event_rings.h"
#include "counters.h"
#include "escape.h"
#include "datacrumbs.skel.h"
#include "ksyms.h"
#include "proc_watch.h"
#include "rank_rings.h"
#include "recorder.h"
#include "slurm_context.h"
#include "start_heap.h"

volatile sig_atomic_t stop_signal;

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("dc-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double ms(__u64 ns)
{
	return ns / 1e6;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* A blocked signal mask survives exec: srun runs its prolog with SIGTERM
 * blocked, and an agent started from there must still hear the epilog. */
static void handle_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
}

static void print_times(const struct agent *a)
{
	__u64 decode = a->probes_decode_ns;

	fprintf(stderr,
		"dc-agent: time: start %.0f ms (options and sets %.0f, kernel features %.0f, BPF load with BTF %.0f, "
		"site analysis %.0f, attach %.0f, node file %.0f)\n",
		ms(a->t.ready - a->t.start), ms(a->t.setup - a->t.start), ms(a->t.features - a->t.setup),
		ms(a->t.load - a->t.features), ms(decode), ms(a->t.attach - a->t.load - decode),
		ms(a->t.ready - a->t.attach));
}

__u64 agent_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* -v: what tracing cost the node besides the probes: the agent's CPU from
 * ready to the end, per event written, and how often it woke. */
static void print_own_work(const struct agent *a, unsigned long long events)
{
	double cpu = (double)(agent_cpu_ns() - a->cpu_at_ready_ns);
	double secs = (dc_now_ns(CLOCK_MONOTONIC) - a->t.ready) / 1e9;

	fprintf(stderr, "dc-agent: own work: %.1f ms of CPU while tracing, %.0f ns an event (%llu events); %llu "
			"wake-ups, %.0f a second\n",
		cpu / 1e6, events ? cpu / events : 0.0, events, a->wakeups, secs > 0 ? a->wakeups / secs : 0.0);
	/* Records whose program took longer than the merge waits (a CPU
	 * stopped between the clock read and the commit): in the file, and
	 * their paths looked up as they came. */
	if (a->events && dc_event_rings_late(a->events))
		fprintf(stderr, "dc-agent: %llu records came after newer ones had been written\n",
			dc_event_rings_late(a->events));
}

/* A path as a shell takes it back: as it is, or in single quotes. */
static void put_shell_word(const char *s)
{
	if (s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+=:,@%")] == 0) {
		fputs(s, stderr);
		return;
	}
	fputc('\'', stderr);
	for (; *s; s++)
		fputs(*s == '\'' ? "'\\''" : (char[]){ *s, 0 }, stderr);
	fputc('\'', stderr);
}

/* The commands that take the node file on: its folder is the job's. */
static void say_next(const char *node_file)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", node_file);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	fputs("dc-agent: next: dc-summary ", stderr);
	put_shell_word(dir);
	fputs(" (the report; --html FILE for a web page); dc-merge ", stderr);
	put_shell_word(dir);
	fputs(" -f perfetto (a trace for ui.perfetto.dev, written beside the node files)\n", stderr);
}

static void report(struct agent *a, unsigned long long events, int err)
{
	unsigned long long lost = dc_stats_total(a->stats, a->ncpus, DC_STAT_LOST);
	unsigned long long deep = dc_stats_total(a->stats, a->ncpus, DC_STAT_STACK_FULL);
	unsigned long long full = dc_stats_total(a->stats, a->ncpus, DC_STAT_MAP_FULL);
	unsigned long long missed = agent_programs_missed(a), unread;
	const char *names;

	if (lost) {
		fprintf(stderr, "dc-agent: warning: %llu events lost (ring buffer full):", lost);
		for (int c = 0; c < a->ncpus; c++)
			if (a->stats[c].stat[DC_STAT_LOST])
				fprintf(stderr, " cpu%d=%llu", c, (unsigned long long)a->stats[c].stat[DC_STAT_LOST]);
		fprintf(stderr, "; raise --ringbuf-mb\n");
	}
	if (deep)
		fprintf(stderr,
			"dc-agent: warning: %llu calls were not traced: nested deeper than %d levels, or on a thread "
			"the kernel had no memory to keep a frame for\n",
			deep, DC_MAX_DEPTH);
	if (full)
		fprintf(stderr, "dc-agent: warning: %llu updates found a BPF map full\n", full);
	if (missed)
		fprintf(stderr, "dc-agent: warning: the kernel skipped the agent's programs %llu times (one ran while "
				"another held its CPU's guard): events may be missing\n", missed);
	if (a->recorder && (unread = dc_recorder_env_unread(a->recorder, &names)))
		fprintf(stderr, "dc-agent: warning: --match-env could not read the whole environment of %llu "
				"programs, which may have been missed: %s%s\n", unread, dc_text_view(names),
			unread > 8 ? ", ..." : "");
	if (a->opt.verbose)
		print_times(a);
	if (a->opt.verbose && a->t.ready)
		print_own_work(a, events);
	if (!err && a->opt.s.mode == DC_MODE_PROFILE)
		fprintf(stderr, "dc-agent: per-process totals (profile mode) written to %s\n", a->path);
	else if (!err)
		fprintf(stderr, "dc-agent: %llu events written to %s\n", events, a->path);
	if (!err)
		say_next(a->path);
}

static int finish(struct agent *a)
{
	unsigned long long events;
	int err;

	/* Stop first: nothing new arrives while the last events are drained. */
	agent_stop_probes(a);
	dc_rank_rings_begin(a->rings);
	if (a->events)
		dc_event_rings_consume(a->events, true, 0);
	dc_rank_rings_end(a->rings, ~0ull);
	if (a->opt.s.mode == DC_MODE_PROFILE)
		agent_profile_snapshot(a);
	/* Ranks that never finalized (crashed): what their rings hold counts. */
	dc_rank_rings_free(a->rings, dc_now_ns(CLOCK_MONOTONIC));
	a->rings = NULL;
	agent_record_stats(a);
	err = dc_writer_close(a->writer, &events);
	a->writer = NULL;
	agent_report_write_error(a, err);
	report(a, events, err);
	return err ? -1 : 0;
}

static void cleanup(struct agent *a)
{
	if (a->child.pid > 0) {
		dc_launch_abort(&a->child);
	}
	dc_control_close(a->control);
	dc_control_release(a->socket_path, a->lock_fd);
	dc_proc_watch_free(a->watch);
	if (a->epoll_fd > 0)
		close(a->epoll_fd);
	if (a->child_fd > 0)
		close(a->child_fd);
	dc_event_rings_free(a->events);
	dc_rank_rings_free(a->rings, 0);
	dc_recorder_free(a->recorder);
	if (a->writer) {
		dc_writer_close(a->writer, NULL);
	}
	agent_detach_all(a);
	if (a->opt.verbose && a->t.ready)
		fprintf(stderr, "dc-agent: time: stop: detach %.0f ms\n", ms(a->t.detach));
	datacrumbs_bpf__destroy(a->skel);
	dc_ksyms_free(a->ksyms);
	for (int i = 0; i < a->nsets; i++)
		dc_probe_set_free(&a->sets[i]);
	free(a->stats);
	dc_options_free(&a->opt);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int main(int argc, char **argv)
{
	static struct agent a = { .child = { .gate_fd = -1, .err_fd = -1 }, .lock_fd = -1 };
	int status = 0, rc;

	a.t.start = dc_now_ns(CLOCK_MONOTONIC);
	dc_start_heap();
	/* As srun's or slurmd's prolog or epilog: dc-prolog's or dc-epilog's work. */
	dc_slurm_context_take();
	rc = dc_options_parse(argc, argv, &a.opt);
	if (rc)
		return rc > 0 ? 0 : 2;
	libbpf_set_print(a.opt.verbose > 1 ? libbpf_print : quiet_print);
	if (a.opt.check)
		return agent_check_kernel(&a);
#ifdef DC_BENCH_WITHOUT
	fprintf(stderr, "dc-agent: warning: a benchmark build whose BPF programs leave out their " DC_BENCH_WITHOUT
			" (DC_BENCH_WITHOUT): what it writes is not a trace\n");
#endif
	handle_signals();

	if (agent_setup(&a) || agent_start_targets(&a)) {
		cleanup(&a);
		return 1;
	}
	/* The agent's work is the job's events: it must keep up with them
	 * when the job keeps every core busy, or they are lost. */
	if (setpriority(PRIO_PROCESS, 0, AGENT_NICE) && a.opt.verbose)
		fprintf(stderr, "dc-agent: cannot raise its priority: %s\n", strerror(errno));
	a.t.ready = dc_now_ns(CLOCK_MONOTONIC);
	a.cpu_at_ready_ns = agent_cpu_ns();
	agent_write_ready_file(a.opt.ready_file);
	if (!a.opt.command && !a.opt.npids && !a.opt.match_env)
		fprintf(stderr, "dc-agent: no command, --pid or --match-env: tracing only the MPI ranks that register "
				"at %s (libdcpmpi.so, DC_JOB_ID=%s), into %s, until SIGTERM or SIGINT\n",
			a.socket_path, a.job, a.path);
	if (a.opt.verbose)
		fprintf(stderr, "dc-agent: tracing into %s\n", a.path);
	rc = agent_run(&a, &status);
	rc = finish(&a) || rc;
	if (a.opt.ready_file)
		unlink(a.opt.ready_file);
	cleanup(&a);
	if (a.opt.command)
		return exit_code(status);
	return rc ? 1 : 0;
}
