#!/usr/bin/env bash
# dc-merge on real agent runs: the JSON and the HDF5 file hold exactly the
# calls the workloads made, in time order, with every process named.
. "$(dirname "$0")/lib.sh"

trace merge -- sh -c "'$DC_WORKLOADS/posix_write' '$TMP' 1000 4096 && '$DC_WORKLOADS/fork_tree' '$TMP' 3"

# The job's folder, as the agent's last line names it: the output beside
# the node files.
J=$TMP/out/merge
assert_contains "$TMP/merge.err" "dc-agent: next: dc-summary $J " "the agent names the next step"
cd "$TMP"
"$DC_MERGE" "$J" 2>"$TMP/merge.err"
cd "$J"
assert_contains "$TMP/merge.err" "dc-merge: job merge: 1 node" "summary line"
assert_contains "$TMP/merge.err" "$J/merge.json" "summary line names the output"
[ -s merge.json ] || fail "no merge.json beside the node files"
[ "$(stat -c %a merge.json)" = 600 ] || fail "merge.json is not private: $(stat -c %a merge.json)"
ls "$J" | grep -q '\.tmp\.' && fail "temporary file left behind"
# A node file names its job as well; a job id with -i as before.
"$DC_MERGE" "$NODEFILE" -o "$TMP/byfile.json" -q
diff <(python3 "$DC_TOOLS/trace_summary.py" merge.json) <(python3 "$DC_TOOLS/trace_summary.py" "$TMP/byfile.json") ||
	fail "merged from a node file: not the same calls"
echo "ok: a node file names its job"
# With -i, the argument is the id, whatever folder has its name.
mkdir -p "$TMP/merge" && (cd "$TMP" && "$DC_MERGE" merge -i "$J" -o "$TMP/byid.json" -q)
[ -s "$TMP/byid.json" ] || fail "a job id that is also a folder's name, with -i"
echo "ok: with -i, the argument is the job id"

python3 "$DC_TOOLS/trace_summary.py" merge.json >json.txt
line() { grep "^$1 $2 " json.txt | cut -d' ' -f3-; }
# posix_write's 1000 writes; one write per fork_tree child and grandchild.
assert_eq "$(line posix write)" "1004 4102777 4102777" "libc writes in the merged JSON"
assert_eq "$(line syscall write)" "" "no write reported twice (libc write is seen at its system call)"
n_dump=$(grep -c '^event ' "$DUMP")
n_json=$(awk '{s += $3} END {print s}' json.txt)
assert_eq "$n_json" "$n_dump" "every event of the node file is in the JSON"

# Processes: the shell, posix_write, fork_tree and its 3 children and grandchild.
python3 "$DC_TOOLS/trace_summary.py" merge.json --processes >procs.txt
assert_eq "$(wc -l <procs.txt | tr -d ' ')" "7" "named processes"
assert_eq "$(grep -c '^fork_tree (' procs.txt)" "5" "fork_tree processes named COMMAND (host:pid)"

# HDF5 holds the same events, read back with the HDF5 library.
"$DC_MERGE" merge -i "$TMP/out/merge" -f hdf5 -q
"$DC_H5SUMMARY" merge.h5 >h5.txt
diff json.txt h5.txt || fail "HDF5 and JSON disagree"
echo "ok: HDF5 per-function totals equal the JSON's"
h5ls merge.h5 >h5ls.txt
assert_contains h5ls.txt "processes" "processes table"
assert_contains h5ls.txt "nodes" "nodes table"

# json.gz is the same trace.
"$DC_MERGE" merge -i "$TMP/out/merge" -f json.gz -q
python3 "$DC_TOOLS/trace_summary.py" merge.json.gz | diff json.txt - || fail "json.gz differs"
echo "ok: json.gz holds the same trace"

# A time window keeps fewer calls; the full window keeps them all.
"$DC_MERGE" merge -i "$TMP/out/merge" -o all.json -t 0: -q
python3 "$DC_TOOLS/trace_summary.py" all.json | diff json.txt - || fail "-t 0: dropped calls"
"$DC_MERGE" merge -i "$TMP/out/merge" -o none.json -t 1000:2000 -q
assert_eq "$(python3 "$DC_TOOLS/trace_summary.py" none.json | wc -l | tr -d ' ')" "0" "calls in a window after the job"

# Progress on request (by default only on a terminal); nothing on stdout.
"$DC_MERGE" merge -i "$TMP/out/merge" -o p.json --progress >"$TMP/stdout.txt" 2>"$TMP/progress.txt"
assert_contains "$TMP/progress.txt" "dc-merge: [####################] 100%" "progress bar"
assert_eq "$(wc -c <"$TMP/stdout.txt" | tr -d ' ')" "0" "bytes on stdout"
