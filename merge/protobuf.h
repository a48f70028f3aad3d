/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Protocol buffer encoding for dc-merge -f perfetto, by hand: a message
 * builder (struct pb) for the packets written a few times per trace
 * (descriptors, the clock, facts), and sizing and writing helpers for the
 * packets written once per call, which are sized field by field and then
 * written straight into the output buffer.
 */
#ifndef DC_PROTOBUF_H
#define DC_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pb {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/*
 * The hot path (a call's slice begin and end) does not build nested
 * messages and copy them into their parents: it sizes every field first,
 * then writes the packet straight into the output buffer.
 */
static inline unsigned vsize(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* A varint field, and a length-delimited field's key and length. */
static inline uint8_t *put_field(uint8_t *o, unsigned field, uint64_t v)
{
	return put_varint(put_varint(o, (uint64_t)field << 3), v);
}

static inline uint8_t *put_key_len(uint8_t *o, unsigned field, uint64_t n)
{
	return put_varint(put_varint(o, (uint64_t)field << 3 | 2), n);
}

static inline unsigned field_size(unsigned field, uint64_t v)
{
	return vsize((uint64_t)field << 3) + vsize(v);
}

static inline unsigned nested_size(unsigned field, uint64_t n)
{
	return vsize((uint64_t)field << 3 | 2) + vsize(n) + n;
}

/* Grows b for n more bytes; on failure sets oom and empties it. */
void pb_grow(struct pb *b, size_t n);

static inline __attribute__((always_inline)) void pb_room(struct pb *b, size_t n)
{
	if (b->len + n > b->cap)
		pb_grow(b, n);
}

static inline __attribute__((always_inline)) void pb_varint(struct pb *b, uint64_t v)
{
	pb_room(b, 10);
	if (!b->oom)
		b->len = put_varint(b->p + b->len, v) - b->p;
}

static inline void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static inline void pb_bytes(struct pb *b, unsigned field, const void *data, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_room(b, n);
	if (!b->oom) {
		memcpy(b->p + b->len, data, n);
		b->len += n;
	}
}

static inline void pb_str(struct pb *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static inline void pb_msg(struct pb *b, unsigned field, const struct pb *m)
{
	pb_bytes(b, field, m->p, m->len);
}

static inline void pb_reset(struct pb *b)
{
	b->len = 0;
}

#endif
