/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the node file's writer (nodefile_write.c) and reader
 * (nodefile_read.c) share beyond nodefile.h: the checksums and their
 * scratch buffers' growth. */
#ifndef DC_NODEFILE_INT_H
#define DC_NODEFILE_INT_H

#include <stddef.h>
#include <stdlib.h>

#include "crc32.h"
#include "nodefile.h"

/* A header's CRC32, its own crc field taken as 0. */
__u32 dc_nf_chunk_header_crc(struct dc_chunk_header h);
__u32 dc_nf_node_header_crc(struct dc_node_header h);

/* Room for n bytes in the buffer *(void **)p holds (of *cap bytes),
 * grown to exactly n; -1 without memory (the buffer is kept). */
static inline int dc_nf_room(void *p, size_t *cap, size_t n)
{
	void *v;

	if (n <= *cap)
		return 0;
	v = realloc(*(void **)p, n);
	if (!v)
		return -1;
	*(void **)p = v;
	*cap = n;
	return 0;
}

#endif
