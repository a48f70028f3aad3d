#!/usr/bin/env bash
# The Python package (python/datacrumbs) and its example notebook: a traced
# MPI job and a synthetic 5-node job, merged and stitched into HDF5 and
# written as pfw.gz; the notebook is executed on each HDF5 file (Debian's
# jupyter-nbconvert) and every figure it shows must equal dc-summary's JSON
# of the same job; the pfw.gz file must give the same calls.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_SUMMARY:?set by ctest}" "${DC_PMPI:?set by ctest}" "${DC_SRC:?set by ctest}"
# Debian's Python, whose python3-h5py, -pandas and -dask scripts/install-deps.sh installs.
PY=/usr/bin/python3
"$PY" -c "import h5py, pandas, dask.dataframe" 2>"$TMP/py.err" ||
	fail "python3-h5py, python3-pandas or python3-dask missing (scripts/install-deps.sh): $(tail -1 "$TMP/py.err")"
command -v jupyter-nbconvert >/dev/null || fail "jupyter-nbconvert missing (scripts/install-deps.sh)"
export PYTHONPATH=$DC_SRC/python

# figures TRACE NAME: the notebook run on TRACE; its figures in $TMP/NAME.fig.json.
figures() {
	(cd "$TMP" && DC_TRACE=$1 DC_FIGURES=$TMP/$2.fig.json DC_PYTHONPATH=$DC_SRC/python \
		jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
		--output "$TMP/$2.ipynb" "$DC_SRC/python/examples/job_analysis.ipynb" >"$TMP/$2.nb.log" 2>&1) ||
		{ tail -30 "$TMP/$2.nb.log"; fail "$2: the notebook did not run"; }
}

# same SUMMARY_JSON FIGURES_JSON WHAT: the notebook's figures are dc-summary's.
same() {
	"$PY" - "$1" "$2" <<'PY' || fail "$3: the notebook's figures differ from dc-summary's"
import json, sys
s, f = (json.load(open(p)) for p in sys.argv[1:])
def close(a, b):
    return abs(a - b) <= 1e-9 * max(1, abs(a)) + 1e-9
def check(what, want, got, key, cols):
    want = {tuple(r[k] for k in key): r for r in want}
    got = {tuple(r[k] for k in key): r for r in got}
    assert want.keys() == got.keys(), (what, sorted(want)[:5], sorted(got)[:5])
    for k, r in want.items():
        for c in cols:
            ok = close(r[c], got[k][c]) if isinstance(r[c], float) else r[c] == got[k][c]
            assert ok, (what, k, c, r[c], got[k][c])
    print("ok: %s: %d rows, %s equal" % (what, len(want), ", ".join(cols)))
totals = ["calls", "bytes", "time_s", "max_s"]
check("per level", s["levels"], f["levels"], ["level"], totals + ["read_bytes", "write_bytes"])
assert s["rank_level"] == f["rank_level"], (s["rank_level"], f["rank_level"])
check("per rank at the " + s["rank_level"] + " level", s["ranks"], f["ranks"], ["rank"], totals)
# dc-summary lists the top files (--top 100000: all of them).
check("per file", s["top_files_by_bytes"], f["files"], ["level", "path"], totals)
assert close(s["timeline"]["bin_s"], f["timeline"]["bin_s"]), (s["timeline"]["bin_s"], f["timeline"]["bin_s"])
for k in ("read_bytes", "write_bytes"):
    assert s["timeline"][k] == f["timeline"][k], (k, s["timeline"][k][:20], f["timeline"][k][:20])
print("ok: I/O over time: %d bins of %g s equal" % (len(s["timeline"]["read_bytes"]), s["timeline"]["bin_s"]))
PY
}

# A real MPI job: POSIX, STDIO, system calls and MPI-IO from the wrapper.
mkdir -p "$TMP/mpi"
trace pyjob -p posix,stdio,syscalls,mpiio -- mpirun --allow-run-as-root --oversubscribe -np 4 \
	-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_io" "$TMP/mpi" 1024
"$DC_MERGE" pyjob -i "$TMP/out/pyjob" -f hdf5 -o "$TMP/pyjob.h5" -q
"$DC_MERGE" pyjob -i "$TMP/out/pyjob" -f pfw.gz -o "$TMP/pyjob.pfw.gz" -q
"$DC_SUMMARY" pyjob -i "$TMP/out/pyjob" --format json --top 100000 >"$TMP/pyjob.sum.json"
figures "$TMP/pyjob.h5" pyjob
same "$TMP/pyjob.sum.json" "$TMP/pyjob.fig.json" "MPI job, merged HDF5"
assert_eq "$("$PY" -c "import json; print(sorted(r['rank'] for r in json.load(open('$TMP/pyjob.fig.json'))['ranks']))")" \
	"[0, 1, 2, 3]" "MPI job: the four ranks"
assert_eq "$("$PY" -c "import json; print([r['bytes'] for r in json.load(open('$TMP/pyjob.fig.json'))['files'] if r['level'] == 'mpiio'])")" \
	"[16384]" "MPI job: MPI-IO bytes of the shared file (4 ranks x 1024 ints)"

# The loader itself: each call's host, rank and process label, and the pfw.gz
# file's calls against the HDF5 file's.
"$PY" - "$TMP/pyjob.h5" "$TMP/pyjob.pfw.gz" <<'PY' || fail "datacrumbs.load"
import sys
import datacrumbs as dc
h, p = dc.load(sys.argv[1]), dc.load(sys.argv[2])
ranked = h[h["rank"] >= 0]
assert set(ranked["process"]) == {"rank %d" % r for r in range(4)}, set(ranked["process"])
assert (ranked["process"] == "rank " + ranked["rank"].astype(str)).all()
assert set(h["host"]) == set(p["host"]) and len(set(h["host"])) == 1, (set(h["host"]), set(p["host"]))
fh, fp = dc.per_function(h), dc.per_function(p)
assert fh["calls"].to_dict() == fp["calls"].to_dict(), (fh["calls"].to_dict(), fp["calls"].to_dict())
print("ok: pfw.gz: %d calls of %d functions, as the HDF5 file" % (fh["calls"].sum(), len(fh)))
# pfw carries what a call returned, not what it moved: bytes agree where the two are one.
for level in ("posix", "syscall"):
    a, b = dc.per_level(h).loc[level], dc.per_level(p).loc[level]
    assert (a["read_bytes"], a["write_bytes"]) == (b["read_bytes"], b["write_bytes"]), (level, a, b)
    print("ok: pfw.gz: %s read and write bytes as the HDF5 file" % level)
assert (p.groupby("rank")["dur_ns"].count().drop(-1).to_dict() ==
        h.groupby("rank")["dur_ns"].count().drop(-1).to_dict())
print("ok: pfw.gz: calls per rank as the HDF5 file")
PY

# A file of a newer layout than the package reads is refused, by name.
cp "$TMP/pyjob.h5" "$TMP/newer.h5"
"$PY" -c "import h5py; f = h5py.File('$TMP/newer.h5', 'r+'); f.attrs.modify('layout_version', 2)"
expect_fail "a newer HDF5 layout" "written by a newer DataCrumbs (HDF5 layout 2; this package reads up to 1)" \
	"$PY" -c "import sys, datacrumbs; datacrumbs.load(sys.argv[1])" "$TMP/newer.h5"

# Five synthetic nodes of four ranks each, stitched from parts: the same
# figures through the virtual datasets.
"$DC_GEN" "$TMP/in" big 5 4000
for k in 0 1 2 3 4; do "$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --part $k/5 -q; done
"$DC_MERGE" big -i "$TMP/in/big" -f hdf5 --stitch -q
"$DC_SUMMARY" big -i "$TMP/in/big" --format json --top 100000 >"$TMP/big.sum.json"
figures "$TMP/in/big/big.h5" big
same "$TMP/big.sum.json" "$TMP/big.fig.json" "5 nodes, stitched HDF5"
assert_eq "$("$PY" -c "import json; print(len(json.load(open('$TMP/big.fig.json'))['ranks']))")" "20" "5 nodes: 20 ranks"
