// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "nodeset.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: warning: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const struct dc_func *dc_node_func(const struct dc_node *n, __u32 id)
{
	return dc_functable_get(&n->funcs, id);
}

const struct dc_process *dc_node_process(const struct dc_node *n, __u32 pid)
{
	uint64_t i;

	return n->proc_ids && dc_hashtab_get(n->proc_ids, pid, 0, &i) ? &n->procs[i] : NULL;
}

void dc_process_label(const struct dc_node *n, const struct dc_process *p, char *out, size_t len)
{
	if (p->rank >= 0)
		snprintf(out, len, "rank %d", p->rank);
	else if (p->task >= 0)
		snprintf(out, len, "task %d (%s)", p->task, n->hdr.hostname);
	else
		snprintf(out, len, "%s (%s:%u)", p->comm[0] ? p->comm : "?", n->hdr.hostname, p->pid);
}

static struct dc_process *find_or_add_process(struct dc_node *n, __u32 pid)
{
	struct dc_process *p = (struct dc_process *)dc_node_process(n, pid), *v;

	if (p)
		return p;
	if (!n->proc_ids && !(n->proc_ids = dc_hashtab_new(64)))
		return NULL;
	if (n->nprocs == n->cap_procs) {
		size_t cap = n->cap_procs ? n->cap_procs * 2 : 64;

		if (!(v = realloc(n->procs, cap * sizeof(*v))))
			return NULL;
		n->procs = v;
		n->cap_procs = cap;
	}
	if (dc_hashtab_put(n->proc_ids, pid, 0, n->nprocs))
		return NULL;
	p = &n->procs[n->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->rank = -1;
	p->task = -1;
	return p;
}

static int take_procs(struct dc_node *n, const struct dc_proc *recs, __u32 count)
{
	for (__u32 i = 0; i < count; i++) {
		const struct dc_proc *r = &recs[i];
		struct dc_process *p = find_or_add_process(n, r->pid);

		if (!p)
			return -1;
		if (r->kind == DC_PROC_START || r->kind == DC_PROC_FORK)
			p->ppid = r->ppid;
		if (r->kind == DC_PROC_EXIT) {
			p->exited = true;
			p->exit_status = r->exit_code;
			continue;
		}
		/* The name after the last exec is the one shown. */
		memcpy(p->comm, r->comm, DC_COMM_LEN);
		p->comm[DC_COMM_LEN] = 0;
	}
	return 0;
}

/* The offset with the smallest error bound aligns the node's clock. */
static int take_ranks(struct dc_node *n, const struct dc_rank *recs, __u32 count)
{
	for (__u32 i = 0; i < count; i++) {
		const struct dc_rank *r = &recs[i];
		struct dc_process *p = find_or_add_process(n, r->pid);

		if (!p)
			return -1;
		if (r->kind == DC_RANK_SLURM_TASK) {
			p->task = r->rank;
			continue;
		}
		p->rank = r->rank;
		p->world_size = r->world_size;
		if (r->kind == DC_RANK_FINALIZE) {
			p->finalized = true;
			continue;
		}
		if (r->kind == DC_RANK_NO_FINALIZE)
			continue; /* also seen from the exit record; nothing to align */
		if (r->clock_error_ns < n->mpi_error_ns || (r->rank == 0 && r->clock_error_ns == 0)) {
			n->mpi_error_ns = r->clock_error_ns;
			n->mpi_offset_ns = r->clock_offset_ns;
		}
	}
	return 0;
}

static int take_stats(struct dc_node *n, const struct dc_cpu_stats *recs, __u32 count)
{
	struct dc_cpu_stats *v = realloc(n->stats, count * sizeof(*v));

	if (!v && count)
		return -1;
	memcpy(v, recs, count * sizeof(*v));
	n->stats = v;
	n->nstats = count;
	return 0;
}

static int add_run(struct dc_job *job, struct dc_node *n, const struct dc_chunk *c)
{
	struct dc_run *v = realloc(job->runs, (job->nruns + 1) * sizeof(*v));

	if (!v)
		return -1;
	job->runs = v;
	v[job->nruns++] = (struct dc_run){ .node = n, .hdr = c->hdr, .offset = c->offset };
	if (c->hdr.type == DC_CHUNK_EVENTS)
		n->events += c->hdr.count;
	return 0;
}

/* Reads what a merge needs up front and indexes the rest. */
static int index_node(struct dc_job *job, struct dc_node *n)
{
	unsigned skip = 1u << DC_CHUNK_EVENTS | 1u << DC_CHUNK_COUNTERS;
	enum dc_read_status st;
	struct dc_chunk c;
	int rc = 0;

	while (!rc && (st = dc_reader_next_index(n->r, &c, skip)) == DC_READ_OK) {
		switch (c.hdr.type) {
		case DC_CHUNK_FUNCS:
			rc = dc_functable_take(&n->funcs, c.data, c.hdr.count);
			break;
		case DC_CHUNK_PROCS:
			rc = take_procs(n, c.data, c.hdr.count);
			break;
		case DC_CHUNK_STATS:
			rc = take_stats(n, c.data, c.hdr.count);
			break;
		case DC_CHUNK_RANKS:
			rc = take_ranks(n, c.data, c.hdr.count);
			break;
		case DC_CHUNK_EVENTS:
		case DC_CHUNK_COUNTERS:
			if (c.hdr.count)
				rc = add_run(job, n, &c);
			break;
		}
	}
	if (rc)
		return -1;
	if (st != DC_READ_END) {
		n->problem = strdup(dc_reader_problem(n->r));
		warn("%s; merged up to its last whole chunk", n->problem);
	}
	for (unsigned i = 0; i < n->nstats; i++)
		n->lost += n->stats[i].stat[DC_STAT_LOST];
	return 0;
}

bool dc_is_node_file(const char *name)
{
	size_t len = strlen(name), sl = strlen(DC_NODE_SUFFIX);

	return len > sl && strcmp(name + len - sl, DC_NODE_SUFFIX) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether dir holds a node file. */
static bool has_node_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d)))
		found = dc_is_node_file(de->d_name);
	if (d)
		closedir(d);
	return found;
}

/* No node file in dir: maybe it is the agent's output folder, whose
 * subfolders are jobs; name them. */
static void no_node_files(const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len = snprintf(err, errlen, "no node files (*%s) in %s", DC_NODE_SUFFIX, dir);
	int jobs = 0;

	while (d && (de = readdir(d)) && len < errlen) {
		char sub[PATH_MAX];

		if (de->d_name[0] == '.' || snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub) ||
		    !has_node_files(sub))
			continue;
		len += snprintf(err + len, errlen - len, "%s%s", jobs++ ? ", " : "; it holds the job folders ",
				de->d_name);
	}
	if (jobs && len < errlen)
		snprintf(err + len, errlen - len, ": give one as JOB_ID, with -i %s/JOB_ID or -i left out and "
						  "DC_OUTPUT_DIR=%s", dir, dir);
	if (d)
		closedir(d);
}

/* Node file names of dir, sorted so that node order is stable. */
static char **list_node_files(const char *dir, size_t *n, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;

	*n = 0;
	if (!d) {
		snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		char **v;

		if (!dc_is_node_file(de->d_name))
			continue;
		v = realloc(names, (*n + 1) * sizeof(*v));
		if (!v)
			break;
		names = v;
		if (asprintf(&names[*n], "%s/%s", dir, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	else
		no_node_files(dir, err, errlen);
	return names;
}

/* The job id in the header of the node file at path. */
static int header_job_id(const char *path, char *id, char *err, size_t errlen)
{
	struct dc_reader *r = dc_reader_open(path, err, errlen);

	if (!r)
		return -1;
	snprintf(id, PATH_MAX, "%s", dc_reader_header(r)->job_id);
	dc_reader_close(r);
	/* Outputs are named after it: a file's header is anyone's words. */
	if (!*id || strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0) {
		snprintf(err, errlen, "%s: its job id '%s' cannot name a file: give the job id and -i instead",
			 path, id);
		return -1;
	}
	return 0;
}

int dc_job_locate(const char *arg, const char *input, char *dir, char *id, char *err, size_t errlen)
{
	const char *base = getenv("DC_OUTPUT_DIR");
	struct stat st;
	size_t len = strlen(arg);

	/* With -i it is the id; else a folder of node files, or one of them. */
	if (!input && stat(arg, &st) == 0 &&
	    (S_ISDIR(st.st_mode) ? has_node_files(arg) : S_ISREG(st.st_mode) && dc_is_node_file(arg))) {
		char **names;
		size_t n;
		int rc;

		if (len >= PATH_MAX) {
			snprintf(err, errlen, "%s: the name is too long", arg);
			return -1;
		}
		snprintf(dir, PATH_MAX, "%s", arg);
		if (!S_ISDIR(st.st_mode)) {
			char *slash = strrchr(dir, '/');

			if (slash)
				*(slash == dir ? slash + 1 : slash) = 0;
			else
				snprintf(dir, PATH_MAX, ".");
			return header_job_id(arg, id, err, errlen);
		}
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = 0;
		if (!(names = list_node_files(dir, &n, err, errlen)))
			return -1;
		rc = header_job_id(names[0], id, err, errlen);
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return rc;
	}
	if (len >= PATH_MAX || !*arg) {
		snprintf(err, errlen, "'%s' is no job id", arg);
		return -1;
	}
	snprintf(id, PATH_MAX, "%s", arg);
	if (input)
		len = snprintf(dir, PATH_MAX, "%s", input);
	else
		len = snprintf(dir, PATH_MAX, "%s/%s", base && *base ? base : "datacrumbs", arg);
	if (len >= PATH_MAX) {
		snprintf(err, errlen, "%s: the folder's name is too long", arg);
		return -1;
	}
	return 0;
}

static int open_node(struct dc_job *job, const char *path, const char *id)
{
	struct dc_node *n = &job->nodes[job->nnodes];
	char err[1024];

	memset(n, 0, sizeof(*n));
	n->r = dc_reader_open(path, err, sizeof(err));
	if (!n->r) {
		warn("%s; skipped", err);
		return 0;
	}
	n->hdr = *dc_reader_header(n->r);
	if (strcmp(n->hdr.job_id, id) != 0) {
		warn("%s belongs to job %s, not %s; skipped", path, n->hdr.job_id, id);
		dc_reader_close(n->r);
		return 0;
	}
	n->path = strdup(path);
	n->index = job->nnodes;
	n->mpi_error_ns = UINT64_MAX;
	job->nnodes++;
	if (index_node(job, n))
		return -1;
	/* Monotonic to wall time, then wall time to rank 0's clock. */
	n->clock_shift_ns = (__s64)(n->hdr.realtime_ref_ns - n->hdr.monotonic_ref_ns) + n->mpi_offset_ns;
	return 0;
}

static int by_min_wall(const void *a, const void *b)
{
	const struct dc_run *x = a, *y = b;

	return x->min_wall < y->min_wall ? -1 : x->min_wall > y->min_wall;
}

static void place_runs_in_time(struct dc_job *job)
{
	job->first_ns = UINT64_MAX;
	for (size_t i = 0; i < job->nruns; i++) {
		struct dc_run *r = &job->runs[i];
		__u64 last = r->hdr.max_ts + r->node->clock_shift_ns;

		/* Counter chunks carry no range: their records are snapshots in order. */
		r->min_wall = r->hdr.min_ts + r->node->clock_shift_ns;
		if (r->hdr.type != DC_CHUNK_EVENTS)
			continue;
		if (r->min_wall < job->first_ns)
			job->first_ns = r->min_wall;
		if (last > job->last_ns)
			job->last_ns = last;
	}
	if (job->first_ns == UINT64_MAX)
		job->first_ns = job->last_ns = 0;
	qsort(job->runs, job->nruns, sizeof(*job->runs), by_min_wall);
}

static void set_origin(struct dc_job *job)
{
	job->origin_ns = UINT64_MAX;
	for (size_t i = 0; i < job->nnodes; i++) {
		struct dc_node *n = &job->nodes[i];
		__u64 start = n->hdr.monotonic_ref_ns + n->clock_shift_ns;

		for (size_t k = 0; k < n->nprocs; k++)
			job->ranks += n->procs[k].rank >= 0;

		if (start < job->origin_ns)
			job->origin_ns = start;
		job->events += n->events;
		job->lost += n->lost;
	}
	if (job->first_ns && job->first_ns < job->origin_ns)
		job->origin_ns = job->first_ns;
}

int dc_job_open(const char *dir, const char *id, struct dc_job *job, char *err, size_t errlen)
{
	size_t nfiles;
	char **files;
	int rc = 0;

	memset(job, 0, sizeof(*job));
	files = list_node_files(dir, &nfiles, err, errlen);
	if (!nfiles) {
		free(files);
		return -1;
	}
	job->id = strdup(id);
	job->nodes = calloc(nfiles, sizeof(*job->nodes));
	if (!job->id || !job->nodes) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (size_t i = 0; i < nfiles; i++) {
		if (!rc && open_node(job, files[i], id)) {
			snprintf(err, errlen, "out of memory reading %s", files[i]);
			rc = -1;
		}
		free(files[i]);
	}
	free(files);
	if (!rc && !job->nnodes) {
		snprintf(err, errlen, "none of the node files in %s can be merged", dir);
		rc = -1;
	}
	if (rc) {
		dc_job_close(job);
		return rc;
	}
	place_runs_in_time(job);
	set_origin(job);
	return 0;
}

void dc_job_close(struct dc_job *job)
{
	for (size_t i = 0; i < job->nnodes; i++) {
		struct dc_node *n = &job->nodes[i];

		dc_reader_close(n->r);
		free(n->path);
		dc_functable_free(&n->funcs);
		free(n->procs);
		dc_hashtab_free(n->proc_ids);
		free(n->stats);
		free(n->problem);
		free(n->skip_reason);
	}
	free(job->nodes);
	free(job->runs);
	free(job->id);
	memset(job, 0, sizeof(*job));
}

int dc_job_part(const struct dc_job *job, size_t node, struct dc_job *part)
{
	*part = *job;
	part->part = &job->nodes[node];
	part->runs = malloc((job->nruns + 1) * sizeof(*part->runs));
	part->nruns = 0;
	part->events = part->part->events;
	part->lost = part->part->lost;
	part->skipped = 0;
	if (!part->runs)
		return -1;
	for (size_t i = 0; i < job->nruns; i++)
		if (job->runs[i].node == part->part)
			part->runs[part->nruns++] = job->runs[i];
	return 0;
}

void dc_job_part_free(struct dc_job *part)
{
	free(part->runs);
	part->runs = NULL;
}

const char *dc_node_file_name(const struct dc_node *n)
{
	const char *slash = strrchr(n->path, '/');

	return slash ? slash + 1 : n->path;
}
