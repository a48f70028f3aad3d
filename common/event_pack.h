/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Events as a node file stores them (versions 3 and 4): packed, about a fifth of
 * the 80-byte struct dc_event that the agent and every reader work with.
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
 * writes: 18 bytes each, with version 4's byte for no second file).
 *
 *    1 ts - prev ts          zigzag      8 flags          plain
 *    2 dur                   plain       9 bytes          plain
 *    3 pid - prev pid        zigzag     10 req - bytes    zigzag
 *    4 tid - prev tid        zigzag     11 ret - bytes    zigzag
 *    5 func - prev func      zigzag     12 offset - (prev offset + prev bytes)  zigzag
 *    6 cpu - prev cpu        zigzag     13 fd - prev fd   zigzag
 *    7 depth                 plain      14 path - prev    zigzag
 *
 * Version 4 adds the second file: 0 for none (fd2 -1, path2 0), which most
 * calls have; else path2 + 1 (plain) and then fd2 (zigzag), not as steps.
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
/* The most bytes one packed event takes (version 4: the second file's
 * two); the fewest is one per field, 3's. */
#define DC_EVENT_PACKED_MAX ((DC_EVENT_PACK_FIELDS + 2) * 10)
#define DC_EVENT_PACKED_MIN DC_EVENT_PACK_FIELDS

/* Packs n events into out (room for n * DC_EVENT_PACKED_MAX bytes);
 * returns the bytes written. */
size_t dc_event_pack(const struct dc_event *ev, __u32 n, unsigned char *out);

/*
 * Unpacks exactly n events of a node file of version (3 or later) from the len bytes at p into out: 0, or -1 if
 * the bytes are not n packed events and nothing else (a varint that runs
 * past the end or over 10 bytes, a value too wide for its field, bytes
 * left over). The bytes are a node file's: anything may be in them.
 */
int dc_event_unpack(const unsigned char *p, size_t len, __u32 n, unsigned version, struct dc_event *out);

#endif
