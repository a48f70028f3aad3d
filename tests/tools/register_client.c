// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * register_client SOCKET PID RANK WORLD: sends a registration claiming PID
 * (0: this process) to an agent, as libdcpmpi.so would. Prints the agent's
 * answer; exit 0 when accepted, 1 when refused.
 */
#include <stdio.h>
#include <stdlib.h>

#include "register.h"

int main(int argc, char **argv)
{
	struct dc_ctl_msg m;
	char why[256];

	if (argc != 5) {
		fprintf(stderr, "usage: register_client SOCKET PID RANK WORLD\n");
		return 2;
	}
	dc_register_fill(&m, DC_CTL_REGISTER, atoi(argv[3]), atoi(argv[4]));
	if (atoi(argv[2]))
		m.pid = atoi(argv[2]);
	if (dc_register_send(argv[1], &m, why, sizeof(why))) {
		printf("refused: %s\n", why);
		return 1;
	}
	printf("accepted\n");
	return 0;
}
