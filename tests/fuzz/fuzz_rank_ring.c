// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer: any bytes as what a rank writes into its MPI-IO ring after the
 * agent took it (its head and its slots), read as the agent reads it.
 * Every record the reader hands out must be whole: a known function, a path
 * that ends where its length says, and never more records than slots.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wrapper_funcs.h"
#include "rank_ring.h"

#define SLOTS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[DC_PATH_MAX];
	struct dc_ring_reader *r;
	struct dc_ring_head *h;
	struct dc_ring_rec rec;
	size_t room;
	char why[160];
	int fd, n = 0;

	h = dc_ring_create(SLOTS, &fd);
	if (!h)
		return 0;
	r = dc_ring_reader_open(fd, why, sizeof(why));
	if (!r) {
		dc_ring_destroy(h);
		return 0;
	}
	dc_ring_reader_start(r, DC_RING_TRACE, &(struct dc_funcs){ .w = { ~0ull, ~0ull } });
	/* The rank's bytes: its head (8 bytes), then its slots. The geometry
	 * the agent copied at open stays as it was: changing it is the rank's
	 * business, checked on the agent's own copy. */
	room = SLOTS * DC_RING_SLOT_SIZE;
	if (size >= sizeof(h->head)) {
		memcpy((void *)&h->head, data, sizeof(h->head));
		data += sizeof(h->head);
		size -= sizeof(h->head);
	}
	memcpy((char *)h + DC_RING_HEAD_SIZE, data, size < room ? size : room);
	for (;;) {
		enum dc_ring_next got;
		__u64 end;

		/* What the agent asks before it takes a record: its answer only
		 * says when, and must not disturb the reading. */
		dc_ring_reader_peek_end(r, &end);
		dc_ring_reader_filling(r);
		got = dc_ring_reader_next(r, &rec, path);

		if (got != DC_RING_RECORD)
			break;
		if (rec.func >= DC_WRAPPER_NFUNCS || rec.path_len > DC_PATH_MAX ||
		    (rec.path_len && strlen(path) >= rec.path_len) || ++n > SLOTS)
			__builtin_trap();
	}
	dc_ring_reader_free(r);
	dc_ring_destroy(h);
	return 0;
}
