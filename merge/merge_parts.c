// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge --part and --stitch: a large job's merge on the machines the
 * cluster already has. Each of N processes (started by srun or mpirun, one
 * a node, right after the job) converts its share of the node files into
 * HDF5 parts; then one process on the login node stitches them into one
 * file whose events are mapped, not copied. No process talks to another:
 * every part numbers functions and paths from the job's headers alone,
 * which every process reads the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hdf5_tables.h"
#include "merge_cli.h"
#include "out_file.h"
#include "safe_open.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* K and N from "K/N", or from the launcher's environment for "auto". */
static int which_part(const char *spec, long *k, long *n)
{
	static const char *const env[][2] = {
		{ "SLURM_PROCID", "SLURM_NTASKS" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
	};
	char *end;

	if (strcmp(spec, "auto") == 0) {
		for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
			const char *a = getenv(env[i][0]), *b = getenv(env[i][1]);

			if (a && b) {
				*k = strtol(a, NULL, 10);
				*n = strtol(b, NULL, 10);
				return *n >= 1 && *k >= 0 && *k < *n ? 0 : -1;
			}
		}
		*k = 0;
		*n = 1;
		return 0;
	}
	*k = strtol(spec, &end, 10);
	if (end == spec || *end != '/')
		return -1;
	spec = end + 1;
	*n = strtol(spec, &end, 10);
	return end != spec && !*end && *n >= 1 && *n <= 1000000 && *k >= 0 && *k < *n ? 0 : -1;
}

/* The parts folder: made if missing (several parts may race to make it),
 * else it must be a folder of ours, not a link to one. */
static int parts_folder(const char *dir, bool group_read)
{
	struct stat st;

	if (mkdir(dir, group_read ? 0750 : 0700) && errno != EEXIST) {
		fprintf(stderr, "dc-merge: cannot make the parts folder %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dc-merge: the parts folder %s is not a folder (a link is not taken)\n", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		fprintf(stderr, "dc-merge: the parts folder %s belongs to uid %u, not you: choose another with --parts\n",
			dir, (unsigned)st.st_uid);
		return -1;
	}
	return 0;
}

static void default_parts(const struct options *o, const char *output, char *dir, size_t len)
{
	char copy[PATH_MAX];

	if (o->parts) {
		snprintf(dir, len, "%s", o->parts);
		return;
	}
	snprintf(copy, sizeof(copy), "%s", output ? output : ".");
	snprintf(dir, len, "%s/%s.parts", output ? dirname(copy) : o->job_dir, o->job_id);
}

/* What a Perfetto part's stamp (the file beside it) says: of which job and
 * node file, as the file was, and how long the part is. HDF5 parts carry
 * this in their attributes. */
static void part_stamp(const struct dc_job *job, size_t i, unsigned long long part_bytes, char *out, size_t len)
{
	snprintf(out, len, "job=%s\nnode_file=%s\nnode_file_bytes=%llu\npart_bytes=%llu\n", job->id,
		 dc_node_file_name(&job->nodes[i]), (unsigned long long)dc_h5_file_bytes(job->nodes[i].path),
		 part_bytes);
}

static int write_stamp(const struct options *o, const struct dc_job *job, size_t i, const char *part)
{
	char path[PATH_MAX + 128], text[2 * PATH_MAX + 256], err[3 * PATH_MAX];
	struct dc_out_file out;
	int rc;

	part_stamp(job, i, dc_h5_file_bytes(part), text, sizeof(text));
	snprintf(path, sizeof(path), "%s.part", part);
	if (dc_out_file_open(&out, path, false, true, err, sizeof(err)))
		return fprintf(stderr, "dc-merge: %s\n", err), -1;
	rc = write(out.fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	if (rc)
		snprintf(err, sizeof(err), "cannot write %s: %s", path, strerror(errno));
	if (!rc && dc_out_file_publish(&out, o->group_read, err, sizeof(err)))
		rc = -1;
	if (rc)
		fprintf(stderr, "dc-merge: %s\n", err);
	dc_out_file_close(&out, !rc);
	return rc;
}

int dc_merge_parts(const struct options *o, struct dc_job *job)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct options po = *o;
	long k, n;
	int done = 0;

	if (which_part(o->part, &k, &n)) {
		fprintf(stderr, "dc-merge: --part: expected K/N with 0 <= K < N, or auto, not '%s'\n", o->part);
		return 2;
	}
	default_parts(o, NULL, dir, sizeof(dir));
	if (parts_folder(dir, o->group_read))
		return 1;
	po.ops = dc_output_is_perfetto(o->ops) ? o->ops : &dc_hdf5_part_output;
	po.quiet = true;
	po.progress = 0;
	for (size_t i = k; i < job->nnodes; i += n) {
		struct dc_job sub;
		double t0 = now_s();

		if (dc_output_is_perfetto(o->ops))
			snprintf(path, sizeof(path), "%s/" DC_PFPART_NAME, dir, i);
		else
			snprintf(path, sizeof(path), "%s/" DC_PART_NAME, dir, i);
		po.output = path;
		if (dc_job_part(job, i, &sub)) {
			fprintf(stderr, "dc-merge: out of memory\n");
			return 1;
		}
		if (dc_merge_run(&po, &sub, path) || (dc_output_is_perfetto(o->ops) && write_stamp(o, job, i, path))) {
			dc_job_part_free(&sub);
			return 1;
		}
		dc_job_part_free(&sub);
		done++;
		if (!o->quiet)
			fprintf(stderr, "dc-merge: part %ld/%ld: node %s, %llu events, into %s in %.2f s\n", k, n,
				job->nodes[i].hdr.hostname, job->nodes[i].events, path, now_s() - t0);
	}
	if (!done && !o->quiet)
		fprintf(stderr, "dc-merge: part %ld/%ld: no node file for this part (the job has %zu)\n", k, n,
			job->nnodes);
	return 0;
}

/* How the stitched file names the parts folder: relative to its own
 * folder when the parts are under it, so that the two move together. */
static int parts_ref(const char *dir, const char *output, char *ref, size_t len)
{
	char parts[PATH_MAX], copy[PATH_MAX], outdir[PATH_MAX];
	size_t n;

	snprintf(copy, sizeof(copy), "%s", output);
	if (!realpath(dir, parts) || !realpath(dirname(copy), outdir))
		return -1;
	n = strlen(outdir);
	if (strncmp(parts, outdir, n) == 0 && parts[n] == '/')
		snprintf(ref, len, "%s", parts + n + 1);
	else if (strcmp(outdir, "/") == 0)
		snprintf(ref, len, "%s", parts + 1);
	else
		snprintf(ref, len, "%s", parts);
	return 0;
}

/* Why the Perfetto part of node i cannot be used, or NULL. */
static char *check_pfpart(const struct dc_job *job, size_t i, const char *part)
{
	char stamp_path[PATH_MAX + 128], want[2 * PATH_MAX + 256], got[sizeof(want)], *why = NULL;
	FILE *f;
	int fd;
	size_t n = 0;

	snprintf(stamp_path, sizeof(stamp_path), "%s.part", part);
	if (access(part, F_OK) && errno == ENOENT) {
		if (asprintf(&why, "no part %s (was dc-merge --part run for this node?)", part) < 0)
			why = NULL;
		return why ? why : strdup("no part");
	}
	/* The part and its stamp, opened as node files are. */
	if ((fd = dc_open_regular(part, got, sizeof(got))) >= 0) {
		close(fd);
		fd = dc_open_regular(stamp_path, got, sizeof(got));
	}
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		if (asprintf(&why, "part %s", got) < 0)
			why = NULL;
		return why ? why : strdup("no usable part");
	}
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = 0;
	fclose(f);
	part_stamp(job, i, dc_h5_file_bytes(part), want, sizeof(want));
	if (strcmp(got, want) && asprintf(&why, "part %s is damaged, stale or of another node file: its stamp %s "
					  "does not match", part, stamp_path) < 0)
		why = strdup("part does not match");
	return why;
}

/* Appends the file at path to out. */
static int append_file(int out, const char *path)
{
	char buf[1 << 16], why[PATH_MAX + 128];
	int in = dc_open_regular(path, why, sizeof(why));
	ssize_t k;

	if (in < 0)
		return -1;
	/* In the kernel where it can; by hand to a pipe. */
	while ((k = copy_file_range(in, NULL, out, NULL, 1 << 30, 0)) > 0)
		;
	if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EBADF)) {
		while ((k = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, k) != k) {
				k = -1;
				break;
			}
	}
	close(in);
	return k < 0 ? -1 : 0;
}

static int stitch_perfetto(const struct options *o, struct dc_job *job, const char *dir, const char *output)
{
	char **missing = calloc(job->nnodes + 1, sizeof(*missing)), part[PATH_MAX + 64], err[3 * PATH_MAX];
	struct dc_out_file out;
	unsigned unusable = 0;
	double t0 = now_s();
	int rc = -1;

	if (!missing)
		return fprintf(stderr, "dc-merge: out of memory\n"), 1;
	for (size_t i = 0; i < job->nnodes; i++) {
		snprintf(part, sizeof(part), "%s/" DC_PFPART_NAME, dir, i);
		if ((missing[i] = check_pfpart(job, i, part))) {
			unusable++;
			fprintf(stderr, "dc-merge: warning: node %s: %s; its calls are left out\n",
				job->nodes[i].hdr.hostname, missing[i]);
		}
	}
	if (dc_out_file_open(&out, output, o->output != NULL, false, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		goto done;
	}
	rc = dc_perfetto_header(job, missing, out.fd, output, err, sizeof(err));
	for (size_t i = 0; !rc && i < job->nnodes; i++) {
		snprintf(part, sizeof(part), "%s/" DC_PFPART_NAME, dir, i);
		if (!missing[i] && append_file(out.fd, part)) {
			snprintf(err, sizeof(err), "cannot copy %s into %s: %s", part, output, strerror(errno));
			rc = -1;
		}
	}
	if (!rc && dc_out_file_publish(&out, o->group_read, err, sizeof(err)))
		rc = -1;
	if (rc)
		fprintf(stderr, "dc-merge: %s\n", err);
	dc_out_file_close(&out, !rc);
	if (!rc && !o->quiet)
		fprintf(stderr, "dc-merge: job %s: %zu parts joined into %s in %.2f s%s\n", job->id,
			job->nnodes - unusable, output, now_s() - t0,
			unusable ? "; some nodes had no usable part (named above) and are left out" : "");
done:
	for (size_t i = 0; i < job->nnodes; i++)
		free(missing[i]);
	free(missing);
	return rc ? 1 : unusable ? 3 : 0;
}

/*
 * As root, parts are stitched only from a folder that no other user can
 * change, nor its parent: another user could swap a part for a forged one
 * before the stitch, or, since the stitched file reads its events from the
 * parts, at any time after it.
 */
static int parts_folder_safe(const char *dir, char *err, size_t errlen)
{
	char copy[PATH_MAX], why[PATH_MAX + 128];
	const char *folders[2];
	int rc = 0;

	snprintf(copy, sizeof(copy), "%s", dir);
	folders[0] = dir;
	folders[1] = dirname(copy);
	for (int i = 0; !rc && i < 2; i++) {
		int fd = open(folders[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || dc_folder_safe(fd, folders[i], why, sizeof(why))) {
			if (fd < 0)
				snprintf(why, sizeof(why), "%s: %s", folders[i], strerror(errno));
			snprintf(err, errlen,
				 "%s: as root, dc-merge stitches only parts in a folder that no other user can change "
				 "(the parts folder and the one it is in: owned by root or you, not writable by others "
				 "unless sticky), since the stitched file reads its events from them; make the parts "
				 "as root into such a folder (--parts), or stitch as the job's user",
				 why);
			rc = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

int dc_merge_stitch(const struct options *o, struct dc_job *job, const char *output)
{
	char dir[PATH_MAX], ref[PATH_MAX], err[PATH_MAX + 512];
	struct dc_out_file out;
	unsigned unusable = 0;
	double t0 = now_s();
	struct stat st;
	int rc;

	default_parts(o, output, dir, sizeof(dir));
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dc-merge: no parts folder %s: run dc-merge %s -f hdf5 --part first (or name the folder "
				"with --parts)\n", dir, o->job_id);
		return 1;
	}
	if (parts_folder_safe(dir, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		return 1;
	}
	if (dc_output_is_perfetto(o->ops))
		return stitch_perfetto(o, job, dir, output);
	if (parts_ref(dir, output, ref, sizeof(ref))) {
		fprintf(stderr, "dc-merge: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (dc_out_file_open(&out, output, o->output != NULL, true, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		return 1;
	}
	rc = dc_hdf5_stitch(job, dir, ref, out.tmp_path, &unusable, err, sizeof(err));
	if (!rc && dc_out_file_publish(&out, o->group_read, err, sizeof(err)))
		rc = -1;
	if (rc)
		fprintf(stderr, "dc-merge: %s\n", err);
	dc_out_file_close(&out, !rc);
	if (rc)
		return 1;
	if (!o->quiet)
		fprintf(stderr, "dc-merge: job %s: %zu parts stitched into %s (events mapped from %s/) in %.2f s%s\n",
			job->id, job->nnodes - unusable, output, ref, now_s() - t0,
			unusable ? "; some nodes had no usable part (named above) and are left out" : "");
	return unusable ? 3 : 0;
}
