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

#define OUT_BUF (1 << 20)

struct escaped {
	char *text;
	size_t len;
};

/*
 * The output is written (and gzipped) by a thread of its own, one buffer
 * behind the formatting: most of a JSON merge's time is the kernel copying
 * the output, and it need not stop the formatting.
 */
struct sink {
	FILE *f;
	gzFile gz;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *data; /* handed over and not written yet */
	size_t len;
	bool quit;
	int err;
};

struct json_writer {
	struct sink out;
	const struct dc_job *job;
	char *bufs[2];
	size_t caps[2];
	char *buf; /* bufs[cur], being filled */
	int cur;
	size_t len;
	int err;
	bool first;
	struct dc_hashtab *ids; /* (node, pid or tid | 1 << 32) -> output id */
	uint32_t next_id;
	struct escaped **escaped; /* per node, per string id: JSON-escaped text */
	unsigned long long written; /* events in this file */
};

static int sink_write(struct sink *o, const char *p, size_t n)
{
	if (o->gz ? gzwrite(o->gz, p, n) != (int)n : fwrite(p, 1, n, o->f) != n)
		return errno ? errno : EIO;
	return 0;
}

static void *sink_main(void *arg)
{
	struct sink *o = arg;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->data && !o->quit)
			pthread_cond_wait(&o->cv, &o->mu);
		if (!o->data)
			break;
		const char *p = o->data;
		size_t n = o->len;
		int err;

		pthread_mutex_unlock(&o->mu);
		err = sink_write(o, p, n);
		pthread_mutex_lock(&o->mu);
		if (err && !o->err)
			o->err = err;
		o->data = NULL;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* Waits until the buffer handed over last is written. */
static void sink_idle(struct sink *o)
{
	pthread_mutex_lock(&o->mu);
	while (o->data)
		pthread_cond_wait(&o->cv, &o->mu);
	pthread_mutex_unlock(&o->mu);
}

static void sink_hand(struct sink *o, const char *p, size_t n)
{
	pthread_mutex_lock(&o->mu);
	while (o->data)
		pthread_cond_wait(&o->cv, &o->mu);
	o->data = p;
	o->len = n;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

static void flush_buf(struct json_writer *w)
{
	if (!w->len || w->err)
		return;
	if (!w->out.threaded) {
		w->err = sink_write(&w->out, w->buf, w->len);
		w->len = 0;
		return;
	}
	/* Once it is handed over, the other buffer (handed before) is free. */
	sink_hand(&w->out, w->buf, w->len);
	w->cur ^= 1;
	w->buf = w->bufs[w->cur];
	w->len = 0;
}

/*
 * Room for n more bytes at the end of the buffer being filled, where the
 * caller writes and then sets w->len: one check per record instead of one
 * per field. A record longer than a buffer (a path of megabytes) grows it.
 * NULL when memory runs out.
 */
static char *reserve(struct json_writer *w, size_t n)
{
	if (w->len + n > w->caps[w->cur])
		flush_buf(w);
	if (n > w->caps[w->cur]) {
		char *b = realloc(w->bufs[w->cur], n);

		if (!b) {
			w->err = ENOMEM;
			return NULL;
		}
		w->buf = w->bufs[w->cur] = b;
		w->caps[w->cur] = n;
	}
	return w->buf + w->len;
}

static inline char *emit(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* A literal: its length is known, so the copy is a few moves. */
#define EMIT(o, lit) emit(o, lit, sizeof(lit) - 1)

static const char two_digits[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				 "8081828384858687888990919293949596979899";

static inline char *fmt_u64(char *o, uint64_t v)
{
	unsigned n = 1;
	char *end;

	for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
		n++;
	end = o + n;
	o = end;
	for (; v >= 100; v /= 100)
		o = memcpy(o - 2, two_digits + 2 * (v % 100), 2);
	if (v >= 10)
		memcpy(o - 2, two_digits + 2 * v, 2);
	else
		o[-1] = '0' + v;
	return end;
}

static inline char *fmt_i64(char *o, int64_t v)
{
	if (v >= 0)
		return fmt_u64(o, v);
	*o++ = '-';
	return fmt_u64(o, -(uint64_t)v);
}

/* Nanoseconds as microseconds with three decimals. */
static inline char *fmt_us(char *o, uint64_t ns)
{
	unsigned frac = ns % 1000;

	o = fmt_u64(o, ns / 1000);
	*o++ = '.';
	*o++ = '0' + frac / 100;
	return emit(o, two_digits + 2 * (frac % 100), 2);
}

#define NUM_MAX 24 /* a formatted number, sign and decimals included */

static void put(struct json_writer *w, const char *s, size_t n)
{
	char *o = reserve(w, n);

	if (o)
		w->len = emit(o, s, n) - w->buf;
}

#define PUT(w, lit) put(w, lit, sizeof(lit) - 1)

static void put_u64(struct json_writer *w, uint64_t v)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_u64(o, v) - w->buf;
}

static void put_i64(struct json_writer *w, int64_t v)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_i64(o, v) - w->buf;
}

static void put_us(struct json_writer *w, uint64_t ns)
{
	char *o = reserve(w, NUM_MAX);

	if (o)
		w->len = fmt_us(o, ns) - w->buf;
}

static void put_escaped(struct json_writer *w, const char *s)
{
	char *e = dc_json_escaped(s);

	if (!e) {
		w->err = ENOMEM;
		return;
	}
	put(w, e, strlen(e));
	free(e);
}

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
			w->err = ENOMEM;
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
		put(w, e->text, e->len);
}

static void begin_event(struct json_writer *w)
{
	if (!w->first)
		PUT(w, ",\n");
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
		w->err = ENOMEM;
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
	PUT(w, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
	put_u64(w, opid);
	PUT(w, ",\"tid\":");
	put_u64(w, otid);
	PUT(w, ",\"args\":{\"name\":\"tid ");
	put_u64(w, tid);
	PUT(w, "\"}}");
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
	PUT(w, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
	put_u64(w, opid);
	PUT(w, ",\"args\":{\"name\":\"");
	put_escaped(w, label);
	PUT(w, "\",\"host\":\"");
	put_escaped(w, n->hdr.hostname);
	PUT(w, "\",\"os_pid\":");
	put_u64(w, p->pid);
	if (p->rank >= 0) {
		PUT(w, ",\"rank\":");
		put_u64(w, p->rank);
	}
	PUT(w, ",\"command\":\"");
	put_escaped(w, p->comm);
	PUT(w, "\"}},\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":");
	put_u64(w, opid);
	PUT(w, ",\"args\":{\"labels\":\"");
	put_escaped(w, n->hdr.hostname);
	PUT(w, " pid ");
	put_u64(w, p->pid);
	if (p->rank >= 0) {
		PUT(w, ", rank ");
		put_u64(w, p->rank);
		PUT(w, " of ");
		put_u64(w, p->world_size);
	}
	if (p->exited && (p->exit_status & 0x7f)) {
		PUT(w, ", killed by signal ");
		put_u64(w, p->exit_status & 0x7f);
	} else if (p->exited && (p->exit_status >> 8)) {
		PUT(w, ", exit status ");
		put_u64(w, (p->exit_status >> 8) & 0xff);
	}
	if (p->rank >= 0 && p->exited && !p->finalized)
		PUT(w, ", ended without MPI_Finalize");
	PUT(w, "\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
	put_u64(w, opid);
	PUT(w, ",\"args\":{\"sort_index\":");
	put_u64(w, sort_index);
	PUT(w, "}}");
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
	int own = -1;

	if (!w || !(w->bufs[0] = malloc(OUT_BUF)) || !(w->bufs[1] = malloc(OUT_BUF)) ||
	    !(w->ids = dc_hashtab_new(1024)) || !(w->escaped = calloc(job->nnodes, sizeof(*w->escaped))))
		goto nomem;
	for (size_t i = 0; i < job->nnodes; i++)
		if (!(w->escaped[i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(struct escaped))))
			goto nomem;
	w->caps[0] = w->caps[1] = OUT_BUF;
	w->buf = w->bufs[0];
	w->job = job;
	w->first = true;
	w->next_id = 1;
	/* Never reopened by name: the descriptor dc-merge created or checked. */
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own >= 0 && gz)
		w->out.gz = gzdopen(own, "wb1");
	else if (own >= 0)
		w->out.f = fdopen(own, "w");
	if (!w->out.gz && !w->out.f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (own >= 0)
			close(own);
		goto fail;
	}
	pthread_mutex_init(&w->out.mu, NULL);
	pthread_cond_init(&w->out.cv, NULL);
	/* Without a thread, the output is written in place: slower, the same. */
	w->out.threaded = pthread_create(&w->out.thread, NULL, sink_main, &w->out) == 0;
	PUT(w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	all_process_metadata(w);
	return w;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	if (w) {
		free(w->bufs[0]);
		free(w->bufs[1]);
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

/* The longest event without its strings: every number at its widest. */
#define EVENT_MAX (160 + 9 * NUM_MAX)

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
	char *o;

	if (!name || !cat || !path || !(o = reserve(w, EVENT_MAX + name->len + cat->len + path->len)))
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
	if (e->path) {
		o = EMIT(o, ",\"path\":\"");
		o = emit(o, path->text, path->len);
		o = EMIT(o, "\"");
	}
	o = EMIT(o, "}}");
	w->len = o - w->buf;
	return w->err ? -1 : 0;
}

static int write_counter(void *wp, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns)
{
	struct json_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, c->func);

	begin_event(w);
	PUT(w, "{\"name\":\"");
	if (f) {
		put_node_string(w, n, f->category);
		PUT(w, " ");
		put_node_string(w, n, f->name);
	}
	PUT(w, "\",\"ph\":\"C\",\"ts\":");
	put_us(w, wall_ns - w->job->origin_ns);
	PUT(w, ",\"pid\":");
	put_u64(w, out_pid(w, n, c->pid));
	PUT(w, ",\"args\":{\"count\":");
	put_u64(w, c->count);
	PUT(w, ",\"bytes\":");
	put_u64(w, c->bytes);
	PUT(w, ",\"time_us\":");
	put_us(w, c->time_ns);
	PUT(w, "}}");
	return w->err ? -1 : 0;
}

static void other_data(struct json_writer *w)
{
	const struct dc_job *job = w->job;

	PUT(w, "\n],\n\"otherData\":{\"tool\":\"DataCrumbs " DC_VERSION "\",\"job_id\":\"");
	put_escaped(w, job->id);
	PUT(w, "\",\"time_origin_unix_ns\":");
	put_u64(w, job->origin_ns);
	/* What this file holds, and what it does not and why: events the
	 * agents could not record (lost), in damaged chunks (skipped), and left
	 * out by --time-range or --ranks (filtered). */
	PUT(w, ",\"events\":");
	put_u64(w, w->written);
	PUT(w, ",\"events_in_node_files\":");
	put_u64(w, job->events);
	PUT(w, ",\"events_skipped_damaged\":");
	put_u64(w, job->skipped);
	PUT(w, ",\"events_filtered\":");
	put_u64(w, job->events - job->skipped - w->written);
	PUT(w, ",\"lost_events\":");
	put_u64(w, job->lost);
	PUT(w, ",\"nodes\":[");
	for (size_t i = 0; i < job->nnodes; i++) {
		const struct dc_node *n = &job->nodes[i];

		if (i)
			PUT(w, ",");
		PUT(w, "{\"host\":\"");
		put_escaped(w, n->hdr.hostname);
		PUT(w, "\",\"events_in_node_file\":");
		put_u64(w, n->events);
		PUT(w, ",\"events_skipped_damaged\":");
		put_u64(w, n->skipped);
		if (n->skip_reason) {
			PUT(w, ",\"skipped_because\":\"");
			put_escaped(w, n->skip_reason);
			PUT(w, "\"");
		}
		PUT(w, ",\"lost_events\":");
		put_u64(w, n->lost);
		PUT(w, ",\"mode\":\"");
		put_escaped(w, n->hdr.mode ? "profile" : "trace");
		PUT(w, "\",\"topology\":\"");
		put_escaped(w, n->hdr.topology);
		PUT(w, "\",\"clock_shift_ns\":");
		put_i64(w, n->clock_shift_ns);
		/* The correction to rank 0's clock, measured by libdcpmpi, and its
		 * error bound (half the shortest round trip); null when no rank
		 * measured it. */
		PUT(w, ",\"mpi_clock_offset_ns\":");
		put_i64(w, n->mpi_offset_ns);
		PUT(w, ",\"mpi_clock_error_ns\":");
		if (n->mpi_error_ns == UINT64_MAX)
			PUT(w, "null");
		else
			put_u64(w, n->mpi_error_ns);
		if (n->problem) {
			PUT(w, ",\"incomplete\":\"");
			put_escaped(w, n->problem);
			PUT(w, "\"");
		}
		PUT(w, "}");
	}
	PUT(w, "]}}\n");
}

static int close_writer(void *wp, int ok, char *err, size_t errlen)
{
	struct json_writer *w = wp;
	int rc = 0;

	if (ok)
		other_data(w);
	flush_buf(w);
	if (w->out.threaded) {
		sink_idle(&w->out);
		pthread_mutex_lock(&w->out.mu);
		w->out.quit = true;
		pthread_cond_broadcast(&w->out.cv);
		pthread_mutex_unlock(&w->out.mu);
		pthread_join(w->out.thread, NULL);
	}
	if (w->out.err && !w->err)
		w->err = w->out.err;
	if (w->out.gz && gzclose(w->out.gz) != Z_OK && !w->err)
		w->err = EIO;
	if (w->out.f && fclose(w->out.f) && !w->err)
		w->err = errno;
	pthread_mutex_destroy(&w->out.mu);
	pthread_cond_destroy(&w->out.cv);
	if (w->err) {
		snprintf(err, errlen, "writing the JSON output: %s", strerror(w->err));
		rc = -1;
	}
	for (size_t i = 0; i < w->job->nnodes; i++) {
		for (__u32 k = 0; w->escaped[i] && k <= dc_reader_nstrings(w->job->nodes[i].r); k++)
			free(w->escaped[i][k].text);
		free(w->escaped[i]);
	}
	free(w->escaped);
	dc_hashtab_free(w->ids);
	free(w->bufs[0]);
	free(w->bufs[1]);
	free(w);
	return rc;
}

const struct dc_output_ops dc_json_output = {
	"json", ".json", open_json, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_json_gz_output = {
	"json.gz", ".json.gz", open_json_gz, write_event, write_counter, close_writer,
};
