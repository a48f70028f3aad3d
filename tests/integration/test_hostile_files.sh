#!/usr/bin/env bash
# What the files a job's user controls can make root's tools do: a merged
# HDF5 file the user rewrote (a node count of 2^64-1, attributes of another
# shape or type, a world size claimed), a rank that claims the largest world
# a registration may, and a job folder with a link to /proc/kmsg and a FIFO
# named like node files when dc-epilog waits for them.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_SUMMARY:?set by ctest}" "${DC_REGISTER:?set by ctest}" "${DC_SRC:?set by ctest}"

# peak_kib COMMAND...: runs it with stdout to $TMP/peak.out; prints its peak memory (KiB).
peak_kib() {
	/usr/bin/time -f %M -o "$TMP/peak.kib" "$@" >"$TMP/peak.out" 2>"$TMP/peak.err" || { cat "$TMP/peak.err"; fail "$*"; }
	cat "$TMP/peak.kib"
}

# --- 10. a rank that claims a world of 16,777,216 (the most a registration may) ---
start_agent world -p posix
out=$(DC_JOB_ID=world "$DC_REGISTER" "$TMP/world.sock" 0 0 16777216 "$TMP/w.dat")
[ "${out%% *}" = accepted ] || fail "registration: $out"
kill -TERM "$AGENT"
wait "$AGENT"
kib=$(peak_kib "$DC_SUMMARY" world -i "$TMP/out/world" --format json)
[ "$kib" -lt 65536 ] || fail "dc-summary of 9 writes took $kib KiB"
echo "ok: dc-summary of a rank claiming a world of 16,777,216 in $kib KiB"
python3 - "$TMP/peak.out" <<'PY' || fail "the summary's ranks"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["mpi_ranks"] == 1, s["mpi_ranks"]
assert [r["rank"] for r in s["ranks"]] == [0], s["ranks"]
assert [r["rank"] for r in s["ranks_io"]] == [0], s["ranks_io"]
print("ok: one rank, rank 0, in the summary")
PY

# --- 5. a merged HDF5 file its user rewrote ---
trace h5 -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 10 100
"$DC_MERGE" h5 -i "$TMP/out/h5" -f hdf5 -o "$TMP/good.h5" -q
"$DC_SUMMARY" "$TMP/good.h5" --format json >"$TMP/good.json"
rewrite() { # name python-statements
	cp "$TMP/good.h5" "$TMP/$1.h5"
	/usr/bin/python3 -c "import h5py, numpy as np; f = h5py.File('$TMP/$1.h5', 'r+'); $2; f.close()"
}
rewrite huge "f.attrs.modify('nodes', np.uint64(2**64 - 1))"
rewrite array "del f.attrs['nodes']; f.attrs['nodes'] = np.arange(1000, dtype=np.uint64); del f.attrs['job_id']; f.attrs['job_id'] = np.array([b'a', b'b', b'c'], dtype=h5py.string_dtype())"
rewrite typed "del f.attrs['lost_events']; f.attrs['lost_events'] = 'many'"
rewrite world "p = f['processes'][...]; p['rank'] = 16777215; p['world_size'] = 16777216; f['processes'][...] = p"
rewrite shape "e = f['events'][...]; del f['events']; f['events'] = e[:10].reshape(5, 2)"
for k in huge array typed world; do
	for form in text json html; do
		case $form in
		text) args=() ;;
		json) args=(--format json) ;;
		html) args=(--html "$TMP/$k.html") ;;
		esac
		kib=$(peak_kib "$DC_SUMMARY" "$TMP/$k.h5" "${args[@]}")
		[ "$kib" -lt 65536 ] || fail "$k, $form: $kib KiB"
	done
	"$DC_SUMMARY" "$TMP/$k.h5" --format json >"$TMP/$k.json"
	python3 - "$TMP/good.json" "$TMP/$k.json" "$k" <<'PY' || fail "$k: the summary"
import json, sys
good, got, k = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert got["nodes"] == 1, got["nodes"]
assert got["events"] == good["events"], (got["events"], good["events"])
assert got["functions"] == good["functions"], k
assert len(got["nodes_io"]) == 1, got["nodes_io"]
if k == "world":
    assert got["mpi_ranks"] == 1 and got["ranks_io"] == [], (got["mpi_ranks"], got["ranks_io"])
print("ok:", k, "summarised as the file's tables say:", got["events"], "events on", got["nodes"], "node")
PY
done
expect_fail "a table of two dimensions" "cannot read $TMP/shape.h5 as a dc-merge HDF5 file" "$DC_SUMMARY" "$TMP/shape.h5"

# --- 6. dc-epilog and a job folder with a link to /proc/kmsg and a FIFO ---
mkdir -p "$TMP/sout" "$TMP/state/$(hostname)"
trace 777 -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 3 10
mv "$TMP/out/777" "$TMP/sout/777"
ln -s /proc/kmsg "$TMP/sout/777/a.dcnode"
mkfifo "$TMP/sout/777/b.dcnode"
cat >"$TMP/dc.conf" <<CONF
DC_OUTPUT_DIR=$TMP/sout
DC_STATE_DIR=$TMP/state
DC_MERGE=$DC_MERGE
DC_DUMP=$DC_DUMP
DC_MERGE_FORMAT=json
CONF
t0=$(date +%s)
timeout 120 env -u SLURM_JOB_NODELIST SLURM_JOB_ID=777 SLURM_JOB_UID=0 DC_SLURM_CONF="$TMP/dc.conf" \
	bash "$DC_SRC/slurm/dc-epilog" || fail "dc-epilog"
took=$(($(date +%s) - t0))
[ "$took" -lt 30 ] || fail "dc-epilog took $took s"
echo "ok: dc-epilog ended in $took s"
python3 -c "import json, sys; t = json.load(open(sys.argv[1])); assert t['otherData']['events'] > 0" "$TMP/sout/777.json" ||
	fail "the merged output"
echo "ok: the merge written beside the link and the FIFO"
