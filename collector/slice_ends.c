// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slice_ends.h"

#include <stdbool.h>
#include <stdlib.h>

static bool before(const struct dc_slice_end *a, const struct dc_slice_end *b)
{
	return a->ns < b->ns || (a->ns == b->ns && a->seq > b->seq); /* nested: the inner first */
}

static void swap(struct dc_slice_end *a, struct dc_slice_end *b)
{
	struct dc_slice_end t = *a;

	*a = *b;
	*b = t;
}

int dc_slice_ends_push(struct dc_slice_ends *h, uint64_t ns, uint64_t track)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct dc_slice_end *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	h->v[i] = (struct dc_slice_end){ ns, h->seq++, track };
	for (; i && before(&h->v[i], &h->v[(i - 1) / 2]); i = (i - 1) / 2)
		swap(&h->v[i], &h->v[(i - 1) / 2]);
	return 0;
}

int dc_slice_ends_pop_by(struct dc_slice_ends *h, uint64_t ns, struct dc_slice_end *out)
{
	size_t i = 0;

	if (!h->n || h->v[0].ns > ns)
		return 0;
	*out = h->v[0];
	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && before(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && before(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			return 1;
		swap(&h->v[i], &h->v[m]);
		i = m;
	}
}

void dc_slice_ends_free(struct dc_slice_ends *h)
{
	free(h->v);
	*h = (struct dc_slice_ends){ 0 };
}
