/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What dc-merge writes to: one set of calls per output format. */
#ifndef DC_OUTPUT_H
#define DC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "nodeset.h"

struct dc_output_ops {
	const char *format; /* as --format names it */
	const char *suffix; /* of the default output file */
	/* fd: the output, opened by dc-merge (JSON writes to it, keeping its
	 * own duplicate); HDF5 creates its file at path instead. */
	void *(*open)(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen);
	int (*event)(void *w, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns);
	int (*counter)(void *w, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns);
	/* Finishes the file when ok, else only releases it; 0 when all went well. */
	int (*close)(void *w, int ok, char *err, size_t errlen);
};

extern const struct dc_output_ops dc_json_output, dc_json_gz_output, dc_hdf5_output, dc_perfetto_output;
/* Perfetto with its packets as they are (--no-compress), not deflated in batches. */
extern const struct dc_output_ops dc_perfetto_raw_output;

/* Either Perfetto output (--part and --stitch make them as HDF5's). */
static inline bool dc_output_is_perfetto(const struct dc_output_ops *ops)
{
	return ops == &dc_perfetto_output || ops == &dc_perfetto_raw_output;
}
/* DFTracer's JSON lines, for DFAnalyzer (pfw_writer.c). */
extern const struct dc_output_ops dc_pfw_output, dc_pfw_gz_output;
/* One node's share of a job (struct dc_job's part), for a stitch to join. */
extern const struct dc_output_ops dc_hdf5_part_output;

/* A part's file name in the parts folder, by node index. */
#define DC_PART_NAME "node-%05zu.h5"
#define DC_PFPART_NAME "node-%05zu.pftrace"

/* The first bytes of a stitched Perfetto trace (its parts follow): the
 * clock, the track order, and an instant for each node whose missing[i]
 * says why it has no part. 0, or -1 with err. */
int dc_perfetto_header(const struct dc_job *job, char *const *missing, int fd, const char *path, char *err,
		       size_t errlen);

/* Writes out, an HDF5 file whose /events and /counters map the parts in
 * parts_dir (named parts_ref in the file: a path relative to out's folder,
 * or absolute). *unusable: nodes without a usable part, each named on
 * stderr and in /nodes. 0, or -1 with err. */
int dc_hdf5_stitch(struct dc_job *job, const char *parts_dir, const char *parts_ref, const char *out,
		   unsigned *unusable, char *err, size_t errlen);

#endif
