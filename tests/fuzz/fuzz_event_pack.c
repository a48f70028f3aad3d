// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer: any bytes as packed events (a node file's EVENTS payload,
 * which the node-file fuzzer rarely reaches past its checksums). The first
 * byte is the count, its top bit picks version 3 or 4; what unpacks packs
 * again (as version 4) to the same events. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event_pack.h"

#define MAX_EVENTS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dc_event ev[MAX_EVENTS], again[MAX_EVENTS];
	static unsigned char packed[MAX_EVENTS * DC_EVENT_PACKED_MAX];
	__u32 n;
	size_t len;

	if (size < 1)
		return 0;
	n = data[0] & 0x7f;
	if (dc_event_unpack(data + 1, size - 1, n, data[0] & 0x80 ? 4 : 3, ev))
		return 0;
	len = dc_event_pack(ev, n, packed);
	/* Version 3's events gain one byte each: no second file. */
	if (len > size - 1 + (data[0] & 0x80 ? 0 : n) || dc_event_unpack(packed, len, n, 4, again) ||
	    memcmp(ev, again, n * sizeof(*ev)))
		abort();
	return 0;
}
