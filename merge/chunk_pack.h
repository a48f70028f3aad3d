/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chunks of table rows shuffled and deflated on long-lived worker threads,
 * byte for byte as HDF5's shuffle and deflate filters would do it: the
 * writer hands a chunk over, goes on filling the next one, and takes packed
 * chunks back in the order it chooses.
 */
#ifndef DC_CHUNK_PACK_H
#define DC_CHUNK_PACK_H

#include <stdbool.h>
#include <stddef.h>

struct dc_pack_job {
	const void *rows;
	size_t nrows, row_size;
	void *out;      /* receives the deflate stream */
	size_t out_cap; /* at least dc_pack_bound() of the rows */
	size_t out_len;
	int err;
	/* the packer's own */
	bool done;
	struct dc_pack_job *next;
};

/* Workers for up to max_bytes of rows a chunk; with threads 0, or when no
 * thread can be had, a job is packed by the caller in submit. */
struct dc_packer *dc_packer_new(unsigned threads, size_t max_bytes);
size_t dc_pack_bound(size_t bytes, size_t row_size);
void dc_packer_submit(struct dc_packer *p, struct dc_pack_job *j);
/* Returns once j is packed; j->err is 0 when it went well. */
void dc_packer_wait(struct dc_packer *p, struct dc_pack_job *j);
/* Waits for the jobs still queued, then stops the workers. */
void dc_packer_free(struct dc_packer *p);

#endif
