// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_child(char **argv, int gate, int *exec_errno)
{
	sigset_t none;
	char go;

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
	/* Said through memory, not a write: the child is traced by now, and
	 * a call of the agent's own would be charged to the command. */
	__atomic_store_n(exec_errno, errno, __ATOMIC_RELEASE);
	_exit(127);
}

int dc_launch(char **argv, struct dc_child *c, char *err, size_t errlen)
{
	int gate[2], report[2];

	c->exec_errno = mmap(NULL, sizeof(*c->exec_errno), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->exec_errno == MAP_FAILED) {
		c->exec_errno = NULL;
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
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
		run_child(argv, gate[0], c->exec_errno);
	}
	close(gate[0]);
	close(report[1]);
	c->gate_fd = gate[1];
	c->err_fd = report[0];
	return 0;
}

int dc_launch_release(struct dc_child *c, const char *name, char *err, size_t errlen)
{
	int child_errno;
	char b;
	ssize_t n;

	n = write(c->gate_fd, "g", 1);
	close(c->gate_fd);
	c->gate_fd = -1;
	if (n != 1) {
		snprintf(err, errlen, "cannot start %s: %s", name, strerror(errno));
		return -1;
	}
	/* End of file once the child has exec'd (the report end is
	 * close-on-exec) or given up (its errno in the shared page). */
	while ((n = read(c->err_fd, &b, 1)) < 0 && errno == EINTR)
		;
	close(c->err_fd);
	c->err_fd = -1;
	child_errno = __atomic_load_n(c->exec_errno, __ATOMIC_ACQUIRE);
	munmap(c->exec_errno, sizeof(*c->exec_errno));
	c->exec_errno = NULL;
	/* The child exits 127, as a shell's does: its exit is the trace's. */
	if (child_errno) {
		snprintf(err, errlen, "cannot run '%s': %s", name, strerror(child_errno));
		return 1;
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
	if (c->exec_errno)
		munmap(c->exec_errno, sizeof(*c->exec_errno));
	c->exec_errno = NULL;
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}
