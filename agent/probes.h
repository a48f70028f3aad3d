/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Attaching probe sets to the loaded BPF programs, and the function table. */
#ifndef DC_PROBES_H
#define DC_PROBES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

struct datacrumbs_bpf;
struct dc_probes;

struct dc_function {
	char *name;
	const char *category;
	__u32 flags; /* DC_EV_SYSCALL for system calls */
	__u64 argbits;
};

/* Before the skeleton is loaded: user-level probes use uprobe_multi links. */
int dc_probes_prepare(struct datacrumbs_bpf *skel);
struct dc_probes *dc_probes_new(struct datacrumbs_bpf *skel, bool verbose);
/*
 * Attaches what it can of a set: a missing library or function is a warning
 * on stderr, not an error. Returns the number of probes attached, -1 on a
 * failure that leaves nothing attached for the set (out of memory).
 */
int dc_probes_attach(struct dc_probes *p, const struct dc_probe_set *set);
size_t dc_probes_count(const struct dc_probes *p);
const struct dc_function *dc_probes_function(const struct dc_probes *p, __u32 id);
/* Detaches everything and frees the table. */
void dc_probes_destroy(struct dc_probes *p);

#endif
