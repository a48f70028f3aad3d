// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge's HDF5 output (layout in hdf5_tables.h): events and counters
 * appended as merged, chunked, shuffled and deflated on worker threads.
 *
 * Two outputs share it. hdf5: the whole job in one file, paths numbered in
 * the order they are first used. hdf5-part: one node's events and counters
 * only, for hdf5_stitch.c to join; its path indexes are the node's own
 * string ids shifted by the string counts of the nodes before it, so that
 * every part of a job numbers paths the same way without seeing the other
 * parts' events, and the stitched /paths is the nodes' string tables one
 * after another.
 */
#include <errno.h>
#include <hdf5.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_pack.h"
#include "hashtab.h"
#include "hdf5_tables.h"
#include "output.h"
#include "strset.h"

#define ROWS_PER_CHUNK 32768
/* Chunk buffers per table: one filling while the others are packed. */
#define NSLOTS 4
#define MAX_PACK_THREADS 3

/*
 * Chunks are shuffled and deflated by the packer's workers while the merge
 * fills the next chunk, and written whole, in order, with H5Dwrite_chunk:
 * the dataset declares the same shuffle+deflate filters, so any HDF5 reader
 * decodes them. The HDF5 library is never called from a worker.
 */
struct slot {
	char *rows; /* allocated on first use: a job may have no counters */
	struct dc_pack_job job;
	hsize_t offset; /* of its first row in the dataset */
	bool pending;   /* handed to the packer, not yet written */
};

struct table {
	hid_t dset, type;
	size_t row_size;
	struct dc_packer *packer;
	struct slot s[NSLOTS];
	unsigned fill;   /* s[fill].rows is being filled */
	size_t nbuf;
	hsize_t written; /* rows handed to the packer */
};

struct h5_writer {
	hid_t file;
	struct dc_packer *packer;
	const struct dc_job *job;
	struct table events, counters;
	struct dc_strings paths;
	uint32_t **node_paths; /* per node, per string id: global path index + 1 */
	struct dc_h5_funcs funcs;
	const struct dc_node *part; /* hdf5-part: the node */
	uint32_t path_base;
	int err;
};

/* ---- global string tables ---- */

static uint32_t global_path(struct h5_writer *w, const struct dc_node *n, __u32 id)
{
	uint32_t *cache;

	if (!id || id > dc_reader_nstrings(n->r))
		return 0;
	if (w->part) /* the stitched /paths: "" and then every node's strings */
		return w->path_base + id;
	cache = w->node_paths[n->index];
	if (!cache[id])
		cache[id] = dc_strings_intern(&w->paths, dc_reader_string(n->r, id)) + 1;
	return cache[id] - 1;
}

/* ---- appended tables ---- */

static int table_create(struct table *t, hid_t file, const char *name, hid_t type, size_t row_size,
			struct dc_packer *packer)
{
	hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = ROWS_PER_CHUNK;
	hid_t space = H5Screate_simple(1, &dims, &maxdims), dcpl = H5Pcreate(H5P_DATASET_CREATE);

	/* Shuffle puts the bytes of like fields together: times and sizes
	 * compress far better, and faster, after it. */
	H5Pset_chunk(dcpl, 1, &chunk);
	H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 1);
	H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
	t->type = type;
	t->row_size = row_size;
	t->packer = packer;
	t->dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	H5Sclose(space);
	return t->dset < 0 ? -1 : 0;
}

/* Waits for a slot's chunk to be packed and writes it. Called oldest first. */
static int drain_one(struct table *t, struct slot *s)
{
	hsize_t size = s->offset + s->job.nrows;

	if (!s->pending)
		return 0;
	dc_packer_wait(t->packer, &s->job);
	s->pending = false;
	if (s->job.err || H5Dset_extent(t->dset, &size) < 0 ||
	    H5Dwrite_chunk(t->dset, H5P_DEFAULT, 0, &s->offset, s->job.out_len, s->job.out) < 0)
		return -1;
	return 0;
}

/* Hands the filled rows to the packer and makes the next slot free. */
static int table_flush(struct table *t)
{
	struct slot *s = &t->s[t->fill];

	if (!t->nbuf)
		return 0;
	s->job.nrows = t->nbuf;
	s->offset = t->written;
	t->written += t->nbuf;
	t->nbuf = 0;
	s->pending = true;
	dc_packer_submit(t->packer, &s->job);
	t->fill = (t->fill + 1) % NSLOTS;
	return drain_one(t, &t->s[t->fill]);
}

/* Flushes and writes every chunk still being packed, in order. */
static int table_finish(struct table *t)
{
	if (table_flush(t))
		return -1;
	for (int i = 0; i < NSLOTS; i++)
		if (drain_one(t, &t->s[(t->fill + i) % NSLOTS]))
			return -1;
	return 0;
}

static int slot_alloc(struct slot *s, size_t row_size)
{
	size_t bytes = ROWS_PER_CHUNK * row_size;

	s->rows = calloc(ROWS_PER_CHUNK, row_size); /* padding between fields stays zero */
	s->job = (struct dc_pack_job){ .rows = s->rows, .row_size = row_size, .out_cap = dc_pack_bound(bytes, row_size) };
	s->job.out = malloc(s->job.out_cap);
	return s->rows && s->job.out ? 0 : -1;
}

static void *table_row(struct table *t)
{
	struct slot *s;

	if (t->nbuf == ROWS_PER_CHUNK && table_flush(t))
		return NULL;
	s = &t->s[t->fill];
	if (!s->rows && slot_alloc(s, t->row_size))
		return NULL;
	return s->rows + t->nbuf++ * t->row_size;
}

/* After the packer is freed: no job of this table is still being packed. */
static void table_close(struct table *t)
{
	for (int i = 0; i < NSLOTS; i++) {
		free(t->s[i].rows);
		free(t->s[i].job.out);
	}
	if (t->dset > 0)
		H5Dclose(t->dset);
	if (t->type > 0)
		H5Tclose(t->type);
}

/* What the stitch checks before it takes a part: that it was made from
 * this node file, as it is now, of this job, numbered as it will number. */
static int part_attrs(struct h5_writer *w)
{
	const struct dc_node *n = w->part;

	return dc_h5_attr_str(w->file, DC_H5_ATTR_JOB_ID, w->job->id) ||
	       dc_h5_attr_str(w->file, DC_H5_ATTR_TOOL, "DataCrumbs " DC_VERSION) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_LAYOUT_VERSION, DC_H5_LAYOUT_VERSION) ||
	       dc_h5_attr_str(w->file, DC_H5_ATTR_NODE_FILE, dc_node_file_name(n)) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_NODE, n->index) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_NODES, w->job->nnodes) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_NODE_FILE_BYTES, dc_h5_file_bytes(n->path)) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_PATH_BASE, w->path_base) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_ORIGIN, w->job->origin_ns) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_EVENTS, w->events.written) ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_SKIPPED, n->skipped) ||
	       dc_h5_attr_str(w->file, DC_H5_ATTR_SKIPPED_BECAUSE, n->skip_reason ? n->skip_reason : "") ||
	       dc_h5_attr_u64(w->file, DC_H5_ATTR_COUNTERS, w->counters.written)
		       ? -1
		       : 0;
}

static int finish(struct h5_writer *w)
{
	if (table_finish(&w->events) || table_finish(&w->counters))
		return -1;
	if (w->part)
		return part_attrs(w);
	if (dc_h5_write_functions(w->file, &w->funcs) || dc_h5_write_strings(w->file, DC_H5_PATHS, w->paths.v, w->paths.n) ||
	    dc_h5_write_processes(w->file, w->job) || dc_h5_write_nodes(w->file, w->job, NULL))
		return -1;
	return dc_h5_finish_file(w->file, w->job, w->events.written);
}

/* ---- the output ---- */

static int close_writer(void *wp, int ok, char *err, size_t errlen)
{
	struct h5_writer *w = wp;
	int rc = ok && !w->err ? finish(w) : -1;

	dc_packer_free(w->packer);
	table_close(&w->events);
	table_close(&w->counters);
	if (w->file >= 0 && H5Fclose(w->file) < 0)
		rc = -1;
	if (rc && ok)
		snprintf(err, errlen, "writing the HDF5 output failed");
	for (size_t i = 0; w->node_paths && i < w->job->nnodes; i++)
		free(w->node_paths[i]);
	free(w->node_paths);
	dc_strings_free(&w->paths);
	dc_h5_funcs_free(&w->funcs);
	free(w);
	return rc;
}

/* One packer a core, the merge itself having one of them too: packing is
 * most of the work, and the merge waits on it when it falls behind. */
static unsigned pack_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_PACK_THREADS ? MAX_PACK_THREADS : n;
}

static void *open_writer(const char *path, const struct dc_job *job, const struct dc_node *part, char *err,
			 size_t errlen)
{
	struct h5_writer *w = calloc(1, sizeof(*w));
	size_t n = job->nnodes;

	if (!w)
		goto nomem;
	w->job = job;
	w->file = -1;
	w->part = part;
	if (dc_strings_init(&w->paths, 4096) || !(w->node_paths = calloc(n + 1, sizeof(*w->node_paths))))
		goto nomem;
	if (part)
		w->path_base = dc_h5_part_path_base(job, part->index);
	for (size_t i = 0; !part && i < n; i++)
		if (!(w->node_paths[i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(uint32_t))))
			goto nomem;
	dc_strings_intern(&w->paths, ""); /* index 0: no path */
	if (dc_h5_funcs_map(&w->funcs, job))
		goto nomem;
	if (!(w->packer = dc_packer_new(pack_threads(), ROWS_PER_CHUNK * sizeof(struct h5_event))))
		goto nomem;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported by us, once */
	w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (w->file < 0 ||
	    table_create(&w->events, w->file, DC_H5_EVENTS, dc_h5_event_type(), sizeof(struct h5_event), w->packer) ||
	    table_create(&w->counters, w->file, DC_H5_COUNTERS, dc_h5_counter_type(), sizeof(struct h5_counter), w->packer)) {
		snprintf(err, errlen, "cannot create the HDF5 file %s", path);
		close_writer(w, 0, err, 0);
		return NULL;
	}
	return w;
nomem:
	snprintf(err, errlen, "out of memory");
	if (w)
		close_writer(w, 0, err, 0);
	return NULL;
}

static void *open_h5(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	(void)fd;
	return open_writer(path, job, NULL, err, errlen);
}

/* A job of one node: the one whose runs the job holds (dc_job_part). */
static void *open_part(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	(void)fd;
	if (!job->part) {
		snprintf(err, errlen, "hdf5-part: no node chosen");
		return NULL;
	}
	return open_writer(path, job, job->part, err, errlen);
}

static int32_t rank_of(const struct dc_node *n, __u32 pid)
{
	const struct dc_process *p = dc_node_process(n, pid);

	return p ? p->rank : -1;
}

static int write_event(void *wp, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns)
{
	struct h5_writer *w = wp;
	struct h5_event *r = table_row(&w->events);
	int known = e->func < n->funcs.n;

	if (!r)
		return w->err = -1;
	*r = (struct h5_event){
		.ts_ns = wall_ns - w->job->origin_ns,
		.dur_ns = e->dur,
		.node = n->index,
		.level = known ? w->funcs.node_levels[n->index][e->func] : 0,
		.pid = e->pid,
		.tid = e->tid,
		.rank = rank_of(n, e->pid),
		.function = known ? w->funcs.node_funcs[n->index][e->func] : UINT32_MAX,
		.fd = e->flags & DC_EV_FD ? e->fd : -1,
		.ret = e->ret,
		.req = e->req,
		.bytes = e->bytes,
		.offset = e->flags & DC_EV_OFFSET ? e->offset : -1,
		.path = global_path(w, n, e->path),
		.fd2 = e->fd2,
		.path2 = global_path(w, n, e->path2),
		.flags = e->flags,
	};
	return 0;
}

static int write_counter(void *wp, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns)
{
	struct h5_writer *w = wp;
	struct h5_counter *r = table_row(&w->counters);
	int known = c->func < n->funcs.n;

	if (!r)
		return w->err = -1;
	*r = (struct h5_counter){
		.ts_ns = wall_ns - w->job->origin_ns,
		.node = n->index,
		.level = known ? w->funcs.node_levels[n->index][c->func] : 0,
		.pid = c->pid,
		.rank = rank_of(n, c->pid),
		.function = known ? w->funcs.node_funcs[n->index][c->func] : UINT32_MAX,
		.count = c->count,
		.time_ns = c->time_ns,
		.bytes = c->bytes,
	};
	return 0;
}

const struct dc_output_ops dc_hdf5_output = {
	"hdf5", ".h5", open_h5, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_hdf5_part_output = {
	"hdf5-part", ".h5", open_part, write_event, write_counter, close_writer,
};
