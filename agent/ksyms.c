// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "ksyms.h"

#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_MODULES 64

struct ksym {
	char *name;
	char *module; /* NULL: vmlinux */
};

struct kbtf_module {
	char name[64];
	struct btf *btf;
	int fd;
};

struct dc_ksyms {
	struct ksym *v;
	size_t n, cap;
	struct btf *vmlinux;
	bool vmlinux_tried;
	struct kbtf_module mods[MAX_MODULES];
	size_t nmods;
};

static int add(struct dc_ksyms *k, const char *name, size_t len, const char *mod, size_t modlen)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 8192;
		struct ksym *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -1;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n].name = strndup(name, len);
	k->v[k->n].module = modlen ? strndup(mod, modlen) : NULL;
	if (!k->v[k->n].name)
		return -1;
	k->n++;
	return 0;
}

/* "name" or "name [module]", one a line. */
static int read_filter_functions(struct dc_ksyms *k, FILE *f)
{
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, " \t\n");
		const char *mod = strchr(line + len, '[');
		size_t modlen = mod ? strcspn(mod + 1, "]") : 0;

		if (len && add(k, line, len, mod ? mod + 1 : NULL, modlen))
			return -1;
	}
	return 0;
}

/* "addr type name [module]": the text symbols. */
static int read_kallsyms(struct dc_ksyms *k, FILE *f)
{
	char line[512], type, name[256], mod[64];

	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%*s %c %255s [%63[^]]]", &type, name, mod);

		if (n >= 2 && (type == 't' || type == 'T') && add(k, name, strlen(name), n == 3 ? mod : NULL,
								n == 3 ? strlen(mod) : 0))
			return -1;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ksym *)a)->name, ((const struct ksym *)b)->name);
}

static void free_sym(struct ksym *s)
{
	free(s->name);
	free(s->module);
}

struct dc_ksyms *dc_ksyms_open(char *err, size_t errlen)
{
	static const char *const lists[] = { "/sys/kernel/tracing/available_filter_functions",
					     "/sys/kernel/debug/tracing/available_filter_functions" };
	struct dc_ksyms *k = calloc(1, sizeof(*k));
	FILE *f = NULL;
	int rc = -1;

	if (!k) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; !f && i < sizeof(lists) / sizeof(lists[0]); i++)
		f = fopen(lists[i], "r");
	if (f) {
		rc = read_filter_functions(k, f);
	} else if ((f = fopen("/proc/kallsyms", "r"))) {
		rc = read_kallsyms(k, f);
	}
	if (f)
		fclose(f);
	if (rc || !k->n) {
		snprintf(err, errlen, "cannot read the kernel's traceable functions (available_filter_functions, "
				      "/proc/kallsyms): %s", rc ? strerror(errno) : "empty");
		dc_ksyms_free(k);
		return NULL;
	}
	/* One entry per name: static functions of one name are one probe target. */
	qsort(k->v, k->n, sizeof(*k->v), by_name);
	size_t out = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (out && strcmp(k->v[out - 1].name, k->v[i].name) == 0) {
			free_sym(&k->v[i]);
			continue;
		}
		k->v[out++] = k->v[i];
	}
	k->n = out;
	return k;
}

void dc_ksyms_free(struct dc_ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free_sym(&k->v[i]);
	free(k->v);
	for (size_t i = 0; i < k->nmods; i++) {
		btf__free(k->mods[i].btf);
		if (k->mods[i].fd > 0)
			close(k->mods[i].fd);
	}
	btf__free(k->vmlinux);
	free(k);
}

static const struct ksym *find(const struct dc_ksyms *k, const char *name)
{
	struct ksym key = { (char *)name, NULL };

	return bsearch(&key, k->v, k->n, sizeof(*k->v), by_name);
}

size_t dc_ksyms_select(const struct dc_ksyms *k, const struct dc_fn_spec *spec,
		       int (*fn)(void *ctx, const char *name), void *ctx)
{
	regex_t re;
	size_t found = 0;

	if (spec->select == DC_FN_NAME) {
		const struct ksym *s = find(k, spec->name);

		return s && fn(ctx, s->name) == 0 ? 1 : 0;
	}
	if (spec->select == DC_FN_REGEX && regcomp(&re, spec->name, REG_EXTENDED | REG_NOSUB))
		return 0; /* checked when the set was loaded */
	for (size_t i = 0; i < k->n; i++) {
		bool hit = spec->select == DC_FN_GLOB ? fnmatch(spec->name, k->v[i].name, 0) == 0
						      : regexec(&re, k->v[i].name, 0, NULL, 0) == 0;

		if (hit && fn(ctx, k->v[i].name) == 0)
			found++;
	}
	if (spec->select == DC_FN_REGEX)
		regfree(&re);
	return found;
}

/* The BTF of a loaded module, with the fd a program names it by. */
static struct kbtf_module *module_btf(struct dc_ksyms *k, const char *module)
{
	struct kbtf_module *m;
	__u32 id = 0;

	for (size_t i = 0; i < k->nmods; i++)
		if (strcmp(k->mods[i].name, module) == 0)
			return k->mods[i].btf ? &k->mods[i] : NULL;
	if (k->nmods == MAX_MODULES)
		return NULL;
	m = &k->mods[k->nmods++];
	snprintf(m->name, sizeof(m->name), "%s", module);
	while (bpf_btf_get_next_id(id, &id) == 0) {
		char name[64] = "";
		struct bpf_btf_info info = { .name = (__u64)(unsigned long)name, .name_len = sizeof(name) };
		__u32 len = sizeof(info);
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && strcmp(name, module) == 0) {
			m->btf = btf__load_from_kernel_by_id_split(id, k->vmlinux);
			if (m->btf) {
				m->fd = fd;
				return m;
			}
		}
		close(fd);
	}
	return NULL;
}

static int func_args(const struct btf *btf, __s32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	if (!t || !btf_is_func(t) || !(t = btf__type_by_id(btf, t->type)) || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t);
}

int dc_ksyms_btf(struct dc_ksyms *k, const char *name, struct dc_kbtf *out)
{
	const struct ksym *s = find(k, name);
	struct kbtf_module *m;
	__s32 id;

	if (!k->vmlinux_tried) {
		k->vmlinux_tried = true;
		k->vmlinux = btf__load_vmlinux_btf();
	}
	if (!k->vmlinux || !s)
		return -1;
	if (!s->module) {
		id = btf__find_by_name_kind(k->vmlinux, name, BTF_KIND_FUNC);
		if (id <= 0)
			return -1;
		*out = (struct dc_kbtf){ id, 0, func_args(k->vmlinux, id) };
		return out->nargs < 0 ? -1 : 0;
	}
	if (!(m = module_btf(k, s->module)))
		return -1;
	id = btf__find_by_name_kind(m->btf, name, BTF_KIND_FUNC);
	if (id <= 0)
		return -1;
	*out = (struct dc_kbtf){ id, m->fd, func_args(m->btf, id) };
	return out->nargs < 0 ? -1 : 0;
}

struct first {
	struct dc_ksyms *k;
	int max_args;
	char *out;
	size_t outlen;
	bool found;
};

static int take_first(void *ctx, const char *name)
{
	struct first *f = ctx;
	struct dc_kbtf b;

	if (f->found || dc_ksyms_btf(f->k, name, &b) || b.nargs > f->max_args)
		return -1;
	snprintf(f->out, f->outlen, "%s", name);
	f->found = true;
	return 0;
}

int dc_ksyms_first_fentry(struct dc_ksyms *k, const struct dc_probe_set *sets, int nsets, int max_args, char *out,
			  size_t outlen)
{
	struct first f = { k, max_args, out, outlen, false };

	for (int i = 0; i < nsets && !f.found; i++)
		for (size_t j = 0; sets[i].kind == DC_SET_KFUNCS && j < sets[i].nfns && !f.found; j++)
			dc_ksyms_select(k, &sets[i].fns[j], take_first, &f);
	return f.found ? 0 : -1;
}
