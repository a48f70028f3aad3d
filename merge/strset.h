/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A job's strings from every node, each once, by index: the writers'
 * interning table. The strings are not copied: they live in the readers. */
#ifndef DC_STRSET_H
#define DC_STRSET_H

#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"

struct dc_strings {
	const char **v;
	size_t n, cap;
	struct dc_hashtab *ids;
};

int dc_strings_init(struct dc_strings *s, size_t hint);
/* The index of str, added if new; UINT32_MAX when memory runs out. */
uint32_t dc_strings_intern(struct dc_strings *s, const char *str);
void dc_strings_free(struct dc_strings *s);

#endif
