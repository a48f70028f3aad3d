// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "escape.h"
#include "fd_closer.h"
#include "proc_check.h"

/*
 * A client sends as soon as it connects; one that does not is dropped after
 * CLIENT_WAIT_MS. No client is ever waited for: silent ones are kept (at
 * most MAX_CLIENTS, the oldest let go first) and looked at again when they
 * speak or the agent's loop comes round, so that a flood of connections
 * never holds the ring buffer's draining, signals or other registrations.
 */
#define CLIENT_WAIT_MS 100
#define MAX_CLIENTS 64
#define ACCEPT_PER_SERVE 64

struct client {
	int fd;
	__u64 deadline; /* CLOCK_MONOTONIC ns */
};

struct dc_control {
	int fd;
	int epfd; /* the socket and the clients waited for */
	struct client clients[MAX_CLIENTS];
	int nclients;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uid_t uid;
	char job_id[64];
	dc_control_fn fn;
	void *ctx;
	unsigned long refused;
};

/* The socket's folder and its parents, as mkdir -p makes them. */
static int make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* Only a socket left by an earlier agent is removed, never another file. */
static int remove_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	return unlink(path);
}

/* The lock beside the socket: PATH.lock. */
static int lock_path(const char *path, char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s.lock", path) < len ? 0 : -1;
}

int dc_control_claim(const char *path, char *err, size_t errlen)
{
	char lock[PATH_MAX];

	if (lock_path(path, lock, sizeof(lock)) || make_dir(path)) {
		snprintf(err, errlen, "cannot prepare control socket %s: %s", path, strerror(errno));
		return -1;
	}
	for (int tries = 0; tries < 10; tries++) {
		struct stat held, named;
		char pid[32] = "";
		int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0) {
			snprintf(err, errlen, "cannot create %s: %s", lock, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

			pid[n > 0 ? n : 0] = 0;
			pid[strcspn(pid, "\n")] = 0;
			snprintf(err, errlen,
				 "another dc-agent (pid %s) already serves this job on this node at %s: stop it first, "
				 "or give this one another job id (-j) or control socket (--socket)",
				 *pid ? pid : "?", path);
			close(fd);
			return -1;
		}
		/* The lock counts only if the file is still the one at the name:
		 * the agent before may have removed it after we opened it. */
		if (fstat(fd, &held) == 0 && lstat(lock, &named) == 0 && held.st_ino == named.st_ino &&
		    held.st_dev == named.st_dev) {
			int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

			/* The pid is for other agents' messages only: a failure is harmless. */
			if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, len, 0) != len)
				pid[0] = 0;
			return fd;
		}
		close(fd);
	}
	snprintf(err, errlen, "cannot lock %s: it keeps changing", lock);
	return -1;
}

void dc_control_release(const char *path, int lock_fd)
{
	char lock[PATH_MAX];

	if (lock_fd < 0)
		return;
	/* Removed while still held, so no later agent locks a removed file. */
	if (lock_path(path, lock, sizeof(lock)) == 0)
		unlink(lock);
	close(lock_fd);
}

struct dc_control *dc_control_open(const char *path, uid_t uid, gid_t gid, const char *job_id,
				   dc_control_fn fn, void *ctx, char *err, size_t errlen)
{
	struct dc_control *c = calloc(1, sizeof(*c));
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old_mask;
	int rc;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->fd = c->epfd = -1;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "control socket path too long: %s", path);
		goto fail;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	snprintf(c->job_id, sizeof(c->job_id), "%s", job_id);
	c->uid = uid;
	c->fn = fn;
	c->ctx = ctx;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || make_dir(path) || remove_stale(path)) {
		snprintf(err, errlen, "cannot create control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Created 0600 by bind itself: no chmod by name afterwards. */
	old_mask = umask(0177);
	rc = bind(c->fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	if (rc) {
		snprintf(err, errlen, "cannot create control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	/* The job's user may connect; SO_PEERCRED then says who did. The owner
	 * is changed without following a link that might have been swapped in. */
	if (fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW) || listen(c->fd, 128) ||
	    (c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->fd, &(struct epoll_event){ .events = EPOLLIN, .data.fd = c->fd })) {
		snprintf(err, errlen, "cannot set up control socket %s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	return c;
fail:
	if (c->fd >= 0)
		close(c->fd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c);
	return NULL;
}

int dc_control_fd(const struct dc_control *c)
{
	return c->epfd;
}

static void reply(int fd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reply(int fd, int status, const char *fmt, ...)
{
	struct dc_ctl_reply r = { .magic = DC_CTL_MAGIC, .status = status };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r.message, sizeof(r.message), fmt, ap);
	va_end(ap);
	if (send(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return; /* the client left: nothing to tell */
}

/*
 * Why a well-formed message is refused, or 0. The sender must be a process
 * that runs now with the job user's credentials alone (*pidfd then names
 * it, else -1): a pid that connected and exited, whose number another
 * process may get, or a process that gained privileges, is never traced.
 */
static int check_sender(struct dc_control *c, int fd, const struct dc_ctl_msg *m, const struct ucred *cred,
			int *pidfd, char *why, size_t len)
{
	*pidfd = -1;
	if ((pid_t)m->pid != cred->pid) {
		snprintf(why, len, "pid %d may register only itself, not pid %u", cred->pid, m->pid);
		return EPERM;
	}
	if (cred->uid != c->uid) {
		snprintf(why, len, "uid %u is not the job's user (uid %u)", cred->uid, c->uid);
		return EACCES;
	}
	if (m->job_id[0] && strcmp(m->job_id, c->job_id) != 0) {
		/* The client's bytes: escaped before any log or terminal sees them. */
		char *theirs = dc_text_escaped(m->job_id);

		snprintf(why, len, "job '%s' is not this agent's job %s", theirs ? theirs : "?", c->job_id);
		free(theirs);
		return ESRCH;
	}
	if ((*pidfd = dc_peer_pidfd(fd, cred->pid)) < 0) {
		snprintf(why, len, "pid %d is not a running process", cred->pid);
		return ESRCH;
	}
	return dc_proc_check_owner(*pidfd, cred->pid, c->uid, why, len);
}

/* A passed fd that may be a ring: a shared-memory file, whose close never
 * waits. Any other is closed off the loop (fd_closer.h) and counts as none. */
static int ring_candidate(int fd)
{
	struct stat st;

	if (fcntl(fd, F_GET_SEALS) >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	dc_close_later(fd);
	return -1;
}

/* The most fds one message can carry (the kernel's SCM_MAX_FD): room for
 * all, so that the kernel never drops the rest, and closes them, here. */
#define MAX_PASSED_FDS 253

/*
 * One message and the fds beside it. Only the first fd may be a ring, and
 * only a shared-memory file is taken as one; every other fd a client sends
 * is closed off the loop. *ring is -1 without one, *nfds the fds sent.
 */
static ssize_t receive(int fd, char *buf, size_t len, int *ring, int *nfds)
{
	union {
		char buf[CMSG_SPACE(MAX_PASSED_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(fd, &h, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);

	*ring = -1;
	*nfds = 0;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&h) : NULL; c; c = CMSG_NXTHDR(&h, c)) {
		size_t count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (!(*nfds)++)
				*ring = ring_candidate(got);
			else
				dc_close_later(got);
		}
	}
	return n;
}

/* A well-formed message, with fds where it announces a ring, else none. */
static int parse(const char *buf, size_t n, int nfds, struct dc_ctl_msg *m, char *why, size_t len)
{
	if (dc_ctl_parse(buf, n, m, why, len))
		return -1;
	if (((m->flags & DC_CTL_FLAG_RING) != 0) == (nfds > 0))
		return 0;
	snprintf(why, len, "%s", nfds ? "an fd the message does not announce" : "the announced ring is missing");
	return -1;
}

/* 1 while the client has said nothing yet, else 0 (answered or gone). */
static int serve_client(struct dc_control *c, int fd)
{
	char buf[sizeof(struct dc_ctl_msg) + 64], why[256] = "", note[120] = "ok";
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct dc_ctl_msg m;
	int status, ring, nfds, pidfd;
	ssize_t n;

	n = receive(fd, buf, sizeof(buf), &ring, &nfds);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 1;
	if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		if (ring >= 0)
			close(ring);
		return 0;
	}
	if (parse(buf, (size_t)n, nfds, &m, why, sizeof(why))) {
		if (ring >= 0)
			close(ring);
		c->refused++;
		reply(fd, EINVAL, "refused: %s", why);
		return 0;
	}
	status = check_sender(c, fd, &m, &cred, &pidfd, why, sizeof(why));
	if (status) {
		if (ring >= 0)
			close(ring);
		if (pidfd >= 0)
			close(pidfd);
	}
	/* The callback owns the ring and the pidfd from here. */
	if (!status && (status = c->fn(c->ctx, &m, ring, pidfd, why, sizeof(why), note, sizeof(note))) && !why[0])
		snprintf(why, sizeof(why), "%s", strerror(status));
	if (status) {
		c->refused++;
		fprintf(stderr, "dc-agent: refused a registration from pid %d: %s\n", cred.pid, why);
		reply(fd, status, "refused: %s", why);
		return 0;
	}
	reply(fd, 0, "%s", note);
	return 0;
}

static void drop_client(struct dc_control *c, int i)
{
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->clients[i].fd, NULL);
	dc_close_later(c->clients[i].fd);
	c->clients[i] = c->clients[--c->nclients];
}

/* A new connection: answered now if it has spoken, else kept (the oldest
 * kept is let go to make room). */
static void take_client(struct dc_control *c, int fd, __u64 now)
{
	int oldest = 0;

	if (!serve_client(c, fd)) {
		dc_close_later(fd);
		return;
	}
	if (c->nclients == MAX_CLIENTS) {
		for (int i = 1; i < c->nclients; i++)
			if (c->clients[i].deadline < c->clients[oldest].deadline)
				oldest = i;
		drop_client(c, oldest);
	}
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN, .data.fd = fd })) {
		dc_close_later(fd);
		return;
	}
	c->clients[c->nclients++] = (struct client){ fd, now + CLIENT_WAIT_MS * 1000000ull };
}

void dc_control_serve(struct dc_control *c)
{
	__u64 now = dc_now_ns(CLOCK_MONOTONIC);

	/* The clients kept: answered once they speak, let go once silent too long. */
	for (int i = c->nclients - 1; i >= 0; i--) {
		if (!serve_client(c, c->clients[i].fd) || now >= c->clients[i].deadline)
			drop_client(c, i);
	}
	for (int i = 0; i < ACCEPT_PER_SERVE; i++) {
		int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN: none waiting */
		take_client(c, fd, now);
	}
}

void dc_control_close(struct dc_control *c)
{
	if (!c)
		return;
	while (c->nclients)
		drop_client(c, c->nclients - 1);
	close(c->epfd);
	close(c->fd);
	unlink(c->path);
	free(c);
}
