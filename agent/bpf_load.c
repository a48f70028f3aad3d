// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "bpf_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datacrumbs.skel.h"
#include "event_rings.h"
#include "uprobe_multi.h"

/* Verifier log lines shown with -v for a refused program. */
#define LOG_TAIL_LINES 12
#define LOG_MAX (1 << 20)

static const char *const level_names[DC_NR_LEVELS] = {
	[DC_LEVEL_USER] = "user calls (uprobes)",
	[DC_LEVEL_SYSCALLS] = "system calls",
	[DC_LEVEL_BLOCK] = "block requests",
	[DC_LEVEL_PAGECACHE] = "page cache",
	[DC_LEVEL_URING] = "io_uring requests",
	[DC_LEVEL_MMAP] = "file mappings",
	[DC_LEVEL_AIO] = "AIO requests",
	[DC_LEVEL_KPROBES] = "kernel functions (kprobes)",
	[DC_LEVEL_FENTRY] = "kernel functions (fentry/fexit)",
};

const char *dc_level_name(enum dc_level level)
{
	return level_names[level];
}

void dc_load_plan_make(struct dc_load_plan *plan, const struct dc_probe_set *sets, int nsets,
		       const struct dc_features *f, const char *fentry_target)
{
	memset(plan, 0, sizeof(*plan));
	plan->tp_btf = f->has[DC_FEAT_TP_BTF];
	plan->scoped = dc_user_scoped(f);
	for (int i = 0; i < nsets; i++) {
		const struct dc_probe_set *s = &sets[i];

		switch (s->kind) {
		case DC_SET_UPROBES:
			plan->want[DC_LEVEL_USER] |= dc_user_mech(f) != DC_USER_NONE;
			/* A libc call seen at its system call's tracepoint. */
			for (size_t k = 0; k < s->nfns; k++)
				plan->want[DC_LEVEL_SYSCALLS] |= s->fns[k].syscall != NULL;
			break;
		case DC_SET_SYSCALLS:
			plan->want[DC_LEVEL_SYSCALLS] = true;
			break;
		case DC_SET_KERNEL:
			if (strcmp(s->kernel, "io_uring") == 0)
				plan->want[DC_LEVEL_URING] |= f->has[DC_FEAT_URING_REQ];
			else if (strcmp(s->kernel, "mmap") == 0)
				plan->want[DC_LEVEL_MMAP] |= f->has[DC_FEAT_MMAP_FAULTS];
			else if (strcmp(s->kernel, "aio") == 0) {
				/* Seen at the system calls that submit and reap them. */
				plan->want[DC_LEVEL_AIO] |= f->has[DC_FEAT_BPF_LOOP];
				plan->want[DC_LEVEL_SYSCALLS] |= f->has[DC_FEAT_BPF_LOOP];
			}
			else
				plan->want[strcmp(s->kernel, "block") == 0 ? DC_LEVEL_BLOCK : DC_LEVEL_PAGECACHE] = true;
			break;
		case DC_SET_KFUNCS:
			plan->want[DC_LEVEL_KPROBES] |= dc_kprobe_mech(f) != DC_KFUNC_NONE;
			break;
		case DC_SET_WRAPPER:
			break; /* recorded in the ranks: nothing in the kernel */
		}
	}
	if (fentry_target && f->has[DC_FEAT_FENTRY]) {
		plan->want[DC_LEVEL_FENTRY] = true;
		plan->fentry_target = fentry_target;
	}
}

/* Settings the BPF programs only read: set in rodata before load. */
static void set_rodata(struct datacrumbs_bpf *skel, const struct dc_load_plan *plan, const struct dc_features *f,
		       const struct dc_options *opt, const struct dc_probe_set *sets, int nsets)
{
	struct datacrumbs_bpf__rodata *ro = skel->rodata;

	ro->dc_mode = opt->s.mode;
	ro->dc_job_uid = plan->job_uid;
	ro->dc_nrings = plan->nrings;
	ro->dc_ring_scatter = plan->ring_scatter;
	/* Wake the agent when a ring fills to half (DC_RING_WAKE_SHARE). */
	for (ro->dc_wakeup_shift = 31; ro->dc_wakeup_shift && (1u << ro->dc_wakeup_shift) > plan->ring_bytes / DC_RING_WAKE_SHARE;)
		ro->dc_wakeup_shift--;
	ro->dc_has_task_storage = f->has[DC_FEAT_TASK_STORAGE];
	ro->dc_has_cookie = f->has[DC_FEAT_COOKIE];
	for (int i = 0; i < nsets; i++) {
		if (sets[i].dtype_size_offset)
			ro->dc_dtype_size_offset = sets[i].dtype_size_offset;
		/* The agent's own C library's layout: glibc's ABI, which every
		 * libc.so.6 a set of streams probes shares. */
		if (sets[i].stdio_handles)
			ro->dc_fileno_offset = offsetof(FILE, _fileno);
	}
	if (opt->match_env) {
		struct stat st;

		ro->dc_env_match_len = strlen(opt->match_env);
		memcpy((char *)ro->dc_env_match, opt->match_env, ro->dc_env_match_len);
		/* This node's programs only: those in the agent's network namespace. */
		if (stat("/proc/self/ns/net", &st) == 0)
			ro->dc_netns_ino = st.st_ino;
		for (int i = 0; i < opt->nskip_comm; i++)
			memcpy((char *)ro->dc_skip_comm[i], opt->skip_comm[i], DC_COMM_LEN);
	}
}

/* Of each pair of per-thread maps, the kind this kernel has. */
static void choose_maps(struct datacrumbs_bpf *skel, const struct dc_features *f)
{
	struct bpf_map *task[] = { skel->maps.dc_stacks, skel->maps.dc_sysframes, skel->maps.dc_kstacks };
	struct bpf_map *tid[] = { skel->maps.dc_stacks_tid, skel->maps.dc_sysframes_tid, skel->maps.dc_kstacks_tid };
	bool ts = f->has[DC_FEAT_TASK_STORAGE];

	for (int i = 0; i < 3; i++) {
		bpf_map__set_autocreate(task[i], ts);
		bpf_map__set_autocreate(tid[i], !ts);
	}
	bpf_map__set_autocreate(skel->maps.dc_zero, !ts);
}

struct prog_level {
	struct bpf_program *prog;
	int level; /* enum dc_level, or -1: process life, needed by every level */
	bool namer; /* walks file paths: TRACE mode only (bpf/namers.bpf.h) */
};

/* Every program and the level it serves; NULL ends the list. */
static size_t program_levels(struct datacrumbs_bpf *skel, const struct dc_load_plan *plan,
			     const struct dc_features *f, struct prog_level *out)
{
	bool tp_btf = plan->tp_btf, loop = f->has[DC_FEAT_BPF_LOOP];
	struct prog_level all[] = {
		{ skel->progs.dc_fork, -1 },
		{ skel->progs.dc_exit, -1 },
		{ loop ? skel->progs.dc_exec : skel->progs.dc_exec_bounded, -1 },
		{ skel->progs.dc_call_entry, DC_LEVEL_USER },
		{ skel->progs.dc_call_exit, DC_LEVEL_USER },
		{ skel->progs.dc_lib_mmap, DC_LEVEL_USER },
		{ skel->progs.dc_scope_fork, DC_LEVEL_USER },
		{ tp_btf ? skel->progs.dc_sys_enter : skel->progs.dc_sys_enter_raw, DC_LEVEL_SYSCALLS },
		{ tp_btf ? skel->progs.dc_sys_exit : skel->progs.dc_sys_exit_raw, DC_LEVEL_SYSCALLS },
		{ skel->progs.dc_name_call_entry, DC_LEVEL_USER, true },
		{ skel->progs.dc_name_call_exit, DC_LEVEL_USER, true },
		{ tp_btf ? skel->progs.dc_name_sys_enter : skel->progs.dc_name_sys_enter_raw, DC_LEVEL_SYSCALLS, true },
		{ tp_btf ? skel->progs.dc_name_sys_exit : skel->progs.dc_name_sys_exit_raw, DC_LEVEL_SYSCALLS, true },
		{ skel->progs.dc_block_queue, DC_LEVEL_BLOCK },
		{ skel->progs.dc_block_split, DC_LEVEL_BLOCK },
		{ skel->progs.dc_block_issue, DC_LEVEL_BLOCK },
		{ skel->progs.dc_block_complete, DC_LEVEL_BLOCK },
		{ skel->progs.dc_page_add, DC_LEVEL_PAGECACHE },
		{ skel->progs.dc_page_delete, DC_LEVEL_PAGECACHE },
		{ skel->progs.dc_uring_submit, DC_LEVEL_URING },
		{ skel->progs.dc_uring_complete, DC_LEVEL_URING },
		{ skel->progs.dc_mmap_fault, DC_LEVEL_MMAP },
		{ tp_btf ? skel->progs.dc_aio_sys_exit : skel->progs.dc_aio_sys_exit_raw, DC_LEVEL_AIO },
		{ skel->progs.dc_kprobe_entry, DC_LEVEL_KPROBES },
		{ skel->progs.dc_kprobe_exit, DC_LEVEL_KPROBES },
		{ skel->progs.dc_fentry, DC_LEVEL_FENTRY },
		{ skel->progs.dc_fexit, DC_LEVEL_FENTRY },
	};

	memcpy(out, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* Only the programs of the levels wanted are loaded; only process life
 * attaches with the skeleton, the rest as probe sets ask. */
static int choose_programs(struct datacrumbs_bpf *skel, const struct dc_load_plan *plan,
			   const struct dc_features *f, bool trace)
{
	struct prog_level pl[32];
	size_t n = program_levels(skel, plan, f, pl);
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		bpf_program__set_autoload(prog, false);
		bpf_program__set_autoattach(prog, false);
	}
	for (size_t i = 0; i < n; i++) {
		bool on = (pl[i].level < 0 || plan->want[pl[i].level]) && (trace || !pl[i].namer);

		bpf_program__set_autoload(pl[i].prog, on);
		bpf_program__set_autoattach(pl[i].prog, pl[i].level < 0);
	}
	/* Holds a new process of the job at its fork for links of its own. */
	bpf_program__set_autoload(skel->progs.dc_scope_fork, plan->want[DC_LEVEL_USER] && plan->scoped);
	if (plan->want[DC_LEVEL_USER] && dc_user_mech(f) == DC_USER_MULTI &&
	    (dc_uprobe_multi_prepare(skel->progs.dc_call_entry) || dc_uprobe_multi_prepare(skel->progs.dc_call_exit) ||
	     dc_uprobe_multi_prepare(skel->progs.dc_name_call_entry) ||
	     dc_uprobe_multi_prepare(skel->progs.dc_name_call_exit)))
		return -1;
	if (plan->want[DC_LEVEL_KPROBES] && dc_kprobe_mech(f) == DC_KFUNC_MULTI &&
	    (bpf_program__set_expected_attach_type(skel->progs.dc_kprobe_entry, BPF_TRACE_KPROBE_MULTI) ||
	     bpf_program__set_expected_attach_type(skel->progs.dc_kprobe_exit, BPF_TRACE_KPROBE_MULTI)))
		return -1;
	if (plan->want[DC_LEVEL_FENTRY] &&
	    (bpf_program__set_attach_target(skel->progs.dc_fentry, 0, plan->fentry_target) ||
	     bpf_program__set_attach_target(skel->progs.dc_fexit, 0, plan->fentry_target)))
		return -1;
	return 0;
}

/* ---- what libbpf says while the object loads ---- */

static struct {
	char *text;
	size_t len;
	int verbose;
} load_log;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;
	int n;

	if (load_log.verbose > 1) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level != LIBBPF_WARN || !load_log.text || load_log.len >= LOG_MAX - 1)
		return 0;
	n = vsnprintf(load_log.text + load_log.len, LOG_MAX - load_log.len, fmt, ap);
	if (n > 0)
		load_log.len += (size_t)n < LOG_MAX - load_log.len ? (size_t)n : LOG_MAX - 1 - load_log.len;
	return 0;
}

/* The program libbpf last said it could not load, or NULL. */
static struct bpf_program *refused_program(struct datacrumbs_bpf *skel, const char *log)
{
	const char *p = log, *hit = NULL;
	struct bpf_program *prog;

	while ((p = strstr(p, "prog '"))) {
		const char *end = strchr(p + 6, '\'');

		if (end && (strncmp(end, "': failed to load", 17) == 0 || strncmp(end, "': BPF program load failed", 26) == 0))
			hit = p + 6;
		p += 6;
	}
	if (!hit)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj) {
		size_t len = strlen(bpf_program__name(prog));

		if (strncmp(hit, bpf_program__name(prog), len) == 0 && hit[len] == '\'')
			return prog;
	}
	return NULL;
}

/* The verifier's log of prog, from libbpf's warning that quotes it. */
static void verifier_tail(const char *log, const char *prog, bool verbose, char *last, size_t lastlen)
{
	char begin[128];
	const char *b, *e, *p;
	int lines = 0;

	snprintf(begin, sizeof(begin), "prog '%s': -- BEGIN PROG LOAD LOG --\n", prog);
	snprintf(last, lastlen, "no verifier log");
	if (!(b = strstr(log, begin)) || !(e = strstr(b, "-- END PROG LOAD LOG --")))
		return;
	b += strlen(begin);
	/* Step back over the closing lines: the last words of the verifier that
	 * are not its statistics ("processed N insns") say why. */
	for (p = e; p > b && lines <= LOG_TAIL_LINES; p--)
		if (p[-1] == '\n')
			lines++;
	for (const char *q = p, *nl; q < e; q = nl + 1) {
		nl = memchr(q, '\n', e - q);
		if (!nl)
			nl = e;
		if (nl > q && strncmp(q, "processed ", 10) != 0 && strncmp(q, "verification time", 17) != 0)
			snprintf(last, lastlen, "%.*s", (int)(nl - q), q);
		if (verbose)
			fprintf(stderr, "dc-agent:   | %.*s\n", (int)(nl - q), q);
	}
}

/* Each loaded namer into its callers' program array; 0, or -errno. */
static int fill_namers(struct datacrumbs_bpf *skel)
{
	const struct {
		struct bpf_map *map;
		__u32 slot;
		struct bpf_program *prog;
	} namers[] = {
		{ skel->maps.dc_call_namers, DC_NAMER_ENTRY, skel->progs.dc_name_call_entry },
		{ skel->maps.dc_call_namers, DC_NAMER_EXIT, skel->progs.dc_name_call_exit },
		{ skel->maps.dc_sys_enter_namer, DC_NAMER_ENTRY, skel->progs.dc_name_sys_enter },
		{ skel->maps.dc_sys_exit_namer, DC_NAMER_EXIT, skel->progs.dc_name_sys_exit },
		{ skel->maps.dc_sys_raw_namers, DC_NAMER_ENTRY, skel->progs.dc_name_sys_enter_raw },
		{ skel->maps.dc_sys_raw_namers, DC_NAMER_EXIT, skel->progs.dc_name_sys_exit_raw },
		{ skel->maps.dc_sys_exit_namer, DC_NAMER_AIO, skel->progs.dc_aio_sys_exit },
		{ skel->maps.dc_sys_raw_namers, DC_NAMER_AIO, skel->progs.dc_aio_sys_exit_raw },
	};

	for (size_t i = 0; i < sizeof(namers) / sizeof(namers[0]); i++) {
		int fd = bpf_program__fd(namers[i].prog);

		if (fd >= 0 && bpf_map_update_elem(bpf_map__fd(namers[i].map), &namers[i].slot, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int level_of(struct datacrumbs_bpf *skel, const struct dc_load_plan *plan, const struct dc_features *f,
		    struct bpf_program *prog)
{
	struct prog_level pl[32];
	size_t n = program_levels(skel, plan, f, pl);

	for (size_t i = 0; i < n; i++)
		if (pl[i].prog == prog)
			return pl[i].level;
	return -1;
}

struct datacrumbs_bpf *dc_bpf_load(struct dc_load_plan *plan, const struct dc_features *f,
				   const struct dc_options *opt, const struct dc_probe_set *sets, int nsets)
{
	libbpf_print_fn_t old = libbpf_set_print(capture_print);
	struct datacrumbs_bpf *skel = NULL;
	bool rq_status;
	int err;

	load_log.text = malloc(LOG_MAX);
	load_log.verbose = opt->verbose;
	/* A pass over the kernel's BTF: only for the block level. */
	rq_status = plan->want[DC_LEVEL_BLOCK] ? dc_kernel_rq_complete_passes_status() : true;
	/* Each refusal drops one level and loads again: at most one per level. */
	for (int attempt = 0; attempt <= DC_NR_LEVELS; attempt++) {
		struct bpf_program *bad;
		char why[256];
		int level;

		load_log.len = 0;
		if (load_log.text)
			load_log.text[0] = 0;
		skel = datacrumbs_bpf__open();
		if (!skel) {
			fprintf(stderr, "dc-agent: cannot open the BPF programs: %s\n", strerror(errno));
			break;
		}
		set_rodata(skel, plan, f, opt, sets, nsets);
		/* The rings themselves are made after the load (agent/event_rings.c),
		 * each of its size: the kernel holds an inner ring buffer to the
		 * template's type, not its size. */
		bpf_map__set_max_entries(skel->maps.dc_rings, plan->nrings);
		/* The profile counters are preallocated (a tracing program may not
		 * allocate on 5.10) and 65,536 of them take 0.1 s to create: only
		 * profile mode has them. */
		if (opt->s.mode != DC_MODE_PROFILE)
			bpf_map__set_max_entries(skel->maps.dc_profile, 1);
		/* The block level's tables are preallocated too (6 ms to make):
		 * only a job that traces block requests has them. */
		if (!plan->want[DC_LEVEL_BLOCK]) {
			bpf_map__set_max_entries(skel->maps.dc_block_rqs, 1);
			bpf_map__set_max_entries(skel->maps.dc_block_owners, 1);
		}
		if (!plan->want[DC_LEVEL_URING]) {
			bpf_map__set_max_entries(skel->maps.dc_uring_reqs, 1);
			bpf_map__set_max_entries(skel->maps.dc_uring_names, 1);
		}
		if (!plan->want[DC_LEVEL_AIO])
			bpf_map__set_max_entries(skel->maps.dc_aio_reqs, 1);
		skel->rodata->dc_rq_passes_status = rq_status;
		skel->rodata->dc_uring_cqe = f->uring_cqe;
		choose_maps(skel, f);
		if (choose_programs(skel, plan, f, opt->s.mode == DC_MODE_TRACE)) {
			fprintf(stderr, "dc-agent: cannot set up the BPF programs: %s\n", strerror(errno));
			goto fail;
		}
		err = datacrumbs_bpf__load(skel);
		if (!err)
			break;
		bad = load_log.text ? refused_program(skel, load_log.text) : NULL;
		level = bad ? level_of(skel, plan, f, bad) : -1;
		if (err == -EPERM && level < 0) {
			fprintf(stderr, "dc-agent: cannot load the BPF programs: %s (missing CAP_BPF or CAP_PERFMON?)\n",
				strerror(-err));
			goto fail;
		}
		if (level < 0) {
			/* Process life, a map, or the object itself: nothing can be traced. */
			if (bad)
				verifier_tail(load_log.text, bpf_program__name(bad), opt->verbose, why, sizeof(why));
			fprintf(stderr, "dc-agent: cannot load the BPF programs: %s%s%s%s\n", strerror(-err),
				bad ? " (the kernel refused " : "", bad ? bpf_program__name(bad) : "", bad ? ")" : "");
			if (bad)
				fprintf(stderr, "dc-agent: the verifier said: %s%s\n", why,
					opt->verbose ? "" : " (-v shows the end of its log)");
			else if (load_log.text && load_log.len)
				fprintf(stderr, "dc-agent: libbpf said: %s", load_log.text);
			goto fail;
		}
		verifier_tail(load_log.text, bpf_program__name(bad), opt->verbose, why, sizeof(why));
		if (level == DC_LEVEL_SYSCALLS && plan->tp_btf && f->has[DC_FEAT_RAW_TP]) {
			/* tp_btf was taken on trust: raw tracepoints do the same. */
			if (opt->verbose)
				fprintf(stderr, "dc-agent: the kernel refused %s (%s): system calls through raw_tp\n",
					bpf_program__name(bad), why);
			plan->tp_btf = false;
		} else if (bad == skel->progs.dc_scope_fork) {
			/* Uprobes then go on every process, as on older kernels. */
			fprintf(stderr, "dc-agent: warning: the kernel refused %s (%s): the uprobes go on every "
					"process that maps their libraries\n", bpf_program__name(bad), why);
			plan->scoped = false;
		} else {
			fprintf(stderr, "dc-agent: warning: the kernel refused the BPF program %s, so %s are not "
					"traced: %s%s\n", bpf_program__name(bad), level_names[level], why,
				opt->verbose ? "" : " (-v shows more)");
			plan->want[level] = false;
		}
		datacrumbs_bpf__destroy(skel);
		skel = NULL;
	}
	if (skel && (err = fill_namers(skel))) {
		fprintf(stderr, "dc-agent: cannot set up the programs that name files: %s\n", strerror(-err));
		goto fail;
	}
	if (skel && datacrumbs_bpf__attach(skel)) {
		/* Process life is needed in every mode: children join, exits free maps. */
		fprintf(stderr, "dc-agent: cannot attach the process tracepoints: %s\n", strerror(errno));
		goto fail;
	}
	free(load_log.text);
	load_log.text = NULL;
	libbpf_set_print(old);
	return skel;
fail:
	datacrumbs_bpf__destroy(skel);
	free(load_log.text);
	load_log.text = NULL;
	libbpf_set_print(old);
	return NULL;
}
