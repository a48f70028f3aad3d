// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "path_join.h"

#include <string.h>

/* Appends the components of p to out (used bytes *len, "/" at least). */
static int add_components(const char *p, char *out, size_t n, size_t *len)
{
	while (*p) {
		size_t c;

		while (*p == '/')
			p++;
		c = strcspn(p, "/");
		if (c == 0)
			break;
		if (c == 1 && p[0] == '.') {
			/* this folder */
		} else if (c == 2 && p[0] == '.' && p[1] == '.') {
			while (*len > 1 && out[*len - 1] != '/')
				(*len)--;
			if (*len > 1)
				(*len)--; /* the slash before it */
		} else {
			size_t sep = *len > 1;

			if (*len + sep + c + 1 > n)
				return -1;
			if (sep)
				out[(*len)++] = '/';
			memcpy(out + *len, p, c);
			*len += c;
		}
		p += c;
	}
	out[*len] = 0;
	return 0;
}

int dc_path_join(const char *dir, const char *name, char *out, size_t n)
{
	size_t len = 1;

	if (n < 2 || !dir || dir[0] != '/' || !name)
		return -1;
	out[0] = '/';
	out[1] = 0;
	if (name[0] != '/' && add_components(dir, out, n, &len))
		return -1;
	return add_components(name, out, n, &len);
}

int dc_path_absolute(const char *cwd, const char *name, char *out, size_t n)
{
	size_t pre = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");

	pre = pre > 0 && name[pre] == ':' ? pre + 1 : 0;
	if (!name[pre] || name[pre] == '/')
		return 1;
	if (pre >= n)
		return -1;
	memcpy(out, name, pre);
	return dc_path_join(cwd, name + pre, out + pre, n - pre);
}
