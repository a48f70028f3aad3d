// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary's reading of a merged (or stitched) HDF5 file, the layout of
 * hdf5_tables.h, into the model of summary.h. Rows are read a block at a
 * time, so memory stays small; their order does not matter.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>

#include "hdf5_tables.h"
#include "io_table.h"
#include "summary.h"

struct h5_strings {
	char **v;
	hssize_t n;
};

static int read_strings(hid_t f, const char *name, struct h5_strings *out)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp, t;
	int rc = -1;

	if (d < 0)
		return -1;
	sp = H5Dget_space(d);
	out->n = H5Sget_simple_extent_npoints(sp);
	t = dc_h5_vlen_string();
	out->v = calloc(out->n + 1, sizeof(char *));
	if (out->v && (!out->n || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->v) >= 0))
		rc = 0;
	H5Tclose(t);
	H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

/* /functions as read: the strings are the reader's to free. */
struct h5_fn {
	char *name, *level, *io; /* io is not read: dc_io_kind decides from the name */
};
_Static_assert(sizeof(struct h5_fn) == sizeof(struct h5_function_row), "a /functions row as written");

struct h5_row {
	uint64_t ts, dur, bytes;
	int32_t rank;
	uint16_t node;
	uint32_t function, path;
	uint8_t flags;
};

/*
 * All rows of dataset name as type t (the caller's, to close): a calloc'd
 * array of *n rows of row_size (one more, zeroed), or NULL when the dataset
 * is missing or unreadable. Variable-length strings in the rows are the
 * caller's to free.
 */
static void *read_rows(hid_t f, const char *name, hid_t t, size_t row_size, hssize_t *n)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp;
	void *rows;

	*n = 0;
	if (d < 0)
		return NULL;
	sp = H5Dget_space(d);
	*n = H5Sget_simple_extent_npoints(sp);
	rows = *n >= 0 ? calloc(*n + 1, row_size) : NULL;
	if (rows && *n && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
		free(rows);
		rows = NULL;
	}
	if (!rows)
		*n = 0;
	H5Sclose(sp);
	H5Dclose(d);
	return rows;
}

static int read_functions(hid_t f, struct h5_fn **out, hssize_t *n)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_fn)), vs = dc_h5_vlen_string();

	H5Tinsert(t, DC_H5_COL(struct h5_function_row, name), HOFFSET(struct h5_fn, name), vs);
	H5Tinsert(t, DC_H5_COL(struct h5_function_row, level), HOFFSET(struct h5_fn, level), vs);
	*out = read_rows(f, DC_H5_FUNCTIONS, t, sizeof(struct h5_fn), n);
	H5Tclose(t);
	H5Tclose(vs);
	return *out ? 0 : -1;
}

static int max_world(hid_t f)
{
	struct row { int32_t rank, world; } *rows;
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(*rows));
	hssize_t n;
	int world = 0;

	H5Tinsert(t, DC_H5_COL(struct h5_process_row, rank), HOFFSET(struct row, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, DC_H5_COL(struct h5_process_row, world_size), HOFFSET(struct row, world), H5T_NATIVE_INT32);
	rows = read_rows(f, DC_H5_PROCESSES, t, sizeof(*rows), &n);
	for (hssize_t i = 0; i < n; i++)
		if (rows[i].world > world)
			world = rows[i].world;
	free(rows);
	H5Tclose(t);
	return world;
}

static void read_attrs(hid_t f, struct job_info *j)
{
	hid_t a, t;
	char *id = NULL;

	if ((a = H5Aopen(f, DC_H5_ATTR_JOB_ID, H5P_DEFAULT)) >= 0) {
		t = dc_h5_vlen_string();
		if (H5Aread(a, t, &id) >= 0 && id)
			snprintf(j->id, sizeof(j->id), "%s", id);
		free(id);
		H5Tclose(t);
		H5Aclose(a);
	}
	if ((a = H5Aopen(f, DC_H5_ATTR_LOST, H5P_DEFAULT)) >= 0) {
		H5Aread(a, H5T_NATIVE_ULLONG, &j->lost);
		H5Aclose(a);
	}
	if ((a = H5Aopen(f, DC_H5_ATTR_SKIPPED, H5P_DEFAULT)) >= 0) {
		H5Aread(a, H5T_NATIVE_ULLONG, &j->skipped);
		H5Aclose(a);
		if (j->skipped)
			snprintf(j->skip_reason, sizeof(j->skip_reason), "see the nodes table's skipped_because");
	}
	if ((a = H5Aopen(f, DC_H5_ATTR_NODES, H5P_DEFAULT)) >= 0) {
		unsigned long long n = 0;

		H5Aread(a, H5T_NATIVE_ULLONG, &n);
		j->nnodes = n;
		H5Aclose(a);
	}
}

/* Events are read a block at a time, so memory stays small. */
static int take_h5_events(struct summary *s, hid_t f, const struct h5_fn *fns, hssize_t nfns,
			  const struct h5_strings *paths)
{
	enum { BLOCK = 65536 };
	hid_t d = H5Dopen2(f, DC_H5_EVENTS, H5P_DEFAULT), fsp, msp, t;
	struct h5_row *rows = malloc(BLOCK * sizeof(*rows));
	hsize_t n, start, count;
	int rc = 0;

	if (d < 0 || !rows) {
		free(rows);
		return -1;
	}
	fsp = H5Dget_space(d);
	n = H5Sget_simple_extent_npoints(fsp);
	t = H5Tcreate(H5T_COMPOUND, sizeof(*rows));
	H5Tinsert(t, DC_H5_COL(struct h5_event, ts_ns), HOFFSET(struct h5_row, ts), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, dur_ns), HOFFSET(struct h5_row, dur), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, bytes), HOFFSET(struct h5_row, bytes), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, rank), HOFFSET(struct h5_row, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, node), HOFFSET(struct h5_row, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, DC_H5_COL(struct h5_event, function), HOFFSET(struct h5_row, function), H5T_NATIVE_UINT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, path), HOFFSET(struct h5_row, path), H5T_NATIVE_UINT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, flags), HOFFSET(struct h5_row, flags), H5T_NATIVE_UINT8);
	s->job.events = n;
	s->job.first_ns = UINT64_MAX;
	for (start = 0; !rc && start < n; start += count) {
		count = n - start < BLOCK ? n - start : BLOCK;
		msp = H5Screate_simple(1, &count, NULL);
		H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &start, NULL, &count, NULL);
		rc = H5Dread(d, t, msp, fsp, H5P_DEFAULT, rows) < 0 ? -1 : 0;
		H5Sclose(msp);
		for (hsize_t i = 0; !rc && i < count; i++) {
			const struct h5_row *r = &rows[i];
			int known = r->function < nfns;

			if (r->ts < s->job.first_ns)
				s->job.first_ns = r->ts;
			if (r->ts + r->dur > s->job.last_ns)
				s->job.last_ns = r->ts + r->dur;
			rc = dc_summary_take(s, known ? fns[r->function].level : "?", known ? fns[r->function].name : "?",
				  r->path < paths->n ? paths->v[r->path] : "", r->node, r->rank, r->ts, r->bytes, r->dur,
				  r->flags);
		}
	}
	if (!n)
		s->job.first_ns = 0;
	H5Tclose(t);
	H5Sclose(fsp);
	H5Dclose(d);
	free(rows);
	return rc;
}

/* The nodes table: host names for the per-node table, and the nodes whose
 * file ended early or had damaged chunks. */
static int read_nodes(struct summary *s, hid_t f)
{
	struct node_row {
		char *host, *incomplete, *skipped;
	} *rows;
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(*rows)), vs = dc_h5_vlen_string();
	hssize_t n;
	int rc = 0;

	H5Tinsert(t, DC_H5_COL(struct h5_node_row, host), HOFFSET(struct node_row, host), vs);
	H5Tinsert(t, DC_H5_COL(struct h5_node_row, incomplete), HOFFSET(struct node_row, incomplete), vs);
	H5Tinsert(t, DC_H5_COL(struct h5_node_row, skipped_because), HOFFSET(struct node_row, skipped), vs);
	rows = read_rows(f, DC_H5_NODES, t, sizeof(*rows), &n);
	for (hssize_t i = 0; i < n; i++) {
		if (rows[i].host)
			dc_io_table_host(s->io, i, rows[i].host);
		if (rows[i].incomplete && *rows[i].incomplete && dc_summary_add_warning(s, rows[i].host, rows[i].incomplete))
			rc = -1;
		if (rows[i].skipped && *rows[i].skipped && dc_summary_add_warning(s, rows[i].host, rows[i].skipped))
			rc = -1;
		free(rows[i].host);
		free(rows[i].incomplete);
		free(rows[i].skipped);
	}
	free(rows);
	H5Tclose(t);
	H5Tclose(vs);
	return rc;
}

int dc_summary_from_h5(struct summary *s, const char *path)
{
	struct h5_strings paths = { 0 };
	struct h5_fn *fns = NULL;
	hssize_t nfns = 0;
	hid_t f;
	int rc;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		fprintf(stderr, "dc-summary: %s is not an HDF5 file dc-merge wrote\n", path);
		return -1;
	}
	rc = read_functions(f, &fns, &nfns) || read_strings(f, DC_H5_PATHS, &paths) ? -1 : 0;
	if (!rc) {
		read_attrs(f, &s->job);
		for (hssize_t i = 0; i < nfns; i++)
			dc_summary_consider_base_level(s, fns[i].level);
		rc = dc_summary_start(s, max_world(f));
		if (!rc && !(s->io = dc_io_table_new(s->job.nnodes, s->nranks)))
			rc = -1;
		if (!rc)
			rc = read_nodes(s, f);
		if (!rc) {
			s->job.ranks = s->nranks;
			rc = take_h5_events(s, f, fns, nfns, &paths);
		}
	}
	if (rc)
		fprintf(stderr, "dc-summary: cannot read %s as a dc-merge HDF5 file\n", path);
	for (hssize_t i = 0; i < nfns; i++) {
		free(fns[i].name);
		free(fns[i].level);
	}
	for (hssize_t i = 0; i < paths.n; i++)
		free(paths.v[i]);
	free(paths.v);
	free(fns);
	H5Fclose(f);
	return rc;
}

