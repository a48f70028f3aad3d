#!/usr/bin/env bash
# Kernel function sets (vfs, ext4): each call of the job's threads, nested
# under the system call that made it, in trace and profile mode. On a kernel
# with none of kprobe_multi, fentry or kprobes (this suite's own machine) the
# sets are refused with one line each and the rest of the trace goes on.
# The kernel matrix (tests/kernels) runs it on kernels that have them, with
# DC_EXPECT_KFUNCS naming the mechanism the agent must use there, and TMPDIR
# on an ext4 file system.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/traced" "$TMP/other"
"$DC_AGENT" --check >"$TMP/check.txt"
kline=$(grep '^  kernel functions' "$TMP/check.txt")
if [ -z "${DC_EXPECT_KFUNCS:-}" ] && echo "$kline" | grep -q "not available"; then
	trace refused -p posix,vfs,ext4 -- "$DC_WORKLOADS/posix_write" "$TMP/traced" 100 4096
	assert_eq "$(grep -c "probe set 'vfs' refused: this kernel (.*) can trace no kernel function" "$TMP/refused.err")" "1" "vfs refused with one line"
	assert_eq "$(grep -c "probe set 'ext4' refused" "$TMP/refused.err")" "1" "ext4 refused with one line"
	assert_eq "$(calls posix write "^$TMP/traced/posix_write\\.dat\$")" "100 409600 409600" "the rest of the trace goes on"
	exit 0
fi
case "$kline" in *"${DC_EXPECT_KFUNCS:-}"*) ;; *) fail "kernel functions: expected '$DC_EXPECT_KFUNCS', --check says: $kline" ;; esac
echo "ok: --check: $kline"
[ "$(stat -f -c %T "$TMP")" = "ext2/ext3" ] || fail "TMPDIR must be on ext4 for the ext4 set (it is $(stat -f -c %T "$TMP"))"

"$DC_WORKLOADS/posix_write" "$TMP/other" 200000 64 &
other=$!
trace kf -v -p posix,syscalls,vfs,ext4 -- "$DC_WORKLOADS/posix_write" "$TMP/traced" 100 4096
kill "$other" 2>/dev/null || true
wait "$other" 2>/dev/null || true
if [ -n "${DC_EXPECT_KFUNCS:-}" ]; then
	assert_contains "$TMP/kf.err" "probe set 'vfs': 10 kernel functions with" "vfs: every function attached"
	grep "kernel functions with" "$TMP/kf.err"
fi
assert_eq "$(field function observed name vfs_write)" "kfunc" "vfs_write observed as a kernel function"
pid=$(field process pid kind start)

# Each libc write of the data file (seen at its system call) holds exactly
# one vfs_write of 4096 bytes, which holds one ext4_file_write_iter, which
# holds the page's ext4_da_write_begin: the levels nest by time per thread.
nest() { # FUNC: "calls inside the data file's writes, bytes, depths"
	grep -E "^event " "$DUMP" | awk -v pid="$pid" -v f="$1" -v data="$TMP/traced/posix_write.dat" '
	{ delete kv; for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	  if (kv["pid"] != pid) next
	  p = $0; sub(/.* path=/, "", p)
	  printf "%.0f %.0f %s %s %s %s %s\n", kv["ts"], kv["ts"] + kv["dur"], kv["tid"], kv["func"], kv["bytes"], kv["depth"], (p == data ? "data" : "-") }' |
	sort -n -k1,1 -k2,2r | awk -v f="$1" '
	$4 == "write" && $7 == "data" { end[$3] = $2; n[$3] = 0; next }
	$4 == f { if ($2 <= end[$3]) { in_++; bytes += $5; depth[$6] = 1 } }
	END { d = ""; for (k in depth) d = d k; printf "%d %d %s\n", in_, bytes, d }'
}
assert_eq "$(nest vfs_write)" "100 409600 0" "vfs_write inside each write (calls, bytes, kernel depth)"
assert_eq "$(nest ext4_file_write_iter)" "100 409600 1" "ext4_file_write_iter inside each vfs_write"
assert_eq "$(nest ext4_da_write_begin | cut -d' ' -f1)" "100" "ext4_da_write_begin, one per page written"
assert_eq "$(grep -E "^event .* level=(vfs|ext4) " "$DUMP" | grep -c " pid=$other " || true)" "0" "kernel functions of the untraced process"
assert_eq "$(grep -E "^event .* level=(vfs|ext4) " "$DUMP" | grep -vc " pid=$pid " || true)" "0" "kernel functions of any other process"
assert_eq "$(lost_events)" "0" "lost events"

# Profile mode: totals per (process, function) in the kernel.
trace kprof --mode profile -p posix,vfs,ext4 -- "$DC_WORKLOADS/posix_write" "$TMP/traced" 100 4096
pid=$(field process pid kind start)
final() {
	awk -v pid="$pid" -v l="$1" -v f="$2" '$1 == "counter" && $3 == "pid=" pid && $4 == "level=" l && $5 == "func=" f {
		last = $6 } END { print last }' "$DUMP"
}
assert_eq "$(final ext4 ext4_da_write_begin)" "count=100" "profile: ext4_da_write_begin totals"
assert_eq "$(final ext4 ext4_file_write_iter)" "count=100" "profile: ext4_file_write_iter totals"
n=$(final vfs vfs_write | sed 's/count=//')
[ "${n:-0}" -ge 100 ] || fail "profile: vfs_write count $n, expected at least the job's 100 writes"
echo "ok: profile: vfs_write count=$n (the job's 100 writes and its other output)"
