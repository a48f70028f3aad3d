#!/usr/bin/env bash
# dc-merge -f pfw / pfw.gz: DFTracer's JSON lines, checked line by line and
# against the Chrome JSON trace of the same job.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_PMPI:?set by ctest}"
cd "$TMP"

mkdir -p "$TMP/w"
trace pfw -p posix,stdio,syscalls -- mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$DC_PMPI" \
	"$DC_WORKLOADS/mpi_posix" "$TMP/w"
"$DC_MERGE" pfw -i "$TMP/out/pfw" -o pfw.json -q
"$DC_MERGE" pfw -i "$TMP/out/pfw" -f pfw -o pfw.pfw -q
"$DC_MERGE" pfw -i "$TMP/out/pfw" -f pfw.gz -o pfw.pfw.gz -q
python3 "$DC_TOOLS/pfw_check.py" pfw.pfw pfw.json "$TMP/w/" >check.txt || fail "the pfw trace differs from the JSON"
cmp <(gzip -dc pfw.pfw.gz) pfw.pfw || fail "pfw.gz is not the gzip of pfw"
assert_eq "$(grep '^ranks' check.txt)" "ranks [0, 1, 2, 3]" "the ranks named by PR lines"
# mpi_posix: rank R writes 10*(R+1) x 1000 bytes, 100 writes in all.
assert_eq "$(grep '^prefix posix ' check.txt)" "prefix posix 100 100000" "POSIX writes to the ranks' files and their bytes"
assert_contains pfw.pfw '"name":"lost_events","value":"0"' "lost events said"
echo "ok: pfw: $(grep -c . pfw.pfw) lines, $(($(stat -c %s pfw.pfw) / $(python3 -c "import json; print(json.load(open('pfw.json'))['otherData']['events'])"))) bytes a call, pfw.gz $(stat -c %s pfw.pfw.gz) bytes"

# Standard output works as for JSON.
"$DC_MERGE" pfw -i "$TMP/out/pfw" -f pfw -o - -q | cmp - pfw.pfw || fail "-o - differs"
echo "ok: -o -"
