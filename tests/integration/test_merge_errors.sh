#!/usr/bin/env bash
# dc-merge on bad input: a clear message, no partial output, no crash.
. "$(dirname "$0")/lib.sh"

trace good -- "$DC_WORKLOADS/posix_write" "$TMP" 300 100
cd "$TMP"
job="$TMP/out/good"

expect() { # what text exit command...
	local what=$1 text=$2 want=$3 rc=0
	shift 3
	"$@" >"$TMP/o.txt" 2>"$TMP/e.txt" || rc=$?
	assert_eq "$rc" "$want" "$what: exit status"
	assert_contains "$TMP/e.txt" "$text" "$what: message"
}

mkdir empty
expect "empty folder" "no node files (*.dcnode) in empty" 1 "$DC_MERGE" x -i empty
[ ! -e x.json ] || fail "output written for an empty folder"
expect "missing folder" "cannot open nope" 1 "$DC_MERGE" x -i nope
expect "bad format" "--format: expected json, json.gz, perfetto, hdf5, pfw or pfw.gz" 2 "$DC_MERGE" good -i "$job" -f xml
expect "bad ranks" "--ranks: expected a list" 2 "$DC_MERGE" good -i "$job" -r 3-1
expect "no ranks" "has no MPI ranks" 1 "$DC_MERGE" good -i "$job" -r 0
expect "output folder missing" "cannot open the folder no/dir" 1 "$DC_MERGE" good -i "$job" -o no/dir/x.json

# A device or a pipe is written to in place, never renamed over.
"$DC_MERGE" good -i "$job" -o /dev/null -q
[ -c /dev/null ] || fail "/dev/null is no longer a device"
mkfifo pipe
python3 "$DC_TOOLS/trace_summary.py" pipe >pipe.txt &
reader=$!
"$DC_MERGE" good -i "$job" -o pipe -q
wait "$reader" || fail "the JSON read from a pipe does not parse"
[ -p pipe ] || fail "the pipe was replaced"
assert_eq "$(grep '^posix write ' pipe.txt | cut -d' ' -f3)" "300" "writes through a pipe"
expect "hdf5 to a device" "/dev/null is a device, not a regular file: HDF5 output needs a regular file" 1 \
	"$DC_MERGE" good -i "$job" -f hdf5 -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"

# A file of another job in the folder is skipped, not mixed in.
cp "$NODEFILE" "$TMP/good.dcnode"
mkdir mixed
cp "$NODEFILE" mixed/a.dcnode
"$DC_AGENT" -o "$TMP/out" -j other -- true 2>/dev/null
cp "$TMP/out/other/"*.dcnode mixed/b.dcnode
expect "other job's file" "b.dcnode belongs to job other, not good; skipped" 0 "$DC_MERGE" good -i mixed -o mixed.json
python3 "$DC_TOOLS/trace_summary.py" mixed.json >mixed.txt
assert_eq "$(grep '^posix write ' mixed.txt | cut -d' ' -f3)" "300" "writes of the right job only"

# Killed agent: the file cut inside its last chunk merges up to there.
mkdir cut
head -c $(($(stat -c %s "$NODEFILE") - 100)) "$NODEFILE" >cut/n.dcnode
expect "truncated file" "merged up to its last whole chunk" 0 "$DC_MERGE" good -i cut -o cut.json
python3 "$DC_TOOLS/trace_summary.py" cut.json >/dev/null

# A corrupt event chunk is named and skipped; the rest merges.
mkdir bad
cp "$NODEFILE" bad/n.dcnode
off=$("$DC_DUMP" --chunks "$NODEFILE" | awk '$3 == "type=events" { sub("payload_offset=", "", $5); print $5 + 10; exit }')
[ -n "$off" ] || fail "no events chunk in $NODEFILE"
printf '\xff\xff\xff\xff' | dd of=bad/n.dcnode bs=1 seek="$off" conv=notrunc status=none
expect "corrupt chunk" "fails its checksum" 0 "$DC_MERGE" good -i bad -o bad.json
python3 "$DC_TOOLS/trace_summary.py" bad.json >/dev/null

# Not a node file at all.
mkdir junk
echo "hello" >junk/x.dcnode
expect "junk file" "not a DataCrumbs node file" 1 "$DC_MERGE" good -i junk
ls "$TMP" | grep -q '\.tmp\.' && fail "temporary file left behind" || true
