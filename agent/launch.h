/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Starting the traced command held at the gate until its probes are ready. */
#ifndef DC_LAUNCH_H
#define DC_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

struct dc_child {
	pid_t pid;
	int gate_fd; /* write end: one byte lets the child exec */
	int err_fd;  /* read end: end of file once the child has exec'd or given up */
	int *exec_errno; /* shared with the child: its exec's errno, 0 if it ran */
};

/* Forks a child that waits at the gate, then execs argv[0] from PATH. */
int dc_launch(char **argv, struct dc_child *c, char *err, size_t errlen);
/* Opens the gate: 0; 1 and a message when the command could not be
 * executed (the child then exits 127, and is still to be waited for); -1
 * and a message when the child could not be released. */
int dc_launch_release(struct dc_child *c, const char *name, char *err, size_t errlen);
/* Ends a child that is still at the gate. */
void dc_launch_abort(struct dc_child *c);

#endif
