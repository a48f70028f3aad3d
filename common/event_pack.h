/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Events as a node file stores them (version 3): packed, about a fifth of
 * the 72-byte struct dc_event that the agent and every reader work with.
 * A traced job's node file grows by every event, and copying the bytes
 * into the page cache was half of the agent's CPU (perf, a traced write
 * loop): what is not written costs nothing.
 *
 * An EVENTS chunk's payload is its events in order, each fourteen LEB128
 * varints (7 bits a byte, low first, at most 10 bytes). Most are the
 * difference from the same field of the chunk's previous event (zero
 * before the first), zigzagged so that small steps of either sign are one
 * byte: a thread's next call, on the same CPU and file where the last one
 * ended, costs little more than its time, duration and size (a run of 4 KiB
 * writes: 17 bytes each).
 *
 *    1 ts - prev ts          zigzag      8 flags          plain
 *    2 dur                   plain       9 bytes          plain
 *    3 pid - prev pid        zigzag     10 req - bytes    zigzag
 *    4 tid - prev tid        zigzag     11 ret - bytes    zigzag
 *    5 func - prev func      zigzag     12 offset - (prev offset + prev bytes)  zigzag
 *    6 cpu - prev cpu        zigzag     13 fd - prev fd   zigzag
 *    7 depth                 plain      14 path - prev    zigzag
 *
 * Differences are taken modulo 2^64, so every value round-trips exactly.
 * A chunk is packed on its own: a reader may load any chunk alone.
 * Adding, dropping or reordering a field changes DC_NODE_VERSION.
 */
#ifndef DC_EVENT_PACK_H
#define DC_EVENT_PACK_H

#include <linux/types.h>
#include <stddef.h>

#include "dc_event.h"

#define DC_EVENT_PACK_FIELDS 14
/* The most bytes one packed event takes; the fewest is one per field. */
#define DC_EVENT_PACKED_MAX (DC_EVENT_PACK_FIELDS * 10)
#define DC_EVENT_PACKED_MIN DC_EVENT_PACK_FIELDS

/* Packs n events into out (room for n * DC_EVENT_PACKED_MAX bytes);
 * returns the bytes written. */
size_t dc_event_pack(const struct dc_event *ev, __u32 n, unsigned char *out);

/*
 * Unpacks exactly n events from the len bytes at p into out: 0, or -1 if
 * the bytes are not n packed events and nothing else (a varint that runs
 * past the end or over 10 bytes, a value too wide for its field, bytes
 * left over). The bytes are a node file's: anything may be in them.
 */
int dc_event_unpack(const unsigned char *p, size_t len, __u32 n, struct dc_event *out);

#endif
