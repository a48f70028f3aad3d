/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing the HDF5 layout (reader/hdf5_layout.h): the single-process writer
 * (hdf5_writer.c) and the stitch of per-node parts (hdf5_stitch.c) write
 * the same tables the same way through these.
 */
#ifndef DC_HDF5_TABLES_H
#define DC_HDF5_TABLES_H

#include <hdf5.h>
#include <stdint.h>

#include "hdf5_layout.h"
#include "nodeset.h"
#include "strset.h"

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

hid_t dc_h5_event_type(void);
hid_t dc_h5_counter_type(void);
/* The file types of /functions, /processes and /nodes (rows as hdf5_layout.h). */
hid_t dc_h5_function_type(void);
hid_t dc_h5_process_type(void);
hid_t dc_h5_node_type(void);
/* Writes n rows of type (which it closes) as dataset name. */
int dc_h5_write_rows(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n);
int dc_h5_write_strings(hid_t file, const char *name, const char **v, size_t n);
/* An attribute of obj; 0, or -1 when HDF5 could not write it. */
int dc_h5_attr_u64(hid_t obj, const char *name, uint64_t v);
int dc_h5_attr_str(hid_t obj, const char *name, const char *v);

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
