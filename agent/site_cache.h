/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What decoding a library found (every branch target, pointer and symbol
 * start, probe_sites.c), kept between agent runs per build id, so that only
 * the first agent on a node pays the decode (0.2 s for libc here, 3 s in an
 * emulated guest). The cache is root's: a folder owned by the agent's user
 * and writable by no one else, files read without following links and
 * checked whole (sizes, order, CRC) before use; anything else is ignored.
 * A cached entry is of one build of one library and one version of the
 * rules below, so it never goes stale.
 */
#ifndef DC_SITE_CACHE_H
#define DC_SITE_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The default folder; --site-cache none turns the cache off. */
#define DC_SITE_CACHE_DIR "/var/cache/datacrumbs/sites"
/* Changes whenever what counts as a target does (probe_sites.c). 2: the
 * bytes decoded are the file's, never another agent's breakpoints. */
#define DC_SITE_CACHE_VERSION 2

/* The targets of the object with this build id and size, sorted and
 * distinct: 0 with *targets malloc'd, or -1 (none, or not to be trusted). */
int dc_site_cache_load(const char *dir, const char *build_id, uint64_t object_size, uint64_t **targets,
		       size_t *n);
/* Stores them; quietly does nothing where it cannot (not root, read-only). */
void dc_site_cache_store(const char *dir, const char *build_id, uint64_t object_size, const uint64_t *targets,
			 size_t n);

#endif
