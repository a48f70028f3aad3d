/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The escapers of every output DataCrumbs writes, one per syntax. Strings
 * in a trace (paths, process and host names) are bytes from other users'
 * programs: any byte may appear, UTF-8 or not.
 *
 * JSON (dc-merge, dc-summary --format json): valid UTF-8 passes through;
 * '"', '\\' and control characters are escaped as JSON requires; a byte that
 * is not part of valid UTF-8, 0xXY, becomes "\udcXY", a lone low surrogate:
 * the convention Python calls surrogateescape, so that
 * json.loads(text).encode("utf-8", "surrogateescape") gives back the bytes.
 * No valid UTF-8 text yields these code points, so the mapping is reversible.
 *
 * Text (dc-summary, dc-dump): printable characters, UTF-8 included, pass
 * through; '\\' becomes "\\\\"; control characters (C0, DEL, C1) and invalid
 * bytes become "\xNN". A file name cannot forge a report line or move the
 * terminal's cursor.
 *
 * HTML (dc-summary --html): the text escaping, and then '&', '<', '>', '"'
 * and '\'' as character references, so a file name can neither end an
 * element nor an attribute value, in text or in a quoted attribute.
 */
#ifndef DC_ESCAPE_H
#define DC_ESCAPE_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the byte there does
 * not start one (n bytes are readable). */
size_t dc_utf8_seq(const unsigned char *s, size_t n);

/* Bytes the escaped form of s can take at most, with its NUL. */
#define DC_ESCAPED_MAX(len) ((len) * 6 + 1)

/* Writes the escaped body of s (no quotes) into out, which holds at least
 * DC_ESCAPED_MAX(strlen(s)) bytes; returns its length. */
size_t dc_json_escape(const char *s, char *out);
size_t dc_text_escape(const char *s, char *out);
size_t dc_html_escape(const char *s, char *out);

/* The same, in a new buffer to free(); NULL when memory runs out. */
char *dc_json_escaped(const char *s);
char *dc_text_escaped(const char *s);
char *dc_html_escaped(const char *s);

/* For printing reports: s as text, in one of four rotating buffers that the
 * next calls reuse (so one printf may take up to four); "?" when memory runs
 * out. Not thread-safe. */
const char *dc_text_view(const char *s);

#endif
