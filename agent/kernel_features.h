/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers to BPF, found once at start by feature
 * probes (small test loads and attaches, never a version number), and the
 * mechanism each level of the trace then uses. `dc-agent --check` prints it.
 */
#ifndef DC_FEATURES_H
#define DC_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

/* X(id, name, the oldest Linux that has it, what it is) */
#define DC_FEATURES(X)                                                                             \
	X(BTF, "btf", "5.4", "kernel BTF at /sys/kernel/btf/vmlinux")                              \
	X(RINGBUF, "ringbuf", "5.8", "the BPF ring buffer")                                        \
	X(TP_BTF, "tp_btf", "5.5", "BTF-typed tracepoint programs")                                \
	X(RAW_TP, "raw_tp", "4.17", "raw tracepoint programs")                                     \
	X(TASK_STORAGE, "task_storage", "5.11", "task storage and bpf_get_current_task_btf")       \
	X(BPF_LOOP, "bpf_loop", "5.17", "the bpf_loop helper")                                     \
	X(COOKIE, "cookie", "5.15", "attach cookies and BPF links for kprobe and uprobe events")   \
	X(UPROBES, "uprobes", "4.17", "uprobe perf events")                                        \
	X(UPROBE_MULTI, "uprobe_multi", "6.6", "uprobe_multi links")                               \
	X(UPROBE_SCOPED, "uprobe_scoped", "6.13", "uprobes in the job's processes only (links for one process, a new one held at its fork)") \
	X(KPROBES, "kprobes", "4.17", "kprobe perf events")                                        \
	X(KPROBE_MULTI, "kprobe_multi", "5.18 with CONFIG_FPROBE", "kprobe_multi links")           \
	X(FENTRY, "fentry", "5.5", "fentry/fexit programs")                                        \
	X(URETPROBE_SYSCALL, "uretprobe_syscall", "6.11", "the uretprobe system call (cheaper returns)")        \
	X(URING_REQ, "uring_req", "6.1", "io_uring's request tracepoints (io_uring_submit_req or _sqe, with the request)") \
	X(MMAP_FAULTS, "mmap_faults", "5.17 on x86", "page fault tracepoints and bpf_find_vma (the file behind a fault)")

enum dc_feature {
#define DC_FEATURE_ENUM(id, name, since, what) DC_FEAT_##id,
	DC_FEATURES(DC_FEATURE_ENUM)
#undef DC_FEATURE_ENUM
	DC_NR_FEATURES,
};

struct dc_features {
	bool has[DC_NR_FEATURES];
	bool probed[DC_NR_FEATURES];
	/* Forced off by a test build's DC_TEST_FEATURES_OFF (present all the same). */
	bool forced_off[DC_NR_FEATURES];
	char release[65]; /* uname -r */
	/* Found with uring_req, in one pass over the kernel's BTF: the
	 * tracepoint a submission passes the request to first
	 * (io_uring_submit_req; io_uring_submit_sqe before 6.3), and whether
	 * io_uring_complete passes the completion (struct io_uring_cqe *)
	 * rather than its fields. */
	const char *uring_submit;
	bool uring_cqe;
};

#define DC_FEAT_BIT(id) (1u << DC_FEAT_##id)
/* What every start needs: cheap probes (tp_btf, which needs a pass over
 * the kernel's BTF, is learnt from the load itself). */
#define DC_FEATURES_START                                                                          \
	(DC_FEAT_BIT(BTF) | DC_FEAT_BIT(RINGBUF) | DC_FEAT_BIT(RAW_TP) | DC_FEAT_BIT(TASK_STORAGE) | \
	 DC_FEAT_BIT(BPF_LOOP) | DC_FEAT_BIT(COOKIE) | DC_FEAT_BIT(UPROBES) | DC_FEAT_BIT(UPROBE_MULTI))
/* ...io_uring sets; and kernel function sets. */
#define DC_FEATURES_URING DC_FEAT_BIT(URING_REQ)
/* ...uprobe sets (a pass over the kernel's BTF). */
#define DC_FEATURES_USER DC_FEAT_BIT(UPROBE_SCOPED)
#define DC_FEATURES_MMAP DC_FEAT_BIT(MMAP_FAULTS)
#define DC_FEATURES_KFUNCS (DC_FEAT_BIT(KPROBES) | DC_FEAT_BIT(KPROBE_MULTI) | DC_FEAT_BIT(FENTRY))
#define DC_FEATURES_ALL ((1u << DC_NR_FEATURES) - 1)

/* Probes the features in want (DC_FEAT_BIT mask). Needs the privileges the
 * agent needs (test loads). */
void dc_features_probe(struct dc_features *f, unsigned want);
const char *dc_feature_name(enum dc_feature id);
const char *dc_feature_since(enum dc_feature id);

/* The mechanism of each level. */
enum dc_user_mech { DC_USER_NONE, DC_USER_MULTI, DC_USER_PERF_COOKIE, DC_USER_PERF_CLONES };
enum dc_kfunc_mech { DC_KFUNC_NONE, DC_KFUNC_MULTI, DC_KFUNC_FENTRY, DC_KFUNC_KPROBE_COOKIE, DC_KFUNC_KPROBE_CLONES };

enum dc_user_mech dc_user_mech(const struct dc_features *f);
/* Whether uprobes go on the job's processes only (agent/uprobe_scope.h). */
bool dc_user_scoped(const struct dc_features *f);
/* The best kprobe-based way for kernel functions (fentry is chosen per
 * function, where the function has BTF). */
enum dc_kfunc_mech dc_kprobe_mech(const struct dc_features *f);
const char *dc_user_mech_text(enum dc_user_mech m);
const char *dc_kfunc_mech_text(enum dc_kfunc_mech m);

/* Whether the block_rq_complete tracepoint passes the request's
 * blk_status_t (newer kernels) rather than an errno (5.10): the type of its
 * argument in the kernel's BTF. */
bool dc_kernel_rq_complete_passes_status(void);

/* --check: one line per level; returns how many levels can be traced. */
int dc_features_report(const struct dc_features *f, FILE *out);

#endif
