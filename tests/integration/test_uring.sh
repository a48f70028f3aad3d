#!/usr/bin/env bash
# io_uring requests (the io_uring set): every request of a liburing program,
# each once, with its bytes and its file, charged to the program, also when
# the kernel's SQPOLL thread submits them; a registered file is named as a
# descriptor's. A kernel without the request tracepoints (Linux before 6.0,
# or one made to look so) says so and traces the rest.
. "$(dirname "$0")/lib.sh"

N=4
SIZE=65536
F="$TMP/uring.dat"
data=$((N * SIZE + 100))

# requests JOB: the program's requests, checked; sets PID and TIDS.
requests() {
	assert_eq "$(calls io_uring write "^$F\$")" "$((N + 1)) $data $data" "$1: writes, the last through a registered file"
	assert_eq "$(calls io_uring read "^$F\$")" "$((N + 1)) $data $data" "$1: reads"
	assert_eq "$(calls io_uring readv "^$F\$")" "1 16 16" "$1: a readv of two buffers"
	assert_eq "$(calls io_uring fsync "^$F\$" | cut -d' ' -f1)" "1" "$1: fsync"
	assert_eq "$(calls io_uring statx "^$F\$" | cut -d' ' -f1)" "1" "$1: statx, by the name it was given"
	assert_eq "$(calls io_uring mkdirat "^$TMP/uring\\.d\$" | cut -d' ' -f1) $(calls io_uring renameat "^$TMP/uring\\.d\$" | cut -d' ' -f1) $(calls io_uring unlinkat "^$TMP/uring\\.e\$" | cut -d' ' -f1)" \
		"1 1 1" "$1: mkdirat, renameat and unlinkat by relative names, made absolute in the working directory"
	assert_eq "$(seconds io_uring renameat "^$TMP/uring\\.d\$")" "-1 $TMP/uring.e" "$1: the rename's new name, in the same folder"
	assert_eq "$(seconds io_uring linkat "^$F\$")" "-1 $TMP/uring.s/uring.lnk" \
		"$1: a link's new name, relative to another folder than the old one's"
	assert_eq "$(seconds io_uring renameat "^$TMP/uring\\.s/uring\\.lnk\$")" "-1 $TMP/uring.s/uring.mv" \
		"$1: a rename from an absolute name to one relative to a folder's descriptor"
	assert_eq "$(calls io_uring unlinkat "^$TMP/uring\\.s/uring\\.mv\$" | cut -d' ' -f1)" "1" "$1: unlinkat in that folder"
	assert_eq "$(calls io_uring openat "^$F\$" | cut -d' ' -f1) $(calls io_uring close "^$F\$" | cut -d' ' -f1)" "1 2" \
		"$1: an openat, named by the file it opened, and two closes, by the file each let go of"
	assert_eq "$(grep -c '^event .* level=io_uring ' "$DUMP")" "$((2 * N + 14))" "$1: no other request"
	PID=$(field event pid func io_uring_enter | sort -u)
	assert_eq "$(grep '^event .* level=io_uring ' "$DUMP" | sed 's/.* pid=\([0-9]*\) .*/\1/' | sort -u)" "$PID" \
		"$1: charged to the program"
	TIDS=$(grep '^event .* level=io_uring ' "$DUMP" | sed 's/.* tid=\([0-9]*\) .*/\1/' | sort -u)
}

if ! "$DC_AGENT" --check | grep -Eq "io_uring requests +raw tracepoints"; then
	trace old -p syscalls,io_uring -- "$DC_WORKLOADS/uring_io" "$TMP" "$N" "$SIZE"
	assert_contains "$TMP/old.err" "this kernel has no io_uring request tracepoints" "the kernel's lack, said"
	assert_eq "$(grep -c '^event .* level=io_uring ' "$DUMP" || true)" "0" "no request without the tracepoints"
	assert_eq "$(calls syscall io_uring_enter "" | cut -d' ' -f1 | sed 's/^[1-9][0-9]*$/some/')" "some" \
		"the io_uring system calls, still"
	exit 0
fi

# Another process's rings, outside the job, all the while: none of theirs.
mkdir -p "$TMP/other"
(while "$DC_WORKLOADS/uring_io" "$TMP/other" 2 4096; do :; done) &
bystander=$!
trace ring -p syscalls,io_uring -- sh -c "'$DC_WORKLOADS/uring_io' '$TMP' $N $SIZE && sleep 0.3"
kill -0 "$bystander" 2>/dev/null || fail "the other process's rings did not run all the while"
kill "$bystander" 2>/dev/null || true
wait "$bystander" 2>/dev/null || true
requests ring
assert_eq "$TIDS" "$PID" "submitted by the program's thread"
assert_eq "$(grep -c "^event .* path=$TMP/other/" "$DUMP" || true)" "0" "no request of a process outside the job"
assert_eq "$(lost_events)" "0" "lost events"

# SQPOLL: the kernel's thread submits; it is one of the program's threads.
trace sq -p syscalls,io_uring -- "$DC_WORKLOADS/uring_io" "$TMP" "$N" "$SIZE" sqpoll
requests sq
[ -n "$TIDS" ] && [ "$TIDS" != "$PID" ] || fail "SQPOLL: submitted by the ring's thread, not $PID"
echo "ok: SQPOLL: submitted by thread $TIDS of process $PID"

# Profile mode: the same totals as counters.
trace prof -m profile -p io_uring -- "$DC_WORKLOADS/uring_io" "$TMP" "$N" "$SIZE"
assert_eq "$(grep '^counter .* level=io_uring func=write ' "$DUMP" | tail -1 | sed 's/.* count=\([0-9]*\) .* bytes=\([0-9]*\)$/\1 \2/')" \
	"$((N + 1)) $data" "profile: the writes and their bytes"
# The set alone, so that readv is its first function, function 0.
assert_eq "$(grep '^counter .* level=io_uring func=readv ' "$DUMP" | tail -1 | sed 's/.* count=\([0-9]*\) .* bytes=\([0-9]*\)$/\1 \2/')" \
	"1 16" "profile: the readv, function 0 of the job"

# Forced off in a test build: as a kernel without them.
DC_TEST_FEATURES_OFF=uring_req trace off -p syscalls,io_uring -- "$DC_WORKLOADS/uring_io" "$TMP" "$N" "$SIZE"
assert_contains "$TMP/off.err" "this kernel has no io_uring request tracepoints" "forced off: said"
assert_eq "$(grep -c '^event .* level=io_uring ' "$DUMP" || true)" "0" "forced off: no request"
