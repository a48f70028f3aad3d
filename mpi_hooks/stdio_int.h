/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inside the STDIO level: what stdio.c (streams, transfers, positions)
 * and stdio_format.c (the printf and scanf families) share. */
#ifndef DC_STDIO_INT_H
#define DC_STDIO_INT_H

#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "record.h"
#include "wrapper_funcs.h"

/* The next definition of each call, looked up once per file that calls
 * it. (The variadic calls go to their v-form's; a call the agent did not
 * ask for goes to its own, so that a uprobe set below sees it by its
 * name.) */
#define DC_STDIO_NEXT(name, shape) static void *next_##name __attribute__((unused));
DC_STDIO_FUNCS(DC_STDIO_NEXT)
#undef DC_STDIO_NEXT

/* The checking forms, which <stdio.h> declares only to fortified builds. */
int __fprintf_chk(FILE *s, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *s, int flag, const char *fmt, va_list ap);
int __printf_chk(int flag, const char *fmt, ...);
char *__fgets_chk(char *buf, size_t size, int n, FILE *s);
size_t __fread_chk(void *buf, size_t size_of_buf, size_t size, size_t n, FILE *s);

#define NEXT(name) ((__typeof__(&name))dc_next(#name, &next_##name))
#define WANT(name) dc_wrap_want(DC_##name)
#define NOW() dc_now_ns(CLOCK_MONOTONIC)

/* One finished call on stream s (NULL: fflush of every stream). */
__attribute__((visibility("hidden"))) void dc_stdio_put(int f, __u64 ts, FILE *s, __u64 req, __u64 bytes,
							 long long ret);

/* The variadic calls' entries on and off with the session (stdio_format.c). */
__attribute__((visibility("hidden"))) void dc_stdio_formats_start(void);
__attribute__((visibility("hidden"))) void dc_stdio_formats_stop(void);
__attribute__((visibility("hidden"))) void dc_stdio_formats_arm(void);

/* n where the call did not fail. */
static inline __u64 moved_if(long long ret, __u64 n)
{
	return ret >= 0 ? n : 0;
}

#endif
