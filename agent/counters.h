/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading what the BPF programs count in the kernel: PROFILE totals and drop statistics. */
#ifndef DC_COUNTERS_H
#define DC_COUNTERS_H

#include <linux/types.h>
#include <stddef.h>

#include "nodefile.h"

/* Writes one COUNTERS record per (pid, function) of the profile map, then
 * drops the entries of the given exited pids, whose totals are final. */
/* Writes the per-CPU totals of the profile map, summed; then drops the
 * exited processes' entries. */
int dc_profile_snapshot(int map_fd, int ncpus, struct dc_writer *w, __u64 now, const __u32 *exited,
			size_t nexited);
/* Reads the per-CPU statistics map into out[0..ncpus). */
int dc_stats_read(int map_fd, struct dc_cpu_stats *out, int ncpus);
/* Sum of one statistic over the CPUs. */
unsigned long long dc_stats_total(const struct dc_cpu_stats *s, int ncpus, int stat);

#endif
