// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rings are read through their mappings as the kernel lays them out
 * (include/uapi/linux/bpf.h, BPF_RINGBUF_*): a consumer page the reader
 * writes its position to, a producer page, then the data pages mapped
 * twice over, so that a record that wraps is whole. Each record: an 8-byte
 * header (its length, a busy bit while its writer holds it, a discard bit),
 * its bytes, padding to 8. libbpf's reader hands on every record as it
 * reads it; this one looks at every ring's head before it takes one.
 */
#include "event_rings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "clock.h"
#include "dc_event.h"
#include "index_heap.h"

struct ring {
	int fd;
	unsigned long *consumer; /* the page the kernel reads our position from */
	const unsigned long *producer;
	const char *data;
	size_t mapped; /* the producer page and the data, twice */
	unsigned long mask;
	unsigned long pos, end; /* this round: the next record, the producer's position */
	__u64 head;             /* the time of the record at pos */
};

struct dc_event_rings {
	struct ring *rings;
	__u32 n;
	size_t page;
	__u32 *heap; /* rings with a record waiting, oldest head first */
	__u32 nheap;
	__u64 (*time_of)(const void *data, size_t len);
	dc_event_fn handle;
	void *ctx;
	__u64 newest;
	unsigned long long late;
};

void dc_event_rings_size(int ringbuf_mb, int ncpus, __u32 *nrings, __u32 *bytes)
{
	__u64 total = (__u64)(ringbuf_mb > 0 ? ringbuf_mb : 1) << 20, each;
	__u32 n = ncpus > 0 ? (ncpus < DC_MAX_RINGS ? ncpus : DC_MAX_RINGS) : 1;

	/* A ring's size is a power of two: the largest share that fits. */
	for (each = DC_RING_MIN_BYTES; each * 2 * n <= total; each *= 2)
		;
	*nrings = n;
	*bytes = (__u32)each;
}

static int map_ring(struct ring *g, __u32 bytes, size_t page)
{
	void *p;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	g->consumer = p;
	g->mapped = page + 2 * (size_t)bytes;
	p = mmap(NULL, g->mapped, PROT_READ, MAP_SHARED, g->fd, page);
	if (p == MAP_FAILED) {
		g->mapped = 0;
		return -errno;
	}
	g->producer = p;
	g->data = (const char *)p + page;
	g->mask = bytes - 1;
	return 0;
}

void dc_event_rings_free(struct dc_event_rings *r)
{
	if (!r)
		return;
	for (__u32 i = 0; i < r->n; i++) {
		struct ring *g = &r->rings[i];

		if (g->consumer)
			munmap(g->consumer, r->page);
		if (g->mapped)
			munmap((void *)g->producer, g->mapped);
		if (g->fd > 0)
			close(g->fd);
	}
	free(r->rings);
	free(r->heap);
	free(r);
}

struct dc_event_rings *dc_event_rings_new(int outer_fd, __u32 nrings, __u32 bytes,
					  __u64 (*time_of)(const void *data, size_t len), dc_event_fn handle,
					  void *ctx, char *err, size_t errlen)
{
	struct dc_event_rings *r = calloc(1, sizeof(*r));

	if (!r || !(r->rings = calloc(nrings, sizeof(*r->rings))) || !(r->heap = calloc(nrings, sizeof(*r->heap)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->time_of = time_of;
	r->handle = handle;
	r->ctx = ctx;
	for (__u32 i = 0; i < nrings; i++) {
		struct ring *g = &r->rings[i];
		int e;

		r->n = i + 1;
		g->fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "dc_ring", 0, 0, bytes, NULL);
		if (g->fd < 0) {
			snprintf(err, errlen, "cannot create ring buffer %u of %u (%u KiB): %s; lower --ringbuf-mb", i,
				 nrings, bytes >> 10, strerror(errno));
			goto fail;
		}
		if ((e = map_ring(g, bytes, r->page))) {
			snprintf(err, errlen, "cannot map ring buffer %u: %s", i, strerror(-e));
			goto fail;
		}
		if (bpf_map_update_elem(outer_fd, &i, &g->fd, BPF_ANY)) {
			snprintf(err, errlen, "cannot place ring buffer %u: %s", i, strerror(errno));
			goto fail;
		}
	}
	return r;
fail:
	dc_event_rings_free(r);
	return NULL;
}

int dc_event_rings_watch(struct dc_event_rings *r, int epfd)
{
	/*
	 * Edge-triggered: the BPF side wakes the agent only past a high-water
	 * mark (BPF_RB_FORCE_WAKEUP), and level-triggered readiness ("any data
	 * at all") would have the loop spin on every few records under load:
	 * 55,848 wake-ups a second and 1.1 us of the agent's CPU an event on
	 * 1-byte writes. Otherwise it wakes on its timer.
	 */
	for (__u32 i = 0; i < r->n; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = r->rings[i].fd };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, r->rings[i].fd, &ev))
			return -errno;
	}
	return 0;
}

/* The record at g->pos, skipping discarded ones: 1 with its time in
 * g->head, 0 if none is whole yet. */
static int peek(struct dc_event_rings *r, struct ring *g)
{
	while (g->pos < g->end) {
		const __u32 *hdr = (const __u32 *)(g->data + (g->pos & g->mask));
		__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			return 0; /* its writer still holds it */
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			g->head = r->time_of(hdr + 2, len);
			return 1;
		}
		g->pos += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
		__atomic_store_n(g->consumer, g->pos, __ATOMIC_RELEASE);
	}
	return 0;
}

/* The heap of ring indices by their head's time (ties: lower ring). */
static bool older(const void *ctx, __u32 a, __u32 b)
{
	const struct dc_event_rings *r = ctx;
	__u64 x = r->rings[a].head, y = r->rings[b].head;

	return x < y || (x == y && a < b);
}

static void take(struct dc_event_rings *r, struct ring *g)
{
	const __u32 *hdr = (const __u32 *)(g->data + (g->pos & g->mask));
	__u32 len = *hdr & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);

	/* A ring's own order broken: handed on as it came, and counted. */
	if (g->head < r->newest)
		r->late++;
	else
		r->newest = g->head;
	r->handle(r->ctx, (void *)(hdr + 2), len, g->head);
	g->pos += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
	/* Its space back to the kernel at once: a full ring loses records. */
	__atomic_store_n(g->consumer, g->pos, __ATOMIC_RELEASE);
}

long dc_event_rings_consume(struct dc_event_rings *r, bool all, unsigned max)
{
	/* Taken before any ring is read: a record older than upto that is not
	 * in its ring yet is still being written, at most the slack. */
	__u64 now = dc_now_ns(CLOCK_MONOTONIC), upto = all ? ~0ull : now - DC_RING_SLACK_NS;
	long taken = 0;

	r->nheap = 0;
	for (__u32 i = 0; i < r->n; i++) {
		struct ring *g = &r->rings[i];

		g->pos = __atomic_load_n(g->consumer, __ATOMIC_ACQUIRE);
		g->end = __atomic_load_n(g->producer, __ATOMIC_ACQUIRE);
		/* A ring past its wake-up mark within the slack (a busy CPU):
		 * everything goes now, lest the ring lose records; one still in
		 * the making elsewhere will be late. */
		if (g->end - g->pos >= (g->mask + 1) / DC_RING_WAKE_SHARE)
			upto = ~0ull;
		if (peek(r, g))
			r->heap[r->nheap++] = i;
	}
	dc_heap_make(r->heap, r->nheap, older, r);
	while (r->nheap && (all || (unsigned long)taken < max)) {
		struct ring *g = &r->rings[r->heap[0]];

		if (g->head > upto)
			break;
		take(r, g);
		taken++;
		if (!peek(r, g))
			r->heap[0] = r->heap[--r->nheap];
		dc_heap_sift_down(r->heap, r->nheap, 0, older, r);
	}
	return taken;
}

unsigned long long dc_event_rings_late(const struct dc_event_rings *r)
{
	return r->late;
}
