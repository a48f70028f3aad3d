/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one reader of the HDF5 layout (hdf5_tables.h): dc-summary
 * (summary_h5.c), the stitch's checks of parts (hdf5_stitch.c) and the test
 * tools read a merged, stitched or part file through these, naming
 * datasets, attributes and columns by the layout's own names.
 */
#ifndef DC_H5_READ_H
#define DC_H5_READ_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "hdf5_layout.h"

/* A dataset of strings: v[0..n), each the reader's to free (dc_h5_strings_free). */
struct dc_h5_strings {
	char **v;
	hssize_t n;
};

int dc_h5_read_strings(hid_t f, const char *name, struct dc_h5_strings *out);
void dc_h5_strings_free(struct dc_h5_strings *s);

/*
 * All rows of dataset name as memory type t (the caller's, to close): a
 * calloc'd array of *n rows of row_size (one more, zeroed), or NULL when
 * the dataset is missing or unreadable. Variable-length strings in the rows
 * are the caller's to free.
 */
void *dc_h5_read_rows(hid_t f, const char *name, hid_t t, size_t row_size, hssize_t *n);

/* The rows of dataset name, a block of at most block rows at a time, each
 * block handed to take(ctx, rows, count) (non-zero stops). 0, or -1. */
int dc_h5_read_blocks(hid_t f, const char *name, hid_t t, size_t row_size, hsize_t block,
		      int (*take)(void *ctx, const void *rows, hsize_t count), void *ctx);

/* How many rows dataset name has; -1 when it is missing. */
int64_t dc_h5_rows(hid_t f, const char *name);

/* A call of /events as its readers take it: the columns they use, by
 * name; dc_h5_call_type() is its memory type (the caller closes it). */
struct dc_h5_call {
	uint64_t ts, dur, req, bytes;
	int32_t rank;
	uint16_t node;
	uint32_t function, path;
	uint32_t path2; /* 0 in a file from before the column */
	uint8_t flags;
};

hid_t dc_h5_call_type(void);

/* /functions: name and level of each function index (the io column is
 * dc_io_kind(name), io_kind.h). */
struct dc_h5_fn {
	char *name, *level;
};

struct dc_h5_fn *dc_h5_read_functions(hid_t f, hssize_t *n);
void dc_h5_functions_free(struct dc_h5_fn *fns, hssize_t n);

/* 0 when this reader knows the file's layout (hdf5_layout.h); else -1,
 * with what to do in err. */
int dc_h5_check_layout(hid_t f, char *err, size_t errlen);

/* An attribute of obj: 0, or -1 when it is missing or not a number. */
int dc_h5_get_u64(hid_t obj, const char *name, uint64_t *v);
/* A string attribute of obj, as a new string; NULL when missing. */
char *dc_h5_get_str(hid_t obj, const char *name);

#endif
