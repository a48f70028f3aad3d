/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dc-merge -f perfetto's packets deflated in batches (the default): each
 * batch of whole TracePackets becomes one TracePacket of
 * compressed_packets (field 50), which trace_processor inflates (zlib
 * format) and reads in place of the batch. text_out.c's writing thread
 * calls it with each buffer the writer hands over.
 */
#ifndef DC_PF_DEFLATE_H
#define DC_PF_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

struct dc_pf_deflater;

struct dc_pf_deflater *dc_pf_deflater_new(void);
void dc_pf_deflater_free(struct dc_pf_deflater *d);

/* Deflates the whole packets p[0..n) batch by batch and hands out what to
 * write, in order, to write(ctx, bytes, len), which returns 0 or an errno.
 * 0, or the first errno. */
int dc_pf_deflate(struct dc_pf_deflater *d, const uint8_t *p, size_t n,
		  int (*write)(void *ctx, const void *bytes, size_t len), void *ctx);

#endif
