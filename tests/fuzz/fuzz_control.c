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
		/* Accepted: its strings are terminated; a rank's message has its
		 * rank in range, any other message says rank -1 of 0. */
		int in_range = DC_CTL_OF_RANK(m.type) ? m.rank >= 0 && m.rank < m.world_size
						      : m.rank == -1 && m.world_size == 0;
		if (strlen(m.job_id) >= sizeof(m.job_id) || !in_range)
			__builtin_trap();
	}
	return 0;
}
