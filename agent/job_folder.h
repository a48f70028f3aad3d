/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The job's id, and its output folder, made and held safely by a root agent. */
#ifndef DC_JOB_FOLDER_H
#define DC_JOB_FOLDER_H

#include <stddef.h>
#include <sys/types.h>

/*
 * base/job, made (with base's parents, 0755) or opened, held: returns its
 * descriptor, owned by uid:gid with mode 0750, or -1 and err. A job folder
 * that exists must be a real folder owned by root or uid; any other is
 * refused, as its owner could replace the node file later. Ownership and
 * mode change through the descriptor, never through a name.
 */
int dc_job_folder_open(char *base, const char *job, uid_t uid, gid_t gid, char *err, size_t errlen);

/* $SLURM_JOB_ID, else local-DATE-TIME-PID. */
void dc_job_default_id(char *out, size_t len);
/* 1-63 letters, digits, '.', '_' or '-', not starting with '.': a job id
 * that names one folder and nothing else. */
int dc_job_id_valid(const char *id);

#endif
