// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "chunk_pack.h"

#include <pthread.h>
#include <stdlib.h>
#include <zlib.h>

/* Each worker keeps its deflate state and shuffle buffer for the whole
 * merge: allocating them per chunk cost page faults, and a thread per chunk
 * cost a TLB flush on every core when its stack was given back. */
struct worker {
	pthread_t thread;
	struct dc_packer *p;
	z_stream z;
	bool z_ok;
	unsigned char *shuffled;
};

struct dc_packer {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct dc_pack_job *head, *tail;
	bool stop;
	size_t max_bytes;
	unsigned nworkers, nthreads;
	struct worker *w; /* w[0] packs in the caller when there are no threads */
};

/* HDF5's shuffle filter: byte k of every row, then byte k+1... done a block
 * of rows at a time so that the rows being read stay in cache. */
static void shuffle(const unsigned char *in, unsigned char *out, size_t n, size_t size)
{
	enum { BLOCK = 256 };

	for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
		size_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
		const unsigned char *block = in + i0 * size;

		for (size_t k = 0; k < size; k++) {
			unsigned char *o = out + k * n + i0;
			const unsigned char *p = block + k;

			for (size_t i = 0; i < m; i++, p += size)
				o[i] = *p;
		}
	}
}

/* Whether a shuffled plane is mostly runs of one byte, judged on its start:
 * it only picks the faster way to deflate it, never what the reader gets. */
static bool runs_of_one_byte(const unsigned char *plane, size_t n)
{
	size_t m = n < 1024 ? n : 1024, changes = 0;

	for (size_t i = 1; i < m; i++)
		changes += plane[i] != plane[i - 1];
	return changes * 4 < m;
}

/*
 * One deflate stream a chunk, its strategy chosen plane by plane: run-length
 * matches where a field's byte rarely changes, Huffman codes alone where it
 * changes all the time (low bytes of times and sizes), which saves looking
 * for runs that are not there. A change of strategy ends a deflate block,
 * which every inflater reads as usual; one that cannot be made only leaves
 * the stream on the strategy it had.
 */
static int deflate_planes(z_stream *z, const unsigned char *shuffled, size_t nplanes, size_t n)
{
	int current = Z_RLE;

	if (deflateParams(z, 1, current) != Z_OK)
		return -1;
	for (size_t k = 0; k < nplanes; k++) {
		const unsigned char *plane = shuffled + k * n;
		int want = runs_of_one_byte(plane, n) ? Z_RLE : Z_HUFFMAN_ONLY;
		int rc;

		if (want != current && deflateParams(z, 1, want) == Z_OK)
			current = want;
		z->next_in = (unsigned char *)plane;
		z->avail_in = n;
		rc = deflate(z, k + 1 == nplanes ? Z_FINISH : Z_NO_FLUSH);
		if (rc != (k + 1 == nplanes ? Z_STREAM_END : Z_OK) || z->avail_in)
			return -1;
	}
	return 0;
}

static void pack(struct worker *w, struct dc_pack_job *j)
{
	size_t len = j->nrows * j->row_size;

	j->err = -1;
	if (!w->z_ok || !len || len > w->p->max_bytes || deflateReset(&w->z) != Z_OK)
		return;
	shuffle(j->rows, w->shuffled, j->nrows, j->row_size);
	w->z.next_out = j->out;
	w->z.avail_out = j->out_cap;
	if (deflate_planes(&w->z, w->shuffled, j->row_size, j->nrows))
		return;
	j->out_len = w->z.total_out;
	j->err = 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct dc_packer *p = w->p;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct dc_pack_job *j;

		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (!p->head)
			break;
		j = p->head;
		p->head = j->next;
		pthread_mutex_unlock(&p->lock);
		pack(w, j);
		pthread_mutex_lock(&p->lock);
		j->done = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int worker_init(struct worker *w, struct dc_packer *p)
{
	w->p = p;
	w->shuffled = malloc(p->max_bytes ? p->max_bytes : 1);
	/* Level 1 without its hash search: see deflate_planes. A memLevel of 7
	 * halves the hash table that zlib slides every 32 KiB for nothing here. */
	w->z_ok = deflateInit2(&w->z, 1, Z_DEFLATED, 15, 7, Z_RLE) == Z_OK;
	return w->shuffled && w->z_ok ? 0 : -1;
}

size_t dc_pack_bound(size_t bytes)
{
	return compressBound(bytes);
}

struct dc_packer *dc_packer_new(unsigned threads, size_t max_bytes)
{
	struct dc_packer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->max_bytes = max_bytes;
	p->nworkers = threads ? threads : 1;
	p->w = calloc(p->nworkers, sizeof(*p->w));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	if (!p->w)
		goto fail;
	for (unsigned i = 0; i < p->nworkers; i++)
		if (worker_init(&p->w[i], p))
			goto fail;
	/* Fewer threads than asked for still work; none means packing inline. */
	while (p->nthreads < threads && pthread_create(&p->w[p->nthreads].thread, NULL, work, &p->w[p->nthreads]) == 0)
		p->nthreads++;
	return p;
fail:
	dc_packer_free(p);
	return NULL;
}

void dc_packer_submit(struct dc_packer *p, struct dc_pack_job *j)
{
	j->done = false;
	j->next = NULL;
	if (!p->nthreads) {
		pack(&p->w[0], j);
		j->done = true;
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (p->head)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void dc_packer_wait(struct dc_packer *p, struct dc_pack_job *j)
{
	pthread_mutex_lock(&p->lock);
	while (!j->done)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void dc_packer_free(struct dc_packer *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->w[i].thread, NULL);
	for (unsigned i = 0; p->w && i < p->nworkers; i++) {
		if (p->w[i].z_ok)
			deflateEnd(&p->w[i].z);
		free(p->w[i].shuffled);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p->w);
	free(p);
}
