// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel function sets (kernel: [vfs_write, ext4_*]): every traceable
 * function the set selects gets an entry and a return probe, through the
 * best way this kernel has: kprobe_multi links (one pair for the set),
 * else fentry/fexit for each function with BTF (a program pair of its own,
 * bpf/kfuncs.bpf.c) and kprobe/kretprobe perf events for the rest.
 */
#include "mechanisms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datacrumbs.skel.h"
#include "dc_event.h"
#include "hashtab.h"
#include "ksyms.h"
#include "parallel.h"
#include "probe_lock.h"

struct ktargets {
	struct dc_probes *p;
	const struct dc_probe_set *set;
	const struct dc_fn_spec *fn;
	const char **names;
	__u64 *cookies;
	size_t n, cap;
	bool full;
};

static int add_target(void *ctx, const char *name)
{
	struct ktargets *t = ctx;
	uint64_t key = dc_hash_string(name);
	long id;

	/* One probe per function, whichever sets name it. */
	if (t->full || dc_hashtab_get(t->p->attached, 0, key, NULL))
		return 0;
	id = dc_probes_add_function(t->p, name, t->set->category, DC_FUNC_KFUNC, t->fn->argbits);
	if (id < 0) {
		fprintf(stderr, "dc-agent: warning: more than %d functions: kernel function '%s' and later ones skipped\n",
			DC_MAX_FUNCS, name);
		t->full = true;
		return -1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **nv = realloc(t->names, cap * sizeof(*nv));
		__u64 *cv = nv ? realloc(t->cookies, cap * sizeof(*cv)) : NULL;

		if (nv)
			t->names = nv;
		if (!cv)
			return -1;
		t->cookies = cv;
		t->cap = cap;
	}
	if (dc_hashtab_put(t->p->attached, 0, key, id))
		return -1;
	t->names[t->n] = dc_probes_function(t->p, id)->name;
	t->cookies[t->n] = dc_probes_function(t->p, id)->argbits | id;
	t->n++;
	return 0;
}

/* kprobe_multi is all or nothing for a link: halving finds the refusers. */
static void attach_multi(struct dc_probes *p, const char **names, const __u64 *cookies, size_t n, size_t *attached,
			 struct dc_missing *refused)
{
	int fds[2];

	if (!n)
		return;
	for (int k = 0; k < 2; k++) {
		LIBBPF_OPTS(bpf_link_create_opts, opts, .kprobe_multi.syms = names, .kprobe_multi.cookies = cookies,
			    .kprobe_multi.cnt = n, .kprobe_multi.flags = k ? BPF_F_KPROBE_MULTI_RETURN : 0);
		struct bpf_program *prog = k ? p->skel->progs.dc_kprobe_exit : p->skel->progs.dc_kprobe_entry;

		fds[k] = bpf_link_create(bpf_program__fd(prog), 0, BPF_TRACE_KPROBE_MULTI, &opts);
	}
	if (fds[0] >= 0 && fds[1] >= 0 && !dc_probes_keep_fd(p, fds[0]) && !dc_probes_keep_fd(p, fds[1])) {
		*attached += n;
		return;
	}
	for (int k = 0; k < 2; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	if (n == 1) {
		dc_missing_note(refused, names[0]);
		return;
	}
	attach_multi(p, names, cookies, n / 2, attached, refused);
	attach_multi(p, names + n / 2, cookies + n / 2, n - n / 2, attached, refused);
}

struct fentry_job {
	const struct dc_clone_src *src[2];
	const char **names;
	const __u64 *cookies;
	struct dc_kbtf *btf;
	int *fds; /* 2 per function: links, or -errno */
};

static void attach_fentry(void *arg, size_t i)
{
	struct fentry_job *j = arg;
	const struct dc_kbtf *b = &j->btf[i / 2];
	int prog = dc_clone_load(j->src[i & 1], j->cookies[i / 2], b->nargs, b->btf_id, b->btf_fd, NULL, 0);

	j->fds[i] = prog < 0 ? prog : bpf_raw_tracepoint_open(NULL, prog);
	if (prog >= 0)
		close(prog); /* the link holds it */
}

/*
 * fentry/fexit for the functions with BTF, a program pair each; those
 * without (or that the kernel refuses) are left in place for kprobes, and
 * *nleft says how many. Returns how many attached.
 */
static size_t attach_fentries(struct dc_probes *p, struct ktargets *t, size_t *nleft)
{
	struct dc_kbtf *btf = calloc(t->n, sizeof(*btf));
	int *fds = calloc(2 * t->n, sizeof(*fds));
	size_t nb = 0, left = 0, attached = 0;
	int lock;
	const char **names = malloc(t->n * sizeof(*names));
	__u64 *cookies = malloc(t->n * sizeof(*cookies));
	struct fentry_job job = { { dc_probes_clone_src(p, DC_CLONE_FENTRY), dc_probes_clone_src(p, DC_CLONE_FEXIT) },
				  names, cookies, btf, fds };

	*nleft = t->n;
	if (!t->n || !btf || !fds || !names || !cookies || !job.src[0] || !job.src[1])
		goto out;
	/* Those with BTF first, to names/cookies; the others stay in t, in front. */
	for (size_t i = 0; i < t->n; i++) {
		if (dc_ksyms_btf(p->ksyms, t->names[i], &btf[nb]) == 0 && btf[nb].nargs <= DC_FENTRY_MAX_ARGS) {
			names[nb] = t->names[i];
			cookies[nb++] = t->cookies[i];
		} else {
			t->names[left] = t->names[i];
			t->cookies[left++] = t->cookies[i];
		}
	}
	lock = dc_probe_lock_take("attaching");
	dc_parallel_for(2 * nb, DC_LOAD_THREADS, attach_fentry, &job);
	dc_probe_lock_drop(lock);
	for (size_t i = 0; i < nb; i++) {
		if (fds[2 * i] >= 0 && fds[2 * i + 1] >= 0 && !dc_probes_keep_slow_fd(p, fds[2 * i]) &&
		    !dc_probes_keep_slow_fd(p, fds[2 * i + 1])) {
			attached++;
			continue;
		}
		for (int k = 0; k < 2; k++)
			if (fds[2 * i + k] >= 0)
				close(fds[2 * i + k]);
		/* Refused as fentry: a kprobe may still take it. */
		t->names[left] = names[i];
		t->cookies[left++] = cookies[i];
	}
	*nleft = left;
	if (p->verbose && nb)
		fprintf(stderr, "dc-agent: probe set '%s': %zu of %zu functions with fentry/fexit\n", t->set->name,
			attached, t->n);
out:
	free(btf);
	free(fds);
	free(names);
	free(cookies);
	return attached;
}

static size_t attach_kprobes(struct dc_probes *p, struct ktargets *t, size_t n, struct dc_missing *refused)
{
	bool *no = calloc(n ? n : 1, sizeof(*no));
	size_t attached = 0;

	if (!no || dc_probes_attach_pairs(p, DC_PERF_KPROBE, t->names, NULL, t->cookies, n, no)) {
		free(no);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (no[i])
			dc_missing_note(refused, t->names[i]);
		else
			attached++;
	}
	free(no);
	return attached;
}

/* "missing kprobe_multi (Linux N), fentry (...), kprobes (...)" */
static void say_unavailable(const struct dc_probes *p, const struct dc_probe_set *set)
{
	static const enum dc_feature need[] = { DC_FEAT_KPROBE_MULTI, DC_FEAT_FENTRY, DC_FEAT_KPROBES };

	fprintf(stderr, "dc-agent: warning: probe set '%s' refused: this kernel (%s) can trace no kernel function: "
			"it has none of", set->name, p->feat->release);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		fprintf(stderr, "%s %s (Linux %s)", i ? "," : "", dc_feature_name(need[i]), dc_feature_since(need[i]));
	fprintf(stderr, "; the rest of the trace goes on (dc-agent --check)\n");
}

int dc_kfuncs_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	bool kprobes = p->plan->want[DC_LEVEL_KPROBES], fentry = p->plan->want[DC_LEVEL_FENTRY];
	enum dc_kfunc_mech mech = dc_kprobe_mech(p->feat);
	struct ktargets t = { .p = p, .set = set };
	struct dc_missing miss = { "", 0 }, refused = { "", 0 };
	size_t attached = 0, left;

	if (!kprobes && !fentry) {
		say_unavailable(p, set);
		return 0;
	}
	if (!p->ksyms) {
		fprintf(stderr, "dc-agent: warning: probe set '%s' refused: the kernel's functions cannot be listed\n",
			set->name);
		return 0;
	}
	for (size_t i = 0; i < set->nfns && !t.full; i++) {
		t.fn = &set->fns[i];
		if (!dc_ksyms_select(p->ksyms, t.fn, add_target, &t))
			dc_missing_note(&miss, t.fn->name);
	}
	dc_missing_warn(set, &miss, "not traceable in this kernel (absent, inlined or notrace)");
	left = t.n;
	if (kprobes && mech == DC_KFUNC_MULTI) {
		attach_multi(p, t.names, t.cookies, t.n, &attached, &refused);
		left = 0;
	} else if (fentry) {
		attached = attach_fentries(p, &t, &left);
	}
	if (left && kprobes && mech != DC_KFUNC_MULTI)
		attached += attach_kprobes(p, &t, left, &refused);
	else
		for (size_t i = 0; mech != DC_KFUNC_MULTI && i < left; i++)
			dc_missing_note(&refused, t.names[i]);
	dc_missing_warn(set, &refused, "refused by the kernel, skipped");
	if (p->verbose)
		fprintf(stderr, "dc-agent: probe set '%s': %zu kernel functions with %s\n", set->name, attached,
			mech == DC_KFUNC_MULTI && kprobes ? dc_kfunc_mech_text(mech)
			: fentry && kprobes ? "fentry/fexit where they have BTF, else kprobes"
			: fentry ? dc_kfunc_mech_text(DC_KFUNC_FENTRY) : dc_kfunc_mech_text(mech));
	free(t.names);
	free(t.cookies);
	return (int)attached * 2;
}
