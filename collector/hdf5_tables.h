/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HDF5 layout dc-merge writes (README.md, "HDF5 output"), shared by the
 * single-process writer (hdf5_writer.c) and the stitch of per-node parts
 * (hdf5_stitch.c), so that both write the same tables the same way:
 *   /events     compound rows, one a call
 *   /counters   PROFILE totals
 *   /functions  (name, level) of each function index used by events
 *   /levels     level names
 *   /paths      path strings; index 0 is "no path"
 *   /processes  node, pid, ppid, rank, command, exit status
 *   /nodes      host, topology, clock mapping, counts
 * and job attributes on the root group. Strings are variable-length, which
 * h5py and pandas read as they are.
 *
 * A change to a row here is a change of the file format: readers (dc-summary,
 * users' scripts) name the columns, so add columns, never rename them.
 */
#ifndef DC_HDF5_TABLES_H
#define DC_HDF5_TABLES_H

#include <hdf5.h>
#include <stdint.h>

#include "nodeset.h"
#include "strset.h"

/*
 * The datasets and the attributes, each name written once: writers and
 * readers (dc-summary, the stitch) use these, so that a name cannot differ
 * between the side that writes it and the side that looks it up.
 */
#define DC_H5_EVENTS "events"
#define DC_H5_COUNTERS "counters"
#define DC_H5_FUNCTIONS "functions"
#define DC_H5_LEVELS "levels"
#define DC_H5_PATHS "paths"
#define DC_H5_PROCESSES "processes"
#define DC_H5_NODES "nodes"
/* On the root group of a merged or stitched file, and of a part. */
#define DC_H5_ATTR_JOB_ID "job_id"
#define DC_H5_ATTR_TOOL "tool"
#define DC_H5_ATTR_ORIGIN "time_origin_unix_ns"
#define DC_H5_ATTR_EVENTS "events"
#define DC_H5_ATTR_SKIPPED "events_skipped_damaged"
#define DC_H5_ATTR_LOST "lost_events"
#define DC_H5_ATTR_NODES "nodes"
/* On a part only (dc-merge --part): what the stitch checks it against. */
#define DC_H5_ATTR_NODE "node"
#define DC_H5_ATTR_NODE_FILE "node_file"
#define DC_H5_ATTR_NODE_FILE_BYTES "node_file_bytes"
#define DC_H5_ATTR_PATH_BASE "path_base"
#define DC_H5_ATTR_COUNTERS "counters"
#define DC_H5_ATTR_SKIPPED_BECAUSE "skipped_because"

/*
 * A table's column is named by its row's member: DC_H5_COLUMN inserts it
 * into a compound type, and DC_H5_COL names it for a reader that reads
 * some columns only (a member the row lacks does not compile).
 */
#define DC_H5_COLUMN(t, row, member, h5type) H5Tinsert(t, #member, HOFFSET(row, member), h5type)
#define DC_H5_COL(row, member) ((void)sizeof(((row *)0)->member), #member)

struct h5_event {
	uint64_t ts_ns; /* from the job's time origin */
	uint64_t dur_ns;
	uint16_t node;
	uint16_t level;
	uint32_t pid;
	uint32_t tid;
	int32_t rank;
	uint32_t function;
	int32_t fd;
	int64_t ret;
	uint64_t req;
	uint64_t bytes;
	int64_t offset;
	uint32_t path;
	uint8_t flags;
};

struct h5_counter {
	uint64_t ts_ns;
	uint16_t node;
	uint16_t level;
	uint32_t pid;
	int32_t rank;
	uint32_t function;
	uint64_t count;
	uint64_t time_ns;
	uint64_t bytes;
};

/* /functions; io: "read", "write" or "" (collector/io_kind.h) */
struct h5_function_row {
	const char *name, *level, *io;
};

/* /processes */
struct h5_process_row {
	uint16_t node;
	uint32_t pid, ppid;
	int32_t rank, world_size;
	const char *command, *label;
	uint8_t exited;
	int32_t exit_status;
};

/* /nodes */
struct h5_node_row {
	const char *host, *file, *topology, *incomplete, *skipped_because;
	uint64_t events, events_skipped_damaged, lost, monotonic_ref_ns, realtime_ref_ns;
	int64_t clock_shift_ns, mpi_clock_offset_ns;
	int64_t mpi_clock_error_ns; /* -1: not measured */
	uint32_t mode;
};

/* Functions, unified across the job's nodes by (level, name): the same
 * job gives the same indexes, whichever process computes them. */
struct dc_h5_funcs {
	struct dc_strings levels;
	uint32_t **node_funcs; /* per node, per function id: global function index */
	uint16_t **node_levels;
	const char **fn_names;
	uint16_t *fn_levels;
	size_t nfns, nnodes;
};

int dc_h5_funcs_map(struct dc_h5_funcs *f, const struct dc_job *job);
void dc_h5_funcs_free(struct dc_h5_funcs *f);

hid_t dc_h5_vlen_string(void);
hid_t dc_h5_event_type(void);
hid_t dc_h5_counter_type(void);
/* Writes n rows of type (which it closes) as dataset name. */
int dc_h5_write_rows(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n);
int dc_h5_write_strings(hid_t file, const char *name, const char **v, size_t n);
void dc_h5_attr_u64(hid_t obj, const char *name, uint64_t v);
void dc_h5_attr_str(hid_t obj, const char *name, const char *v);

/* /functions and /levels. */
int dc_h5_write_functions(hid_t file, const struct dc_h5_funcs *f);
int dc_h5_write_processes(hid_t file, const struct dc_job *job);
/* /nodes; problem[i], when given and not NULL, is said of node i in its
 * incomplete column, after what its node file says. */
int dc_h5_write_nodes(hid_t file, const struct dc_job *job, char *const *problem);
/* hdf5-part: node's first path index less one (its string id k is path
 * base + k); the stitched /paths is "" and then every node's strings. */
uint32_t dc_h5_part_path_base(const struct dc_job *job, size_t node);
/* The size of a node file now: a part records it, the stitch compares. */
uint64_t dc_h5_file_bytes(const char *path);

/* The root attributes, and each dataset's description. */
int dc_h5_finish_file(hid_t file, const struct dc_job *job, uint64_t events);

#endif
