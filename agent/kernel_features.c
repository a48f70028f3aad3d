// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kernel_features.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "dc_event.h"
#include "perf_probes.h"
#include "test_hooks.h"
#include "uprobe_multi.h"

static const struct {
	const char *name, *since, *what;
} feature_info[DC_NR_FEATURES] = {
#define DC_FEATURE_INFO(id, name, since, what) [DC_FEAT_##id] = { name, since, what },
	DC_FEATURES(DC_FEATURE_INFO)
#undef DC_FEATURE_INFO
};

/* A kernel function that every kernel has and lets be traced: the target
 * of the test attaches. */
static const char *const probe_functions[] = { "vfs_read", "ksys_read" };

const char *dc_feature_name(enum dc_feature id)
{
	return feature_info[id].name;
}

const char *dc_feature_since(enum dc_feature id)
{
	return feature_info[id].since;
}

/* r0 = 0; exit: a program that loads wherever its type does. */
static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static int load_test_prog(enum bpf_prog_type type, enum bpf_attach_type attach, __u32 btf_id)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach, .attach_btf_id = btf_id);

	return bpf_prog_load(type, NULL, "Dual BSD/GPL", return_zero, 2, &opts);
}

static bool helper_ok(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, helper, NULL) == 1;
}

/* A tracing program (tp_btf or fentry) that loads and, for fentry, attaches. */
static bool tracing_ok(const char *target, enum bpf_attach_type attach, bool do_attach)
{
	int id = libbpf_find_vmlinux_btf_id(target, attach), fd, link;
	bool ok;

	if (id <= 0 || (fd = load_test_prog(BPF_PROG_TYPE_TRACING, attach, id)) < 0)
		return false;
	ok = true;
	if (do_attach) {
		link = bpf_raw_tracepoint_open(NULL, fd);
		ok = link >= 0;
		if (ok)
			close(link);
	}
	close(fd);
	return ok;
}

static bool fentry_ok(void)
{
	for (size_t i = 0; i < sizeof(probe_functions) / sizeof(probe_functions[0]); i++)
		if (tracing_ok(probe_functions[i], BPF_TRACE_FENTRY, true))
			return true;
	return false;
}

/* uprobe_multi: a kernel that has it checks the path ("/" is no file:
 * EBADF); one that has not refuses the attach type (EINVAL). */
static bool uprobe_multi_ok(void)
{
	int fd = load_test_prog(BPF_PROG_TYPE_KPROBE, DC_BPF_TRACE_UPROBE_MULTI, 0), link;
	unsigned long offset = 0;
	bool ok;

	if (fd < 0)
		return false;
	link = dc_uprobe_multi_link(fd, "/", &offset, NULL, 1, false, 0);
	ok = link == -EBADF;
	if (link >= 0)
		close(link);
	close(fd);
	return ok;
}

/* The kernel's BTF, loaded by the first probe that reads it and kept for
 * the others (a load is some 20 ms). */
struct lazy_btf {
	struct btf *btf;
	bool tried;
};

static const struct btf *kernel_btf(struct lazy_btf *kb)
{
	if (!kb->tried)
		kb->btf = btf__load_vmlinux_btf();
	kb->tried = true;
	return kb->btf;
}

/*
 * uprobe_scoped: a uprobe_multi link for one process (its pid, Linux 6.6)
 * puts its breakpoints in that process only; a child it forks shares them
 * but not the link, so the child is held at its fork until it has links
 * of its own, which takes bpf_send_signal_task (6.13), a kfunc, known from
 * the kernel's BTF.
 */
static bool uprobe_scoped_ok(const struct dc_features *f, struct lazy_btf *kb)
{
	const struct btf *btf;

	return f->has[DC_FEAT_UPROBE_MULTI] && (btf = kernel_btf(kb)) &&
	       btf__find_by_name_kind(btf, "bpf_send_signal_task", BTF_KIND_FUNC) > 0;
}

/* kprobe_multi: attached for real to a function, and let go at once. */
static bool kprobe_multi_ok(void)
{
	int fd = load_test_prog(BPF_PROG_TYPE_KPROBE, BPF_TRACE_KPROBE_MULTI, 0);
	bool ok = false;

	if (fd < 0)
		return false;
	for (size_t i = 0; !ok && i < sizeof(probe_functions) / sizeof(probe_functions[0]); i++) {
		const char *syms[] = { probe_functions[i] };
		LIBBPF_OPTS(bpf_link_create_opts, opts, .kprobe_multi.syms = syms, .kprobe_multi.cnt = 1);
		int link = bpf_link_create(fd, 0, BPF_TRACE_KPROBE_MULTI, &opts);

		ok = link >= 0;
		if (ok)
			close(link);
	}
	close(fd);
	return ok;
}

/* A kprobe perf event on a function, opened and closed: kernels built
 * without kprobes have no such event type. */
static bool kprobes_ok(void)
{
	int fd = load_test_prog(BPF_PROG_TYPE_KPROBE, 0, 0);
	bool ok = false;

	if (fd < 0 || dc_perf_kind_supported(DC_PERF_KPROBE)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (size_t i = 0; !ok && i < sizeof(probe_functions) / sizeof(probe_functions[0]); i++) {
		int h = dc_perf_attach_one(DC_PERF_KPROBE, probe_functions[i], 0, false, fd, 0, false);

		ok = h >= 0;
		if (ok)
			close(h);
	}
	close(fd);
	return ok;
}

/* The x86 system call that returns from a uretprobe without a trap. */
static bool uretprobe_syscall_ok(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *name = strrchr(line, ' ');

		found = name && strcmp(name + 1, "__x64_sys_uretprobe\n") == 0;
	}
	fclose(f);
	return found;
}

/* A tracepoint's prototype in the kernel's BTF (btf_trace_NAME, a pointer
 * to its function prototype): NULL where it has none. */
static const struct btf_type *tracepoint_proto(const struct btf *btf, const char *name)
{
	const struct btf_type *t = NULL;
	char typedef_name[128];
	__s32 id;

	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF);
	if (id > 0 && (t = btf__type_by_id(btf, id)))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* uring_req: the io_uring tracepoints, as the kernel's BTF gives them
 * (dc_features.uring_submit, .uring_cqe). */
static bool uring_ok(struct dc_features *f, struct lazy_btf *kb)
{
	static const char *const names[] = { "io_uring_submit_req", "io_uring_submit_sqe" };
	const struct btf *btf = kernel_btf(kb);
	const struct btf_type *t;

	if (!btf)
		return false;
	/* (void *, struct io_kiocb *req, ...): older kernels' io_uring_submit_sqe
	 * passed the ring and the operation instead (5.10), or the request as a
	 * void * after the ring (5.15). */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !f->uring_submit; i++) {
		const struct btf_type *arg;

		t = tracepoint_proto(btf, names[i]);
		if (!t || btf_vlen(t) < 2 || !(arg = btf__type_by_id(btf, btf_params(t)[1].type)) || !btf_is_ptr(arg))
			continue;
		arg = btf__type_by_id(btf, arg->type);
		if (arg && btf_is_struct(arg) && strcmp(btf__name_by_offset(btf, arg->name_off), "io_kiocb") == 0)
			f->uring_submit = names[i];
	}
	/* (void *, struct io_ring_ctx *, void *req, struct io_uring_cqe *):
	 * four, where kernels that pass the completion's fields have eight. */
	t = tracepoint_proto(btf, "io_uring_complete");
	f->uring_cqe = t && btf_vlen(t) == 4;
	return f->uring_submit != NULL;
}

/* mmap_faults: the x86 page fault tracepoints, in one pass over the
 * kernel's BTF, and the helper that finds the mapping behind an address
 * (for a tracepoint program). */
static bool mmap_faults_ok(struct lazy_btf *kb)
{
	const struct btf *btf;

	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_find_vma, NULL) == 1 &&
	       (btf = kernel_btf(kb)) && tracepoint_proto(btf, "page_fault_user") &&
	       tracepoint_proto(btf, "page_fault_kernel");
}

static bool probe_one(struct dc_features *f, enum dc_feature id, struct lazy_btf *kb)
{
	switch (id) {
	case DC_FEAT_BTF:
		return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	case DC_FEAT_RINGBUF:
		return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	case DC_FEAT_TP_BTF:
		return tracing_ok("sys_enter", BPF_TRACE_RAW_TP, false);
	case DC_FEAT_RAW_TP:
		return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
	case DC_FEAT_TASK_STORAGE:
		return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
		       helper_ok(BPF_FUNC_get_current_task_btf);
	case DC_FEAT_BPF_LOOP:
		return helper_ok(BPF_FUNC_loop);
	case DC_FEAT_COOKIE:
		return helper_ok(BPF_FUNC_get_attach_cookie);
	case DC_FEAT_UPROBES:
		return dc_perf_kind_supported(DC_PERF_UPROBE) == 0;
	case DC_FEAT_UPROBE_MULTI:
		return uprobe_multi_ok();
	case DC_FEAT_UPROBE_SCOPED:
		return uprobe_scoped_ok(f, kb);
	case DC_FEAT_KPROBES:
		return kprobes_ok();
	case DC_FEAT_KPROBE_MULTI:
		return kprobe_multi_ok();
	case DC_FEAT_FENTRY:
		return fentry_ok();
	case DC_FEAT_URETPROBE_SYSCALL:
		return uretprobe_syscall_ok();
	case DC_FEAT_URING_REQ:
		return uring_ok(f, kb);
	case DC_FEAT_MMAP_FAULTS:
		return mmap_faults_ok(kb);
	case DC_NR_FEATURES:
		break;
	}
	return false;
}

void dc_features_probe(struct dc_features *f, unsigned want)
{
	struct utsname u;
	struct lazy_btf kb = { 0 };
	libbpf_print_fn_t old = libbpf_set_print(NULL); /* the probes' refusals are expected */

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	for (int i = 0; i < DC_NR_FEATURES; i++) {
		if (!(want & (1u << i))) {
			/* Not asked: tp_btf goes with BTF (the load falls back to
			 * raw_tp if refused); the rest are not needed. */
			f->has[i] = i == DC_FEAT_TP_BTF && f->has[DC_FEAT_BTF];
		} else {
			f->has[i] = probe_one(f, i, &kb);
			f->probed[i] = true;
		}
		/* A test build can take a feature away, so that this kernel runs
		 * the fallback an older one needs (common/test_hooks.h). */
		if (f->has[i] && dc_test_feature_off(feature_info[i].name)) {
			f->has[i] = false;
			f->forced_off[i] = true;
		}
	}
	btf__free(kb.btf);
	libbpf_set_print(old);
}

enum dc_user_mech dc_user_mech(const struct dc_features *f)
{
	if (f->has[DC_FEAT_UPROBE_MULTI] && f->has[DC_FEAT_COOKIE])
		return DC_USER_MULTI;
	if (!f->has[DC_FEAT_UPROBES])
		return DC_USER_NONE;
	return f->has[DC_FEAT_COOKIE] ? DC_USER_PERF_COOKIE : DC_USER_PERF_CLONES;
}

bool dc_user_scoped(const struct dc_features *f)
{
	return dc_user_mech(f) == DC_USER_MULTI && f->has[DC_FEAT_UPROBE_SCOPED];
}

enum dc_kfunc_mech dc_kprobe_mech(const struct dc_features *f)
{
	if (f->has[DC_FEAT_KPROBE_MULTI] && f->has[DC_FEAT_COOKIE])
		return DC_KFUNC_MULTI;
	if (!f->has[DC_FEAT_KPROBES])
		return DC_KFUNC_NONE;
	return f->has[DC_FEAT_COOKIE] ? DC_KFUNC_KPROBE_COOKIE : DC_KFUNC_KPROBE_CLONES;
}

const char *dc_user_mech_text(enum dc_user_mech m)
{
	switch (m) {
	case DC_USER_MULTI:
		return "uprobe_multi links (one pair of links per library)";
	case DC_USER_PERF_COOKIE:
		return "a uprobe perf event pair per function, with attach cookies";
	case DC_USER_PERF_CLONES:
		return "a uprobe perf event pair per function, each with a program of its own (no attach cookies)";
	case DC_USER_NONE:
		break;
	}
	return "none";
}

const char *dc_kfunc_mech_text(enum dc_kfunc_mech m)
{
	switch (m) {
	case DC_KFUNC_MULTI:
		return "kprobe_multi links (one pair of links per set)";
	case DC_KFUNC_FENTRY:
		return "fentry/fexit, a program pair per function";
	case DC_KFUNC_KPROBE_COOKIE:
		return "a kprobe/kretprobe perf event pair per function, with attach cookies";
	case DC_KFUNC_KPROBE_CLONES:
		return "a kprobe/kretprobe perf event pair per function, each with a program of its own";
	case DC_KFUNC_NONE:
		break;
	}
	return "none";
}

/* "missing: a (Linux N), b (Linux M)" for the features of ids that are absent. */
static void missing(const struct dc_features *f, FILE *out, const enum dc_feature *ids, size_t n)
{
	const char *sep = "";

	for (size_t i = 0; i < n; i++) {
		if (f->has[ids[i]])
			continue;
		fprintf(out, "%s%s (%s%s)", sep, feature_info[ids[i]].name,
			f->forced_off[ids[i]] ? "forced off by DC_TEST_FEATURES_OFF" : "Linux ",
			f->forced_off[ids[i]] ? "" : feature_info[ids[i]].since);
		sep = ", ";
	}
}

#define LEVEL_FMT "  %-18s "
#define IDS(...) (const enum dc_feature[]){ __VA_ARGS__ }, sizeof((const enum dc_feature[]){ __VA_ARGS__ }) / sizeof(enum dc_feature)

static bool tracefs_event(const char *event)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", event);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s", event);
	return access(path, F_OK) == 0;
}

/* The level of a feature probed only when a set asks for it: its
 * mechanism how, or what is missing, or that no such set asked. */
static void set_level(const struct dc_features *f, FILE *out, enum dc_feature id, const char *level, const char *set,
		      const char *how)
{
	if (!f->probed[id]) {
		fprintf(out, LEVEL_FMT "not probed: no %s set asks for it (dc-agent --check probes it)\n", level, set);
	} else if (f->has[id]) {
		fprintf(out, LEVEL_FMT "%s\n", level, how);
	} else {
		fprintf(out, LEVEL_FMT "not available: missing ", level);
		missing(f, out, &id, 1);
		fputc('\n', out);
	}
}

int dc_features_report(const struct dc_features *f, FILE *out)
{
	bool base = f->has[DC_FEAT_BTF] && f->has[DC_FEAT_RINGBUF];
	enum dc_user_mech um = dc_user_mech(f);
	enum dc_kfunc_mech km = dc_kprobe_mech(f);
	int levels = 0;
	char uring[128];
	bool all = true;

	for (int i = 0; i < DC_NR_FEATURES; i++)
		all &= f->probed[i];
	fprintf(out, "kernel %s%s\n", f->release,
		all ? "" : " (-: not probed, as these probe sets do not need it; dc-agent --check probes all)");
	for (int i = 0; i < DC_NR_FEATURES; i++)
		fprintf(out, "  %-18s %-4s %s (Linux %s)%s\n", feature_info[i].name,
			!f->probed[i] ? "-" : f->has[i] ? "yes" : "no",
			feature_info[i].what, feature_info[i].since, f->forced_off[i] ? ", forced off" : "");
	fprintf(out, "levels:\n");
	if (!base) {
		fprintf(out, LEVEL_FMT "none can be traced: missing ", "every level");
		missing(f, out, IDS(DC_FEAT_BTF, DC_FEAT_RINGBUF));
		fputc('\n', out);
		return 0;
	}
	fprintf(out, LEVEL_FMT "%s\n", "per-thread state",
		f->has[DC_FEAT_TASK_STORAGE] ? "task storage" : "hash maps by thread id (no task storage, Linux 5.11)");
	if (um != DC_USER_NONE) {
		fprintf(out, LEVEL_FMT "%s", "user calls", dc_user_mech_text(um));
		if (um != DC_USER_MULTI) {
			fputs("; missing ", out);
			missing(f, out, IDS(DC_FEAT_UPROBE_MULTI, DC_FEAT_COOKIE));
		}
		fputc('\n', out);
		if (dc_user_scoped(f)) {
			fprintf(out, LEVEL_FMT "%s\n", "uprobes placed",
				"in the job's processes only (a pair of links per library and process)");
		} else if (f->probed[DC_FEAT_UPROBE_SCOPED]) {
			fprintf(out, LEVEL_FMT "in every process that maps the library; missing ", "uprobes placed");
			missing(f, out, IDS(DC_FEAT_UPROBE_MULTI, DC_FEAT_UPROBE_SCOPED));
			fputc('\n', out);
		}
		levels++;
	} else {
		fprintf(out, LEVEL_FMT "not available: missing ", "user calls");
		missing(f, out, IDS(DC_FEAT_UPROBES));
		fputc('\n', out);
	}
	if (!f->probed[DC_FEAT_TP_BTF] && f->has[DC_FEAT_TP_BTF]) {
		fprintf(out, LEVEL_FMT "%s\n", "system calls",
			"tp_btf sys_enter/sys_exit, or raw_tp if the kernel refuses them (not loaded: no set asks)");
		levels++;
	} else if (f->has[DC_FEAT_TP_BTF] || f->has[DC_FEAT_RAW_TP]) {
		fprintf(out, LEVEL_FMT "%s\n", "system calls",
			f->has[DC_FEAT_TP_BTF] ? "tp_btf sys_enter/sys_exit"
					       : "raw_tp sys_enter/sys_exit (no tp_btf, Linux 5.5)");
		levels++;
	} else {
		fprintf(out, LEVEL_FMT "not available: missing ", "system calls");
		missing(f, out, IDS(DC_FEAT_TP_BTF, DC_FEAT_RAW_TP));
		fputc('\n', out);
	}
	if (!f->probed[DC_FEAT_KPROBES] && !f->probed[DC_FEAT_FENTRY]) {
		fprintf(out, LEVEL_FMT "not probed: no kernel: set asks for it (dc-agent --check probes it)\n",
			"kernel functions");
	} else if (km == DC_KFUNC_MULTI) {
		fprintf(out, LEVEL_FMT "%s\n", "kernel functions", dc_kfunc_mech_text(km));
	} else if (f->has[DC_FEAT_FENTRY] || km != DC_KFUNC_NONE) {
		fprintf(out, LEVEL_FMT "%s%s%s; missing ", "kernel functions",
			f->has[DC_FEAT_FENTRY] ? dc_kfunc_mech_text(DC_KFUNC_FENTRY) : "",
			f->has[DC_FEAT_FENTRY] && km != DC_KFUNC_NONE ? " where the function has BTF, else " : "",
			km != DC_KFUNC_NONE ? dc_kfunc_mech_text(km) : "");
		missing(f, out, IDS(DC_FEAT_KPROBE_MULTI, DC_FEAT_COOKIE));
		fputc('\n', out);
	} else {
		fprintf(out, LEVEL_FMT "not available: missing ", "kernel functions");
		missing(f, out, IDS(DC_FEAT_KPROBE_MULTI, DC_FEAT_FENTRY, DC_FEAT_KPROBES));
		fputc('\n', out);
	}
	if (f->has[DC_FEAT_KPROBE_MULTI] || f->has[DC_FEAT_FENTRY] || km != DC_KFUNC_NONE)
		levels++;
	fprintf(out, LEVEL_FMT "%s\n", "block requests",
		tracefs_event("block/block_rq_issue") ? "tracepoints block_bio_queue, block_rq_issue; raw tracepoint block_rq_complete"
						      : "not available: no block tracepoints");
	fprintf(out, LEVEL_FMT "%s\n", "page cache",
		tracefs_event("filemap/mm_filemap_add_to_page_cache")
			? "tracepoints mm_filemap_add_to_page_cache/mm_filemap_delete_from_page_cache"
			: "not available: no filemap tracepoints");
	snprintf(uring, sizeof(uring), "raw tracepoints %s/io_uring_complete", f->uring_submit ? f->uring_submit : "");
	set_level(f, out, DC_FEAT_URING_REQ, "io_uring requests", "io_uring", uring);
	set_level(f, out, DC_FEAT_MMAP_FAULTS, "file mappings", "mmap",
		  "raw tracepoints page_fault_user/page_fault_kernel, bpf_find_vma");
	if (f->has[DC_FEAT_BPF_LOOP] && (f->has[DC_FEAT_TP_BTF] || f->has[DC_FEAT_RAW_TP])) {
		fprintf(out, LEVEL_FMT "the io_submit and io_getevents system calls, their requests walked with bpf_loop\n",
			"AIO requests");
	} else {
		fprintf(out, LEVEL_FMT "not available: missing ", "AIO requests");
		missing(f, out, IDS(DC_FEAT_BPF_LOOP));
		fputc('\n', out);
	}
	fprintf(out, LEVEL_FMT "sched tracepoints; --match-env reads %s\n", "processes",
		f->has[DC_FEAT_BPF_LOOP]
			? "an environment in up to " DC_STR(DC_ENV_MAX_STEPS) " steps (bpf_loop)"
			: "an environment in up to " DC_STR(DC_ENV_MAX_STEPS_BOUNDED) " steps, in a bounded loop (no bpf_loop, Linux 5.17)");
	return levels;
}

bool dc_kernel_rq_complete_passes_status(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool status = true;

	if (!btf)
		return status;
	/* (void *, struct request *, ERROR, unsigned int) */
	t = tracepoint_proto(btf, "block_rq_complete");
	if (t && btf_vlen(t) >= 3) {
		const struct btf_type *arg = btf__type_by_id(btf, btf_params(t)[2].type);

		status = arg && btf_is_typedef(arg) && strcmp(btf__name_by_offset(btf, arg->name_off), "blk_status_t") == 0;
	}
	btf__free(btf);
	return status;
}
