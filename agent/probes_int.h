/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the probe attacher: the state the files of each kind of set share
 * (probes.c the function table and detaching, uprobes.c library sets,
 * tracepoints.c system calls and the block/page cache groups, kprobes.c
 * kernel functions). Not for the rest of the agent.
 */
#ifndef DC_PROBES_INT_H
#define DC_PROBES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf_load.h"
#include "clones.h"
#include "kernel_features.h"
#include "perf_probes.h"
#include "probes.h"
#include "rank_ring.h"

struct dc_hashtab;
struct dc_code;
struct dc_ksyms;
struct dc_scope;

/*
 * Program copies are verified side by side (CPU work). Perf-event probes
 * are attached one by one: the kernel serializes them under event_mutex
 * (all of libc, 4,252 events: 2.07 s on one thread, 2.06 s on 16), and on
 * 5.10 uprobes registered from many threads at once while processes fork
 * can lock up (dup_mmap_sem).
 */
#define DC_LOAD_THREADS 4
#define DC_ATTACH_THREADS 1

/* Which program a copy is made of. */
enum dc_clone_prog {
	DC_CLONE_CALL_ENTRY,
	DC_CLONE_CALL_EXIT,
	DC_CLONE_KFUNC_ENTRY,
	DC_CLONE_KFUNC_EXIT,
	DC_CLONE_FENTRY,
	DC_CLONE_FEXIT,
	DC_NR_CLONE_PROGS,
};

struct dc_probes {
	struct datacrumbs_bpf *skel;
	const struct dc_features *feat;
	const struct dc_load_plan *plan;
	struct dc_ksyms *ksyms; /* NULL without kernel function sets */
	struct dc_scope *scope; /* uprobes on the job's processes only; else NULL */
	const char *site_cache; /* folder of decoded libraries (NULL: none) */
	int verbose; /* -v: 1, -vv: 2 */
	struct dc_function *fns;
	size_t nfns, cap_fns;
	struct bpf_link **links; /* tracepoints */
	size_t nlinks, cap_links;
	int *fds; /* uprobe_multi and kprobe_multi links, perf events, fentry links */
	size_t nfds, cap_fds;
	size_t nslow; /* of them, per-function probes: perf events and fentry links */
	struct dc_hashtab *attached; /* (library hash, offset) -> function id; (0, name hash) for kernel functions */
	char **categories;
	size_t ncategories;
	bool syscalls_attached;
	/* Calls libdcpmpi.so records (wrapper sets): enum dc_wrapper_func
	 * f, recorded as function wrapper_ids[f]. */
	struct dc_funcs wrapper_funcs;
	__u32 wrapper_ids[DC_RING_MAX_FUNCS];
	/* System calls that observe a libc call (a thin wrapper) for a user set. */
	bool wrapped[DC_MAX_SYSCALLS];
	/* System calls that submit or reap AIO requests, for the aio set. */
	bool aio_calls[DC_MAX_SYSCALLS];
	/* Each object's code is decoded once, whatever the sets that probe it. */
	struct code_cache {
		char *key; /* build id, else path */
		struct dc_code *code;
	} *codes;
	size_t ncodes;
	__u64 decode_ns; /* spent decoding libraries (-v's site analysis) */
	/* Programs copied per probe where the kernel has no attach cookie. */
	struct dc_clone_src clone_src[DC_NR_CLONE_PROGS];
	bool clone_taken[DC_NR_CLONE_PROGS];
};

/* The instructions of a loaded program, copied once; NULL without memory. */
const struct dc_clone_src *dc_probes_clone_src(struct dc_probes *p, enum dc_clone_prog which);

/* A new function's id, or -1 when the table is full (or out of memory).
 * Its argbits gain DC_COOKIE_READS or DC_COOKIE_WRITES from its name
 * (io_kind.h): build its cookie from dc_probes_function(p, id)->argbits. */
long dc_probes_add_function(struct dc_probes *p, const char *name, const char *category, __u32 flags,
			    __u64 argbits);
/* The id of the function called name of category, or -1. */
long dc_probes_find_function(const struct dc_probes *p, const char *name, const char *category);
int dc_probes_keep_fd(struct dc_probes *p, int fd);
/* The same for a per-function probe, which the kernel detaches slowly. */
int dc_probes_keep_slow_fd(struct dc_probes *p, int fd);
int dc_probes_keep_link(struct dc_probes *p, struct bpf_link *l);

/* Names that were not attached, for one warning line per set. */
struct dc_missing {
	char text[512];
	size_t n;
};

void dc_missing_note(struct dc_missing *m, const char *name);
/* "probe set 'S': N function(s) WHAT: a, b, c, ..." on stderr, if any. */
void dc_missing_warn(const struct dc_probe_set *set, const struct dc_missing *m, const char *what);

/*
 * Entry and return probes through perf events, one pair per target (a
 * library and offset, or a kernel function's name), with attach cookies or
 * a copy of the programs each: 0, with refused[i] set for the targets the
 * kernel would not probe (both of a pair or neither); -ENOMEM.
 */
int dc_probes_attach_pairs(struct dc_probes *p, enum dc_perf_kind kind, const char *const *targets,
			   const unsigned long *offsets, const __u64 *cookies, size_t n, bool *refused);

#endif
