#!/usr/bin/env bash
# I/O through file mappings (the mmap set): each fault a program takes on a
# file it mapped shared is one event on that file, as many as the kernel
# itself counted for the program (getrusage, printed by the workload),
# stores and the kernel's stores for read(2) as mmap_write, loads as
# mmap_read; private mappings and libraries none. A kernel without the
# means (before 5.17, or one made to look so) says so and traces the rest.
. "$(dirname "$0")/lib.sh"

PAGES=64
F="$TMP/shared.dat"

if ! "$DC_AGENT" --check | grep -Eq "file mappings +raw tracepoints"; then
	trace old -p syscalls,mmap -- "$DC_WORKLOADS/mmap_io" "$TMP" "$PAGES"
	assert_contains "$TMP/old.err" "cannot name the file behind a page fault" "the kernel's lack, said"
	assert_eq "$(grep -c '^event .* level=mmap ' "$DUMP" || true)" "0" "no fault without the means"
	assert_eq "$(calls syscall msync "" | cut -d' ' -f1)" "1" "the system calls, still"
	exit 0
fi

# Another process's mappings, outside the job, all the while: none of theirs.
mkdir -p "$TMP/other"
(while "$DC_WORKLOADS/mmap_io" "$TMP/other" 8 >/dev/null; do :; done) &
bystander=$!
trace map -p syscalls,mmap -- sh -c "'$DC_WORKLOADS/mmap_io' '$TMP' $PAGES >'$TMP/counts' && sleep 0.3"
kill -0 "$bystander" 2>/dev/null || fail "the other process's mappings did not run all the while"
kill "$bystander" 2>/dev/null || true
wait "$bystander" 2>/dev/null || true
count() { sed -n "s/^$1 //p" "$TMP/counts"; }
stores=$(count stores) loads=$(count loads) kernel=$(count kernel)
echo "the kernel counted: $stores stores, $loads loads, $kernel faults for read(2)"
[ "$stores" -ge 1 ] && [ "$stores" -le "$PAGES" ] && [ "$kernel" -ge 1 ] && [ "$loads" -ge 1 ] ||
	fail "the workload's own counts: $(cat "$TMP/counts")"

writes=$((stores + kernel))
assert_eq "$(calls mmap mmap_write "^$F\$")" "$writes $((writes * 4096)) $((writes * 4096))" \
	"stores, and the kernel's for read(2): each fault a page of the file"
assert_eq "$(calls mmap mmap_read "^$F\$")" "$loads $((loads * 4096)) $((loads * 4096))" "loads"
PID=$(field event pid func msync | sort -u)
assert_eq "$(grep -c "^event .* pid=$PID .* level=mmap " "$DUMP")" "$((writes + loads))" \
	"no other fault of the program's (its private mapping, its libraries)"
assert_eq "$(grep -Ec '^event .* level=mmap .* path=.*(private\.dat|\.so[.0-9]*)$' "$DUMP" || true)" "0" \
	"no fault on a private mapping or a library, of any process of the job"
# The stores' pages, in order: each a page of the file, the first at 0.
offs=$(grep "^event .* func=mmap_write .* path=$F\$" "$DUMP" | sed 's/.* offset=\([0-9]*\) .*/\1/' | awk -v n="$stores" 'NR <= n')
assert_eq "$(echo "$offs" | head -1)" "0" "the first store's page"
assert_eq "$(echo "$offs" | awk -v n="$PAGES" '$1 % 4096 || $1 >= n * 4096' | wc -l)" "0" "each store's offset a page of the file"
assert_eq "$(echo "$offs" | sort -u | wc -l)" "$stores" "each store a page of its own"
assert_eq "$(grep "^event .* level=mmap .* path=$F\$" "$DUMP" | sed 's/.* pid=\([0-9]*\) .*/\1/' | sort -u)" "$PID" \
	"charged to the program"
assert_eq "$(grep -c "^event .* path=$TMP/other/" "$DUMP" || true)" "0" "no fault of a process outside the job"
assert_eq "$(lost_events)" "0" "lost events"
"$DC_SUMMARY" "$TMP/out/map" >"$TMP/summary.txt"
grep -q "^mmap  *mmap_write  *$writes  *$((writes * 4096)) " "$TMP/summary.txt" ||
	{ cat "$TMP/summary.txt"; fail "dc-summary: the stores' bytes"; }
echo "ok: dc-summary counts the stores' bytes"

# Profile mode: the same as counters.
trace prof -m profile -p mmap -- "$DC_WORKLOADS/mmap_io" "$TMP" "$PAGES" >"$TMP/counts"
writes=$(($(count stores) + $(count kernel)))
assert_eq "$(grep '^counter .* level=mmap func=mmap_write ' "$DUMP" | tail -1 | sed 's/.* count=\([0-9]*\) .* bytes=\([0-9]*\)$/\1 \2/')" \
	"$writes $((writes * 4096))" "profile: the stores and their bytes"

# Forced off in a test build: as a kernel without the means.
DC_TEST_FEATURES_OFF=mmap_faults trace off -p syscalls,mmap -- "$DC_WORKLOADS/mmap_io" "$TMP" "$PAGES" >/dev/null
assert_contains "$TMP/off.err" "cannot name the file behind a page fault" "forced off: said"
assert_eq "$(grep -c '^event .* level=mmap ' "$DUMP" || true)" "0" "forced off: no fault"
