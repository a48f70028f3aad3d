#!/usr/bin/env bash
# The system-call level against an oracle nobody here wrote: strace -ff -y,
# run inside the trace, so that both watch one run and strace prints the
# kernel's path of every descriptor and dirfd. Real programs that reach
# their files through dup2 (dd of=), shell redirections (exec 1>, a closed
# number taken again, a subshell's inherited fd), relative names after cd,
# tar's folders, a dirfd and os.dup (python3), sqlite3's journal, the
# metadata calls of coreutils and python3, and data moved by cp
# (copy_file_range), shutil.copyfile (sendfile) and os.splice, rsync (a
# sender and a receiver, temporary files renamed), numpy's save and load,
# a program writing through a file mapping, git, gcc and eight threads
# writing at once: every
# read, write, open, close, stat and the rest of the syscalls set on a file
# of the run's folder or a pipe is in the trace once, on the same thread,
# with the same absolute path and result, and the trace has none that
# strace did not see.
. "$(dirname "$0")/lib.sh"

for tool in strace sqlite3 tar dd fallocate flock rsync git gcc /usr/bin/python3; do
	command -v "$tool" >/dev/null || fail "$tool is needed (scripts/install-deps.sh installs it)"
done
W="$TMP/w"
mkdir -p "$W"
cat >"$TMP/run.sh" <<'SH'
set -e
cd "$1"
mkdir -p sub tree/d1 tree/d2 untar
for i in 1 2 3; do echo "file $i" >tree/d1/f$i.txt; echo "other $i" >tree/d2/f$i.txt; done
dd if=/dev/zero of=out.bin bs=4k count=8 status=none
bash -c 'exec 3>b.txt; echo hi >&3; exec 1>c.txt; echo there; exec 3>&-; exec 3>d.txt; (echo child >&3)'
(cd sub && cat ../c.txt >copy.txt && cat copy.txt ../b.txt | cat >/dev/null && echo relative >rel.txt)
tar -C tree -cf t.tar . && tar -C untar -xf t.tar
rsync -a tree/ synced/
"$2/mmap_io" . 16 >/dev/null
/usr/bin/python3 - <<'PY'
import os
d = os.open("sub", os.O_RDONLY)
f = os.open("py.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)
g = os.dup(f)
os.write(g, b"through a dup\n")
os.pwritev(f, [b"ab", b"cd"], 100)
os.close(f)
os.write(g, b"after the first is closed\n")
os.stat("py.txt", dir_fd=d)
os.close(g)
PY
/usr/bin/python3 -c 'import numpy as np; np.save("a.npy", np.arange(1000.0)); assert np.load("a.npy").sum() == 499500'
sqlite3 db.sqlite 'create table t(a); insert into t values(1); insert into t values(2);'
sqlite3 db.sqlite 'select count(*) from t;' >/dev/null
# Metadata calls, and data moved from one descriptor to another.
mkdir gone && rmdir gone
ln out.bin hard.bin && ln -s out.bin soft.bin && readlink soft.bin >/dev/null
chmod 600 b.txt && touch -c b.txt && truncate -s 10 b.txt && fallocate -l 8192 fal.bin
stat -f . >/dev/null && flock b.txt true && test -r b.txt
cp out.bin cp.bin && mv cp.bin moved.bin
/usr/bin/python3 - <<'PY'
import os, shutil
shutil.copyfile("out.bin", "sendfile.bin")
src = os.open("out.bin", os.O_RDONLY)
dst = os.open("range.bin", os.O_WRONLY | os.O_CREAT, 0o644)
os.copy_file_range(src, dst, 5000)
os.preadv(src, [bytearray(100000), bytearray(50000)], 0)
os.lseek(src, 0, os.SEEK_SET)
os.readv(src, [bytearray(10), bytearray(6)])
r, w = os.pipe()
os.splice(src, w, 3000)
os.splice(r, dst, 3000)
hi = os.dup2(dst, 40)
os.fchmod(hi, 0o600)
os.fstatvfs(hi)
os.setxattr("range.bin", "user.dc", b"v")
os.getxattr("range.bin", "user.dc")
os.removexattr("range.bin", "user.dc")
os.utime(hi)
os.access("range.bin", os.R_OK)
os.truncate("range.bin", 100)
os.chown("range.bin", os.getuid(), os.getgid())
os.link("range.bin", "range.link")
os.symlink("range.bin", "range.sym")
os.readlink("range.sym")
os.chdir("sub")
os.stat("../range.sym")
for fd in (src, dst, hi, r, w):
    os.close(fd)
PY
# git (its object store: many small files, renames, fsync) and gcc (its
# temporary files and the linker), but in an emulated guest of the kernel
# matrix, where they take minutes; and eight threads appending to files.
if [ -z "${DC_EMULATED_GUEST:-}" ]; then
	mkdir repo && cd repo && git init -q && echo one >a.txt && git add a.txt
	git -c user.name=t -c user.email=t@t commit -qm one && echo two >>a.txt && git -c user.name=t -c user.email=t@t commit -qam two
	cd .. && printf 'int main(void) { return 0; }\n' >prog.c && TMPDIR=$PWD gcc -o prog prog.c
fi
/usr/bin/python3 - <<'PY'
import os, threading
def writer(i):
    fd = os.open("thread%d.txt" % i, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for _ in range(50):
        os.write(fd, b"x" * (i + 1))
    os.close(fd)
ts = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
PY
SH
trace oracle -p syscalls -- strace -ff -y -qq -s 0 -o "$TMP/st" -- bash "$TMP/run.sh" "$W" "$DC_WORKLOADS"
/usr/bin/python3 "$DC_SRC/tests/tools/strace_oracle.py" "$TMP/st" "$DUMP" "$W" >"$TMP/oracle.txt" || {
	cat "$TMP/oracle.txt" >&2
	fail "the trace differs from strace's view"
}
cat "$TMP/oracle.txt"
# What the oracle compared must include the cases above, not only opens.
for f in "$W/out.bin" "$W/c.txt" "$W/d.txt" "$W/sub/py.txt" "$W/sub/rel.txt" "$W/untar/d1/f2.txt"; do
	n=$(calls syscall write "^$f\$" | cut -d' ' -f1)
	[ "$n" -gt 0 ] || fail "no write on $f in the trace"
done
assert_eq "$(calls syscall write "^$W/out.bin\$")" "8 32768 32768" "dd's writes through its dup2'd stdout"
assert_eq "$(calls syscall write "^$W/sub/py.txt\$")" "2 40 40" "python's writes through os.dup"
assert_eq "$(calls syscall pwritev2 "^$W/sub/py.txt\$")" "1 4 4" "python's pwritev (glibc's, through pwritev2): the bytes its two buffers ask, and moved"
assert_eq "$(calls syscall write "^$W/d.txt\$")" "1 6 6" "a subshell's write on an fd number closed and taken again"
assert_eq "$(calls syscall write "^$W/b.txt\$")" "1 3 3" "the write on b.txt before fd 3 was closed"
assert_eq "$(calls syscall copy_file_range "^$W/range.bin\$" | cut -d' ' -f1,3)" "1 5000" \
	"os.copy_file_range, on the file written"
assert_eq "$(calls syscall preadv2 "^$W/out.bin\$")" "1 150000 32768" "a preadv past the end: asked, and moved"
assert_eq "$(calls syscall readv "^$W/out.bin\$")" "1 16 16" "a readv of two buffers"
assert_eq "$(calls syscall sendfile "^$W/sendfile.bin\$" | cut -d' ' -f3)" "32768" "shutil.copyfile's sendfile"
assert_eq "$(calls syscall splice "^$W/range.bin\$" | cut -d' ' -f1,3)" "1 3000" "a splice from a pipe"
assert_eq "$(calls syscall mmap "^$W/shared\\.dat\$" | cut -d' ' -f1) $(calls syscall mmap "^$W/private\\.dat\$" | cut -d' ' -f1)" \
	"3 1" "the mappings of the files a program wrote and read through"
# rsync's receiver writes each file under a temporary name and renames it.
assert_eq "$(seconds syscall renameat "^$W/synced/d[12]/\\.f[123]\\.txt\\.[A-Za-z0-9]*\$" | cut -d' ' -f2 | sort | tr '\n' ' ')" \
	"$(for d in 1 2; do for i in 1 2 3; do printf '%s ' "$W/synced/d$d/f$i.txt"; done; done)" \
	"rsync's renames, each to its file's name"
# The file each mover's data came from, its second file.
assert_eq "$(seconds syscall copy_file_range "^$W/range.bin\$" | cut -d' ' -f2)" "$W/out.bin" \
	"copy_file_range's source"
assert_eq "$(seconds syscall sendfile "^$W/sendfile.bin\$" | cut -d' ' -f2 | sort -u)" "$W/out.bin" \
	"shutil.copyfile's source"
pipe=$(seconds syscall splice "^$W/range.bin\$" | cut -d' ' -f2)
[[ "$pipe" =~ ^pipe:\[[0-9]+\]$ ]] || fail "the splice into range.bin came from a pipe, not '$pipe'"
assert_eq "$(seconds syscall splice "^${pipe//[][]/\\&}\$" | cut -d' ' -f2)" "$W/out.bin" \
	"the splice into that pipe, from out.bin"
assert_eq "$(calls syscall fchmod "^$W/range.bin\$" | cut -d' ' -f1)" "1" "fchmod on an fd made by dup2"
assert_eq "$(calls syscall rmdir "^$W/gone\$" | cut -d' ' -f1)" "1" "rmdir"
assert_eq "$(calls syscall setxattr "^$W/range.bin\$" | cut -d' ' -f1)" "1" "setxattr"
for i in 0 7; do
	assert_eq "$(calls syscall write "^$W/thread$i\\.txt\$")" "50 $((50 * (i + 1))) $((50 * (i + 1)))" \
		"thread $i's 50 writes of $((i + 1)) bytes, on its own file"
done
[ -n "${DC_EMULATED_GUEST:-}" ] ||
	assert_eq "$(calls syscall write "^$W/prog\$" | cut -d' ' -f1 | sed 's/^[1-9][0-9]*$/some/')" "some" "the linker's writes of prog"
assert_eq "$(lost_events)" "0" "lost events"

# The same calls at the libc level: glibc's thin wrappers, each seen at its
# system call under its libc name.
mkdir -p "$TMP/p"
trace oracle_posix -p posix -- /usr/bin/python3 - "$TMP/p" <<'PY'
import os, sys
os.chdir(sys.argv[1])
src = os.open("src.bin", os.O_RDWR | os.O_CREAT, 0o644)
os.write(src, b"x" * 6000)
dst = os.open("dst.bin", os.O_WRONLY | os.O_CREAT, 0o644)
os.copy_file_range(src, dst, 5000, 0)
os.fchmod(os.dup2(dst, 50), 0o600)
os.mkdir("d")
os.rmdir("d")
os.symlink("dst.bin", "ln")
os.truncate("dst.bin", 10)
PY
assert_eq "$(calls posix copy_file_range "^$TMP/p/dst.bin\$")" "1 5000 5000" "libc's copy_file_range"
assert_eq "$(seconds posix copy_file_range "^$TMP/p/dst.bin\$" | cut -d' ' -f2)" "$TMP/p/src.bin" \
	"libc's copy_file_range's source"
assert_eq "$(calls posix fchmod "^$TMP/p/dst.bin\$" | cut -d' ' -f1)" "1" "libc's fchmod on a dup2'd fd"
assert_eq "$(calls posix dup2 "^$TMP/p/dst.bin\$" | cut -d' ' -f1)" "1" "libc's dup2"
assert_eq "$(calls posix rmdir "^$TMP/p/d\$" | cut -d' ' -f1)" "1" "libc's rmdir"
assert_eq "$(calls posix symlink "^$TMP/p/ln\$" | cut -d' ' -f1)" "1" "libc's symlink"
assert_eq "$(calls posix truncate "^$TMP/p/dst.bin\$" | cut -d' ' -f1)" "1" "libc's truncate"
