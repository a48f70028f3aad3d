/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An object's decoded code, inside the probe-site analysis: probe_sites.c
 * decodes it, site_choice.c chooses each function's site in it. */
#ifndef DC_PROBE_SITES_INT_H
#define DC_PROBE_SITES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <capstone/capstone.h>

/* Executable bytes of the object, in file-offset space. */
struct segment {
	unsigned long start, size;
};

struct dc_code {
	unsigned char *map;
	size_t map_len;
	struct segment *segs;
	size_t nsegs;
	uint64_t *targets; /* sorted file offsets some branch, pointer or symbol names */
	size_t ntargets, cap_targets;
	char build_id[41];
	csh cs;
};

/* Whether some branch, pointer or symbol target lies in (lo, hi]. */
bool dc_code_target_in(const struct dc_code *c, uint64_t lo, uint64_t hi);
/* The executable segment holding file offset off, or NULL. */
const struct segment *dc_code_segment(const struct dc_code *c, unsigned long off);

#endif
