// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON and text escapers on the names that matter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "escape.h"

static void json_is(const char *in, const char *want)
{
	char *got = dc_json_escaped(in);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void text_is(const char *in, const char *want)
{
	char *got = dc_text_escaped(in);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_json_utf8_passes(void **state)
{
	json_is("caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80.dat", "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80.dat");
	json_is("plain/path.dat", "plain/path.dat");
}

static void test_json_specials(void **state)
{
	json_is("a\"b\\c\nd\x1b\x7f", "a\\\"b\\\\c\\u000ad\\u001b\\u007f");
}

static void test_json_invalid_bytes(void **state)
{
	json_is("bad-\xff\xfe", "bad-\\udcff\\udcfe");
	json_is("\xc0\x80", "\\udcc0\\udc80");             /* overlong NUL */
	json_is("\xed\xa0\x80", "\\udced\\udca0\\udc80");  /* a surrogate */
	json_is("\xf4\x90\x80\x80", "\\udcf4\\udc90\\udc80\\udc80"); /* above U+10FFFF */
	json_is("\xe2\x82", "\\udce2\\udc82");             /* cut short */
}

static void test_text(void **state)
{
	text_is("caf\xc3\xa9", "caf\xc3\xa9");
	text_is("line\nforged\x1b[31m", "line\\x0aforged\\x1b[31m");
	text_is("back\\slash", "back\\\\slash");
	text_is("c1\xc2\x85-\xff", "c1\\xc2\\x85-\\xff");
}

static void test_html(void **state)
{
	char *got = dc_html_escaped("<script>a&b \"q\" 'r'</script>\n\xff caf\xc3\xa9");
	char max[DC_ESCAPED_MAX(1)];

	assert_non_null(got);
	assert_string_equal(got, "&lt;script&gt;a&amp;b &quot;q&quot; &#39;r&#39;&lt;/script&gt;\\x0a\\xff caf\xc3\xa9");
	free(got);
	/* The longest form of one byte fits the bound every escaper keeps. */
	assert_int_equal(dc_html_escape("\"", max), 6);
}

static void test_utf8_seq(void **state)
{
	assert_int_equal(dc_utf8_seq((const unsigned char *)"a", 1), 1);
	assert_int_equal(dc_utf8_seq((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(dc_utf8_seq((const unsigned char *)"\xc3\xa9", 1), 0);
	assert_int_equal(dc_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(dc_utf8_seq((const unsigned char *)"\x80", 1), 0);
}

static void test_view_rotates(void **state)
{
	const char *a = dc_text_view("one\n"), *b = dc_text_view("two\t");

	assert_string_equal(a, "one\\x0a");
	assert_string_equal(b, "two\\x09");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_utf8_passes), cmocka_unit_test(test_json_specials),
		cmocka_unit_test(test_json_invalid_bytes), cmocka_unit_test(test_text), cmocka_unit_test(test_html),
		cmocka_unit_test(test_utf8_seq), cmocka_unit_test(test_view_rotates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
