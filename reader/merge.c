// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buffer {
	char *data;
	size_t cap;
};

struct active {
	const struct dc_run *run;
	struct buffer buf;
	size_t rec_size; /* of its records as the reader hands them out */
	__u32 pos;
	__u64 wall; /* of the record at pos */
};

#define MAX_SPARE 8

struct dc_merge {
	struct dc_job *job;
	size_t next_run;       /* job->runs[next_run..] not read yet */
	struct active *heap;   /* min-heap on wall */
	size_t nheap, cap, peak;
	struct buffer spare[MAX_SPARE]; /* payload buffers to reuse */
	size_t nspare;
	struct buffer retired; /* of the run used up by the last call */
	unsigned long long done;
};

static __u64 ts_of(const struct dc_run *r, const char *rec)
{
	__u64 ts = r->hdr.type == DC_CHUNK_EVENTS ? ((const struct dc_event *)rec)->ts
						  : ((const struct dc_counter *)rec)->ts;

	return ts + r->node->clock_shift_ns;
}

static const char *record(const struct active *a)
{
	return a->buf.data + (size_t)a->pos * a->rec_size;
}

static void sift_up(struct dc_merge *m, size_t i)
{
	while (i) {
		size_t parent = (i - 1) / 2;
		struct active t;

		if (m->heap[parent].wall <= m->heap[i].wall)
			break;
		t = m->heap[parent];
		m->heap[parent] = m->heap[i];
		m->heap[i] = t;
		i = parent;
	}
}

/* The entry at i moved down to its place: a hole goes down and the entry
 * is written once, where swapping would copy each level's entry thrice. */
static void sift_down(struct dc_merge *m, size_t i)
{
	struct active t = m->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min;

		if (l >= m->nheap)
			break;
		min = r < m->nheap && m->heap[r].wall < m->heap[l].wall ? r : l;
		if (m->heap[min].wall >= t.wall)
			break;
		m->heap[i] = m->heap[min];
		i = min;
	}
	m->heap[i] = t;
}

static int take_buffer(struct dc_merge *m, struct buffer *b, size_t size)
{
	if (m->nspare) {
		*b = m->spare[--m->nspare];
		if (b->cap >= size)
			return 0;
		free(b->data);
	}
	b->data = malloc(size ? size : 1);
	b->cap = size;
	return b->data ? 0 : -1;
}

static void give_buffer(struct dc_merge *m, struct buffer b)
{
	if (m->nspare < MAX_SPARE)
		m->spare[m->nspare++] = b;
	else
		free(b.data);
}

/* Reads a run's chunk and puts it on the heap; a bad chunk is skipped. */
static int activate(struct dc_merge *m, const struct dc_run *run)
{
	struct active a = { .run = run, .rec_size = dc_chunk_rec_size(run->hdr.type) };
	enum dc_read_status st;

	if (m->nheap == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct active *v = realloc(m->heap, cap * sizeof(*v));

		if (!v)
			return -1;
		m->heap = v;
		m->cap = cap;
	}
	if (take_buffer(m, &a.buf, dc_chunk_data_size(&run->hdr)))
		return -1;
	st = dc_reader_load(run->node->r, run->offset, &run->hdr, a.buf.data);
	if (st != DC_READ_OK) {
		const char *why = dc_reader_problem(run->node->r);

		fprintf(stderr, "%s: warning: %s; skipped\n", program_invocation_short_name, why);
		/* Every output says what it left out, not only stderr. */
		if (run->hdr.type == DC_CHUNK_EVENTS) {
			run->node->skipped += run->hdr.count;
			m->job->skipped += run->hdr.count;
			if (!run->node->skip_reason)
				run->node->skip_reason = strdup(why);
		}
		give_buffer(m, a.buf);
		return 0;
	}
	a.wall = ts_of(run, a.buf.data);
	m->heap[m->nheap++] = a;
	sift_up(m, m->nheap - 1);
	if (m->nheap > m->peak)
		m->peak = m->nheap;
	return 0;
}

struct dc_merge *dc_merge_new(struct dc_job *job)
{
	struct dc_merge *m = calloc(1, sizeof(*m));

	if (m)
		m->job = job;
	return m;
}

int dc_merge_next(struct dc_merge *m, struct dc_merge_item *it)
{
	struct active *top;

	/* The caller is done with the record that the last call returned. */
	if (m->retired.data) {
		give_buffer(m, m->retired);
		m->retired.data = NULL;
	}
	/* Every run that starts before the earliest pending record joins first. */
	while (m->next_run < m->job->nruns &&
	       (!m->nheap || m->job->runs[m->next_run].min_wall <= m->heap[0].wall))
		if (activate(m, &m->job->runs[m->next_run++]))
			return -1;
	if (!m->nheap)
		return 0;
	top = &m->heap[0];
	it->node = top->run->node;
	it->type = top->run->hdr.type;
	it->rec = record(top);
	it->wall_ns = top->wall;
	m->done++;
	if (++top->pos < top->run->hdr.count) {
		/* Runs take turns, each a record at a time: too far apart for the
		 * hardware to fetch ahead on its own. */
		__builtin_prefetch(it->rec + 4 * top->rec_size);
		top->wall = ts_of(top->run, record(top));
		sift_down(m, 0);
		return 1;
	}
	/* Used up: its buffer still holds the record returned now. */
	m->retired = top->buf;
	m->heap[0] = m->heap[--m->nheap];
	sift_down(m, 0);
	return 1;
}

unsigned long long dc_merge_done(const struct dc_merge *m)
{
	return m->done;
}

size_t dc_merge_peak_chunks(const struct dc_merge *m)
{
	return m->peak;
}

void dc_merge_free(struct dc_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nheap; i++)
		free(m->heap[i].buf.data);
	for (size_t i = 0; i < m->nspare; i++)
		free(m->spare[i].data);
	free(m->retired.data);
	free(m->heap);
	free(m);
}
