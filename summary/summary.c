// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary: what darshan-parser and the Darshan job summary tell, from a
 * job's node files: per level and function calls, bytes and time; per rank
 * totals and the slowest ranks; top files; access-size histograms;
 * bandwidth; lost events. As text, or as JSON for scripts.
 */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nodeset.h"
#include "summary.h"

static const char usage[] =
"Usage: dc-summary JOB_ID [-i DIR] [--format text|json] [--top N] [--html FILE]\n"
"       dc-summary JOB_FOLDER|NODE_FILE [--format text|json] [--top N] [--html FILE]\n"
"       dc-summary MERGED.h5 [--format text|json] [--top N] [--html FILE]\n"
"\n"
"Summarizes a job's I/O from its node files (the job's folder, one of its\n"
"node files, or its id: then the folder is -i, else $DC_OUTPUT_DIR/JOB_ID,\n"
"else ./datacrumbs/JOB_ID), or from the HDF5 file dc-merge made of them:\n"
"per level and function\n"
"calls, bytes and time; per MPI rank totals and the slowest ranks; the top\n"
"files by bytes and by time; read and write size histograms; bandwidth;\n"
"lost events. Bytes are bytes moved; time is time inside the calls.\n"
"\n"
"  -i, --input DIR       the job's folder of node files, with a JOB_ID\n"
"  -f, --format FORMAT   text (default) or json\n"
"  -n, --top N           files and ranks listed (default 10)\n"
"  -H, --html FILE       also write the report as one self-contained web page\n"
"                        (charts inline, nothing fetched): I/O over time per\n"
"                        rank, access sizes, time per level, top files, the\n"
"                        slowest ranks, and warnings of lost or damaged data\n"
"  -h, --help            show this help\n"
"  -V, --version         show the version\n";


static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, 0, 'i' }, { "format", required_argument, 0, 'f' },
		{ "top", required_argument, 0, 'n' },	{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },	{ "html", required_argument, 0, 'H' },
		{ 0 },
	};
	const char *input = NULL, *html = NULL;
	char dir[PATH_MAX], id[PATH_MAX], err[PATH_MAX + 256];
	struct summary s = { 0 };
	int c, json = 0, top = 10, rc;

	while ((c = getopt_long(argc, argv, "i:f:n:H:hV", longopts, NULL)) != -1) {
		if (c == 'i') {
			input = optarg;
		} else if (c == 'f') {
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr, "dc-summary: --format: expected text or json, not '%s'\n", optarg);
				return 2;
			}
			json = !strcmp(optarg, "json");
		} else if (c == 'n') {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 1000000) {
				fprintf(stderr, "dc-summary: --top: expected a whole number from 1 to 1000000, not '%s'\n",
					optarg);
				return 2;
			}
			top = v;
		} else if (c == 'H') {
			html = optarg;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else if (c == 'V') {
			printf("dc-summary (DataCrumbs) %s\n", DC_VERSION);
			return 0;
		} else {
			fprintf(stderr, "Try 'dc-summary --help'.\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "dc-summary: give one JOB_ID, job folder, node file or merged .h5 file\n"
				"Try 'dc-summary --help'.\n");
		return 2;
	}
	if (is_file(argv[optind]) && !dc_is_node_file(argv[optind])) {
		rc = dc_summary_from_h5(&s, argv[optind]);
	} else if (dc_job_locate(argv[optind], input, dir, id, err, sizeof(err))) {
		fprintf(stderr, "dc-summary: %s\n", err);
		rc = -1;
	} else {
		rc = dc_summary_from_nodes(&s, dir, id);
	}
	if (!rc) {
		qsort(s.fns, s.nfns, sizeof(*s.fns), dc_summary_by_fn);
		if (json)
			dc_summary_print_json(&s, top);
		else
			dc_summary_print_text(&s, top);
		if (html && dc_summary_write_html(&s, top, html))
			rc = -1;
	}
	dc_summary_free(&s);
	return rc ? 1 : 0;
}