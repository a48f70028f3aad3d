// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Program copies (agent/clones.c): the two constants found in the object's
 * own programs and replaced, and nothing else touched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include "clones.h"
#include "dc_event.h"

/* dst = imm64, as clang emits "r1 = N ll". */
static void ld_imm64(struct bpf_insn *i, int dst, uint64_t v)
{
	memset(i, 0, 2 * sizeof(*i));
	i[0].code = BPF_LD | BPF_IMM | BPF_DW;
	i[0].dst_reg = dst;
	i[0].imm = (int32_t)(uint32_t)v;
	i[1].imm = (int32_t)(uint32_t)(v >> 32);
}

static uint64_t imm64(const struct bpf_insn *i)
{
	return (uint64_t)(uint32_t)i[1].imm << 32 | (uint32_t)i[0].imm;
}

static void test_patch(void **state)
{
	struct bpf_insn p[10];

	ld_imm64(&p[0], 1, DC_CLONE_COOKIE_MAGIC);
	ld_imm64(&p[2], 2, DC_CLONE_NARGS_MAGIC);
	ld_imm64(&p[4], 3, DC_CLONE_COOKIE_MAGIC); /* inlined twice */
	/* A map reference (src_reg set) with the magic's bits is not ours. */
	ld_imm64(&p[6], 4, DC_CLONE_COOKIE_MAGIC);
	p[6].src_reg = BPF_PSEUDO_MAP_FD;
	/* The magic's halves in other instructions are not ours either. */
	memset(&p[8], 0, 2 * sizeof(p[8]));
	p[8].code = BPF_ALU64 | BPF_MOV | BPF_K;
	p[8].imm = (int32_t)(uint32_t)DC_CLONE_COOKIE_MAGIC;
	p[9].code = BPF_JMP | BPF_EXIT;

	assert_int_equal(dc_clone_count_magic(p, 10, DC_CLONE_COOKIE_MAGIC), 2);
	assert_int_equal(dc_clone_count_magic(p, 10, DC_CLONE_NARGS_MAGIC), 1);
	assert_int_equal(dc_clone_patch(p, 10, DC_CLONE_COOKIE_MAGIC, 0x8000000000000123ull), 2);
	assert_int_equal(dc_clone_patch(p, 10, DC_CLONE_NARGS_MAGIC, 4), 1);
	assert_true(imm64(&p[0]) == 0x8000000000000123ull);
	assert_true(imm64(&p[2]) == 4);
	assert_true(imm64(&p[4]) == 0x8000000000000123ull);
	assert_true(imm64(&p[6]) == DC_CLONE_COOKIE_MAGIC);
	assert_int_equal(p[8].imm, (int32_t)(uint32_t)DC_CLONE_COOKIE_MAGIC);
	assert_int_equal(dc_clone_count_magic(p, 10, DC_CLONE_COOKIE_MAGIC), 0);
	/* An ld_imm64 cut off by the end is not read past it. */
	ld_imm64(&p[0], 1, DC_CLONE_COOKIE_MAGIC);
	assert_int_equal(dc_clone_count_magic(p, 1, DC_CLONE_COOKIE_MAGIC), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
