/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening what another user may have put in place, as root: no symbolic
 * link followed, no wait on a FIFO, nothing read before it is known to be a
 * regular file; and folders whose names another user could swap refused.
 * Node files, parts and stamps are all opened this one way.
 */
#ifndef DC_SAFE_OPEN_H
#define DC_SAFE_OPEN_H

#include <stddef.h>

/* An fd of the regular file at path (blocking reads), or -1 with why
 * ("PATH is a symbolic link: not followed", "PATH is not a regular file
 * (a FIFO)", or the error). */
int dc_open_regular(const char *path, char *why, size_t len);
/* As root: 0 when the folder open at dir_fd is owned by root or the caller
 * and not writable by others (unless sticky), else -1 with why. Anyone
 * else: 0 (they can harm only what they may already change). */
int dc_folder_safe(int dir_fd, const char *dir, char *why, size_t len);

#endif
