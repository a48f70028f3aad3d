/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's control socket, where MPI ranks say who they are. */
#ifndef DC_CONTROL_H
#define DC_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "control_proto.h"

struct dc_control;

/*
 * Called for each accepted message, from a process that runs with the job
 * user's credentials, with a pidfd of it and the rank's ring (a
 * shared-memory file, whose close never waits) or -1 where the message
 * announced none or the fd sent was not one; the callback owns both fds. A
 * non-zero return is sent back as the refusal's errno, with why (or the
 * errno's text when why is left empty); else note (starting "ok") is the
 * answer.
 */
typedef int (*dc_control_fn)(void *ctx, const struct dc_ctl_msg *m, int ring_fd, int pidfd, char *why,
			     size_t whylen, char *note, size_t notelen);

/*
 * One agent per control socket: takes PATH.lock (flock), held for the
 * agent's life. Returns its fd, or -1 with err naming the agent that has it.
 */
int dc_control_claim(const char *path, char *err, size_t errlen);
void dc_control_release(const char *path, int lock_fd);

/* Listens at path, owned by uid:gid, mode 0600; a stale socket is replaced
 * (call dc_control_claim first: then no live agent's socket is). */
struct dc_control *dc_control_open(const char *path, uid_t uid, gid_t gid, const char *job_id,
				   dc_control_fn fn, void *ctx, char *err, size_t errlen);
int dc_control_fd(const struct dc_control *c);
/* Serves the connections waiting on the socket. */
void dc_control_serve(struct dc_control *c);
/* Stops listening and removes the socket. */
void dc_control_close(struct dc_control *c);

#endif
