#!/usr/bin/env bash
# The system-call level against an oracle nobody here wrote: strace -ff -y,
# run inside the trace, so that both watch one run and strace prints the
# kernel's path of every descriptor and dirfd. Real programs that reach
# their files through dup2 (dd of=), shell redirections (exec 1>, a closed
# number taken again, a subshell's inherited fd), relative names after cd,
# tar's folders, a dirfd and os.dup (python3), and sqlite3's journal: every
# read, write, open, close, stat and the rest of the syscalls set on a file
# of the run's folder or a pipe is in the trace once, on the same thread,
# with the same absolute path and result, and the trace has none that
# strace did not see.
. "$(dirname "$0")/lib.sh"

for tool in strace sqlite3 tar dd /usr/bin/python3; do
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
sqlite3 db.sqlite 'create table t(a); insert into t values(1); insert into t values(2);'
sqlite3 db.sqlite 'select count(*) from t;' >/dev/null
SH
trace oracle -p syscalls -- strace -ff -y -qq -s 0 -o "$TMP/st" -- bash "$TMP/run.sh" "$W"
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
assert_eq "$(calls syscall pwritev2 "^$W/sub/py.txt\$" | cut -d' ' -f1,3)" "1 4" "python's pwritev (glibc's, through pwritev2)"
assert_eq "$(calls syscall write "^$W/d.txt\$")" "1 6 6" "a subshell's write on an fd number closed and taken again"
assert_eq "$(calls syscall write "^$W/b.txt\$")" "1 3 3" "the write on b.txt before fd 3 was closed"
assert_eq "$(lost_events)" "0" "lost events"
