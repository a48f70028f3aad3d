#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compares a trace's system calls with strace's view of the same run.

strace_oracle.py LOGPREFIX DUMP ROOT

LOGPREFIX: strace -ff -y -s 0 -o LOGPREFIX (a log per thread, LOGPREFIX.TID,
each descriptor and dirfd followed by the kernel's path in <>). DUMP: dc-dump
of the node file. Every call of the families below on a file under ROOT, or
on a pipe, is looked for in both: the same thread, function, absolute path
and result (bytes moved, the new descriptor; a failure as a failure). Each
call strace saw must be in the trace once, and the trace may hold none that
strace did not see. A call that moves data between two descriptors has the
other one's file too (the second file, the trace's path2), a rename or a
link its new name, and an open the name it was given where the kernel names
the file otherwise: these must agree as well. Prints what differs and exits 1, else the count of calls compared
per function.
"""
import collections
import glob
import os
import re
import sys

# Where each compared call's file is, by argument index: a descriptor
# (strace's annotation of it names the file), a (dirfd, name) pair (the name
# relative to the annotated folder; an empty or null name is the dirfd's own
# file) or a name (relative to the working directory). The calls that move
# data between two descriptors are compared on the one the data goes to.
FD_CALLS = {name: 0 for name in (
    "read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
    "close", "lseek", "fsync", "fdatasync", "ftruncate", "fstat", "getdents64", "getdents", "fallocate",
    "fadvise64", "readahead", "sync_file_range", "syncfs", "flock", "fcntl", "dup", "dup2", "dup3", "fchmod",
    "fchown", "fstatfs", "fchdir", "fsetxattr", "fgetxattr", "flistxattr", "fremovexattr", "sendfile",
    "vmsplice")}
FD_CALLS.update({"copy_file_range": 2, "splice": 2, "tee": 1, "mmap": 4})
# ...and the descriptor the data comes from: the trace's second file.
SECOND_FD = {"copy_file_range": 0, "sendfile": 1, "splice": 0, "tee": 0}
# The second name of a rename or a link (its new one), by argument index:
# a name in the working directory, or a (dirfd, name) pair.
SECOND_NAME = {"rename": 1, "link": 1}
SECOND_AT = {"renameat": 2, "renameat2": 2, "linkat": 2}
AT_CALLS = {name: 0 for name in (
    "openat", "openat2", "newfstatat", "statx", "unlinkat", "mkdirat", "renameat", "renameat2", "mknodat",
    "linkat", "faccessat", "faccessat2", "fchmodat", "fchownat", "futimesat", "utimensat", "readlinkat")}
AT_CALLS["symlinkat"] = 1
PATH_CALLS = {name: 0 for name in (
    "open", "creat", "stat", "lstat", "unlink", "mkdir", "rename", "rmdir", "mknod", "link", "readlink",
    "access", "truncate", "chmod", "chown", "lchown", "utime", "utimes", "statfs", "chdir", "setxattr",
    "lsetxattr", "getxattr", "lgetxattr", "listxattr", "llistxattr", "removexattr", "lremovexattr")}
PATH_CALLS["symlink"] = 1
OPENS = {"open", "openat", "openat2", "creat"}

# A result may be in hex (fcntl's flags: "= 0x8002 (flags O_RDWR|...)").
LINE = re.compile(r"^(\w+)\((.*)\) += (0x[0-9a-f]+|-?\d+|\?)(?:<(.*)>)?")
ANNOTATED = re.compile(r"^(AT_FDCWD|-?\d+)<(.*)>$")
NAME = re.compile(r'^"((?:[^"\\]|\\.)*)"')


def split_args(s):
    """strace's arguments, split at the commas between them."""
    out, depth, quoted, cur, i = [], 0, False, [], 0
    while i < len(s):
        c = s[i]
        if quoted:
            if c == "\\":
                cur.append(s[i:i + 2])
                i += 2
                continue
            quoted = c != '"'
        elif c == '"':
            quoted = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if cur:
        out.append("".join(cur).strip())
    return out


def unquote(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def joined(folder, name):
    return os.path.normpath(name if name.startswith("/") else os.path.join(folder, name))


def result_of(text):
    """A result as strace prints it: decimal, hex (0x...) or octal (umask's 022)."""
    if text.startswith("0x"):
        return int(text, 16)
    return int(text, 8) if len(text) > 1 and text.startswith("0") else int(text)


def arg(args, i):
    return args[i] if i < len(args) else ""


def strace_calls(prefix, cwd0):
    """(tid, func, path, result) -> count, and the set of tids logged."""
    calls = collections.Counter()
    tids = set()
    for log in glob.glob(prefix + ".*"):
        tid = log.rsplit(".", 1)[1]
        if not tid.isdigit():
            continue
        tids.add(tid)
        cwd = cwd0
        for line in open(log, encoding="latin-1"):
            m = LINE.match(line)
            if not m or m.group(3) == "?":
                continue
            func, ret, ret_path = m.group(1), result_of(m.group(3)), m.group(4)
            args = split_args(m.group(2))
            result = ret if ret >= 0 else "failed"
            path = None
            first = ANNOTATED.match(arg(args, 0))
            if first and first.group(1) == "AT_FDCWD":
                cwd = first.group(2)
            name0 = NAME.match(arg(args, 0))
            if func == "chdir" and ret == 0 and name0:
                cwd = joined(cwd, unquote(name0.group(1)))
            elif func == "fchdir" and ret == 0 and first:
                cwd = first.group(2)
            if func in FD_CALLS:
                a = ANNOTATED.match(arg(args, FD_CALLS[func]))
                if not a:
                    continue
                path = a.group(2)
            elif func in AT_CALLS:
                i = AT_CALLS[func]
                a = ANNOTATED.match(arg(args, i))
                if not a:
                    continue
                n = NAME.match(arg(args, i + 1))
                if n is None and arg(args, i + 1) != "NULL":
                    continue
                name = unquote(n.group(1)) if n else ""
                path = a.group(2) if name == "" else joined(a.group(2), name)
            elif func in PATH_CALLS:
                n = NAME.match(arg(args, PATH_CALLS[func]))
                if n is None:
                    continue
                path = joined(cwd, unquote(n.group(1)))
            else:
                continue
            path2 = ""
            if func in OPENS and ret >= 0 and ret_path:
                # The trace keeps the name given beside the kernel's.
                n = NAME.match(arg(args, 1 if func != "open" and func != "creat" else 0))
                given = unquote(n.group(1)) if n else ""
                path, path2 = ret_path, given if given != ret_path else ""
            if func in SECOND_FD:
                a = ANNOTATED.match(arg(args, SECOND_FD[func]))
                path2 = a.group(2) if a else "?"
            elif func in SECOND_NAME:
                n = NAME.match(arg(args, SECOND_NAME[func]))
                path2 = joined(cwd, unquote(n.group(1))) if n else "?"
            elif func in SECOND_AT:
                a = ANNOTATED.match(arg(args, SECOND_AT[func]))
                n = NAME.match(arg(args, SECOND_AT[func] + 1))
                path2 = joined(a.group(2), unquote(n.group(1))) if a and n else "?"
            calls[(tid, func, path, path2, result)] += 1
    return calls, tids


def trace_calls(dump, tids):
    calls = collections.Counter()
    for line in open(dump, encoding="utf-8", errors="replace"):
        if not line.startswith("event "):
            continue
        head, _, path = line.rstrip("\n").partition(" path=")
        head, _, path2 = head.partition(" path2=")
        kv = dict(f.split("=", 1) for f in head.split()[1:] if "=" in f)
        if kv.get("level") != "syscall" or kv.get("tid") not in tids:
            continue
        ret = int(kv["ret"])
        calls[(kv["tid"], kv["func"], path, path2, ret if ret >= 0 else "failed")] += 1
    return calls


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    prefix, dump, root = sys.argv[1], sys.argv[2], os.path.normpath(sys.argv[3])
    seen, tids = strace_calls(prefix, root)
    traced = trace_calls(dump, tids)
    funcs = set(FD_CALLS) | set(AT_CALLS) | set(PATH_CALLS)

    def ours(key):
        p = key[2]
        return key[1] in funcs and (p == root or p.startswith(root + "/") or p.startswith("pipe:["))

    want = collections.Counter({k: n for k, n in seen.items() if ours(k)})
    got = collections.Counter({k: n for k, n in traced.items() if ours(k)})
    bad = 0
    for k in sorted(set(want) | set(got), key=str):
        if want[k] != got[k]:
            bad += 1
            print("differs: tid=%s %s %s from %r -> %s: strace %d, trace %d" % (k + (want[k], got[k])))
    if not want:
        print("strace saw no call to compare")
        return 1
    per_func = collections.Counter()
    for k, n in want.items():
        per_func[k[1]] += n
    print("compared: " + " ".join("%s=%d" % kv for kv in sorted(per_func.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
