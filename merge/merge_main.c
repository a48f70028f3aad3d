// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge: merges the node files of a job into one timeline (Chrome/Perfetto
 * JSON or HDF5). Parses its options, opens and indexes the job, walks its
 * events in time order into the output, which appears only when complete.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "merge.h"
#include "nodeset.h"
#include "out_file.h"
#include "merge_cli.h"
#include "output.h"

static const char usage[] =
"Usage: dc-merge JOB_ID [OPTIONS]\n"
"       dc-merge JOB_FOLDER|NODE_FILE [OPTIONS]\n"
"\n"
"Merges every node file of a job into one timeline, in time order, with the\n"
"clocks of all nodes on one scale and every process named (MPI ranks first).\n"
"The job is named by its id, or by its folder of node files or one of them\n"
"(the folder the agent's last lines name). The output goes beside the node\n"
"files, as JOB_FOLDER/JOB_ID.json (.pftrace, .h5...), unless -o says otherwise.\n"
"\n"
"Options:\n"
"  -i, --input DIR        the job's folder of node files, with a JOB_ID\n"
"                         (default: $DC_OUTPUT_DIR/JOB_ID, else ./datacrumbs/JOB_ID)\n"
"  -f, --format FORMAT    json (default), json.gz, perfetto, hdf5, pfw or pfw.gz:\n"
"                           json      Chrome JSON: any tool reads it; Perfetto's UI\n"
"                                     opens it up to a few million calls (~190 B each)\n"
"                           perfetto  Perfetto's native protobuf (.pftrace, its\n"
"                                     packets deflated, ~10 B a call): for Perfetto's\n"
"                                     UI past that, to ~30 M\n"
"                           hdf5      tables for h5py/pandas and dc-summary (~8 B a\n"
"                                     call): for analysis at any size\n"
"                           pfw       DFTracer's JSON lines, for DFAnalyzer and\n"
"                                     DFTracer's tools (~200 B a call; pfw.gz ~20)\n"
"  -o, --output FILE      default: JOB_ID and the format's suffix (.json, .json.gz,\n"
"                         .pftrace, .h5, .pfw, .pfw.gz) in the job's folder; -\n"
"                         for standard output (all but hdf5)\n"
"  -t, --time-range A:B   keep calls that overlap seconds A to B from the job's\n"
"                         start (A or B may be left out)\n"
"  -r, --ranks LIST       keep these MPI ranks only, e.g. 0,2,8-15\n"
"      --progress         show a progress bar (default: when stderr is a terminal)\n"
"      --no-progress      never show one\n"
"      --group-read       the output readable by its group (0640, not 0600)\n"
"      --no-compress      perfetto: packets as they are (~45 B a call), for tools\n"
"                         that do not inflate compressed_packets\n"
"\n"
"Large jobs, on many machines (-f hdf5 or -f perfetto):\n"
"      --part K/N         convert node files K, K+N, K+2N... (of the job's files\n"
"                         in name order) each into its part, in the parts folder;\n"
"                         run N of these at once, on as many machines\n"
"      --part auto        K and N from srun (SLURM_PROCID, SLURM_NTASKS) or\n"
"                         mpirun (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE)\n"
"      --stitch           join the parts into one file (-o, default JOB_ID.h5 or\n"
"                         JOB_ID.pftrace in the job's folder). HDF5: no event is copied, /events and\n"
"                         /counters map the parts (virtual datasets), so keep\n"
"                         the parts folder beside it. Perfetto: the parts are\n"
"                         concatenated. Exit status 3: the file was written,\n"
"                         but some nodes had no usable part (each is named, and\n"
"                         left out)\n"
"      --parts DIR        the parts folder (default JOB_ID.parts, beside the\n"
"                         output: in the job's folder)\n"
"  -q, --quiet            no summary line\n"
"  -h, --help             show this help\n"
"  -V, --version          show the version\n"
"\n"
"The output is written to a temporary file and renamed when complete: a\n"
"failed merge leaves no partial output. An output that is a device or a pipe\n"
"(/dev/null, a FIFO) is written to as it is, JSON only. A node file cut short\n"
"(agent killed) is merged up to its last whole chunk, with a warning.\n";

#define MAX_RANK (1 << 20)

static int parse_ranks(const char *s, struct options *o)
{
	o->ranks = calloc(MAX_RANK, sizeof(bool));
	if (!o->ranks)
		return -1;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				return -1;
		}
		if (b < a || b >= MAX_RANK)
			return -1;
		for (long r = a; r <= b; r++)
			o->ranks[r] = true;
		if (*end != ',' && *end)
			return -1;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static __u64 seconds_to_ns(double s)
{
	return s * 1e9 >= (double)UINT64_MAX ? UINT64_MAX : (__u64)(s * 1e9 + 0.5);
}

static int parse_range(const char *s, struct options *o)
{
	const char *colon = strchr(s, ':');
	double from, to;
	char *end;

	if (!colon)
		return -1;
	from = colon == s ? 0 : strtod(s, &end);
	if (colon != s && end != colon)
		return -1;
	to = colon[1] ? strtod(colon + 1, &end) : -1;
	if (colon[1] && *end)
		return -1;
	if (!(from >= 0) || (to >= 0 && to < from))
		return -1;
	o->from_ns = seconds_to_ns(from);
	o->to_ns = to < 0 ? UINT64_MAX : seconds_to_ns(to);
	return 0;
}

static const struct dc_output_ops *format_ops(const char *name)
{
	const struct dc_output_ops *all[] = { &dc_json_output, &dc_json_gz_output, &dc_hdf5_output, &dc_perfetto_output,
						&dc_pfw_output, &dc_pfw_gz_output };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->format, name) == 0)
			return all[i];
	return NULL;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, 0, 'i' },	 { "format", required_argument, 0, 'f' },
		{ "output", required_argument, 0, 'o' }, { "time-range", required_argument, 0, 't' },
		{ "ranks", required_argument, 0, 'r' },	 { "progress", no_argument, 0, 'P' },
		{ "no-progress", no_argument, 0, 'N' },	 { "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },	 { "version", no_argument, 0, 'V' },
		{ "group-read", no_argument, 0, 'G' },	 { "part", required_argument, 0, 'K' },
		{ "stitch", no_argument, 0, 'S' },	 { "parts", required_argument, 0, 'D' },
		{ "no-compress", no_argument, 0, 'Z' },
		{ 0 },
	};
	int c;

	*o = (struct options){ .ops = &dc_json_output, .to_ns = UINT64_MAX, .progress = -1 };
	while ((c = getopt_long(argc, argv, "i:f:o:t:r:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'o': o->output = optarg; break;
		case 'P': o->progress = 1; break;
		case 'N': o->progress = 0; break;
		case 'q': o->quiet = true; break;
		case 'G': o->group_read = true; break;
		case 'K': o->part = optarg; break;
		case 'S': o->stitch = true; break;
		case 'D': o->parts = optarg; break;
		case 'Z': o->no_compress = true; break;
		case 'h': fputs(usage, stdout); return 1;
		case 'V': printf("dc-merge (DataCrumbs) %s\n", DC_VERSION); return 1;
		case 'f':
			if ((o->ops = format_ops(optarg)))
				break;
			fprintf(stderr, "dc-merge: --format: expected json, json.gz, perfetto, hdf5, pfw or pfw.gz, not '%s'\n", optarg);
			return -1;
		case 't':
			if (!parse_range(optarg, o))
				break;
			fprintf(stderr, "dc-merge: --time-range: expected A:B in seconds with A <= B, not '%s'\n", optarg);
			return -1;
		case 'r':
			if (!parse_ranks(optarg, o))
				break;
			fprintf(stderr, "dc-merge: --ranks: expected a list such as 0,2,8-15, not '%s'\n", optarg);
			return -1;
		default:
			fprintf(stderr, "Try 'dc-merge --help'.\n");
			return -1;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "dc-merge: give one JOB_ID, job folder or node file\nTry 'dc-merge --help'.\n");
		return -1;
	}
	o->job_id = argv[optind];
	if (o->no_compress && o->ops != &dc_perfetto_output) {
		fprintf(stderr, "dc-merge: --no-compress is for -f perfetto (json and pfw: leave out .gz)\n");
		return -1;
	}
	if (o->no_compress)
		o->ops = &dc_perfetto_raw_output;
	if ((o->part || o->stitch) && o->ops != &dc_hdf5_output && !dc_output_is_perfetto(o->ops)) {
		fprintf(stderr, "dc-merge: --part and --stitch make HDF5 or Perfetto traces: add -f hdf5 or -f perfetto\n");
		return -1;
	}
	if (o->part && o->stitch) {
		fprintf(stderr, "dc-merge: --part and --stitch are two steps: run the parts first, then one stitch\n");
		return -1;
	}
	if ((o->part || o->stitch) && (o->ranks || o->from_ns || o->to_ns != UINT64_MAX)) {
		fprintf(stderr, "dc-merge: --part and --stitch keep every event: select ranks or times when you "
				"read the result, or merge without them\n");
		return -1;
	}
	if (o->part && o->output) {
		fprintf(stderr, "dc-merge: --part writes its files into the parts folder: use --parts DIR, not -o\n");
		return -1;
	}
	return 0;
}

/* ---- progress ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show_progress(unsigned long long done, unsigned long long total, bool last)
{
	int pct = total ? (int)(done * 100 / total) : 100, bar = pct / 5;

	fprintf(stderr, "\rdc-merge: [%.*s%*s] %3d%% %llu/%llu records%s", bar, "####################",
		20 - bar, "", pct, done, total, last ? "\n" : "");
}

/* ---- the merge ---- */

static bool keep_event(const struct options *o, const struct dc_job *job, const struct dc_merge_item *it,
		       __u32 pid, __u64 dur)
{
	__u64 start = it->wall_ns - job->origin_ns;

	if (start + dur < o->from_ns || start > o->to_ns)
		return false;
	if (o->ranks) {
		const struct dc_process *p = dc_node_process(it->node, pid);

		return p && p->rank >= 0 && p->rank < MAX_RANK && o->ranks[p->rank];
	}
	return true;
}

static int merge(const struct options *o, struct dc_job *job, void *w, unsigned long long *written)
{
	struct dc_merge *m = dc_merge_new(job);
	unsigned long long total = job->events;
	struct dc_merge_item it;
	double next_show = now_s() + 0.2;
	int rc = 0, k;
	bool show = o->progress == 1 || (o->progress == -1 && isatty(STDERR_FILENO));

	if (!m)
		return -1;
	for (size_t i = 0; i < job->nruns; i++)
		if (job->runs[i].hdr.type == DC_CHUNK_COUNTERS)
			total += job->runs[i].hdr.count;
	while (!rc && (k = dc_merge_next(m, &it)) > 0) {
		if (it.type == DC_CHUNK_EVENTS) {
			const struct dc_event *e = it.rec;

			if (keep_event(o, job, &it, e->pid, e->dur)) {
				rc = o->ops->event(w, it.node, e, it.wall_ns);
				++*written;
			}
		} else {
			const struct dc_counter *c = it.rec;

			if (keep_event(o, job, &it, c->pid, 0)) {
				rc = o->ops->counter(w, it.node, c, it.wall_ns);
				++*written;
			}
		}
		if (show && (dc_merge_done(m) & 0xffff) == 0 && now_s() >= next_show) {
			show_progress(dc_merge_done(m), total, false);
			next_show = now_s() + 0.2;
		}
	}
	if (show)
		show_progress(dc_merge_done(m), total, true);
	dc_merge_free(m);
	return rc || k < 0 ? -1 : 0;
}

static void summary(const struct dc_job *job, const char *path, unsigned long long written)
{
	struct stat st;
	double span = job->last_ns > job->first_ns ? (job->last_ns - job->first_ns) / 1e9 : 0;

	if (stat(path, &st))
		st.st_size = 0;
	fprintf(stderr, "dc-merge: job %s: %zu node%s, %d rank%s, %llu records written (of %llu events in the "
			"node files; %llu lost by the agents), trace span %.3f s, %s (%.1f MiB)\n",
		job->id, job->nnodes, job->nnodes == 1 ? "" : "s", job->ranks, job->ranks == 1 ? "" : "s",
		written, job->events, job->lost, span, path, st.st_size / 1048576.0);
}

int dc_merge_run(const struct options *o, struct dc_job *job, const char *path)
{
	char err[PATH_MAX + 512];
	unsigned long long written = 0;
	struct dc_out_file out;
	void *w;
	int rc;

	if (dc_out_file_open(&out, path, o->output != NULL, o->ops == &dc_hdf5_output || o->ops == &dc_hdf5_part_output,
			      err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		return -1;
	}
	w = o->ops->open(out.in_place ? path : out.tmp_path, out.fd, job, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "dc-merge: %s\n", err);
		dc_out_file_close(&out, false);
		return -1;
	}
	rc = merge(o, job, w, &written);
	if (rc)
		fprintf(stderr, "dc-merge: the merge failed (out of memory or output error)\n");
	if (o->ops->close(w, !rc, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		rc = -1;
	}
	if (!rc && dc_out_file_publish(&out, o->group_read, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		rc = -1;
	}
	dc_out_file_close(&out, !rc);
	if (rc)
		return -1;
	if (!o->quiet)
		summary(job, path, written);
	/* A filter that selects nothing is said, even with -q. */
	if (!written && job->events && (o->ranks || o->from_ns || o->to_ns != UINT64_MAX))
		fprintf(stderr, "dc-merge: warning: --time-range/--ranks selected none of the job's %llu events "
				"(%d ranks, trace span %.3f s)\n", job->events, job->ranks,
			job->last_ns > job->first_ns ? (job->last_ns - job->first_ns) / 1e9 : 0);
	return 0;
}

int main(int argc, char **argv)
{
	char input[PATH_MAX], job_id[PATH_MAX], output[PATH_MAX], err[PATH_MAX + 256];
	struct options o;
	struct dc_job job;
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (dc_job_locate(o.job_id, o.input, input, job_id, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		free(o.ranks);
		return 1;
	}
	o.job_id = job_id;
	o.job_dir = input;
	/* By default beside the node files. */
	if (o.output)
		snprintf(output, sizeof(output), "%s", o.output);
	else if ((size_t)snprintf(output, sizeof(output), "%s/%s%s", input, job_id, o.ops->suffix) >= sizeof(output)) {
		fprintf(stderr, "dc-merge: %s: the output's name is too long: give -o\n", input);
		free(o.ranks);
		return 1;
	}
	if (dc_job_open(input, o.job_id, &job, err, sizeof(err))) {
		fprintf(stderr, "dc-merge: %s\n", err);
		free(o.ranks);
		return 1;
	}
	if (o.ranks && !job.ranks) {
		fprintf(stderr, "dc-merge: --ranks: job %s has no MPI ranks (was libdcpmpi.so preloaded?)\n", o.job_id);
		rc = 1;
	} else {
		rc = o.stitch ? dc_merge_stitch(&o, &job, output) : o.part ? dc_merge_parts(&o, &job) :
		     dc_merge_run(&o, &job, output) ? 1 : 0;
	}
	dc_job_close(&job);
	free(o.ranks);
	return rc;
}
