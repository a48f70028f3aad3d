// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer: any bytes through both escapers. The JSON form must be valid
 * JSON string text that decodes (surrogateescape) back to the input; the
 * text form must hold no control byte and decode back to the input too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static unsigned hex4(const char *p)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);

		if (h < 0)
			__builtin_trap();
		v = v << 4 | h;
	}
	return v;
}

/* The JSON escape decoded: \uXXXX below 0x80 and \udcXX are bytes. */
static size_t json_unescape(const char *e, char *out)
{
	char *o = out;

	while (*e) {
		unsigned char c = *e;

		if (c < 0x20 || c == '"')
			__builtin_trap(); /* not allowed raw in a JSON string */
		if (c != '\\') {
			*o++ = *e++;
			continue;
		}
		if (e[1] == '"' || e[1] == '\\') {
			*o++ = e[1];
			e += 2;
		} else if (e[1] == 'u') {
			unsigned v = hex4(e + 2);

			if (v < 0x80)
				*o++ = v;
			else if (v >= 0xdc80 && v <= 0xdcff)
				*o++ = v & 0xff;
			else
				__builtin_trap();
			e += 6;
		} else {
			__builtin_trap();
		}
	}
	return o - out;
}

static size_t text_unescape(const char *e, char *out)
{
	char *o = out;

	while (*e) {
		unsigned char c = *e;

		if (c < 0x20 || c == 0x7f)
			__builtin_trap();
		if (c != '\\') {
			*o++ = *e++;
			continue;
		}
		if (e[1] == '\\') {
			*o++ = '\\';
			e += 2;
		} else if (e[1] == 'x' && hexval(e[2]) >= 0 && hexval(e[3]) >= 0) {
			*o++ = hexval(e[2]) << 4 | hexval(e[3]);
			e += 4;
		} else {
			__builtin_trap();
		}
	}
	return o - out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *esc, *back;
	size_t len;

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = 0;
	len = strlen(in); /* strings in a trace end at their first NUL */
	esc = malloc(DC_ESCAPED_MAX(len));
	back = malloc(len + 1);
	if (esc && back) {
		if (dc_json_escape(in, esc) != strlen(esc) || json_unescape(esc, back) != len || memcmp(back, in, len))
			__builtin_trap();
		if (dc_text_escape(in, esc) != strlen(esc) || text_unescape(esc, back) != len || memcmp(back, in, len))
			__builtin_trap();
		/* C1 controls never pass raw into text either. */
		for (const unsigned char *p = (const unsigned char *)esc; *p; p++)
			if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
				__builtin_trap();
	}
	free(in);
	free(esc);
	free(back);
	return 0;
}
