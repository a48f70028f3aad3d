// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "register.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

void dc_register_fill(struct dc_ctl_msg *m, int type, int rank, int world_size)
{
	const char *job = getenv("DC_JOB_ID");

	if (!job || !*job)
		job = getenv("SLURM_JOB_ID");
	memset(m, 0, sizeof(*m));
	m->magic = DC_CTL_MAGIC;
	m->version = DC_CTL_VERSION;
	m->type = type;
	m->pid = getpid();
	m->rank = rank;
	m->world_size = world_size;
	snprintf(m->job_id, sizeof(m->job_id), "%s", job ? job : "");
	gethostname(m->hostname, sizeof(m->hostname) - 1);
}

ssize_t dc_send_with_fd(int fd, const void *m, size_t len, int ring_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)m, len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (ring_fd >= 0) {
		memset(&u, 0, sizeof(u));
		h.msg_control = u.buf;
		h.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &ring_fd, sizeof(int));
	}
	return sendmsg(fd, &h, MSG_NOSIGNAL);
}

int dc_register_send(const char *path, const struct dc_ctl_msg *m, int ring_fd, char *why, size_t len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	struct dc_ctl_reply r;
	int fd, rc = -1;
	ssize_t n;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(why, len, "socket path too long");
		return -1;
	}
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		snprintf(why, len, "cannot connect to %s: %s", path, strerror(errno));
	} else if (dc_send_with_fd(fd, m, sizeof(*m), ring_fd) != sizeof(*m)) {
		snprintf(why, len, "cannot send to %s: %s", path, strerror(errno));
	} else if ((n = recv(fd, &r, sizeof(r), 0)) != sizeof(r) || r.magic != DC_CTL_MAGIC) {
		snprintf(why, len, "no answer from %s", path);
	} else if (r.status) {
		r.message[sizeof(r.message) - 1] = 0;
		snprintf(why, len, "%s", r.message);
	} else {
		r.message[sizeof(r.message) - 1] = 0;
		snprintf(why, len, "%s", r.message);
		rc = 0;
	}
	close(fd);
	return rc;
}
