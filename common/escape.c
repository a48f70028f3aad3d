// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "escape.h"

#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

static const char hex[] = "0123456789abcdef";

size_t dc_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0; /* a continuation byte, or an overlong 2-byte lead */
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

size_t dc_json_escape(const char *s, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char *o = out;

	while (n) {
		size_t k = dc_utf8_seq(p, n);

		if (k == 1 && (*p == '"' || *p == '\\')) {
			*o++ = '\\';
			*o++ = *p;
		} else if (k == 1 && (*p < 0x20 || *p == 0x7f)) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[*p >> 4];
			o[5] = hex[*p & 15];
			o += 6;
		} else if (k == 0) { /* surrogateescape: byte 0xXY as U+DCXY */
			memcpy(o, "\\udc", 4);
			o[4] = hex[*p >> 4];
			o[5] = hex[*p & 15];
			o += 6;
			k = 1;
		} else {
			memcpy(o, p, k);
			o += k;
		}
		p += k;
		n -= k;
	}
	*o = 0;
	return o - out;
}

/* C1 controls (U+0080-U+009F) are encoded as 0xc2 0x80-0x9f. */
static int is_control(const unsigned char *p, size_t k)
{
	return (k == 1 && (*p < 0x20 || *p == 0x7f)) || (k == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/* The entity HTML needs in place of c, or NULL. */
static const char *html_entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

static size_t text_escape(const char *s, char *out, bool html)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char *o = out;

	while (n) {
		size_t k = dc_utf8_seq(p, n);
		const char *ent = html && k == 1 ? html_entity(*p) : NULL;

		if (ent) {
			o = stpcpy(o, ent);
		} else if (k == 1 && *p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (k == 0 || is_control(p, k)) {
			if (k == 0)
				k = 1;
			for (size_t i = 0; i < k; i++) {
				memcpy(o, "\\x", 2);
				o[2] = hex[p[i] >> 4];
				o[3] = hex[p[i] & 15];
				o += 4;
			}
		} else {
			memcpy(o, p, k);
			o += k;
		}
		p += k;
		n -= k;
	}
	*o = 0;
	return o - out;
}

size_t dc_text_escape(const char *s, char *out)
{
	return text_escape(s, out, false);
}

size_t dc_html_escape(const char *s, char *out)
{
	return text_escape(s, out, true);
}

static char *escaped(const char *s, size_t (*esc)(const char *, char *))
{
	char *out = malloc(DC_ESCAPED_MAX(strlen(s)));

	if (out)
		esc(s, out);
	return out;
}

char *dc_json_escaped(const char *s)
{
	return escaped(s, dc_json_escape);
}

char *dc_text_escaped(const char *s)
{
	return escaped(s, dc_text_escape);
}

char *dc_html_escaped(const char *s)
{
	return escaped(s, dc_html_escape);
}

const char *dc_text_view(const char *s)
{
	static char *bufs[4];
	static size_t caps[4];
	static unsigned next;
	size_t need = DC_ESCAPED_MAX(strlen(s));
	unsigned i = next++ & 3;

	if (caps[i] < need) {
		char *b = realloc(bufs[i], need);

		if (!b)
			return "?";
		bufs[i] = b;
		caps[i] = need;
	}
	dc_text_escape(s, bufs[i]);
	return bufs[i];
}
