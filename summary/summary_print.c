// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-summary's reports as text for people and as JSON for scripts.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "io_table.h"
#include "summary.h"

/* ---- output ---- */

int dc_summary_by_fn(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	int c = strcmp(x->level, y->level);

	return c ? c : strcmp(x->name, y->name);
}

int dc_summary_by_bytes(const void *a, const void *b)
{
	const struct file_row *x = a, *y = b;

	return x->t.bytes < y->t.bytes ? 1 : x->t.bytes > y->t.bytes ? -1 : strcmp(x->path, y->path);
}

int dc_summary_by_time(const void *a, const void *b)
{
	const struct file_row *x = a, *y = b;

	return x->t.time_ns < y->t.time_ns ? 1 : x->t.time_ns > y->t.time_ns ? -1 : strcmp(x->path, y->path);
}

int *dc_summary_slowest_ranks(const struct summary *s, int *n)
{
	int *v = malloc((s->nranks + 1) * sizeof(int));

	*n = 0;
	for (int r = 0; v && r < s->nranks; r++)
		if (s->ranks[r].seen)
			v[(*n)++] = r;
	/* Insertion sort: a few thousand ranks at most. */
	for (int i = 1; v && i < *n; i++)
		for (int j = i; j > 0 && s->ranks[v[j]].t.time_ns > s->ranks[v[j - 1]].t.time_ns; j--) {
			int t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

static void json_str(const char *s)
{
	char *e = dc_json_escaped(s);

	printf("\"%s\"", e ? e : "");
	free(e);
}

static void json_totals(const struct totals *t)
{
	printf("\"calls\":%llu,\"bytes\":%llu,\"time_s\":%.9f,\"max_s\":%.9f", (unsigned long long)t->calls,
	       (unsigned long long)t->bytes, t->time_ns / 1e9, t->max_ns / 1e9);
}

static void json_files(const char *key, struct file_row *files, size_t n, int top)
{
	printf(",\"%s\":[", key);
	for (size_t i = 0; i < n && (int)i < top; i++) {
		printf(i ? ",{\"level\":" : "{\"level\":");
		json_str(files[i].level);
		printf(",\"path\":");
		json_str(files[i].path);
		putchar(',');
		json_totals(&files[i].t);
		putchar('}');
	}
	putchar(']');
}

/* The job's bytes read and written per bin, all ranks together. */
static void json_timeline(const struct summary *s)
{
	printf(",\"timeline\":{\"bin_s\":%.9f,\"read_bytes\":[", s->tl_bin_ns / 1e9);
	for (int op = 0; op < 2; op++) {
		for (int b = 0; b < TL_BINS; b++) {
			unsigned long long sum = 0;

			for (int r = 0; r <= s->nranks; r++)
				sum += s->tl[r][op][b];
			printf("%s%llu", b ? "," : "", sum);
		}
		printf(op ? "]}" : "],\"write_bytes\":[");
	}
}

void dc_summary_print_json(struct summary *s, int top)
{
	const struct job_info *job = &s->job;
	double span = dc_summary_span_s(s);
	int nslow, *slow = dc_summary_slowest_ranks(s, &nslow);

	printf("{\"job_id\":");
	json_str(job->id);
	printf(",\"profile_calls\":%llu", job->counted);
	printf(",\"nodes\":%zu,\"mpi_ranks\":%d,\"events\":%llu,\"events_skipped_damaged\":%llu,"
	       "\"lost_events\":%llu,\"span_s\":%.9f", job->nnodes, job->ranks, job->events, job->skipped, job->lost,
	       span);
	if (job->skipped) {
		printf(",\"skipped_because\":");
		json_str(job->skip_reason);
	}
	printf(",\"functions\":[");
	for (size_t i = 0; i < s->nfns; i++) {
		printf(i ? ",{\"level\":" : "{\"level\":");
		json_str(s->fns[i].level);
		printf(",\"function\":");
		json_str(s->fns[i].name);
		putchar(',');
		json_totals(&s->fns[i].t);
		putchar('}');
	}
	printf("],\"levels\":[");
	for (size_t i = 0; i < s->nlevels; i++) {
		const struct level_row *l = &s->levels[i];

		printf(i ? ",{\"level\":" : "{\"level\":");
		json_str(l->level);
		putchar(',');
		json_totals(&l->t);
		printf(",\"read_bytes\":%llu,\"write_bytes\":%llu,\"bandwidth_mib_s\":%.3f",
		       (unsigned long long)l->read_bytes, (unsigned long long)l->write_bytes,
		       span > 0 ? (l->read_bytes + l->write_bytes) / 1048576.0 / span : 0);
		for (int op = 0; op < 2; op++) {
			printf(",\"%s_sizes\":{", op ? "write" : "read");
			for (int b = 0; b < NBINS; b++)
				printf("%s\"%s\":%llu", b ? "," : "", dc_summary_bin_names[b], (unsigned long long)l->hist[op][b]);
			putchar('}');
		}
		putchar('}');
	}
	printf("],\"rank_level\":");
	json_str(s->base_level ? s->base_level : "");
	printf(",\"ranks\":[");
	for (int i = 0; i < nslow && i < top; i++) {
		printf(i ? ",{\"rank\":%d," : "{\"rank\":%d,", s->rank_ids[slow[i]]);
		json_totals(&s->ranks[slow[i]].t);
		putchar('}');
	}
	putchar(']');
	fflush(stdout);
	if (s->io)
		dc_io_table_json(s->io, stdout);
	json_timeline(s);
	printf(",\"node_warnings\":[");
	for (size_t i = 0; i < s->nwarnings; i++) {
		printf(i ? ",{\"host\":" : "{\"host\":");
		json_str(s->warnings[i].host);
		printf(",\"problem\":");
		json_str(s->warnings[i].what);
		putchar('}');
	}
	putchar(']');
	qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_bytes);
	json_files("top_files_by_bytes", s->files, s->nfiles, top);
	qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_time);
	json_files("top_files_by_time", s->files, s->nfiles, top);
	printf("}\n");
	free(slow);
}

static void text_files(const char *title, struct file_row *files, size_t n, int top, int lw)
{
	if (!n)
		return;
	printf("\n## %s (bytes: data read and written)\n%-*s %10s %14s %10s  %s\n", title, lw, "level", "calls",
	       "bytes", "time_s", "path");
	for (size_t i = 0; i < n && (int)i < top; i++)
		printf("%-*s %10llu %14llu %10.6f  %s\n", lw, dc_text_view(files[i].level),
		       (unsigned long long)files[i].t.calls, (unsigned long long)files[i].t.bytes,
		       files[i].t.time_ns / 1e9, dc_text_view(files[i].path));
}

/* The level column: as wide as the longest level's name (pagecache). */
static int level_width(const struct summary *s)
{
	int w = 8;

	for (size_t i = 0; i < s->nlevels; i++) {
		int n = strlen(dc_text_view(s->levels[i].level));

		w = n > w ? n : w;
	}
	return w;
}

static bool any_access_sizes(const struct summary *s)
{
	for (size_t i = 0; i < s->nlevels; i++)
		for (int op = 0; op < 2; op++)
			for (int b = 0; b < NBINS; b++)
				if (s->levels[i].hist[op][b])
					return true;
	return false;
}

double dc_summary_span_s(const struct summary *s)
{
	return (s->job.last_ns - s->job.first_ns) / 1e9;
}

void dc_summary_print_text(struct summary *s, int top)
{
	const struct job_info *job = &s->job;
	double span = dc_summary_span_s(s);
	int nslow, *slow = dc_summary_slowest_ranks(s, &nslow), lw = level_width(s);
	/* Profile mode's totals have no longest call, nor a span to divide by. */
	bool profile = job->counted && !job->events, sizes = any_access_sizes(s);
	char cell[32];

	printf("# DataCrumbs job summary: job %s\n", dc_text_view(job->id));
	printf("# nodes %zu, MPI ranks %d, events %llu, lost events %llu%s, span %.6f s\n", job->nnodes,
	       job->ranks, job->events, job->lost, job->lost ? " (counts are low by as much)" : "", span);
	if (job->counted)
		printf("# profile mode: %llu calls in the in-kernel totals below: calls, bytes and time; no per-call "
		       "events, so no longest call, bandwidth, access sizes, files or per-node reads and writes\n",
		       job->counted);
	if (job->skipped)
		printf("# warning: %llu events in damaged chunks were skipped and are counted nowhere below (%s)\n",
		       job->skipped, dc_text_view(job->skip_reason));
	for (size_t i = 0; i < s->nwarnings; i++)
		printf("# warning: node %s: %s\n", dc_text_view(s->warnings[i].host), dc_text_view(s->warnings[i].what));
	if (s->nfns)
		printf("\n## Per level and function\n%-*s %-24s %10s %14s %12s %10s\n", lw, "level", "function",
		       "calls", "bytes", "time_s", "max_ms");
	for (size_t i = 0; i < s->nfns; i++) {
		snprintf(cell, sizeof(cell), "%.3f", s->fns[i].t.max_ns / 1e6);
		printf("%-*s %-24s %10llu %14llu %12.6f %10s\n", lw, dc_text_view(s->fns[i].level),
		       dc_text_view(s->fns[i].name), (unsigned long long)s->fns[i].t.calls,
		       (unsigned long long)s->fns[i].t.bytes, s->fns[i].t.time_ns / 1e9, profile ? "-" : cell);
	}
	if (s->nlevels)
		printf("\n## Per level\n%-*s %10s %14s %14s %12s %14s\n", lw, "level", "calls", "read_bytes",
		       "write_bytes", "time_s", "MiB/s (span)");
	for (size_t i = 0; i < s->nlevels; i++) {
		const struct level_row *l = &s->levels[i];

		snprintf(cell, sizeof(cell), "%.3f", span > 0 ? (l->read_bytes + l->write_bytes) / 1048576.0 / span : 0);
		printf("%-*s %10llu %14llu %14llu %12.6f %14s\n", lw, dc_text_view(l->level),
		       (unsigned long long)l->t.calls, (unsigned long long)l->read_bytes,
		       (unsigned long long)l->write_bytes, l->t.time_ns / 1e9, span > 0 ? cell : "-");
	}
	if (sizes) {
		printf("\n## Access sizes (calls by bytes moved)\n%-*s %-5s", lw, "level", "op");
		for (int b = 0; b < NBINS; b++)
			printf(" %9s", dc_summary_bin_names[b]);
		putchar('\n');
	}
	for (size_t i = 0; i < s->nlevels && sizes; i++)
		for (int op = 0; op < 2; op++) {
			uint64_t any = 0;

			/* Only a level's reads or writes that there were. */
			for (int b = 0; b < NBINS; b++)
				any |= s->levels[i].hist[op][b];
			if (!any)
				continue;
			printf("%-*s %-5s", lw, dc_text_view(s->levels[i].level), op ? "write" : "read");
			for (int b = 0; b < NBINS; b++)
				printf(" %9llu", (unsigned long long)s->levels[i].hist[op][b]);
			putchar('\n');
		}
	if (nslow) {
		printf("\n## Slowest ranks (I/O time at the %s level)\n%6s %10s %14s %12s\n", dc_text_view(s->base_level), "rank",
		       "calls", "bytes", "time_s");
		for (int i = 0; i < nslow && i < top; i++)
			printf("%6d %10llu %14llu %12.6f\n", s->rank_ids[slow[i]], (unsigned long long)s->ranks[slow[i]].t.calls,
			       (unsigned long long)s->ranks[slow[i]].t.bytes, s->ranks[slow[i]].t.time_ns / 1e9);
	}
	if (s->io && s->base_level)
		dc_io_table_text(s->io, stdout, s->base_level, top);
	qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_bytes);
	text_files("Top files by bytes", s->files, s->nfiles, top, lw);
	qsort(s->files, s->nfiles, sizeof(*s->files), dc_summary_by_time);
	text_files("Top files by time", s->files, s->nfiles, top, lw);
	free(slow);
}

