/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A binary min-heap of indices into the caller's array, ordered by the
 * caller's before(ctx, a, b): the agent's merges of its rings keep the ring
 * whose next record comes first on top. Inline, so that a constant before()
 * is inlined into each caller's sift.
 */
#ifndef DC_INDEX_HEAP_H
#define DC_INDEX_HEAP_H

#include <linux/types.h>
#include <stdbool.h>

typedef bool (*dc_heap_before_fn)(const void *ctx, __u32 a, __u32 b);

/* Moves heap[i] down to where neither child comes before it. */
static inline void dc_heap_sift_down(__u32 *heap, __u32 n, __u32 i, dc_heap_before_fn before, const void *ctx)
{
	for (;;) {
		__u32 c = 2 * i + 1, m = i, t;

		if (c < n && before(ctx, heap[c], heap[m]))
			m = c;
		if (c + 1 < n && before(ctx, heap[c + 1], heap[m]))
			m = c + 1;
		if (m == i)
			return;
		t = heap[i], heap[i] = heap[m], heap[m] = t;
		i = m;
	}
}

/* Orders heap[0..n) as a heap. */
static inline void dc_heap_make(__u32 *heap, __u32 n, dc_heap_before_fn before, const void *ctx)
{
	for (__u32 i = n / 2; i-- > 0;)
		dc_heap_sift_down(heap, n, i, before, ctx);
}

#endif
