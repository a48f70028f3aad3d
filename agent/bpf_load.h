/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening and loading the BPF object for this kernel and these probe sets:
 * which programs and maps the kernel gets (the rest are never created),
 * the settings they read as constants, and what happens when the verifier
 * refuses one: that level is left out with a warning that says why, and
 * the others load.
 */
#ifndef DC_BPF_LOAD_H
#define DC_BPF_LOAD_H

#include <stdbool.h>
#include <linux/types.h>

#include "config.h"
#include "kernel_features.h"
#include "options.h"

struct datacrumbs_bpf;

/* The levels a load serves, each a group of programs. */
enum dc_level {
	DC_LEVEL_USER,      /* uprobes on libraries */
	DC_LEVEL_SYSCALLS,  /* sys_enter/sys_exit */
	DC_LEVEL_BLOCK,
	DC_LEVEL_PAGECACHE,
	DC_LEVEL_URING,     /* io_uring requests */
	DC_LEVEL_MMAP,      /* page faults on shared file mappings */
	DC_LEVEL_AIO,       /* Linux AIO requests, walked after the system calls */
	DC_LEVEL_KPROBES,   /* kernel functions through kprobes or kprobe_multi */
	DC_LEVEL_FENTRY,    /* kernel functions through fentry/fexit */
	DC_NR_LEVELS,
};

struct dc_load_plan {
	bool want[DC_NR_LEVELS];
	/* System calls through tp_btf, else raw_tp: taken as the kernel has
	 * BTF, and turned off if the kernel refuses the tp_btf programs. */
	bool tp_btf;
	/* Uprobes on the job's processes only (agent/uprobe_scope.h): as the
	 * kernel offers it, turned off if it refuses the program that holds a
	 * new process at its fork. */
	bool scoped;
	/* The fentry programs' target while the object loads (each function
	 * then gets a copy): a kernel function with BTF of a kernel set. */
	const char *fentry_target;
	/* The BPF ring buffers (agent/event_rings.h): how many, each's size,
	 * and records to a ring at random (a test build's DC_TEST_RING_SCATTER). */
	__u32 nrings, ring_bytes;
	bool ring_scatter;
	/* The job's user: only its processes, with no privileges gained, are traced. */
	__u32 job_uid;
};

/* What the sets ask for, on this kernel. */
void dc_load_plan_make(struct dc_load_plan *plan, const struct dc_probe_set *sets, int nsets,
		       const struct dc_features *f, const char *fentry_target);

/*
 * Opens, sets up and loads the object; NULL with the reason on stderr. A
 * level whose programs the kernel refuses is dropped from plan->want, with
 * a warning that quotes the verifier (its last lines with verbose).
 */
struct datacrumbs_bpf *dc_bpf_load(struct dc_load_plan *plan, const struct dc_features *f,
				   const struct dc_options *opt, const struct dc_probe_set *sets, int nsets);

const char *dc_level_name(enum dc_level level);

#endif
