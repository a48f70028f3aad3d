// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probes.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datacrumbs.skel.h"
#include "dc_event.h"
#include "hashtab.h"
#include "links.h"
#include "probe_sites.h"
#include "symbols.h"
#include "uprobe_multi.h"

struct dc_probes {
	struct datacrumbs_bpf *skel;
	bool verbose;
	struct dc_function *fns;
	size_t nfns, cap_fns;
	struct bpf_link **links; /* tracepoints */
	size_t nlinks, cap_links;
	int *link_fds;           /* uprobe_multi links */
	size_t nlink_fds, cap_link_fds;
	struct dc_hashtab *attached; /* (library hash, offset) -> function id */
	char **categories;
	size_t ncategories;
	bool syscalls_attached;
	/* System calls that observe a libc call (a thin wrapper) for a user set. */
	bool wrapped[DC_MAX_SYSCALLS];
	/* Each object's code is decoded once, whatever the sets that probe it. */
	struct code_cache {
		char *key; /* build id, else path */
		struct dc_code *code;
	} *codes;
	size_t ncodes;
};

struct dc_probes *dc_probes_new(struct datacrumbs_bpf *skel, bool verbose)
{
	struct dc_probes *p = calloc(1, sizeof(*p));

	if (!p || !(p->attached = dc_hashtab_new(256))) {
		free(p);
		return NULL;
	}
	p->skel = skel;
	p->verbose = verbose;
	return p;
}

int dc_probes_prepare(struct datacrumbs_bpf *skel)
{
	/* Attached only when a probe set asks for them. */
	bpf_program__set_autoattach(skel->progs.dc_sys_enter, false);
	bpf_program__set_autoattach(skel->progs.dc_sys_exit, false);
	bpf_program__set_autoattach(skel->progs.dc_block_issue, false);
	bpf_program__set_autoattach(skel->progs.dc_block_complete, false);
	bpf_program__set_autoattach(skel->progs.dc_page_add, false);
	bpf_program__set_autoattach(skel->progs.dc_page_delete, false);
	if (dc_uprobe_multi_prepare(skel->progs.dc_call_entry) ||
	    dc_uprobe_multi_prepare(skel->progs.dc_call_exit))
		return -1;
	return 0;
}

static int keep_fd(struct dc_probes *p, int fd)
{
	if (p->nlink_fds == p->cap_link_fds) {
		size_t cap = p->cap_link_fds ? p->cap_link_fds * 2 : 16;
		int *v = realloc(p->link_fds, cap * sizeof(*v));

		if (!v)
			return -1;
		p->link_fds = v;
		p->cap_link_fds = cap;
	}
	p->link_fds[p->nlink_fds++] = fd;
	return 0;
}

static int keep_link(struct dc_probes *p, struct bpf_link *l)
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

/* Returns the new function's id, or -1 when the table is full. */
static long add_function(struct dc_probes *p, const char *name, const char *category,
			 __u32 flags, __u64 argbits)
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
	f->flags = flags;
	f->argbits = argbits;
	if (!f->name || !f->category)
		return -1;
	return p->nfns++;
}

/* One entry and one return link for all the chosen functions of a library. */
static int attach_uprobes(struct dc_probes *p, const char *lib, const unsigned long *offsets,
			  const __u64 *cookies, size_t n)
{
	int in, out;

	in = dc_uprobe_multi_attach(p->skel->progs.dc_call_entry, lib, offsets, cookies, n, false);
	if (in < 0)
		return in;
	out = dc_uprobe_multi_attach(p->skel->progs.dc_call_exit, lib, offsets, cookies, n, true);
	if (out < 0) {
		close(in);
		return out;
	}
	if (keep_fd(p, in) || keep_fd(p, out)) {
		close(in);
		close(out);
		return -ENOMEM;
	}
	return 0;
}

/* Collects names that were not attached, for one warning line per set. */
struct missing {
	char text[512];
	size_t n;
};

static void note_missing(struct missing *m, const char *name)
{
	size_t len = strlen(m->text);

	if (m->n++ < 12 && len + strlen(name) + 3 < sizeof(m->text))
		snprintf(m->text + len, sizeof(m->text) - len, "%s%s", len ? ", " : "", name);
}

static void warn_missing(const struct dc_probe_set *set, const struct missing *m, const char *where)
{
	if (!m->n)
		return;
	fprintf(stderr, "dc-agent: warning: probe set '%s': %zu function%s not found in %s: %s%s\n",
		set->name, m->n, m->n == 1 ? "" : "s", where, m->text, m->n > 12 ? ", ..." : "");
}

static const struct syscall_name {
	const char *name;
	int nr;
} syscall_names[] = {
#include "syscall_names.h"
};

static int syscall_nr(const char *name)
{
	for (size_t i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
		if (strcmp(syscall_names[i].name, name) == 0)
			return syscall_names[i].nr;
	return -1;
}

/* Offsets and cookies of a library's functions, gathered for one attach. */
struct targets {
	unsigned long *offsets;
	__u64 *cookies;
	size_t n, cap;
	struct dc_code *code;
	const char *lib;
	struct missing miss;  /* named functions not in the library */
	struct missing refused; /* functions the kernel would not probe */
	size_t moved;         /* probes placed off the entry */
	size_t wrappers;      /* calls observed at their system call */
};

static int attach_syscall_programs(struct dc_probes *p);

/*
 * System call nr reports as function fn of set (its name, level and
 * arguments): 1 when added, 0 when nr is not a system call here or another
 * function already reports it (a libc call seen at its system call), -1 on
 * failure.
 */
static int add_syscall_function(struct dc_probes *p, const struct dc_probe_set *set, const struct dc_fn_spec *fn,
				int nr, struct missing *miss)
{
	__u64 cookie;
	long id;

	if (nr < 0 || nr >= DC_MAX_SYSCALLS) {
		note_missing(miss, fn->name);
		return 0;
	}
	if (p->wrapped[nr])
		return 0;
	id = add_function(p, fn->name, set->category, DC_EV_SYSCALL, fn->argbits);
	if (id < 0)
		return -1;
	cookie = fn->argbits | id | DC_COOKIE_ON;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.dc_syscalls), &nr, &cookie, BPF_ANY))
		return -1;
	return 1;
}

static struct dc_code *code_for(struct dc_probes *p, const char *lib)
{
	char err[512];
	struct dc_code *code;
	const char *key;

	for (size_t i = 0; i < p->ncodes; i++)
		if (strcmp(p->codes[i].key, lib) == 0)
			return p->codes[i].code;
	code = dc_code_open(lib, err, sizeof(err));
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

static int add_function_probe(struct dc_probes *p, const struct dc_probe_set *set,
			      const struct dc_elf_syms *syms, const char *name, __u64 argbits,
			      struct targets *t)
{
	long offset = dc_elf_offset(syms, name);
	uint64_t libkey = dc_hash_string(t->lib);
	struct dc_site site;
	long id;

	if (offset < 0) {
		note_missing(&t->miss, name);
		return 0;
	}
	/* Aliases (open/open64, pwrite/pwrite64) share an address: probe it once. */
	if (dc_hashtab_get(p->attached, libkey, offset, NULL))
		return 0;
	id = add_function(p, name, set->category, 0, argbits);
	if (id < 0) {
		fprintf(stderr, "dc-agent: warning: more than %d functions: '%s' and later ones skipped\n",
			DC_MAX_FUNCS, name);
		return -1;
	}
	if (dc_hashtab_put(p->attached, libkey, offset, id))
		return -1;
	dc_code_site(t->code, offset, dc_site_argregs(argbits), &site);
	if (site.offset != (unsigned long)offset)
		t->moved++;
	if (p->verbose)
		fprintf(stderr, "dc-agent: site %s %s+0x%lx (%s): %s\n", set->name, name,
			site.offset - offset, site.insn, dc_site_reason_text(site.reason));
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
	t->cookies[t->n] = dc_site_slots(argbits, &site) | id;
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
	int nr = syscall_nr(fn->syscall);
	int rc = add_syscall_function(p, set, fn, nr, &t->miss);

	if (rc <= 0) /* not here, or an alias: pwrite64 after pwrite */
		return rc;
	p->wrapped[nr] = true;
	t->wrappers++;
	if (p->verbose)
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
		note_missing(&t->miss, fn->name);
	if (fn && fn->select == DC_FN_REGEX)
		regfree(&re);
	return rc;
}

/*
 * uprobe_multi attaches all or nothing: the kernel refuses a whole link for
 * one instruction it will not probe. Halving what failed finds those few,
 * which are skipped and counted; the rest attach.
 */
static int attach_some(struct dc_probes *p, struct targets *t, size_t from, size_t n, size_t *attached)
{
	int rc;

	if (!n)
		return 0;
	rc = attach_uprobes(p, t->lib, t->offsets + from, t->cookies + from, n);
	if (rc == 0) {
		*attached += n;
		return 0;
	}
	if (rc == -ENOMEM || rc == -EPERM || rc == -ENOENT)
		return rc;
	if (n == 1) {
		const struct dc_function *f = dc_probes_function(p, t->cookies[from] & (DC_MAX_FUNCS - 1));

		note_missing(&t->refused, f ? f->name : "?");
		return 0;
	}
	rc = attach_some(p, t, from, n / 2, attached);
	return rc ? rc : attach_some(p, t, from + n / 2, n - n / 2, attached);
}

static int attach_library(struct dc_probes *p, const struct dc_probe_set *set)
{
	char lib[PATH_MAX], err[512];
	struct dc_elf_syms *syms;
	struct targets t = { .lib = lib };
	size_t attached = 0;
	int rc = 0;

	if (dc_find_library(set->library, lib, sizeof(lib))) {
		fprintf(stderr,
			"dc-agent: warning: probe set '%s': library %s not found (searched LD_LIBRARY_PATH, "
			"/etc/ld.so.conf and the default directories); its probes are skipped\n",
			set->name, set->library);
		return 0;
	}
	syms = dc_elf_open(lib, err, sizeof(err));
	if (!syms) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': %s; its probes are skipped\n", set->name, err);
		return 0;
	}
	t.code = code_for(p, lib);
	if (set->all_functions)
		rc = add_matching(p, set, syms, NULL, &t);
	for (size_t i = 0; !rc && i < set->nfns; i++) {
		const struct dc_fn_spec *fn = &set->fns[i];

		if (fn->syscall)
			rc = add_wrapper(p, set, fn, &t);
		else if (fn->select != DC_FN_NAME)
			rc = add_matching(p, set, syms, fn, &t);
		else
			rc = add_function_probe(p, set, syms, fn->name, fn->argbits, &t);
	}
	warn_missing(set, &t.miss, lib);
	if (!rc)
		rc = attach_some(p, &t, 0, t.n, &attached);
	/* A uprobe is an entry and a return probe; a wrapper, one table entry. */
	attached *= 2;
	if (!rc && t.wrappers && (rc = attach_syscall_programs(p)) == 0)
		attached += t.wrappers;
	if (rc)
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach to %s: %s%s\n", set->name, lib,
			strerror(-rc), rc == -EINVAL ? " (uprobe_multi links need Linux 6.6 or later)" : "");
	if (t.refused.n && t.refused.n == t.n && t.n > 1)
		/* Not one attached: the link itself, not an instruction (an old kernel). */
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach to %s (uprobe_multi links need "
				"Linux 6.6 or later)\n", set->name, lib);
	else if (t.refused.n)
		fprintf(stderr, "dc-agent: warning: probe set '%s': the kernel refused to probe %zu function%s "
				"of %s, skipped: %s%s\n", set->name, t.refused.n, t.refused.n == 1 ? "" : "s", lib,
			t.refused.text, t.refused.n > 12 ? ", ..." : "");
	if (p->verbose && t.n)
		fprintf(stderr, "dc-agent: probe set '%s': %zu of %zu probes off the entry, on an emulated "
				"instruction\n", set->name, t.moved, t.n);
	free(t.offsets);
	free(t.cookies);
	dc_elf_close(syms);
	return rc ? 0 : (int)attached;
}

/* The two raw tracepoints serve every system call: attached once. */
static int attach_syscall_programs(struct dc_probes *p)
{
	struct bpf_link *in, *out;

	if (p->syscalls_attached)
		return 0;
	in = bpf_program__attach(p->skel->progs.dc_sys_enter);
	out = in ? bpf_program__attach(p->skel->progs.dc_sys_exit) : NULL;
	if (!in || !out) {
		int err = -errno;

		bpf_link__destroy(in);
		return err;
	}
	if (keep_link(p, in) || keep_link(p, out))
		return -ENOMEM;
	p->syscalls_attached = true;
	return 0;
}

static int attach_syscalls(struct dc_probes *p, const struct dc_probe_set *set)
{
	struct missing miss = { "", 0 };
	int attached = 0, err;

	for (size_t i = 0; i < set->nfns; i++) {
		/* One already observed under a libc call's name is left to it. */
		int rc = add_syscall_function(p, set, &set->fns[i], syscall_nr(set->fns[i].name), &miss);

		if (rc < 0)
			return -1;
		attached += rc;
	}
	warn_missing(set, &miss, "this architecture's system calls");
	if (attached && (err = attach_syscall_programs(p))) {
		fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach the sys_enter/sys_exit "
				"tracepoints: %s\n", set->name, strerror(-err));
		return 0;
	}
	return attached;
}

/* Tells the BPF side which function ids kernel events are reported under. */
static int set_kernel_func(struct dc_probes *p, enum dc_kfunc k, __u32 id)
{
	int fd = bpf_map__fd(p->skel->maps.dc_config);
	struct dc_config cfg;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &cfg))
		return -1;
	cfg.kernel_func[k] = id;
	return bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY);
}

static int attach_kernel_group(struct dc_probes *p, const struct dc_probe_set *set)
{
	static const struct {
		const char *group, *name;
		enum dc_kfunc k;
	} funcs[] = {
		{ "block", "block_rq", DC_KFUNC_BLOCK_RQ },
		{ "pagecache", "page_cache_add", DC_KFUNC_PAGE_ADD },
		{ "pagecache", "page_cache_delete", DC_KFUNC_PAGE_DELETE },
	};
	bool block = strcmp(set->kernel, "block") == 0;
	struct bpf_program *progs[2] = {
		block ? p->skel->progs.dc_block_issue : p->skel->progs.dc_page_add,
		block ? p->skel->progs.dc_block_complete : p->skel->progs.dc_page_delete,
	};
	int attached = 0;

	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		long id;

		if (strcmp(funcs[i].group, set->kernel))
			continue;
		id = add_function(p, funcs[i].name, set->category, DC_EV_KERNEL, 0);
		if (id < 0 || set_kernel_func(p, funcs[i].k, id))
			return -1;
	}
	for (int i = 0; i < 2; i++) {
		struct bpf_link *l = bpf_program__attach(progs[i]);

		if (!l) {
			fprintf(stderr, "dc-agent: warning: probe set '%s': cannot attach %s: %s\n", set->name,
				bpf_program__section_name(progs[i]), strerror(errno));
			continue;
		}
		if (keep_link(p, l))
			return -1;
		attached++;
	}
	return attached;
}

int dc_probes_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	int n = set->kind == DC_SET_SYSCALLS ? attach_syscalls(p, set)
		: set->kind == DC_SET_KERNEL ? attach_kernel_group(p, set)
					     : attach_library(p, set);

	if (p->verbose && n >= 0)
		fprintf(stderr, "dc-agent: probe set '%s' (%s): %d probes attached\n", set->name, set->file, n);
	return n;
}

size_t dc_probes_count(const struct dc_probes *p)
{
	return p->nfns;
}

const struct dc_function *dc_probes_function(const struct dc_probes *p, __u32 id)
{
	return id < p->nfns ? &p->fns[id] : NULL;
}

void dc_probes_destroy(struct dc_probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nlink_fds; i++)
		close(p->link_fds[i]);
	dc_links_destroy(p->links, p->nlinks);
	for (size_t i = 0; i < p->nfns; i++)
		free(p->fns[i].name);
	for (size_t i = 0; i < p->ncategories; i++)
		free(p->categories[i]);
	free(p->categories);
	free(p->links);
	free(p->link_fds);
	free(p->fns);
	dc_hashtab_free(p->attached);
	for (size_t i = 0; i < p->ncodes; i++) {
		free(p->codes[i].key);
		dc_code_free(p->codes[i].code);
	}
	free(p->codes);
	free(p);
}
