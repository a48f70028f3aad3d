// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "protobuf.h"

#include <stdlib.h>

/* Called for every field of every packet: the common case is inline, a
 * buffer growing is not. */
void pb_grow(struct pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap * 2 : 256;

	while (cap < b->len + n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);

	if (!p) {
		b->oom = true;
		b->len = 0;
		return;
	}
	b->p = p;
	b->cap = cap;
}

