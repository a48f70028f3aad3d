// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tables of the HDF5 layout (hdf5_tables.h) that are written whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hashtab.h"
#include "hdf5_tables.h"
#include "io_kind.h"

/* Functions are unified across nodes by (level, name). */
int dc_h5_funcs_map(struct dc_h5_funcs *w, const struct dc_job *job)
{
	struct dc_hashtab *fn_ids = dc_hashtab_new(256);

	if (!fn_ids)
		return -1;
	w->nnodes = job->nnodes;
	if (dc_strings_init(&w->levels, 16) || !(w->node_funcs = calloc(job->nnodes + 1, sizeof(*w->node_funcs))) ||
	    !(w->node_levels = calloc(job->nnodes + 1, sizeof(*w->node_levels)))) {
		dc_hashtab_free(fn_ids);
		return -1;
	}
	for (size_t i = 0; i < job->nnodes; i++) {
		const struct dc_node *n = &job->nodes[i];

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

void dc_h5_funcs_free(struct dc_h5_funcs *f)
{
	for (size_t i = 0; f->node_funcs && i < f->nnodes; i++)
		free(f->node_funcs[i]);
	for (size_t i = 0; f->node_levels && i < f->nnodes; i++)
		free(f->node_levels[i]);
	free(f->node_funcs);
	free(f->node_levels);
	free(f->fn_names);
	free(f->fn_levels);
	dc_strings_free(&f->levels);
}

hid_t dc_h5_event_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_event));

	DC_H5_COLUMN(t, struct h5_event, ts_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_event, dur_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_event, node, H5T_NATIVE_UINT16);
	DC_H5_COLUMN(t, struct h5_event, level, H5T_NATIVE_UINT16);
	DC_H5_COLUMN(t, struct h5_event, pid, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_event, tid, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_event, rank, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_event, function, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_event, fd, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_event, ret, H5T_NATIVE_INT64);
	DC_H5_COLUMN(t, struct h5_event, req, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_event, bytes, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_event, offset, H5T_NATIVE_INT64);
	DC_H5_COLUMN(t, struct h5_event, path, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_event, fd2, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_event, path2, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_event, flags, H5T_NATIVE_UINT8);
	return t;
}

hid_t dc_h5_counter_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_counter));

	DC_H5_COLUMN(t, struct h5_counter, ts_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_counter, node, H5T_NATIVE_UINT16);
	DC_H5_COLUMN(t, struct h5_counter, level, H5T_NATIVE_UINT16);
	DC_H5_COLUMN(t, struct h5_counter, pid, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_counter, rank, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_counter, function, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_counter, count, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_counter, time_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_counter, bytes, H5T_NATIVE_UINT64);
	return t;
}

int dc_h5_write_rows(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n)
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

int dc_h5_write_strings(hid_t file, const char *name, const char **v, size_t n)
{
	return dc_h5_write_rows(file, name, dc_h5_vlen_string(), v, n);
}

hid_t dc_h5_function_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_function_row)), s = dc_h5_vlen_string();

	DC_H5_COLUMN(t, struct h5_function_row, name, s);
	DC_H5_COLUMN(t, struct h5_function_row, level, s);
	DC_H5_COLUMN(t, struct h5_function_row, io, s);
	H5Tclose(s);
	return t;
}

hid_t dc_h5_process_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_process_row)), s = dc_h5_vlen_string();

	DC_H5_COLUMN(t, struct h5_process_row, node, H5T_NATIVE_UINT16);
	DC_H5_COLUMN(t, struct h5_process_row, pid, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_process_row, ppid, H5T_NATIVE_UINT32);
	DC_H5_COLUMN(t, struct h5_process_row, rank, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_process_row, world_size, H5T_NATIVE_INT32);
	DC_H5_COLUMN(t, struct h5_process_row, command, s);
	DC_H5_COLUMN(t, struct h5_process_row, label, s);
	DC_H5_COLUMN(t, struct h5_process_row, exited, H5T_NATIVE_UINT8);
	DC_H5_COLUMN(t, struct h5_process_row, exit_status, H5T_NATIVE_INT32);
	H5Tclose(s);
	return t;
}

hid_t dc_h5_node_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_node_row)), s = dc_h5_vlen_string();

	DC_H5_COLUMN(t, struct h5_node_row, host, s);
	DC_H5_COLUMN(t, struct h5_node_row, file, s);
	DC_H5_COLUMN(t, struct h5_node_row, topology, s);
	DC_H5_COLUMN(t, struct h5_node_row, incomplete, s);
	DC_H5_COLUMN(t, struct h5_node_row, skipped_because, s);
	DC_H5_COLUMN(t, struct h5_node_row, events, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_node_row, events_skipped_damaged, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_node_row, lost, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_node_row, monotonic_ref_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_node_row, realtime_ref_ns, H5T_NATIVE_UINT64);
	DC_H5_COLUMN(t, struct h5_node_row, clock_shift_ns, H5T_NATIVE_INT64);
	DC_H5_COLUMN(t, struct h5_node_row, mpi_clock_offset_ns, H5T_NATIVE_INT64);
	DC_H5_COLUMN(t, struct h5_node_row, mpi_clock_error_ns, H5T_NATIVE_INT64);
	DC_H5_COLUMN(t, struct h5_node_row, mode, H5T_NATIVE_UINT32);
	H5Tclose(s);
	return t;
}

int dc_h5_write_functions(hid_t file, const struct dc_h5_funcs *w)
{
	struct h5_function_row *rows = calloc(w->nfns + 1, sizeof(*rows));
	int rc;

	if (!rows)
		return -1;
	for (size_t i = 0; i < w->nfns; i++)
		rows[i] = (struct h5_function_row){ w->fn_names[i], w->levels.v[w->fn_levels[i]],
						    dc_io_kind_name(dc_io_kind(w->fn_names[i])) };
	rc = dc_h5_write_rows(file, DC_H5_FUNCTIONS, dc_h5_function_type(), rows, w->nfns);
	free(rows);
	return rc ? rc : dc_h5_write_strings(file, DC_H5_LEVELS, w->levels.v, w->levels.n);
}

int dc_h5_write_processes(hid_t file, const struct dc_job *job)
{
	size_t n = 0, k = 0;
	struct h5_process_row *rows;
	char (*labels)[128];
	int rc;

	for (size_t i = 0; i < job->nnodes; i++)
		n += job->nodes[i].nprocs;
	rows = calloc(n + 1, sizeof(*rows));
	labels = calloc(n + 1, sizeof(*labels));
	if (!rows || !labels)
		return -1;
	for (size_t i = 0; i < job->nnodes; i++) {
		const struct dc_node *nd = &job->nodes[i];

		for (size_t p = 0; p < nd->nprocs; p++, k++) {
			const struct dc_process *pr = &nd->procs[p];

			dc_process_label(nd, pr, labels[k], sizeof(labels[k]));
			rows[k] = (struct h5_process_row){ i, pr->pid, pr->ppid, pr->rank, pr->world_size, pr->comm,
						     labels[k], pr->exited, pr->exit_status };
		}
	}
	rc = dc_h5_write_rows(file, DC_H5_PROCESSES, dc_h5_process_type(), rows, n);
	free(rows);
	free(labels);
	return rc;
}

int dc_h5_write_nodes(hid_t file, const struct dc_job *job, char *const *problem_of)
{
	struct h5_node_row *rows = calloc(job->nnodes + 1, sizeof(*rows));
	char **said = calloc(job->nnodes + 1, sizeof(*said));
	int rc;

	if (!rows || !said) {
		free(rows);
		free(said);
		return -1;
	}
	for (size_t i = 0; i < job->nnodes; i++) {
		const struct dc_node *n = &job->nodes[i];
		const char *problem = n->problem ? n->problem : "";

		if (problem_of && problem_of[i] &&
		    asprintf(&said[i], "%s%s%s", problem, *problem ? "; " : "", problem_of[i]) >= 0)
			problem = said[i];
		rows[i] = (struct h5_node_row){ n->hdr.hostname, n->path, n->hdr.topology, problem,
					     n->skip_reason ? n->skip_reason : "", n->events, n->skipped, n->lost,
					     n->hdr.monotonic_ref_ns, n->hdr.realtime_ref_ns, n->clock_shift_ns,
					     n->mpi_offset_ns,
					     n->mpi_error_ns == UINT64_MAX ? -1 : (int64_t)n->mpi_error_ns, n->hdr.mode };
	}
	rc = dc_h5_write_rows(file, DC_H5_NODES, dc_h5_node_type(), rows, job->nnodes);
	for (size_t i = 0; i < job->nnodes; i++)
		free(said[i]);
	free(said);
	free(rows);
	return rc;
}

int dc_h5_attr_u64(hid_t obj, const char *name, uint64_t v)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(obj, name, H5T_NATIVE_UINT64, space, H5P_DEFAULT, H5P_DEFAULT);
	int rc = a < 0 || H5Awrite(a, H5T_NATIVE_UINT64, &v) < 0 ? -1 : 0;

	if (a >= 0 && H5Aclose(a) < 0)
		rc = -1;
	H5Sclose(space);
	return rc;
}

int dc_h5_attr_str(hid_t obj, const char *name, const char *v)
{
	hid_t space = H5Screate(H5S_SCALAR), t = dc_h5_vlen_string();
	hid_t a = H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT);
	int rc = a < 0 || H5Awrite(a, t, &v) < 0 ? -1 : 0;

	if (a >= 0 && H5Aclose(a) < 0)
		rc = -1;
	H5Tclose(t);
	H5Sclose(space);
	return rc;
}

/* What each dataset's columns mean, so that the file explains itself in
 * h5dump and h5py: a "description" attribute per dataset. */
static int describe_datasets(hid_t file)
{
	static const char *const text[][2] = {
		{ DC_H5_EVENTS, "One row per traced call. ts_ns: start, ns after the root attribute time_origin_unix_ns "
			    "(Unix epoch ns); dur_ns: ns; node: row of /nodes; level: row of /levels; pid, tid: the "
			    "node's OS ids; rank: MPI rank, -1 if none; function: row of /functions; fd: -1 if none; "
			    "ret: the raw return value (a libc call seen at its system call returns -errno on failure); "
			    "req: bytes asked; bytes: bytes moved; offset: file offset, -1 if none; path: row of /paths "
			    "(0: no path); flags: bits, as the attribute flags says" },
		{ DC_H5_COUNTERS, "PROFILE mode: cumulative totals per process and function at ts_ns (ns after "
			      "time_origin_unix_ns): count calls, time_ns ns in them, bytes moved; node, level, pid, "
			      "rank, function as in /events" },
		{ DC_H5_FUNCTIONS, "name and level (as a string) of each function index of /events and /counters; io: read, write or empty, the function's kind in dc-summary's read and write figures" },
		{ DC_H5_LEVELS, "level names, by the index /events and /counters use" },
		{ DC_H5_PATHS, "file paths, by the index /events uses; 0 is \"\": no path" },
		{ DC_H5_PROCESSES, "node, pid, ppid, rank (-1: none), world_size, command, label as timelines name it, "
			       "exited, exit_status (a wait status)" },
		{ DC_H5_NODES, "one row per node file: host, file, topology, incomplete (why it ends early), "
			   "skipped_because, events in the node file, events_skipped_damaged, lost (events the agent "
			   "could not record), monotonic_ref_ns and realtime_ref_ns (the clock pair), clock_shift_ns "
			   "(ns added to map the node's clock to the job's), mpi_clock_offset_ns and "
			   "mpi_clock_error_ns (the correction to rank 0's clock and its bound, -1: not measured), "
			   "mode (0 trace, 1 profile)" },
	};

	char flags[1024];
	size_t len = 0;
	int rc = 0;
	hid_t d;

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		if ((d = H5Dopen2(file, text[i][0], H5P_DEFAULT)) < 0)
			continue;
		rc |= dc_h5_attr_str(d, "description", text[i][1]);
		H5Dclose(d);
	}
#define DC_EV_TEXT(name, bit, meaning) \
	len += snprintf(flags + len, len < sizeof(flags) ? sizeof(flags) - len : 0, "%s0x%02x %s", len ? "; " : "", bit, meaning);
	DC_EV_FLAGS(DC_EV_TEXT)
#undef DC_EV_TEXT
	if ((d = H5Dopen2(file, DC_H5_EVENTS, H5P_DEFAULT)) >= 0) {
		rc |= dc_h5_attr_str(d, "flags", flags);
		H5Dclose(d);
	}
	return rc;
}

int dc_h5_finish_file(hid_t file, const struct dc_job *job, uint64_t events)
{
	if (dc_h5_attr_str(file, DC_H5_ATTR_JOB_ID, job->id) || dc_h5_attr_str(file, DC_H5_ATTR_TOOL, "DataCrumbs " DC_VERSION) ||
	    dc_h5_attr_u64(file, DC_H5_ATTR_LAYOUT_VERSION, DC_H5_LAYOUT_VERSION) ||
	    dc_h5_attr_u64(file, DC_H5_ATTR_ORIGIN, job->origin_ns) || dc_h5_attr_u64(file, DC_H5_ATTR_EVENTS, events) ||
	    dc_h5_attr_u64(file, "events_in_node_files", job->events) ||
	    dc_h5_attr_u64(file, DC_H5_ATTR_SKIPPED, job->skipped) || dc_h5_attr_u64(file, DC_H5_ATTR_LOST, job->lost) ||
	    dc_h5_attr_u64(file, DC_H5_ATTR_NODES, job->nnodes))
		return -1;
	return describe_datasets(file);
}

uint32_t dc_h5_part_path_base(const struct dc_job *job, size_t node)
{
	uint32_t base = 0;

	for (size_t i = 0; i < node; i++)
		base += dc_reader_nstrings(job->nodes[i].r);
	return base;
}

uint64_t dc_h5_file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}
