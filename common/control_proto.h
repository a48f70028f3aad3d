/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control socket between libdcpmpi.so (in each MPI rank) or
 * libdcpreload.so (in any process) and the node's dc-agent: a
 * SOCK_SEQPACKET Unix socket, one fixed-size message each way.
 * The agent trusts nothing in a message it can check itself: the sender's
 * pid and uid come from SO_PEERCRED.
 */
#ifndef DC_CONTROL_PROTO_H
#define DC_CONTROL_PROTO_H

#include <linux/types.h>
#include <stddef.h>

#define DC_CTL_MAGIC 0x504d4344u /* "DCMP" */
#define DC_CTL_VERSION 1
#define DC_CTL_MAX_WORLD (1 << 24)
#define DC_CTL_SOCKET_DIR "/run/datacrumbs"

enum dc_ctl_type {
	DC_CTL_REGISTER = 1, /* after MPI_Init: this pid is rank R of a world of N */
	DC_CTL_FINALIZE = 2, /* in MPI_Finalize */
	DC_CTL_PROCESS = 3,  /* libdcpreload.so at a process's start: no rank (-1 of 0) */
	DC_CTL_EXIT = 4,     /* ...and at its exit */
};
/* Whether a message of type t starts a session (and may carry a ring). */
#define DC_CTL_STARTS(t) ((t) == DC_CTL_REGISTER || (t) == DC_CTL_PROCESS)
/* Whether it is of a rank. */
#define DC_CTL_OF_RANK(t) ((t) == DC_CTL_REGISTER || (t) == DC_CTL_FINALIZE)

/* dc_ctl_msg.flags */
/* A message that starts a session carries the process's ring
 * (rank_ring.h): one fd, SCM_RIGHTS. The agent's reply says whether it
 * took it. */
#define DC_CTL_FLAG_RING 0x1u
#define DC_CTL_FLAGS_KNOWN DC_CTL_FLAG_RING

struct dc_ctl_msg {
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 pid;
	__s32 rank;
	__s32 world_size;
	__u32 flags;
	/* Add to this process's CLOCK_REALTIME to get rank 0's; error bound. */
	__s64 clock_offset_ns;
	__u64 clock_error_ns;
	char job_id[64];   /* as the rank sees it ($DC_JOB_ID/$SLURM_JOB_ID), may be empty */
	char hostname[64];
};

struct dc_ctl_reply {
	__u32 magic;
	__s32 status; /* 0, or an errno value */
	char message[120];
};

/* Checks a received message: 0, or -1 with the reason in why. */
int dc_ctl_parse(const void *buf, size_t len, struct dc_ctl_msg *out, char *why, size_t whylen);
/* The socket path for a job: $DC_AGENT_SOCKET, else DC_CTL_SOCKET_DIR/HOST/JOB.sock;
 * -1 when neither a path nor a job id is known. */
int dc_ctl_socket_path(const char *job_id, char *out, size_t len);

#endif
