// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * register_client SOCKET PID RANK WORLD [FILE]: sends a registration
 * claiming PID (0: this process) to an agent, as libdcpmpi.so would. Prints
 * the agent's answer; exit 0 when accepted, 1 when refused. With FILE: writes
 * 3 bytes to it one at a time before registering and 5 after, and prints its
 * pid after "accepted": a process the agent did not trace joins the job.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "register.h"

int main(int argc, char **argv)
{
	struct dc_ctl_msg m;
	char why[256];

	int fd = -1;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: register_client SOCKET PID RANK WORLD [FILE]\n");
		return 2;
	}
	if (argc == 6 && (fd = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
		perror(argv[5]);
		return 2;
	}
	for (int i = 0; fd >= 0 && i < 3; i++)
		if (write(fd, "b", 1) != 1)
			return 2;
	dc_register_fill(&m, DC_CTL_REGISTER, atoi(argv[3]), atoi(argv[4]));
	if (atoi(argv[2]))
		m.pid = atoi(argv[2]);
	if (dc_register_send(argv[1], &m, why, sizeof(why))) {
		printf("refused: %s\n", why);
		return 1;
	}
	if (fd < 0) {
		printf("accepted\n");
		return 0;
	}
	for (int i = 0; i < 5; i++)
		if (write(fd, "a", 1) != 1)
			return 2;
	close(fd);
	printf("accepted %d\n", (int)getpid());
	return 0;
}
