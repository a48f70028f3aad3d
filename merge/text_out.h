/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The text outputs' writing (json_writer.c's Chrome JSON, pfw_writer.c's
 * DFTracer lines): a buffer filled by hand-written formatting, handed to a
 * thread of its own that writes it (gzipped when asked), one buffer behind,
 * so the formatting does not wait on the kernel. Formatting by hand is most
 * of the work of a text merge; these helpers are that formatting.
 */
#ifndef DC_TEXT_OUT_H
#define DC_TEXT_OUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "escape.h"

#define OUT_BUF (1 << 20)

/* How the writing thread writes what it is handed. */
enum dc_out_codec {
	DC_OUT_PLAIN,
	DC_OUT_GZIP,
	/* Perfetto TracePackets, deflated in batches of whole packets, each
	 * batch one TracePacket of compressed_packets (pf_deflate.c). */
	DC_OUT_PERFETTO_DEFLATE,
};

struct sink {
	FILE *f;
	gzFile gz;
	struct dc_pf_deflater *pf; /* DC_OUT_PERFETTO_DEFLATE (pf_deflate.h), else NULL */
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *data; /* handed over and not written yet */
	size_t len;
	bool quit;
	int err;
};

struct text_out {
	struct sink out;
	char *bufs[2];
	size_t caps[2];
	char *buf; /* bufs[cur], being filled */
	int cur;
	size_t len;
	int err; /* an errno: the first failure */
};

/* Writes to a duplicate of fd (which stays the caller's), as codec says.
 * 0, or -1 with err. */
int dc_text_out_open(struct text_out *o, int fd, enum dc_out_codec codec, const char *path, char *err,
		     size_t errlen);
/* Writes what is left and closes; the first error's errno, 0 if none. */
int dc_text_out_close(struct text_out *o);
/* Hands the filled buffer to the writing thread. */
void dc_text_out_flush(struct text_out *o);
/*
 * Room for n more bytes at the end of the buffer being filled, where the
 * caller writes and then sets o->len: one check per record instead of one
 * per field. A record longer than a buffer (a path of megabytes) grows it.
 * NULL when memory runs out.
 */
static inline char *reserve(struct text_out *o, size_t n)
{
	if (o->len + n > o->caps[o->cur])
		dc_text_out_flush(o);
	if (n > o->caps[o->cur]) {
		char *b = realloc(o->bufs[o->cur], n);

		if (!b) {
			o->err = ENOMEM;
			return NULL;
		}
		o->buf = o->bufs[o->cur] = b;
		o->caps[o->cur] = n;
	}
	return o->buf + o->len;
}

static inline char *emit(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* A literal: its length is known, so the copy is a few moves. */
#define EMIT(o, lit) emit(o, lit, sizeof(lit) - 1)

static const char two_digits[] __attribute__((unused)) = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				 "8081828384858687888990919293949596979899";

static inline char *fmt_u64(char *o, uint64_t v)
{
	unsigned n = 1;
	char *end;

	for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
		n++;
	end = o + n;
	o = end;
	for (; v >= 100; v /= 100)
		o = memcpy(o - 2, two_digits + 2 * (v % 100), 2);
	if (v >= 10)
		memcpy(o - 2, two_digits + 2 * v, 2);
	else
		o[-1] = '0' + v;
	return end;
}

static inline char *fmt_i64(char *o, int64_t v)
{
	if (v >= 0)
		return fmt_u64(o, v);
	*o++ = '-';
	return fmt_u64(o, -(uint64_t)v);
}

/* Nanoseconds as microseconds with three decimals. */
static inline char *fmt_us(char *o, uint64_t ns)
{
	unsigned frac = ns % 1000;

	o = fmt_u64(o, ns / 1000);
	*o++ = '.';
	*o++ = '0' + frac / 100;
	return emit(o, two_digits + 2 * (frac % 100), 2);
}

#define NUM_MAX 24 /* a formatted number, sign and decimals included */

static inline void put(struct text_out *w, const char *s, size_t n)
{
	char *o = reserve(w, n);

	if (o)
		w->len = emit(o, s, n) - w->buf;
}

#define PUT(w, lit) put(w, lit, sizeof(lit) - 1)

static inline void put_u64(struct text_out *w, uint64_t v)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_u64(o, v) - w->buf;
}

static inline void put_i64(struct text_out *w, int64_t v)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_i64(o, v) - w->buf;
}

static inline void put_us(struct text_out *w, uint64_t ns)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_us(o, ns) - w->buf;
}

static inline void put_escaped(struct text_out *w, const char *s)
{
	char *e = dc_json_escaped(s);

	if (!e) {
		w->err = ENOMEM;
		return;
	}
	put(w, e, strlen(e));
	free(e);
}

#endif
