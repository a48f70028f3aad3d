// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Chrome trace event JSON, as Perfetto and chrome://tracing read it:
 * {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
 * Calls are "X" slices, PROFILE totals "C" counters, processes and threads
 * named by "M" metadata. Times are microseconds from the job's start with
 * three decimals, so nanoseconds are kept. Formatting is done by hand: it
 * is most of the work of a merge.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "escape.h"
#include "hashtab.h"
#include "output.h"
#include "text_out.h"

struct escaped {
	char *text;
	size_t len;
};

/*
 * The output is written (and gzipped) by a thread of its own, one buffer
 * behind the formatting: most of a JSON merge's time is the kernel copying
 * the output, and it need not stop the formatting.
 */
struct json_writer {
	struct text_out o;
	const struct dc_job *job;
	bool first;
	struct dc_hashtab *ids; /* (node, pid or tid | 1 << 32) -> output id */
	uint32_t next_id;
	struct escaped **escaped; /* per node, per string id: JSON-escaped text */
	unsigned long long written; /* events in this file */
};

static const struct escaped no_string = { "", 0 };

/* A node's strings are escaped once, on first use; NULL when memory runs out. */
static const struct escaped *node_string(struct json_writer *w, const struct dc_node *n, __u32 id)
{
	struct escaped *e;

	if (id == 0 || id > dc_reader_nstrings(n->r))
		return &no_string;
	e = &w->escaped[n->index][id];
	if (!e->text) {
		if (!(e->text = dc_json_escaped(dc_reader_string(n->r, id)))) {
			w->o.err = ENOMEM;
			return NULL;
		}
		e->len = strlen(e->text);
	}
	return e;
}

static void put_node_string(struct json_writer *w, const struct dc_node *n, __u32 id)
{
	const struct escaped *e = node_string(w, n, id);

	if (e)
		put(&w->o, e->text, e->len);
}

static void begin_event(struct json_writer *w)
{
	if (!w->first)
		PUT(&w->o, ",\n");
	w->first = false;
}

/* Output ids never collide across nodes: (node, pid) pairs are numbered. */
static uint32_t out_id(struct json_writer *w, const struct dc_node *n, uint64_t key, bool *fresh)
{
	uint64_t id;

	*fresh = false;
	if (dc_hashtab_get(w->ids, n->index, key, &id))
		return id;
	id = w->next_id++;
	if (dc_hashtab_put(w->ids, n->index, key, id))
		w->o.err = ENOMEM;
	*fresh = true;
	return id;
}

static uint32_t out_pid(struct json_writer *w, const struct dc_node *n, __u32 pid)
{
	bool fresh;

	return out_id(w, n, pid, &fresh);
}

static void thread_name(struct json_writer *w, uint32_t opid, uint32_t otid, __u32 tid)
{
	begin_event(w);
	PUT(&w->o, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
	put_u64(&w->o, opid);
	PUT(&w->o, ",\"tid\":");
	put_u64(&w->o, otid);
	PUT(&w->o, ",\"args\":{\"name\":\"tid ");
	put_u64(&w->o, tid);
	PUT(&w->o, "\"}}");
}

static uint32_t out_tid(struct json_writer *w, const struct dc_node *n, __u32 pid, __u32 tid, uint32_t opid)
{
	bool fresh;
	uint32_t otid;

	if (tid == pid)
		return opid;
	otid = out_id(w, n, (uint64_t)tid | 1ull << 32, &fresh);
	if (fresh)
		thread_name(w, opid, otid, tid);
	return otid;
}

static void process_metadata(struct json_writer *w, const struct dc_node *n, const struct dc_process *p,
			     int sort_index)
{
	uint32_t opid = out_pid(w, n, p->pid);
	char label[128];

	dc_process_label(n, p, label, sizeof(label));
	begin_event(w);
	PUT(&w->o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
	put_u64(&w->o, opid);
	PUT(&w->o, ",\"args\":{\"name\":\"");
	put_escaped(&w->o, label);
	PUT(&w->o, "\",\"host\":\"");
	put_escaped(&w->o, n->hdr.hostname);
	PUT(&w->o, "\",\"os_pid\":");
	put_u64(&w->o, p->pid);
	if (p->rank >= 0) {
		PUT(&w->o, ",\"rank\":");
		put_u64(&w->o, p->rank);
	}
	PUT(&w->o, ",\"command\":\"");
	put_escaped(&w->o, p->comm);
	PUT(&w->o, "\"}},\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":");
	put_u64(&w->o, opid);
	PUT(&w->o, ",\"args\":{\"labels\":\"");
	put_escaped(&w->o, n->hdr.hostname);
	PUT(&w->o, " pid ");
	put_u64(&w->o, p->pid);
	if (p->rank >= 0) {
		PUT(&w->o, ", rank ");
		put_u64(&w->o, p->rank);
		PUT(&w->o, " of ");
		put_u64(&w->o, p->world_size);
	}
	if (p->exited && (p->exit_status & 0x7f)) {
		PUT(&w->o, ", killed by signal ");
		put_u64(&w->o, p->exit_status & 0x7f);
	} else if (p->exited && (p->exit_status >> 8)) {
		PUT(&w->o, ", exit status ");
		put_u64(&w->o, (p->exit_status >> 8) & 0xff);
	}
	if (p->rank >= 0 && p->exited && !p->finalized)
		PUT(&w->o, ", ended without MPI_Finalize");
	PUT(&w->o, "\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
	put_u64(&w->o, opid);
	PUT(&w->o, ",\"args\":{\"sort_index\":");
	put_u64(&w->o, sort_index);
	PUT(&w->o, "}}");
}

/* Ranks 0..N-1 first, in order; then Slurm tasks by task id; other
 * processes after them, node by node. */
static void all_process_metadata(struct json_writer *w)
{
	int other = 0;

	for (size_t i = 0; i < w->job->nnodes; i++)
		for (size_t k = 0; k < w->job->nodes[i].nprocs; k++) {
			const struct dc_process *p = &w->job->nodes[i].procs[k];

			process_metadata(w, &w->job->nodes[i], p,
					 p->rank >= 0 ? p->rank : p->task >= 0 ? 500000 + p->task : 1000000 + other++);
		}
}

static void *open_writer(const char *path, int fd, const struct dc_job *job, bool gz, char *err, size_t errlen)
{
	struct json_writer *w = calloc(1, sizeof(*w));
	bool out_open = false;

	if (!w || !(w->ids = dc_hashtab_new(1024)) || !(w->escaped = calloc(job->nnodes, sizeof(*w->escaped))))
		goto nomem;
	for (size_t i = 0; i < job->nnodes; i++)
		if (!(w->escaped[i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(struct escaped))))
			goto nomem;
	w->job = job;
	w->first = true;
	w->next_id = 1;
	if (dc_text_out_open(&w->o, fd, gz ? DC_OUT_GZIP : DC_OUT_PLAIN, path, err, errlen))
		goto fail;
	out_open = true;
	PUT(&w->o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	all_process_metadata(w);
	return w;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	if (w) {
		if (out_open)
			dc_text_out_close(&w->o);
		dc_hashtab_free(w->ids);
		for (size_t i = 0; w->escaped && i < job->nnodes; i++)
			free(w->escaped[i]);
		free(w->escaped);
	}
	free(w);
	return NULL;
}

static void *open_json(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return open_writer(path, fd, job, false, err, errlen);
}

static void *open_json_gz(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return open_writer(path, fd, job, true, err, errlen);
}

/* ,"KEY":"VALUE" in an event's args, the value escaped already. */
#define EMIT_KEY(key) ",\"" key "\":\"", sizeof(key) + 4
static char *string_arg(char *o, const char *key, size_t key_len, const struct escaped *v)
{
	o = emit(o, key, key_len);
	o = emit(o, v->text, v->len);
	return EMIT(o, "\"");
}

/* The longest event without its strings: every number at its widest. */
#define EVENT_MAX (200 + 10 * NUM_MAX)

static int write_event(void *wp, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns)
{
	struct json_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, e->func);
	uint32_t opid = out_pid(w, n, e->pid), otid = out_tid(w, n, e->pid, e->tid, opid);

	w->written++;
	static const struct escaped unknown = { "unknown", 7 };
	const struct escaped *name = f ? node_string(w, n, f->name) : &unknown;
	const struct escaped *cat = f ? node_string(w, n, f->category) : &no_string;
	const struct escaped *path = node_string(w, n, e->path);
	const struct escaped *path2 = node_string(w, n, e->path2);
	char *o;

	if (!name || !cat || !path || !path2 ||
	    !(o = reserve(&w->o, EVENT_MAX + name->len + cat->len + path->len + path2->len)))
		return -1;
	if (!w->first)
		o = EMIT(o, ",\n");
	w->first = false;
	o = EMIT(o, "{\"name\":\"");
	o = emit(o, name->text, name->len);
	o = EMIT(o, "\",\"cat\":\"");
	o = emit(o, cat->text, cat->len);
	o = EMIT(o, "\",\"ph\":\"X\",\"ts\":");
	o = fmt_us(o, wall_ns - w->job->origin_ns);
	o = EMIT(o, ",\"dur\":");
	o = fmt_us(o, e->dur);
	o = EMIT(o, ",\"pid\":");
	o = fmt_u64(o, opid);
	o = EMIT(o, ",\"tid\":");
	o = fmt_u64(o, otid);
	o = EMIT(o, ",\"args\":{\"ret\":");
	o = fmt_i64(o, e->ret);
	if (e->flags & DC_EV_FD) {
		o = EMIT(o, ",\"fd\":");
		o = fmt_i64(o, e->fd);
	}
	if (e->req || e->bytes) {
		o = EMIT(o, ",\"req\":");
		o = fmt_u64(o, e->req);
		o = EMIT(o, ",\"bytes\":");
		o = fmt_u64(o, e->bytes);
	}
	if (e->flags & DC_EV_OFFSET) {
		o = EMIT(o, ",\"offset\":");
		o = fmt_i64(o, e->offset);
	}
	if (e->path)
		o = string_arg(o, EMIT_KEY("path"), path);
	/* The second file: where a mover's data came from; a rename's new name. */
	if (e->fd2 != -1) {
		o = EMIT(o, ",\"fd2\":");
		o = fmt_i64(o, e->fd2);
	}
	if (e->path2)
		o = string_arg(o, EMIT_KEY("path2"), path2);
	o = EMIT(o, "}}");
	w->o.len = o - w->o.buf;
	return w->o.err ? -1 : 0;
}

static int write_counter(void *wp, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns)
{
	struct json_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, c->func);

	begin_event(w);
	PUT(&w->o, "{\"name\":\"");
	if (f) {
		put_node_string(w, n, f->category);
		PUT(&w->o, " ");
		put_node_string(w, n, f->name);
	}
	PUT(&w->o, "\",\"ph\":\"C\",\"ts\":");
	put_us(&w->o, wall_ns - w->job->origin_ns);
	PUT(&w->o, ",\"pid\":");
	put_u64(&w->o, out_pid(w, n, c->pid));
	PUT(&w->o, ",\"args\":{\"count\":");
	put_u64(&w->o, c->count);
	PUT(&w->o, ",\"bytes\":");
	put_u64(&w->o, c->bytes);
	PUT(&w->o, ",\"time_us\":");
	put_us(&w->o, c->time_ns);
	PUT(&w->o, "}}");
	return w->o.err ? -1 : 0;
}

static void other_data(struct json_writer *w)
{
	const struct dc_job *job = w->job;

	PUT(&w->o, "\n],\n\"otherData\":{\"tool\":\"DataCrumbs " DC_VERSION "\",\"job_id\":\"");
	put_escaped(&w->o, job->id);
	PUT(&w->o, "\",\"time_origin_unix_ns\":");
	put_u64(&w->o, job->origin_ns);
	/* What this file holds, and what it does not and why: events the
	 * agents could not record (lost), in damaged chunks (skipped), and left
	 * out by --time-range or --ranks (filtered). */
	PUT(&w->o, ",\"events\":");
	put_u64(&w->o, w->written);
	PUT(&w->o, ",\"events_in_node_files\":");
	put_u64(&w->o, job->events);
	PUT(&w->o, ",\"events_skipped_damaged\":");
	put_u64(&w->o, job->skipped);
	PUT(&w->o, ",\"events_filtered\":");
	put_u64(&w->o, job->events - job->skipped - w->written);
	PUT(&w->o, ",\"lost_events\":");
	put_u64(&w->o, job->lost);
	PUT(&w->o, ",\"nodes\":[");
	for (size_t i = 0; i < job->nnodes; i++) {
		const struct dc_node *n = &job->nodes[i];

		if (i)
			PUT(&w->o, ",");
		PUT(&w->o, "{\"host\":\"");
		put_escaped(&w->o, n->hdr.hostname);
		PUT(&w->o, "\",\"events_in_node_file\":");
		put_u64(&w->o, n->events);
		PUT(&w->o, ",\"events_skipped_damaged\":");
		put_u64(&w->o, n->skipped);
		if (n->skip_reason) {
			PUT(&w->o, ",\"skipped_because\":\"");
			put_escaped(&w->o, n->skip_reason);
			PUT(&w->o, "\"");
		}
		PUT(&w->o, ",\"lost_events\":");
		put_u64(&w->o, n->lost);
		PUT(&w->o, ",\"mode\":\"");
		put_escaped(&w->o, n->hdr.mode ? "profile" : "trace");
		PUT(&w->o, "\",\"topology\":\"");
		put_escaped(&w->o, n->hdr.topology);
		PUT(&w->o, "\",\"clock_shift_ns\":");
		put_i64(&w->o, n->clock_shift_ns);
		/* The correction to rank 0's clock, measured by libdcpmpi, and its
		 * error bound (half the shortest round trip); null when no rank
		 * measured it. */
		PUT(&w->o, ",\"mpi_clock_offset_ns\":");
		put_i64(&w->o, n->mpi_offset_ns);
		PUT(&w->o, ",\"mpi_clock_error_ns\":");
		if (n->mpi_error_ns == UINT64_MAX)
			PUT(&w->o, "null");
		else
			put_u64(&w->o, n->mpi_error_ns);
		if (n->problem) {
			PUT(&w->o, ",\"incomplete\":\"");
			put_escaped(&w->o, n->problem);
			PUT(&w->o, "\"");
		}
		PUT(&w->o, "}");
	}
	PUT(&w->o, "]}}\n");
}

static int close_writer(void *wp, int ok, char *err, size_t errlen)
{
	struct json_writer *w = wp;
	int rc = 0, e;

	if (ok)
		other_data(w);
	if ((e = dc_text_out_close(&w->o))) {
		snprintf(err, errlen, "writing the JSON output: %s", strerror(e));
		rc = -1;
	}
	for (size_t i = 0; i < w->job->nnodes; i++) {
		for (__u32 k = 0; w->escaped[i] && k <= dc_reader_nstrings(w->job->nodes[i].r); k++)
			free(w->escaped[i][k].text);
		free(w->escaped[i]);
	}
	free(w->escaped);
	dc_hashtab_free(w->ids);
	free(w);
	return rc;
}

const struct dc_output_ops dc_json_output = {
	"json", ".json", open_json, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_json_gz_output = {
	"json.gz", ".json.gz", open_json_gz, write_event, write_counter, close_writer,
};
