// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_child(char **argv, int gate, int report)
{
	sigset_t none;
	char go;
	int e;

	/* The agent handles (or ignores) these; the command gets the defaults. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(gate, &go, 1) != 1)
		_exit(127); /* the agent gave up before releasing us */
	/* The gate is close-on-exec: a close here, traced already, would be
	 * charged to the command as its first call. */
	execvp(argv[0], argv);
	e = errno;
	if (write(report, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int dc_launch(char **argv, struct dc_child *c, char *err, size_t errlen)
{
	int gate[2], report[2];

	if (pipe2(gate, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (c->pid == 0) {
		close(gate[1]);
		close(report[0]);
		run_child(argv, gate[0], report[1]);
	}
	close(gate[0]);
	close(report[1]);
	c->child_fds[0] = gate[0];
	c->child_fds[1] = report[1];
	c->gate_fd = gate[1];
	c->err_fd = report[0];
	return 0;
}

int dc_launch_release(struct dc_child *c, const char *name, char *err, size_t errlen)
{
	int child_errno;
	ssize_t n;

	n = write(c->gate_fd, "g", 1);
	close(c->gate_fd);
	c->gate_fd = -1;
	if (n != 1) {
		snprintf(err, errlen, "cannot start %s: %s", name, strerror(errno));
		return -1;
	}
	n = read(c->err_fd, &child_errno, sizeof(child_errno));
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(child_errno)) {
		snprintf(err, errlen, "cannot run '%s': %s", name, strerror(child_errno));
		waitpid(c->pid, NULL, 0);
		return -1;
	}
	return 0;
}

void dc_launch_abort(struct dc_child *c)
{
	if (c->pid <= 0)
		return;
	if (c->gate_fd >= 0)
		close(c->gate_fd); /* the child reads EOF and exits */
	if (c->err_fd >= 0)
		close(c->err_fd);
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}
