// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probe sets and agent settings: what a file says, and where it is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"

static char path[] = "/tmp/dc-config.XXXXXX";

static void write_yaml(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static unsigned slot(__u64 bits, int s)
{
	return (bits >> (DC_COOKIE_FUNC_BITS + s * DC_SLOT_BITS)) & 7;
}

static void test_uprobe_set(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: posix\ncategory: posix\nlibrary: libc.so.6\nfunctions:\n"
		   "  - {name: pread, fd: 1, bytes: 3, offset: 4, ret: bytes}\n"
		   "  - {name: fread, bytes: 2, count: 3, handle: 4, ret: items}\n"
		   "  - fsync\n"
		   "  - {name: close, fd: 1, ret: int, closes: true}\n"
		   "  - {name: dup, fd: 1, closes: false}\n"
		   "  - {name: H5Dwrite, handle: 1, ret: int, bytes_from: nested}\n"
		   "  - {name: H5Dcreate2, parent: 1, path: 2, ret: handle}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_string_equal(set.name, "posix");
	assert_string_equal(set.library, "libc.so.6");
	assert_int_equal(set.kind, DC_SET_UPROBES);
	assert_int_equal(set.nfns, 7);
	assert_string_equal(set.fns[0].name, "pread");
	assert_int_equal(slot(set.fns[0].argbits, DC_SLOT_FD), 1);
	assert_int_equal(slot(set.fns[0].argbits, DC_SLOT_BYTES), 3);
	assert_int_equal(slot(set.fns[0].argbits, DC_SLOT_OFFSET), 4);
	assert_int_equal(slot(set.fns[0].argbits, DC_SLOT_PATH), 0);
	assert_int_equal(set.fns[0].argbits >> DC_COOKIE_RET_SHIFT, DC_RET_BYTES);
	assert_int_equal(slot(set.fns[1].argbits, DC_SLOT_MUL), 3);
	assert_int_equal(slot(set.fns[1].argbits, DC_SLOT_HANDLE), 4);
	assert_int_equal(set.fns[1].argbits >> DC_COOKIE_RET_SHIFT, DC_RET_ITEMS);
	assert_string_equal(set.fns[2].name, "fsync");
	assert_int_equal(set.fns[2].argbits, 0);
	assert_int_equal(set.fns[3].argbits, DC_COOKIE_CLOSES | (__u64)DC_RET_INT << DC_COOKIE_RET_SHIFT |
						     1ull << (DC_COOKIE_FUNC_BITS + DC_SLOT_FD * DC_SLOT_BITS));
	assert_int_equal(set.fns[4].argbits & DC_COOKIE_CLOSES, 0);
	assert_int_equal(set.fns[0].argbits & DC_COOKIE_CLOSES, 0);
	assert_int_equal(set.fns[5].argbits & DC_COOKIE_BYTES_NESTED, DC_COOKIE_BYTES_NESTED);
	assert_int_equal(set.fns[0].argbits & DC_COOKIE_BYTES_NESTED, 0);
	assert_int_equal(slot(set.fns[6].argbits, DC_SLOT_PARENT), 1);
	assert_int_equal(slot(set.fns[6].argbits, DC_SLOT_PATH), 2);
	assert_int_equal(set.fns[6].argbits >> DC_COOKIE_RET_SHIFT, DC_RET_HANDLE);
	assert_int_equal(slot(set.fns[0].argbits, DC_SLOT_PARENT), 0);
	/* The function id bits stay free for the agent. */
	assert_int_equal(set.fns[0].argbits & ((1u << DC_COOKIE_FUNC_BITS) - 1), 0);
	dc_probe_set_free(&set);
}

/* handles: stdio marks the calls on a stream and those that make one. */
static void test_stdio_handles(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: s\nlibrary: libc.so.6\nhandles: stdio\nfunctions:\n"
		   "  - {name: fopen, path: 1, ret: handle}\n"
		   "  - {name: fwrite, bytes: 2, count: 3, handle: 4, ret: items}\n"
		   "  - {name: freopen, path: 1, handle: 3, ret: handle}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_true(set.stdio_handles);
	/* fopen's and freopen's stream is the one they return. */
	assert_int_equal(set.fns[0].argbits & DC_COOKIE_STREAM, DC_COOKIE_STREAM);
	assert_int_equal(set.fns[1].argbits & DC_COOKIE_STREAM, DC_COOKIE_STREAM);
	assert_int_equal(set.fns[2].argbits & DC_COOKIE_STREAM, DC_COOKIE_STREAM);
	dc_probe_set_free(&set);
	write_yaml("set: s\nlibrary: libc.so.6\nfunctions:\n  - {name: fwrite, handle: 4}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.fns[0].argbits & DC_COOKIE_STREAM, 0);
	dc_probe_set_free(&set);
}

static void test_syscall_set_and_all(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: sc\nsyscalls:\n  - {name: openat, path: 2, ret: fd}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.kind, DC_SET_SYSCALLS);
	assert_string_equal(set.category, "syscall");
	dc_probe_set_free(&set);

	write_yaml("set: blk\nkernel: block\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.kind, DC_SET_KERNEL);
	assert_string_equal(set.category, "block");
	dc_probe_set_free(&set);

	write_yaml("set: mylib\nlibrary: /opt/lib/libx.so\nfunctions: all\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_true(set.all_functions);
	assert_string_equal(set.category, "mylib"); /* defaults to the set's name */
	dc_probe_set_free(&set);
}

/* kernel: with a list names kernel functions: names, bare globs, patterns,
 * and ret only; kernel: with a word stays a tracepoint group. */
static void test_kernel_set(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: myfs\ncategory: fs\nkernel:\n"
		   "  - vfs_read\n"
		   "  - \"ext4_*\"\n"
		   "  - {name: vfs_write, ret: bytes}\n"
		   "  - {regex: \"^filemap_(read|fault)$\"}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.kind, DC_SET_KFUNCS);
	assert_string_equal(set.category, "fs");
	assert_null(set.library);
	assert_int_equal(set.nfns, 4);
	assert_int_equal(set.fns[0].select, DC_FN_NAME);
	assert_int_equal(set.fns[1].select, DC_FN_GLOB);
	assert_string_equal(set.fns[1].name, "ext4_*");
	assert_int_equal(set.fns[2].select, DC_FN_NAME);
	assert_int_equal((set.fns[2].argbits >> DC_COOKIE_RET_SHIFT) & 7, DC_RET_BYTES);
	assert_int_equal(set.fns[3].select, DC_FN_REGEX);
	dc_probe_set_free(&set);

	write_yaml("set: k\nkernel: block\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.kind, DC_SET_KERNEL);
	assert_string_equal(set.kernel, "block");
	dc_probe_set_free(&set);
}

/* Each bad file names the file, the line and what is wrong. */
static void expect_error(const char *yaml, int line, const char *what)
{
	struct dc_probe_set set;
	char err[512], where[300];

	write_yaml(yaml);
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), -1);
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, what))
		fail_msg("got '%s', expected '%s...%s'", err, where, what);
}

static void test_errors_name_file_and_line(void **state)
{
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: read, fd: 9}\n", 4,
		     "fd: '9' is not a whole number from 1 to 6");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: close, closes: yes}\n", 4,
		     "closes: expected true or false");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: H5Dwrite, bytes_from: args}\n", 4,
		     "bytes_from: expected nested");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: read, ret: pointer}\n", 4,
		     "ret: expected");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions: [read\n", 4, "");
	expect_error("set: x\nlibary: libc.so.6\nfunctions: [read]\n", 2, "unknown key 'libary'");
	expect_error("set: x\nfunctions: [read]\n", 1, "missing 'library:'");
	expect_error("library: libc.so.6\nfunctions: [read]\n", 1, "missing 'set:'");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {fd: 1}\n", 4, "a function needs a name");
	expect_error("set: x\nsyscalls: all\n", 1, "'syscalls: all' is not supported");
	expect_error("- just\n- a list\n", 1, "expected a mapping");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: writev, fd: 1, iov: 2, bytes: 3}\n", 1,
		     "function 'writev': iov: is read at a system call: a syscalls set, or syscall: NAME");
	expect_error("set: x\nlibrary: libc.so.6\nhandles: files\nfunctions: [fwrite]\n", 3,
		     "handles: expected stdio (the C library's FILE streams)");
	expect_error("set: x\nhandles: stdio\nsyscalls: [write]\n", 1,
		     "handles: stdio belongs to a set of library functions");
	expect_error("set: x\nsyscalls:\n  - {name: writev, fd: 1, iov: 2}\n", 1,
		     "function 'writev': iov: needs bytes: (the number of its entries)");
	expect_error("set: k\nkernel: network\n", 2, "kernel: expected block, pagecache, io_uring, mmap, aio or a list of kernel functions");
	expect_error("set: k\nkernel: block\nlibrary: libc.so.6\n", 1, "names no library or functions");
	expect_error("set: k\nkernel:\n  - {name: vfs_read, fd: 1}\n", 1, "kernel function 'vfs_read': only name, match, regex and ret apply");
	expect_error("set: k\nkernel: [vfs_read]\nlibrary: libc.so.6\n", 1, "a set of kernel functions names no library");
	expect_error("set: k\nkernel: [vfs_read]\nfunctions: [read]\n", 3, "a set has one list: functions, syscalls or kernel");
	expect_error("set: w\nwrapper: libdcpmpi\nfunctions: [H5Dwrite, MPI_File_write, H5Dwrite2]\n", 1,
		     "wrapper function 'H5Dwrite2': not an MPI-IO, HDF5 or STDIO call libdcpmpi records");
	expect_error("set: w\ncategory: netcdf\nwrapper: libdcpmpi\nfunctions: all\n", 1,
		     "a wrapper set with 'functions: all' has category mpiio, hdf5 or stdio");
	expect_error("set: w\nwrapper: libdcpmpi\nfunctions:\n  - {name: H5Dwrite, handle: 1}\n", 1,
		     "wrapper function 'H5Dwrite': a name only");
}

/* Strings whose length is the bytes, the standard streams, one-character calls. */
static void test_text_and_standard(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: s\nlibrary: libc.so.6\nhandles: stdio\nfunctions:\n"
		   "  - {name: fputs, text: 1, handle: 2, ret: int}\n"
		   "  - {name: puts, text: 1, stream: standard, ret: line}\n"
		   "  - {name: getchar, stream: standard, ret: char}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(DC_COOKIE_SLOT(set.fns[0].argbits, DC_SLOT_BYTES), 1);
	assert_int_equal(set.fns[0].argbits & (DC_COOKIE_TEXT | DC_COOKIE_STD), DC_COOKIE_TEXT);
	assert_int_equal(DC_COOKIE_RET(set.fns[1].argbits), DC_RET_LINE);
	assert_int_equal(set.fns[1].argbits & (DC_COOKIE_TEXT | DC_COOKIE_STD), DC_COOKIE_TEXT | DC_COOKIE_STD);
	assert_int_equal(DC_COOKIE_RET(set.fns[2].argbits), DC_RET_CHAR);
	assert_int_equal(set.fns[2].argbits & (DC_COOKIE_TEXT | DC_COOKIE_STD), DC_COOKIE_STD);
	dc_probe_set_free(&set);
	(void)state;
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: fputs, text: 1, bytes: 1}\n", 4,
		     "text: is the call's bytes: give text: or bytes:, not both");
	expect_error("set: x\nsyscalls:\n  - {name: write, text: 2}\n", 1,
		     "function 'write': text: is read at the function's return");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: printf, stream: standard}\n", 1,
		     "function 'printf': stream: standard is for a call of a handles: stdio set");
	expect_error("set: x\nlibrary: libc.so.6\nhandles: stdio\nfunctions:\n  - {name: fflush, stream: standard}\n", 1,
		     "reads or writes by its name");
	expect_error("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: puts, stream: stdout}\n", 4,
		     "stream: expected standard");
}

/* Patterns, thin wrappers, and keys given twice. */
static void test_patterns_wrappers_duplicates(void **state)
{
	struct dc_probe_set set;
	char err[512];

	write_yaml("set: h5\nlibrary: libhdf5.so\nfunctions:\n"
		   "  - match: \"H5D*\"\n"
		   "  - {regex: \"^H5F(open|close)$\", handle: 1}\n"
		   "  - {name: write, syscall: write, fd: 1}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), 0);
	assert_int_equal(set.fns[0].select, DC_FN_GLOB);
	assert_string_equal(set.fns[0].name, "H5D*");
	assert_int_equal(set.fns[1].select, DC_FN_REGEX);
	assert_int_equal(set.fns[2].select, DC_FN_NAME);
	assert_string_equal(set.fns[2].syscall, "write");
	dc_probe_set_free(&set);

	write_yaml("set: x\nlibrary: libc.so.6\nfunctions:\n  - {name: write, fd: 1, fd: 2}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":4: key 'fd' appears twice in this mapping (first on line 4)"));

	write_yaml("set: x\nset: y\nlibrary: libc.so.6\nfunctions: all\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":2: key 'set' appears twice"));

	write_yaml("set: x\nlibrary: libc.so.6\nfunctions:\n  - {regex: \"([\"}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "regex '(['"));

	write_yaml("set: x\nlibrary: libc.so.6\nfunctions:\n  - {match: \"f*\", syscall: write}\n");
	assert_int_equal(dc_probe_set_load(path, &set, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "syscall: goes with one function's name"));
}

static void test_missing_file(void **state)
{
	struct dc_probe_set set;
	char err[512];

	assert_int_equal(dc_probe_set_load("/nonexistent/x.yaml", &set, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

static void test_find_in_dirs(void **state)
{
	char out[512], dirs[256], *slash;

	snprintf(dirs, sizeof(dirs), "/nonexistent:%s", path);
	slash = strrchr(dirs, '/');
	*slash = 0; /* the folder of path */
	assert_int_equal(dc_probe_set_find(slash + 1, dirs, out, sizeof(out)), -1); /* no .yaml suffix */
	assert_int_equal(dc_probe_set_find(path, "", out, sizeof(out)), 0); /* a path is taken as is */
	assert_string_equal(out, path);
}

static void test_settings(void **state)
{
	struct dc_settings s = { .mode = -1, .uid = -1 };
	char err[512];

	write_yaml("job_id: j7\noutput: /scratch/dc\nmode: profile\ninterval: 5\nprobes: posix\nringbuf_mb: 64\n");
	assert_int_equal(dc_settings_load(path, &s, err, sizeof(err)), 0);
	assert_string_equal(s.job_id, "j7");
	assert_string_equal(s.output, "/scratch/dc");
	assert_int_equal(s.mode, DC_MODE_PROFILE);
	assert_int_equal(s.interval_ms, 5000);
	assert_int_equal(s.ringbuf_mb, 64);
	dc_settings_free(&s);

	memset(&s, 0, sizeof(s));
	write_yaml("mode: fast\n");
	assert_int_equal(dc_settings_load(path, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":1: mode: expected trace or profile"));
	dc_settings_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uprobe_set),
		cmocka_unit_test(test_stdio_handles),
		cmocka_unit_test(test_text_and_standard),
		cmocka_unit_test(test_syscall_set_and_all),
		cmocka_unit_test(test_kernel_set),
		cmocka_unit_test(test_errors_name_file_and_line),
		cmocka_unit_test(test_patterns_wrappers_duplicates),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_find_in_dirs),
		cmocka_unit_test(test_settings),
	};
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return 1;
	close(fd);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
