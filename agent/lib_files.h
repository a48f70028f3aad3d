/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Library files of the job that are other files than the node's: a
 * container image's libc, MPI or HDF5, or a job's own build of one. The
 * BPF side stops a traced process at its first mapping for execution of a
 * file the agent has not looked at (bpf/libs.bpf.c); the agent reads the
 * file's soname and, where a uprobe set names that library, puts the set's
 * probes on that file as well, then continues the process. Where uprobes
 * go on the job's processes only (uprobe_scope.h), the same holds serve a
 * new process of the job at its fork or exec: its links are made, then it
 * continues (bpf/holds.bpf.h).
 */
#ifndef DC_LIB_FILES_H
#define DC_LIB_FILES_H

#include <stddef.h>

#include "config.h"
#include "datacrumbs.skel.h"
#include "probes.h"

/* Other files of the sets' libraries probed, at most. */
#define DC_LIB_FILES_MAX 16

struct dc_lib_files;

/* After the sets are attached: the node's files of the uprobe sets'
 * libraries count as looked at. preload: libdcpreload.so, which the
 * command's processes were given to preload (NULL: none), and which one on
 * a libc of its own (a container's) may not find. NULL when no uprobe set
 * was loaded, or the kernel refused the watch (a warning says so). */
struct dc_lib_files *dc_lib_files_new(struct datacrumbs_bpf *skel, struct dc_probes *p,
				      const struct dc_probe_set *sets, int nsets, const char *preload, int verbose);
/* Readable when a process has stopped at a file (-1 for none). */
int dc_lib_files_fd(const struct dc_lib_files *w);
/* Looks at the files processes stopped at, and continues the processes. */
void dc_lib_files_serve(struct dc_lib_files *w);
/* Continues any process still stopped, and stops watching. */
void dc_lib_files_free(struct dc_lib_files *w);

#endif
