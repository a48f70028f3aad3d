/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The client side of the control socket: one message, one reply. */
#ifndef DC_REGISTER_H
#define DC_REGISTER_H

#include <stddef.h>
#include <sys/types.h>

#include "control_proto.h"

/* Sends m (with ring_fd beside it, unless -1) to the agent at path and
 * waits (up to 2 s) for its reply. 0 when accepted, with the agent's answer
 * in why ("ok", or what it made of the ring); else -1 with why
 * (connection refused, refused by the agent...). */
int dc_register_send(const char *path, const struct dc_ctl_msg *m, int ring_fd, char *why, size_t len);
/* len bytes of m on a connected socket, with fd beside them (SCM_RIGHTS)
 * unless it is -1: what sendmsg returns. */
ssize_t dc_send_with_fd(int sock, const void *m, size_t len, int fd);
/* A message of the given type for this process, job and host filled in. */
void dc_register_fill(struct dc_ctl_msg *m, int type, int rank, int world_size);

#endif
