// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slice_ends.h"

#include <stdbool.h>
#include <stdlib.h>

static bool before(const struct dc_slice_end *a, const struct dc_slice_end *b)
{
	return a->ns < b->ns || (a->ns == b->ns && a->seq > b->seq); /* nested: the inner first */
}

int dc_slice_ends_push(struct dc_slice_ends *h, uint64_t ns, uint64_t track)
{
	struct dc_slice_end e = { ns, h->seq++, track };
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 2;
		struct dc_slice_end *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	/* A hole goes up to e's place, and e is written once. */
	for (i = h->n++; i && before(&e, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = e;
	return 0;
}

int dc_slice_ends_pop_by(struct dc_slice_ends *h, uint64_t ns, struct dc_slice_end *out)
{
	struct dc_slice_end last;
	size_t i = 0;

	if (!h->n || h->v[0].ns > ns)
		return 0;
	*out = h->v[0];
	last = h->v[--h->n];
	/* The last entry's place, found by a hole going down from the top. */
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m;

		if (l >= h->n)
			break;
		m = r < h->n && before(&h->v[r], &h->v[l]) ? r : l;
		if (!before(&h->v[m], &last))
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (h->n)
		h->v[i] = last;
	return 1;
}

void dc_slice_ends_free(struct dc_slice_ends *h)
{
	free(h->v);
	*h = (struct dc_slice_ends){ 0 };
}
