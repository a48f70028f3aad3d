// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-dump: prints a node file as text, one record a line, for people and for
 * scripts (fields are key=value; paths come last, as they may hold spaces:
 * the second file's, path2, then path).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "nodefile.h"

static const char usage[] =
"Usage: dc-dump [--events-only | --chunks] NODEFILE\n"
"\n"
"Prints a DataCrumbs node file as text: the header, the function table,\n"
"process events, traced calls, profile counters and drop statistics.\n"
"A file cut short (agent killed) is printed up to its last whole chunk,\n"
"with a warning; a corrupt one fails with exit status 1.\n"
"\n"
"  -e, --events-only  print only the traced calls\n"
"  -c, --chunks       print only the chunks' headers, one a line: where each\n"
"                     is in the file, its type, records and payload bytes\n"
"                     (payloads are not read; for tools that need to know the\n"
"                     layout without decoding bytes themselves)\n"
"  -h, --help         show this help\n"
"  -V, --version      show the version\n";

static const char *proc_kind(unsigned k)
{
	static const char *const names[] = { "?", "start", "fork", "exec", "exit", "left" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void print_header(const struct dc_node_header *h)
{
	printf("node job=%s host=%s mode=%s interval_ms=%u uid=%u ncpus=%u agent_pid=%u version=%s\n",
	       dc_text_view(h->job_id), dc_text_view(h->hostname), h->mode ? "profile" : "trace", h->interval_ms,
	       h->uid, h->ncpus, h->agent_pid, dc_text_view(h->agent_version));
	printf("clock monotonic_ns=%llu realtime_ns=%llu boot_id=%s\n",
	       (unsigned long long)h->monotonic_ref_ns, (unsigned long long)h->realtime_ref_ns, dc_text_view(h->boot_id));
	printf("topology %s\n", dc_text_view(h->topology));
}

static void print_event(const struct dc_reader *r, const struct dc_functable *f, const struct dc_event *e)
{
	const struct dc_func *fn = dc_functable_get(f, e->func);

	printf("event ts=%llu dur=%llu pid=%u tid=%u cpu=%u depth=%u level=%s func=%s ret=%lld req=%llu bytes=%llu",
	       (unsigned long long)e->ts, (unsigned long long)e->dur, e->pid, e->tid, e->cpu, e->depth,
	       fn ? dc_text_view(dc_reader_string(r, fn->category)) : "?",
	       fn ? dc_text_view(dc_reader_string(r, fn->name)) : "?", (long long)e->ret, (unsigned long long)e->req, (unsigned long long)e->bytes);
	if (e->flags & DC_EV_FD)
		printf(" fd=%d", e->fd);
	if (e->flags & DC_EV_OFFSET)
		printf(" offset=%lld", (long long)e->offset);
	if (e->fd2 != -1 || e->path2)
		printf(" fd2=%d path2=%s", e->fd2, dc_text_view(dc_reader_string(r, e->path2)));
	printf(" path=%s\n", dc_text_view(dc_reader_string(r, e->path)));
}

/* --chunks: the layout, through the reader, payloads unread. */
static int print_chunks(struct dc_reader *r)
{
	struct dc_chunk c;
	enum dc_read_status st;

	while ((st = dc_reader_next_index(r, &c, ~0u)) == DC_READ_OK) {
		if (c.hdr.type == DC_CHUNK_END) {
			printf("end\n");
			return 0;
		}
		printf("chunk offset=%lld type=%s count=%u payload_offset=%lld payload_bytes=%u min_ts=%llu max_ts=%llu\n",
		       c.offset, dc_chunk_type_name(c.hdr.type), c.hdr.count, c.offset + (long long)sizeof(c.hdr),
		       c.hdr.payload_len, (unsigned long long)c.hdr.min_ts, (unsigned long long)c.hdr.max_ts);
	}
	if (st == DC_READ_END) {
		printf("end\n");
		return 0;
	}
	fprintf(stderr, "dc-dump: %s%s\n", st == DC_READ_TRUNCATED ? "warning: " : "", dc_reader_problem(r));
	if (st == DC_READ_TRUNCATED)
		printf("truncated\n");
	return st == DC_READ_TRUNCATED ? 0 : 1;
}

static void print_chunk(const struct dc_reader *r, struct dc_functable *f, const struct dc_chunk *c, int events_only)
{
	const struct dc_chunk_header *h = &c->hdr;

	if (h->type == DC_CHUNK_EVENTS) {
		for (__u32 i = 0; i < h->count; i++)
			print_event(r, f, (const struct dc_event *)c->data + i);
		return;
	}
	if (events_only)
		return;
	for (__u32 i = 0; i < h->count; i++) {
		if (h->type == DC_CHUNK_FUNCS) {
			const struct dc_func *fn = (const struct dc_func *)c->data + i;

			/* observed=syscall: a libc call seen at its system call's tracepoint;
			 * bytes=nested: its bytes are the system calls' inside it;
			 * bytes=dataspace: from the call's HDF5 dataspaces. */
			printf("function id=%u level=%s name=%s observed=%s%s\n", fn->id,
			       dc_text_view(dc_reader_string(r, fn->category)), dc_text_view(dc_reader_string(r, fn->name)),
			       fn->flags & DC_FUNC_KFUNC ? "kfunc" : fn->flags & DC_FUNC_WRAPPER ? "wrapper"
			       : fn->flags & DC_EV_KERNEL ? "kernel"
			       : fn->flags & DC_EV_SYSCALL ? "syscall" : "uprobe",
			       fn->flags & DC_FUNC_BYTES_NESTED	  ? " bytes=nested"
			       : fn->flags & DC_FUNC_BYTES_DATASPACE ? " bytes=dataspace"
								     : "");
		} else if (h->type == DC_CHUNK_PROCS) {
			const struct dc_proc *p = (const struct dc_proc *)c->data + i;
			char comm[DC_COMM_LEN + 1] = { 0 };

			memcpy(comm, p->comm, DC_COMM_LEN);
			printf("process ts=%llu kind=%s pid=%u ppid=%u", (unsigned long long)p->ts,
			       proc_kind(p->kind), p->pid, p->ppid);
			if (p->kind == DC_PROC_EXIT && (p->exit_code & 0x7f))
				printf(" signal=%d", p->exit_code & 0x7f);
			else if (p->kind == DC_PROC_EXIT)
				printf(" exit=%d", (p->exit_code >> 8) & 0xff);
			else if (p->kind == DC_PROC_LEFT)
				printf(" why=%s", p->exit_code == DC_LEFT_PRIVILEGES ? "privileges" : "?");
			printf(" comm=%s\n", dc_text_view(comm));
		} else if (h->type == DC_CHUNK_COUNTERS) {
			const struct dc_counter *k = (const struct dc_counter *)c->data + i;
			const struct dc_func *fn = dc_functable_get(f, k->func);

			printf("counter ts=%llu pid=%u level=%s func=%s count=%llu time_ns=%llu bytes=%llu\n",
			       (unsigned long long)k->ts, k->pid, fn ? dc_text_view(dc_reader_string(r, fn->category)) : "?",
			       fn ? dc_text_view(dc_reader_string(r, fn->name)) : "?", (unsigned long long)k->count,
			       (unsigned long long)k->time_ns, (unsigned long long)k->bytes);
		} else if (h->type == DC_CHUNK_RANKS) {
			const struct dc_rank *k = (const struct dc_rank *)c->data + i;

			printf("rank ts=%llu pid=%u rank=%d world=%d kind=%s clock_offset_ns=%lld clock_error_ns=%llu\n",
			       (unsigned long long)k->ts, k->pid, k->rank, k->world_size,
			       k->kind == DC_RANK_SLURM_TASK    ? "slurm_task"
			       : k->kind == DC_RANK_FINALIZE    ? "finalize"
			       : k->kind == DC_RANK_NO_FINALIZE ? "ended_without_finalize"
								: "register",
			       (long long)k->clock_offset_ns,
			       (unsigned long long)k->clock_error_ns);
		} else if (h->type == DC_CHUNK_STATS) {
			const struct dc_cpu_stats *s = (const struct dc_cpu_stats *)c->data + i;

			printf("stats cpu=%u lost=%llu too_deep=%llu map_full=%llu\n", s->cpu,
			       (unsigned long long)s->stat[DC_STAT_LOST],
			       (unsigned long long)s->stat[DC_STAT_STACK_FULL],
			       (unsigned long long)s->stat[DC_STAT_MAP_FULL]);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events-only", no_argument, 0, 'e' }, { "chunks", no_argument, 0, 'c' }, { "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' }, { 0 },
	};
	struct dc_functable funcs = { 0 };
	int events_only = 0, chunks = 0, c, rc = 0;
	enum dc_read_status st;
	struct dc_reader *r;
	struct dc_chunk chunk;
	char err[1024];

	while ((c = getopt_long(argc, argv, "echV", longopts, NULL)) != -1) {
		if (c == 'e') {
			events_only = 1;
		} else if (c == 'c') {
			chunks = 1;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else if (c == 'V') {
			printf("dc-dump (DataCrumbs) %s\n", DC_VERSION);
			return 0;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc || (chunks && events_only)) {
		fputs(usage, stderr);
		return 2;
	}
	r = dc_reader_open(argv[optind], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "dc-dump: %s\n", err);
		return 1;
	}
	if (chunks) {
		rc = print_chunks(r);
		dc_reader_close(r);
		return rc;
	}
	if (!events_only)
		print_header(dc_reader_header(r));
	while ((st = dc_reader_next(r, &chunk)) == DC_READ_OK) {
		if (chunk.hdr.type == DC_CHUNK_FUNCS && dc_functable_take(&funcs, chunk.data, chunk.hdr.count)) {
			fprintf(stderr, "dc-dump: out of memory\n");
			rc = 1;
			break;
		}
		print_chunk(r, &funcs, &chunk, events_only);
	}
	if (st == DC_READ_TRUNCATED) {
		fprintf(stderr, "dc-dump: warning: %s\n", dc_reader_problem(r));
		if (!events_only)
			printf("truncated\n");
	} else if (st == DC_READ_END) {
		if (!events_only)
			printf("end\n");
	} else if (!rc) {
		fprintf(stderr, "dc-dump: %s\n", dc_reader_problem(r));
		rc = 1;
	}
	dc_functable_free(&funcs);
	dc_reader_close(r);
	return rc;
}
