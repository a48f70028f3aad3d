/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* dc-merge's options, and its ways to run: one merge (merge_main.c), or
 * a job's parts on many machines and their stitch (merge_parts.c). */
#ifndef DC_MERGE_CLI_H
#define DC_MERGE_CLI_H

#include <stdbool.h>

#include "nodeset.h"
#include "output.h"

struct options {
	const char *job_id;
	const char *job_dir; /* the job's node files, where outputs go by default */
	const char *input;
	const char *output;
	const struct dc_output_ops *ops;
	__u64 from_ns, to_ns; /* --time-range, from the job's start; to_ns UINT64_MAX: no end */
	bool *ranks;         /* NULL: all */
	int progress;        /* -1: if a terminal */
	bool quiet;
	bool group_read;
	const char *part;    /* --part K/N or auto */
	bool stitch;         /* --stitch */
	const char *parts;   /* --parts DIR */
	bool no_compress;    /* --no-compress */
};

/* One merge of job into path; 0 or -1 (said on stderr). */
int dc_merge_run(const struct options *o, struct dc_job *job, const char *path);
/* --part: this process's nodes, each into its part file; exit status. */
int dc_merge_parts(const struct options *o, struct dc_job *job);
/* --stitch: the parts into output; exit status. */
int dc_merge_stitch(const struct options *o, struct dc_job *job, const char *output);

#endif
