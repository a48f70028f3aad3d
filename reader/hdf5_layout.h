/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HDF5 layout dc-merge writes (docs/outputs.md, "HDF5"), one definition for
 * its writers (merge/hdf5_tables.c, hdf5_writer.c, hdf5_stitch.c) and
 * its readers (h5_read.c, and through it dc-summary, the stitch's checks
 * and the test tools; python/datacrumbs reads the same names):
 *   /events     compound rows, one a call
 *   /counters   PROFILE totals
 *   /functions  (name, level, io) of each function index used by events
 *   /levels     level names
 *   /paths      path strings; index 0 is "no path"
 *   /processes  node, pid, ppid, rank, command, exit status
 *   /nodes      host, topology, clock mapping, counts
 * and job attributes on the root group. Strings are variable-length, which
 * h5py and pandas read as they are.
 *
 * The layout's version is the root attribute layout_version. Adding a
 * column, a dataset or an attribute leaves it as it is: readers name what
 * they read, and older ones pass over what they do not know. Renaming or
 * removing one, or changing what a column means or its units, is a new
 * version (DC_H5_LAYOUT_VERSION + 1), and readers refuse a file of a
 * version newer than theirs with a message that says so. A file without
 * the attribute is of version 1.
 */
#ifndef DC_HDF5_LAYOUT_H
#define DC_HDF5_LAYOUT_H

#include <hdf5.h>
#include <stdint.h>

#define DC_H5_LAYOUT_VERSION 1

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
#define DC_H5_ATTR_LAYOUT_VERSION "layout_version"
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
	/* The second file: where a mover's data came from (-1, 0: none). */
	int32_t fd2;
	uint32_t path2;
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

/* /functions; io: "read", "write" or "" (common/io_kind.h) */
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

/* The variable-length string type of every string column and attribute. */
hid_t dc_h5_vlen_string(void);

#endif
