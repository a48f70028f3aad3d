// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dc-agent's setup: probe sets, the kernel's features, the BPF programs and
 * their probes, the job and its node file. */
#include "agent.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caps.h"
#include "control.h"
#include "event_rings.h"
#include "datacrumbs.skel.h"
#include "job_folder.h"
#include "ksyms.h"
#include "lib_files.h"
#include "node_header.h"
#include "preload_env.h"
#include "probes.h"
#include "proc_check.h"
#include "rank_ring.h"
#include "rank_rings.h"
#include "recorder.h"
#include "site_cache.h"
#include "start_heap.h"
#include "test_hooks.h"
#include "topology.h"

/* ---- setup ---- */

/*
 * The default sets. STDIO: recorded by libdcpreload.so in the processes of
 * the command the agent starts (preload_command), at a function call's
 * cost and none to other processes; by uprobes where there is no command
 * to preload (--pid, --daemon).
 */
#define DEFAULT_SETS "posix,stdio-wrapper,syscalls"
#define DEFAULT_SETS_NO_COMMAND "posix,stdio,syscalls"

static int load_probe_sets(struct agent *a)
{
	const char *list = a->opt.s.probes		       ? a->opt.s.probes
			   : a->opt.command && !a->opt.npids ? DEFAULT_SETS
							     : DEFAULT_SETS_NO_COMMAND;
	char dirs[PATH_MAX * 2], path[PATH_MAX], err[1024], name[256];
	const char *env = getenv("DC_PROBE_DIR");
	const char *first = a->opt.s.probe_dir && *a->opt.s.probe_dir ? a->opt.s.probe_dir : NULL;

	/* --probe-dir, then $DC_PROBE_DIR, then the installed and source sets:
	 * only those given, so that an error shows a search path. */
	env = env && *env ? env : NULL;
	snprintf(dirs, sizeof(dirs), "%s%s%s%s%s", first ? first : "", first ? ":" : "", env ? env : "", env ? ":" : "",
		 DC_PROBE_DIRS);
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

/* Whether a set of this kind (and, for DC_SET_KERNEL, this group) is asked for. */
static bool has_set(const struct agent *a, enum dc_set_kind kind, const char *kernel)
{
	for (int i = 0; i < a->nsets; i++)
		if (a->sets[i].kind == kind && (!kernel || strcmp(a->sets[i].kernel, kernel) == 0))
			return true;
	return false;
}

/* What this kernel offers decides each level's programs. */
static int load_bpf(struct agent *a)
{
	char target[256], err[512];
	const char *fentry = NULL;
	bool kfuncs = has_set(a, DC_SET_KFUNCS, NULL);

	a->t.setup = dc_now_ns(CLOCK_MONOTONIC);
	dc_features_probe(&a->feat, DC_FEATURES_START | (kfuncs ? DC_FEATURES_KFUNCS : 0) |
					    (has_set(a, DC_SET_KERNEL, "io_uring") ? DC_FEATURES_URING : 0) |
					    (has_set(a, DC_SET_KERNEL, "mmap") ? DC_FEATURES_MMAP : 0) |
					    (has_set(a, DC_SET_UPROBES, NULL) ? DC_FEATURES_USER : 0));
	a->t.features = dc_now_ns(CLOCK_MONOTONIC);
	if (kfuncs) {
		a->ksyms = dc_ksyms_open(err, sizeof(err));
		if (!a->ksyms)
			die_msg("warning: %s: kernel function sets are skipped", err);
		else if (a->feat.has[DC_FEAT_FENTRY] &&
			 dc_ksyms_first_fentry(a->ksyms, a->sets, a->nsets, DC_FENTRY_MAX_ARGS, target, sizeof(target)) == 0)
			fentry = target;
	}
	dc_load_plan_make(&a->plan, a->sets, a->nsets, &a->feat, fentry);
	/* Scattered records need rings to scatter over, whatever the CPUs. */
	a->plan.ring_scatter = dc_test_ring_scatter();
	a->plan.job_uid = a->uid;
	dc_event_rings_size(a->opt.s.ringbuf_mb, a->plan.ring_scatter && a->ncpus < 4 ? 4 : a->ncpus, &a->plan.nrings,
			    &a->plan.ring_bytes);
	a->skel = dc_bpf_load(&a->plan, &a->feat, &a->opt, a->sets, a->nsets);
	dc_start_heap_done();
	a->t.load = dc_now_ns(CLOCK_MONOTONIC);
	if (!a->skel)
		return -1;
	/* The load of the system-call programs is tp_btf's probe: the
	 * report says what it found, as --check does. */
	if (a->plan.want[DC_LEVEL_SYSCALLS]) {
		a->feat.has[DC_FEAT_TP_BTF] = a->plan.tp_btf;
		a->feat.probed[DC_FEAT_TP_BTF] = true;
	}
	if (a->opt.verbose)
		dc_features_report(&a->feat, stderr);
	/* Before any probe is attached: a program's first record finds its ring. */
	a->events = dc_event_rings_new(bpf_map__fd(a->skel->maps.dc_rings), a->plan.nrings, a->plan.ring_bytes,
				       dc_recorder_msg_time, agent_on_record, a, err, sizeof(err));
	if (!a->events) {
		die_msg("%s", err);
		return -1;
	}
	if (a->opt.verbose)
		fprintf(stderr, "dc-agent: %u ring buffers of %u KiB%s\n", a->plan.nrings, a->plan.ring_bytes >> 10,
			a->plan.ring_scatter ? ", records scattered (DC_TEST_RING_SCATTER)" : "");
	return 0;
}

static int attach_probes(struct agent *a)
{
	int total = 0;

	const char *cache = a->opt.s.site_cache ? a->opt.s.site_cache : DC_SITE_CACHE_DIR;

	a->probes = dc_probes_new(a->skel, &a->feat, &a->plan, a->ksyms, strcmp(cache, "none") ? cache : NULL,
				  a->opt.verbose);
	if (!a->probes) {
		die_msg("out of memory");
		return -1;
	}
	/* Wrapper sets first: a uprobe set leaves the calls they serve alone. */
	for (int k = 0; k < 2 * a->nsets; k++) {
		int i = k % a->nsets, n;

		if ((k < a->nsets) != (a->sets[i].kind == DC_SET_WRAPPER))
			continue;
		if ((n = dc_probes_attach(a->probes, &a->sets[i])) < 0) {
			die_msg("out of memory attaching probe set '%s'", a->sets[i].name);
			return -1;
		}
		total += n;
	}
	a->libs = dc_lib_files_new(a->skel, a->probes, a->sets, a->nsets, a->preload[0] ? a->preload : NULL,
				   a->opt.verbose);
	a->t.attach = dc_now_ns(CLOCK_MONOTONIC);
	a->probes_decode_ns = dc_probes_decode_ns(a->probes);
	if (!total) {
		die_msg("no probe could be attached: check the probe sets (-v shows details)");
		return -1;
	}
	return 0;
}

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
	/* Run by another user than root, the job is that user's own (check_caller). */
	if (getuid() != 0)
		a->uid = getuid();
	else
		a->uid = a->opt.s.uid >= 0 ? (uid_t)a->opt.s.uid : slurm_uid ? (uid_t)atoi(slurm_uid) : 0;
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

/* libdcpreload.so for the command's processes, where a wrapper set of
 * STDIO or HDF5 asks for it; one that cannot be found is said, and those
 * calls go unrecorded. */
static int preload_command(struct agent *a)
{
	char path[PATH_MAX], why[PATH_MAX + 128];

	if (a->opt.no_preload || !dc_preload_wanted(a->sets, a->nsets))
		return 0;
	if (dc_preload_find(DC_PRELOAD_PATHS, getuid(), path, sizeof(path), why, sizeof(why))) {
		fprintf(stderr, "dc-agent: warning: %s: the command's STDIO and HDF5 calls are recorded only where it "
				"preloads it itself\n", why);
		return 0;
	}
	if (dc_preload_export(path)) {
		die_msg("out of memory");
		return -1;
	}
	if (a->opt.verbose)
		fprintf(stderr, "dc-agent: the command's processes preload %s\n", path);
	snprintf(a->preload, sizeof(a->preload), "%s", path);
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

/* A perf event per probe where the kernel has no uprobe_multi: thousands
 * of descriptors. The command was forked before this and keeps its own. */
static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

static struct dc_rank_rings *new_rings(struct agent *a)
{
	__u32 ids[DC_RING_MAX_FUNCS];
	struct dc_funcs asked = dc_probes_wrapper(a->probes, ids, DC_RING_MAX_FUNCS);

	return dc_rank_rings_new(a->recorder, a->writer, a->opt.s.mode, &asked, ids);
}

/* --check: the kernel's features and each level's mechanism. */
int agent_check_kernel(struct agent *a)
{
	const char *const *never;
	char msg[512];
	size_t nnever;
	int levels;

	if (dc_check_capabilities(msg, sizeof(msg))) {
		die_msg("%s (the kernel's features are found by loading test programs)", msg);
		return 1;
	}
	dc_features_probe(&a->feat, DC_FEATURES_ALL);
	levels = dc_features_report(&a->feat, stdout);
	printf("  %-18s %s\n", "registrations",
	       dc_peer_pidfd_works() ? "tied to the process that connected (SO_PEERPIDFD)"
				     : "tied to the process that has the pid (pidfd_open); missing SO_PEERPIDFD (Linux 6.5)");
	never = dc_probes_never(&nnever);
	printf("  %-18s functions that return twice or never get no probe in any library:", "never probed");
	for (size_t i = 0; i < nnever; i++)
		printf("%s %s", i ? "," : "", never[i]);
	putchar('\n');
	dc_options_free(&a->opt);
	return levels ? 0 : 1;
}

/*
 * Run by another user than root (an agent given capabilities), the agent
 * traces only what that user could trace itself: its own job (--uid), and
 * its own processes (--pid) that gained no privileges; --match-env and the
 * ranks that register are then held to its uid as well.
 */
static int check_caller(const struct agent *a)
{
	uid_t me = getuid();
	char why[256];

	if (me == 0)
		return 0;
	if (a->opt.s.uid >= 0 && (uid_t)a->opt.s.uid != me) {
		die_msg("--uid %d: only root traces another user's job (you are uid %u)", a->opt.s.uid, (unsigned)me);
		return -1;
	}
	for (int i = 0; i < a->opt.npids; i++) {
		pid_t pid = a->opt.pids[i];
		int pidfd = dc_pid_open(pid), err = pidfd < 0 ? ESRCH : dc_proc_check_caller(pidfd, pid, why, sizeof(why));

		if (pidfd >= 0)
			close(pidfd);
		if (err) {
			die_msg("--pid %d: %s", (int)pid, err == ESRCH ? "no such process" : why);
			return -1;
		}
	}
	return 0;
}

int agent_setup(struct agent *a)
{
	char msg[512];

	if (dc_check_capabilities(msg, sizeof(msg))) {
		die_msg("%s", msg);
		return -1;
	}
	if (check_caller(a) || load_probe_sets(a) || ensure_tracefs() || resolve_job(a))
		return -1;
	a->ncpus = libbpf_num_possible_cpus();
	a->stats = calloc(a->ncpus > 0 ? a->ncpus : 1, sizeof(*a->stats));
	if (a->ncpus <= 0 || !a->stats) {
		die_msg("cannot count the CPUs");
		return -1;
	}
	/* The command runs as the caller. Run as another user than the job's,
	 * it ran with credentials that are not the job user's own: it leaves
	 * the trace as it starts (bpf/procs.bpf.c). */
	if (a->opt.command && a->uid != 0 && getuid() != a->uid)
		die_msg("warning: the command runs as uid %u, not as the job's user (uid %u): it is not traced; "
			"run it as that user (runuser -u USER --, setpriv)", (unsigned)getuid(), (unsigned)a->uid);
	if (a->opt.command) {
		/* The command's environment, not the agent's own: as it was once
		 * the command is forked. */
		char *was = getenv("LD_PRELOAD") ? strdup(getenv("LD_PRELOAD")) : NULL;
		int rc = preload_command(a);

		if (!rc && dc_launch(a->opt.command, &a->child, msg, sizeof(msg))) {
			die_msg("%s", msg);
			rc = -1;
		}
		if (was)
			setenv("LD_PRELOAD", was, 1);
		else
			unsetenv("LD_PRELOAD");
		free(was);
		if (rc)
			return -1;
	}
	raise_fd_limit();
	/* After the launch: its child must not fork while a thread holds a lock. */
	dc_topology_prefetch();
	if (load_bpf(a) || attach_probes(a) || create_node_file(a) || write_function_table(a))
		return -1;
	a->recorder = dc_recorder_new(a->writer);
	if (a->recorder && !(a->rings = new_rings(a))) {
		die_msg("out of memory");
		return -1;
	}
	if (!a->recorder) {
		die_msg("out of memory");
		return -1;
	}
	return agent_open_control(a);
}
