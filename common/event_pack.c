// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Packing events for the node file (event_pack.h). */
#include "event_pack.h"

#include <stdbool.h>
#include <stdint.h>

static inline __u64 zigzag(__u64 d)
{
	return d << 1 ^ (__u64)((__s64)d >> 63);
}

static inline __u64 unzigzag(__u64 z)
{
	return z >> 1 ^ -(z & 1);
}

static inline unsigned char *put(unsigned char *p, __u64 v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* The difference of two fields, as a signed step modulo 2^64. */
static inline unsigned char *put_step(unsigned char *p, __u64 v, __u64 prev)
{
	return put(p, zigzag(v - prev));
}

size_t dc_event_pack(const struct dc_event *ev, __u32 n, unsigned char *out)
{
	struct dc_event prev = { 0 };
	unsigned char *p = out;

	for (__u32 i = 0; i < n; i++) {
		const struct dc_event *e = &ev[i];

		p = put_step(p, e->ts, prev.ts);
		p = put(p, e->dur);
		p = put_step(p, e->pid, prev.pid);
		p = put_step(p, e->tid, prev.tid);
		p = put_step(p, e->func, prev.func);
		p = put_step(p, e->cpu, prev.cpu);
		p = put(p, e->depth);
		p = put(p, e->flags);
		p = put(p, e->bytes);
		p = put_step(p, e->req, e->bytes);
		p = put_step(p, (__u64)e->ret, e->bytes);
		p = put_step(p, (__u64)e->offset, (__u64)prev.offset + prev.bytes);
		p = put_step(p, (__u64)(__s64)e->fd, (__u64)(__s64)prev.fd);
		p = put_step(p, e->path, prev.path);
		if (e->path2 == 0 && e->fd2 == -1) {
			p = put(p, 0);
		} else {
			p = put(p, (__u64)e->path2 + 1);
			p = put(p, zigzag((__u64)(__s64)e->fd2));
		}
		prev = *e;
	}
	return (size_t)(p - out);
}

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

/* A varint of more than one byte, or one cut short. */
static __attribute__((noinline)) __u64 get_long(struct cursor *c)
{
	__u64 v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		__u64 b;

		if (c->p == c->end)
			break;
		b = *c->p++;
		/* The tenth byte holds bit 63 only. */
		if (shift == 63 && b > 1)
			break;
		v |= (b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

/* Most fields take one or two bytes: those inline. */
static inline __u64 get(struct cursor *c)
{
	const unsigned char *p = c->p;

	if (c->end - p >= 2) {
		if (p[0] < 0x80) {
			c->p = p + 1;
			return p[0];
		}
		if (p[1] < 0x80) {
			c->p = p + 2;
			return (p[0] & 0x7fu) | (__u64)p[1] << 7;
		}
	}
	return get_long(c);
}

static inline __u64 get_step(struct cursor *c, __u64 prev)
{
	return prev + unzigzag(get(c));
}

/* A value for a field max wide: out of range marks the chunk bad. */
static inline __u64 fit(struct cursor *c, __u64 v, __u64 max)
{
	if (v > max)
		c->bad = true;
	return v;
}

/* The same for a signed 32-bit field, carried sign-extended. */
static inline __s32 fit_s32(struct cursor *c, __u64 v)
{
	if ((__s64)v < INT32_MIN || (__s64)v > INT32_MAX)
		c->bad = true;
	return (__s32)v;
}

int dc_event_unpack(const unsigned char *p, size_t len, __u32 n, unsigned version, struct dc_event *out)
{
	struct cursor c = { .p = p, .end = p + len };
	struct dc_event prev = { 0 };

	for (__u32 i = 0; i < n && !c.bad; i++) {
		struct dc_event *e = &out[i];

		e->ts = get_step(&c, prev.ts);
		e->dur = get(&c);
		e->pid = fit(&c, get_step(&c, prev.pid), UINT32_MAX);
		e->tid = fit(&c, get_step(&c, prev.tid), UINT32_MAX);
		e->func = fit(&c, get_step(&c, prev.func), UINT32_MAX);
		e->cpu = fit(&c, get_step(&c, prev.cpu), UINT16_MAX);
		e->depth = fit(&c, get(&c), UINT8_MAX);
		e->flags = fit(&c, get(&c), UINT8_MAX);
		e->bytes = get(&c);
		e->req = get_step(&c, e->bytes);
		e->ret = (__s64)get_step(&c, e->bytes);
		e->offset = (__s64)get_step(&c, (__u64)prev.offset + prev.bytes);
		e->fd = fit_s32(&c, get_step(&c, (__u64)(__s64)prev.fd));
		e->path = fit(&c, get_step(&c, prev.path), UINT32_MAX);
		e->fd2 = -1;
		e->path2 = 0;
		if (version >= 4) {
			__u64 second = get(&c);

			if (second) {
				e->path2 = fit(&c, second - 1, UINT32_MAX);
				e->fd2 = fit_s32(&c, unzigzag(get(&c)));
			}
		}
		prev = *e;
	}
	return c.bad || c.p != c.end ? -1 : 0;
}
