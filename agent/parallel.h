/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Work items run side by side on threads: attaching and detaching many probes. */
#ifndef DC_PARALLEL_H
#define DC_PARALLEL_H

#include <stddef.h>

/* Runs fn(ctx, i) for every i < n on up to nthreads threads (the caller's
 * among them); an item a thread could not be started for runs on the caller. */
void dc_parallel_for(size_t n, int nthreads, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
