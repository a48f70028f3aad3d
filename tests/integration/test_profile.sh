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
