// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/stat.h>
#include <yaml.h>

#include "dc_event.h"
#include "io_kind.h"
#include "wrapper_funcs.h"

struct ctx {
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
};

static int fail_at(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(c->err, c->errlen, "%s:%zu: ", c->file, n ? n->start_mark.line + 1 : 0);

	va_start(ap, fmt);
	vsnprintf(c->err + k, c->errlen - k, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int load_document(const char *path, yaml_document_t *doc, char *err, size_t errlen)
{
	yaml_parser_t parser;
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "cannot parse YAML");
		rc = -1;
	} else if (!yaml_document_get_root_node(doc)) {
		snprintf(err, errlen, "%s: empty file", path);
		yaml_document_delete(doc);
		rc = -1;
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

/* Calls fn for each key: value of a mapping node; stops at the first error. */
static int each_pair(struct ctx *c, yaml_node_t *map,
		     int (*fn)(struct ctx *, const char *, yaml_node_t *, void *), void *arg)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return fail_at(c, map, "expected a mapping of key: value");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);

		if (!scalar(k))
			return fail_at(c, k, "keys must be plain words");
		/* YAML keeps the last of two equal keys: a typo would go unseen. */
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
			const char *prev = scalar(yaml_document_get_node(c->doc, q->key));

			if (prev && strcmp(prev, scalar(k)) == 0)
				return fail_at(c, k, "key '%s' appears twice in this mapping (first on line %zu)",
					       prev, yaml_document_get_node(c->doc, q->key)->start_mark.line + 1);
		}
		if (fn(c, scalar(k), v, arg))
			return -1;
	}
	return 0;
}

static int to_int(struct ctx *c, yaml_node_t *v, const char *key, long lo, long hi, long *out)
{
	const char *s = scalar(v);
	char *end;

	if (!s || !*s)
		return fail_at(c, v, "%s: expected a number", key);
	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || *end || *out < lo || *out > hi)
		return fail_at(c, v, "%s: '%s' is not a whole number from %ld to %ld", key, s, lo, hi);
	return 0;
}

static int to_string(struct ctx *c, yaml_node_t *v, const char *key, char **out)
{
	const char *s = scalar(v);

	if (!s || !*s)
		return fail_at(c, v, "%s: expected a word or a path", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : fail_at(c, v, "out of memory");
}

/* ---- probe sets ---- */

static const char *const slot_keys[DC_NR_SLOTS] = {
	[DC_SLOT_PATH] = "path", [DC_SLOT_FD] = "fd", [DC_SLOT_HANDLE] = "handle",
	[DC_SLOT_BYTES] = "bytes", [DC_SLOT_MUL] = "count", [DC_SLOT_OFFSET] = "offset",
	[DC_SLOT_DTYPE] = "datatype", [DC_SLOT_HANDLE_OUT] = "handle_out", [DC_SLOT_PARENT] = "parent",
	[DC_SLOT_DIRFD] = "dirfd", [DC_SLOT_IOV] = "iov", [DC_SLOT_FD2] = "fd2", [DC_SLOT_PATH2] = "path2",
};

static const char *const ret_kinds[] = {
	[DC_RET_PLAIN] = "plain", [DC_RET_FD] = "fd", [DC_RET_HANDLE] = "handle",
	[DC_RET_BYTES] = "bytes", [DC_RET_ITEMS] = "items", [DC_RET_INT] = "int",
	[DC_RET_INT_BYTES] = "int_bytes", [DC_RET_STATUS] = "status", [DC_RET_CHAR] = "char",
	[DC_RET_LINE] = "line", [DC_RET_REFS] = "refs",
};

static int fn_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct dc_fn_spec *fn = arg;
	long pos;

	if (strcmp(key, "name") == 0 || strcmp(key, "match") == 0 || strcmp(key, "regex") == 0) {
		if (fn->name)
			return fail_at(c, v, "a function has one of name, match or regex");
		fn->select = key[0] == 'n' ? DC_FN_NAME : key[0] == 'm' ? DC_FN_GLOB : DC_FN_REGEX;
		return to_string(c, v, key, &fn->name);
	}
	if (strcmp(key, "syscall") == 0)
		return to_string(c, v, key, &fn->syscall);
	if (strcmp(key, "closes") == 0) {
		const char *s = scalar(v);

		if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
			if (strcmp(s, "true") == 0)
				fn->argbits |= DC_COOKIE_CLOSES;
			return 0;
		}
		return fail_at(c, v, "closes: expected true or false");
	}
	if (strcmp(key, "bytes_from") == 0) {
		if (scalar(v) && strcmp(scalar(v), "nested") == 0) {
			fn->argbits |= DC_COOKIE_BYTES_NESTED;
			return 0;
		}
		return fail_at(c, v, "bytes_from: expected nested (the bytes of the system calls made inside the call)");
	}
	if (strcmp(key, "ret") == 0) {
		for (size_t i = 0; i < sizeof(ret_kinds) / sizeof(ret_kinds[0]); i++) {
			if (scalar(v) && strcmp(scalar(v), ret_kinds[i]) == 0) {
				fn->argbits |= (__u64)i << DC_COOKIE_RET_SHIFT;
				return 0;
			}
		}
		return fail_at(c, v, "ret: expected plain, int, fd, handle, bytes, int_bytes, items, status, char, line or refs");
	}
	/* A string whose length is the bytes (fputs' text, fgets' buffer). */
	if (strcmp(key, "text") == 0) {
		if (DC_COOKIE_SLOT(fn->argbits, DC_SLOT_BYTES))
			return fail_at(c, v, "text: is the call's bytes: give text: or bytes:, not both");
		if (to_int(c, v, key, 1, 6, &pos))
			return -1;
		fn->argbits = DC_COOKIE_SET_SLOT(fn->argbits, DC_SLOT_BYTES, pos) | DC_COOKIE_TEXT;
		return 0;
	}
	if (strcmp(key, "stream") == 0) {
		if (scalar(v) && strcmp(scalar(v), "standard") == 0) {
			fn->argbits |= DC_COOKIE_STD;
			return 0;
		}
		return fail_at(c, v, "stream: expected standard (the standard input for a call that reads, "
				     "the standard output for one that writes: printf, getchar)");
	}
	for (int s = 0; s < DC_NR_SLOTS; s++) {
		if (strcmp(key, slot_keys[s]) != 0)
			continue;
		if (s == DC_SLOT_BYTES && (fn->argbits & DC_COOKIE_TEXT))
			return fail_at(c, v, "text: is the call's bytes: give text: or bytes:, not both");
		if (to_int(c, v, key, 1, 6, &pos))
			return -1;
		fn->argbits = DC_COOKIE_SET_SLOT(fn->argbits, s, pos);
		return 0;
	}
	return fail_at(c, v, "unknown function key '%s' (name, match, regex, syscall, path, fd, handle, "
			     "handle_out, parent, bytes, text, count, offset, datatype, stream, ret, closes, bytes_from)",
		       key);
}

static int load_functions(struct ctx *c, yaml_node_t *v, struct dc_probe_set *set)
{
	size_t n;

	if (scalar(v) && strcmp(scalar(v), "all") == 0) {
		set->all_functions = true;
		return 0;
	}
	if (!v || v->type != YAML_SEQUENCE_NODE)
		return fail_at(c, v, "expected a list of functions or 'all'");
	n = v->data.sequence.items.top - v->data.sequence.items.start;
	set->fns = calloc(n ? n : 1, sizeof(*set->fns));
	if (!set->fns)
		return fail_at(c, v, "out of memory");
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);
		struct dc_fn_spec *fn = &set->fns[set->nfns++];

		if (scalar(item)) {
			if (!(fn->name = strdup(scalar(item))))
				return fail_at(c, item, "out of memory");
			/* Kernel functions are named by the thousand: a bare glob is a glob. */
			if (set->kind == DC_SET_KFUNCS && strpbrk(fn->name, "*?["))
				fn->select = DC_FN_GLOB;
			continue;
		}
		if (each_pair(c, item, fn_key, fn))
			return -1;
		if (!fn->name)
			return fail_at(c, item, "a function needs a name (or a match: glob or regex: pattern)");
		if (fn->select == DC_FN_REGEX) {
			regex_t re;
			int err = regcomp(&re, fn->name, REG_EXTENDED | REG_NOSUB);

			if (err) {
				char why[128];

				regerror(err, &re, why, sizeof(why));
				return fail_at(c, item, "regex '%s': %s", fn->name, why);
			}
			regfree(&re);
		}
		if (fn->syscall && fn->select != DC_FN_NAME)
			return fail_at(c, item, "syscall: goes with one function's name");
	}
	return 0;
}

static int set_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct dc_probe_set *set = arg;

	if (strcmp(key, "set") == 0)
		return to_string(c, v, key, &set->name);
	if (strcmp(key, "category") == 0)
		return to_string(c, v, key, &set->category);
	if (strcmp(key, "library") == 0)
		return to_string(c, v, key, &set->library);
	if (strcmp(key, "kernel") == 0) {
		if (v && v->type == YAML_SEQUENCE_NODE) {
			if (set->fns || set->all_functions)
				return fail_at(c, v, "a set has one list: functions, syscalls or kernel");
			set->kind = DC_SET_KFUNCS;
			return load_functions(c, v, set);
		}
		if (!scalar(v) || (strcmp(scalar(v), "block") && strcmp(scalar(v), "pagecache") &&
				   strcmp(scalar(v), "io_uring") && strcmp(scalar(v), "mmap") && strcmp(scalar(v), "aio")))
			return fail_at(c, v, "kernel: expected block, pagecache, io_uring, mmap, aio or a list of kernel functions");
		set->kind = DC_SET_KERNEL;
		return to_string(c, v, key, &set->kernel);
	}
	if (strcmp(key, "wrapper") == 0) {
		if (!scalar(v) || strcmp(scalar(v), DC_WRAPPER_NAME))
			return fail_at(c, v, "wrapper: expected " DC_WRAPPER_NAME " (the MPI-IO and HDF5 levels recorded in the ranks)");
		return to_string(c, v, key, &set->wrapper);
	}
	if (strcmp(key, "description") == 0)
		return 0;
	if (strcmp(key, "handles") == 0) {
		if (!scalar(v) || strcmp(scalar(v), "stdio"))
			return fail_at(c, v, "handles: expected stdio (the C library's FILE streams)");
		set->stdio_handles = true;
		return 0;
	}
	if (strcmp(key, "datatype_size_offset") == 0) {
		long n;

		if (to_int(c, v, key, 1, 4096, &n))
			return -1;
		set->dtype_size_offset = n;
		return 0;
	}
	if (strcmp(key, "functions") == 0 || strcmp(key, "syscalls") == 0) {
		if (set->fns || set->all_functions)
			return fail_at(c, v, "a set has one list: functions, syscalls or kernel");
		set->kind = key[0] == 's' ? DC_SET_SYSCALLS : DC_SET_UPROBES;
		return load_functions(c, v, set);
	}
	return fail_at(c, v, "unknown key '%s' (set, description, category, library, kernel, wrapper, handles, "
			     "datatype_size_offset, functions, syscalls)", key);
}

/* A wrapper set names functions of the wrapper's list, by name only. */
static int check_wrapper_set(struct ctx *c, yaml_node_t *root, struct dc_probe_set *set)
{
	if (set->kind != DC_SET_UPROBES || set->library || set->dtype_size_offset)
		return fail_at(c, root, "a 'wrapper:' set has a list of functions (or 'all') and no library, "
					"kernel, syscalls or datatype_size_offset");
	set->kind = DC_SET_WRAPPER;
	for (size_t i = 0; i < set->nfns; i++) {
		const struct dc_fn_spec *fn = &set->fns[i];

		if (fn->select != DC_FN_NAME || fn->syscall || fn->argbits)
			return fail_at(c, root, "wrapper function '%s': a name only (the wrapper knows its arguments)",
				       fn->name);
		if (dc_wrapper_func_id(fn->name) < 0)
			return fail_at(c, root, "wrapper function '%s': not an MPI-IO, HDF5 or STDIO call " DC_WRAPPER_NAME " records",
				       fn->name);
	}
	if (!set->category && !(set->category = strdup(set->name)))
		return fail_at(c, root, "out of memory");
	if (set->all_functions && strcmp(set->category, DC_WRAPPER_MPIIO) && strcmp(set->category, DC_WRAPPER_HDF5) &&
	    strcmp(set->category, DC_WRAPPER_STDIO))
		return fail_at(c, root, "a wrapper set with 'functions: all' has category " DC_WRAPPER_MPIIO ", " DC_WRAPPER_HDF5
				       " or " DC_WRAPPER_STDIO
					" (the calls of that level)");
	return 0;
}

static int check_set(struct ctx *c, yaml_node_t *root, struct dc_probe_set *set)
{
	if (!set->name)
		return fail_at(c, root, "missing 'set:' (the probe set's name)");
	if (set->wrapper)
		return (set->fns || set->all_functions) ? check_wrapper_set(c, root, set)
							 : fail_at(c, root, "missing 'functions:' (names, or all)");
	if (set->kind == DC_SET_KERNEL && (set->fns || set->all_functions || set->library))
		return fail_at(c, root, "a 'kernel:' set names no library or functions");
	if (set->kind == DC_SET_KERNEL)
		return set->category || (set->category = strdup(set->kernel)) ? 0 : fail_at(c, root, "out of memory");
	if (set->kind == DC_SET_KFUNCS && set->library)
		return fail_at(c, root, "a set of kernel functions names no library");
	for (size_t i = 0; set->kind == DC_SET_KFUNCS && i < set->nfns; i++)
		if (set->fns[i].syscall || (set->fns[i].argbits & ~DC_COOKIE_RET_MASK))
			return fail_at(c, root, "kernel function '%s': only name, match, regex and ret apply",
				       set->fns[i].name);
	if (!set->fns && !set->all_functions)
		return fail_at(c, root, "missing 'functions:' or 'syscalls:'");
	if (set->kind == DC_SET_UPROBES && !set->library)
		return fail_at(c, root, "missing 'library:' (a soname such as libc.so.6, or a path)");
	if (set->kind == DC_SET_SYSCALLS && set->all_functions)
		return fail_at(c, root, "'syscalls: all' is not supported: name the system calls");
	for (size_t i = 0; set->kind == DC_SET_SYSCALLS && i < set->nfns; i++)
		if (set->fns[i].select != DC_FN_NAME || set->fns[i].syscall)
			return fail_at(c, root, "system call '%s': match, regex and syscall belong to library sets",
				       set->fns[i].name);
	if (set->stdio_handles && set->kind != DC_SET_UPROBES)
		return fail_at(c, root, "handles: stdio belongs to a set of library functions");
	for (size_t i = 0; i < set->nfns; i++) {
		struct dc_fn_spec *fn = &set->fns[i];
		bool iov = DC_COOKIE_SLOT(fn->argbits, DC_SLOT_IOV) != 0;

		/* A stream taken at the call's entry, or made by it (fopen,
		 * freopen: the file is the one behind the stream returned). */
		if (set->stdio_handles && (DC_COOKIE_SLOT(fn->argbits, DC_SLOT_HANDLE) ||
					   DC_COOKIE_RET(fn->argbits) == DC_RET_HANDLE))
			fn->argbits |= DC_COOKIE_STREAM;
		if (iov && set->kind != DC_SET_SYSCALLS && !fn->syscall)
			return fail_at(c, root, "function '%s': iov: is read at a system call: a syscalls set, or syscall: NAME",
				       fn->name);
		if ((fn->argbits & DC_COOKIE_TEXT) && (set->kind != DC_SET_UPROBES || fn->syscall))
			return fail_at(c, root, "function '%s': text: is read at the function's return: a set of library "
						"functions, without syscall:", fn->name);
		if ((fn->argbits & DC_COOKIE_STD) &&
		    (!set->stdio_handles || DC_COOKIE_SLOT(fn->argbits, DC_SLOT_HANDLE) || dc_io_kind(fn->name) == DC_IO_NONE))
			return fail_at(c, root, "function '%s': stream: standard is for a call of a handles: stdio set "
						"that takes no stream, and reads or writes by its name", fn->name);
		if (iov && !DC_COOKIE_SLOT(fn->argbits, DC_SLOT_BYTES))
			return fail_at(c, root, "function '%s': iov: needs bytes: (the number of its entries)", fn->name);
		if (DC_COOKIE_SLOT(fn->argbits, DC_SLOT_PATH2) && !DC_COOKIE_SLOT(fn->argbits, DC_SLOT_PATH))
			return fail_at(c, root, "function '%s': path2: is a second name: give path: too", fn->name);
		if (DC_COOKIE_SLOT(fn->argbits, DC_SLOT_PATH2) == 1 && DC_COOKIE_SLOT(fn->argbits, DC_SLOT_DIRFD))
			return fail_at(c, root, "function '%s': with dirfd:, path2:'s folder is the argument before it: "
						"path2: 1 has none", fn->name);
	}
	if (!set->category && !(set->category = strdup(set->kind == DC_SET_SYSCALLS ? "syscall" : set->name)))
		return fail_at(c, root, "out of memory");
	return 0;
}

int dc_probe_set_load(const char *path, struct dc_probe_set *set, char *err, size_t errlen)
{
	yaml_document_t doc;
	struct ctx c = { &doc, path, err, errlen };
	yaml_node_t *root;
	int rc;

	memset(set, 0, sizeof(*set));
	if (load_document(path, &doc, err, errlen))
		return -1;
	root = yaml_document_get_root_node(&doc);
	set->file = strdup(path);
	rc = each_pair(&c, root, set_key, set);
	if (!rc)
		rc = check_set(&c, root, set);
	yaml_document_delete(&doc);
	if (rc)
		dc_probe_set_free(set);
	return rc;
}

void dc_probe_set_free(struct dc_probe_set *set)
{
	for (size_t i = 0; i < set->nfns; i++) {
		free(set->fns[i].name);
		free(set->fns[i].syscall);
	}
	free(set->fns);
	free(set->name);
	free(set->file);
	free(set->category);
	free(set->library);
	free(set->kernel);
	free(set->wrapper);
	memset(set, 0, sizeof(*set));
}

int dc_probe_set_find(const char *name, const char *dirs, char *out, size_t outlen)
{
	struct stat st;
	const char *d = dirs;

	if (strchr(name, '/')) {
		snprintf(out, outlen, "%s", name);
		return stat(out, &st) == 0 ? 0 : -1;
	}
	while (d && *d) {
		size_t len = strcspn(d, ":");

		if (len && (size_t)snprintf(out, outlen, "%.*s/%s.yaml", (int)len, d, name) < outlen &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
		d += len + (d[len] == ':');
	}
	return -1;
}

/* ---- agent settings ---- */

int dc_parse_mode(const char *s)
{
	if (strcmp(s, "trace") == 0)
		return DC_MODE_TRACE;
	if (strcmp(s, "profile") == 0)
		return DC_MODE_PROFILE;
	return -1;
}

static int settings_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct dc_settings *s = arg;
	long n;

	if (strcmp(key, "job_id") == 0)
		return to_string(c, v, key, &s->job_id);
	if (strcmp(key, "output") == 0)
		return to_string(c, v, key, &s->output);
	if (strcmp(key, "probes") == 0)
		return to_string(c, v, key, &s->probes);
	if (strcmp(key, "probe_dir") == 0)
		return to_string(c, v, key, &s->probe_dir);
	if (strcmp(key, "site_cache") == 0)
		return to_string(c, v, key, &s->site_cache);
	if (strcmp(key, "mode") == 0) {
		if (!scalar(v) || (s->mode = dc_parse_mode(scalar(v))) < 0)
			return fail_at(c, v, "mode: expected trace or profile");
		return 0;
	}
	if (strcmp(key, "interval") == 0) {
		if (to_int(c, v, key, 1, 86400, &n))
			return -1;
		s->interval_ms = n * 1000;
		return 0;
	}
	if (strcmp(key, "ringbuf_mb") == 0) {
		if (to_int(c, v, key, 1, 1024, &n))
			return -1;
		s->ringbuf_mb = n;
		return 0;
	}
	if (strcmp(key, "uid") == 0) {
		if (to_int(c, v, key, 0, 0x7fffffff, &n))
			return -1;
		s->uid = n;
		return 0;
	}
	return fail_at(c, v, "unknown setting '%s' (job_id, output, mode, interval, probes, probe_dir, ringbuf_mb, uid, site_cache)", key);
}

int dc_settings_load(const char *path, struct dc_settings *s, char *err, size_t errlen)
{
	yaml_document_t doc;
	struct ctx c = { &doc, path, err, errlen };
	int rc;

	if (load_document(path, &doc, err, errlen))
		return -1;
	rc = each_pair(&c, yaml_document_get_root_node(&doc), settings_key, s);
	yaml_document_delete(&doc);
	return rc;
}

void dc_settings_free(struct dc_settings *s)
{
	free(s->job_id);
	free(s->output);
	free(s->probes);
	free(s->probe_dir);
	free(s->site_cache);
}
