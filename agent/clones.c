// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "clones.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "dc_event.h"

int dc_clone_src_take(struct dc_clone_src *src, const struct bpf_program *prog)
{
	size_t n = bpf_program__insn_cnt(prog);

	memset(src, 0, sizeof(*src));
	if (!n || !(src->insns = malloc(n * sizeof(struct bpf_insn))))
		return -ENOMEM;
	memcpy(src->insns, bpf_program__insns(prog), n * sizeof(struct bpf_insn));
	src->n = n;
	src->type = bpf_program__type(prog);
	src->attach = bpf_program__expected_attach_type(prog);
	snprintf(src->name, sizeof(src->name), "%s", bpf_program__name(prog));
	return 0;
}

void dc_clone_src_free(struct dc_clone_src *src)
{
	free(src->insns);
	memset(src, 0, sizeof(*src));
}

static bool is_magic(const struct bpf_insn *insn, __u64 magic)
{
	return insn[0].code == (BPF_LD | BPF_IMM | BPF_DW) && insn[0].src_reg == 0 &&
	       (__u32)insn[0].imm == (__u32)magic && (__u32)insn[1].imm == (__u32)(magic >> 32);
}

size_t dc_clone_count_magic(const struct bpf_insn *insns, size_t n, __u64 magic)
{
	size_t found = 0;

	for (size_t i = 0; i + 1 < n; i++)
		if (is_magic(&insns[i], magic))
			found++, i++;
	return found;
}

size_t dc_clone_patch(struct bpf_insn *insns, size_t n, __u64 magic, __u64 value)
{
	size_t found = 0;

	for (size_t i = 0; i + 1 < n; i++) {
		if (!is_magic(&insns[i], magic))
			continue;
		insns[i].imm = (__s32)(__u32)value;
		insns[i + 1].imm = (__s32)(__u32)(value >> 32);
		found++;
		i++;
	}
	return found;
}

/* The last line of a verifier log that says something. */
static void last_line(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *start;

	while (end > log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > log && start[-1] != '\n')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

int dc_clone_load(const struct dc_clone_src *src, __u64 cookie, __u64 nargs, __u32 btf_id, int btf_obj_fd,
		  char *why, size_t whylen)
{
	struct bpf_insn *insns = malloc(src->n * sizeof(*insns));
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = src->attach, .attach_btf_id = btf_id,
		    .attach_btf_obj_fd = btf_obj_fd);
	int fd, err;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, src->insns, src->n * sizeof(*insns));
	dc_clone_patch(insns, src->n, DC_CLONE_COOKIE_MAGIC, cookie);
	dc_clone_patch(insns, src->n, DC_CLONE_NARGS_MAGIC, nargs);
	fd = bpf_prog_load(src->type, src->name, "Dual BSD/GPL", insns, src->n, &opts);
	err = -errno;
	if (fd < 0 && why) {
		/* Loaded again with a log, only to say why. */
		char *log = calloc(1, 1 << 16);

		opts.log_buf = log;
		opts.log_size = log ? 1 << 16 : 0;
		opts.log_level = log ? 1 : 0;
		int again = log ? bpf_prog_load(src->type, src->name, "Dual BSD/GPL", insns, src->n, &opts) : -1;

		if (again >= 0)
			close(again);
		if (log && *log)
			last_line(log, why, whylen);
		else
			snprintf(why, whylen, "%s", strerror(-err));
		free(log);
	}
	free(insns);
	return fd < 0 ? err : fd;
}
