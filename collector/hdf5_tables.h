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
