// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-agent: the per-node DataCrumbs agent. Parses its options, loads the
 * probe sets, loads and attaches the BPF programs, traces the job's processes
 * into a node file until the command exits (or SIGTERM), then cleans up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caps.h"
#include "config.h"
#include "control.h"
#include "counters.h"
#include "datacrumbs.skel.h"
#include "job_folder.h"
#include "launch.h"
#include "node_header.h"
#include "nodefile.h"
#include "options.h"
#include "probes.h"
#include "recorder.h"

#define POLL_MS 50
#define FLUSH_MS 1000
/* Events taken from the ring buffer before signals and the control socket
 * are looked at again: under a flood the ring never empties, and SIGTERM
 * and a rank's registration must still be answered within a second. */
#define BATCH_EVENTS 32768
/* Above the job's processes (nice 0): see main(). */
#define AGENT_NICE -10
#define MAX_SETS 64

static volatile sig_atomic_t stop_signal;

struct agent {
	struct dc_options opt;
	struct dc_probe_set sets[MAX_SETS];
	int nsets;
	struct datacrumbs_bpf *skel;
	struct dc_probes *probes;
	struct dc_writer *writer;
	struct dc_recorder *recorder;
	struct ring_buffer *rb;
	struct dc_child child;
	struct dc_control *control;
	int epoll_fd;
	struct dc_cpu_stats *stats;
	int ncpus;
	char job[64];
	char socket_path[108];
	int lock_fd; /* held: one agent per control socket */
	uid_t uid; /* the job's user */
	gid_t gid;
	char path[PATH_MAX];
	bool write_failed;
	unsigned batch; /* events taken in this batch */
	bool draining;  /* at the end: take everything */
};

static void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("dc-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
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

/* ---- setup ---- */

static int load_probe_sets(struct agent *a)
{
	const char *list = a->opt.s.probes ? a->opt.s.probes : "posix,stdio,syscalls";
	char dirs[PATH_MAX * 2], path[PATH_MAX], err[1024], name[256];
	const char *env = getenv("DC_PROBE_DIR");

	snprintf(dirs, sizeof(dirs), "%s:%s:%s", a->opt.s.probe_dir ? a->opt.s.probe_dir : "",
		 env ? env : "", DC_PROBE_DIRS);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len && len < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			if (a->nsets == MAX_SETS) {
				die_msg("at most %d probe sets", MAX_SETS);
				return -1;
			}
			if (dc_probe_set_find(name, dirs, path, sizeof(path))) {
				die_msg("probe set '%s' not found (looked for %s.yaml in %s)", name, name, dirs);
				return -1;
			}
			if (dc_probe_set_load(path, &a->sets[a->nsets], err, sizeof(err))) {
				die_msg("%s", err);
				return -1;
			}
			a->nsets++;
		}
		p += len + (p[len] == ',');
	}
	if (!a->nsets) {
		die_msg("--probes names no probe set");
		return -1;
	}
	return 0;
}

static int ensure_tracefs(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		return 0;
	die_msg("tracefs is not mounted and mounting it failed (%s): run "
		"'mount -t tracefs nodev /sys/kernel/tracing'", strerror(errno));
	return -1;
}

/* Settings the BPF programs only read: set in rodata before load. */
static void set_rodata(struct agent *a)
{
	struct datacrumbs_bpf__rodata *ro = a->skel->rodata;

	ro->dc_mode = a->opt.s.mode;
	for (int i = 0; i < a->nsets; i++)
		if (a->sets[i].dtype_size_offset)
			ro->dc_dtype_size_offset = a->sets[i].dtype_size_offset;
	if (a->opt.match_env) {
		struct stat st;

		ro->dc_env_match_len = strlen(a->opt.match_env);
		memcpy((char *)ro->dc_env_match, a->opt.match_env, ro->dc_env_match_len);
		/* This node's programs only: those in the agent's network namespace. */
		if (stat("/proc/self/ns/net", &st) == 0)
			ro->dc_netns_ino = st.st_ino;
		for (int i = 0; i < a->opt.nskip_comm; i++)
			memcpy((char *)ro->dc_skip_comm[i], a->opt.skip_comm[i], DC_COMM_LEN);
	}
}

static int load_bpf(struct agent *a)
{
	int err;

	a->skel = datacrumbs_bpf__open();
	if (!a->skel) {
		die_msg("cannot open the BPF programs: %s", strerror(errno));
		return -1;
	}
	set_rodata(a);
	bpf_map__set_max_entries(a->skel->maps.dc_events, (__u32)a->opt.s.ringbuf_mb << 20);
	dc_probes_prepare(a->skel);
	err = datacrumbs_bpf__load(a->skel);
	if (err) {
		die_msg("cannot load the BPF programs: %s%s", strerror(-err),
			err == -EPERM ? " (missing CAP_BPF or CAP_PERFMON?)"
				      : " (a kernel with BTF at /sys/kernel/btf/vmlinux is needed; -v shows why)");
		return -1;
	}
	/* Process life is needed in every mode: children join, exits free maps. */
	err = datacrumbs_bpf__attach(a->skel);
	if (err) {
		die_msg("cannot attach the process tracepoints: %s", strerror(-err));
		return -1;
	}
	return 0;
}

static int attach_probes(struct agent *a)
{
	int total = 0;

	a->probes = dc_probes_new(a->skel, a->opt.verbose);
	if (!a->probes) {
		die_msg("out of memory");
		return -1;
	}
	for (int i = 0; i < a->nsets; i++) {
		int n = dc_probes_attach(a->probes, &a->sets[i]);

		if (n < 0) {
			die_msg("out of memory attaching probe set '%s'", a->sets[i].name);
			return -1;
		}
		total += n;
	}
	if (!total) {
		die_msg("no probe could be attached: check the probe sets (-v shows details)");
		return -1;
	}
	return 0;
}

/* ---- the node file ---- */

/*
 * The job, its user and its control socket are settled before the command
 * starts: the command inherits DC_JOB_ID and DC_AGENT_SOCKET, so that MPI
 * ranks under it find this agent.
 */
static int resolve_job(struct agent *a)
{
	const char *slurm_uid = getenv("SLURM_JOB_UID");
	char err[256];
	struct passwd *pw;

	if (a->opt.s.job_id)
		snprintf(a->job, sizeof(a->job), "%s", a->opt.s.job_id);
	else
		dc_job_default_id(a->job, sizeof(a->job));
	if (!dc_job_id_valid(a->job)) {
		die_msg("job id '%s' must be 1-63 letters, digits, '.', '_' or '-'", a->job);
		return -1;
	}
	a->uid = a->opt.s.uid >= 0 ? (uid_t)a->opt.s.uid : slurm_uid ? (uid_t)atoi(slurm_uid) : getuid();
	a->gid = (pw = getpwuid(a->uid)) ? pw->pw_gid : getgid();
	if (a->opt.socket_path)
		snprintf(a->socket_path, sizeof(a->socket_path), "%s", a->opt.socket_path);
	else if (dc_ctl_socket_path(a->job, a->socket_path, sizeof(a->socket_path))) {
		die_msg("no control socket path for job %s: give --socket", a->job);
		return -1;
	}
	a->lock_fd = dc_control_claim(a->socket_path, err, sizeof(err));
	if (a->lock_fd < 0) {
		die_msg("%s", err);
		return -1;
	}
	if (setenv("DC_JOB_ID", a->job, 1) || setenv("DC_AGENT_SOCKET", a->socket_path, 1)) {
		die_msg("out of memory");
		return -1;
	}
	return 0;
}

static int create_node_file(struct agent *a)
{
	const char *out = a->opt.s.output ? a->opt.s.output : getenv("DC_OUTPUT_DIR");
	char base[PATH_MAX - 200], name[128], err[PATH_MAX + 256];
	struct dc_node_header h;
	int dir_fd;

	snprintf(base, sizeof(base), "%s", out && *out ? out : "datacrumbs");
	dir_fd = dc_job_folder_open(base, a->job, a->uid, a->gid, err, sizeof(err));
	if (dir_fd < 0) {
		die_msg("%s", err);
		return -1;
	}
	dc_node_header_fill(&h, a->job, a->opt.s.mode, a->opt.s.interval_ms, a->uid, a->ncpus);
	for (int i = 1; i < 1000; i++) {
		if (i == 1)
			snprintf(name, sizeof(name), "%s%s", h.hostname, DC_NODE_SUFFIX);
		else
			snprintf(name, sizeof(name), "%s.%d%s", h.hostname, i, DC_NODE_SUFFIX);
		snprintf(a->path, sizeof(a->path), "%s/%s/%s", base, a->job, name);
		a->writer = dc_writer_create_at(dir_fd, name, &h, a->uid, a->gid, a->opt.group_read ? 0640 : 0600,
						err, sizeof(err));
		if (a->writer || errno != EEXIST)
			break;
	}
	close(dir_fd);
	if (!a->writer) {
		die_msg("%s", err);
		return -1;
	}
	return 0;
}

static int write_function_table(struct agent *a)
{
	for (size_t i = 0; i < dc_probes_count(a->probes); i++) {
		const struct dc_function *f = dc_probes_function(a->probes, i);
		struct dc_func rec = {
			.id = i,
			.name = dc_writer_string(a->writer, f->name),
			.category = dc_writer_string(a->writer, f->category),
			.flags = f->flags,
		};

		if (dc_writer_func(a->writer, &rec))
			return -1;
	}
	return dc_writer_flush(a->writer);
}

/* ---- tracing ---- */

static int track_pid(struct agent *a, pid_t pid)
{
	__u32 key = pid, one = 1;

	if (bpf_map_update_elem(bpf_map__fd(a->skel->maps.dc_tracked), &key, &one, BPF_ANY)) {
		die_msg("cannot track pid %d: %s", pid, strerror(errno));
		return -1;
	}
	return dc_recorder_start_process(a->recorder, pid, now_ns(CLOCK_MONOTONIC));
}

static bool is_tracked(struct agent *a, __u32 pid)
{
	__u32 v;

	return bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.dc_tracked), &pid, &v) == 0;
}

/* A rank that registers joins the job if it was not traced yet (daemon mode). */
static int on_rank(void *ctx, const struct dc_ctl_msg *m)
{
	struct agent *a = ctx;

	if (m->type == DC_CTL_REGISTER && !is_tracked(a, m->pid) && track_pid(a, m->pid))
		return ENOMEM;
	if (a->opt.verbose)
		fprintf(stderr, "dc-agent: pid %u is rank %d of %d%s\n", m->pid, m->rank, m->world_size,
			m->type == DC_CTL_FINALIZE ? " (MPI_Finalize)" : "");
	return dc_recorder_rank(a->recorder, m, now_ns(CLOCK_MONOTONIC)) ? EIO : 0;
}

static int open_control(struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char err[256];

	a->control = dc_control_open(a->socket_path, a->uid, a->gid, a->job, on_rank, a, err, sizeof(err));
	if (!a->control) {
		die_msg("%s", err);
		return -1;
	}
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = dc_control_fd(a->control);
	if (a->epoll_fd < 0 || epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		die_msg("epoll: %s", strerror(errno));
		return -1;
	}
	ev.data.fd = ring_buffer__epoll_fd(a->rb);
	if (epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		die_msg("epoll: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct agent *a = ctx;

	dc_recorder_handle(a->recorder, data, len);
	if (++a->batch >= BATCH_EVENTS && !a->draining)
		return -EAGAIN; /* libbpf keeps what was taken and stops here */
	return 0;
}

/* Waits for ring buffer data or a rank at the socket, at most POLL_MS. */
static int wait_and_consume(struct agent *a)
{
	struct epoll_event evs[4];
	int n = epoll_wait(a->epoll_fd, evs, 4, POLL_MS);

	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++)
		if (evs[i].data.fd == dc_control_fd(a->control))
			dc_control_serve(a->control);
	a->batch = 0;
	n = ring_buffer__consume(a->rb);
	return n < 0 && n != -EAGAIN ? n : 0;
}

static int start_targets(struct agent *a)
{
	char err[512];

	for (int i = 0; i < a->opt.npids; i++) {
		if (kill(a->opt.pids[i], 0) && errno == ESRCH) {
			die_msg("--pid %d: no such process", a->opt.pids[i]);
			return -1;
		}
		if (track_pid(a, a->opt.pids[i]))
			return -1;
	}
	if (!a->opt.command)
		return 0;
	if (track_pid(a, a->child.pid))
		return -1;
	if (dc_launch_release(&a->child, a->opt.command[0], err, sizeof(err))) {
		a->child.pid = 0;
		die_msg("%s", err);
		return -1;
	}
	return 0;
}

static void write_ready_file(const char *path)
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

static void record_stats(struct agent *a)
{
	if (dc_stats_read(bpf_map__fd(a->skel->maps.dc_stats), a->stats, a->ncpus) == 0)
		dc_writer_stats(a->writer, a->stats, a->ncpus);
}

static void profile_snapshot(struct agent *a)
{
	__u32 exited[256];
	size_t n = dc_recorder_take_exited(a->recorder, exited, 256);

	dc_profile_snapshot(bpf_map__fd(a->skel->maps.dc_profile), a->ncpus, a->writer, now_ns(CLOCK_MONOTONIC),
			    exited, n);
}

/* A full disk stops the trace, never the job: detach and keep waiting. */
static void check_writer(struct agent *a)
{
	int err = dc_writer_error(a->writer);

	if (!err || a->write_failed)
		return;
	a->write_failed = true;
	die_msg("writing %s: %s; tracing stopped, the file holds everything up to its last "
		"complete chunk", a->path, strerror(err));
	dc_probes_destroy(a->probes);
	a->probes = NULL;
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

static int run(struct agent *a, int *status)
{
	__u64 next_flush = now_ns(CLOCK_MONOTONIC) + FLUSH_MS * 1000000ull;
	__u64 next_snapshot = now_ns(CLOCK_MONOTONIC) + a->opt.s.interval_ms * 1000000ull;
	int forwarded = 0;

	for (;;) {
		int n = wait_and_consume(a);
		__u64 now = now_ns(CLOCK_MONOTONIC);

		if (n < 0 && n != -EINTR) {
			die_msg("reading the ring buffer: %s", strerror(-n));
			return -1;
		}
		if (command_done(a, status) || handle_signal(a, &forwarded))
			break;
		if (a->opt.s.mode == DC_MODE_PROFILE && now >= next_snapshot) {
			profile_snapshot(a);
			next_snapshot = now + a->opt.s.interval_ms * 1000000ull;
		}
		if (now >= next_flush && !a->write_failed) {
			record_stats(a);
			dc_writer_flush(a->writer);
			next_flush = now + FLUSH_MS * 1000000ull;
		}
		check_writer(a);
	}
	return 0;
}

/* ---- clean-up ---- */

static void report(struct agent *a, unsigned long long events, int err)
{
	unsigned long long lost = dc_stats_total(a->stats, a->ncpus, DC_STAT_LOST);
	unsigned long long deep = dc_stats_total(a->stats, a->ncpus, DC_STAT_STACK_FULL);
	unsigned long long full = dc_stats_total(a->stats, a->ncpus, DC_STAT_MAP_FULL);

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
	if (!err && a->opt.s.mode == DC_MODE_PROFILE)
		fprintf(stderr, "dc-agent: per-process totals (profile mode) written to %s\n", a->path);
	else if (!err)
		fprintf(stderr, "dc-agent: %llu events written to %s\n", events, a->path);
}

static int finish(struct agent *a)
{
	unsigned long long events;
	int err;

	/* Detach first: nothing new arrives while the last events are drained. */
	dc_probes_destroy(a->probes);
	a->probes = NULL;
	a->draining = true;
	if (a->rb)
		ring_buffer__consume(a->rb);
	if (a->opt.s.mode == DC_MODE_PROFILE)
		profile_snapshot(a);
	record_stats(a);
	err = dc_writer_close(a->writer, &events);
	a->writer = NULL;
	if (err && !a->write_failed)
		die_msg("writing %s: %s", a->path, strerror(err));
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
	if (a->epoll_fd > 0)
		close(a->epoll_fd);
	ring_buffer__free(a->rb);
	dc_recorder_free(a->recorder);
	dc_probes_destroy(a->probes);
	if (a->writer) {
		dc_writer_close(a->writer, NULL);
	}
	datacrumbs_bpf__destroy(a->skel);
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

static int setup(struct agent *a)
{
	char msg[512];

	if (dc_check_capabilities(msg, sizeof(msg))) {
		die_msg("%s", msg);
		return -1;
	}
	if (load_probe_sets(a) || ensure_tracefs() || resolve_job(a))
		return -1;
	a->ncpus = libbpf_num_possible_cpus();
	a->stats = calloc(a->ncpus > 0 ? a->ncpus : 1, sizeof(*a->stats));
	if (a->ncpus <= 0 || !a->stats) {
		die_msg("cannot count the CPUs");
		return -1;
	}
	if (a->opt.command && dc_launch(a->opt.command, &a->child, msg, sizeof(msg))) {
		die_msg("%s", msg);
		return -1;
	}
	if (load_bpf(a) || attach_probes(a) || create_node_file(a) || write_function_table(a))
		return -1;
	a->recorder = dc_recorder_new(a->writer);
	a->rb = a->recorder ? ring_buffer__new(bpf_map__fd(a->skel->maps.dc_events), on_sample, a, NULL)
			    : NULL;
	if (!a->rb) {
		die_msg("cannot set up the ring buffer: %s", strerror(errno));
		return -1;
	}
	return open_control(a);
}

int main(int argc, char **argv)
{
	static struct agent a = { .child = { .gate_fd = -1, .err_fd = -1 }, .lock_fd = -1 };
	int status = 0, rc;

	rc = dc_options_parse(argc, argv, &a.opt);
	if (rc)
		return rc > 0 ? 0 : 2;
	libbpf_set_print(a.opt.verbose > 1 ? libbpf_print : quiet_print);
	handle_signals();

	if (setup(&a) || start_targets(&a)) {
		cleanup(&a);
		return 1;
	}
	/* The agent's work is the job's events: it must keep up with them
	 * when the job keeps every core busy, or they are lost. */
	if (setpriority(PRIO_PROCESS, 0, AGENT_NICE) && a.opt.verbose)
		fprintf(stderr, "dc-agent: cannot raise its priority: %s\n", strerror(errno));
	write_ready_file(a.opt.ready_file);
	if (!a.opt.command && !a.opt.npids && !a.opt.match_env)
		fprintf(stderr, "dc-agent: no command, --pid or --match-env: tracing only the MPI ranks that register "
				"at %s (libdcpmpi.so, DC_JOB_ID=%s), into %s, until SIGTERM or SIGINT\n",
			a.socket_path, a.job, a.path);
	if (a.opt.verbose)
		fprintf(stderr, "dc-agent: tracing into %s\n", a.path);
	rc = run(&a, &status);
	rc = finish(&a) || rc;
	if (a.opt.ready_file)
		unlink(a.opt.ready_file);
	cleanup(&a);
	if (a.opt.command)
		return exit_code(status);
	return rc ? 1 : 0;
}
