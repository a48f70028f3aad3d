// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "io_table.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

struct side {
	uint64_t calls, bytes, time_ns;
};

struct row {
	struct side op[2]; /* read, write */
	int node;          /* of a rank: its node, -1 unknown */
	bool seen;
};

struct dc_io_table {
	char **hosts;
	struct row *nodes, *ranks;
	int *rank_ids;
	size_t nnodes;
	int nranks;
};

struct dc_io_table *dc_io_table_new(size_t nnodes, const int *rank_ids, int nranks)
{
	struct dc_io_table *t = calloc(1, sizeof(*t));

	/* A node count is a file's claim too: one past what memory holds is refused. */
	if (!t || nnodes >= SIZE_MAX / sizeof(struct row) - 1) {
		free(t);
		return NULL;
	}
	t->nnodes = nnodes;
	t->nranks = nranks > 0 ? nranks : 0;
	t->hosts = calloc(nnodes + 1, sizeof(*t->hosts));
	t->nodes = calloc(nnodes + 1, sizeof(*t->nodes));
	t->ranks = calloc(t->nranks + 1, sizeof(*t->ranks));
	t->rank_ids = calloc(t->nranks + 1, sizeof(*t->rank_ids));
	if (!t->hosts || !t->nodes || !t->ranks || !t->rank_ids) {
		t->nnodes = 0;
		dc_io_table_free(t);
		return NULL;
	}
	if (t->nranks)
		memcpy(t->rank_ids, rank_ids, t->nranks * sizeof(*rank_ids));
	for (int r = 0; r < t->nranks; r++)
		t->ranks[r].node = -1;
	return t;
}

void dc_io_table_free(struct dc_io_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->hosts && i < t->nnodes; i++)
		free(t->hosts[i]);
	free(t->hosts);
	free(t->nodes);
	free(t->ranks);
	free(t->rank_ids);
	free(t);
}

int dc_io_table_host(struct dc_io_table *t, size_t i, const char *host)
{
	if (i >= t->nnodes)
		return -1;
	free(t->hosts[i]);
	t->hosts[i] = strdup(host);
	return t->hosts[i] ? 0 : -1;
}

static void add_to(struct row *r, int op, uint64_t bytes, uint64_t dur)
{
	r->op[op].calls++;
	r->op[op].bytes += bytes;
	r->op[op].time_ns += dur;
	r->seen = true;
}

void dc_io_table_add(struct dc_io_table *t, int node, int rank, int op, uint64_t bytes, uint64_t dur_ns)
{
	if (op != 1 && op != 2)
		return;
	if (node >= 0 && (size_t)node < t->nnodes)
		add_to(&t->nodes[node], op - 1, bytes, dur_ns);
	if (rank >= 0 && rank < t->nranks) {
		add_to(&t->ranks[rank], op - 1, bytes, dur_ns);
		t->ranks[rank].node = node;
	}
}

static const char *host_of(const struct dc_io_table *t, int node)
{
	return node >= 0 && (size_t)node < t->nnodes && t->hosts[node] ? t->hosts[node] : "?";
}

/* The index of the row with the most time in op, or -1. */
static int slowest(const struct row *rows, size_t n, int op)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (rows[i].op[op].calls && (best < 0 || rows[i].op[op].time_ns > rows[best].op[op].time_ns))
			best = i;
	return best;
}

static void text_row(FILE *f, const char *name, const struct row *r)
{
	fprintf(f, "%-16s %10llu %14llu %10.6f %10llu %14llu %10.6f\n", name,
		(unsigned long long)r->op[0].calls, (unsigned long long)r->op[0].bytes, r->op[0].time_ns / 1e9,
		(unsigned long long)r->op[1].calls, (unsigned long long)r->op[1].bytes, r->op[1].time_ns / 1e9);
}

/* Sections only where there is something to show: a job's reads and
 * writes (none in profile mode, which has no per-call events), its ranks. */
void dc_io_table_text(const struct dc_io_table *t, FILE *f, const char *level, int top)
{
	static const char *const ops[2] = { "reads", "writes" };
	bool any = false, ranks = false;
	char name[64];
	int shown = 0;

	for (size_t i = 0; i < t->nnodes; i++)
		any |= t->nodes[i].op[0].calls || t->nodes[i].op[1].calls;
	for (int r = 0; r < t->nranks; r++)
		ranks |= t->ranks[r].seen;
	if (!any)
		return;
	fprintf(f, "\n## Per node (reads and writes at the %s level)\n%-16s %10s %14s %10s %10s %14s %10s\n",
		dc_text_view(level), "host", "reads", "read_bytes", "read_s", "writes", "write_bytes", "write_s");
	for (size_t i = 0; i < t->nnodes; i++)
		text_row(f, dc_text_view(host_of(t, i)), &t->nodes[i]);
	if (ranks)
		fprintf(f, "\n## Per rank\n%-16s %10s %14s %10s %10s %14s %10s\n", "rank (host)", "reads",
			"read_bytes", "read_s", "writes", "write_bytes", "write_s");
	for (int r = 0; r < t->nranks && shown < top; r++) {
		if (!t->ranks[r].seen)
			continue;
		snprintf(name, sizeof(name), "%d (%.40s)", t->rank_ids[r], dc_text_view(host_of(t, t->ranks[r].node)));
		text_row(f, name, &t->ranks[r]);
		shown++;
	}
	for (int op = 0; op < 2; op++) {
		int r = slowest(t->ranks, t->nranks, op), n = slowest(t->nodes, t->nnodes, op);

		if (n < 0)
			continue;
		fprintf(f, "# slowest for %s: node %s (%.6f s)", ops[op], dc_text_view(host_of(t, n)),
			t->nodes[n].op[op].time_ns / 1e9);
		if (r >= 0)
			fprintf(f, ", rank %d on %s (%.6f s)", t->rank_ids[r], dc_text_view(host_of(t, t->ranks[r].node)),
				t->ranks[r].op[op].time_ns / 1e9);
		fputc('\n', f);
	}
}

static void json_host(FILE *f, const char *host)
{
	char *e = dc_json_escaped(host);

	fprintf(f, "\"%s\"", e ? e : "");
	free(e);
}

static void json_sides(FILE *f, const struct row *r)
{
	fprintf(f, "\"reads\":%llu,\"read_bytes\":%llu,\"read_s\":%.9f,\"writes\":%llu,\"write_bytes\":%llu,"
		   "\"write_s\":%.9f",
		(unsigned long long)r->op[0].calls, (unsigned long long)r->op[0].bytes, r->op[0].time_ns / 1e9,
		(unsigned long long)r->op[1].calls, (unsigned long long)r->op[1].bytes, r->op[1].time_ns / 1e9);
}

void dc_io_table_json(const struct dc_io_table *t, FILE *f)
{
	bool first = true;

	fputs(",\"nodes_io\":[", f);
	for (size_t i = 0; i < t->nnodes; i++) {
		fputs(i ? ",{\"host\":" : "{\"host\":", f);
		json_host(f, host_of(t, i));
		fputc(',', f);
		json_sides(f, &t->nodes[i]);
		fputc('}', f);
	}
	fputs("],\"ranks_io\":[", f);
	for (int r = 0; r < t->nranks; r++) {
		if (!t->ranks[r].seen)
			continue;
		fprintf(f, "%s{\"rank\":%d,\"host\":", first ? "" : ",", t->rank_ids[r]);
		json_host(f, host_of(t, t->ranks[r].node));
		fputc(',', f);
		json_sides(f, &t->ranks[r]);
		fputc('}', f);
		first = false;
	}
	fputs("],\"slowest\":{", f);
	for (int op = 0; op < 2; op++) {
		int r = slowest(t->ranks, t->nranks, op), n = slowest(t->nodes, t->nnodes, op);

		fprintf(f, "%s\"%s\":{\"node\":", op ? "," : "", op ? "write" : "read");
		if (n >= 0)
			json_host(f, host_of(t, n));
		else
			fputs("null", f);
		fprintf(f, ",\"node_s\":%.9f,\"rank\":", n >= 0 ? t->nodes[n].op[op].time_ns / 1e9 : 0.0);
		if (r >= 0)
			fprintf(f, "%d,\"rank_s\":%.9f}", t->rank_ids[r], t->ranks[r].op[op].time_ns / 1e9);
		else
			fputs("null,\"rank_s\":0}", f);
	}
	fputc('}', f);
}
