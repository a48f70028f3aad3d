// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The function table, what every kind of set shares, and detaching. */
#include "io_kind.h"
#include "probes_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "datacrumbs.skel.h"
#include "dc_event.h"
#include "uprobe_scope.h"
#include "hashtab.h"
#include "ksyms.h"
#include "links.h"
#include "parallel.h"
#include "probe_lock.h"
#include "probe_sites.h"

struct dc_probes *dc_probes_new(struct datacrumbs_bpf *skel, const struct dc_features *f,
				const struct dc_load_plan *plan, struct dc_ksyms *ksyms, const char *site_cache,
				int verbose)
{
	struct dc_probes *p = calloc(1, sizeof(*p));

	if (!p || !(p->attached = dc_hashtab_new(256))) {
		free(p);
		return NULL;
	}
	p->skel = skel;
	p->feat = f;
	p->plan = plan;
	p->ksyms = ksyms;
	p->site_cache = site_cache;
	p->verbose = verbose;
	if (plan->scoped && plan->want[DC_LEVEL_USER] &&
	    !(p->scope = dc_scope_new(bpf_program__fd(skel->progs.dc_call_entry),
				      bpf_program__fd(skel->progs.dc_call_exit), &skel->bss->dc_uprobes_every,
				      verbose))) {
		dc_hashtab_free(p->attached);
		free(p);
		return NULL;
	}
	return p;
}

int dc_probes_track(struct dc_probes *p, pid_t pid)
{
	int err = p && p->scope ? dc_scope_process(p->scope, pid) : 0;

	/* (A process gone already is nothing to say.) */
	if (err && err != -ESRCH)
		fprintf(stderr, "dc-agent: warning: pid %d: cannot put the uprobes on it (%s): its library calls "
				"are not seen\n", (int)pid, strerror(-err));
	return err;
}

bool dc_probes_scoped(const struct dc_probes *p)
{
	return p && p->scope;
}

void dc_probes_sweep(struct dc_probes *p)
{
	if (p && p->scope)
		dc_scope_sweep(p->scope);
}

static int adopt_fd(void *ctx, int fd)
{
	return dc_probes_keep_fd(ctx, fd);
}

/* The processes' links join the rest, to be detached with them. */
static void adopt_scope(struct dc_probes *p)
{
	dc_scope_release(p->scope, adopt_fd, p);
	p->scope = NULL;
}

int dc_probes_keep_fd(struct dc_probes *p, int fd)
{
	if (p->nfds == p->cap_fds) {
		size_t cap = p->cap_fds ? p->cap_fds * 2 : 16;
		int *v = realloc(p->fds, cap * sizeof(*v));

		if (!v)
			return -1;
		p->fds = v;
		p->cap_fds = cap;
	}
	p->fds[p->nfds++] = fd;
	return 0;
}

int dc_probes_keep_slow_fd(struct dc_probes *p, int fd)
{
	if (dc_probes_keep_fd(p, fd))
		return -1;
	p->nslow++;
	return 0;
}

int dc_probes_keep_link(struct dc_probes *p, struct bpf_link *l)
{
	if (p->nlinks == p->cap_links) {
		size_t cap = p->cap_links ? p->cap_links * 2 : 64;
		struct bpf_link **v = realloc(p->links, cap * sizeof(*v));

		if (!v)
			return -1;
		p->links = v;
		p->cap_links = cap;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

static const char *intern_category(struct dc_probes *p, const char *cat)
{
	char **v;

	for (size_t i = 0; i < p->ncategories; i++)
		if (strcmp(p->categories[i], cat) == 0)
			return p->categories[i];
	v = realloc(p->categories, (p->ncategories + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->categories = v;
	return v[p->ncategories++] = strdup(cat);
}

long dc_probes_find_function(const struct dc_probes *p, const char *name, const char *category)
{
	for (size_t i = 0; i < p->nfns; i++)
		if (strcmp(p->fns[i].name, name) == 0 && strcmp(p->fns[i].category, category) == 0)
			return (long)i;
	return -1;
}

long dc_probes_add_function(struct dc_probes *p, const char *name, const char *category, __u32 flags,
			    __u64 argbits)
{
	struct dc_function *f;

	if (p->nfns >= DC_MAX_FUNCS)
		return -1;
	if (p->nfns == p->cap_fns) {
		size_t cap = p->cap_fns ? p->cap_fns * 2 : 128;
		struct dc_function *v = realloc(p->fns, cap * sizeof(*v));

		if (!v)
			return -1;
		p->fns = v;
		p->cap_fns = cap;
	}
	f = &p->fns[p->nfns];
	f->name = strdup(name);
	f->category = intern_category(p, category);
	switch (dc_io_kind(name)) {
	case DC_IO_READ: argbits |= DC_COOKIE_READS; break;
	case DC_IO_WRITE: argbits |= DC_COOKIE_WRITES; break;
	default: break;
	}
	if (argbits & DC_COOKIE_BYTES_NESTED)
		flags |= DC_FUNC_BYTES_NESTED;
	f->flags = flags;
	f->argbits = argbits;
	if (!f->name || !f->category)
		return -1;
	return p->nfns++;
}

void dc_missing_note(struct dc_missing *m, const char *name)
{
	size_t len = strlen(m->text);

	if (m->n++ < 12 && len + strlen(name) + 3 < sizeof(m->text))
		snprintf(m->text + len, sizeof(m->text) - len, "%s%s", len ? ", " : "", name);
}

void dc_missing_warn(const struct dc_probe_set *set, const struct dc_missing *m, const char *what)
{
	if (!m->n)
		return;
	fprintf(stderr, "dc-agent: warning: probe set '%s': %zu function%s %s: %s%s\n", set->name, m->n,
		m->n == 1 ? "" : "s", what, m->text, m->n > 12 ? ", ..." : "");
}

/* ---- probe pairs through perf events ---- */

static struct bpf_program *clone_prog(struct dc_probes *p, enum dc_clone_prog which)
{
	struct bpf_program *progs[] = {
		[DC_CLONE_CALL_ENTRY] = p->skel->progs.dc_call_entry,
		[DC_CLONE_CALL_EXIT] = p->skel->progs.dc_call_exit,
		[DC_CLONE_KFUNC_ENTRY] = p->skel->progs.dc_kprobe_entry,
		[DC_CLONE_KFUNC_EXIT] = p->skel->progs.dc_kprobe_exit,
		[DC_CLONE_FENTRY] = p->skel->progs.dc_fentry,
		[DC_CLONE_FEXIT] = p->skel->progs.dc_fexit,
	};

	return progs[which];
}

const struct dc_clone_src *dc_probes_clone_src(struct dc_probes *p, enum dc_clone_prog which)
{
	if (!p->clone_taken[which] && dc_clone_src_take(&p->clone_src[which], clone_prog(p, which)) == 0)
		p->clone_taken[which] = true;
	return p->clone_taken[which] ? &p->clone_src[which] : NULL;
}

struct clone_job {
	const struct dc_clone_src *src[2];
	struct dc_perf_req *reqs;
};

static void load_clone(void *arg, size_t i)
{
	struct clone_job *j = arg;

	j->reqs[i].prog_fd = dc_clone_load(j->src[i & 1], j->reqs[i].cookie, 0, 0, 0, NULL, 0);
}

int dc_probes_attach_pairs(struct dc_probes *p, enum dc_perf_kind kind, const char *const *targets,
			   const unsigned long *offsets, const __u64 *cookies, size_t n, bool *refused)
{
	bool user = kind == DC_PERF_UPROBE, with_cookie = p->feat->has[DC_FEAT_COOKIE];
	struct dc_perf_req *reqs = calloc(n ? 2 * n : 1, sizeof(*reqs));
	struct bpf_program *entry = clone_prog(p, user ? DC_CLONE_CALL_ENTRY : DC_CLONE_KFUNC_ENTRY);
	struct bpf_program *exit = clone_prog(p, user ? DC_CLONE_CALL_EXIT : DC_CLONE_KFUNC_EXIT);
	int lock;

	if (!reqs)
		return -ENOMEM;
	for (size_t i = 0; i < 2 * n; i++)
		reqs[i] = (struct dc_perf_req){ targets[i / 2], offsets ? offsets[i / 2] : 0, i & 1,
						bpf_program__fd(i & 1 ? exit : entry), cookies[i / 2], -1 };
	if (!with_cookie) {
		/* No cookies: a copy of the two programs for each probe. */
		struct clone_job job = { { dc_probes_clone_src(p, user ? DC_CLONE_CALL_ENTRY : DC_CLONE_KFUNC_ENTRY),
					   dc_probes_clone_src(p, user ? DC_CLONE_CALL_EXIT : DC_CLONE_KFUNC_EXIT) },
					 reqs };

		if (!job.src[0] || !job.src[1]) {
			free(reqs);
			return -ENOMEM;
		}
		dc_parallel_for(2 * n, DC_LOAD_THREADS, load_clone, &job);
	}
	lock = dc_probe_lock_take("attaching");
	dc_perf_attach_all(kind, reqs, 2 * n, with_cookie, DC_ATTACH_THREADS);
	dc_probe_lock_drop(lock);
	for (size_t i = 0; i < n; i++) {
		struct dc_perf_req *in = &reqs[2 * i], *out = &reqs[2 * i + 1];

		/* An entry without its return would leave frames open: both or neither. */
		refused[i] = in->fd < 0 || out->fd < 0;
		for (int k = 0; k < 2; k++) {
			struct dc_perf_req *r = k ? out : in;

			if (!with_cookie && r->prog_fd >= 0)
				close(r->prog_fd); /* the perf event holds its program */
			if (r->fd >= 0 && (refused[i] || dc_probes_keep_slow_fd(p, r->fd)))
				close(r->fd);
		}
	}
	free(reqs);
	return 0;
}

/* ---- the table and detaching ---- */

__u64 dc_probes_decode_ns(const struct dc_probes *p)
{
	return p->decode_ns;
}

size_t dc_probes_count(const struct dc_probes *p)
{
	return p->nfns;
}

const struct dc_function *dc_probes_function(const struct dc_probes *p, __u32 id)
{
	return id < p->nfns ? &p->fns[id] : NULL;
}

/*
 * The kernel waits for grace periods to take a probe away: each perf-event
 * probe or fentry link one after another (perf_uprobe_destroy holds
 * event_mutex through it: the 46 uprobe events of the default sets take
 * 2.5 s on 6.1), and even a uprobe_multi link about 0.1 s. A child of its
 * own does it, and the agent ends without waiting; tracepoint links alone
 * go at once.
 */
bool dc_probes_slow_to_detach(const struct dc_probes *p)
{
	return p && p->nfds > 0;
}

int dc_probes_adopt_links(struct dc_probes *p, struct bpf_link **links, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (links[i] && dc_probes_keep_link(p, links[i]))
			return -1;
	return 0;
}

/* The table's memory; detaching is the caller's. */
static void free_table(struct dc_probes *p)
{
	for (size_t i = 0; i < p->nfns; i++)
		free(p->fns[i].name);
	for (size_t i = 0; i < p->ncategories; i++)
		free(p->categories[i]);
	for (int i = 0; i < DC_NR_CLONE_PROGS; i++)
		dc_clone_src_free(&p->clone_src[i]);
	free(p->categories);
	free(p->links);
	free(p->fds);
	free(p->fns);
	dc_hashtab_free(p->attached);
	for (size_t i = 0; i < p->ncodes; i++) {
		free(p->codes[i].key);
		dc_code_free(p->codes[i].code);
	}
	free(p->codes);
	free(p);
}

/* Links and multi-probe links side by side: their grace periods overlap.
 * Per-function probes one by one, as the kernel releases them (see
 * DC_ATTACH_THREADS). */
static void detach(struct dc_probes *p)
{
	if (!p->nslow) {
		dc_detach_all(p->links, p->nlinks, p->fds, p->nfds);
		return;
	}
	int lock;

	dc_links_destroy(p->links, p->nlinks);
	lock = dc_probe_lock_take("detaching");
	dc_fds_close_serial(p->fds, p->nfds);
	dc_probe_lock_drop(lock);
}

static void detach_then_exit(void *p)
{
	detach(p);
}

void dc_probes_destroy(struct dc_probes *p)
{
	if (!p)
		return;
	adopt_scope(p);
	detach(p);
	free_table(p);
}

/* This process's references only: the detaching child holds its own. */
static void let_go(struct dc_probes *p)
{
	for (size_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
}

pid_t dc_probes_destroy_detached(struct dc_probes *p)
{
	struct dc_detached d;

	if (p)
		adopt_scope(p);
	if (!dc_probes_slow_to_detach(p)) {
		dc_probes_destroy(p);
		return 0;
	}
	if (dc_detached_start(&d, "dc-agent-detach", detach_then_exit, p)) {
		dc_probes_destroy(p);
		return -1;
	}
	let_go(p);
	dc_detached_go(&d);
	free_table(p);
	return d.pid;
}
