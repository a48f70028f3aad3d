// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DFTracer's trace format (.pfw, .pfw.gz), which DFTracer and DFAnalyzer
 * read: a first line "[" (so that Perfetto reads the file as a JSON array),
 * then one JSON object a line, no commas between them and no closing "]"
 * (DFTracer writes files that many processes append to; readers take each
 * line alone).
 *
 *   {"id":N,"name":"HH","cat":"dftracer","pid":P,"tid":P,"ph":"M",
 *    "args":{"hhash":"H","name":"HOST","value":"H"}}       host hash
 *   {"id":N,"name":"FH",...,"args":{"hhash":"H","name":"PATH","value":"F"}}
 *                                                          file hash, before its first use
 *   {"id":N,"name":"PR",...,"args":{"hhash":"H","name":"rank","value":"R"}}
 *                                                          MPI rank of a process
 *   {"id":N,"name":"read","cat":"POSIX","pid":P,"tid":T,"ts":US,"dur":US,"ph":"X",
 *    "args":{"hhash":"H","fhash":"F","fd":3,"count":4096,"ret":4096,"offset":0}}
 *   {"id":N,"name":"write","cat":"POSIX","pid":P,"tid":P,"ts":US,"ph":"C",
 *    "args":{"hhash":"H","count":C,"size_sum":B,"dur_sum":US}}   PROFILE totals
 *   {"id":N,"name":"datacrumbs","cat":"dftracer",...,"ph":"M",
 *    "args":{...,"name":"lost_events","value":"0"}}        at the end: events in the
 *                                                          node files, lost, skipped as
 *                                                          damaged, and node files cut short
 *
 * ts is microseconds since the Unix epoch on the job's clock, dur
 * microseconds, both whole (DFTracer's resolution); pid and tid are the
 * node's, told apart across nodes by hhash, as DFTracer does. cat is the
 * level in capitals (POSIX, STDIO, SYSCALL, MPIIO, HDF5). count is the
 * bytes asked, ret what the call returned (bytes moved for a read or a
 * write, which is what DFAnalyzer takes as the size). Hashes are 16 hex
 * digits of a 64-bit string hash, the same for the same string in every
 * file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "hashtab.h"
#include "output.h"
#include "text_out.h"

/* What a call line says of its function, escaped once:
 * ,"name":"read","cat":"POSIX","pid": */
struct fn_text {
	char *text;
	size_t len;
};

struct pfw_writer {
	struct text_out o;
	const struct dc_job *job;
	char (*hhash)[17];      /* per node */
	char (**fhash)[17];     /* per node, per string id: its hash, once its FH line is written */
	struct fn_text **fns;   /* per node, per function id (the last: unknown) */
	unsigned long long id;  /* lines written */
};

static void hash_hex(const char *s, char out[17])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t h = dc_hash_string(s);

	for (int i = 15; i >= 0; i--, h >>= 4)
		out[i] = hex[h & 15];
	out[16] = 0;
}

static void begin_line(struct pfw_writer *w, const char *name, const char *cat, uint32_t pid, uint32_t tid)
{
	PUT(&w->o, "{\"id\":");
	put_u64(&w->o, ++w->id);
	PUT(&w->o, ",\"name\":\"");
	put_escaped(&w->o, name);
	PUT(&w->o, "\",\"cat\":\"");
	put_escaped(&w->o, cat);
	PUT(&w->o, "\",\"pid\":");
	put_u64(&w->o, pid);
	PUT(&w->o, ",\"tid\":");
	put_u64(&w->o, tid);
}

/* A metadata line: {"name":KIND,...,"args":{"hhash":H,"name":NAME,"value":VALUE}}. */
static void metadata(struct pfw_writer *w, const struct dc_node *n, const char *kind, uint32_t pid,
		     const char *name, const char *value)
{
	begin_line(w, kind, "dftracer", pid, pid);
	PUT(&w->o, ",\"ph\":\"M\",\"args\":{\"hhash\":\"");
	put(&w->o, w->hhash[n->index], 16);
	PUT(&w->o, "\",\"name\":\"");
	put_escaped(&w->o, name);
	PUT(&w->o, "\",\"value\":\"");
	put_escaped(&w->o, value);
	PUT(&w->o, "\"}}\n");
}

static void job_metadata(struct pfw_writer *w)
{
	for (size_t i = 0; i < w->job->nnodes; i++) {
		const struct dc_node *n = &w->job->nodes[i];

		metadata(w, n, "HH", n->nprocs ? n->procs[0].pid : 0, n->hdr.hostname, w->hhash[i]);
		for (size_t k = 0; k < n->nprocs; k++) {
			const struct dc_process *p = &n->procs[k];
			char label[128], rank[16];

			dc_process_label(n, p, label, sizeof(label));
			metadata(w, n, "process_name", p->pid, label, "process_name");
			if (p->rank >= 0) {
				snprintf(rank, sizeof(rank), "%d", p->rank);
				metadata(w, n, "PR", p->pid, "rank", rank);
			}
		}
	}
}

/* The file's hash; its FH line is written before its first use. */
static const char *file_hash(struct pfw_writer *w, const struct dc_node *n, __u32 id, uint32_t pid)
{
	char *h = w->fhash[n->index][id];

	if (!*h) {
		hash_hex(dc_reader_string(n->r, id), h);
		metadata(w, n, "FH", pid, dc_reader_string(n->r, id), h);
	}
	return h;
}

/* DFTracer's categories are the level's name in capitals. */
static void category(const char *level, char *out, size_t len)
{
	size_t i = 0;

	for (; level[i] && i < len - 1; i++)
		out[i] = toupper((unsigned char)level[i]);
	out[i] = 0;
}

static const struct fn_text *fn_text(struct pfw_writer *w, const struct dc_node *n, __u32 func)
{
	const struct dc_func *f = dc_node_func(n, func);
	size_t k = f ? func : n->funcs.n;
	struct fn_text *t = &w->fns[n->index][k];
	char cat[64], *name, *ecat;

	if (t->text)
		return t;
	category(f ? dc_reader_string(n->r, f->category) : "unknown", cat, sizeof(cat));
	name = dc_json_escaped(f ? dc_reader_string(n->r, f->name) : "unknown");
	ecat = dc_json_escaped(cat);
	if (name && ecat && asprintf(&t->text, ",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":", name, ecat) >= 0)
		t->len = strlen(t->text);
	else
		t->text = NULL;
	free(name);
	free(ecat);
	return t->text ? t : NULL;
}

/* The longest call line without its function's text: every field at its widest. */
#define LINE_MAX_NUMS (180 + 10 * NUM_MAX)

static int write_event(void *wp, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns)
{
	struct pfw_writer *w = wp;
	const struct fn_text *ft = fn_text(w, n, e->func);
	const char *fh = e->path && e->path <= dc_reader_nstrings(n->r) ? file_hash(w, n, e->path, e->pid) : NULL;
	const char *fh2 = e->path2 && e->path2 <= dc_reader_nstrings(n->r) ? file_hash(w, n, e->path2, e->pid) : NULL;
	char *o;

	if (!ft || !(o = reserve(&w->o, LINE_MAX_NUMS + ft->len)))
		return w->o.err = w->o.err ? w->o.err : ENOMEM, -1;
	o = EMIT(o, "{\"id\":");
	o = fmt_u64(o, ++w->id);
	o = emit(o, ft->text, ft->len);
	o = fmt_u64(o, e->pid);
	o = EMIT(o, ",\"tid\":");
	o = fmt_u64(o, e->tid);
	o = EMIT(o, ",\"ts\":");
	o = fmt_u64(o, wall_ns / 1000);
	o = EMIT(o, ",\"dur\":");
	o = fmt_u64(o, e->dur / 1000);
	o = EMIT(o, ",\"ph\":\"X\",\"args\":{\"hhash\":\"");
	o = emit(o, w->hhash[n->index], 16);
	if (fh) {
		o = EMIT(o, "\",\"fhash\":\"");
		o = emit(o, fh, 16);
	}
	o = EMIT(o, "\"");
	if (e->flags & DC_EV_FD) {
		o = EMIT(o, ",\"fd\":");
		o = fmt_i64(o, e->fd);
	}
	if (e->req || e->bytes) {
		o = EMIT(o, ",\"count\":");
		o = fmt_u64(o, e->req);
	}
	o = EMIT(o, ",\"ret\":");
	o = fmt_i64(o, e->ret);
	if (e->flags & DC_EV_OFFSET) {
		o = EMIT(o, ",\"offset\":");
		o = fmt_i64(o, e->offset);
	}
	/* The second file, where a mover's data came from. */
	if (e->fd2 != -1) {
		o = EMIT(o, ",\"fd2\":");
		o = fmt_i64(o, e->fd2);
	}
	if (fh2) {
		o = EMIT(o, ",\"fhash2\":\"");
		o = emit(o, fh2, 16);
		o = EMIT(o, "\"");
	}
	o = EMIT(o, "}}\n");
	w->o.len = o - w->o.buf;
	return w->o.err ? -1 : 0;
}

static int write_counter(void *wp, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns)
{
	struct pfw_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, c->func);
	char cat[64];

	category(f ? dc_reader_string(n->r, f->category) : "unknown", cat, sizeof(cat));
	begin_line(w, f ? dc_reader_string(n->r, f->name) : "unknown", cat, c->pid, c->pid);
	PUT(&w->o, ",\"ts\":");
	put_u64(&w->o, wall_ns / 1000);
	PUT(&w->o, ",\"ph\":\"C\",\"args\":{\"hhash\":\"");
	put(&w->o, w->hhash[n->index], 16);
	PUT(&w->o, "\",\"count\":");
	put_u64(&w->o, c->count);
	PUT(&w->o, ",\"size_sum\":");
	put_u64(&w->o, c->bytes);
	PUT(&w->o, ",\"dur_sum\":");
	put_u64(&w->o, c->time_ns / 1000);
	PUT(&w->o, "}}\n");
	return w->o.err ? -1 : 0;
}

static void job_facts(struct pfw_writer *w)
{
	const struct dc_job *job = w->job;
	const struct dc_node *n0 = &job->nodes[0];
	unsigned long long v[] = { job->events, job->lost, job->skipped };
	const char *names[] = { "events_in_node_files", "lost_events", "events_skipped_damaged" };
	char text[32];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(text, sizeof(text), "%llu", v[i]);
		metadata(w, n0, "datacrumbs", n0->nprocs ? n0->procs[0].pid : 0, names[i], text);
	}
	for (size_t i = 0; i < job->nnodes; i++)
		if (job->nodes[i].problem)
			metadata(w, &job->nodes[i], "datacrumbs", 0, "incomplete", job->nodes[i].problem);
}

static void free_writer(struct pfw_writer *w)
{
	for (size_t i = 0; w->fns && i < w->job->nnodes; i++) {
		for (size_t k = 0; w->fns[i] && k <= w->job->nodes[i].funcs.n; k++)
			free(w->fns[i][k].text);
		free(w->fns[i]);
	}
	free(w->fns);
	for (size_t i = 0; w->fhash && i < w->job->nnodes; i++)
		free(w->fhash[i]);
	free(w->fhash);
	free(w->hhash);
	free(w);
}

static void *open_writer(const char *path, int fd, const struct dc_job *job, bool gz, char *err, size_t errlen)
{
	struct pfw_writer *w = calloc(1, sizeof(*w));

	if (w)
		w->job = job;
	if (!w || !(w->hhash = calloc(job->nnodes + 1, sizeof(*w->hhash))) ||
	    !(w->fhash = calloc(job->nnodes + 1, sizeof(*w->fhash))) ||
	    !(w->fns = calloc(job->nnodes + 1, sizeof(*w->fns)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	w->job = job;
	for (size_t i = 0; i < job->nnodes; i++) {
		hash_hex(job->nodes[i].hdr.hostname, w->hhash[i]);
		if (!(w->fhash[i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(**w->fhash))) ||
		    !(w->fns[i] = calloc(job->nodes[i].funcs.n + 1, sizeof(**w->fns)))) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (dc_text_out_open(&w->o, fd, gz ? DC_OUT_GZIP : DC_OUT_PLAIN, path, err, errlen))
		goto fail;
	PUT(&w->o, "[\n");
	job_metadata(w);
	return w;
fail:
	if (w)
		free_writer(w);
	return NULL;
}

static void *open_pfw(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return open_writer(path, fd, job, false, err, errlen);
}

static void *open_pfw_gz(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return open_writer(path, fd, job, true, err, errlen);
}

static int close_writer(void *wp, int ok, char *err, size_t errlen)
{
	struct pfw_writer *w = wp;
	int e, rc = 0;

	if (ok) /* what the file does not hold, where DFTracer keeps facts */
		job_facts(w);
	e = dc_text_out_close(&w->o);
	if (e) {
		snprintf(err, errlen, "writing the DFTracer output: %s", strerror(e));
		rc = -1;
	}
	free_writer(w);
	return rc;
}

const struct dc_output_ops dc_pfw_output = {
	"pfw", ".pfw", open_pfw, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_pfw_gz_output = {
	"pfw.gz", ".pfw.gz", open_pfw_gz, write_event, write_counter, close_writer,
};
