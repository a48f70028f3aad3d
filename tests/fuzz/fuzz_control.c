// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer: any bytes as a control-socket message. */
#include <stdint.h>
#include <string.h>

#include "control_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dc_ctl_msg m;
	char why[128];

	if (dc_ctl_parse(data, size, &m, why, sizeof(why)) == 0) {
		/* Accepted: its strings are terminated and its rank in range. */
		if (strlen(m.job_id) >= sizeof(m.job_id) || m.rank < 0 || m.rank >= m.world_size)
			__builtin_trap();
	}
	return 0;
}
