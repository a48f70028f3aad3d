// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge --stitch: one HDF5 file of a job from its nodes' parts, made by
 * dc-merge --part on many machines at once, without copying an event.
 * /events and /counters are virtual datasets (HDF5 VDS) that map each
 * part's table, one node after another; the small tables (functions,
 * levels, paths, processes, nodes) are written whole from the node files'
 * headers, as a single-process merge writes them. The work grows with the
 * number of nodes and strings, not with the number of events.
 *
 * A part is used only when it says it was made of this job's node file as
 * the file is now, with the same time origin and path numbering; a node
 * without such a part is named in /nodes (incomplete) and on stderr, and
 * the other nodes' events are all there.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_read.h"
#include "hdf5_tables.h"
#include "output.h"
#include "safe_open.h"

struct part {
	char *problem; /* NULL: usable */
	uint64_t events, counters, skipped;
	char *skip_reason;
};

static char *said(const char *fmt, const char *a, const char *b)
{
	size_t len = strlen(fmt) + strlen(a) + strlen(b) + 1;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, fmt, a, b);
	return s;
}

/* Why the part at path cannot stand for node i, or NULL when it can. */
static char *check_part(const struct dc_job *job, size_t i, const char *path, struct part *p)
{
	const struct dc_node *n = &job->nodes[i];
	uint64_t node = UINT64_MAX, bytes = 0, base = UINT64_MAX, origin = 0;
	char *id, *file, *why = NULL;
	int64_t ev, ct;
	int unread;
	hid_t f;

	char reason[PATH_MAX + 128], held[64];
	int fd;

	if (access(path, F_OK) && errno == ENOENT)
		return said("no part %s%s (was dc-merge --part run for this node?)", path, "");
	/* Opened as node files are (no link, no FIFO, a regular file), and
	 * read through that very descriptor. */
	if ((fd = dc_open_regular(path, reason, sizeof(reason))) < 0)
		return said("part %s%s", reason, "");
	snprintf(held, sizeof(held), "/proc/self/fd/%d", fd);
	f = H5Fopen(held, H5F_ACC_RDONLY, H5P_DEFAULT);
	close(fd);
	if (f < 0)
		return said("part %s%s is not an HDF5 file dc-merge --part wrote", path, "");
	id = dc_h5_get_str(f, DC_H5_ATTR_JOB_ID);
	file = dc_h5_get_str(f, DC_H5_ATTR_NODE_FILE);
	unread = dc_h5_get_u64(f, DC_H5_ATTR_NODE, &node) | dc_h5_get_u64(f, DC_H5_ATTR_NODE_FILE_BYTES, &bytes) |
		 dc_h5_get_u64(f, DC_H5_ATTR_PATH_BASE, &base) | dc_h5_get_u64(f, DC_H5_ATTR_ORIGIN, &origin) |
		 dc_h5_get_u64(f, DC_H5_ATTR_EVENTS, &p->events) | dc_h5_get_u64(f, DC_H5_ATTR_COUNTERS, &p->counters) |
		 dc_h5_get_u64(f, DC_H5_ATTR_SKIPPED, &p->skipped);
	p->skip_reason = dc_h5_get_str(f, DC_H5_ATTR_SKIPPED_BECAUSE);
	ev = dc_h5_rows(f, DC_H5_EVENTS);
	ct = dc_h5_rows(f, DC_H5_COUNTERS);
	if (dc_h5_check_layout(f, reason, sizeof(reason)))
		why = said("part %s: %s", path, reason);
	else if (unread)
		why = said("part %s is damaged: an attribute of dc-merge --part's cannot be read%s", path, "");
	else if (!id || strcmp(id, job->id))
		why = said("part %s is of job %s, not this one", path, id ? id : "?");
	else if (!file || strcmp(file, dc_node_file_name(n)) || node != i)
		why = said("part %s was made of %s, another node file", path, file ? file : "?");
	else if (bytes != dc_h5_file_bytes(n->path) || base != dc_h5_part_path_base(job, i) || origin != job->origin_ns)
		why = said("part %s is out of date: the job's node files changed since it was made%s", path, "");
	else if (ev < 0 || ct < 0 || (uint64_t)ev != p->events || (uint64_t)ct != p->counters)
		why = said("part %s is damaged: its tables do not hold what its attributes say%s", path, "");
	free(id);
	free(file);
	H5Fclose(f);
	return why;
}

/* A virtual table of the usable parts' tables, one after another. */
static int virtual_table(hid_t file, const char *name, hid_t type, const struct dc_job *job, const struct part *parts,
			 const char *parts_ref, bool counters)
{
	hsize_t total = 0, off = 0;
	hid_t vspace, dcpl, d;
	char src[4096];
	int rc = 0;

	for (size_t i = 0; i < job->nnodes; i++)
		if (!parts[i].problem)
			total += counters ? parts[i].counters : parts[i].events;
	if (!total) /* nothing to map: an empty table, as a merge writes */
		return dc_h5_write_rows(file, name, type, NULL, 0);
	vspace = H5Screate_simple(1, &total, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	for (size_t i = 0; !rc && i < job->nnodes; i++) {
		hsize_t n = counters ? parts[i].counters : parts[i].events;
		hid_t sspace;

		if (parts[i].problem || !n)
			continue;
		snprintf(src, sizeof(src), "%s/" DC_PART_NAME, parts_ref, i);
		sspace = H5Screate_simple(1, &n, NULL);
		if (H5Sselect_hyperslab(vspace, H5S_SELECT_SET, &off, NULL, &n, NULL) < 0 ||
		    H5Pset_virtual(dcpl, vspace, src, name, sspace) < 0)
			rc = -1;
		H5Sclose(sspace);
		off += n;
	}
	H5Sselect_all(vspace);
	d = rc ? -1 : H5Dcreate2(file, name, type, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (d < 0)
		rc = -1;
	else
		H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(vspace);
	H5Tclose(type);
	return rc;
}

/* "" and then every node's strings: the numbering the parts used. */
static int write_paths(hid_t file, const struct dc_job *job)
{
	size_t n = 1, k = 1;
	const char **v;
	int rc;

	for (size_t i = 0; i < job->nnodes; i++)
		n += dc_reader_nstrings(job->nodes[i].r);
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	v[0] = "";
	for (size_t i = 0; i < job->nnodes; i++)
		for (__u32 id = 1; id <= dc_reader_nstrings(job->nodes[i].r); id++)
			v[k++] = dc_reader_string(job->nodes[i].r, id);
	rc = dc_h5_write_strings(file, DC_H5_PATHS, v, n);
	free(v);
	return rc;
}

int dc_hdf5_stitch(struct dc_job *job, const char *parts_dir, const char *parts_ref, const char *out,
		   unsigned *unusable, char *err, size_t errlen)
{
	struct part *parts = calloc(job->nnodes + 1, sizeof(*parts));
	char **problem = calloc(job->nnodes + 1, sizeof(*problem));
	struct dc_h5_funcs funcs = { 0 };
	uint64_t events = 0;
	char path[4096];
	hid_t file = -1;
	int rc = -1;

	*unusable = 0;
	if (!parts || !problem)
		goto out;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	job->skipped = 0;
	for (size_t i = 0; i < job->nnodes; i++) {
		struct dc_node *n = &job->nodes[i];

		snprintf(path, sizeof(path), "%s/" DC_PART_NAME, parts_dir, i);
		parts[i].problem = check_part(job, i, path, &parts[i]);
		if (parts[i].problem) {
			++*unusable;
			fprintf(stderr, "dc-merge: warning: node %s: %s; its events are left out\n", n->hdr.hostname,
				parts[i].problem);
			problem[i] = said("%s; its events are not in this file%s", parts[i].problem, "");
			continue;
		}
		events += parts[i].events;
		n->skipped = parts[i].skipped;
		job->skipped += parts[i].skipped;
		if (parts[i].skip_reason && *parts[i].skip_reason && !n->skip_reason)
			n->skip_reason = strdup(parts[i].skip_reason);
	}
	file = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (file < 0) {
		snprintf(err, errlen, "cannot create the HDF5 file %s", out);
		goto out;
	}
	if (virtual_table(file, DC_H5_EVENTS, dc_h5_event_type(), job, parts, parts_ref, false) ||
	    virtual_table(file, DC_H5_COUNTERS, dc_h5_counter_type(), job, parts, parts_ref, true) ||
	    dc_h5_funcs_map(&funcs, job) || dc_h5_write_functions(file, &funcs) || write_paths(file, job) ||
	    dc_h5_write_processes(file, job) || dc_h5_write_nodes(file, job, problem) ||
	    dc_h5_finish_file(file, job, events)) {
		snprintf(err, errlen, "writing the stitched HDF5 file failed");
		goto out;
	}
	if (dc_h5_attr_u64(file, "nodes_without_part", *unusable) || dc_h5_attr_str(file, "parts", parts_ref)) {
		snprintf(err, errlen, "writing the stitched HDF5 file failed");
		goto out;
	}
	rc = 0;
out:
	if (!parts || !problem)
		snprintf(err, errlen, "out of memory");
	if (file >= 0 && H5Fclose(file) < 0 && !rc) {
		snprintf(err, errlen, "writing the stitched HDF5 file failed");
		rc = -1;
	}
	for (size_t i = 0; parts && i < job->nnodes; i++) {
		free(parts[i].problem);
		free(parts[i].skip_reason);
	}
	for (size_t i = 0; problem && i < job->nnodes; i++)
		free(problem[i]);
	free(parts);
	free(problem);
	dc_h5_funcs_free(&funcs);
	return rc;
}
