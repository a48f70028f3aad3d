#!/usr/bin/env bash
# The STDIO level from libdcpreload.so, in processes that are no MPI rank:
# the wrapper set stdio-wrapper records each preloaded process's calls
# from its start to its exit, with the uprobe set's exact counts, bytes and
# files (the scanf family's bytes too); an exec'd image and a forked child
# each under their own pid; the
# rings of processes that exit, or are killed, let go (more processes than
# the agent holds rings at once); h5py's HDF5, which Python's dlopen
# brought; beside libdcpmpi.so, each call once.
. "$(dirname "$0")/lib.sh"
: "${DC_PRELOAD:?set by ctest}" "${DC_PMPI:?set by ctest}"

# calls_of PID FUNC PATHREGEX: "count req bytes" of the pid's STDIO calls.
calls_of() { calls stdio "$2" "$3" "$1"; }
pids_of() { field event pid func "$1" | sort -u | tr '\n' ' '; }

# One process, traced from its start: the stdio set's numbers.
trace one -p posix,stdio-wrapper -- env LD_PRELOAD="$DC_PRELOAD" "$DC_WORKLOADS/stdio_files" "$TMP" 10
f="^$TMP/stdio_[0-9]+\\.txt\$"
assert_eq "$(calls stdio fopen "$f")" "20 0 0" "fopen, named by the file it opened"
assert_eq "$(calls stdio fclose "$f")" "20 0 0" "fclose"
assert_eq "$(calls stdio fwrite "$f")" "10 1000 1000" "fwrite: 4 items of 25 bytes each time"
assert_eq "$(calls stdio fread "$f")" "10 1000 1000" "fread of 100 bytes"
assert_eq "$(calls posix write "$f")" "10 1000 1000" "libc's writes under fclose"
assert_eq "$(field function observed name fwrite)" "wrapper" "fwrite recorded by the preloaded library"
assert_eq "$(grep -c '^rank ' "$DUMP" || true)" "0" "no rank"
# The ring the preload set up (ftruncate, fcntl, mmap, close on its
# memfd) is no I/O of the program's.
assert_eq "$(grep -c 'path=[^ ]*memfd:datacrumbs-' "$DUMP" || true)" "0" "no call on the ring's memfd"
assert_eq "$(calls posix ftruncate '') $(calls posix fcntl '')" "0 0 0 0 0 0" "no ftruncate or fcntl of the preload's"
assert_eq "$(lost_events)" "0" "lost events"

# Started by the agent with a wrapper set among its sets, the command's
# processes preload it with no word from the user; --no-preload leaves
# LD_PRELOAD as it was.
trace auto -v -p posix,stdio-wrapper -- "$DC_WORKLOADS/stdio_files" "$TMP" 10
assert_eq "$(calls stdio fwrite "$f") / $(calls stdio fopen "$f")" "10 1000 1000 / 20 0 0" "the agent's command, preloaded by the agent"
assert_contains "$TMP/auto.err" "the command's processes preload " "said with -v"
trace none -p posix,stdio-wrapper --no-preload -- "$DC_WORKLOADS/stdio_files" "$TMP" 10
assert_eq "$(grep -c '^event .* level=stdio ' "$DUMP" || true)" "0" "--no-preload: no STDIO call recorded"
assert_eq "$(calls posix write "$f")" "10 1000 1000" "--no-preload: the writes still seen"

# The standard streams and a file read through freopen over stdin: the
# scanf family's bytes are how far the stream's position moved ("12 34").
trace streams -p stdio-wrapper -- env LD_PRELOAD="$DC_PRELOAD" bash -c \
	'"$1" "$2" popen >"$2/out.log" 2>>"$2/err.log"' sh "$DC_WORKLOADS/stdio_streams" "$TMP"
l="^$TMP/lines\\.txt\$" o="^$TMP/out\\.log\$"
assert_eq "$(calls stdio __isoc99_fscanf "$l") / $(calls stdio getdelim "$l")" "1 0 5 / 2 10 10" \
	"fscanf: the 5 bytes its position moved; getline, as getdelim, the rest of the line and the next"
assert_eq "$(calls stdio printf "$o") / $(calls stdio puts "$o") / $(calls stdio vprintf "$o")" "1 9 9 / 1 6 6 / 1 2 2" \
	"printf, puts and vprintf on the standard output's file"
assert_eq "$(calls stdio fputs '^pipe:\[[0-9]+\]$')" "5 30 30" "fputs on streams popen made, named by their pipes"
assert_eq "$(grep ' level=stdio ' "$DUMP" | grep -c ' path=$' || true)" "0" "no stream call without its file"

# A forked child, never exec'd, under its own pid; a shell's children,
# each image its own (the shell execs the last command in its place).
mkdir -p "$TMP/a" "$TMP/b" "$TMP/c"
trace tree -p stdio-wrapper -- env LD_PRELOAD="$DC_PRELOAD" sh -c \
	'"$1" "$2/a" 3 fork && "$1" "$2/b" 2 && exec "$1" "$2/c" 1' sh "$DC_WORKLOADS/stdio_files" "$TMP"
parent=$(grep "^event .* func=fwrite .* path=$TMP/a/stdio_0.txt\$" "$DUMP" | sed 's/.* pid=\([0-9]*\) .*/\1/')
child=$(grep "^event .* func=fwrite .* path=$TMP/a/child_0.txt\$" "$DUMP" | sed 's/.* pid=\([0-9]*\) .*/\1/')
[ -n "$parent" ] && [ -n "$child" ] && [ "$parent" != "$child" ] || fail "the fork's parent ($parent) and child ($child), each under its pid"
assert_eq "$(calls_of "$parent" fwrite "^$TMP/a/") / $(calls_of "$child" fwrite "^$TMP/a/")" "3 300 300 / 3 300 300" \
	"the parent's and the forked child's fwrites, each on its own files"
assert_eq "$(calls_of "$child" fopen "^$TMP/a/child_") / $(calls_of "$child" fopen "^$TMP/a/stdio_")" "6 0 0 / 0 0 0" \
	"the child's fopens, none of the parent's"
assert_eq "$(calls stdio fwrite "^$TMP/b/") / $(calls stdio fwrite "^$TMP/c/")" "2 200 200 / 1 100 100" \
	"the next command, and the one the shell exec'd in its place"
assert_eq "$(pids_of fwrite | wc -w)" "4" "four processes wrote"

# More processes than the agent holds rings at once (1,024), each let go
# as it ends: 300 that exit, 1,100 killed before their exit handlers run,
# each after its calls; then one more is recorded whole, and every call of
# each is there.
mkdir -p "$TMP/m"
trace many -p stdio-wrapper -- env LD_PRELOAD="$DC_PRELOAD" sh -c '
	i=0; while [ $i -lt 1400 ]; do
		if [ $i -lt 300 ]; then "$1" "$2" 1; else "$1" "$2" 1 kill; fi; i=$((i + 1))
	done 2>/dev/null
	exec "$1" "$3" 4' sh "$DC_WORKLOADS/stdio_files" "$TMP/m" "$TMP/c"
assert_eq "$(calls stdio fwrite "^$TMP/c/stdio_")" "4 400 400" "the last process's calls, after 1,400 others"
assert_eq "$(calls stdio fwrite "^$TMP/m/stdio_0\\.txt\$") / $(pids_of fwrite | wc -w)" "1400 140000 140000 / 1401" \
	"each of the 1,400 processes' fwrite, killed or not, under its own pid"
if grep -q "rings already" "$TMP/many.err"; then fail "a ring turned down: $(grep -m1 'rings already' "$TMP/many.err")"; fi
assert_eq "$(lost_events)" "0" "lost events"

# h5py: HDF5 is a library a Python module brought with dlopen, outside the
# global scope: each call still reaches it, recorded as the hdf5 uprobe
# set records it (integration.h5py).
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null ||
	fail "h5py and numpy are needed for /usr/bin/python3 (scripts/install-deps.sh installs python3-h5py)"
mkdir -p "$TMP/h"
(cd "$TMP/h" && trace h5py -p hdf5-wrapper -- env LD_PRELOAD="$DC_PRELOAD" /usr/bin/python3 -c '
import h5py, numpy as np
with h5py.File("data.h5", "w") as f:
    f.create_group("run").create_dataset("x", data=np.arange(1024, dtype="f8"))
with h5py.File("data.h5", "r") as f:
    assert f["run/x"][...].sum() == 1023 * 1024 / 2
') || fail "h5py under libdcpreload.so"
DUMP=$TMP/h5py.dump
f="$TMP/h/data\\.h5"
assert_eq "$(calls hdf5 H5Fcreate "^$f\$") / $(calls hdf5 H5Gcreate2 "^$f:/run\$") / $(calls hdf5 H5Dcreate2 "^$f:/run/x\$")" \
	"1 0 0 / 1 0 0 / 1 0 0" "h5py: the file, group and dataset made, each on its name"
assert_eq "$(calls hdf5 H5Dwrite "^$f:/run/x\$") / $(calls hdf5 H5Oopen "^$f:/run/x\$") / $(calls hdf5 H5Dread "^$f:/run/x\$")" \
	"1 8192 8192 / 1 0 0 / 1 8192 8192" "h5py: 1,024 doubles written, opened by H5Oopen and read"
assert_eq "$(grep -c ' level=hdf5 .* ret=-1 ' "$DUMP" || true)" "0" "h5py: no call failed"

# Beside libdcpmpi.so in MPI ranks: it stands aside, each call once.
trace mpi -p stdio-wrapper -- mpirun --allow-run-as-root --oversubscribe -np 2 \
	-x LD_PRELOAD="$DC_PMPI:$DC_PRELOAD" "$DC_WORKLOADS/mpi_stdio" "$TMP" 4
for r in 0 1; do
	assert_eq "$(calls stdio fwrite "^$TMP/rank_$r\\.txt\$")" "4 64 64" "rank $r's fwrites, once"
done
assert_eq "$(grep -c '^rank .*kind=register' "$DUMP")" "2" "two ranks registered"

# Outside any trace, with no agent named in its environment: the program
# runs as it would, and says nothing of it.
out=$(env -u DC_JOB_ID -u DC_AGENT_SOCKET -u SLURM_JOB_ID LD_PRELOAD="$DC_PRELOAD" "$DC_WORKLOADS/stdio_files" "$TMP" 2 2>&1) ||
	fail "outside a trace: the program failed: $out"
assert_eq "$out" "" "outside a trace: nothing on stderr"

# Profile mode: each process's totals, from its ring's counters.
trace prof -p stdio-wrapper --mode profile -- env LD_PRELOAD="$DC_PRELOAD" "$DC_WORKLOADS/stdio_files" "$TMP" 5
assert_eq "$(awk '$1 == "counter" && / func=fwrite / { for (i = 2; i <= NF; i++) { if ($i ~ /^count=/) c += substr($i, 7); if ($i ~ /^bytes=/) b += substr($i, 7) } } END { print c + 0, b + 0 }' "$DUMP")" \
	"5 500" "profile: fwrite's count and bytes"
