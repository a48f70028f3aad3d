// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary --html: the job report as one self-contained page. Charts are
 * inline SVG drawn here, styles are inline, and nothing is fetched, so the
 * page opens from a mail attachment or a login node's home folder as well
 * as from a web server. Every figure comes from the same model as the JSON
 * report (summary.h); the cells that show one carry data-k, the JSON key
 * they show, so a test can hold the page to the JSON.
 *
 * Each chart has a colour of its own, so a screenshot tells which charts
 * were drawn.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "out_file.h"
#include "summary.h"

#define C_READ "#1f77b4"
#define C_WRITE "#ff7f0e"
#define C_LEVEL "#2ca02c"
#define C_SIZE_READ "#17becf"
#define C_SIZE_WRITE "#bcbd22"
#define C_RANK "#d62728"
/* The heatmap runs from white to this, the busiest cell. */
#define HEAT_R 0x54
#define HEAT_G 0x27
#define HEAT_B 0x8f
#define HEAT_ROWS 64

#define CHART_W 760

static void esc(FILE *f, const char *s)
{
	char *e = dc_html_escaped(s ? s : "");

	fputs(e ? e : "?", f);
	free(e);
}

static const char *human_bytes(double b, char *buf, size_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;

	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, units[u]);
	return buf;
}

static void style(FILE *f)
{
	fputs("<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222}\n"
	      "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\n"
	      "table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px;text-align:right}\n"
	      "th{background:#f4f4f4}td.l,th.l{text-align:left}tr:nth-child(even) td{background:#fafafa}\n"
	      ".warn{background:#fff3cd;border-left:5px solid #d39e00;padding:6px 10px;margin:6px 0}\n"
	      ".note{color:#555}svg{display:block;margin:6px 0}svg text{font:11px sans-serif;fill:#333}\n"
	      ".path{font-family:monospace;word-break:break-all}\n"
	      "</style>\n",
	      f);
}

/* ---- header and warnings ---- */

static void warnings(FILE *f, const struct summary *s)
{
	const struct job_info *j = &s->job;

	if (j->lost)
		fprintf(f, "<div class=\"warn\">Lost events: <b data-k=\"lost_events\">%llu</b> calls were not "
			   "recorded (the agent's buffer was full); the counts below are low by as much.</div>\n",
			j->lost);
	if (j->skipped) {
		fprintf(f, "<div class=\"warn\">Damaged data: <b data-k=\"events_skipped_damaged\">%llu</b> events "
			   "in damaged chunks were skipped and are counted nowhere below (",
			j->skipped);
		esc(f, j->skip_reason);
		fputs(").</div>\n", f);
	}
	for (size_t i = 0; i < s->nwarnings; i++) {
		fputs("<div class=\"warn\" data-k=\"node_warning\">Incomplete node file: node <b>", f);
		esc(f, s->warnings[i].host);
		fputs("</b>: ", f);
		esc(f, s->warnings[i].what);
		fputs("</div>\n", f);
	}
}

static void facts(FILE *f, const struct summary *s)
{
	const struct job_info *j = &s->job;

	fprintf(f, "<table id=\"facts\"><tr><th>nodes</th><th>MPI ranks</th><th>events</th><th>lost events</th>"
		   "<th>span (s)</th><th>profile-mode calls</th></tr>\n<tr><td data-k=\"nodes\">%zu</td>"
		   "<td data-k=\"mpi_ranks\">%d</td><td data-k=\"events\">%llu</td><td data-k=\"lost_events\">%llu</td>"
		   "<td data-k=\"span_s\">%.6f</td><td data-k=\"profile_calls\">%llu</td></tr></table>\n",
		j->nnodes, j->ranks, j->events, j->lost, dc_summary_span_s(s), j->counted);
	if (j->counted)
		fputs("<p class=\"note\">Profile mode: the agent kept in-kernel totals per process and function, "
		      "not each call, so there are no access sizes, files or timeline below.</p>\n",
		      f);
}

/* ---- charts ---- */

/* Horizontal bars, one per row, each with its label and its value. */
static void hbars(FILE *f, const char *id, size_t n, char *const *labels, const double *v, char *const *shown,
		  const char *color)
{
	const int row = 24, left = 200, right = 140, plot = CHART_W - left - right;
	double max = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	fprintf(f, "<svg id=\"%s\" width=\"%d\" height=\"%zu\" role=\"img\">\n", id, CHART_W, row * n + 8);
	for (size_t i = 0; i < n; i++) {
		int y = 4 + row * (int)i;
		double w = max > 0 ? plot * v[i] / max : 0;

		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 15);
		esc(f, labels[i]);
		fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>"
			   "<text x=\"%.1f\" y=\"%d\">%s</text>\n",
			left, y + 2, w, color, left + w + 6, y + 15, shown[i]);
	}
	fputs("</svg>\n", f);
}

/* Bins of the timeline up to the last one with I/O. */
static int used_bins(const struct summary *s)
{
	int n = 1;

	for (int r = 0; r <= s->nranks; r++)
		for (int op = 0; op < 2; op++)
			for (int b = n; b < TL_BINS; b++)
				if (s->tl[r][op][b])
					n = b + 1;
	return n;
}

/* Columns of bytes/s over time, one per bin, for one operation. */
static void columns(FILE *f, const struct summary *s, int op, int nbins)
{
	const int left = 80, top = 10, plot_h = 130, plot_w = CHART_W - left - 20;
	double bin_s = s->tl_bin_ns / 1e9, max = 0, bw = (double)plot_w / nbins;
	uint64_t v[TL_BINS] = { 0 };
	char buf[32];

	for (int b = 0; b < TL_BINS; b++) {
		for (int r = 0; r <= s->nranks; r++)
			v[b] += s->tl[r][op][b];
		if (v[b] > max)
			max = v[b];
	}
	fprintf(f, "<svg id=\"timeline_%s\" width=\"%d\" height=\"%d\" role=\"img\" data-k=\"timeline.%s_bytes\" "
		   "data-v=\"",
		op ? "write" : "read", CHART_W, plot_h + top + 34, op ? "write" : "read");
	for (int b = 0; b < TL_BINS; b++)
		fprintf(f, b ? ",%llu" : "%llu", (unsigned long long)v[b]);
	fprintf(f, "\">\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s/s</text>", left - 6, top + 10,
		human_bytes(bin_s > 0 ? max / bin_s : 0, buf, sizeof(buf)));
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>", left - 6, top + plot_h);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", left - 6, top + plot_h / 2,
		op ? "write" : "read");
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", left, top + plot_h,
		left + plot_w, top + plot_h);
	for (int b = 0; b < nbins; b++) {
		double h = max > 0 ? plot_h * v[b] / max : 0;

		if (v[b])
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
				left + b * bw, top + plot_h - h, bw > 2 ? bw - 1 : bw, h, op ? C_WRITE : C_READ);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f s</text>\n"
		   "</svg>\n",
		left, top + plot_h + 16, left + plot_w, top + plot_h + 16, nbins * bin_s);
}

/* Rows of the heatmap: each rank, or bands of ranks when there are many,
 * and the processes without a rank when they did I/O. */
static void heatmap(FILE *f, const struct summary *s, int nbins)
{
	const int left = 110, cell_h = 14, plot_w = CHART_W - left - 20;
	int per = s->nranks > HEAT_ROWS ? (s->nranks + HEAT_ROWS - 1) / HEAT_ROWS : 1;
	int bands = s->nranks ? (s->nranks + per - 1) / per : 0, rows;
	double bw = (double)plot_w / nbins, max = 0;
	uint64_t unranked = 0;

	for (int b = 0; b < TL_BINS; b++)
		unranked += s->tl[s->nranks][0][b] + s->tl[s->nranks][1][b];
	rows = bands + (unranked ? 1 : 0);
	uint64_t(*cell)[TL_BINS] = calloc(rows ? rows : 1, sizeof(*cell));
	uint64_t *sum = calloc(rows ? rows : 1, sizeof(*sum));

	if (!cell || !sum) {
		free(cell);
		free(sum);
		return;
	}
	for (int r = 0; r <= s->nranks; r++) {
		int row = r < s->nranks ? r / per : bands;

		if (row >= rows)
			continue;
		for (int b = 0; b < TL_BINS; b++) {
			cell[row][b] += s->tl[r][0][b] + s->tl[r][1][b];
			sum[row] += s->tl[r][0][b] + s->tl[r][1][b];
		}
	}
	for (int row = 0; row < rows; row++)
		for (int b = 0; b < nbins; b++)
			if (cell[row][b] > max)
				max = cell[row][b];
	fprintf(f, "<svg id=\"heatmap\" width=\"%d\" height=\"%d\" role=\"img\">\n", CHART_W, rows * cell_h + 24);
	for (int row = 0; row < rows; row++) {
		int y = 4 + row * cell_h, lo = row * per, hi = lo + per - 1 < s->nranks - 1 ? lo + per - 1 : s->nranks - 1;
		char label[48];

		if (row == bands)
			snprintf(label, sizeof(label), "no rank");
		else if (per == 1)
			snprintf(label, sizeof(label), "rank %d", s->rank_ids[lo]);
		else
			snprintf(label, sizeof(label), "ranks %d-%d", s->rank_ids[lo], s->rank_ids[hi]);
		fprintf(f, "<g data-k=\"heat_row\" data-label=\"%s\" data-bytes=\"%llu\"><text x=\"%d\" y=\"%d\" "
			   "text-anchor=\"end\">%s</text>",
			label, (unsigned long long)sum[row], left - 6, y + 11, label);
		for (int b = 0; b < nbins; b++) {
			double t = max > 0 ? sqrt(cell[row][b] / max) : 0;

			if (!cell[row][b])
				continue;
			fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\"/>",
				left + b * bw, y, bw + 0.3, cell_h - 1, (int)lround(255 + (HEAT_R - 255) * t),
				(int)lround(255 + (HEAT_G - 255) * t), (int)lround(255 + (HEAT_B - 255) * t));
		}
		fputs("</g>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f s</text>"
		   "</svg>\n",
		left, rows * cell_h + 18, CHART_W - 20, rows * cell_h + 18, nbins * s->tl_bin_ns / 1e9);
	free(cell);
	free(sum);
}

static void io_over_time(FILE *f, const struct summary *s)
{
	int nbins;

	if (!s->tl_bin_ns)
		return;
	nbins = used_bins(s);
	fprintf(f, "<h2>I/O over time</h2>\n<p class=\"note\">Bytes read and written per second at the %s level, "
		   "in bins of %.6f s; a call's bytes count where it began.</p>\n",
		s->base_level ? s->base_level : "?", s->tl_bin_ns / 1e9);
	columns(f, s, 0, nbins);
	columns(f, s, 1, nbins);
	fputs("<p class=\"note\">Per rank: darker is more bytes per second.</p>\n", f);
	heatmap(f, s, nbins);
}

static void time_per_level(FILE *f, const struct summary *s)
{
	char **labels = calloc(s->nlevels + 1, sizeof(char *)), **shown = calloc(s->nlevels + 1, sizeof(char *));
	double *v = calloc(s->nlevels + 1, sizeof(double));

	fputs("<h2>Time per level</h2>\n", f);
	for (size_t i = 0; labels && shown && v && i < s->nlevels; i++) {
		labels[i] = s->levels[i].level;
		v[i] = s->levels[i].t.time_ns / 1e9;
		shown[i] = malloc(32);
		if (shown[i])
			snprintf(shown[i], 32, "%.6f s", v[i]);
	}
	if (labels && shown && v)
		hbars(f, "levels", s->nlevels, labels, v, shown, C_LEVEL);
	fputs("<table><tr><th class=\"l\">level</th><th>calls</th><th>read bytes</th><th>write bytes</th>"
	      "<th>time (s)</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->nlevels; i++) {
		const struct level_row *l = &s->levels[i];
		char *name = dc_html_escaped(l->level);

		fprintf(f, "<tr><td class=\"l\">%s</td><td data-k=\"levels.%s.calls\">%llu</td>"
			   "<td data-k=\"levels.%s.read_bytes\">%llu</td><td data-k=\"levels.%s.write_bytes\">%llu</td>"
			   "<td data-k=\"levels.%s.time_s\">%.6f</td></tr>\n",
			name, name, (unsigned long long)l->t.calls, name, (unsigned long long)l->read_bytes, name,
			(unsigned long long)l->write_bytes, name, l->t.time_ns / 1e9);
		free(name);
	}
	fputs("</table>\n", f);
	for (size_t i = 0; shown && i < s->nlevels; i++)
		free(shown[i]);
	free(labels);
	free(shown);
	free(v);
}

/* One chart per level that read or wrote: calls per size bin, read and
 * write side by side. */
static void access_sizes(FILE *f, const struct summary *s)
{
	const int left = 50, plot_h = 120, top = 18, group = (CHART_W - left - 10) / NBINS;

	fputs("<h2>Access sizes</h2>\n<p class=\"note\">Calls by bytes moved.</p>\n", f);
	for (size_t i = 0; i < s->nlevels; i++) {
		const struct level_row *l = &s->levels[i];
		uint64_t max = 0;
		char *name;

		for (int op = 0; op < 2; op++)
			for (int b = 0; b < NBINS; b++)
				if (l->hist[op][b] > max)
					max = l->hist[op][b];
		if (!max)
			continue;
		name = dc_html_escaped(l->level);
		fprintf(f, "<h3>%s</h3>\n<svg class=\"sizes\" width=\"%d\" height=\"%d\" role=\"img\">\n", name,
			CHART_W, plot_h + top + 40);
		for (int b = 0; b < NBINS; b++) {
			int x = left + b * group;

			for (int op = 0; op < 2; op++) {
				double h = plot_h * (double)l->hist[op][b] / max;

				fprintf(f, "<rect x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" fill=\"%s\" "
					   "data-k=\"levels.%s.%s_sizes.%s\" data-v=\"%llu\"/>",
					x + 4 + op * (group / 2 - 4), top + plot_h - h, group / 2 - 6, h,
					op ? C_SIZE_WRITE : C_SIZE_READ, name, op ? "write" : "read",
					dc_summary_bin_names[b], (unsigned long long)l->hist[op][b]);
				if (l->hist[op][b])
					fprintf(f, "<text x=\"%d\" y=\"%.2f\">%llu</text>", x + 4 + op * (group / 2 - 4),
						top + plot_h - h - 3, (unsigned long long)l->hist[op][b]);
			}
			fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 6, top + plot_h + 16, dc_summary_bin_names[b]);
		}
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">read"
			   "</text><rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">"
			   "write</text>\n</svg>\n",
			left, plot_h + top + 26, C_SIZE_READ, left + 14, plot_h + top + 35, left + 70, plot_h + top + 26,
			C_SIZE_WRITE, left + 84, plot_h + top + 35);
		free(name);
	}
}

static void file_table(FILE *f, const char *title, const char *key, struct file_row *files, size_t n, int top)
{
	fprintf(f, "<h3>%s</h3>\n<table><tr><th class=\"l\">level</th><th class=\"l\">path</th><th>calls</th>"
		   "<th>bytes</th><th>time (s)</th></tr>\n",
		title);
	for (size_t i = 0; i < n && (int)i < top; i++) {
		fputs("<tr><td class=\"l\">", f);
		esc(f, files[i].level);
		fprintf(f, "</td><td class=\"l path\" data-k=\"%s.%zu.path\">", key, i);
		esc(f, files[i].path);
		fprintf(f, "</td><td data-k=\"%s.%zu.calls\">%llu</td><td data-k=\"%s.%zu.bytes\">%llu</td>"
			   "<td data-k=\"%s.%zu.time_s\">%.6f</td></tr>\n",
			key, i, (unsigned long long)files[i].t.calls, key, i, (unsigned long long)files[i].t.bytes, key,
			i, files[i].t.time_ns / 1e9);
	}
	fputs("</table>\n", f);
}

static void slowest(FILE *f, const struct summary *s, int top)
{
	int n, *slow = dc_summary_slowest_ranks(s, &n);
	char **labels, **shown;
	double *v;

	if (!slow || !n) {
		free(slow);
		return;
	}
	n = n < top ? n : top;
	labels = calloc(n, sizeof(char *));
	shown = calloc(n, sizeof(char *));
	v = calloc(n, sizeof(double));
	fprintf(f, "<h2>Slowest ranks</h2>\n<p class=\"note\">Time inside I/O calls at the %s level.</p>\n",
		s->base_level ? s->base_level : "?");
	for (int i = 0; labels && shown && v && i < n; i++) {
		labels[i] = malloc(24);
		shown[i] = malloc(32);
		v[i] = s->ranks[slow[i]].t.time_ns / 1e9;
		if (labels[i])
			snprintf(labels[i], 24, "rank %d", s->rank_ids[slow[i]]);
		if (shown[i])
			snprintf(shown[i], 32, "%.6f s", v[i]);
	}
	if (labels && shown && v)
		hbars(f, "slowest", n, labels, v, shown, C_RANK);
	fputs("<table><tr><th>rank</th><th>calls</th><th>bytes</th><th>time (s)</th></tr>\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "<tr><td data-k=\"ranks.%d.rank\">%d</td><td data-k=\"ranks.%d.calls\">%llu</td>"
			   "<td data-k=\"ranks.%d.bytes\">%llu</td><td data-k=\"ranks.%d.time_s\">%.6f</td></tr>\n",
			i, s->rank_ids[slow[i]], i, (unsigned long long)s->ranks[slow[i]].t.calls, i,
			(unsigned long long)s->ranks[slow[i]].t.bytes, i, s->ranks[slow[i]].t.time_ns / 1e9);
	fputs("</table>\n", f);
	for (int i = 0; labels && shown && i < n; i++) {
		free(labels[i]);
		free(shown[i]);
	}
	free(labels);
	free(shown);
	free(v);
	free(slow);
}

static void functions(FILE *f, const struct summary *s)
{
	fputs("<h2>Per level and function</h2>\n<table><tr><th class=\"l\">level</th><th class=\"l\">function</th>"
	      "<th>calls</th><th>bytes</th><th>time (s)</th><th>max (ms)</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->nfns; i++) {
		const struct fn_row *r = &s->fns[i];

		fputs("<tr><td class=\"l\">", f);
		esc(f, r->level);
		fputs("</td><td class=\"l\">", f);
		esc(f, r->name);
		fprintf(f, "</td><td data-k=\"functions.%zu.calls\">%llu</td><td data-k=\"functions.%zu.bytes\">%llu"
			   "</td><td data-k=\"functions.%zu.time_s\">%.6f</td><td>%.3f</td></tr>\n",
			i, (unsigned long long)r->t.calls, i, (unsigned long long)r->t.bytes, i, r->t.time_ns / 1e9,
			r->t.max_ns / 1e6);
	}
	fputs("</table>\n", f);
}

static void page(FILE *f, struct summary *s, int top)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>DataCrumbs job ", f);
	esc(f, s->job.id);
	fputs("</title>\n", f);
	style(f);
	fputs("</head><body>\n<h1>DataCrumbs job report: job <span data-k=\"job_id\">", f);
	esc(f, s->job.id);
	fputs("</span></h1>\n", f);
	warnings(f, s);
	facts(f, s);
	io_over_time(f, s);
	time_per_level(f, s);
	access_sizes(f, s);
	slowest(f, s, top);
	if (s->nfiles) {
		fputs("<h2>Top files</h2>\n", f);
		qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_bytes);
		file_table(f, "By bytes", "top_files_by_bytes", s->files, s->nfiles, top);
		qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_time);
		file_table(f, "By time", "top_files_by_time", s->files, s->nfiles, top);
	}
	functions(f, s);
	fprintf(f, "<p class=\"note\">Made by dc-summary (DataCrumbs) %s.</p>\n</body></html>\n", DC_VERSION);
}

int dc_summary_write_html(struct summary *s, int top, const char *path)
{
	char err[PATH_MAX + 512];
	struct dc_out_file out;
	FILE *f = NULL;
	int fd, rc = -1;

	if (dc_out_file_open(&out, path, true, false, err, sizeof(err))) {
		fprintf(stderr, "dc-summary: %s\n", err);
		return -1;
	}
	fd = dup(out.fd);
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	if (f) {
		page(f, s, top);
		rc = fflush(f) || ferror(f) ? -1 : 0;
		if (fclose(f))
			rc = -1;
	}
	if (rc)
		fprintf(stderr, "dc-summary: cannot write %s: %s\n", path, strerror(errno));
	else if (dc_out_file_publish(&out, true, err, sizeof(err))) {
		fprintf(stderr, "dc-summary: %s\n", err);
		rc = -1;
	}
	dc_out_file_close(&out, !rc);
	return rc;
}
