// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Relative names made absolute against their folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "path_join.h"

static void joins_to(const char *dir, const char *name, const char *want)
{
	char out[64];

	assert_int_equal(dc_path_join(dir, name, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_plain(void **state)
{
	joins_to("/home/u/run", "out.dat", "/home/u/run/out.dat");
	joins_to("/", "out.dat", "/out.dat");
	joins_to("/home/u", "a/b/c", "/home/u/a/b/c");
}

static void test_dots(void **state)
{
	joins_to("/home/u/run", "./out.dat", "/home/u/run/out.dat");
	joins_to("/home/u/run", "../in/x", "/home/u/in/x");
	joins_to("/home/u/run", "../../../../x", "/x");
	joins_to("/home/u/run", "a/./b/../c", "/home/u/run/a/c");
	joins_to("/home/u/run", ".", "/home/u/run");
	joins_to("/home/u/run", "..", "/home/u");
	joins_to("/", "..", "/");
	joins_to("/a", "...", "/a/...");
	joins_to("/a", "..b", "/a/..b");
}

static void test_slashes(void **state)
{
	joins_to("/home//u/", "a//b/", "/home/u/a/b");
	joins_to("/home/u", "/abs/../x", "/x");
	joins_to("/home/u", "", "/home/u");
}

static void test_refused(void **state)
{
	char out[16];

	assert_int_equal(dc_path_join("rel", "x", out, sizeof(out)), -1);
	assert_int_equal(dc_path_join("/home/user", "longer-than-room", out, sizeof(out)), -1);
	assert_int_equal(dc_path_join("/", "x", out, 1), -1);
	/* Fifteen bytes and the NUL fit; sixteen do not. */
	assert_int_equal(dc_path_join("/abc", "defghijklm", out, sizeof(out)), 0);
	assert_string_equal(out, "/abc/defghijklm");
	assert_int_equal(dc_path_join("/abc", "defghijklmn", out, sizeof(out)), -1);
}

/* An MPI-IO name made absolute in /home/u: want, or NULL for "left as it is". */
static void absolute_is(const char *name, const char *want)
{
	char out[64] = "untouched";

	assert_int_equal(dc_path_absolute("/home/u", name, out, sizeof(out)), want ? 0 : 1);
	assert_string_equal(out, want ? want : "untouched");
}

static void test_mpi_names(void **state)
{
	char out[32];

	absolute_is("out.dat", "/home/u/out.dat");
	absolute_is("ufs:run/out.dat", "ufs:/home/u/run/out.dat");
	absolute_is("lustre:../x", "lustre:/home/x");
	absolute_is("/abs/out.dat", NULL);
	absolute_is("ufs:/abs/out.dat", NULL);
	absolute_is("", NULL);
	/* Not a prefix: upper case, or a colon further on. */
	absolute_is("Run:1", "/home/u/Run:1");
	absolute_is("a/b:c", "/home/u/a/b:c");
	assert_int_equal(dc_path_absolute("/home/user", "ufs:longer-than-the-room-left-in-out-here-by-far", out,
					  sizeof(out)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_dots),
		cmocka_unit_test(test_slashes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_mpi_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
