// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "strset.h"

#include <stdlib.h>
#include <string.h>

int dc_strings_init(struct dc_strings *s, size_t hint)
{
	*s = (struct dc_strings){ 0 };
	s->ids = dc_hashtab_new(hint);
	return s->ids ? 0 : -1;
}

uint32_t dc_strings_intern(struct dc_strings *s, const char *str)
{
	uint64_t h = dc_hash_string(str), probe = 0, id;

	while (dc_hashtab_get(s->ids, h, probe, &id)) {
		if (strcmp(s->v[id], str) == 0)
			return id;
		probe++;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		const char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = str;
	if (dc_hashtab_put(s->ids, h, probe, s->n))
		return UINT32_MAX;
	return s->n++;
}

void dc_strings_free(struct dc_strings *s)
{
	free(s->v);
	dc_hashtab_free(s->ids);
	*s = (struct dc_strings){ 0 };
}
