#!/usr/bin/env bash
# The second file of a call that moves data between two descriptors
# (copy_file_range, sendfile, splice): the file the data came from, by its
# descriptor and its name, in every output dc-merge writes and in the
# report, where its bytes count on that file as well. The second name of a
# rename or a link (the new one, made absolute in its own folder), and the
# name an open was given where the kernel names its file otherwise.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_SUMMARY:?set by ctest}" "${DC_SRC:?set by ctest}" "${DC_TOOLS:?set by ctest}"
PY=/usr/bin/python3
export PYTHONPATH=$DC_SRC/python

mkdir -p "$TMP/w"
trace second -p syscalls -- "$PY" - "$TMP/w" <<'PY'
import os, sys
os.chdir(sys.argv[1])
src = os.open("src.bin", os.O_RDWR | os.O_CREAT, 0o644)
os.write(src, b"s" * 20000)
a = os.open("a.bin", os.O_WRONLY | os.O_CREAT, 0o644)
os.copy_file_range(src, a, 5000, 0)
b = os.open("b.bin", os.O_WRONLY | os.O_CREAT, 0o644)
os.sendfile(b, src, 0, 7000)
r, w = os.pipe()
os.splice(src, w, 3000, 0)
os.splice(r, b, 3000)
os.mkdir("sub")
os.rename("a.bin", "sub/a2.bin")
d = os.open("sub", os.O_RDONLY | os.O_DIRECTORY)
os.rename("b.bin", "b2.bin", dst_dir_fd=d)
os.chdir("sub")
os.rename(sys.argv[1] + "/sub/b2.bin", "b3.bin")
os.link("b3.bin", "../hard.bin")
os.symlink("src.bin", "../ln.bin")
os.close(os.open("../ln.bin", os.O_RDONLY))
PY
W=$TMP/w
# Second names: absolute, each in its own folder (the working directory,
# or the folder descriptor before it).
assert_eq "$(seconds syscall rename "^$W/a.bin\$")" "-1 $W/sub/a2.bin" "rename: the new name"
assert_eq "$(seconds syscall renameat "^$W/b.bin\$")" "-1 $W/sub/b2.bin" "renameat into a folder's descriptor"
assert_eq "$(seconds syscall rename "^$W/sub/b2.bin\$")" "-1 $W/sub/b3.bin" "rename from an absolute name to a relative one"
assert_eq "$(seconds syscall link "^$W/sub/b3.bin\$")" "-1 $W/hard.bin" "link: the new name"
assert_eq "$(seconds syscall openat "^$W/src.bin\$" | sort -u)" "-1 ../ln.bin
-1 src.bin" "the names the opens of src.bin were given, beside the kernel's"
# src.bin's descriptor, as dc-dump shows it on the write.
src=$(grep "^event .* func=write .* path=$W/src.bin\$" "$DUMP" | sed 's/.* fd=\([0-9]*\) .*/\1/')
[[ "$src" =~ ^[0-9]+$ ]] || fail "no write on src.bin: '$src'"
# The pipe's read end: the second descriptor of the splice into b.bin.
r=$(seconds syscall splice "^$W/b.bin\$" | cut -d' ' -f1)
assert_eq "$(seconds syscall copy_file_range "^$W/a.bin\$")" "$src $W/src.bin" "copy_file_range: fd2 and path2"
assert_eq "$(seconds syscall sendfile "^$W/b.bin\$")" "$src $W/src.bin" "sendfile"
assert_eq "$(seconds syscall splice "^pipe:" | cut -d' ' -f1,2)" "$src $W/src.bin" "splice into a pipe, from the file"

cd "$TMP"
"$DC_MERGE" second -i "$TMP/out/second" -o second.json -q
"$DC_MERGE" second -i "$TMP/out/second" -f hdf5 -o second.h5 -q
"$DC_MERGE" second -i "$TMP/out/second" -f pfw -o second.pfw -q
"$DC_MERGE" second -i "$TMP/out/second" -f perfetto --no-compress -o second.pftrace -q

# JSON: fd2 and path2 among the call's args, and on no other call. A pipe
# is named by the kernel as pipe:[inode], the same at both ends.
"$PY" - second.json "$W" "$src" "$r" <<'PY' || fail "the JSON's second files"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
movers = sorted((e["name"], e["args"]["path"], e["args"]["fd2"], e["args"]["path2"])
                for e in ev if e.get("ph") == "X" and "fd2" in e.get("args", {}))
w, src, r = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pipe = [m[1] for m in movers if m[1].startswith("pipe:[")]
assert len(pipe) == 1, movers
want = sorted([("copy_file_range", w + "/a.bin", src, w + "/src.bin"), ("sendfile", w + "/b.bin", src, w + "/src.bin"),
               ("splice", pipe[0], src, w + "/src.bin"), ("splice", w + "/b.bin", r, pipe[0])])
assert movers == want, movers
assert not [e for e in ev if "path2" in e.get("args", {}) and "fd2" not in e["args"]
            and e["name"] not in ("openat", "rename", "renameat", "link")], "a second name elsewhere"
print("ok: JSON: the 4 calls with a second file")
PY

# The HDF5 file and the pfw file through the Python package: the same.
"$PY" - second.h5 second.pfw "$W" "$src" "$r" <<'PY' || fail "the Python package's second files"
import sys
import datacrumbs as dc
w, src, r = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
for path in sys.argv[1:3]:
    c = dc.load(path)
    m = c[c["fd2"] != -1]
    got = sorted(zip(m["function"].astype(str), m["path"].astype(str), m["fd2"], m["path2"].astype(str)))
    pipe = [g[1] for g in got if g[1].startswith("pipe:[")]
    assert len(pipe) == 1, (path, got)
    want = sorted([("copy_file_range", w + "/a.bin", src, w + "/src.bin"), ("sendfile", w + "/b.bin", src, w + "/src.bin"),
                   ("splice", pipe[0], src, w + "/src.bin"), ("splice", w + "/b.bin", r, pipe[0])])
    assert got == want, (path, got)
    assert set(c[c["path2"] != ""]["function"].astype(str)) == {"copy_file_range", "sendfile", "splice", "openat",
                                                                  "rename", "renameat", "link"}, path
    files = dc.per_file(c)
    moved = files.loc[("syscall", w + "/src.bin"), "bytes"]
    assert moved == 20000 + 5000 + 7000 + 3000, (path, moved)
    print("ok: %s: the 4 calls with a second file; src.bin's bytes %d" % (path, moved))
PY

# The report counts the source's bytes on it, as the package does: from
# the node files and from the HDF5 file.
"$DC_SUMMARY" second -i "$TMP/out/second" --format json --top 100000 >second.sum.json
"$DC_SUMMARY" second.h5 --format json --top 100000 >second.h5sum.json
"$PY" - second.sum.json second.h5sum.json "$W" <<'PY' || fail "dc-summary's files"
import json, sys
w = sys.argv[3]
for f in sys.argv[1:3]:
    s = json.load(open(f))
    row = [r for r in s["top_files_by_bytes"] if r["level"] == "syscall" and r["path"] == w + "/src.bin"]
    assert len(row) == 1 and row[0]["bytes"] == 35000, (f, row)
    print("ok: dc-summary %s: src.bin's bytes 35000 (written, then copied, sent and spliced from)" % f)
PY

# Perfetto: io.fd2 on each mover's slice and a path2 annotation.
pftrace_decode second.pftrace second.txt || fail "protoc cannot decode the trace"
assert_eq "$(grep -c "fd2: $src\$" second.txt) $(grep -c "fd2: $r\$" second.txt)" "3 1" "Perfetto: io.fd2 on the four movers"
assert_contains second.txt 'name: "path2"' "Perfetto: the path2 annotation's name"
