/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the node file's writer (nodefile_write.c) and reader
 * (nodefile_read.c) share beyond nodefile.h: the checksums. */
#ifndef DC_NODEFILE_INT_H
#define DC_NODEFILE_INT_H

#include <stddef.h>

#include "crc32.h"
#include "nodefile.h"

/* A header's CRC32, its own crc field taken as 0. */
__u32 dc_nf_chunk_header_crc(struct dc_chunk_header h);
__u32 dc_nf_node_header_crc(struct dc_node_header h);

#endif
