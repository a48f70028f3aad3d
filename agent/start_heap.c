// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "start_heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE (2u << 20)
/* glibc's defaults (malloc(3), mallopt(3)): setting them again ends the
 * start's settings; the dynamic mmap threshold stays off, as any
 * mallopt leaves it. */
#define MALLOC_DEFAULT (128u << 10)

void dc_start_heap(void)
{
	uintptr_t from, to;
	void *p;

	mallopt(M_MMAP_THRESHOLD, DC_START_HEAP);
	mallopt(M_TRIM_THRESHOLD, 2 * DC_START_HEAP);
	mallopt(M_TOP_PAD, DC_START_HEAP);
	/* Grows the heap by the pad and more, untouched but for the chunk's
	 * header; freed, it stays as the heap's top (under the trim threshold). */
	p = malloc(DC_START_HEAP / 2);
	if (!p)
		return;
	from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	to = (uintptr_t)sbrk(0) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE);
	free(p);
}

void dc_start_heap_done(void)
{
	mallopt(M_TOP_PAD, MALLOC_DEFAULT);
	mallopt(M_TRIM_THRESHOLD, MALLOC_DEFAULT);
	mallopt(M_MMAP_THRESHOLD, MALLOC_DEFAULT);
}
