// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sets observed at kernel tracepoints: system calls (sys_enter/sys_exit,
 * also for the libc calls that only wrap one), the block and page cache
 * groups, io_uring's requests and the faults on shared file mappings.
 */
#include "mechanisms.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>

#include "datacrumbs.skel.h"
#include "dc_event.h"

static const struct syscall_name {
	const char *name;
	int nr;
} syscall_names[] = {
#include "syscall_names.h"
};

int dc_syscall_nr(const char *name)
{
	for (size_t i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
		if (strcmp(syscall_names[i].name, name) == 0)
			return syscall_names[i].nr;
	return -1;
}

int dc_syscall_function(struct dc_probes *p, const struct dc_probe_set *set, const struct dc_fn_spec *fn, int nr,
			struct dc_missing *miss)
{
	__u64 cookie;
	long id;

	if (nr < 0 || nr >= DC_MAX_SYSCALLS) {
		dc_missing_note(miss, fn->name);
		return 0;
	}
	if (p->wrapped[nr])
		return 0;
	id = dc_probes_add_function(p, fn->name, set->category, DC_EV_SYSCALL, fn->argbits);
	if (id < 0)
		return -1;
	cookie = dc_probes_function(p, id)->argbits | id | DC_COOKIE_ON | (p->aio_calls[nr] ? DC_COOKIE_AIO : 0);
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.dc_syscalls), &nr, &cookie, BPF_ANY))
		return -1;
	return 1;
}

/* The two tracepoints serve every system call: attached once (tp_btf, or
 * raw_tp on kernels without it: whichever pair was loaded). */
int dc_syscall_programs_attach(struct dc_probes *p)
{
	bool typed = p->plan->tp_btf;
	struct bpf_link *in, *out;

	if (p->syscalls_attached)
		return 0;
	if (!p->plan->want[DC_LEVEL_SYSCALLS])
		return -ENOENT; /* refused at load: said there */
	in = bpf_program__attach(typed ? p->skel->progs.dc_sys_enter : p->skel->progs.dc_sys_enter_raw);
	out = in ? bpf_program__attach(typed ? p->skel->progs.dc_sys_exit : p->skel->progs.dc_sys_exit_raw) : NULL;
	if (!in || !out) {
		int err = -errno;

		bpf_link__destroy(in);
		return err;
	}
	if (dc_probes_keep_link(p, in) || dc_probes_keep_link(p, out))
		return -ENOMEM;
	p->syscalls_attached = true;
	return 0;
}

int dc_syscalls_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	struct dc_missing miss = { "", 0 };
	int attached = 0, err;

	for (size_t i = 0; i < set->nfns; i++) {
		/* One already observed under a libc call's name is left to it. */
		int rc = dc_syscall_function(p, set, &set->fns[i], dc_syscall_nr(set->fns[i].name), &miss);

		if (rc < 0)
			return -1;
		attached += rc;
	}
	dc_missing_warn(set, &miss, "not found in this architecture's system calls");
	if (attached && (err = dc_syscall_programs_attach(p))) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach the sys_enter/sys_exit "
				"tracepoints: %s\n", set->name, strerror(-err));
		return 0;
	}
	if (p->verbose && attached)
		fprintf(stderr, "dc-agent: probe set '%s': %s sys_enter/sys_exit tracepoints\n", set->name,
			p->plan->tp_btf ? "tp_btf" : "raw_tp");
	return attached;
}

/* Tells the BPF side which function ids kernel events are reported under. */
static int set_kernel_func(struct dc_probes *p, enum dc_kfunc k, __u32 id)
{
	int fd = bpf_map__fd(p->skel->maps.dc_config);
	struct dc_config cfg;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &cfg))
		return -1;
	cfg.kernel_func[k] = id;
	return bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY);
}

/* A link a kernel set's program made (NULL: it could not be attached to
 * what, said): 1 kept, 0 not attached, -1 out of memory. */
static int keep_link(struct dc_probes *p, const struct dc_probe_set *set, struct bpf_link *l, const char *what)
{
	if (!l) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach %s: %s\n", set->name, what,
			strerror(errno));
		return 0;
	}
	return dc_probes_keep_link(p, l) ? -1 : 1;
}

/* A kernel set's programs (NULL ones skipped): how many are attached,
 * each one that cannot be said; -1 when out of memory. */
static int attach_programs(struct dc_probes *p, const struct dc_probe_set *set, struct bpf_program **progs, size_t n)
{
	int attached = 0;

	for (size_t i = 0; i < n; i++) {
		int rc = progs[i] ? keep_link(p, set, bpf_program__attach(progs[i]), bpf_program__section_name(progs[i]))
				  : 0;

		if (rc < 0)
			return -1;
		attached += rc;
	}
	return attached;
}

/* A request's operation (io_uring's, AIO's), reported under its name at
 * its set's level; moves: its positive result is bytes moved. */
struct req_op {
	unsigned op;
	const char *name;
	bool moves;
};

/* The functions of n operations, told to the BPF side as 1 + each one's
 * id in funcs[op] (0: none) and its bit in moves: 0, or -1. */
static int name_ops(struct dc_probes *p, const struct dc_probe_set *set, const struct req_op *ops, size_t n,
		    __u32 *funcs, __u64 *moves)
{
	for (size_t i = 0; i < n; i++) {
		long id = dc_probes_add_function(p, ops[i].name, set->category, DC_EV_KERNEL, 0);

		if (id < 0)
			return -1;
		funcs[ops[i].op] = id + 1;
		if (ops[i].moves)
			*moves |= 1ull << ops[i].op;
	}
	return 0;
}

/* Raw tracepoints, each by the name this kernel gives it: how many are
 * attached (one that cannot be is said), -1 when out of memory. */
struct raw_tp {
	struct bpf_program *prog;
	const char *name;
};

static int attach_raw(struct dc_probes *p, const struct dc_probe_set *set, const struct raw_tp *tps, size_t n)
{
	int attached = 0;

	for (size_t i = 0; i < n; i++) {
		int rc = keep_link(p, set, bpf_program__attach_raw_tracepoint(tps[i].prog, tps[i].name), tps[i].name);

		if (rc < 0)
			return -1;
		attached += rc;
	}
	return attached;
}

/* io_uring's operations on files. */
static const struct req_op uring_ops[] = {
	{ IORING_OP_READV, "readv", true },	     { IORING_OP_WRITEV, "writev", true },
	{ IORING_OP_READ_FIXED, "read_fixed", true }, { IORING_OP_WRITE_FIXED, "write_fixed", true },
	{ IORING_OP_READ, "read", true },	     { IORING_OP_WRITE, "write", true },
	{ IORING_OP_SPLICE, "splice", true },	     { IORING_OP_TEE, "tee", true },
	{ IORING_OP_FSYNC, "fsync", false },	     { IORING_OP_SYNC_FILE_RANGE, "sync_file_range", false },
	{ IORING_OP_FALLOCATE, "fallocate", false }, { IORING_OP_FADVISE, "fadvise", false },
	{ IORING_OP_OPENAT, "openat", false },	     { IORING_OP_OPENAT2, "openat2", false },
	{ IORING_OP_CLOSE, "close", false },	     { IORING_OP_STATX, "statx", false },
	{ IORING_OP_RENAMEAT, "renameat", false },   { IORING_OP_UNLINKAT, "unlinkat", false },
	{ IORING_OP_MKDIRAT, "mkdirat", false },     { IORING_OP_SYMLINKAT, "symlinkat", false },
	{ IORING_OP_LINKAT, "linkat", false },
};

/* The io_uring set: its operations' functions told to the BPF side, then
 * the submission and completion tracepoints. */
static int uring_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	const char *submit = p->feat->uring_submit;
	const struct raw_tp tps[] = { { p->skel->progs.dc_uring_submit, submit },
				      { p->skel->progs.dc_uring_complete, "io_uring_complete" } };
	int fd = bpf_map__fd(p->skel->maps.dc_config);
	struct dc_config cfg;
	__u32 zero = 0;

	if (!p->plan->want[DC_LEVEL_URING] || !submit) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': this kernel has no io_uring request "
				"tracepoints (io_uring_submit_req or _sqe with the request, Linux 6.1): only the "
				"io_uring system calls are seen (the syscalls set)\n", set->name);
		return 0;
	}
	_Static_assert(IORING_OP_LAST <= DC_URING_OPS, "io_uring's operations fit the table");
	if (bpf_map_lookup_elem(fd, &zero, &cfg) ||
	    name_ops(p, set, uring_ops, sizeof(uring_ops) / sizeof(uring_ops[0]), cfg.uring_func, &cfg.uring_moves) ||
	    bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY))
		return -1;
	return attach_raw(p, set, tps, 2);
}

/* The mmap set: a read and a write function, and the one program on both
 * page fault tracepoints (the user's and the kernel's on its behalf). */
static int mmap_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	const struct raw_tp tps[] = { { p->skel->progs.dc_mmap_fault, "page_fault_user" },
				      { p->skel->progs.dc_mmap_fault, "page_fault_kernel" } };
	long rd, wr;

	if (!p->plan->want[DC_LEVEL_MMAP]) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': this kernel cannot name the file behind a page "
				"fault (x86 page fault tracepoints and bpf_find_vma, Linux 5.17): I/O through file "
				"mappings is not seen\n", set->name);
		return 0;
	}
	rd = dc_probes_add_function(p, "mmap_read", set->category, DC_EV_KERNEL, 0);
	wr = dc_probes_add_function(p, "mmap_write", set->category, DC_EV_KERNEL, 0);
	if (rd < 0 || wr < 0 || set_kernel_func(p, DC_KFUNC_MMAP_READ, rd) || set_kernel_func(p, DC_KFUNC_MMAP_WRITE, wr))
		return -1;
	return attach_raw(p, set, tps, 2);
}

/* Linux AIO's operations. */
static const struct req_op aio_ops[] = {
	{ IOCB_CMD_PREAD, "pread", true },   { IOCB_CMD_PWRITE, "pwrite", true },
	{ IOCB_CMD_PREADV, "preadv", true }, { IOCB_CMD_PWRITEV, "pwritev", true },
	{ IOCB_CMD_FSYNC, "fsync", false },  { IOCB_CMD_FDSYNC, "fdsync", false },
	{ IOCB_CMD_POLL, "poll", false },    { IOCB_CMD_NOOP, "noop", false },
};

/* Marks a system call that submits or reaps requests: its cookie, if a set
 * traces it already, else it is traced as of the syscalls set. */
static int aio_call(struct dc_probes *p, const struct dc_probe_set *set, const char *name, __s32 *nr_out)
{
	int fd = bpf_map__fd(p->skel->maps.dc_syscalls), nr = dc_syscall_nr(name);
	struct dc_probe_set as_syscall = { .name = set->name, .category = "syscall", .kind = DC_SET_SYSCALLS };
	struct dc_fn_spec fn = { .name = (char *)name, .select = DC_FN_NAME };
	__u32 key = nr;
	__u64 cookie = 0;

	*nr_out = nr;
	if (nr < 0 || nr >= DC_MAX_SYSCALLS)
		return 0;
	p->aio_calls[nr] = true;
	if (bpf_map_lookup_elem(fd, &key, &cookie) == 0 && cookie) {
		cookie |= DC_COOKIE_AIO;
		return bpf_map_update_elem(fd, &key, &cookie, BPF_ANY) ? -1 : 0;
	}
	return dc_syscall_function(p, &as_syscall, &fn, nr, NULL) < 0 ? -1 : 0;
}

/* The aio set: its operations' functions and the system calls told to the
 * BPF side, then the system call tracepoints. */
static int aio_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	int fd = bpf_map__fd(p->skel->maps.dc_config), err;
	struct dc_config cfg;
	__u32 zero = 0;

	if (!p->plan->want[DC_LEVEL_AIO]) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': this kernel cannot walk a system call's AIO "
				"requests (bpf_loop, Linux 5.17): only the AIO system calls are seen (the syscalls set)\n",
			set->name);
		return 0;
	}
	_Static_assert(IOCB_CMD_PWRITEV < DC_AIO_OPS, "AIO's operations fit the table");
	if (bpf_map_lookup_elem(fd, &zero, &cfg) ||
	    name_ops(p, set, aio_ops, sizeof(aio_ops) / sizeof(aio_ops[0]), cfg.aio_func, &cfg.aio_moves) ||
	    aio_call(p, set, "io_submit", &cfg.aio_submit_nr) || aio_call(p, set, "io_getevents", &cfg.aio_getevents_nr) ||
	    aio_call(p, set, "io_pgetevents", &cfg.aio_pgetevents_nr) || bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY))
		return -1;
	if ((err = dc_syscall_programs_attach(p))) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach the sys_enter/sys_exit tracepoints: %s\n",
			set->name, strerror(-err));
		return 0;
	}
	return 1;
}

int dc_tracepoints_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	static const struct {
		const char *group, *name;
		enum dc_kfunc k;
	} funcs[] = {
		{ "block", "block_rq", DC_KFUNC_BLOCK_RQ },
		{ "pagecache", "page_cache_add", DC_KFUNC_PAGE_ADD },
		{ "pagecache", "page_cache_delete", DC_KFUNC_PAGE_DELETE },
	};
	bool block = strcmp(set->kernel, "block") == 0;
	struct bpf_program *progs[4];

	if (strcmp(set->kernel, "io_uring") == 0)
		return uring_attach(p, set);
	if (strcmp(set->kernel, "mmap") == 0)
		return mmap_attach(p, set);
	if (strcmp(set->kernel, "aio") == 0)
		return aio_attach(p, set);
	progs[0] = block ? p->skel->progs.dc_block_queue : NULL;
	progs[1] = block ? p->skel->progs.dc_block_split : NULL;
	progs[2] = block ? p->skel->progs.dc_block_issue : p->skel->progs.dc_page_add;
	progs[3] = block ? p->skel->progs.dc_block_complete : p->skel->progs.dc_page_delete;

	if (!p->plan->want[block ? DC_LEVEL_BLOCK : DC_LEVEL_PAGECACHE])
		return 0; /* refused at load: said there */
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		long id;

		if (strcmp(funcs[i].group, set->kernel))
			continue;
		id = dc_probes_add_function(p, funcs[i].name, set->category, DC_EV_KERNEL, 0);
		if (id < 0 || set_kernel_func(p, funcs[i].k, id))
			return -1;
	}
	return attach_programs(p, set, progs, 4);
}
