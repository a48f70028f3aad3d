// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The STDIO level, recorded in the process: libdcpmpi.so (a rank) or
 * libdcpreload.so, preloaded, defines the calls of stdio_funcs.h, so that
 * the program's calls reach these first; each calls the next definition
 * (the C library's) and, when the agent asked for it, puts one record
 * into the process's ring, as the MPI-IO and HDF5 calls do: a function
 * call's cost, where a uprobe pair traps into the kernel twice.
 *
 * A record's handle is the stream. fopen's and freopen's name their
 * stream by the path given (made absolute), fdopen's by the kernel's name
 * of the descriptor; the standard streams, which no call of the program
 * opens, carry the kernel's name of their descriptor in their first
 * record (DC_RING_REC_NAMES). Bytes: what a transfer asked for and what
 * it moved, as the uprobe sets count them: fread's and fwrite's items
 * times their size, the printf family's return, fgets' line, fputs' text
 * (and puts' newline), getline's return, a byte for the one-character
 * calls unless EOF; the scanf family's, how far the stream's position
 * moved (which the uprobe sets do not know).
 *
 * Recorded while the process's session with the agent lasts (session.h);
 * calls the C library makes inside itself do not pass through here.
 * Programs built with _FORTIFY_SOURCE call the checking forms
 * (__fprintf_chk, __fgets_chk...): recorded under their own names, each
 * passed to the C library's own, checks and all. The printf and scanf
 * families are in stdio_format.c.
 */
#include "stdio_int.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "dc_event.h"

/* ---- names ---- */

/*
 * The streams the ring has named since the session started: opened
 * through the wrappers (fopen's path, fdopen's descriptor), or named at
 * their first call here by the kernel's name of their descriptor (the
 * standard streams, popen's, tmpfile's). A lock-free set of addresses,
 * each taken out when its stream is closed, so that a stream made later
 * at the same address by a call not wrapped is named anew. Past
 * NAMED_PROBES collisions a stream is named at every call.
 */
#define NAMED_SLOTS 8192
#define NAMED_PROBES 16
#define GONE ((uintptr_t)1)
static uintptr_t named[NAMED_SLOTS];

static size_t slot_of(FILE *s)
{
	return (size_t)(((uintptr_t)s >> 4) * 0x9E3779B97F4A7C15ull >> (64 - 13)) & (NAMED_SLOTS - 1);
}

static int is_named(FILE *s)
{
	size_t i = slot_of(s);

	for (int k = 0; k < NAMED_PROBES; k++, i = (i + 1) & (NAMED_SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&named[i], __ATOMIC_RELAXED);

		if (v == (uintptr_t)s)
			return 1;
		if (!v)
			return 0;
	}
	return 0;
}

static void set_named(FILE *s)
{
	size_t i = slot_of(s);

	if (!s || is_named(s))
		return;
	for (int k = 0; k < NAMED_PROBES; k++, i = (i + 1) & (NAMED_SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&named[i], __ATOMIC_RELAXED);

		if ((v == 0 || v == GONE) &&
		    __atomic_compare_exchange_n(&named[i], &v, (uintptr_t)s, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
	}
}

/* Every entry of s (two threads may have named it at once). */
static void forget(FILE *s)
{
	size_t i = slot_of(s);

	for (int k = 0; k < NAMED_PROBES; k++, i = (i + 1) & (NAMED_SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&named[i], __ATOMIC_RELAXED);

		if (v == (uintptr_t)s)
			__atomic_store_n(&named[i], GONE, __ATOMIC_RELAXED);
		else if (!v)
			return;
	}
}

void dc_stdio_start(void)
{
	memset(named, 0, sizeof(named));
	dc_stdio_formats_start();
}

void dc_stdio_stop(void)
{
	dc_stdio_formats_stop();
}

void dc_stdio_arm(void)
{
	dc_stdio_formats_arm();
}

/* The kernel's name of descriptor fd, into out; NULL where there is none. */
static const char *fd_name(int fd, char *out, size_t n)
{
	char link[64];
	ssize_t len;

	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, out, n - 1);
	if (len <= 0)
		return NULL;
	out[len] = 0;
	return out;
}

/* ---- records ---- */

/* A call on stream s (NULL: fflush of every stream), named here if the
 * ring has not named its stream yet; out holds the name. */
static void on_stream(struct call *c, FILE *s, char *out, size_t n)
{
	c->handle = (__u64)(uintptr_t)s;
	if (s && !is_named(s) && (c->path = fd_name(fileno(s), out, n))) {
		c->names = 1;
		set_named(s);
	}
}

void dc_stdio_put(int f, __u64 ts, FILE *s, __u64 req, __u64 bytes, long long ret)
{
	char name[DC_PATH_MAX];
	struct call c = { f, ts };

	on_stream(&c, s, name, sizeof(name));
	c.req = req;
	c.bytes = bytes;
	dc_record_put(&c, ret, NOW());
}

/* A call that made stream s, named path (NULL: by its descriptor). */
static FILE *made(int f, __u64 ts, FILE *s, const char *path)
{
	char name[DC_PATH_MAX];
	struct call c = { f, ts };

	c.handle = (__u64)(uintptr_t)s;
	c.path = path;
	/* The kernel's name, as it is (pipe:[INODE] is no relative path). */
	if (s && !path && (c.path = fd_name(fileno(s), name, sizeof(name))))
		c.names = 1;
	set_named(s);
	dc_record_put(&c, s ? 0 : -1, NOW());
	return s;
}

/* ---- opening and closing ---- */

#define WRAP_OPEN(name)                                                                            \
	FILE *name(const char *path, const char *mode)                                             \
	{                                                                                          \
		__u64 ts;                                                                          \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(path, mode);                                             \
		ts = NOW();                                                                        \
		return made(DC_##name, ts, NEXT(name)(path, mode), path);                          \
	}
WRAP_OPEN(fopen)
WRAP_OPEN(fopen64)

FILE *fdopen(int fd, const char *mode)
{
	__u64 ts;

	if (!WANT(fdopen))
		return NEXT(fdopen)(fd, mode);
	ts = NOW();
	return made(DC_fdopen, ts, NEXT(fdopen)(fd, mode), NULL);
}

#define WRAP_REOPEN(name)                                                                          \
	FILE *name(const char *path, const char *mode, FILE *s)                                    \
	{                                                                                          \
		__u64 ts;                                                                          \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(path, mode, s);                                          \
		ts = NOW();                                                                        \
		return made(DC_##name, ts, NEXT(name)(path, mode, s), path);                       \
	}
WRAP_REOPEN(freopen)
WRAP_REOPEN(freopen64)

/* A stream's close: named before the call (after it, the stream is
 * gone), and forgotten, so that a stream made later at its address is
 * named anew. */
int fclose(FILE *s)
{
	char name[DC_PATH_MAX];
	struct call c = { DC_fclose };
	int rc;

	if (!WANT(fclose)) {
		forget(s);
		return NEXT(fclose)(s);
	}
	on_stream(&c, s, name, sizeof(name));
	forget(s);
	c.ts = NOW();
	rc = NEXT(fclose)(s);
	dc_record_put(&c, rc, NOW());
	return rc;
}

/* popen's streams are named at their first call; pclose is not recorded,
 * but forgets its stream's name. */
int pclose(FILE *s)
{
	static void *next_pclose;

	forget(s);
	return ((__typeof__(&pclose))dc_next("pclose", &next_pclose))(s);
}

/* ---- transfers ---- */

#define WRAP_RW(name, buf_type)                                                                    \
	size_t name(buf_type buf, size_t size, size_t n, FILE *s)                                  \
	{                                                                                          \
		__u64 ts;                                                                          \
		size_t got;                                                                        \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(buf, size, n, s);                                        \
		ts = NOW();                                                                        \
		got = NEXT(name)(buf, size, n, s);                                                 \
		dc_stdio_put(DC_##name, ts, s, (__u64)size * n, (__u64)size * got, (long long)got);         \
		return got;                                                                        \
	}
WRAP_RW(fread, void *)
WRAP_RW(fwrite, const void *)

char *fgets(char *buf, int n, FILE *s)
{
	__u64 ts, len;
	char *got;

	if (!WANT(fgets))
		return NEXT(fgets)(buf, n, s);
	ts = NOW();
	got = NEXT(fgets)(buf, n, s);
	len = got ? strlen(got) : 0;
	dc_stdio_put(DC_fgets, ts, s, len, len, (long long)(uintptr_t)got);
	return got;
}

char *__fgets_chk(char *buf, size_t size, int n, FILE *s)
{
	__u64 ts, len;
	char *got;

	if (!WANT(__fgets_chk))
		return NEXT(__fgets_chk)(buf, size, n, s);
	ts = NOW();
	got = NEXT(__fgets_chk)(buf, size, n, s);
	len = got ? strlen(got) : 0;
	dc_stdio_put(DC___fgets_chk, ts, s, len, len, (long long)(uintptr_t)got);
	return got;
}

size_t __fread_chk(void *buf, size_t size_of_buf, size_t size, size_t n, FILE *s)
{
	__u64 ts;
	size_t got;

	if (!WANT(__fread_chk))
		return NEXT(__fread_chk)(buf, size_of_buf, size, n, s);
	ts = NOW();
	got = NEXT(__fread_chk)(buf, size_of_buf, size, n, s);
	dc_stdio_put(DC___fread_chk, ts, s, (__u64)size * n, (__u64)size * got, (long long)got);
	return got;
}

int fputs(const char *text, FILE *s)
{
	__u64 ts, len;
	int rc;

	if (!WANT(fputs))
		return NEXT(fputs)(text, s);
	ts = NOW();
	rc = NEXT(fputs)(text, s);
	len = strlen(text);
	dc_stdio_put(DC_fputs, ts, s, len, moved_if(rc, len), rc);
	return rc;
}

int puts(const char *text)
{
	__u64 ts, len;
	int rc;

	if (!WANT(puts))
		return NEXT(puts)(text);
	ts = NOW();
	rc = NEXT(puts)(text);
	len = strlen(text) + 1; /* and its newline */
	dc_stdio_put(DC_puts, ts, stdout, len, moved_if(rc, len), rc);
	return rc;
}

typedef ssize_t getdelim_fn(char **, size_t *, int, FILE *);

static ssize_t get_delim(getdelim_fn *next, char **line, size_t *n, int delim, FILE *s)
{
	__u64 ts;
	ssize_t rc;

	if (!WANT(getdelim))
		return next(line, n, delim, s);
	ts = NOW();
	rc = next(line, n, delim, s);
	dc_stdio_put(DC_getdelim, ts, s, moved_if(rc, rc), moved_if(rc, rc), rc);
	return rc;
}

ssize_t getdelim(char **line, size_t *n, int delim, FILE *s)
{
	return get_delim(NEXT(getdelim), line, n, delim, s);
}

/* What an optimized build's getline calls (<stdio.h> inlines it): the C
 * library's other name of getdelim, recorded as getdelim, as the stdio
 * uprobe set records it (one address, the first name). */
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *s);
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *s)
{
	static void *next___getdelim;

	return get_delim((getdelim_fn *)dc_next("__getdelim", &next___getdelim), line, n, delim, s);
}

ssize_t getline(char **line, size_t *n, FILE *s)
{
	__u64 ts;
	ssize_t rc;

	if (!WANT(getline))
		return NEXT(getline)(line, n, s);
	ts = NOW();
	rc = NEXT(getdelim)(line, n, '\n', s);
	dc_stdio_put(DC_getline, ts, s, moved_if(rc, rc), moved_if(rc, rc), rc);
	return rc;
}

/* One character: a byte unless EOF. */
#define WRAP_PUTC(name)                                                                            \
	int name(int ch, FILE *s)                                                                  \
	{                                                                                          \
		__u64 ts;                                                                          \
		int rc;                                                                            \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(ch, s);                                                  \
		ts = NOW();                                                                        \
		rc = NEXT(name)(ch, s);                                                            \
		dc_stdio_put(DC_##name, ts, s, 1, rc != EOF, rc);                                           \
		return rc;                                                                         \
	}
WRAP_PUTC(fputc)
WRAP_PUTC(putc)

#define WRAP_GETC(name)                                                                            \
	int name(FILE *s)                                                                          \
	{                                                                                          \
		__u64 ts;                                                                          \
		int rc;                                                                            \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(s);                                                      \
		ts = NOW();                                                                        \
		rc = NEXT(name)(s);                                                                \
		dc_stdio_put(DC_##name, ts, s, 1, rc != EOF, rc);                                           \
		return rc;                                                                         \
	}
WRAP_GETC(fgetc)
WRAP_GETC(getc)

int putchar(int ch)
{
	__u64 ts;
	int rc;

	if (!WANT(putchar))
		return NEXT(putchar)(ch);
	ts = NOW();
	rc = NEXT(putc)(ch, stdout);
	dc_stdio_put(DC_putchar, ts, stdout, 1, rc != EOF, rc);
	return rc;
}

int getchar(void)
{
	__u64 ts;
	int rc;

	if (!WANT(getchar))
		return NEXT(getchar)();
	ts = NOW();
	rc = NEXT(getc)(stdin);
	dc_stdio_put(DC_getchar, ts, stdin, 1, rc != EOF, rc);
	return rc;
}

/* ---- closes, positions and flushes ---- */

#define WRAP_SEEK(name, off_type)                                                                  \
	int name(FILE *s, off_type off, int whence)                                                \
	{                                                                                          \
		struct call c = { DC_##name };                                                     \
		int rc;                                                                            \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name)(s, off, whence);                                         \
		c.ts = NOW();                                                                      \
		rc = NEXT(name)(s, off, whence);                                                   \
		c.handle = (__u64)(uintptr_t)s;                                                    \
		c.has_offset = 1;                                                                  \
		c.offset = off;                                                                    \
		dc_record_put(&c, rc, NOW());                                                       \
		return rc;                                                                         \
	}
WRAP_SEEK(fseek, long)
WRAP_SEEK(fseeko, off_t)
WRAP_SEEK(fseeko64, off64_t)

#define WRAP_ON(type, name, params, args, s)                                                       \
	type name params                                                                           \
	{                                                                                          \
		__u64 ts;                                                                          \
		type rc;                                                                           \
                                                                                                   \
		if (!WANT(name))                                                                   \
			return NEXT(name) args;                                                    \
		ts = NOW();                                                                        \
		rc = NEXT(name) args;                                                              \
		dc_stdio_put(DC_##name, ts, s, 0, 0, rc);                                                   \
		return rc;                                                                         \
	}
WRAP_ON(int, fflush, (FILE *s), (s), s)
WRAP_ON(long, ftell, (FILE *s), (s), s)
WRAP_ON(off_t, ftello, (FILE *s), (s), s)
WRAP_ON(off64_t, ftello64, (FILE *s), (s), s)
WRAP_ON(int, fgetpos, (FILE *s, fpos_t *pos), (s, pos), s)
WRAP_ON(int, fgetpos64, (FILE *s, fpos64_t *pos), (s, pos), s)
WRAP_ON(int, fsetpos, (FILE *s, const fpos_t *pos), (s, pos), s)
WRAP_ON(int, fsetpos64, (FILE *s, const fpos64_t *pos), (s, pos), s)

void rewind(FILE *s)
{
	__u64 ts;

	if (!WANT(rewind)) {
		NEXT(rewind)(s);
		return;
	}
	ts = NOW();
	NEXT(rewind)(s);
	dc_stdio_put(DC_rewind, ts, s, 0, 0, 0);
}
