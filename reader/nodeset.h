/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A job's node files, opened and indexed for a merge: per node its header,
 * functions, processes and statistics, and where its event and counter
 * chunks are, without reading their payloads.
 */
#ifndef DC_NODESET_H
#define DC_NODESET_H

#include <stdbool.h>
#include <stddef.h>

#include "hashtab.h"
#include "nodefile.h"

struct dc_process {
	__u32 pid, ppid;
	char comm[DC_COMM_LEN + 1];
	int rank;       /* -1: not an MPI rank */
	int world_size;
	int task;       /* Slurm task id (SLURM_PROCID), -1: none */
	bool finalized; /* called MPI_Finalize */
	bool exited;
	int exit_status; /* wait status */
};

/* A chunk of events or counters: one sorted run of the merge. */
struct dc_run {
	struct dc_node *node;
	struct dc_chunk_header hdr;
	long long offset;
	__u64 min_wall; /* hdr.min_ts on the job's clock */
};

struct dc_node {
	char *path;
	struct dc_reader *r;
	struct dc_node_header hdr;
	int index;
	__s64 clock_shift_ns; /* wall ns = ts + clock_shift_ns */
	__s64 mpi_offset_ns;  /* part of it measured against rank 0's clock */
	__u64 mpi_error_ns;   /* its error bound; UINT64_MAX when none */
	struct dc_functable funcs;
	struct dc_process *procs;
	size_t nprocs, cap_procs;
	struct dc_hashtab *proc_ids; /* (pid, 0) -> index in procs: looked up per event */
	struct dc_cpu_stats *stats;
	unsigned nstats;
	unsigned long long events, lost;
	char *problem; /* why the file ends early, NULL if it closed cleanly */
	/* Events of chunks the merge found damaged and skipped, and why (the
	 * first problem); events counts them too. */
	unsigned long long skipped;
	char *skip_reason;
};

struct dc_job {
	char *id;
	struct dc_node *nodes;
	size_t nnodes;
	struct dc_run *runs; /* every event and counter chunk, by min_wall */
	size_t nruns;
	__u64 origin_ns;     /* the earliest wall time: output times count from it */
	__u64 first_ns, last_ns;
	unsigned long long events, lost;
	unsigned long long skipped; /* events of damaged chunks, left out */
	int ranks;
	struct dc_node *part; /* dc_job_part: the one node whose runs this holds */
};

/*
 * Where a job's node files are and its id, from what a user gave: a job
 * id (its folder: input, else $DC_OUTPUT_DIR/ID, else ./datacrumbs/ID),
 * or, without input, a folder that holds node files or one of them (the
 * id then from the first node file's header). dir and id: room for PATH_MAX bytes each. 0, or -1
 * with the reason in err.
 */
int dc_job_locate(const char *arg, const char *input, char *dir, char *id, char *err, size_t errlen);
/* Whether a file's name is a node file's (its suffix). */
bool dc_is_node_file(const char *name);

/* Opens every *.dcnode of dir whose job id is id. Files that cannot be used
 * are skipped with a warning on stderr; -1 (and a message) when none can. */
int dc_job_open(const char *dir, const char *id, struct dc_job *job, char *err, size_t errlen);
void dc_job_close(struct dc_job *job);

/* The same job with the runs of one node only, to merge one node's share
 * of a job on its own (every table of the job stays whole: functions and
 * clocks are the job's). Free with dc_job_part_free, not dc_job_close. */
int dc_job_part(const struct dc_job *job, size_t node, struct dc_job *part);
void dc_job_part_free(struct dc_job *part);

/* A node file's name in the job's folder: how parts and their stitch
 * know it, as the folder may be reached by another path where they run. */
const char *dc_node_file_name(const struct dc_node *n);

const struct dc_func *dc_node_func(const struct dc_node *n, __u32 id);
/* How a process is named in a timeline: "rank R", else "COMMAND (host:pid)". */
void dc_process_label(const struct dc_node *n, const struct dc_process *p, char *out, size_t len);
const struct dc_process *dc_node_process(const struct dc_node *n, __u32 pid);

#endif
