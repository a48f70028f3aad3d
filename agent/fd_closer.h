/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Descriptors a client chose (its connection, fds it passed) are closed on
 * a thread of their own. Closing the last reference to a file runs the
 * file's release, which may wait: a TCP socket with SO_LINGER and unsent
 * data waits out its linger time, and a unix socket closed with messages
 * still queued releases the files those carry, which may do the same. The
 * agent's loop never waits on what a user set up.
 */
#ifndef DC_FD_CLOSER_H
#define DC_FD_CLOSER_H

/* Closes fd on the closer thread (started on first use). Should the
 * thread be stuck with 16,384 closes queued, fd is left open, and said so
 * once. */
void dc_close_later(int fd);

#endif
