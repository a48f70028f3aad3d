/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Attaching probe sets to the loaded BPF programs, and the function table. */
#ifndef DC_PROBES_H
#define DC_PROBES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

struct datacrumbs_bpf;
struct dc_probes;
struct dc_features;
struct dc_load_plan;
struct dc_ksyms;
struct bpf_link;

struct dc_function {
	char *name;
	const char *category;
	__u32 flags; /* DC_EV_SYSCALL, DC_EV_KERNEL, DC_FUNC_KFUNC or DC_FUNC_WRAPPER: how it is observed */
	__u64 argbits;
};

/* For a loaded object: its plan says which levels loaded; ksyms (NULL
 * without kernel function sets) lists the kernel's functions; site_cache
 * (NULL: none) keeps decoded libraries between runs (site_cache.h). */
struct dc_probes *dc_probes_new(struct datacrumbs_bpf *skel, const struct dc_features *f,
				const struct dc_load_plan *plan, struct dc_ksyms *ksyms, const char *site_cache,
				int verbose);
/*
 * Attaches what it can of a set: a missing library or function is a warning
 * on stderr, not an error. Returns the number of probes attached, -1 on a
 * failure that leaves nothing attached for the set (out of memory).
 */
int dc_probes_attach(struct dc_probes *p, const struct dc_probe_set *set);
/* The same for another file of a uprobe set's library (a container's, a
 * job's own build) at path, after the set itself, its symbols read from
 * copy (a file the job's user cannot change): only the functions the set
 * already has, each at its entry. */
int dc_probes_attach_file(struct dc_probes *p, const struct dc_probe_set *set, const char *path, const char *copy);
/* Where uprobes go on the job's processes only (uprobe_scope.h): the links
 * of the process pid, which joined the job, before its next instruction
 * (0, or -errno, said on stderr unless the process is gone); elsewhere
 * nothing to do (0). */
int dc_probes_track(struct dc_probes *p, pid_t pid);
/* Whether uprobes go on the job's processes only. */
bool dc_probes_scoped(const struct dc_probes *p);
/* Lets go of the links of the job's processes that ended. */
void dc_probes_sweep(struct dc_probes *p);
/* The functions no library: set probes, as they return twice or never
 * (--check lists them): n names. */
const char *const *dc_probes_never(size_t *n);
size_t dc_probes_count(const struct dc_probes *p);
const struct dc_function *dc_probes_function(const struct dc_probes *p, __u32 id);
/* The calls wrapper sets ask libdcpmpi.so for (enum dc_wrapper_func), and
 * each one's function id in ids[f]. */
struct dc_funcs dc_probes_wrapper(const struct dc_probes *p, __u32 *ids, size_t nids);
/* Time spent decoding the libraries' code for probe sites. */
__u64 dc_probes_decode_ns(const struct dc_probes *p);
/* Detaches everything and frees the table. */
void dc_probes_destroy(struct dc_probes *p);
/* Links of the caller's, detached with the probes (in one batch). */
int dc_probes_adopt_links(struct dc_probes *p, struct bpf_link **links, size_t n);
/* Whether detaching waits on the kernel for long (many per-function probes). */
bool dc_probes_slow_to_detach(const struct dc_probes *p);
/* Detaches now when that is quick (returns 0), else in a child of its own
 * that outlives the caller (its pid; -1: done here). Call it last. */
pid_t dc_probes_destroy_detached(struct dc_probes *p);

#endif
