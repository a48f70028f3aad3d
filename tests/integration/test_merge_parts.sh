#!/usr/bin/env bash
# dc-merge --part and --stitch: parts made by separate processes, stitched
# into one HDF5 file, read as a single-process merge of the same job reads:
# the same calls per function and rank, the same first and last calls, the
# same dc-summary; nodes without a usable part named, the rest kept.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_SUMMARY:?set by ctest}" "${DC_H5SUMMARY:?set by ctest}" "${DC_GEN:?set by ctest}"
: "${DC_SRC:?set by ctest}" "${DC_TOOLS:?set by ctest}"
cd "$TMP"

# The summaries a reader gets of a merged file and of a stitched one.
same_as_merge() { # job input-dir what [stitched file, default $TMP/JOB.h5]
	local job=$1 in=$2 what=$3 stitched=${4:-$TMP/$1.h5}
	"$DC_MERGE" "$job" -i "$in" -f hdf5 -o "$TMP/$job.merged.h5" -q
	"$DC_H5SUMMARY" --ranks "$TMP/$job.merged.h5" >"$TMP/$job.merged.txt"
	"$DC_H5SUMMARY" --ranks --any-order "$stitched" >"$TMP/$job.stitched.txt"
	diff "$TMP/$job.merged.txt" "$TMP/$job.stitched.txt" >&2 || fail "$what: calls, ranks or first and last calls differ"
	"$DC_SUMMARY" "$TMP/$job.merged.h5" --format json --top 1000 >"$TMP/$job.merged.json"
	"$DC_SUMMARY" "$stitched" --format json --top 1000 >"$TMP/$job.stitched.json"
	python3 - "$TMP/$job.merged.json" "$TMP/$job.stitched.json" <<'PY' || fail "$what: dc-summary differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for key in ("functions", "levels", "ranks", "ranks_io", "timeline", "top_files_by_bytes", "top_files_by_time",
            "events", "lost_events", "mpi_ranks", "span_s", "events_skipped_damaged"):
    if a[key] != b[key]:
        sys.exit(f"{key} differs: {str(a[key])[:200]} / {str(b[key])[:200]}")
PY
	echo "ok: $what: the stitched file reads as the merged one ($(grep -c '^rank' "$TMP/$job.merged.txt") ranks, $(python3 -c "import json; print(json.load(open('$TMP/$job.merged.json'))['events'])") events)"
}

# Seven synthetic nodes of four ranks; three processes make the parts at
# once, as srun would start them (K and N from SLURM_PROCID/SLURM_NTASKS).
"$DC_GEN" "$TMP/in" big 7 6000
for k in 0 1 2; do
	SLURM_PROCID=$k SLURM_NTASKS=3 "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part auto --parts big.parts \
		2>"$TMP/part.$k.err" &
done
wait
assert_eq "$(cat "$TMP"/part.*.err | grep -c 'part [0-2]/3: node node00[0-6], 6000 events')" "7" "each node converted once"
assert_eq "$(ls big.parts | tr '\n' ' ')" "node-00000.h5 node-00001.h5 node-00002.h5 node-00003.h5 node-00004.h5 node-00005.h5 node-00006.h5 " "one part a node"
"$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --stitch -o big.h5 2>"$TMP/stitch.err" || fail "stitch failed: $(cat "$TMP/stitch.err")"
assert_contains "$TMP/stitch.err" "7 parts stitched into big.h5" "the stitch's line"
same_as_merge big "$TMP/in/big" "7 nodes"

# The stitched file maps the parts' events: it holds none itself, and it
# is read from any folder as long as the parts folder stays beside it.
assert_eq "$(h5dump -p -H -d events big.h5 | grep -c '^ *VIRTUAL {')" "7" "/events maps the 7 parts"
assert_eq "$(h5dump -p -H -d events big.h5 | grep -c 'FILE "big.parts/node-0000[0-6].h5"')" "7" "each part's file named"
mkdir moved && mv big.h5 big.parts moved/
(cd / && "$DC_H5SUMMARY" --ranks --any-order "$TMP/moved/big.h5") >moved.txt
diff big.stitched.txt moved.txt >/dev/null || fail "the stitched file does not read after a move with its parts"
echo "ok: the stitched file holds no events and moves with its parts"

# A job with one node file missing and one cut short: parts and stitch see
# what a merge sees.
mkdir -p "$TMP/in/cut"
cp "$TMP/in/big/"*.dcnode "$TMP/in/cut/"
rm "$TMP/in/cut/node002.dcnode"
f="$TMP/in/cut/node004.dcnode"
head -c $(($(stat -c %s "$f") - 3000)) "$f" >"$f.tmp" && mv "$f.tmp" "$f"
"$DC_MERGE" big -i "$TMP/in/cut" -f hdf5 --part 0/1 --parts cut.parts -q 2>/dev/null
"$DC_MERGE" big -i "$TMP/in/cut" -f hdf5 --stitch --parts cut.parts -o cut.h5 -q 2>/dev/null
mv cut.h5 big.h5
same_as_merge big "$TMP/in/cut" "a node file missing and one cut short"
rm big.h5

# A part missing, one damaged, one stale: each node named, the rest kept.
mkdir bad.parts
cp moved/big.parts/* bad.parts/
rm bad.parts/node-00001.h5
head -c 1000 moved/big.parts/node-00003.h5 >bad.parts/node-00003.h5
"$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part 5/7 --parts stale.parts -q
cp "$TMP/in/big/node005.dcnode" saved.dcnode
printf 'x' >>"$TMP/in/big/node005.dcnode" # the node file changed after its part was made
cp stale.parts/node-00005.h5 bad.parts/
rc=0
"$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --stitch --parts bad.parts -o bad.h5 2>bad.err || rc=$?
assert_eq "$rc" "3" "exit status: written, some nodes left out"
assert_contains bad.err "node node001: no part" "the missing part named"
assert_contains bad.err "node node003: part bad.parts/node-00003.h5 is not an HDF5 file" "the damaged part named"
assert_contains bad.err "node node005: part bad.parts/node-00005.h5 is out of date" "the stale part named"
assert_eq "$("$DC_H5SUMMARY" --ranks --any-order bad.h5 | grep '^rank' | cut -d' ' -f2 | tr '\n' ' ')" \
	"0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 " "the ranks of the usable parts, all of them"
"$DC_SUMMARY" bad.h5 --format json >bad.json
assert_eq "$(python3 -c "import json; d = json.load(open('bad.json')); print(d['events'], sorted(w['host'] for w in d['node_warnings']))")" \
	"24000 ['node001', 'node003', 'node005']" "dc-summary: the events kept, the nodes left out"
mv saved.dcnode "$TMP/in/big/node005.dcnode"
echo "ok: missing, damaged and stale parts named; the rest of the job kept"

# A real MPI job's node file: ranks and paths as the agent recorded them.
: "${DC_PMPI:?set by ctest}"
mkdir -p "$TMP/m"
trace real -p posix,syscalls -- mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$DC_PMPI" \
	"$DC_WORKLOADS/mpi_posix" "$TMP/m"
# By default, the parts and the stitched file go beside the node files.
"$DC_MERGE" "$TMP/out/real" -f hdf5 --part 0/1 -q
"$DC_MERGE" "$TMP/out/real" -f hdf5 --stitch -q
[ -d "$TMP/out/real/real.parts" ] || fail "no parts folder beside the node files"
same_as_merge real "$TMP/out/real" "a traced 4-rank MPI job" "$TMP/out/real/real.h5"
assert_eq "$(grep -c '^rank [0-3] ' real.stitched.txt)" "4" "the four ranks named"

# Perfetto: parts concatenate into one trace that decodes with Perfetto's
# schema, every sequence's ids defined before use, no track described twice,
# and the calls and bytes of the single merge's JSON; a node without its
# part is named in the trace.
decode() { pftrace_decode "$@"; }
for k in 0 1; do
	"$DC_MERGE" big -i "$TMP/in/big" -f perfetto --part $k/2 -q &
done
wait
"$DC_MERGE" big -i "$TMP/in/big" -f perfetto --stitch -q || fail "perfetto stitch failed"
"$DC_MERGE" big -i "$TMP/in/big" -o big.json -q
decode "$TMP/in/big/big.pftrace" big.pf.txt || fail "protoc cannot decode the joined trace"
python3 "$DC_TOOLS/pftrace_check.py" big.pf.txt big.json >pf.check || { tail -3 pf.check; fail "joined perfetto trace"; }
assert_contains pf.check "ok: same calls and bytes as the JSON" "the joined trace's calls and bytes equal the single merge's"
rm "$TMP/in/big/big.parts/node-00002.pftrace"
rc=0
"$DC_MERGE" big -i "$TMP/in/big" -f perfetto --stitch --parts "$TMP/in/big/big.parts" -o gap.pftrace 2>gap.err || rc=$?
assert_eq "$rc" "3" "perfetto: exit status with a node left out"
assert_contains gap.err "node node002: no part" "perfetto: the missing part named"
decode gap.pftrace gap.txt || fail "protoc cannot decode the trace with a gap"
assert_contains gap.txt "node002: no part" "perfetto: the missing part said in the trace"
echo "ok: perfetto parts joined, and a missing one named"

# Refusals, with the fix named.
expect_fail "part without hdf5" "add -f hdf5 or -f perfetto" "$DC_MERGE" big -i "$TMP/in/big" --part 0/2
expect_fail "bad part" "expected K/N with 0 <= K < N" "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part 2/2
expect_fail "stitch without parts" "run dc-merge big -f hdf5 --part first" "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --stitch --parts nowhere
expect_fail "filters" "keep every event" "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part 0/1 -r 0
ln -s "$TMP/m" linked.parts
expect_fail "a linked parts folder" "is not a folder (a link is not taken)" "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part 0/1 --parts linked.parts
echo "ok: refusals"
