// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The control socket's wire protocol, and an agent-side socket under abuse. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "control.h"
#include "proc_check.h"
#include "register.h"

static struct dc_ctl_msg valid(void)
{
	struct dc_ctl_msg m;

	dc_register_fill(&m, DC_CTL_REGISTER, 2, 4);
	snprintf(m.job_id, sizeof(m.job_id), "job9");
	return m;
}

static void expect_refused(const struct dc_ctl_msg *m, size_t len, const char *why_part)
{
	struct dc_ctl_msg out;
	char why[128] = "";

	assert_int_equal(dc_ctl_parse(m, len, &out, why, sizeof(why)), -1);
	if (!strstr(why, why_part))
		fail_msg("got '%s', expected '%s'", why, why_part);
}

static void test_parse(void **state)
{
	struct dc_ctl_msg m = valid(), out, bad;
	char why[128], big[sizeof(m) + 16] = { 0 };

	assert_int_equal(dc_ctl_parse(&m, sizeof(m), &out, why, sizeof(why)), 0);
	assert_int_equal(out.rank, 2);
	assert_int_equal(out.pid, getpid());
	expect_refused(&m, sizeof(m) - 1, "too short");
	expect_refused(&m, 0, "too short");
	memcpy(big, &m, sizeof(m));
	expect_refused((const struct dc_ctl_msg *)big, sizeof(big), "too long");
	bad = m, bad.magic = 0x12345678;
	expect_refused(&bad, sizeof(bad), "bad magic");
	bad = m, bad.version = 9;
	expect_refused(&bad, sizeof(bad), "version");
	bad = m, bad.type = 77;
	expect_refused(&bad, sizeof(bad), "unknown message type");
	bad = m, bad.rank = 4;
	expect_refused(&bad, sizeof(bad), "out of range");
	bad = m, bad.rank = -1;
	expect_refused(&bad, sizeof(bad), "out of range");
	bad = m, bad.world_size = 0;
	expect_refused(&bad, sizeof(bad), "out of range");
	/* A preloaded process that is no rank: rank -1 of 0, a ring at its start only. */
	bad = m, bad.type = DC_CTL_PROCESS, bad.rank = -1, bad.world_size = 0, bad.flags = DC_CTL_FLAG_RING;
	assert_int_equal(dc_ctl_parse(&bad, sizeof(bad), &out, why, sizeof(why)), 0);
	bad.type = DC_CTL_EXIT;
	expect_refused(&bad, sizeof(bad), "a ring goes with a registration only");
	bad.flags = 0;
	assert_int_equal(dc_ctl_parse(&bad, sizeof(bad), &out, why, sizeof(why)), 0);
	bad.rank = 0, bad.world_size = 1;
	expect_refused(&bad, sizeof(bad), "rank -1 of 0");
	bad.type = DC_CTL_PROCESS;
	expect_refused(&bad, sizeof(bad), "rank -1 of 0");
	bad = m, bad.type = DC_CTL_EXIT + 1;
	expect_refused(&bad, sizeof(bad), "unknown message type");
	bad = m, bad.type = 0;
	expect_refused(&bad, sizeof(bad), "unknown message type");
	bad = m, memset(bad.hostname, 'x', sizeof(bad.hostname));
	expect_refused(&bad, sizeof(bad), "unterminated");
	bad = m, memset(bad.job_id, 'x', sizeof(bad.job_id));
	expect_refused(&bad, sizeof(bad), "unterminated");
}

static void test_socket_path(void **state)
{
	char p[108], want[108], host[65] = "";

	unsetenv("DC_AGENT_SOCKET");
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	snprintf(want, sizeof(want), "/run/datacrumbs/%s/1234.sock", host);
	assert_int_equal(dc_ctl_socket_path("1234", p, sizeof(p)), 0);
	assert_string_equal(p, want);
	assert_int_equal(dc_ctl_socket_path("", p, sizeof(p)), -1);
	assert_int_equal(dc_ctl_socket_path("../x", p, sizeof(p)), -1);
	setenv("DC_AGENT_SOCKET", "/tmp/x.sock", 1);
	assert_int_equal(dc_ctl_socket_path("", p, sizeof(p)), 0);
	assert_string_equal(p, "/tmp/x.sock");
	unsetenv("DC_AGENT_SOCKET");
}

/* ---- a live socket ---- */

static char sock[108] = "/tmp/dc-ctl-test.XXXXXX";
static int calls, last_rank;

static int last_fd_kind = -1; /* the fd the callback got: -1 none, else its F_GETFD */
static int last_pidfd_running = -1; /* whether the pidfd it got named a running process */

static int on_msg(void *ctx, const struct dc_ctl_msg *m, int ring_fd, int pidfd, char *why, size_t whylen,
		  char *note, size_t len)
{
	calls++;
	last_rank = m->rank;
	last_fd_kind = ring_fd >= 0 ? fcntl(ring_fd, F_GETFD) : -1;
	last_pidfd_running = pidfd >= 0 && dc_pidfd_running(pidfd);
	close(pidfd);
	if (ring_fd >= 0) {
		close(ring_fd);
		snprintf(note, len, "ok; took an fd");
	}
	return 0;
}

/* The client runs in a child (which puts its own pid in a message when
 * own_pid is set); the parent serves the connection. */
static int exchange_fd(struct dc_control *c, const void *msg, size_t len, int own_pid, int send_fd, char *answer,
		       size_t alen)
{
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		struct dc_ctl_reply r = { 0 };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		struct dc_ctl_msg copy;

		if (own_pid && len == sizeof(copy)) {
			memcpy(&copy, msg, sizeof(copy));
			copy.pid = getpid();
			msg = &copy;
		}
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || dc_send_with_fd(fd, msg, len, send_fd) < 0 ||
		    recv(fd, &r, sizeof(r), 0) != sizeof(r))
			_exit(2);
		r.message[sizeof(r.message) - 1] = 0;
		if (write(pipefd[1], r.message, strlen(r.message) + 1) < 0)
			_exit(3);
		_exit(r.status ? 1 : 0);
	}
	close(pipefd[1]);
	/* Served as the agent's loop serves it: again and again, never waiting. */
	for (int i = 0; i < 500; i++) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

		dc_control_serve(c);
		if (poll(&p, 1, 10) > 0)
			break;
	}
	n = read(pipefd[0], answer, alen - 1);
	answer[n > 0 ? n : 0] = 0;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WEXITSTATUS(status);
}

static int exchange(struct dc_control *c, const void *msg, size_t len, int own_pid, char *answer, size_t alen)
{
	return exchange_fd(c, msg, len, own_pid, -1, answer, alen);
}

static void test_live_socket(void **state)
{
	struct dc_control *c;
	struct dc_ctl_msg m;
	char err[256], answer[256], junk[4096];

	assert_non_null(mkdtemp(sock));
	strcat(sock, "/a.sock");
	c = dc_control_open(sock, getuid(), getgid(), "job9", on_msg, NULL, err, sizeof(err));
	assert_non_null(c);

	/* A child registering itself: its own pid, filled in the child. */
	m = valid();
	m.pid = 0; /* wrong on purpose: a process may register only itself */
	assert_int_equal(exchange(c, &m, sizeof(m), 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "may register only itself"));
	assert_int_equal(calls, 0);

	memset(junk, 0xab, sizeof(junk));
	assert_int_equal(exchange(c, junk, 10, 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "too short"));
	assert_int_equal(exchange(c, junk, sizeof(junk), 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "too long"));
	assert_int_equal(exchange(c, junk, sizeof(m), 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "bad magic"));
	m = valid();
	snprintf(m.job_id, sizeof(m.job_id), "another-job");
	assert_int_equal(exchange(c, &m, sizeof(m), 1, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "is not this agent's job job9"));
	assert_int_equal(calls, 0);

	/* The agent still serves a good client after all that. */
	m = valid();
	assert_int_equal(exchange(c, &m, sizeof(m), 1, answer, sizeof(answer)), 0);
	assert_string_equal(answer, "ok");
	assert_int_equal(calls, 1);
	assert_int_equal(last_rank, 2);
	assert_int_equal(last_fd_kind, -1);
	assert_int_equal(last_pidfd_running, 1);

	/* An fd the message does not announce, or an announced one missing:
	 * refused, the callback never called. */
	assert_int_equal(exchange_fd(c, &m, sizeof(m), 1, 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "an fd the message does not announce"));
	m.flags = DC_CTL_FLAG_RING;
	assert_int_equal(exchange(c, &m, sizeof(m), 1, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "the announced ring is missing"));
	m.type = DC_CTL_FINALIZE;
	assert_int_equal(exchange_fd(c, &m, sizeof(m), 1, 0, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "a ring goes with a registration only"));
	m.type = DC_CTL_REGISTER;
	m.flags = 0x80;
	assert_int_equal(exchange(c, &m, sizeof(m), 1, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "unknown flags"));
	assert_int_equal(calls, 1);
	/* Announced and sent: a shared-memory file is the callback's,
	 * close-on-exec; any other fd is closed off the loop, and the
	 * callback hears of no ring. */
	m.flags = DC_CTL_FLAG_RING;
	int mem = memfd_create("ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(mem >= 0);
	assert_int_equal(exchange_fd(c, &m, sizeof(m), 1, mem, answer, sizeof(answer)), 0);
	close(mem);
	assert_string_equal(answer, "ok; took an fd");
	assert_int_equal(calls, 2);
	assert_int_equal(last_fd_kind, FD_CLOEXEC);
	assert_int_equal(exchange_fd(c, &m, sizeof(m), 1, 0, answer, sizeof(answer)), 0);
	assert_string_equal(answer, "ok");
	assert_int_equal(calls, 3);
	assert_int_equal(last_fd_kind, -1);

	/* A job id with a newline and terminal escapes: quoted escaped. */
	m = valid();
	snprintf(m.job_id, sizeof(m.job_id), "x\ndc-agent: warning: forged\033]0;t\007\033[2J");
	assert_int_equal(exchange(c, &m, sizeof(m), 1, answer, sizeof(answer)), 1);
	assert_non_null(strstr(answer, "job 'x\\x0adc-agent: warning: forged\\x1b]0;t\\x07\\x1b[2J' is not this agent's job"));
	assert_null(strchr(answer, '\n'));
	assert_null(strchr(answer, '\033'));
	assert_int_equal(calls, 3);
	dc_control_close(c);
	unlink(sock);
	*strrchr(sock, '/') = 0;
	rmdir(sock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_socket_path),
		cmocka_unit_test(test_live_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
