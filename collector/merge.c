// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "merge.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
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
	__u32 pos;
};

#define MAX_SPARE 8
#define NO_RECORD UINT64_MAX

/*
 * A loser tree over k slots (k a power of two): tree[0] is the slot with the
 * earliest pending record, tree[1..k-1] the losers of each match. Taking a
 * record replays one leaf-to-root path, with no branch on the data: a heap
 * mispredicted about half its comparisons, and this merge does one per
 * record per level.
 */
struct dc_merge {
	struct dc_job *job;
	size_t next_run;   /* job->runs[next_run..] not read yet */
	struct active *slot;
	__u64 *key;        /* wall time of each slot's pending record, NO_RECORD if none */
	unsigned *tree;
	unsigned *free;    /* slots without a run */
	size_t k, nfree, peak;
	struct buffer spare[MAX_SPARE]; /* payload buffers to reuse */
	size_t nspare;
	struct buffer retired; /* of the run used up by the last call */
	unsigned long long done;
};

_Static_assert(offsetof(struct dc_event, ts) == 0 && offsetof(struct dc_counter, ts) == 0,
	       "records of both kinds start with their time");

static __u64 ts_at(const struct active *a)
{
	const char *rec = a->buf.data + (size_t)a->pos * a->run->hdr.rec_size;

	return *(const __u64 *)rec + a->run->node->clock_shift_ns;
}

static unsigned earliest(const struct dc_merge *m)
{
	return m->tree[0];
}

/* The slot w's key changed, and w was the winner: its path is replayed. */
static void replay(struct dc_merge *m, unsigned w)
{
	for (size_t p = (w + m->k) / 2; p > 0; p /= 2) {
		unsigned o = m->tree[p];
		int beaten = m->key[o] < m->key[w];

		m->tree[p] = beaten ? w : o;
		w = beaten ? o : w;
	}
	m->tree[0] = w;
}

/* Winner of the subtree at node; each inner node keeps its loser. */
static unsigned build(struct dc_merge *m, size_t node)
{
	unsigned a, b;

	if (node >= m->k)
		return node - m->k;
	a = build(m, 2 * node);
	b = build(m, 2 * node + 1);
	m->tree[node] = m->key[a] <= m->key[b] ? b : a;
	return m->key[a] <= m->key[b] ? a : b;
}

static void rebuild(struct dc_merge *m)
{
	m->tree[0] = build(m, 1);
}

/* Doubles the slots; the new ones are free. */
static int grow(struct dc_merge *m)
{
	size_t k = m->k ? m->k * 2 : 16;
	struct active *slot = realloc(m->slot, k * sizeof(*slot));
	__u64 *key = slot ? realloc(m->key, k * sizeof(*key)) : NULL;
	unsigned *tree = key ? realloc(m->tree, k * sizeof(*tree)) : NULL;
	unsigned *free_ = tree ? realloc(m->free, k * sizeof(*free_)) : NULL;

	if (slot)
		m->slot = slot;
	if (key)
		m->key = key;
	if (tree)
		m->tree = tree;
	if (!free_)
		return -1;
	m->free = free_;
	for (size_t i = k; i-- > m->k;) {
		m->slot[i] = (struct active){ 0 };
		m->key[i] = NO_RECORD;
		m->free[m->nfree++] = i;
	}
	m->k = k;
	rebuild(m);
	return 0;
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

/* Reads a run's chunk into a free slot; a bad chunk is skipped. */
static int activate(struct dc_merge *m, const struct dc_run *run)
{
	struct active a = { .run = run };
	enum dc_read_status st;
	unsigned s;

	if (!m->nfree && grow(m))
		return -1;
	if (take_buffer(m, &a.buf, run->hdr.payload_len))
		return -1;
	st = dc_reader_load(run->node->r, run->offset, &run->hdr, a.buf.data);
	if (st != DC_READ_OK || !run->hdr.count) {
		if (st != DC_READ_OK)
			fprintf(stderr, "%s: warning: %s; skipped\n", program_invocation_short_name,
				dc_reader_problem(run->node->r));
		give_buffer(m, a.buf);
		return 0;
	}
	s = m->free[--m->nfree];
	m->slot[s] = a;
	m->key[s] = ts_at(&a);
	/* A key that falls is not a replay: the few chunk starts rebuild. */
	rebuild(m);
	if (m->k - m->nfree > m->peak)
		m->peak = m->k - m->nfree;
	return 0;
}

struct dc_merge *dc_merge_new(struct dc_job *job)
{
	struct dc_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->job = job;
	if (grow(m)) {
		dc_merge_free(m);
		return NULL;
	}
	return m;
}

int dc_merge_next(struct dc_merge *m, struct dc_merge_item *it)
{
	struct active *top;
	unsigned w;

	/* The caller is done with the record that the last call returned. */
	if (m->retired.data) {
		give_buffer(m, m->retired);
		m->retired.data = NULL;
	}
	/* Every run that starts before the earliest pending record joins first. */
	while (m->next_run < m->job->nruns && m->job->runs[m->next_run].min_wall <= m->key[earliest(m)])
		if (activate(m, &m->job->runs[m->next_run++]))
			return -1;
	w = earliest(m);
	if (m->key[w] == NO_RECORD)
		return 0;
	top = &m->slot[w];
	it->node = top->run->node;
	it->type = top->run->hdr.type;
	it->rec = top->buf.data + (size_t)top->pos * top->run->hdr.rec_size;
	it->wall_ns = m->key[w];
	m->done++;
	if (++top->pos < top->run->hdr.count) {
		m->key[w] = ts_at(top);
	} else {
		/* Used up: its buffer still holds the record returned now. */
		m->retired = top->buf;
		*top = (struct active){ 0 };
		m->key[w] = NO_RECORD;
		m->free[m->nfree++] = w;
	}
	replay(m, w);
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
	for (size_t i = 0; i < m->k; i++)
		free(m->slot[i].buf.data);
	for (size_t i = 0; i < m->nspare; i++)
		free(m->spare[i].data);
	free(m->retired.data);
	free(m->slot);
	free(m->key);
	free(m->tree);
	free(m->free);
	free(m);
}
