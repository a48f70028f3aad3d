// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe site selection on prologues whose answer is known (prefix_lib.S),
 * on libc, and on objects the analysis must refuse without harm.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe_sites.h"
#include "dc_event.h"
#include "symbols.h"

struct fixture {
	struct dc_code *code;
	struct dc_elf_syms *syms;
};

static int setup(void **state)
{
	static struct fixture f;
	char err[512];

	f.code = dc_code_open(DCPREFIX_LIB, NULL, err, sizeof(err));
	f.syms = dc_elf_open(DCPREFIX_LIB, err, sizeof(err));
	*state = &f;
	return f.code && f.syms ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dc_code_free(f->code);
	dc_elf_close(f->syms);
	return 0;
}

/* The site of NAME as (offset from the entry, reason). */
static void expect_site(void **state, const char *name, unsigned argregs, long delta, enum dc_site_reason why)
{
	struct fixture *f = *state;
	long entry = dc_elf_offset(f->syms, name);
	struct dc_site s;

	assert_true(entry > 0);
	dc_code_site(f->code, entry, argregs, &s);
	if ((long)s.offset - entry != delta || s.reason != why)
		fail_msg("%s: site +%ld (%s), expected +%ld (%s)", name, (long)s.offset - entry,
			 dc_site_reason_text(s.reason), delta, dc_site_reason_text(why));
}

static void test_emulated_after_rip_relative(void **state)
{
	expect_site(state, "pf_cmp", 0x3, 7, DC_SITE_PREFIX_EMULATED);
}

static void test_own_loop_into_prefix(void **state)
{
	expect_site(state, "pf_loop", 0, 0, DC_SITE_ENTRY_BRANCH_IN);
}

static void test_other_function_jumps_into_prefix(void **state)
{
	expect_site(state, "pf_joined", 0x3, 0, DC_SITE_ENTRY_BRANCH_IN);
}

static void test_argument_written_first(void **state)
{
	/* Read at entry: the register must still hold the caller's value. */
	expect_site(state, "pf_clobber", 0x2, 0, DC_SITE_ENTRY_ARGS);
	/* Not read (time and count only): the jmp after it serves. */
	expect_site(state, "pf_clobber", 0x0, 5, DC_SITE_PREFIX_EMULATED);
	/* Another argument read: rsi's change does not matter. */
	expect_site(state, "pf_clobber", 0x1, 5, DC_SITE_PREFIX_EMULATED);
}

/* The argument register position of each C argument 1-6 at NAME's site. */
static void expect_args(void **state, const char *name, unsigned argregs, const char *want)
{
	struct fixture *f = *state;
	long entry = dc_elf_offset(f->syms, name);
	struct dc_site s;
	char got[7];

	assert_true(entry > 0);
	dc_code_site(f->code, entry, argregs, &s);
	for (int i = 0; i < 6; i++)
		got[i] = (argregs & (1u << i)) ? '0' + s.argpos[i] : '-';
	got[6] = 0;
	assert_string_equal(got, want);
}

static void test_arguments_moved(void **state)
{
	/* mov rdx, rsi; mov rsi, rdi; mov edi, 9; jmp: 1 is in rsi, 2 in rdx. */
	expect_site(state, "pf_moved", 0x3, 11, DC_SITE_PREFIX_MOVED);
	expect_args(state, "pf_moved", 0x3, "23----");
	/* Argument 3 is lost (overwritten by argument 2): the entry. */
	expect_site(state, "pf_moved", 0x7, 0, DC_SITE_ENTRY_ARGS);
	expect_args(state, "pf_moved", 0x7, "123---");
	/* A swap through rax, a register no probe reads. */
	expect_site(state, "pf_swap", 0x3, 9, DC_SITE_PREFIX_MOVED);
	expect_args(state, "pf_swap", 0x3, "21----");
	/* Argument 2 is only in rax at the jmp: the entry; argument 1 alone is
	 * where the caller put it. */
	expect_site(state, "pf_lost", 0x2, 0, DC_SITE_ENTRY_ARGS);
	expect_site(state, "pf_lost", 0x1, 8, DC_SITE_PREFIX_EMULATED);
	expect_args(state, "pf_lost", 0x1, "1-----");
}

/* The cookie's slots follow the arguments: pf_moved's site has argument 1
 * in rsi (2) and argument 2 in rdx (3); other fields of the cookie stay. */
static void test_cookie_slots_at_site(void **state)
{
	struct fixture *f = *state;
	long entry = dc_elf_offset(f->syms, "pf_moved");
	__u64 slots = (1ull << (DC_COOKIE_FUNC_BITS + DC_SLOT_BYTES * DC_SLOT_BITS)) |
		      (2ull << (DC_COOKIE_FUNC_BITS + DC_SLOT_OFFSET * DC_SLOT_BITS)) | DC_COOKIE_CLOSES;
	__u64 want = (2ull << (DC_COOKIE_FUNC_BITS + DC_SLOT_BYTES * DC_SLOT_BITS)) |
		     (3ull << (DC_COOKIE_FUNC_BITS + DC_SLOT_OFFSET * DC_SLOT_BITS)) | DC_COOKIE_CLOSES;
	struct dc_site s;

	assert_int_equal(dc_site_argregs(slots), 0x3);
	dc_code_site(f->code, entry, dc_site_argregs(slots), &s);
	assert_int_equal(s.reason, DC_SITE_PREFIX_MOVED);
	assert_true(dc_site_slots(slots, &s) == want);
}

static void test_rsp_moved_first(void **state)
{
	expect_site(state, "pf_frame", 0, 0, DC_SITE_ENTRY_RSP);
}

static void test_return_slot_written_first(void **state)
{
	expect_site(state, "pf_store", 0, 0, DC_SITE_ENTRY_STACK);
}

/* A lock prefix at the entry: no site the kernel takes. */
static void test_lock_prefix_unprobeable(void **state)
{
	expect_site(state, "pf_locked", 0, 0, DC_SITE_UNPROBEABLE);
}

static void test_push_at_entry(void **state)
{
	expect_site(state, "pf_push", 0x1, 0, DC_SITE_ENTRY_EMULATED);
	expect_site(state, "pf_side", 0x3, 0, DC_SITE_ENTRY_EMULATED);
}

static void test_syscall_before_any_emulated(void **state)
{
	expect_site(state, "pf_getpid", 0, 0, DC_SITE_ENTRY_NO_EMULATED);
}

/* glibc's write: cmpb $0,...(%rip); je ...: the je, 7 bytes in. */
static void test_libc_write(void **state)
{
	char lib[PATH_MAX], err[512];
	struct dc_code *code;
	struct dc_elf_syms *syms;
	struct dc_site s;
	long entry;
	unsigned char insn[2];
	int fd;

	assert_int_equal(dc_find_library("libc.so.6", lib, sizeof(lib)), 0);
	code = dc_code_open(lib, NULL, err, sizeof(err));
	syms = dc_elf_open(lib, err, sizeof(err));
	assert_non_null(code);
	assert_non_null(syms);
	assert_int_equal(strlen(dc_code_build_id(code)), 40);
	entry = dc_elf_offset(syms, "write");
	dc_code_site(code, entry, 0x7, &s);
	/* Whatever this libc's layout: a site off the entry is a jcc, jmp, call,
	 * push or nop, and the bytes there say so. */
	if (s.offset != (unsigned long)entry) {
		assert_int_equal(s.reason, DC_SITE_PREFIX_EMULATED);
		fd = open(lib, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, insn, 2, s.offset), 2);
		close(fd);
		assert_true((insn[0] >= 0x70 && insn[0] <= 0x7f) || insn[0] == 0xeb || insn[0] == 0xe9 ||
			    insn[0] == 0xe8 || (insn[0] & 0xf8) == 0x50 || insn[0] == 0x90 ||
			    (insn[0] == 0x0f && (insn[1] & 0xf0) == 0x80));
	}
	dc_code_free(code);
	dc_elf_close(syms);
}

/* Not an x86-64 object: refused with a reason; a NULL code means the entry. */
static void test_refused_objects(void **state)
{
	char path[] = "/tmp/dc-sites-XXXXXX", err[512];
	unsigned char buf[4096];
	struct dc_site s;
	int in, out;
	ssize_t n;

	out = mkstemp(path);
	assert_true(out >= 0);
	assert_int_equal(write(out, "not an ELF object at all", 24), 24);
	assert_null(dc_code_open(path, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "not an x86-64 ELF object"));

	/* The test library with its machine field changed to AArch64. */
	assert_int_equal(ftruncate(out, 0), 0);
	in = open(DCPREFIX_LIB, O_RDONLY);
	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	assert_int_equal(pwrite(out, "\xb7\x00", 2, 18), 2);
	close(out);
	assert_null(dc_code_open(path, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "not an x86-64 ELF object"));
	unlink(path);

	assert_null(dc_code_open("/nonexistent/libx.so", NULL, err, sizeof(err)));
	dc_code_site(NULL, 1234, 0x3f, &s);
	assert_int_equal(s.offset, 1234);
	assert_int_equal(s.reason, DC_SITE_ENTRY_NO_CODE);
}

/* An offset outside the code (a bad symbol) keeps the entry. */
static void test_offset_outside_code(void **state)
{
	struct fixture *f = *state;
	struct dc_site s;

	dc_code_site(f->code, 3, 0, &s);
	assert_int_equal(s.offset, 3);
	assert_int_equal(s.reason, DC_SITE_ENTRY_NO_CODE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulated_after_rip_relative),
		cmocka_unit_test(test_own_loop_into_prefix),
		cmocka_unit_test(test_other_function_jumps_into_prefix),
		cmocka_unit_test(test_argument_written_first),
		cmocka_unit_test(test_arguments_moved),
		cmocka_unit_test(test_cookie_slots_at_site),
		cmocka_unit_test(test_rsp_moved_first),
		cmocka_unit_test(test_return_slot_written_first),
		cmocka_unit_test(test_lock_prefix_unprobeable),
		cmocka_unit_test(test_push_at_entry),
		cmocka_unit_test(test_syscall_before_any_emulated),
		cmocka_unit_test(test_libc_write),
		cmocka_unit_test(test_refused_objects),
		cmocka_unit_test(test_offset_outside_code),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
