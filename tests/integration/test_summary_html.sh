#!/usr/bin/env bash
# dc-summary --html: the page a browser shows holds the JSON report's
# numbers, draws every chart, fetches nothing, puts warnings first, and
# shows a hostile file name as text.
. "$(dirname "$0")/lib.sh"
: "${DC_SUMMARY:?set by ctest}" "${DC_PMPI:?set by ctest}"
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || fail "chromium is needed (scripts/install-deps.sh installs it)"

# Headless, offline, in a profile of its own: what a user's browser does
# with the file, without a display.
browse() { # page.html what(--dump-dom|--screenshot=PNG)
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chromium" --hide-scrollbars --window-size=1100,6000 "$2" "file://$1" \
		2>>"$TMP/chromium.log"
}
check() { # page.html summary.json [path shown]
	browse "$1" --dump-dom >"$1.dom" || fail "chromium could not load $1"
	browse "$1" --screenshot="$1.png" || fail "chromium could not photograph $1"
	# Debian's python3, the one its python3-pil is for.
	/usr/bin/python3 "$DC_TOOLS/html_check.py" "$1.dom" "$2" "$1.png" ${3:+--path-must-show "$3"} || fail "$1 differs from $2"
}

# Four ranks; the folder's name would be markup if it were not escaped.
HOSTILE="$TMP/m<i>&\"x'"
mkdir -p "$HOSTILE"
trace web -p posix,syscalls -- mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$DC_PMPI" \
	"$DC_WORKLOADS/mpi_posix" "$HOSTILE"
"$DC_SUMMARY" web -i "$TMP/out/web" --format json --top 100 --html "$TMP/web.html" >"$TMP/web.json"
check "$TMP/web.html" "$TMP/web.json" "$HOSTILE/rank_3.dat"
grep -q '<i>' "$TMP/web.html" && fail "a file name was written as markup"
q() { python3 -c "import json; d = json.load(open('$1')); print($2)"; }
# Each rank's row over time holds exactly the bytes it read and wrote.
assert_eq "$(grep -o 'data-k="heat_row" data-label="[^"]*"' "$TMP/web.html" | cut -d'"' -f4 | tr '\n' ,)" \
	"rank 0,rank 1,rank 2,rank 3,no rank," "heatmap rows: the ranks, then mpirun's processes"
for r in 0 1 2 3; do
	assert_eq "$(grep -o "data-label=\"rank $r\" data-bytes=\"[0-9]*\"" "$TMP/web.html" | cut -d'"' -f4)" \
		"$(q "$TMP/web.json" "[x['read_bytes'] + x['write_bytes'] for x in d['ranks_io'] if x['rank'] == $r][0]")" \
		"rank $r's bytes over time"
done
echo "ok: the report of a 4-rank job"

# The same report from the merged HDF5 file.
"$DC_MERGE" web -i "$TMP/out/web" -f hdf5 -o "$TMP/web.h5" -q
"$DC_SUMMARY" "$TMP/web.h5" --format json --top 100 --html "$TMP/fromh5.html" >"$TMP/fromh5.json"
check "$TMP/fromh5.html" "$TMP/fromh5.json"
python3 - "$TMP/web.json" "$TMP/fromh5.json" <<'PY' || fail "the node files' report and the merged file's differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for key in ("functions", "levels", "ranks", "timeline", "top_files_by_bytes", "events"):
    if a[key] != b[key]:
        sys.exit(f"{key} differs")
PY
echo "ok: the merged file's report equals the node files'"

# A node file cut short: named at the top of the page, the rest still shown.
mkdir -p "$TMP/cut"
f=$(ls "$TMP/out/web/"*.dcnode)
head -c $(($(stat -c %s "$f") - 100)) "$f" >"$TMP/cut/n.dcnode"
"$DC_SUMMARY" web -i "$TMP/cut" --format json --top 100 --html "$TMP/cut.html" >"$TMP/cut.json" 2>/dev/null
assert_eq "$(q "$TMP/cut.json" "len(d['node_warnings'])")" "1" "the cut node file warned of in the JSON"
check "$TMP/cut.html" "$TMP/cut.json"
assert_contains "$TMP/cut.html" "Incomplete node file: node " "the warning on the page"
echo "ok: an incomplete node file is named at the top of the page"

# Lost events: said at the top, with the JSON's count (three nodes that
# each lost 250 calls).
: "${DC_GEN:?set by ctest}"
"$DC_GEN" "$TMP/gen" lossy 3 2000 250
"$DC_SUMMARY" lossy -i "$TMP/gen/lossy" --format json --top 100 --html "$TMP/lossy.html" >"$TMP/lossy.json"
assert_eq "$(q "$TMP/lossy.json" "d['lost_events']")" "750" "lost events in the JSON"
check "$TMP/lossy.html" "$TMP/lossy.json"
assert_contains "$TMP/lossy.html" 'Lost events: <b data-k="lost_events">750</b>' "the lost events warned of on the page"
echo "ok: lost events are said at the top of the page"

# Bad output paths: refused with the reason, nothing written.
expect_fail "missing folder" "cannot open the folder" "$DC_SUMMARY" web -i "$TMP/out/web" --html "$TMP/none/r.html"
ln -s "$TMP/victim" "$TMP/link.html"
expect_fail "symbolic link" "link.html" "$DC_SUMMARY" web -i "$TMP/out/web" --html "$TMP/link.html"
[ -e "$TMP/victim" ] && fail "the report followed a symbolic link"
echo "ok: bad output paths refused"
