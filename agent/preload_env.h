/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libdcpreload.so in the environment of the command the agent starts,
 * where a wrapper set of the STDIO or HDF5 level asks for it: every
 * process of the command that keeps its environment records those calls
 * itself, at a function call's cost, and no other process on the node
 * pays for them (mpi_hooks/preload.c).
 */
#ifndef DC_PRELOAD_ENV_H
#define DC_PRELOAD_ENV_H

#include <stdbool.h>
#include <stddef.h>

struct dc_probe_set;

/* Whether the sets ask for it: a wrapper set of level stdio or hdf5. */
bool dc_preload_wanted(const struct dc_probe_set *sets, int nsets);
/*
 * The library: the first of the colon-separated candidates that is a
 * regular file owned by root or by uid and writable by no one else (the
 * command may run as root). 0 with its path in out, or -1 with why.
 */
int dc_preload_find(const char *candidates, unsigned uid, char *out, size_t len, char *why, size_t whylen);
/* Puts path first in LD_PRELOAD (kept after it): 0, or -1 (no memory). */
int dc_preload_export(const char *path);

#endif
