// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Library lookup and symbol offsets: the offset found is where the code is. */
#include <dlfcn.h>
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

#include "symbols.h"

static void test_find_libc(void **state)
{
	char path[PATH_MAX];

	assert_int_equal(dc_find_library("libc.so.6", path, sizeof(path)), 0);
	assert_non_null(strstr(path, "libc"));
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(dc_find_library("libdoesnotexist.so.9", path, sizeof(path)), -1);
}

static void test_ld_library_path_first(void **state)
{
	char path[PATH_MAX];

	setenv("LD_LIBRARY_PATH", DCTEST_DIR, 1);
	assert_int_equal(dc_find_library("libdctest.so", path, sizeof(path)), 0);
	assert_non_null(strstr(path, "libdctest.so"));
	unsetenv("LD_LIBRARY_PATH");
}

/* The bytes at the file offset are the bytes the loaded function starts with. */
static void check_code_at_offset(const char *lib, const char *func)
{
	char err[512];
	unsigned char on_disk[16];
	struct dc_elf_syms *s = dc_elf_open(lib, err, sizeof(err));
	void *h = dlopen(lib, RTLD_NOW);
	void *fn;
	long off;
	int fd;

	assert_non_null(s);
	assert_non_null(h);
	fn = dlsym(h, func);
	assert_non_null(fn);
	off = dc_elf_offset(s, func);
	assert_true(off > 0);
	fd = open(lib, O_RDONLY);
	assert_int_equal(pread(fd, on_disk, sizeof(on_disk), off), sizeof(on_disk));
	close(fd);
	assert_memory_equal(on_disk, fn, sizeof(on_disk));
	dc_elf_close(s);
	dlclose(h);
}

static void test_offsets_match_code(void **state)
{
	char libc[PATH_MAX];

	check_code_at_offset(DCTEST_DIR "/libdctest.so", "dct_alpha");
	check_code_at_offset(DCTEST_DIR "/libdctest.so", "dct_beta");
	assert_int_equal(dc_find_library("libc.so.6", libc, sizeof(libc)), 0);
	check_code_at_offset(libc, "write");
	check_code_at_offset(libc, "fopen");
}

static void test_aliases_share_offset(void **state)
{
	char libc[PATH_MAX], err[512];
	struct dc_elf_syms *s;

	assert_int_equal(dc_find_library("libc.so.6", libc, sizeof(libc)), 0);
	s = dc_elf_open(libc, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(dc_elf_offset(s, "open"), dc_elf_offset(s, "open64"));
	assert_int_equal(dc_elf_offset(s, "no_such_function_here"), -1);
	dc_elf_close(s);
}

static void test_all_lists_exported_functions(void **state)
{
	char err[512];
	struct dc_elf_syms *s = dc_elf_open(DCTEST_DIR "/libdctest.so", err, sizeof(err));
	int alpha = 0, beta = 0, other = 0;

	assert_non_null(s);
	for (size_t i = 0; i < dc_elf_count(s); i++) {
		const char *n = dc_elf_name(s, i);

		if (!strcmp(n, "dct_alpha"))
			alpha++;
		else if (!strcmp(n, "dct_beta"))
			beta++;
		else
			other++;
	}
	assert_int_equal(alpha, 1);
	assert_int_equal(beta, 1);
	assert_int_equal(other, 0); /* no static helper, no _init/_fini */
	dc_elf_close(s);
}

static void test_not_elf(void **state)
{
	char err[512];

	assert_null(dc_elf_open("/etc/hostname", err, sizeof(err)));
	assert_non_null(strstr(err, "not an ELF file"));
	assert_null(dc_elf_open("/nonexistent.so", err, sizeof(err)));
	assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_libc),
		cmocka_unit_test(test_ld_library_path_first),
		cmocka_unit_test(test_offsets_match_code),
		cmocka_unit_test(test_aliases_share_offset),
		cmocka_unit_test(test_all_lists_exported_functions),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
