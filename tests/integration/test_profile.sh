#!/usr/bin/env bash
# PROFILE mode: in-kernel totals per process and function, no per-call events.
. "$(dirname "$0")/lib.sh"

trace profile --mode profile --interval 0.2 -- "$DC_WORKLOADS/posix_write" "$TMP" 1000 4096

pid=$(field process pid kind start)
# Totals are cumulative: the last snapshot of each (pid, level, function) counts.
final() {
	awk -v pid="$pid" -v l="$1" -v f="$2" '$1 == "counter" && $3 == "pid=" pid && $4 == "level=" l && $5 == "func=" f {
		last = $6 " " $8 } END { print last }' "$DUMP"
}
assert_eq "$(final posix write)" "count=1000 bytes=4096000" "libc write totals"
assert_eq "$(final syscall write)" "" "no write counted twice (libc write is seen at its system call)"
assert_eq "$(final posix open)" "count=1 bytes=0" "libc open totals"
assert_eq "$(grep -c '^event ' "$DUMP" || true)" "0" "per-call events in profile mode"
[ "$(grep -c "^counter .* pid=$pid level=posix func=write " "$DUMP")" -ge 1 ] || fail "no snapshot"

# dc-summary reads the totals: the workload's 1000 writes, not empty tables.
: "${DC_SUMMARY:?set by ctest}"
"$DC_SUMMARY" profile -i "$TMP/out/profile" --format json >"$TMP/prof.json"
assert_eq "$(python3 -c "
import json; d = json.load(open('$TMP/prof.json'))
w = [f for f in d['functions'] if f['level'] == 'posix' and f['function'] == 'write'][0]
print(w['calls'] >= 1000, w['bytes'] >= 4096000, d['profile_calls'] >= 1000)")" "True True True" "dc-summary of a profile-mode job"
assert_contains "$TMP/profile.err" "per-process totals (profile mode) written to" "the agent says what it wrote"

# A process that exits has its final totals written at the next snapshot,
# then its keys leave the kernel's map: no later snapshot names it, and
# each of two short-lived writers ends with its exact totals.
trace exited --mode profile --interval 0.05 -- sh -c "\"$DC_WORKLOADS/posix_write\" \"$TMP\" 100 4096; sleep 0.4;
	\"$DC_WORKLOADS/posix_write\" \"$TMP\" 100 4096; sleep 0.3"
writers=$(awk '$1 == "process" && $3 == "kind=exec" && $NF == "comm=posix_write" { print substr($4, 5) }' "$DUMP")
assert_eq "$(echo "$writers" | wc -l)" 2 "short-lived writers"
for w in $writers; do
	pid=$w
	assert_eq "$(final posix write)" "count=100 bytes=409600" "pid $w's final write totals"
	gone=$(awk -v pid="$w" '$1 == "process" && $3 == "kind=exit" && $4 == "pid=" pid { print substr($2, 4) }' "$DUMP")
	# The snapshot after its exit comes within the interval (0.05 s); the
	# job goes on for 0.3 s or more after each writer.
	late=$(awk -v pid="$w" -v t="$gone" '$1 == "counter" && $3 == "pid=" pid { split($2, a, "="); if (a[2] > t + 200000000) n++ }
		END { print n + 0 }' "$DUMP")
	assert_eq "$late" 0 "snapshots naming pid $w 0.2 s after its exit"
done
