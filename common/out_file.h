/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where dc-merge writes, safely when run as root over other users' folders:
 * the output is written under a private temporary name (created with
 * O_EXCL|O_NOFOLLOW in a folder held open) and renamed over the final name
 * only when complete. A symbolic link is never followed. An existing device
 * or FIFO, or "-" for standard output, is written in place, and only when
 * the user named it. Run as root, dc-merge writes only into a folder that
 * no other user can change: owned by root or the caller, and not writable
 * by group or others unless sticky.
 */
#ifndef DC_OUT_FILE_H
#define DC_OUT_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct dc_out_file {
	int dir_fd;     /* the folder, held from the checks to the rename */
	int fd;         /* what to write to */
	bool in_place;  /* a device, a FIFO or standard output */
	char name[NAME_MAX + 1];     /* the final name in the folder */
	char tmp[NAME_MAX + 1];      /* the temporary name in the folder */
	char tmp_path[PATH_MAX + 32]; /* a path to the temporary file that goes through dir_fd */
};

/*
 * named: the user gave the path (-o), so a device or FIFO there may be
 * written. need_file: the format must seek (HDF5): a regular file only.
 * Returns 0, or -1 with err set (and nothing created).
 */
int dc_out_file_open(struct dc_out_file *o, const char *path, bool named, bool need_file, char *err,
		     size_t errlen);
/* The complete file takes its name (mode 0600, or 0640 with group_read). */
int dc_out_file_publish(struct dc_out_file *o, bool group_read, char *err, size_t errlen);
/* Removes what publish would have renamed; closes everything. */
void dc_out_file_close(struct dc_out_file *o, bool keep);

#endif
