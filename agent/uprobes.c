// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Library sets: each chosen function of a library gets an entry and a
 * return probe on the cheapest safe site of its code (probe_sites.c),
 * through uprobe_multi links where the kernel has them (for each process
 * of the job, where it can: uprobe_scope.c), else one perf event pair per
 * function. A libc call that only wraps one system call is
 * observed at that system call's tracepoint instead (tracepoints.c).
 */
#include "mechanisms.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "datacrumbs.skel.h"
#include "dc_event.h"
#include "hashtab.h"
#include "probe_sites.h"
#include "symbols.h"
#include "uprobe_multi.h"
#include "uprobe_scope.h"

/* Offsets and cookies of a library's functions, gathered for one attach. */
struct targets {
	unsigned long *offsets;
	__u64 *cookies;
	size_t n, cap;
	struct dc_code *code;
	const char *lib;
	struct dc_missing miss;    /* named functions not in the library */
	struct dc_missing refused; /* functions the kernel would not probe */
	size_t unasked;            /* of them, known before asking (DC_SITE_UNPROBEABLE) */
	struct dc_missing served;  /* functions a wrapper set records instead */
	struct dc_missing abnormal; /* functions that return twice or never */
	size_t moved;              /* probes placed off the entry */
	size_t wrappers;           /* calls observed at their system call */
	bool again;                /* another file of a library attached before: its functions' ids */
};

static struct dc_code *code_for(struct dc_probes *p, const char *lib)
{
	char err[512];
	struct dc_code *code;
	const char *key;

	for (size_t i = 0; i < p->ncodes; i++)
		if (strcmp(p->codes[i].key, lib) == 0)
			return p->codes[i].code;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	code = dc_code_open(lib, p->site_cache, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->decode_ns += (t1.tv_sec - t0.tv_sec) * 1000000000ull + t1.tv_nsec - t0.tv_nsec;
	if (!code) {
		fprintf(stderr, "dc-agent: warning: %s; its probes stay at function entries\n", err);
		return NULL;
	}
	key = *dc_code_build_id(code) ? dc_code_build_id(code) : lib;
	for (size_t i = 0; i < p->ncodes; i++) {
		if (strcmp(p->codes[i].key, key) == 0) { /* the same object under another path */
			dc_code_free(code);
			return p->codes[i].code;
		}
	}
	struct code_cache *v = realloc(p->codes, (p->ncodes + 1) * sizeof(*v));

	if (!v || !(key = strdup(key))) {
		dc_code_free(code);
		return NULL;
	}
	p->codes = v;
	p->codes[p->ncodes++] = (struct code_cache){ (char *)key, code };
	return code;
}

/*
 * Functions that return twice or never. A return probe replaces the return
 * address at entry: sigsetjmp saves that address and a later siglongjmp
 * lands on the kernel's trampoline with no return pending (SIGILL), a
 * vfork child returns through its parent's frame, a context switched away
 * comes back on another stack. Uprobes belong to the library file, so every
 * process on the node that maps it would be hit: these get no probe.
 */
static const char *const abnormal_returns[] = {
	"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "__sigsetjmp_cancel",
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "__libc_longjmp", "__libc_siglongjmp",
	"vfork", "__vfork", "getcontext", "setcontext", "swapcontext", "__getcontext", "__setcontext",
	"__swapcontext", "exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "thrd_exit",
	"__pthread_unwind", "__pthread_unwind_next", "__libc_start_main", "__assert_fail",
	"__assert_perror_fail", "__assert", "err", "errx", "verr", "verrx", "__stack_chk_fail",
	"__fortify_fail", "__chk_fail", "__libc_fatal", "_Unwind_Resume", "__cxa_throw", "__cxa_rethrow",
};

const char *const *dc_probes_never(size_t *n)
{
	*n = sizeof(abnormal_returns) / sizeof(abnormal_returns[0]);
	return abnormal_returns;
}

static bool returns_abnormally(const char *name)
{
	for (size_t i = 0; i < sizeof(abnormal_returns) / sizeof(abnormal_returns[0]); i++)
		if (strcmp(name, abnormal_returns[i]) == 0)
			return true;
	return false;
}

static int add_function_probe(struct dc_probes *p, const struct dc_probe_set *set,
			      const struct dc_elf_syms *syms, const char *name, __u64 argbits,
			      struct targets *t)
{
	long offset = dc_elf_offset(syms, name);
	uint64_t libkey = dc_hash_string(t->lib);
	struct dc_site site;
	long id;

	if (offset < 0) {
		dc_missing_note(&t->miss, name);
		return 0;
	}
	if (returns_abnormally(name)) {
		dc_missing_note(&t->abnormal, name);
		return 0;
	}
	/* A call is recorded once: where the wrapper records it, not here. */
	if (dc_wrapper_serves(p, name)) {
		dc_missing_note(&t->served, name);
		return 0;
	}
	/* Aliases (open/open64, pwrite/pwrite64) share an address: probe it once. */
	if (dc_hashtab_get(p->attached, libkey, offset, NULL))
		return 0;
	dc_code_site(t->code, offset, dc_site_argregs(argbits), &site);
	/* Per function: -vv (a set's summary line is -v's). */
	if (p->verbose > 1)
		fprintf(stderr, "dc-agent: site %s %s+0x%lx (%s): %s\n", set->name, name,
			site.offset - offset, site.insn, dc_site_reason_text(site.reason));
	if (site.reason == DC_SITE_UNPROBEABLE) {
		dc_missing_note(&t->refused, name);
		t->unasked++;
		return 0;
	}
	/* Another file of the library: the calls are the same functions'; a
	 * function the node's file has not is left out (no new ids mid-trace). */
	id = t->again ? dc_probes_find_function(p, name, set->category)
		      : dc_probes_add_function(p, name, set->category, 0, argbits);
	if (id < 0 && t->again)
		return 0;
	if (id < 0) {
		fprintf(stderr, "dc-agent: warning: more than %d functions: '%s' and later ones skipped\n",
			DC_MAX_FUNCS, name);
		return -1;
	}
	if (dc_hashtab_put(p->attached, libkey, offset, id))
		return -1;
	if (site.offset != (unsigned long)offset)
		t->moved++;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		unsigned long *o = realloc(t->offsets, cap * sizeof(*o));
		__u64 *c = o ? realloc(t->cookies, cap * sizeof(*c)) : NULL;

		if (o)
			t->offsets = o;
		if (!c)
			return -1;
		t->cookies = c;
		t->cap = cap;
	}
	t->offsets[t->n] = site.offset;
	t->cookies[t->n] = dc_site_slots(dc_probes_function(p, id)->argbits, &site) | id;
	t->n++;
	return 0;
}

/*
 * A libc call that is a thin wrapper over one system call is observed at
 * the system call's tracepoint, under the libc call's name and level: one
 * probe per call instead of a uprobe pair and a tracepoint pair.
 */
static int add_wrapper(struct dc_probes *p, const struct dc_probe_set *set, const struct dc_fn_spec *fn,
		       struct targets *t)
{
	int nr = dc_syscall_nr(fn->syscall);
	int rc = dc_syscall_function(p, set, fn, nr, &t->miss);

	if (rc <= 0) /* not here, or an alias: pwrite64 after pwrite */
		return rc;
	p->wrapped[nr] = true;
	t->wrappers++;
	if (p->verbose > 1)
		fprintf(stderr, "dc-agent: site %s %s: the %s system call's tracepoint (a thin wrapper)\n",
			set->name, fn->name, fn->syscall);
	return 0;
}

static bool name_matches(const struct dc_fn_spec *fn, const regex_t *re, const char *name)
{
	return fn->select == DC_FN_GLOB ? fnmatch(fn->name, name, 0) == 0 : regexec(re, name, 0, NULL, 0) == 0;
}

/* Every exported function a glob or regex selects (or all of them). */
static int add_matching(struct dc_probes *p, const struct dc_probe_set *set, const struct dc_elf_syms *syms,
			const struct dc_fn_spec *fn, struct targets *t)
{
	regex_t re;
	size_t found = 0;
	int rc = 0;

	if (fn && fn->select == DC_FN_REGEX && regcomp(&re, fn->name, REG_EXTENDED | REG_NOSUB))
		return 0; /* checked when the set was loaded */
	for (size_t i = 0; !rc && i < dc_elf_count(syms); i++) {
		const char *name = dc_elf_name(syms, i);

		if (fn && !name_matches(fn, &re, name))
			continue;
		found++;
		rc = add_function_probe(p, set, syms, name, fn ? fn->argbits : 0, t);
	}
	if (fn && !found)
		dc_missing_note(&t->miss, fn->name);
	if (fn && fn->select == DC_FN_REGEX)
		regfree(&re);
	return rc;
}

static void note_refused(struct dc_probes *p, struct targets *t, size_t i)
{
	const struct dc_function *f = dc_probes_function(p, t->cookies[i] & (DC_MAX_FUNCS - 1));

	dc_missing_note(&t->refused, f ? f->name : "?");
}

/* The kernel's refusals, each noted under its function's name. */
struct refusals {
	struct dc_probes *p;
	struct targets *t;
};

static int keep_link(void *ctx, int fd)
{
	return dc_probes_keep_fd(((struct refusals *)ctx)->p, fd);
}

static void refused_one(void *ctx, size_t i)
{
	struct refusals *r = ctx;

	note_refused(r->p, r->t, i);
}

/* One entry and one return link for all the chosen functions of a library
 * (halved where the kernel refuses an instruction); where uprobes go on the
 * job's processes only, a plan each of them gets links of (uprobe_scope.h). */
static int attach_multi(struct dc_probes *p, struct targets *t, size_t *attached)
{
	struct refusals r = { p, t };
	const struct dc_uprobe_sink sink = { keep_link, refused_one, &r };

	if (p->scope)
		return dc_scope_library(p->scope, t->lib, t->offsets, t->cookies, t->n, &sink, attached);
	return dc_uprobe_multi_pairs(bpf_program__fd(p->skel->progs.dc_call_entry),
				     bpf_program__fd(p->skel->progs.dc_call_exit), t->lib, t->offsets, t->cookies, t->n,
				     0, &sink, attached);
}

/* A perf event pair per function, side by side. */
static int attach_perf(struct dc_probes *p, struct targets *t, size_t *attached)
{
	const char **libs = malloc((t->n ? t->n : 1) * sizeof(*libs));
	bool *refused = calloc(t->n ? t->n : 1, sizeof(*refused));
	int rc = -ENOMEM;

	if (libs && refused) {
		for (size_t i = 0; i < t->n; i++)
			libs[i] = t->lib;
		rc = dc_probes_attach_pairs(p, DC_PERF_UPROBE, libs, t->offsets, t->cookies, t->n, refused);
	}
	for (size_t i = 0; !rc && i < t->n; i++) {
		if (refused[i])
			note_refused(p, t, i);
		else
			(*attached)++;
	}
	free(libs);
	free(refused);
	return rc;
}

static void report(struct dc_probes *p, const struct dc_probe_set *set, const struct targets *t, int rc)
{
	if (rc)
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach to %s: %s\n", set->name, t->lib,
			strerror(-rc));
	if (t->n > 1 && t->refused.n - t->unasked == t->n)
		/* Not one attached: the kernel's probes, not an instruction. */
		fprintf(stderr, "dc-agent: warning: probe set '%s': the kernel refused every probe on %s (%s)\n",
			set->name, t->lib, dc_user_mech_text(dc_user_mech(p->feat)));
	else if (t->refused.n)
		fprintf(stderr, "dc-agent: warning: probe set '%s': the kernel refused to probe %zu function%s "
				"of %s, skipped: %s%s\n", set->name, t->refused.n, t->refused.n == 1 ? "" : "s", t->lib,
			t->refused.text, t->refused.n > 12 ? ", ..." : "");
	if (p->verbose && t->n)
		fprintf(stderr, "dc-agent: probe set '%s': %zu of %zu probes off the entry, on an emulated "
				"instruction; attached with %s\n", set->name, t->moved, t->n,
			dc_user_mech_text(dc_user_mech(p->feat)));
}

/*
 * The set's functions in the library file at lib, read from the file at
 * elf (the same, or a copy of it). again: another file of the library,
 * after the node's (dc_uprobes_attach_file): a job's file, so its code is
 * not decoded for sites, which the site cache would keep by a build id
 * the job's user chose; its probes stay at function entries.
 */
static int attach_library(struct dc_probes *p, const struct dc_probe_set *set, const char *lib, const char *elf,
			  bool again)
{
	char err[PATH_MAX + 64];
	enum dc_user_mech mech = dc_user_mech(p->feat);
	struct dc_elf_syms *syms;
	struct targets t = { .lib = lib, .again = again };
	size_t attached = 0;
	int rc = 0;

	syms = dc_elf_open(elf, err, sizeof(err));
	if (!syms) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': %s; its probes are skipped\n", set->name, err);
		return 0;
	}
	t.code = again ? NULL : code_for(p, lib);
	if (set->all_functions)
		rc = add_matching(p, set, syms, NULL, &t);
	for (size_t i = 0; !rc && i < set->nfns; i++) {
		const struct dc_fn_spec *fn = &set->fns[i];

		if (fn->syscall) {
			/* A system call's tracepoint sees every file's callers. */
			if (!again)
				rc = add_wrapper(p, set, fn, &t);
		} else if (fn->select != DC_FN_NAME) {
			rc = add_matching(p, set, syms, fn, &t);
		} else {
			rc = add_function_probe(p, set, syms, fn->name, fn->argbits, &t);
		}
	}
	snprintf(err, sizeof(err), "not found in %s", lib);
	dc_missing_warn(set, &t.miss, err);
	if (!again) {
		dc_missing_warn(set, &t.served, "recorded by " DC_WRAPPER_NAME " (a wrapper set), so not probed");
		dc_missing_warn(set, &t.abnormal, "left out, as functions that return twice or never (a return "
						  "probe would break them in every process that maps the library)");
	}
	if (t.n && (mech == DC_USER_NONE || !p->plan->want[DC_LEVEL_USER])) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': %zu uprobes not attached: %s\n", set->name, t.n,
			mech == DC_USER_NONE ? "this kernel has no uprobe perf events (dc-agent --check)"
					     : "the kernel refused the uprobe programs (see above)");
		t.n = 0;
	}
	if (!rc)
		rc = mech == DC_USER_MULTI ? attach_multi(p, &t, &attached) : attach_perf(p, &t, &attached);
	/* A uprobe is an entry and a return probe; a wrapper, one table entry. */
	attached *= 2;
	if (!rc && t.wrappers && (rc = dc_syscall_programs_attach(p)) == 0)
		attached += t.wrappers;
	report(p, set, &t, rc);
	free(t.offsets);
	free(t.cookies);
	dc_elf_close(syms);
	return rc ? 0 : (int)attached;
}

int dc_uprobes_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	char lib[PATH_MAX];

	if (dc_find_library(set->library, lib, sizeof(lib))) {
		fprintf(stderr,
			"dc-agent: warning: probe set '%s': library %s not found (searched LD_LIBRARY_PATH, "
			"/etc/ld.so.conf and the default directories); its probes are skipped\n",
			set->name, set->library);
		return 0;
	}
	return attach_library(p, set, lib, lib, false);
}

int dc_uprobes_attach_file(struct dc_probes *p, const struct dc_probe_set *set, const char *path, const char *copy)
{
	return attach_library(p, set, path, copy, true);
}
