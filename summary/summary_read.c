// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary's model of a job (summary.h) filled call by call, and its
 * reading of node files; summary_h5.c reads a merged HDF5 file into it.
 */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "io_kind.h"
#include "io_table.h"
#include "merge.h"
#include "nodeset.h"
#include "summary.h"

const uint64_t dc_summary_bin_limits[NBINS - 1] = { 100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
						    104857600, 1073741824 };
const char *const dc_summary_bin_names[NBINS] = { "0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M",
						  "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+" };

static void add(struct totals *t, uint64_t bytes, uint64_t dur)
{
	t->calls++;
	t->bytes += bytes;
	t->time_ns += dur;
	if (dur > t->max_ns)
		t->max_ns = dur;
}

static struct level_row *level_of(struct summary *s, const char *level)
{
	for (size_t i = 0; i < s->nlevels; i++)
		if (strcmp(s->levels[i].level, level) == 0)
			return &s->levels[i];
	struct level_row *v = realloc(s->levels, (s->nlevels + 1) * sizeof(*v));

	if (!v)
		return NULL;
	s->levels = v;
	memset(&v[s->nlevels], 0, sizeof(*v));
	v[s->nlevels].level = strdup(level);
	return &v[s->nlevels++];
}

/* Rows found by hash with a check of the strings, added when new. */
static struct fn_row *fn_of(struct summary *s, const char *level, const char *name)
{
	uint64_t h = dc_hash_string(name) * 31 + dc_hash_string(level), probe = 0, id;
	struct fn_row *v;

	while (dc_hashtab_get(s->fn_ids, h, probe, &id)) {
		if (!strcmp(s->fns[id].name, name) && !strcmp(s->fns[id].level, level))
			return &s->fns[id];
		probe++;
	}
	if (!(v = realloc(s->fns, (s->nfns + 1) * sizeof(*v))))
		return NULL;
	s->fns = v;
	v[s->nfns] = (struct fn_row){ strdup(level), strdup(name), (int)dc_io_kind(name), { 0 } };
	dc_hashtab_put(s->fn_ids, h, probe, s->nfns);
	return &v[s->nfns++];
}

static struct file_row *file_of(struct summary *s, const char *level, const char *path)
{
	uint64_t h = dc_hash_string(path) * 31 + dc_hash_string(level), probe = 0, id;
	struct file_row *v;

	while (dc_hashtab_get(s->file_ids, h, probe, &id)) {
		if (!strcmp(s->files[id].path, path) && !strcmp(s->files[id].level, level))
			return &s->files[id];
		probe++;
	}
	if (!(v = realloc(s->files, (s->nfiles + 1) * sizeof(*v))))
		return NULL;
	s->files = v;
	v[s->nfiles] = (struct file_row){ strdup(level), strdup(path), { 0 } };
	dc_hashtab_put(s->file_ids, h, probe, s->nfiles);
	return &v[s->nfiles++];
}

static int bin_of(uint64_t bytes)
{
	int b = 0;

	while (b < NBINS - 1 && bytes >= dc_summary_bin_limits[b])
		b++;
	return b;
}

/* Ranks are compared where all their I/O passes: system calls if traced
 * (every event observed at a system call: the syscall level and the libc
 * calls seen at their system call), else POSIX calls, else the first level. */
void dc_summary_consider_base_level(struct summary *s, const char *level)
{
	if (!s->base_level || !strcmp(level, "syscall") ||
	    (!strcmp(level, "posix") && strcmp(s->base_level, "syscall"))) {
		free(s->base_level);
		s->base_level = strdup(level);
	}
}

/* PROFILE mode: a process's final totals for one function. */
static void take_totals(struct summary *s, const char *level, const char *name, int rank,
			const struct dc_counter *c)
{
	struct fn_row *fr = fn_of(s, level, name);
	struct level_row *lr = level_of(s, level);
	struct totals add_t = { c->count, c->bytes, c->time_ns, 0 };
	int row = dc_summary_rank_row(s, rank);
	struct totals *ts[3] = { fr ? &fr->t : NULL, lr ? &lr->t : NULL, row >= 0 ? &s->ranks[row].t : NULL };

	for (int i = 0; i < 3; i++) {
		if (!ts[i])
			continue;
		ts[i]->calls += add_t.calls;
		ts[i]->bytes += add_t.bytes;
		ts[i]->time_ns += add_t.time_ns;
	}
	if (row >= 0)
		s->ranks[row].seen = true;
	if (fr && lr && fr->op)
		*(fr->op == 1 ? &lr->read_bytes : &lr->write_bytes) += c->bytes;
	s->job.counted += c->count;
}

/* The first bin's width; it doubles as the job goes on. */
#define TL_FIRST_BIN_NS 1000000ull

/* Halves the timeline's resolution: bin i takes bins 2i and 2i+1. */
static void tl_widen(struct summary *s)
{
	for (int r = 0; r <= s->nranks; r++)
		for (int op = 0; op < 2; op++) {
			uint64_t *v = s->tl[r][op];

			for (int i = 0; i < TL_BINS / 2; i++)
				v[i] = v[2 * i] + v[2 * i + 1];
			memset(v + TL_BINS / 2, 0, TL_BINS / 2 * sizeof(*v));
		}
	s->tl_bin_ns *= 2;
}

/* The timeline starts at the job's time origin (set before reading: a
 * stitched file holds one node's calls after another's, not in time order). */
static void tl_add(struct summary *s, uint64_t ts, int row, int op, uint64_t bytes)
{
	uint64_t rel;

	if (!s->tl_bin_ns)
		s->tl_bin_ns = TL_FIRST_BIN_NS;
	rel = ts > s->tl_origin_ns ? ts - s->tl_origin_ns : 0;
	while (rel / s->tl_bin_ns >= TL_BINS)
		tl_widen(s);
	s->tl[row >= 0 ? row : s->nranks][op - 1][rel / s->tl_bin_ns] += bytes;
}

int dc_summary_add_warning(struct summary *s, const char *host, const char *what)
{
	struct node_warning *v = realloc(s->warnings, (s->nwarnings + 1) * sizeof(*v));

	if (!v)
		return -1;
	s->warnings = v;
	v[s->nwarnings].host = strdup(host ? host : "?");
	v[s->nwarnings].what = strdup(what);
	return v[s->nwarnings++].what && v[s->nwarnings - 1].host ? 0 : -1;
}

/* One call, whatever file it was read from. */
/* A call's share of a file's totals: 0, or -1 when out of memory. */
static int add_to_file(struct summary *s, const char *level, const char *path, uint64_t bytes, uint64_t dur)
{
	struct file_row *file = file_of(s, level, path);

	if (!file)
		return -1;
	add(&file->t, bytes, dur);
	return 0;
}

int dc_summary_take(struct summary *s, const char *level, const char *name, const char *path, const char *path2,
		    int node, int rank, uint64_t ts, uint64_t bytes, uint64_t dur, unsigned flags)
{
	bool base = s->base_level && (strcmp(s->base_level, "syscall") == 0 ? (flags & DC_EV_SYSCALL) != 0
									   : strcmp(level, s->base_level) == 0);

	struct fn_row *fr = fn_of(s, level, name);
	struct level_row *lr = level_of(s, level);
	int row = dc_summary_rank_row(s, rank);

	if (!fr || !lr)
		return -1;
	add(&fr->t, bytes, dur);
	add(&lr->t, bytes, dur);
	if (fr->op) {
		lr->hist[fr->op - 1][bin_of(bytes)]++;
		*(fr->op == 1 ? &lr->read_bytes : &lr->write_bytes) += bytes;
	}
	/* A file's bytes are the data read or written in it: a directory
	 * listing's (getdents) or a readlink's count as calls, not as data.
	 * The file a mover's data came from counts them too: they were read
	 * there (a call that moves nothing counts on its own file only). */
	if ((path && *path && add_to_file(s, level, path, fr->op ? bytes : 0, dur)) ||
	    (path2 && *path2 && fr->op && add_to_file(s, level, path2, bytes, dur)))
		return -1;
	if (row >= 0 && base) {
		add(&s->ranks[row].t, bytes, dur);
		s->ranks[row].seen = true;
	}
	if (base && fr->op && s->io)
		dc_io_table_add(s->io, node, row, fr->op, bytes, dur);
	if (base && fr->op)
		tl_add(s, ts, row, fr->op, bytes);
	return 0;
}

static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

int dc_summary_start(struct summary *s, int *ranks, size_t n)
{
	size_t k = 0;

	qsort(ranks, n, sizeof(*ranks), by_int);
	for (size_t i = 0; i < n; i++)
		if (ranks[i] >= 0 && (!k || ranks[i] != ranks[k - 1]))
			ranks[k++] = ranks[i];
	s->nranks = (int)k;
	s->rank_ids = malloc((k + 1) * sizeof(*s->rank_ids));
	if (s->rank_ids)
		memcpy(s->rank_ids, ranks, k * sizeof(*ranks));
	s->ranks = calloc(k + 1, sizeof(*s->ranks));
	s->fn_ids = dc_hashtab_new(256);
	s->file_ids = dc_hashtab_new(1024);
	s->tl = calloc(k + 1, sizeof(*s->tl));
	return s->rank_ids && s->ranks && s->fn_ids && s->file_ids && s->tl ? 0 : -1;
}

int dc_summary_rank_row(const struct summary *s, int rank)
{
	int lo = 0, hi = s->nranks - 1;

	while (rank >= 0 && lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->rank_ids[mid] == rank)
			return mid;
		if (s->rank_ids[mid] < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* ---- from node files ---- */

static int take_event(struct summary *s, const struct dc_node *n, const struct dc_event *e, uint64_t wall_ns)
{
	const struct dc_func *f = dc_node_func(n, e->func);
	const struct dc_process *p = dc_node_process(n, e->pid);

	return dc_summary_take(s, f ? dc_reader_string(n->r, f->category) : "?", f ? dc_reader_string(n->r, f->name) : "?",
		    dc_reader_string(n->r, e->path), dc_reader_string(n->r, e->path2), n->index, p ? p->rank : -1, wall_ns,
		    e->bytes, e->dur, e->flags);
}

/* The last counter snapshot of each (node, pid, function). */
struct last_counters {
	struct last {
		const struct dc_node *node;
		struct dc_counter c;
	} *v;
	size_t n, cap;
	struct dc_hashtab *ids;
};

static int keep_counter(struct last_counters *l, const struct dc_node *n, const struct dc_counter *c)
{
	uint64_t k1 = (uint64_t)n->index << 32 | c->pid, idx;

	if (!l->ids && !(l->ids = dc_hashtab_new(256)))
		return -1;
	if (dc_hashtab_get(l->ids, k1, c->func, &idx)) {
		l->v[idx].c = *c;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct last *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct last){ n, *c };
	return dc_hashtab_put(l->ids, k1, c->func, l->n++);
}

int dc_summary_from_nodes(struct summary *s, const char *dir, const char *id)
{
	struct last_counters last = { 0 };
	struct dc_merge_item it;
	struct dc_merge *m;
	struct dc_job job;
	char err[PATH_MAX + 256];
	size_t nheld = 0;
	int *held, k = 0, rc;

	if (dc_job_open(dir, id, &job, err, sizeof(err))) {
		fprintf(stderr, "dc-summary: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < job.nnodes; i++)
		nheld += job.nodes[i].nprocs;
	held = malloc((nheld + 1) * sizeof(*held));
	nheld = 0;
	for (size_t i = 0; i < job.nnodes; i++) {
		const struct dc_node *n = &job.nodes[i];

		for (size_t p = 0; held && p < n->nprocs; p++)
			held[nheld++] = n->procs[p].rank;
		for (size_t f = 0; f < n->funcs.n; f++)
			if (dc_node_func(n, f))
				dc_summary_consider_base_level(s, dc_reader_string(n->r, n->funcs.v[f].category));
	}
	/* events: those read and counted below, not the index's claim. */
	s->job = (struct job_info){ .nnodes = job.nnodes, .ranks = job.ranks, .lost = job.lost,
				    .first_ns = job.first_ns, .last_ns = job.last_ns };
	snprintf(s->job.id, sizeof(s->job.id), "%s", job.id);
	s->tl_origin_ns = job.origin_ns;
	rc = held ? dc_summary_start(s, held, nheld) : -1;
	free(held);
	if (!rc && !(s->io = dc_io_table_new(job.nnodes, s->rank_ids, s->nranks)))
		rc = -1;
	for (size_t i = 0; !rc && i < job.nnodes; i++)
		rc = dc_io_table_host(s->io, i, job.nodes[i].hdr.hostname);
	m = rc ? NULL : dc_merge_new(&job);
	while (m && !rc && (k = dc_merge_next(m, &it)) > 0) {
		if (it.type == DC_CHUNK_EVENTS) {
			rc = take_event(s, it.node, it.rec, it.wall_ns);
			s->job.events++;
		} else if (it.type == DC_CHUNK_COUNTERS) {
			rc = keep_counter(&last, it.node, it.rec);
		}
	}
	/* PROFILE mode: each process's last totals are its whole. */
	for (size_t i = 0; !rc && i < last.n; i++) {
		const struct dc_node *n = last.v[i].node;
		const struct dc_func *f = dc_node_func(n, last.v[i].c.func);
		const struct dc_process *p = dc_node_process(n, last.v[i].c.pid);

		take_totals(s, f ? dc_reader_string(n->r, f->category) : "?", f ? dc_reader_string(n->r, f->name) : "?",
			    p ? p->rank : -1, &last.v[i].c);
	}
	free(last.v);
	dc_hashtab_free(last.ids);
	if (!m || k < 0)
		rc = -1;
	s->job.skipped = job.skipped;
	for (size_t i = 0; i < job.nnodes && !s->job.skip_reason[0]; i++)
		if (job.nodes[i].skip_reason)
			snprintf(s->job.skip_reason, sizeof(s->job.skip_reason), "%s", job.nodes[i].skip_reason);
	for (size_t i = 0; !rc && i < job.nnodes; i++) {
		const struct dc_node *n = &job.nodes[i];

		if (n->problem && dc_summary_add_warning(s, n->hdr.hostname, n->problem))
			rc = -1;
		if (n->skip_reason && dc_summary_add_warning(s, n->hdr.hostname, n->skip_reason))
			rc = -1;
	}
	dc_merge_free(m);
	dc_job_close(&job);
	return rc;
}

void dc_summary_free(struct summary *s)
{
	dc_io_table_free(s->io);
	for (size_t i = 0; i < s->nfns; i++) {
		free(s->fns[i].level);
		free(s->fns[i].name);
	}
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].level);
		free(s->files[i].path);
	}
	for (size_t i = 0; i < s->nlevels; i++)
		free(s->levels[i].level);
	free(s->fns);
	free(s->files);
	free(s->levels);
	free(s->ranks);
	free(s->rank_ids);
	dc_hashtab_free(s->fn_ids);
	dc_hashtab_free(s->file_ids);
	free(s->base_level);
	free(s->tl);
	for (size_t i = 0; i < s->nwarnings; i++) {
		free(s->warnings[i].host);
		free(s->warnings[i].what);
	}
	free(s->warnings);
}
