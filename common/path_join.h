/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A relative name made absolute against the folder it was given in, as
 * the kernel resolved that folder: "." and empty components dropped, ".."
 * taking one back (never above "/"). The folder's own path is the
 * kernel's, with its symbolic links resolved; only the name's components
 * are taken as written, as Darshan takes a relative path.
 */
#ifndef DC_PATH_JOIN_H
#define DC_PATH_JOIN_H

#include <stddef.h>

/* dir: an absolute path; name: a relative or absolute one. Writes the
 * normalized result to out (room n); 0, or -1 where it would not fit or
 * dir is not absolute. */
int dc_path_join(const char *dir, const char *name, char *out, size_t n);

/* An MPI-IO file name made absolute against the working directory cwd:
 * a ROMIO prefix ("ufs:", "lustre:": a lowercase word and a colon) is kept
 * before the path. 0 with out written; 1 where the name is already
 * absolute (or empty) and out untouched; -1 where it would not fit. */
int dc_path_absolute(const char *cwd, const char *name, char *out, size_t n);

#endif
