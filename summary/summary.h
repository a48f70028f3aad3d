/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dc-summary's model of a job: what it reads from node files or a merged
 * HDF5 file (summary_read.c) and what its reports print (summary_print.c
 * as text and JSON, summary_html.c as a page). Every figure a report shows
 * is computed here once, so the text, the JSON and the page agree.
 */
#ifndef DC_SUMMARY_H
#define DC_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NBINS 10
extern const uint64_t dc_summary_bin_limits[NBINS - 1];
extern const char *const dc_summary_bin_names[NBINS];

/* I/O over time: bytes read and written per rank in TL_BINS bins of equal
 * width from the job's first event. A call's bytes count in the bin where it
 * began. The width doubles (adjacent bins merge) whenever a call begins past
 * the last bin, so the span need not be known before reading. */
#define TL_BINS 120

struct dc_hashtab;
struct dc_io_table;

struct totals {
	uint64_t calls, bytes, time_ns, max_ns;
};

struct fn_row { /* a (level, function) */
	char *level, *name;
	int op; /* 0 other, 1 read, 2 write */
	struct totals t;
};

struct file_row {
	char *level, *path;
	struct totals t;
};

struct level_row {
	char *level;
	struct totals t;
	uint64_t read_bytes, write_bytes;
	uint64_t hist[2][NBINS]; /* read, write */
};

struct rank_row {
	struct totals t; /* at the base level */
	bool seen;
};

/* What the header lines say, from node files or a merged file. */
struct job_info {
	char id[64];
	size_t nnodes;
	int ranks;
	unsigned long long events, lost;
	unsigned long long skipped; /* in damaged chunks, not counted anywhere */
	unsigned long long counted; /* PROFILE mode: calls in the final counter totals */
	char skip_reason[512];
	uint64_t first_ns, last_ns;
};

struct summary {
	struct job_info job;
	struct fn_row *fns;
	size_t nfns;
	struct file_row *files;
	size_t nfiles;
	struct level_row *levels;
	size_t nlevels;
	/* One row per rank the trace holds, by rank (rank_ids[row]), not per
	 * rank a process claimed the job has: a world size is a claim. */
	struct rank_row *ranks;
	int *rank_ids;
	int nranks;
	struct dc_hashtab *fn_ids, *file_ids;
	char *base_level; /* the level ranks are compared at */
	struct dc_io_table *io; /* reads and writes per node and rank */
	/* I/O over time at the base level: tl[row][op][bin], op 0 read, 1
	 * write; row r is rank rank_ids[r], row nranks the processes without a rank. */
	uint64_t (*tl)[2][TL_BINS];
	uint64_t tl_origin_ns, tl_bin_ns; /* tl_bin_ns 0: no I/O yet */
	/* Nodes whose file ended early or had damaged chunks. */
	struct node_warning {
		char *host, *what;
	} *warnings;
	size_t nwarnings;
};

/* Reads a job: from its folder of node files, or from a merged HDF5 file.
 * 0, or -1 with the reason on stderr. */
int dc_summary_from_nodes(struct summary *s, const char *dir, const char *id);
int dc_summary_from_h5(struct summary *s, const char *path);
/* The same from an open file (hid_t f, as an int64_t: this header does not
 * include hdf5.h), named name in messages. */
int dc_summary_read_h5(struct summary *s, int64_t f, const char *name);
void dc_summary_free(struct summary *s);

/* For the readers: the base level is chosen from every level seen; start
 * sizes the per-rank tables; take adds one call; add_warning names a node's
 * problem. */
void dc_summary_consider_base_level(struct summary *s, const char *level);
/* ranks: the ranks the trace's processes hold, in any order, repeated or
 * negative (none) as they come; sorted in place. */
int dc_summary_start(struct summary *s, int *ranks, size_t n);
/* The row of a rank, or -1 for a rank no process holds. */
int dc_summary_rank_row(const struct summary *s, int rank);
/* One call; path2: its second file or name, or "" (counted on for a call
 * that moves data: the file a mover's data came from). */
int dc_summary_take(struct summary *s, const char *level, const char *name, const char *path, const char *path2,
		    int node, int rank, uint64_t ts, uint64_t bytes, uint64_t dur, unsigned flags);
int dc_summary_add_warning(struct summary *s, const char *host, const char *what);

/* Sorting and choosing rows for the reports. */
int dc_summary_by_fn(const void *a, const void *b);
int dc_summary_by_bytes(const void *a, const void *b);
int dc_summary_by_time(const void *a, const void *b);
/* Ranks with I/O, slowest first (time at the base level); free() it. */
int *dc_summary_slowest_ranks(const struct summary *s, int *n);
double dc_summary_span_s(const struct summary *s);

void dc_summary_print_text(struct summary *s, int top);
void dc_summary_print_json(struct summary *s, int top);
/* 0, or -1 with the reason on stderr. */
int dc_summary_write_html(struct summary *s, int top, const char *path);

#endif
