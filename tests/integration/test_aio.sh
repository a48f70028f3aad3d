#!/usr/bin/env bash
# Linux AIO requests (the aio set): every request of a program, each once,
# from its io_submit to the io_getevents or io_pgetevents that reaped it,
# with its bytes, offset and file, charged to the program; none of another
# process's. A kernel without bpf_loop (before 5.17, or one made to look
# so) says so and traces the system calls.
. "$(dirname "$0")/lib.sh"

N=4
SIZE=65536
F="$TMP/aio.dat"

if ! "$DC_AGENT" --check | grep -Eq "AIO requests +the io_submit"; then
	trace old -p syscalls,aio -- "$DC_WORKLOADS/aio_io" "$TMP" "$N" "$SIZE"
	assert_contains "$TMP/old.err" "cannot walk a system call's AIO requests" "the kernel's lack, said"
	assert_eq "$(grep -c '^event .* level=aio ' "$DUMP" || true)" "0" "no request without bpf_loop"
	assert_eq "$(calls syscall io_submit "" | cut -d' ' -f1)" "3" "the AIO system calls, still"
	exit 0
fi

# Another process's requests, outside the job, all the while: none of theirs.
mkdir -p "$TMP/other"
(while "$DC_WORKLOADS/aio_io" "$TMP/other" 2 4096; do :; done) &
bystander=$!
trace aio -p aio -- sh -c "'$DC_WORKLOADS/aio_io' '$TMP' $N $SIZE && sleep 0.3"
kill -0 "$bystander" 2>/dev/null || fail "the other process's requests did not run all the while"
kill "$bystander" 2>/dev/null || true
wait "$bystander" 2>/dev/null || true
assert_eq "$(calls aio pwrite "^$F\$")" "$N $((N * SIZE)) $((N * SIZE))" "writes, submitted in one io_submit"
assert_eq "$(calls aio pread "^$F\$")" "$N $((N * SIZE)) $((N * SIZE))" "reads, reaped with io_pgetevents"
assert_eq "$(calls aio pwritev "^$F\$") / $(calls aio fsync "^$TMP/aio2\\.dat\$") / $(calls aio fdsync "^$TMP/aio3\\.dat\$")" \
	"1 16 16 / 1 0 0 / 1 0 0" "a pwritev of two buffers, an fsync and an fdsync, on two files new in one call"
assert_eq "$(grep -c '^event .* level=aio ' "$DUMP")" "$((2 * N + 3))" "no other request"
offs=$(grep "^event .* level=aio func=pwrite " "$DUMP" | sed 's/.* offset=\([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')
assert_eq "$offs" "$(for i in $(seq 0 $((N - 1))); do printf '%d ' $((i * SIZE)); done)" "each write at its offset"
# The aio set records the system calls that carry the requests too.
assert_eq "$(calls syscall io_submit "" | cut -d' ' -f1) $(calls syscall io_getevents "" | cut -d' ' -f1) $(calls syscall io_pgetevents "" | cut -d' ' -f1)" \
	"3 3 1" "io_submit, io_getevents, io_pgetevents"
PID=$(field event pid func io_submit | sort -u)
assert_eq "$(grep '^event .* level=aio ' "$DUMP" | sed 's/.* pid=\([0-9]*\) .*/\1/' | sort -u)" "$PID" "charged to the program"
assert_eq "$(grep -c "^event .* path=$TMP/other/" "$DUMP" || true)" "0" "no request of a process outside the job"
# From its io_submit's start to the return of the io_getevents that reaped
# it (taken just after the call's own end, before the next io_submit).
awk '$1 == "event" {
	delete kv
	for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	if (kv["func"] == "io_submit") { if (!s) s = kv["ts"]; else if (!s2) s2 = kv["ts"] }
	if (kv["func"] == "io_getevents" && !r) r = kv["ts"] + kv["dur"]
	if (kv["level"] == "aio" && kv["func"] == "pwrite") { w++; b[w] = kv["ts"]; e[w] = kv["ts"] + kv["dur"] }
} END {
	for (i = 1; i <= w; i++)
		if (b[i] != s || e[i] < r || e[i] > s2) { bad++; print "write " i ": " b[i] "-" e[i] ", io_submit " s ", reaped by " r ", next io_submit " s2 }
	exit bad
}' "$DUMP" ||
	fail "a write does not last from the start of its io_submit to its reaping"
echo "ok: each write from its io_submit's start to its reaping"
assert_eq "$(lost_events)" "0" "lost events"

# With the syscalls set beside it, in either order: each call once.
trace both -p aio,syscalls -- "$DC_WORKLOADS/aio_io" "$TMP" "$N" "$SIZE"
assert_eq "$(calls aio pwrite "^$F\$" | cut -d' ' -f1) $(calls syscall io_submit "" | cut -d' ' -f1)" "$N 3" \
	"aio before syscalls: the requests, and each io_submit once"
trace both2 -p syscalls,aio -- "$DC_WORKLOADS/aio_io" "$TMP" "$N" "$SIZE"
assert_eq "$(calls aio pwrite "^$F\$" | cut -d' ' -f1) $(calls syscall io_submit "" | cut -d' ' -f1)" "$N 3" \
	"syscalls before aio: the same"

# Profile mode: the same totals as counters.
trace prof -m profile -p aio -- "$DC_WORKLOADS/aio_io" "$TMP" "$N" "$SIZE"
assert_eq "$(grep '^counter .* level=aio func=pread ' "$DUMP" | tail -1 | sed 's/.* count=\([0-9]*\) .* bytes=\([0-9]*\)$/\1 \2/')" \
	"$N $((N * SIZE))" "profile: the reads and their bytes"

# Forced off in a test build: as a kernel without bpf_loop.
DC_TEST_FEATURES_OFF=bpf_loop trace off -p syscalls,aio -- "$DC_WORKLOADS/aio_io" "$TMP" "$N" "$SIZE"
assert_contains "$TMP/off.err" "cannot walk a system call's AIO requests" "forced off: said"
assert_eq "$(grep -c '^event .* level=aio ' "$DUMP" || true)" "0" "forced off: no request"
