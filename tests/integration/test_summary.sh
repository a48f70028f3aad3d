#!/usr/bin/env bash
# dc-summary's numbers against the workloads' known calls.
. "$(dirname "$0")/lib.sh"
: "${DC_SUMMARY:?set by ctest}" "${DC_PMPI:?set by ctest}"

mkdir -p "$TMP/w"
trace sum -- sh -c "'$DC_WORKLOADS/posix_write' '$TMP/w' 1000 4096 && '$DC_WORKLOADS/stdio_files' '$TMP/w' 10"
"$DC_SUMMARY" sum -i "$TMP/out/sum" >"$TMP/sum.txt"
"$DC_SUMMARY" sum -i "$TMP/out/sum" --format json >"$TMP/sum.json"
assert_contains "$TMP/sum.txt" "# DataCrumbs job summary: job sum" "text summary"
# The job's folder, or one of its node files, as well as its id.
"$DC_SUMMARY" "$TMP/out/sum/" | cmp -s - "$TMP/sum.txt" || fail "dc-summary of the job's folder differs"
"$DC_SUMMARY" "$NODEFILE" | cmp -s - "$TMP/sum.txt" || fail "dc-summary of a node file differs"
echo "ok: the job's folder and a node file name the job"
# Only sections with something in them: no MPI, no rank sections.
! grep -q "^## Per rank\|^## Slowest ranks" "$TMP/sum.txt" || fail "rank sections in a job without MPI"
echo "ok: no rank sections without ranks"

# A folder listed and the level column as wide as pagecache: a listing's
# bytes are no file data; profile mode says what it cannot show.
trace lst -p posix,syscalls,pagecache -- sh -c "'$DC_WORKLOADS/posix_write' '$TMP/w' 10 4096 && ls '$TMP/w' >/dev/null"
"$DC_SUMMARY" "$TMP/out/lst" --format json --top 1000 >"$TMP/lst.json"
assert_eq "$(python3 -c "import json; print([r['bytes'] for r in json.load(open('$TMP/lst.json'))['top_files_by_bytes'] if r['path'] == '$TMP/w' and r['level'] == 'posix'])")" \
	"[0]" "a folder listed: calls, no data bytes"
"$DC_SUMMARY" "$TMP/out/lst" >"$TMP/lst.txt"
assert_contains "$TMP/lst.txt" "pagecache " "the level column fits pagecache"
! grep -q "^pagecache[0-9]" "$TMP/lst.txt" || fail "the level column runs into the next"
# Access sizes: a level's reads or writes only where there were some.
assert_eq "$(sed -n '/^## Access sizes/,/^$/p' "$TMP/lst.txt" | grep -cE '^[a-z_]+ +(read|write)( +0)+$' || true)" "0" \
	"no row of access sizes that is all zeros"
assert_eq "$(sed -n '/^## Access sizes/,/^$/p' "$TMP/lst.txt" | grep -cE '^posix +write ' || true)" "1" "...and the writes there were"
trace prof -m profile -p posix -- "$DC_WORKLOADS/posix_write" "$TMP/w" 10 4096
"$DC_SUMMARY" "$TMP/out/prof" >"$TMP/prof.txt"
assert_contains "$TMP/prof.txt" "no per-call events, so no longest call, bandwidth, access sizes, files" "profile mode: what it cannot show, said"
assert_eq "$(awk '$1 == "posix" && $2 == "write" { print $3, $4, $6 }' "$TMP/prof.txt")" "10 40960 -" "profile mode: calls, bytes, and no longest call"
! grep -q "^## Access sizes\|^## Top files\|^## Per node" "$TMP/prof.txt" || fail "profile mode: empty sections shown"
echo "ok: profile mode: no empty sections"

q() { python3 -c "import json, sys; d = json.load(open('$TMP/sum.json')); print($1)"; }
fn() { q "[(f['calls'], f['bytes']) for f in d['functions'] if f['level'] == '$1' and f['function'] == '$2'][0]"; }
# posix_write's 1000 x 4096 and the 10 x 100 that fclose flushes.
assert_eq "$(fn posix write)" "(1010, 4097000)" "libc write calls and bytes"
assert_eq "$(q "[f for f in d['functions'] if f['level'] == 'syscall' and f['function'] == 'write']")" "[]" "no write reported twice"
assert_eq "$(fn stdio fwrite)" "(10, 1000)" "fwrite"
assert_eq "$(fn stdio fread)" "(10, 1000)" "fread"
assert_eq "$(fn stdio fopen)" "(20, 0)" "fopen"
assert_eq "$(q "[l['write_sizes']['1K-10K'] for l in d['levels'] if l['level'] == 'posix'][0]")" "1000" "4 KiB writes in the 1K-10K bin"
assert_eq "$(q "[l['write_sizes']['100-1K'] for l in d['levels'] if l['level'] == 'posix'][0]")" "10" "100-byte writes in the 100-1K bin"
assert_eq "$(q "[l['write_bytes'] for l in d['levels'] if l['level'] == 'posix'][0]")" "4097000" "bytes written at the POSIX level"
assert_eq "$(q "(d['top_files_by_bytes'][0]['path'], d['top_files_by_bytes'][0]['bytes'])")" "('$TMP/w/posix_write.dat', 4096000)" "top file by bytes"
assert_eq "$(q "d['lost_events']")" "0" "lost events"

# Ranks: mpi_posix's rank R writes 10*(R+1) x 1000 bytes; R=3 writes most.
mkdir -p "$TMP/m"
trace mpisum -p posix,syscalls -- mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$DC_PMPI" \
	"$DC_WORKLOADS/mpi_posix" "$TMP/m"
"$DC_SUMMARY" mpisum -i "$TMP/out/mpisum" --format json --top 100 >"$TMP/sum.json"
assert_eq "$(q "sorted(r['rank'] for r in d['ranks'])")" "[0, 1, 2, 3]" "ranks listed"
assert_eq "$(q "d['rank_level']")" "syscall" "ranks compared at the system-call level"
for r in 0 1 2 3; do
	assert_eq "$(q "[f['bytes'] for f in d['top_files_by_bytes'] if f['path'] == '$TMP/m/rank_$r.dat' and f['level'] == 'posix'][0]")" \
		"$((10000 * (r + 1)))" "bytes of rank $r's file"
done

# The merged HDF5 file gives the same summary as the node files.
"$DC_MERGE" mpisum -i "$TMP/out/mpisum" -f hdf5 -o "$TMP/mpisum.h5" -q
"$DC_SUMMARY" "$TMP/mpisum.h5" --format json --top 100 >"$TMP/fromh5.json"
# The file says its layout's version; a newer one than this release reads is refused, by name.
assert_eq "$(/usr/bin/python3 -c "import h5py; print(h5py.File('$TMP/mpisum.h5').attrs['layout_version'])")" "1" "HDF5 layout version"
cp "$TMP/mpisum.h5" "$TMP/newer.h5"
/usr/bin/python3 -c "import h5py; f = h5py.File('$TMP/newer.h5', 'r+'); f.attrs.modify('layout_version', 2)"
expect_fail "a newer HDF5 layout" "written by a newer DataCrumbs (HDF5 layout 2; this one reads up to 1)" "$DC_SUMMARY" "$TMP/newer.h5"
expect_fail "a newer HDF5 layout, the test tool" "HDF5 layout 2" "$DC_H5SUMMARY" "$TMP/newer.h5"
python3 - "$TMP/sum.json" "$TMP/fromh5.json" <<'PY' || fail "summaries of node files and merged file differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for key in ("functions", "levels", "ranks", "top_files_by_bytes", "events", "lost_events", "mpi_ranks", "job_id", "span_s"):
    if a[key] != b[key]:
        sys.exit(f"{key} differs")
PY
echo "ok: dc-summary of the merged HDF5 file equals that of the node files"
