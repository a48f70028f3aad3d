// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The STDIO level's printf and scanf families (stdio.c has the rest): the
 * v-forms, the variadic calls' entries, and the _FORTIFY_SOURCE checking
 * forms of printf.
 */
#include "stdio_int.h"

#include <dlfcn.h>
#include <errno.h>

/* The variadic calls' entries (below): whether each is recorded, and the
 * C library's own. */
enum { ON_FPRINTF, ON_PRINTF, ON_FSCANF, ON_ISOC99_FSCANF, ON_FPRINTF_CHK, ON_PRINTF_CHK, ON_N };
__attribute__((visibility("hidden"))) volatile unsigned char dc_stdio_on[ON_N];
__attribute__((visibility("hidden"))) void *dc_stdio_next[ON_N];

void dc_stdio_formats_start(void)
{
	dc_stdio_on[ON_FPRINTF] = WANT(fprintf);
	dc_stdio_on[ON_PRINTF] = WANT(printf);
	dc_stdio_on[ON_FSCANF] = WANT(fscanf);
	dc_stdio_on[ON_ISOC99_FSCANF] = WANT(__isoc99_fscanf);
	dc_stdio_on[ON_FPRINTF_CHK] = WANT(__fprintf_chk);
	dc_stdio_on[ON_PRINTF_CHK] = WANT(__printf_chk);
}

void dc_stdio_formats_stop(void)
{
	memset((void *)dc_stdio_on, 0, sizeof(dc_stdio_on));
}

void dc_stdio_formats_arm(void)
{
	memset((void *)dc_stdio_on, 1, sizeof(dc_stdio_on));
}

/* The printf family goes on to the C library's v-form: the plain one, or
 * the checking one with its flag. */
#define NOT_CHECKED -1
static int pass_on(FILE *s, int flag, const char *fmt, va_list ap)
{
	return flag == NOT_CHECKED ? NEXT(vfprintf)(s, fmt, ap) : NEXT(__vfprintf_chk)(s, flag, fmt, ap);
}

/* A recorded call of the family: the bytes are its return. */
static int print(int f, FILE *s, int flag, const char *fmt, va_list ap)
{
	__u64 ts = NOW();
	int rc = pass_on(s, flag, fmt, ap);

	dc_stdio_put(f, ts, s, moved_if(rc, rc), moved_if(rc, rc), rc);
	return rc;
}

int vfprintf(FILE *s, const char *fmt, va_list ap)
{
	return WANT(vfprintf) ? print(DC_vfprintf, s, NOT_CHECKED, fmt, ap) : NEXT(vfprintf)(s, fmt, ap);
}

int vprintf(const char *fmt, va_list ap)
{
	return WANT(vprintf) ? print(DC_vprintf, stdout, NOT_CHECKED, fmt, ap) : NEXT(vprintf)(fmt, ap);
}

int __vfprintf_chk(FILE *s, int flag, const char *fmt, va_list ap)
{
	return WANT(__vfprintf_chk) ? print(DC___vfprintf_chk, s, flag, fmt, ap) : NEXT(__vfprintf_chk)(s, flag, fmt, ap);
}

/*
 * The variadic calls. A C function cannot pass its ... on to the C
 * library's same function, only to its v-form: a program's fprintf would
 * reach the C library as vfprintf even while the agent does not ask for
 * it, and the stdio uprobe set would record it under that name. On x86-64
 * each has an entry (VARIADIC_ENTRY) that jumps to the C library's own
 * function, the caller's registers and stack untouched, unless the agent
 * asked for it (its byte in on[], set at the ring's start); then, and
 * elsewhere, the C function below runs (DC_REC, its name).
 */

#if defined(__x86_64__)
#define VARIADIC_ENTRY(name, i)                                                                    \
	__asm__(".globl " #name "\n\t.type " #name ", @function\n" #name ":\n\t"                    \
		"cmpb $0, dc_stdio_on+" #i "(%rip)\n\t"                                            \
		"jne dc_rec_" #name "\n\t"                                                         \
		"movq dc_stdio_next+8*" #i "(%rip), %r11\n\t"                                      \
		"testq %r11, %r11\n\t"                                                             \
		"je dc_rec_" #name "\n\t"                                                          \
		"jmp *%r11\n\t"                                                                    \
		".size " #name ", .-" #name "\n");
#define DC_REC(name) __attribute__((visibility("hidden"))) dc_rec_##name
VARIADIC_ENTRY(fprintf, 0)
VARIADIC_ENTRY(printf, 1)
VARIADIC_ENTRY(fscanf, 2)
VARIADIC_ENTRY(__isoc99_fscanf, 3)
VARIADIC_ENTRY(__fprintf_chk, 4)
VARIADIC_ENTRY(__printf_chk, 5)
#else
#define DC_REC(name) name
#endif

/* The C library's own, for the entries: found once, at load. */
__attribute__((constructor)) static void find_variadic(void)
{
	static const char *const names[ON_N] = { "fprintf", "printf", "fscanf", "__isoc99_fscanf", "__fprintf_chk",
						 "__printf_chk" };

	for (int i = 0; i < ON_N; i++)
		__atomic_store_n(&dc_stdio_next[i], dlsym(RTLD_NEXT, names[i]), __ATOMIC_RELEASE);
}

#define WRAP_PRINT(name, params, s, flag)                                                          \
	int DC_REC(name) params                                                                    \
	{                                                                                          \
		va_list ap;                                                                        \
		int rc;                                                                            \
                                                                                                   \
		va_start(ap, fmt);                                                                 \
		rc = WANT(name) ? print(DC_##name, s, flag, fmt, ap) : pass_on(s, flag, fmt, ap);  \
		va_end(ap);                                                                        \
		return rc;                                                                         \
	}
WRAP_PRINT(fprintf, (FILE *s, const char *fmt, ...), s, NOT_CHECKED)
WRAP_PRINT(printf, (const char *fmt, ...), stdout, NOT_CHECKED)
WRAP_PRINT(__fprintf_chk, (FILE *s, int flag, const char *fmt, ...), s, flag)
WRAP_PRINT(__printf_chk, (int flag, const char *fmt, ...), stdout, flag)

/* The scanf family, each through its own vfscanf (the ISO C99 one, or
 * the older one with GNU's %a). Its return counts items, not bytes: the
 * bytes are how far the stream's position moved, as Darshan counts them
 * (none where the stream has no position: a pipe, a terminal); asked,
 * none. <stdio.h> gives fscanf and vfscanf the ISO C99 ones' symbols:
 * each wrapper names its own (asm). */
typedef int vscan_fn(FILE *, const char *, va_list);

/* The stream's position, errno as it was (the program's to read). */
static off64_t position(FILE *s)
{
	int saved = errno;
	off64_t at = NEXT(ftello64)(s);

	errno = saved;
	return at;
}

static int scan(int f, vscan_fn *next, FILE *s, const char *fmt, va_list ap)
{
	__u64 ts = NOW();
	off64_t from = position(s), to;
	int rc = next(s, fmt, ap), saved = errno;

	to = position(s);
	errno = saved;
	dc_stdio_put(f, ts, s, 0, from >= 0 && to >= from ? (__u64)(to - from) : 0, rc);
	return rc;
}

#if defined(__x86_64__)
#define SCAN_SYMBOL(name) __asm__("dc_rec_" #name)
#else
#define SCAN_SYMBOL(name) __asm__(#name)
#endif
#define WRAP_SCAN(name, vname)                                                                     \
	int dc_##vname(FILE *s, const char *fmt, va_list ap) __asm__(#vname);                      \
	int dc_##vname(FILE *s, const char *fmt, va_list ap)                                       \
	{                                                                                          \
		vscan_fn *next = (vscan_fn *)dc_next(#vname, &next_##vname);                       \
                                                                                                   \
		return WANT(vname) ? scan(DC_##vname, next, s, fmt, ap) : next(s, fmt, ap);        \
	}                                                                                          \
	__attribute__((visibility("hidden"))) int dc_##name(FILE *s, const char *fmt, ...) SCAN_SYMBOL(name); \
	int dc_##name(FILE *s, const char *fmt, ...)                                               \
	{                                                                                          \
		vscan_fn *next = (vscan_fn *)dc_next(#vname, &next_##vname);                       \
		va_list ap;                                                                        \
		int rc;                                                                            \
                                                                                                   \
		va_start(ap, fmt);                                                                 \
		rc = WANT(name) ? scan(DC_##name, next, s, fmt, ap) : next(s, fmt, ap);            \
		va_end(ap);                                                                        \
		return rc;                                                                         \
	}
WRAP_SCAN(fscanf, vfscanf)
WRAP_SCAN(__isoc99_fscanf, __isoc99_vfscanf)
