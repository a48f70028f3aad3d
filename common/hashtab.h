/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An open-addressing hash table from a pair of 64-bit keys to a 64-bit value. */
#ifndef DC_HASHTAB_H
#define DC_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dc_hashtab;

struct dc_hashtab *dc_hashtab_new(size_t expected);
void dc_hashtab_free(struct dc_hashtab *h);
bool dc_hashtab_get(const struct dc_hashtab *h, uint64_t k1, uint64_t k2, uint64_t *val);
/* Inserts or replaces. -1 only when memory runs out. */
int dc_hashtab_put(struct dc_hashtab *h, uint64_t k1, uint64_t k2, uint64_t val);
bool dc_hashtab_del(struct dc_hashtab *h, uint64_t k1, uint64_t k2);
size_t dc_hashtab_size(const struct dc_hashtab *h);
/* Removes every entry whose k1 matches. */
void dc_hashtab_del_k1(struct dc_hashtab *h, uint64_t k1);

uint64_t dc_hash_string(const char *s);

#endif
