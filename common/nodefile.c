// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the node file's writer (nodefile_write.c) and reader
 * (nodefile_read.c) share: record sizes, chunk names, checksums, and the
 * function table a reader builds. */
#include "nodefile.h"
#include "nodefile_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const size_t rec_sizes[DC_CHUNK_TYPE_MAX] = {
	[DC_CHUNK_FUNCS] = sizeof(struct dc_func),
	[DC_CHUNK_PROCS] = sizeof(struct dc_proc),
	[DC_CHUNK_EVENTS] = sizeof(struct dc_event),
	[DC_CHUNK_COUNTERS] = sizeof(struct dc_counter),
	[DC_CHUNK_STATS] = sizeof(struct dc_cpu_stats),
	[DC_CHUNK_RANKS] = sizeof(struct dc_rank),
};

static const char *const type_names[DC_CHUNK_TYPE_MAX] = {
	[DC_CHUNK_STRINGS] = "strings", [DC_CHUNK_FUNCS] = "functions",
	[DC_CHUNK_PROCS] = "processes", [DC_CHUNK_EVENTS] = "events",
	[DC_CHUNK_COUNTERS] = "counters", [DC_CHUNK_STATS] = "statistics",
	[DC_CHUNK_END] = "end", [DC_CHUNK_RANKS] = "ranks",
};

size_t dc_chunk_rec_size(unsigned type)
{
	return type < DC_CHUNK_TYPE_MAX ? rec_sizes[type] : 0;
}

size_t dc_chunk_file_rec_size(unsigned type, unsigned version)
{
	if (type == DC_CHUNK_EVENTS)
		return version >= 3 ? 0 : DC_EVENT_V2_SIZE;
	return dc_chunk_rec_size(type);
}

size_t dc_chunk_data_size(const struct dc_chunk_header *h)
{
	size_t rs = dc_chunk_rec_size(h->type);

	return rs ? (size_t)h->count * rs : h->payload_len;
}

const char *dc_chunk_type_name(unsigned type)
{
	return type < DC_CHUNK_TYPE_MAX && type_names[type] ? type_names[type] : "unknown";
}

__u32 dc_nf_chunk_header_crc(struct dc_chunk_header h)
{
	h.header_crc = 0;
	return dc_crc32(&h, sizeof(h));
}

__u32 dc_nf_node_header_crc(struct dc_node_header h)
{
	h.crc = 0;
	return dc_crc32(&h, sizeof(h));
}

/* ---- the function table ---- */

int dc_functable_take(struct dc_functable *t, const struct dc_func *recs, __u32 count)
{
	for (__u32 i = 0; i < count; i++) {
		__u32 id = recs[i].id;

		if (id >= DC_MAX_FUNCS)
			continue;
		if (id >= t->n) {
			struct dc_func *v = realloc(t->v, (id + 1) * sizeof(*v));

			if (!v)
				return -1;
			/* Ids no record names stay marked unknown (id != index). */
			memset(v + t->n, 0xff, (id + 1 - t->n) * sizeof(*v));
			t->v = v;
			t->n = id + 1;
		}
		t->v[id] = recs[i];
	}
	return 0;
}

const struct dc_func *dc_functable_get(const struct dc_functable *t, __u32 id)
{
	return id < t->n && t->v[id].id == id ? &t->v[id] : NULL;
}

void dc_functable_free(struct dc_functable *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
