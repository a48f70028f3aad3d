// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "chunk_pack.h"

#include <pthread.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Each worker keeps its deflate state and shuffle buffer for the whole
 * merge: allocating them per chunk cost page faults, and a thread per chunk
 * cost a TLB flush on every core when its stack was given back. */
struct worker {
	pthread_t thread;
	struct dc_packer *p;
	z_stream z;
	bool z_ok;
	unsigned char *shuffled;
	size_t shuffled_cap;
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

/*
 * HDF5's shuffle filter: byte k of every row, then byte k+1... Plane k is
 * kept at out + k * stride, stride a little over the row count: planes a
 * power of two apart would all fall in the same few cache sets.
 */
#define PLANE_PAD 64

/* Done a block of rows at a time so that the rows being read stay in cache. */
static void shuffle_bytes(const unsigned char *in, unsigned char *out, size_t stride, size_t size, size_t i0,
			  size_t i1, size_t k0)
{
	enum { BLOCK = 256 };

	for (; i0 < i1; i0 += BLOCK) {
		size_t m = i1 - i0 < BLOCK ? i1 - i0 : BLOCK;
		const unsigned char *block = in + i0 * size;

		for (size_t k = k0; k < size; k++) {
			unsigned char *o = out + k * stride + i0;
			const unsigned char *p = block + k;

			for (size_t i = 0; i < m; i++, p += size)
				o[i] = *p;
		}
	}
}

#ifdef __SSE2__
/*
 * Blocks of 16 rows by 16 bytes, transposed in registers: four rounds of
 * interleaving row i with row i + 8 turn rows into columns. A sixth of the
 * instructions of the byte loop; what is left is mostly the memory traffic
 * of reading a chunk and writing its planes.
 */
static void shuffle(const unsigned char *in, unsigned char *out, size_t n, size_t stride, size_t size)
{
	size_t whole = n / 16 * 16, cols = size / 16 * 16;

	for (size_t i0 = 0; i0 < whole; i0 += 16)
		for (size_t k = 0; k < cols; k += 16) {
			__m128i x[16], y[16];

			for (int r = 0; r < 16; r++)
				x[r] = _mm_loadu_si128((const __m128i *)(in + (i0 + r) * size + k));
			for (int round = 0; round < 4; round++) {
				for (int r = 0; r < 8; r++) {
					y[2 * r] = _mm_unpacklo_epi8(x[r], x[r + 8]);
					y[2 * r + 1] = _mm_unpackhi_epi8(x[r], x[r + 8]);
				}
				memcpy(x, y, sizeof(x));
			}
			for (int c = 0; c < 16; c++)
				_mm_storeu_si128((__m128i *)(out + (k + c) * stride + i0), x[c]);
		}
	shuffle_bytes(in, out, stride, size, 0, whole, cols); /* bytes past the last 16 */
	shuffle_bytes(in, out, stride, size, whole, n, 0);    /* rows past the last 16 */
}
#else
static void shuffle(const unsigned char *in, unsigned char *out, size_t n, size_t stride, size_t size)
{
	shuffle_bytes(in, out, stride, size, 0, n, 0);
}
#endif

/* Whether a shuffled plane is mostly runs of one byte, judged on its start:
 * it only picks the faster way to deflate it, never what the reader gets. */
static bool runs_of_one_byte(const unsigned char *plane, size_t n)
{
	size_t m = n < 1024 ? n : 1024, changes = 0;

	for (size_t i = 1; i < m; i++)
		changes += plane[i] != plane[i - 1];
	return changes * 4 < m;
}

/* Adler-32 of n bytes of value c: no need to read them. */
static uLong adler32_of_run(unsigned c, uint64_t n)
{
	const uint64_t base = 65521;
	uint64_t a = (1 + c * (n % base)) % base;
	uint64_t b = (n % base + c * ((n * (n + 1) / 2) % base)) % base;

	return (uLong)(b << 16 | a);
}

static uLong plane_adler32(const unsigned char *plane, size_t n)
{
	if (n > 1 && memcmp(plane, plane + 1, n - 1) == 0)
		return adler32_of_run(plane[0], n);
	return adler32(adler32(0, NULL, 0), plane, n);
}

/*
 * One zlib stream a chunk, as HDF5's deflate filter reads it: a raw deflate
 * stream between zlib's two-byte header and the Adler-32 of the shuffled
 * bytes. The checksum is taken here, plane by plane, because most planes
 * are one byte repeated, whose checksum is a formula: zlib would read
 * every byte of them for it.
 *
 * The strategy is chosen plane by plane too: run-length matches where a
 * field's byte rarely changes, Huffman codes alone where it changes all the
 * time (low bytes of times and sizes), which saves looking for runs that
 * are not there. A change of strategy ends a deflate block, which every
 * inflater reads as usual; one that cannot be made only leaves the stream
 * on the strategy it had.
 */
static int deflate_planes(z_stream *z, const unsigned char *shuffled, size_t nplanes, size_t n, size_t stride)
{
	static const unsigned char header[2] = { 0x78, 0x01 }; /* deflate, 32 KiB window, fastest */
	unsigned char *trailer;
	uLong check = adler32(0, NULL, 0);
	int current = Z_RLE;

	if (z->avail_out < sizeof(header) + 4 || deflateParams(z, 1, current) != Z_OK)
		return -1;
	memcpy(z->next_out, header, sizeof(header));
	z->next_out += sizeof(header);
	z->avail_out -= sizeof(header) + 4;
	for (size_t k = 0; k < nplanes; k++) {
		const unsigned char *plane = shuffled + k * stride;
		int want = runs_of_one_byte(plane, n) ? Z_RLE : Z_HUFFMAN_ONLY;
		int rc;

		if (want != current && deflateParams(z, 1, want) == Z_OK)
			current = want;
		check = adler32_combine(check, plane_adler32(plane, n), n);
		z->next_in = (unsigned char *)plane;
		z->avail_in = n;
		rc = deflate(z, k + 1 == nplanes ? Z_FINISH : Z_NO_FLUSH);
		if (rc != (k + 1 == nplanes ? Z_STREAM_END : Z_OK) || z->avail_in)
			return -1;
	}
	trailer = z->next_out;
	for (int i = 0; i < 4; i++)
		trailer[i] = check >> (24 - 8 * i);
	return 0;
}

static void pack(struct worker *w, struct dc_pack_job *j)
{
	size_t len = j->nrows * j->row_size, stride = j->nrows + PLANE_PAD;

	j->err = -1;
	if (!w->z_ok || !len || len > w->p->max_bytes || deflateReset(&w->z) != Z_OK)
		return;
	if (stride * j->row_size > w->shuffled_cap)
		stride = j->nrows;
	shuffle(j->rows, w->shuffled, j->nrows, stride, j->row_size);
	w->z.next_out = j->out;
	w->z.avail_out = j->out_cap;
	if (deflate_planes(&w->z, w->shuffled, j->row_size, j->nrows, stride))
		return;
	j->out_len = w->z.total_out + 6;
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
	w->shuffled_cap = p->max_bytes + 256 * PLANE_PAD; /* padding for rows of up to 256 bytes */
	w->shuffled = malloc(w->shuffled_cap);
	/* Level 1 without its hash search, raw: see deflate_planes. A memLevel
	 * of 7 halves the hash table that zlib slides every 32 KiB for nothing
	 * here. */
	w->z_ok = deflateInit2(&w->z, 1, Z_DEFLATED, -15, 7, Z_RLE) == Z_OK;
	return w->shuffled && w->z_ok ? 0 : -1;
}

/* zlib's bound for a stream of other than default settings (deflateBound),
 * and a stored block's header for each plane, which may end a block. */
size_t dc_pack_bound(size_t bytes, size_t row_size)
{
	return bytes + (bytes + 7) / 8 + (bytes + 63) / 64 + 11 + 5 * row_size;
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
