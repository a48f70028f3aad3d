// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary's reading of a merged (or stitched) HDF5 file, the layout of
 * reader/hdf5_layout.h, into the model of summary.h. Rows are read a block at a
 * time, so memory stays small; their order does not matter.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>

#include "h5_read.h"
#include "hdf5_layout.h"
#include "io_table.h"
#include "summary.h"

/* The per-rank tables: a row per rank the processes hold (a world size
 * is only what a rank claimed). */
static int start_ranks(struct summary *s, hid_t f)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(int32_t));
	hssize_t n;
	int32_t *ranks;
	int rc;

	H5Tinsert(t, DC_H5_COL(struct h5_process_row, rank), 0, H5T_NATIVE_INT32);
	ranks = dc_h5_read_rows(f, DC_H5_PROCESSES, t, sizeof(*ranks), &n);
	H5Tclose(t);
	rc = dc_summary_start(s, ranks ? ranks : (int32_t[1]){ -1 }, ranks ? (size_t)n : 0);
	free(ranks);
	return rc;
}

static void read_attrs(hid_t f, struct job_info *j)
{
	char *id = dc_h5_get_str(f, DC_H5_ATTR_JOB_ID);
	uint64_t v;

	if (id)
		snprintf(j->id, sizeof(j->id), "%s", id);
	free(id);
	if (!dc_h5_get_u64(f, DC_H5_ATTR_LOST, &v))
		j->lost = v;
	if (!dc_h5_get_u64(f, DC_H5_ATTR_SKIPPED, &v) && (j->skipped = v))
		snprintf(j->skip_reason, sizeof(j->skip_reason), "see the nodes table's skipped_because");
}

struct events_ctx {
	struct summary *s;
	const struct dc_h5_fn *fns;
	hssize_t nfns;
	const struct dc_h5_strings *paths;
};

static int take_rows(void *ctx, const void *block, hsize_t count)
{
	struct events_ctx *c = ctx;
	struct summary *s = c->s;
	const struct dc_h5_call *rows = block;
	int rc = 0;

	for (hsize_t i = 0; !rc && i < count; i++) {
		const struct dc_h5_call *r = &rows[i];
		int known = r->function < c->nfns && c->fns[r->function].level && c->fns[r->function].name;

		if (r->ts < s->job.first_ns)
			s->job.first_ns = r->ts;
		if (r->ts + r->dur > s->job.last_ns)
			s->job.last_ns = r->ts + r->dur;
		s->job.events++;
		rc = dc_summary_take(s, known ? c->fns[r->function].level : "?", known ? c->fns[r->function].name : "?",
				     r->path < c->paths->n ? c->paths->v[r->path] : "",
				     r->path2 < c->paths->n ? c->paths->v[r->path2] : "", r->node, r->rank, r->ts, r->bytes,
				     r->dur, r->flags);
	}
	return rc;
}

/* Events are read a block at a time, so memory stays small. */
static int take_h5_events(struct summary *s, hid_t f, const struct dc_h5_fn *fns, hssize_t nfns,
			  const struct dc_h5_strings *paths)
{
	struct events_ctx c = { s, fns, nfns, paths };
	hid_t t = dc_h5_call_type();
	int rc;

	s->job.events = 0;
	s->job.first_ns = UINT64_MAX;
	rc = dc_h5_read_blocks(f, DC_H5_EVENTS, t, sizeof(struct dc_h5_call), 65536, take_rows, &c);
	if (!s->job.events)
		s->job.first_ns = 0;
	H5Tclose(t);
	return rc;
}

/* The nodes table: a row per node (whatever the nodes attribute says),
 * host names for the per-node table, and the nodes whose file ended early
 * or had damaged chunks. */
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
	rows = dc_h5_read_rows(f, DC_H5_NODES, t, sizeof(*rows), &n);
	s->job.nnodes = n;
	if (!(s->io = dc_io_table_new(n, s->rank_ids, s->nranks)))
		rc = -1;
	for (hssize_t i = 0; i < n; i++) {
		if (rows[i].host && s->io)
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

/* Every figure comes from what the file's tables hold: a file may have
 * been rewritten by the user it was handed to. */
int dc_summary_read_h5(struct summary *s, hid_t f, const char *name)
{
	struct dc_h5_strings paths = { 0 };
	struct dc_h5_fn *fns = NULL;
	char why[256];
	hssize_t nfns = 0;
	int rc;

	if (dc_h5_check_layout(f, why, sizeof(why))) {
		fprintf(stderr, "dc-summary: %s: %s\n", name, why);
		return -1;
	}
	fns = dc_h5_read_functions(f, &nfns);
	rc = !fns || dc_h5_read_strings(f, DC_H5_PATHS, &paths) ? -1 : 0;
	if (!rc) {
		read_attrs(f, &s->job);
		for (hssize_t i = 0; i < nfns; i++)
			if (fns[i].level)
				dc_summary_consider_base_level(s, fns[i].level);
		rc = start_ranks(s, f);
		if (!rc)
			rc = read_nodes(s, f);
		if (!rc) {
			s->job.ranks = s->nranks;
			rc = take_h5_events(s, f, fns, nfns, &paths);
		}
	}
	if (rc)
		fprintf(stderr, "dc-summary: cannot read %s as a dc-merge HDF5 file\n", name);
	dc_h5_functions_free(fns, nfns);
	dc_h5_strings_free(&paths);
	return rc;
}

int dc_summary_from_h5(struct summary *s, const char *path)
{
	hid_t f;
	int rc;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		fprintf(stderr, "dc-summary: %s is not an HDF5 file dc-merge wrote\n", path);
		return -1;
	}
	rc = dc_summary_read_h5(s, f, path);
	H5Fclose(f);
	return rc;
}

