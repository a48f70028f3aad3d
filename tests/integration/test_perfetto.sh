#!/usr/bin/env bash
# dc-merge -f perfetto: the native trace decodes with protoc against
# Perfetto's schema (the subset the repository carries, and the whole one
# where it is at hand), every interned id is defined before its use, every
# slice begins and ends on its track, the calls and bytes per function equal
# the JSON's and the HDF5 file's, and with parallel HDF5 each rank's
# H5Dwrite holds its MPI-IO write, which holds the libc pwrite.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_PMPI:?set by ctest}" "${DC_SRC:?set by ctest}" "${DC_TOOLS:?set by ctest}"

decode() { pftrace_decode "$@"; }

trace pf -- sh -c "'$DC_WORKLOADS/posix_write' '$TMP' 1000 4096 && '$DC_WORKLOADS/stdio_files' '$TMP' 10 && '$DC_WORKLOADS/fork_tree' '$TMP' 3"
cd "$TMP"
"$DC_MERGE" pf -i "$TMP/out/pf" -f perfetto -o pf.pftrace -q
"$DC_MERGE" pf -i "$TMP/out/pf" -o pf.json -q
"$DC_MERGE" pf -i "$TMP/out/pf" -f hdf5 -o pf.h5 -q
decode pf.pftrace pf.txt || fail "protoc cannot decode the trace"
python3 "$DC_TOOLS/pftrace_check.py" pf.txt pf.json >check.txt || { tail -5 check.txt; fail "perfetto trace check"; }
assert_contains check.txt "ok: same calls and bytes as the JSON" "calls and bytes per function equal the JSON's"
assert_eq "$(grep '^posix write ' check.txt)" "posix write 1014 4103777" "libc writes and their bytes"
assert_contains check.txt "naming their track 0" "each thread's calls on its own sequence, its track the default"
h5=$("$DC_H5SUMMARY" pf.h5 | awk '$1 == "posix" && $2 == "write" { print $3, $5 }')
assert_eq "$h5" "1014 4103777" "the same in the HDF5 file"
# Deflated in batches by default: the same packets as --no-compress writes.
"$DC_MERGE" pf -i "$TMP/out/pf" -f perfetto --no-compress -o raw.pftrace -q
decode raw.pftrace raw.txt || fail "protoc cannot decode the --no-compress trace"
cmp -s pf.txt raw.txt || fail "the deflated trace's packets differ from --no-compress's"
echo "ok: the deflated trace's packets are --no-compress's"
read -r _ batches _ packets _ <pf.txt.batches
[ "$batches" -ge 1 ] && [ "$packets" -gt 2000 ] || fail "deflated batches: $(cat pf.txt.batches)"
echo "ok: $batches deflated batches of $packets packets"
assert_eq "$(cut -d' ' -f2 raw.txt.batches)" "0" "--no-compress: no batch"
expect_fail "--no-compress with JSON" "--no-compress is for -f perfetto" "$DC_MERGE" pf -i "$TMP/out/pf" --no-compress -o x.json
events=$(grep -c '^event ' "$DUMP")
size=$(stat -c %s pf.pftrace)
raw=$(stat -c %s raw.pftrace)
[ "$((size * 3))" -lt "$raw" ] || fail "deflated $size bytes against $raw: not a third"
echo "ok: $((size / events)) bytes per call deflated, $((raw / events)).$((raw * 10 / events % 10)) not ($events calls; JSON $(( $(stat -c %s pf.json) / events )))"
# Threads past a file's sequence ids share its sequence, each packet naming its track.
DC_TEST_PF_SHARED_SEQ=1 "$DC_MERGE" pf -i "$TMP/out/pf" -f perfetto --no-compress -o shared.pftrace -q
decode shared.pftrace shared.txt || fail "protoc cannot decode the shared-sequence trace"
python3 "$DC_TOOLS/pftrace_check.py" shared.txt pf.json >shared_check.txt || { tail -5 shared_check.txt; fail "shared-sequence trace check"; }
assert_contains shared_check.txt "ok: same calls and bytes as the JSON" "one shared sequence: calls and bytes equal the JSON's"
assert_contains shared_check.txt "on their track's own sequence 0," "one shared sequence: every slice packet names its track"
[ "$(stat -c %s shared.pftrace)" -gt "$raw" ] || fail "naming the track in every packet cost nothing"

# --- parallel HDF5: four levels nest on each rank's track ---
mkdir -p "$TMP/ph5"
trace ph5 -p posix,syscalls,mpiio,hdf5_openmpi -- mpirun --allow-run-as-root --oversubscribe -np 4 \
	-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_phdf5" "$TMP/ph5" 4096
"$DC_MERGE" ph5 -i "$TMP/out/ph5" -f perfetto -o ph5.pftrace -q
"$DC_MERGE" ph5 -i "$TMP/out/ph5" -o ph5.json -q
decode ph5.pftrace ph5.txt || fail "protoc cannot decode the MPI trace"
python3 "$DC_TOOLS/pftrace_check.py" ph5.txt ph5.json --nest "H5Dwrite,MPI_File_write*,pwrite" >nest.txt ||
	{ tail -5 nest.txt; fail "MPI perfetto trace check"; }
assert_contains nest.txt "ok: same calls and bytes as the JSON" "MPI trace: calls and bytes equal the JSON's"
assert_eq "$(grep '^nested ' nest.txt)" "nested 4" "each rank's pwrite inside its MPI-IO write inside H5Dwrite"
