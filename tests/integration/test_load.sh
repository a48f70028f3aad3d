#!/usr/bin/env bash
# Load: every event is in the node file or counted as lost, matching the
# workload's own count exactly; maps are freed as processes and threads end;
# the agent's memory stays bounded.
. "$(dirname "$0")/lib.sh"
: "${DC_MEASURE:?set by ctest}"

set=$(write_only_set)
mkdir -p "$TMP/s"
start=$(date +%s.%N)
"$DC_MEASURE" "$DC_AGENT" -o "$TMP/out" -j stress -p "$set" -- \
	"$DC_WORKLOADS/stress" "$TMP/s" 4 8 5 2000 >"$TMP/stress.out" 2>"$TMP/stress.err"
end=$(date +%s.%N)
NODEFILE=$(ls "$TMP/out/stress"/*.dcnode)
DUMP=$TMP/stress.dump
"$DC_DUMP" "$NODEFILE" >"$DUMP"
made=$(sed -n 's/^writes=\([0-9]*\) .*/\1/p' "$TMP/stress.out")
seen=$(grep -cE "^event .* func=write .* path=$TMP/s/(s_[0-9]+_[0-9]+|c_[0-9]+)\\.dat\$" "$DUMP" || true)
lost=$(lost_events)
# Lost counts records of every kind (opens and exits as well), so a write
# missing from the file is one of them: at most as many missing as lost.
assert_eq "$((seen <= made && made - seen <= lost))" "1" \
	"every write the workload made is in the file or among the lost records: $seen in the file, $lost lost, $made made"
assert_eq "$lost" "0" "lost events on one node at this rate"
assert_eq "$(grep -c '^process .*kind=exit' "$DUMP")" "2005" "process exits (stress, 4 writers, 2000 children)"
peak_kib=$(tail -1 "$TMP/stress.err" | cut -d' ' -f2)
awk -v s="$seen" -v l="$lost" -v a="$start" -v b="$end" -v m="$peak_kib" 'BEGIN {
	printf "ok: %d events, %.0f events/s, %.1f lost/s, agent peak RSS %.1f MiB\n", s, s / (b - a), l / (b - a), m / 1024 }'
# The 16 MiB ring buffer is mapped twice into the agent: 32 MiB of it.
[ "$peak_kib" -lt $((80 * 1024)) ] || fail "agent peak RSS ${peak_kib} KiB"

# 50,000 threads over a process's life, then 20,000 files: nothing
# overflows, and no process is left tracked. (A thread's call stack and
# system call frame are task storage, which the kernel frees with it.)
"$DC_AGENT" -o "$TMP/out" -j churn -p "$set" --match-env DC_TEST_CHURN=1 --ready-file "$TMP/ready" 2>"$TMP/churn.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
mkdir -p "$TMP/c" "$TMP/f"
DC_TEST_CHURN=1 "$DC_WORKLOADS/threads_churn" "$TMP/c" 50000
DC_TEST_CHURN=1 "$DC_WORKLOADS/many_files" "$TMP/f" 20000
sleep 0.3
assert_eq "$(map_entries dc_tracked "$agent")" "0" "tracked processes left after they exited"
kill -TERM "$agent"
wait "$agent"
NODEFILE=$(ls "$TMP/out/churn"/*.dcnode)
DUMP=$TMP/churn.dump
"$DC_DUMP" "$NODEFILE" >"$DUMP"
assert_eq "$(calls posix write "^$TMP/c/churn\\.dat\$")" "50000 400000 400000" "one write from each of 50,000 threads"
# (The kernel recycles thread ids: 50,000 threads need not have 50,000 tids.)
assert_eq "$(calls posix write "^$TMP/f/f_[0-9]+\$")" "20000 80000 80000" "a write to each of 20,000 files"
assert_eq "$(grep -E "^event .* func=write .* path=$TMP/f/f_[0-9]+\$" "$DUMP" | sed 's/.* path=//' | sort -u | wc -l | tr -d ' ')" "20000" "distinct file paths carried from open to write"
assert_eq "$(awk '$1 == "stats" { print $4, $5 }' "$DUMP" | sort -u)" "too_deep=0 map_full=0" "no map overflowed"
assert_eq "$(lost_events)" "0" "lost events"
