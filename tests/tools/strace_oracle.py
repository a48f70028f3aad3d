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
strace did not see. Prints what differs and exits 1, else the count of calls
compared per function.
"""
import collections
import glob
import os
import re
import sys

# fd first: calls on a descriptor, named by strace's annotation of it.
FD_CALLS = {"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
            "close", "lseek", "fsync", "fdatasync", "ftruncate", "fstat", "getdents64"}
# (dirfd, name) first: named relative to the annotated folder.
AT_CALLS = {"openat", "newfstatat", "statx", "unlinkat", "mkdirat", "renameat", "renameat2"}
# a name first: relative to the working directory.
PATH_CALLS = {"open", "creat", "stat", "lstat", "unlink", "mkdir", "rename"}
OPENS = {"open", "openat", "creat"}

LINE = re.compile(r"^(\w+)\((.*)\) += (-?\d+|\?)(?:<(.*)>)?")
ANNOTATED = re.compile(r"^(AT_FDCWD|-?\d+)<(.*?)>(?:, |$)")
NAME = re.compile(r'^"((?:[^"\\]|\\.)*)"')


def unquote(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def joined(folder, name):
    return os.path.normpath(name if name.startswith("/") else os.path.join(folder, name))


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
            func, args, ret, ret_path = m.group(1), m.group(2), int(m.group(3)), m.group(4)
            result = ret if ret >= 0 else "failed"
            path = None
            a = ANNOTATED.match(args)
            if a and a.group(1) == "AT_FDCWD":
                cwd = a.group(2)
            if func == "chdir" and ret == 0 and NAME.match(args):
                cwd = joined(cwd, unquote(NAME.match(args).group(1)))
            elif func == "fchdir" and ret == 0 and a:
                cwd = a.group(2)
            if func in FD_CALLS and a:
                path = a.group(2)
            elif func in AT_CALLS and a:
                n = NAME.match(args[a.end():])
                if n is None:
                    continue
                name = unquote(n.group(1))
                path = a.group(2) if name == "" else joined(a.group(2), name)
            elif func in PATH_CALLS:
                n = NAME.match(args)
                if n is None:
                    continue
                path = joined(cwd, unquote(n.group(1)))
            else:
                continue
            if func in OPENS and ret >= 0 and ret_path:
                path = ret_path
            calls[(tid, func, path, result)] += 1
    return calls, tids


def trace_calls(dump, tids):
    calls = collections.Counter()
    for line in open(dump, encoding="utf-8", errors="replace"):
        if not line.startswith("event "):
            continue
        head, _, path = line.rstrip("\n").partition(" path=")
        kv = dict(f.split("=", 1) for f in head.split()[1:] if "=" in f)
        if kv.get("level") != "syscall" or kv.get("tid") not in tids:
            continue
        ret = int(kv["ret"])
        calls[(kv["tid"], kv["func"], path, ret if ret >= 0 else "failed")] += 1
    return calls


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    prefix, dump, root = sys.argv[1], sys.argv[2], os.path.normpath(sys.argv[3])
    seen, tids = strace_calls(prefix, root)
    traced = trace_calls(dump, tids)
    funcs = FD_CALLS | AT_CALLS | PATH_CALLS

    def ours(key):
        p = key[2]
        return key[1] in funcs and (p == root or p.startswith(root + "/") or p.startswith("pipe:["))

    want = collections.Counter({k: n for k, n in seen.items() if ours(k)})
    got = collections.Counter({k: n for k, n in traced.items() if ours(k)})
    bad = 0
    for k in sorted(set(want) | set(got), key=str):
        if want[k] != got[k]:
            bad += 1
            print("differs: tid=%s %s %s -> %s: strace %d, trace %d" % (k + (want[k], got[k])))
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
