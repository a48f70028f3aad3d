/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach mechanisms, one per kind of probe set: uprobes (uprobes.c),
 * system calls and kernel tracepoint groups (tracepoints.c), kernel
 * functions (kprobes.c), and the calls libdcpmpi.so records (wrapper_set.c).
 * Each fills the probe table (probes_int.h) through its services; only
 * set_attach.c picks among them, so the table never calls back into a
 * mechanism.
 */
#ifndef DC_MECHANISMS_H
#define DC_MECHANISMS_H

#include "probes_int.h"

/* By kind of set. */
int dc_uprobes_attach(struct dc_probes *p, const struct dc_probe_set *set);
/* Another file of a uprobe set's library (a container's) at path, read
 * from a copy of it: the functions already in the table, by their ids. */
int dc_uprobes_attach_file(struct dc_probes *p, const struct dc_probe_set *set, const char *path, const char *copy);
int dc_syscalls_attach(struct dc_probes *p, const struct dc_probe_set *set);
int dc_tracepoints_attach(struct dc_probes *p, const struct dc_probe_set *set);
int dc_kfuncs_attach(struct dc_probes *p, const struct dc_probe_set *set);
/* A libc call observed at system call nr (a thin wrapper): 1 added, 0 not
 * here or already reported, -1 on failure. */
int dc_syscall_function(struct dc_probes *p, const struct dc_probe_set *set, const struct dc_fn_spec *fn, int nr,
			struct dc_missing *miss);
int dc_syscall_programs_attach(struct dc_probes *p);
int dc_syscall_nr(const char *name);

/* wrapper_set.c: a wrapper set's functions into the table. */
int dc_wrapper_attach(struct dc_probes *p, const struct dc_probe_set *set);
/* Whether a wrapper set already serves the library function called name. */
bool dc_wrapper_serves(const struct dc_probes *p, const char *name);

#endif
