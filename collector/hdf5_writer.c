// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One HDF5 file a job (layout in README.md):
 *   /events     compound rows, chunked, shuffled and deflated, appended as merged
 *   /counters   PROFILE totals, same way
 *   /functions  (name, level) of each function index used by events
 *   /paths      path strings; index 0 is "no path"
 *   /processes  node, pid, ppid, rank, command, exit status
 *   /nodes      host, topology, clock mapping, counts
 * and job attributes on the root group. Strings are variable-length, which
 * h5py and pandas read as they are.
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
#include "output.h"
#include "strset.h"

#define ROWS_PER_CHUNK 32768
/* Chunk buffers per table: one filling while the others are packed. */
#define NSLOTS 4
#define MAX_PACK_THREADS 3

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
	struct dc_strings paths, levels;
	uint32_t **node_paths; /* per node, per string id: global path index + 1 */
	uint32_t **node_funcs; /* per node, per function id: global function index */
	uint16_t **node_levels;
	const char **fn_names;
	uint16_t *fn_levels;
	size_t nfns;
	int err;
};

static hid_t vlen_string(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	H5Tset_size(t, H5T_VARIABLE);
	return t;
}

/* ---- global string tables ---- */

static uint32_t global_path(struct h5_writer *w, const struct dc_node *n, __u32 id)
{
	uint32_t *cache = w->node_paths[n->index];

	if (!id || id > dc_reader_nstrings(n->r))
		return 0;
	if (!cache[id])
		cache[id] = dc_strings_intern(&w->paths, dc_reader_string(n->r, id)) + 1;
	return cache[id] - 1;
}

/* Functions are unified across nodes by (level, name). */
static int map_functions(struct h5_writer *w)
{
	struct dc_hashtab *fn_ids = dc_hashtab_new(256);

	if (!fn_ids)
		return -1;
	for (size_t i = 0; i < w->job->nnodes; i++) {
		const struct dc_node *n = &w->job->nodes[i];

		w->node_funcs[i] = calloc(n->funcs.n + 1, sizeof(uint32_t));
		w->node_levels[i] = calloc(n->funcs.n + 1, sizeof(uint16_t));
		if (!w->node_funcs[i] || !w->node_levels[i])
			return -1;
		for (size_t k = 0; k < n->funcs.n; k++) {
			const struct dc_func *f = dc_node_func(n, k);
			const char *name, *level;
			uint64_t key, id;
			uint16_t lv;

			if (!f)
				continue;
			name = dc_reader_string(n->r, f->name);
			level = dc_reader_string(n->r, f->category);
			lv = dc_strings_intern(&w->levels, level);
			key = dc_hash_string(name) * 31 + lv;
			if (!dc_hashtab_get(fn_ids, key, 0, &id)) {
				const char **nv = realloc(w->fn_names, (w->nfns + 1) * sizeof(*nv));
				uint16_t *lvv = realloc(w->fn_levels, (w->nfns + 1) * sizeof(*lvv));

				if (nv)
					w->fn_names = nv;
				if (lvv)
					w->fn_levels = lvv;
				if (!nv || !lvv)
					return -1;
				id = w->nfns++;
				w->fn_names[id] = name;
				w->fn_levels[id] = lv;
				dc_hashtab_put(fn_ids, key, 0, id);
			}
			w->node_funcs[i][k] = id;
			w->node_levels[i][k] = lv;
		}
	}
	dc_hashtab_free(fn_ids);
	return 0;
}

/* ---- appended tables ---- */

static hid_t event_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_event));

	H5Tinsert(t, "ts_ns", HOFFSET(struct h5_event, ts_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "dur_ns", HOFFSET(struct h5_event, dur_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "node", HOFFSET(struct h5_event, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, "level", HOFFSET(struct h5_event, level), H5T_NATIVE_UINT16);
	H5Tinsert(t, "pid", HOFFSET(struct h5_event, pid), H5T_NATIVE_UINT32);
	H5Tinsert(t, "tid", HOFFSET(struct h5_event, tid), H5T_NATIVE_UINT32);
	H5Tinsert(t, "rank", HOFFSET(struct h5_event, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, "function", HOFFSET(struct h5_event, function), H5T_NATIVE_UINT32);
	H5Tinsert(t, "fd", HOFFSET(struct h5_event, fd), H5T_NATIVE_INT32);
	H5Tinsert(t, "ret", HOFFSET(struct h5_event, ret), H5T_NATIVE_INT64);
	H5Tinsert(t, "req", HOFFSET(struct h5_event, req), H5T_NATIVE_UINT64);
	H5Tinsert(t, "bytes", HOFFSET(struct h5_event, bytes), H5T_NATIVE_UINT64);
	H5Tinsert(t, "offset", HOFFSET(struct h5_event, offset), H5T_NATIVE_INT64);
	H5Tinsert(t, "path", HOFFSET(struct h5_event, path), H5T_NATIVE_UINT32);
	H5Tinsert(t, "flags", HOFFSET(struct h5_event, flags), H5T_NATIVE_UINT8);
	return t;
}

static hid_t counter_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_counter));

	H5Tinsert(t, "ts_ns", HOFFSET(struct h5_counter, ts_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "node", HOFFSET(struct h5_counter, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, "level", HOFFSET(struct h5_counter, level), H5T_NATIVE_UINT16);
	H5Tinsert(t, "pid", HOFFSET(struct h5_counter, pid), H5T_NATIVE_UINT32);
	H5Tinsert(t, "rank", HOFFSET(struct h5_counter, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, "function", HOFFSET(struct h5_counter, function), H5T_NATIVE_UINT32);
	H5Tinsert(t, "count", HOFFSET(struct h5_counter, count), H5T_NATIVE_UINT64);
	H5Tinsert(t, "time_ns", HOFFSET(struct h5_counter, time_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "bytes", HOFFSET(struct h5_counter, bytes), H5T_NATIVE_UINT64);
	return t;
}

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

/* ---- tables written at the end ---- */

static int write_rows(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n)
{
	hid_t space = H5Screate_simple(1, &n, NULL);
	hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	herr_t rc = d < 0 ? -1 : n ? H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) : 0;

	if (d >= 0)
		H5Dclose(d);
	H5Sclose(space);
	H5Tclose(type);
	return rc < 0 ? -1 : 0;
}

static int write_strings(hid_t file, const char *name, const char **v, size_t n)
{
	return write_rows(file, name, vlen_string(), v, n);
}

static int write_functions(struct h5_writer *w)
{
	struct fn_row { const char *name, *level; } *rows = calloc(w->nfns + 1, sizeof(*rows));
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(*rows)), s = vlen_string();
	int rc;

	if (!rows)
		return -1;
	for (size_t i = 0; i < w->nfns; i++)
		rows[i] = (struct fn_row){ w->fn_names[i], w->levels.v[w->fn_levels[i]] };
	H5Tinsert(t, "name", HOFFSET(struct fn_row, name), s);
	H5Tinsert(t, "level", HOFFSET(struct fn_row, level), s);
	H5Tclose(s);
	rc = write_rows(w->file, "functions", t, rows, w->nfns);
	free(rows);
	return rc;
}

struct proc_row {
	uint16_t node;
	uint32_t pid, ppid;
	int32_t rank, world_size;
	const char *command, *label;
	uint8_t exited;
	int32_t exit_status;
};

static int write_processes(struct h5_writer *w)
{
	size_t n = 0, k = 0;
	struct proc_row *rows;
	char (*labels)[128];
	hid_t t, s = vlen_string();
	int rc;

	for (size_t i = 0; i < w->job->nnodes; i++)
		n += w->job->nodes[i].nprocs;
	rows = calloc(n + 1, sizeof(*rows));
	labels = calloc(n + 1, sizeof(*labels));
	if (!rows || !labels)
		return -1;
	for (size_t i = 0; i < w->job->nnodes; i++) {
		const struct dc_node *nd = &w->job->nodes[i];

		for (size_t p = 0; p < nd->nprocs; p++, k++) {
			const struct dc_process *pr = &nd->procs[p];

			dc_process_label(nd, pr, labels[k], sizeof(labels[k]));
			rows[k] = (struct proc_row){ i, pr->pid, pr->ppid, pr->rank, pr->world_size, pr->comm,
						     labels[k], pr->exited, pr->exit_status };
		}
	}
	t = H5Tcreate(H5T_COMPOUND, sizeof(struct proc_row));
	H5Tinsert(t, "node", HOFFSET(struct proc_row, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, "pid", HOFFSET(struct proc_row, pid), H5T_NATIVE_UINT32);
	H5Tinsert(t, "ppid", HOFFSET(struct proc_row, ppid), H5T_NATIVE_UINT32);
	H5Tinsert(t, "rank", HOFFSET(struct proc_row, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, "world_size", HOFFSET(struct proc_row, world_size), H5T_NATIVE_INT32);
	H5Tinsert(t, "command", HOFFSET(struct proc_row, command), s);
	H5Tinsert(t, "label", HOFFSET(struct proc_row, label), s);
	H5Tinsert(t, "exited", HOFFSET(struct proc_row, exited), H5T_NATIVE_UINT8);
	H5Tinsert(t, "exit_status", HOFFSET(struct proc_row, exit_status), H5T_NATIVE_INT32);
	H5Tclose(s);
	rc = write_rows(w->file, "processes", t, rows, n);
	free(rows);
	free(labels);
	return rc;
}

struct node_row {
	const char *host, *file, *topology, *incomplete, *skipped_because;
	uint64_t events, skipped, lost, monotonic_ref_ns, realtime_ref_ns;
	int64_t clock_shift_ns, mpi_clock_offset_ns;
	int64_t mpi_clock_error_ns; /* -1: not measured */
	uint32_t mode;
};

static int write_nodes(struct h5_writer *w)
{
	struct node_row *rows = calloc(w->job->nnodes, sizeof(*rows));
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct node_row)), s = vlen_string();
	int rc;

	if (!rows)
		return -1;
	for (size_t i = 0; i < w->job->nnodes; i++) {
		const struct dc_node *n = &w->job->nodes[i];

		rows[i] = (struct node_row){ n->hdr.hostname, n->path, n->hdr.topology, n->problem ? n->problem : "",
					     n->skip_reason ? n->skip_reason : "", n->events, n->skipped, n->lost,
					     n->hdr.monotonic_ref_ns, n->hdr.realtime_ref_ns, n->clock_shift_ns,
					     n->mpi_offset_ns,
					     n->mpi_error_ns == UINT64_MAX ? -1 : (int64_t)n->mpi_error_ns, n->hdr.mode };
	}
	H5Tinsert(t, "host", HOFFSET(struct node_row, host), s);
	H5Tinsert(t, "file", HOFFSET(struct node_row, file), s);
	H5Tinsert(t, "topology", HOFFSET(struct node_row, topology), s);
	H5Tinsert(t, "incomplete", HOFFSET(struct node_row, incomplete), s);
	H5Tinsert(t, "skipped_because", HOFFSET(struct node_row, skipped_because), s);
	H5Tinsert(t, "events", HOFFSET(struct node_row, events), H5T_NATIVE_UINT64);
	H5Tinsert(t, "events_skipped_damaged", HOFFSET(struct node_row, skipped), H5T_NATIVE_UINT64);
	H5Tinsert(t, "lost", HOFFSET(struct node_row, lost), H5T_NATIVE_UINT64);
	H5Tinsert(t, "monotonic_ref_ns", HOFFSET(struct node_row, monotonic_ref_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "realtime_ref_ns", HOFFSET(struct node_row, realtime_ref_ns), H5T_NATIVE_UINT64);
	H5Tinsert(t, "clock_shift_ns", HOFFSET(struct node_row, clock_shift_ns), H5T_NATIVE_INT64);
	H5Tinsert(t, "mpi_clock_offset_ns", HOFFSET(struct node_row, mpi_clock_offset_ns), H5T_NATIVE_INT64);
	H5Tinsert(t, "mpi_clock_error_ns", HOFFSET(struct node_row, mpi_clock_error_ns), H5T_NATIVE_INT64);
	H5Tinsert(t, "mode", HOFFSET(struct node_row, mode), H5T_NATIVE_UINT32);
	H5Tclose(s);
	rc = write_rows(w->file, "nodes", t, rows, w->job->nnodes);
	free(rows);
	return rc;
}

static void attr_u64(hid_t obj, const char *name, uint64_t v)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(obj, name, H5T_NATIVE_UINT64, space, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, H5T_NATIVE_UINT64, &v);
	H5Aclose(a);
	H5Sclose(space);
}

static void attr_str(hid_t obj, const char *name, const char *v)
{
	hid_t space = H5Screate(H5S_SCALAR), t = vlen_string();
	hid_t a = H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, t, &v);
	H5Aclose(a);
	H5Tclose(t);
	H5Sclose(space);
}

/* What each dataset's columns mean, so that the file explains itself in
 * h5dump and h5py: a "description" attribute per dataset. */
static int describe_datasets(hid_t file)
{
	static const char *const text[][2] = {
		{ "events", "One row per traced call. ts_ns: start, ns after the root attribute time_origin_unix_ns "
			    "(Unix epoch ns); dur_ns: ns; node: row of /nodes; level: row of /levels; pid, tid: the "
			    "node's OS ids; rank: MPI rank, -1 if none; function: row of /functions; fd: -1 if none; "
			    "ret: the raw return value (a libc call seen at its system call returns -errno on failure); "
			    "req: bytes asked; bytes: bytes moved; offset: file offset, -1 if none; path: row of /paths "
			    "(0: no path); flags: bits, as the attribute flags says" },
		{ "counters", "PROFILE mode: cumulative totals per process and function at ts_ns (ns after "
			      "time_origin_unix_ns): count calls, time_ns ns in them, bytes moved; node, level, pid, "
			      "rank, function as in /events" },
		{ "functions", "name and level (as a string) of each function index of /events and /counters" },
		{ "levels", "level names, by the index /events and /counters use" },
		{ "paths", "file paths, by the index /events uses; 0 is \"\": no path" },
		{ "processes", "node, pid, ppid, rank (-1: none), world_size, command, label as timelines name it, "
			       "exited, exit_status (a wait status)" },
		{ "nodes", "one row per node file: host, file, topology, incomplete (why it ends early), "
			   "skipped_because, events in the node file, events_skipped_damaged, lost (events the agent "
			   "could not record), monotonic_ref_ns and realtime_ref_ns (the clock pair), clock_shift_ns "
			   "(ns added to map the node's clock to the job's), mpi_clock_offset_ns and "
			   "mpi_clock_error_ns (the correction to rank 0's clock and its bound, -1: not measured), "
			   "mode (0 trace, 1 profile)" },
	};

	char flags[1024];
	size_t len = 0;
	hid_t d;

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		if ((d = H5Dopen2(file, text[i][0], H5P_DEFAULT)) < 0)
			continue;
		attr_str(d, "description", text[i][1]);
		H5Dclose(d);
	}
#define DC_EV_TEXT(name, bit, meaning) \
	len += snprintf(flags + len, len < sizeof(flags) ? sizeof(flags) - len : 0, "%s0x%02x %s", len ? "; " : "", bit, meaning);
	DC_EV_FLAGS(DC_EV_TEXT)
#undef DC_EV_TEXT
	if ((d = H5Dopen2(file, "events", H5P_DEFAULT)) >= 0) {
		attr_str(d, "flags", flags);
		H5Dclose(d);
	}
	return 0;
}

static int finish(struct h5_writer *w)
{
	const struct dc_job *job = w->job;

	if (table_finish(&w->events) || table_finish(&w->counters) || write_functions(w) ||
	    write_strings(w->file, "paths", w->paths.v, w->paths.n) ||
	    write_strings(w->file, "levels", w->levels.v, w->levels.n) || write_processes(w) || write_nodes(w))
		return -1;
	attr_str(w->file, "job_id", job->id);
	attr_str(w->file, "tool", "DataCrumbs " DC_VERSION);
	attr_u64(w->file, "time_origin_unix_ns", job->origin_ns);
	attr_u64(w->file, "events", w->events.written);
	attr_u64(w->file, "events_in_node_files", job->events);
	attr_u64(w->file, "events_skipped_damaged", job->skipped);
	attr_u64(w->file, "lost_events", job->lost);
	attr_u64(w->file, "nodes", job->nnodes);
	return describe_datasets(w->file);
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
	for (size_t i = 0; i < w->job->nnodes; i++) {
		free(w->node_paths[i]);
		free(w->node_funcs[i]);
		free(w->node_levels[i]);
	}
	free(w->node_paths);
	free(w->node_funcs);
	free(w->node_levels);
	dc_strings_free(&w->paths);
	dc_strings_free(&w->levels);
	free(w->fn_names);
	free(w->fn_levels);
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

static void *open_h5(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	struct h5_writer *w = calloc(1, sizeof(*w));
	size_t n = job->nnodes;

	if (!w)
		goto nomem;
	w->job = job;
	w->file = -1;
	dc_strings_init(&w->paths, 4096);
	dc_strings_init(&w->levels, 16);
	w->node_paths = calloc(n, sizeof(*w->node_paths));
	w->node_funcs = calloc(n, sizeof(*w->node_funcs));
	w->node_levels = calloc(n, sizeof(*w->node_levels));
	if (!w->paths.ids || !w->levels.ids || !w->node_paths || !w->node_funcs || !w->node_levels)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!(w->node_paths[i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(uint32_t))))
			goto nomem;
	dc_strings_intern(&w->paths, ""); /* index 0: no path */
	if (map_functions(w))
		goto nomem;
	if (!(w->packer = dc_packer_new(pack_threads(), ROWS_PER_CHUNK * sizeof(struct h5_event))))
		goto nomem;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported by us, once */
	w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (w->file < 0 ||
	    table_create(&w->events, w->file, "events", event_type(), sizeof(struct h5_event), w->packer) ||
	    table_create(&w->counters, w->file, "counters", counter_type(), sizeof(struct h5_counter), w->packer)) {
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
		.level = known ? w->node_levels[n->index][e->func] : 0,
		.pid = e->pid,
		.tid = e->tid,
		.rank = rank_of(n, e->pid),
		.function = known ? w->node_funcs[n->index][e->func] : UINT32_MAX,
		.fd = e->flags & DC_EV_FD ? e->fd : -1,
		.ret = e->ret,
		.req = e->req,
		.bytes = e->bytes,
		.offset = e->flags & DC_EV_OFFSET ? e->offset : -1,
		.path = global_path(w, n, e->path),
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
		.level = known ? w->node_levels[n->index][c->func] : 0,
		.pid = c->pid,
		.rank = rank_of(n, c->pid),
		.function = known ? w->node_funcs[n->index][c->func] : UINT32_MAX,
		.count = c->count,
		.time_ns = c->time_ns,
		.bytes = c->bytes,
	};
	return 0;
}

const struct dc_output_ops dc_hdf5_output = {
	"hdf5", ".h5", open_h5, write_event, write_counter, close_writer,
};
