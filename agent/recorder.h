/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Turns ring buffer messages into node file records: interns paths, keeps
 * the path of each file the kernel named and of each stream or library
 * handle for the later calls on it, and keeps the process table.
 */
#ifndef DC_RECORDER_H
#define DC_RECORDER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "dc_event.h"

struct dc_writer;
struct dc_recorder;

struct dc_recorder *dc_recorder_new(struct dc_writer *w);
void dc_recorder_free(struct dc_recorder *r);
/* Each message of the BPF side, in time order (agent/event_rings.h). */
void dc_recorder_handle(struct dc_recorder *r, void *data, size_t len);
/* When a message's event happened (a call: its end), for the order the
 * rings are merged in; 0 for one too short to be a message. */
__u64 dc_recorder_msg_time(const void *data, size_t len);
/* A call from elsewhere than the ring buffer (a rank's MPI-IO ring), in
 * the same form; m is the caller's to change. */
int dc_recorder_call(struct dc_recorder *r, struct dc_msg_call *m);
/* A process traced from the start (the command, --pid). Its files open
 * before then are named by the kernel at their first call. */
int dc_recorder_start_process(struct dc_recorder *r, __u32 pid, __u64 ts);
struct dc_ctl_msg;
/* A rank registered or finalized through the control socket. */
int dc_recorder_rank(struct dc_recorder *r, const struct dc_ctl_msg *m, __u64 ts);
/* Programs of the job's user whose environment --match-env could not read
 * whole (it may have missed them), and the first few names. */
unsigned long long dc_recorder_env_unread(const struct dc_recorder *r, const char **names);
/* Processes that exited since the last call (for PROFILE clean-up). */
size_t dc_recorder_take_exited(struct dc_recorder *r, __u32 *pids, size_t max);

#endif
