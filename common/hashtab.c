// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "hashtab.h"

#include <stdlib.h>

struct slot {
	uint64_t k1, k2, val;
	bool used;
};

struct dc_hashtab {
	struct slot *slots;
	size_t cap; /* power of two */
	size_t size;
};

static uint64_t mix(uint64_t k1, uint64_t k2)
{
	uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h;
}

uint64_t dc_hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

struct dc_hashtab *dc_hashtab_new(size_t expected)
{
	struct dc_hashtab *h = calloc(1, sizeof(*h));
	size_t cap = 16;

	if (!h)
		return NULL;
	while (cap < expected * 2)
		cap <<= 1;
	h->slots = calloc(cap, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		return NULL;
	}
	h->cap = cap;
	return h;
}

void dc_hashtab_free(struct dc_hashtab *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h);
}

static struct slot *find(const struct dc_hashtab *h, uint64_t k1, uint64_t k2)
{
	size_t mask = h->cap - 1;

	for (size_t i = mix(k1, k2) & mask;; i = (i + 1) & mask) {
		struct slot *s = &h->slots[i];

		if (!s->used || (s->k1 == k1 && s->k2 == k2))
			return s;
	}
}

bool dc_hashtab_get(const struct dc_hashtab *h, uint64_t k1, uint64_t k2, uint64_t *val)
{
	struct slot *s = find(h, k1, k2);

	if (!s->used)
		return false;
	if (val)
		*val = s->val;
	return true;
}

static int grow(struct dc_hashtab *h)
{
	struct dc_hashtab bigger = { calloc(h->cap * 2, sizeof(struct slot)), h->cap * 2, 0 };

	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->slots[i].used) {
			*find(&bigger, h->slots[i].k1, h->slots[i].k2) = h->slots[i];
			bigger.size++;
		}
	}
	free(h->slots);
	*h = bigger;
	return 0;
}

int dc_hashtab_put(struct dc_hashtab *h, uint64_t k1, uint64_t k2, uint64_t val)
{
	struct slot *s;

	if ((h->size + 1) * 4 > h->cap * 3 && grow(h))
		return -1;
	s = find(h, k1, k2);
	if (!s->used) {
		*s = (struct slot){ k1, k2, val, true };
		h->size++;
	}
	s->val = val;
	return 0;
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
static void remove_at(struct dc_hashtab *h, size_t i)
{
	size_t mask = h->cap - 1;

	h->slots[i].used = false;
	h->size--;
	for (size_t j = (i + 1) & mask; h->slots[j].used; j = (j + 1) & mask) {
		size_t home = mix(h->slots[j].k1, h->slots[j].k2) & mask;

		/* Move j back into the hole unless its home lies between hole and j. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			h->slots[i] = h->slots[j];
			h->slots[j].used = false;
			i = j;
		}
	}
}

bool dc_hashtab_del(struct dc_hashtab *h, uint64_t k1, uint64_t k2)
{
	struct slot *s = find(h, k1, k2);

	if (!s->used)
		return false;
	remove_at(h, (size_t)(s - h->slots));
	return true;
}

void dc_hashtab_del_k1(struct dc_hashtab *h, uint64_t k1)
{
	for (size_t i = 0; i < h->cap;) {
		if (h->slots[i].used && h->slots[i].k1 == k1)
			remove_at(h, i); /* a later entry may have moved into i */
		else
			i++;
	}
}

size_t dc_hashtab_size(const struct dc_hashtab *h)
{
	return h->size;
}
