// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "counters.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

static bool in_list(__u32 pid, const __u32 *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == pid)
			return true;
	return false;
}

int dc_profile_snapshot(int map_fd, int ncpus, struct dc_writer *w, __u64 now, const __u32 *exited,
			size_t nexited)
{
	struct dc_profile_key key, next, *prev = NULL, *gone = NULL;
	/* The map is per CPU: a lookup fills one value per possible CPU. */
	struct dc_profile_val *vals = calloc(ncpus, sizeof(*vals));
	size_t ngone = 0, cap = 0;
	int rc = 0;

	if (!vals)
		return -1;
	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		struct dc_counter c = { now, next.pid, next.func };

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, vals))
			continue;
		for (int i = 0; i < ncpus; i++) {
			c.count += vals[i].count;
			c.time_ns += vals[i].time_ns;
			c.bytes += vals[i].bytes;
		}
		if (dc_writer_counter(w, &c))
			rc = -1;
		/* An exited process's totals are final: its keys go after the
		 * walk. Deleting during it would restart it, and each restart
		 * walks the map's buckets again from the first (65,536 of them,
		 * most empty) up to the next key to delete. */
		if (in_list(key.pid, exited, nexited)) {
			if (ngone == cap) {
				struct dc_profile_key *more = realloc(gone, (cap = cap ? 2 * cap : 64) * sizeof(*gone));

				if (!more)
					continue; /* kept: written again at each snapshot */
				gone = more;
			}
			gone[ngone++] = key;
		}
	}
	for (size_t i = 0; i < ngone; i++)
		bpf_map_delete_elem(map_fd, &gone[i]);
	free(gone);
	free(vals);
	return rc;
}

int dc_stats_read(int map_fd, struct dc_cpu_stats *out, int ncpus)
{
	__u64 *vals = calloc(ncpus, sizeof(*vals));

	if (!vals)
		return -1;
	for (int c = 0; c < ncpus; c++) {
		memset(&out[c], 0, sizeof(out[c]));
		out[c].cpu = c;
	}
	for (__u32 s = 0; s < DC_NR_STATS; s++) {
		if (bpf_map_lookup_elem(map_fd, &s, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			out[c].stat[s] = vals[c];
	}
	free(vals);
	return 0;
}

unsigned long long dc_stats_total(const struct dc_cpu_stats *s, int ncpus, int stat)
{
	unsigned long long t = 0;

	for (int c = 0; c < ncpus; c++)
		t += s[c].stat[stat];
	return t;
}
