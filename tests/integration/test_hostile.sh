#!/usr/bin/env bash
# Root's dc-agent and dc-merge against a hostile user and awkward inputs:
# folders and files another user controls, FIFOs, a second agent, a flood,
# file names in UTF-8, with invalid bytes, control bytes or 300 bytes long,
# damaged chunks, and probe sets with duplicate keys or missing functions.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_SUMMARY:?set by ctest}" "${DC_REGISTER:?set by ctest}"

evil=dcevil
id "$evil" >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin "$evil"
evil_uid=$(id -u "$evil")
as_evil() { setpriv --reuid="$evil" --regid="$(id -g "$evil")" --clear-groups "$@"; }

trace good -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 10 100
job=$TMP/out/good

# --- 1. dc-merge's output in a folder another user controls ---
mkdir -p "$TMP/evil"
chown "$evil" "$TMP/evil"
expect_fail "output folder owned by another user" "can be changed by another user" \
	"$DC_MERGE" good -i "$job" -o "$TMP/evil/out.json"
mkdir -p "$TMP/mine"
ln -s /dev/null "$TMP/mine/link.json"
expect_fail "output that is a symlink" "is a symbolic link" "$DC_MERGE" good -i "$job" -o "$TMP/mine/link.json"
[ -L "$TMP/mine/link.json" ] || fail "the symlink was replaced"
mknod "$TMP/mine/blk" b 7 250
expect_fail "output that is a block device" "is not a regular file, a character device or a FIFO" \
	"$DC_MERGE" good -i "$job" -o "$TMP/mine/blk"
mkfifo "$job/good.json"
expect_fail "default output name (beside the node files) taken by a FIFO" \
	"name it with -o to write to it in place" "$DC_MERGE" good -i "$job"
rm "$job/good.json"
# A FIFO another user planted in a sticky shared folder: refused at once
# (it would hand them the trace, or hang root until they read).
mkdir -p "$TMP/shared"
chmod 1777 "$TMP/shared"
as_evil mkfifo -m 666 "$TMP/shared/good.json"
t0=$(date +%s)
expect_fail "another user's FIFO as the output" "is a FIFO of uid $evil_uid: dc-merge writes in place only into a FIFO or device that root or you own" \
	timeout 5 "$DC_MERGE" good -i "$job" -o "$TMP/shared/good.json"
[ $(($(date +%s) - t0)) -lt 4 ] || fail "dc-merge waited on another user's FIFO"
# Root's own FIFO: with no reader an error at once, with one the trace.
mkfifo "$TMP/mine/fifo.json"
expect_fail "a FIFO no one reads" "is a FIFO that no one read within 10 s" timeout 30 "$DC_MERGE" good -i "$job" -o "$TMP/mine/fifo.json"
cat "$TMP/mine/fifo.json" >"$TMP/fifo-read.json" &
reader=$!
timeout 10 "$DC_MERGE" good -i "$job" -o "$TMP/mine/fifo.json" -q || fail "dc-merge into a read FIFO"
wait "$reader"
python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$TMP/fifo-read.json" || fail "the FIFO's reader got no JSON"
echo "ok: root's own FIFO, read, gets the trace"
"$DC_MERGE" good -i "$job" -o - -q >"$TMP/stdout.json"
python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$TMP/stdout.json" || fail "-o - is not JSON"
echo "ok: -o - writes to standard output"

# --- 2. a job folder another user made ahead of the job ---
mkdir -p "$TMP/o2/taken"
chown "$evil" "$TMP/o2/taken"
chmod 777 "$TMP/o2/taken"
expect_fail "job folder made by another user" "belongs to uid $evil_uid, not to the job's user" \
	"$DC_AGENT" -o "$TMP/o2" -j taken -- true
assert_eq "$(ls -A "$TMP/o2/taken" | wc -l | tr -d ' ')" "0" "nothing written into it"

# --- 3. a symlink swapped in while the agent makes the job folder ---
touch "$TMP/victim"
chmod 600 "$TMP/victim"
mkdir -p "$TMP/o3"
( set +e; while :; do ln -sfn "$TMP/victim" "$TMP/o3/race" 2>/dev/null; rm -f "$TMP/o3/race" 2>/dev/null; done ) &
swapper=$!
for i in $(seq 8); do
	"$DC_AGENT" -o "$TMP/o3" -j race --uid "$evil_uid" -p posix -- true 2>/dev/null || true
	rm -rf "$TMP/o3/race" 2>/dev/null || true
done
kill "$swapper"
wait "$swapper" 2>/dev/null || true
assert_eq "$(stat -c %u "$TMP/victim")" "0" "the victim file still belongs to root"
assert_eq "$(stat -c %a "$TMP/victim")" "600" "and keeps its mode"
trace owned --uid "$evil_uid" -p posix -- true
assert_eq "$(stat -c '%u %a' "$TMP/out/owned")" "$evil_uid 750" "job folder given to the job's user"
assert_eq "$(stat -c '%u %a' "$NODEFILE")" "$evil_uid 600" "node file given to the job's user"

# --- 4. a FIFO named like a node file ---
mkfifo "$job/zz-fifo.dcnode"
timeout 10 "$DC_MERGE" good -i "$job" -o "$TMP/fifo.json" 2>"$TMP/err.txt" || fail "dc-merge with a FIFO in the folder"
assert_contains "$TMP/err.txt" "zz-fifo.dcnode is not a regular file (a FIFO); skipped" "dc-merge skips the FIFO"
timeout 10 "$DC_SUMMARY" good -i "$job" >/dev/null 2>"$TMP/err.txt" || fail "dc-summary with a FIFO in the folder"
assert_contains "$TMP/err.txt" "is not a regular file (a FIFO); skipped" "dc-summary skips the FIFO"
rm "$job/zz-fifo.dcnode"
# A link the job folder's owner puts there to another of root's node files
# (of a private run): skipped, never opened.
trace private -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 3 100
ln -s "$NODEFILE" "$job/zz-link.dcnode"
"$DC_MERGE" good -i "$job" -o "$TMP/link.json" 2>"$TMP/err.txt" || fail "dc-merge with a link in the folder"
assert_contains "$TMP/err.txt" "zz-link.dcnode is a symbolic link: not followed; skipped" "dc-merge skips the link"
grep -q '"private"' "$TMP/link.json" && fail "the linked node file was merged"
"$DC_SUMMARY" good -i "$job" >/dev/null 2>"$TMP/err.txt" || fail "dc-summary with a link in the folder"
assert_contains "$TMP/err.txt" "zz-link.dcnode is a symbolic link: not followed; skipped" "dc-summary skips the link"
rm "$job/zz-link.dcnode"

# --- 5. a second agent for the same job on the same node ---
sock=$TMP/two.sock
"$DC_AGENT" -o "$TMP/out" -j two --socket "$sock" --ready-file "$TMP/two.ready" --pid $$ 2>"$TMP/first.err" &
first=$!
for _ in $(seq 100); do [ -e "$TMP/two.ready" ] && break; sleep 0.1; done
expect_fail "second agent for the job" "another dc-agent (pid $first) already serves this job" \
	"$DC_AGENT" -o "$TMP/out" -j two --socket "$sock" -- true
[ -S "$sock" ] || fail "the first agent's socket was removed"
out=$(DC_JOB_ID=two "$DC_REGISTER" "$sock" 0 0 1 || true)
assert_eq "$out" "accepted" "the first agent still answers"
kill -TERM "$first"
wait "$first" || fail "first agent's exit status"
[ -e "$sock" ] && fail "socket left behind"
[ -e "$sock.lock" ] && fail "lock left behind"
echo "ok: the first agent cleaned up"

# --- 6. a flood: the control socket and SIGTERM still answered within 1 s ---
sock=$TMP/flood.sock
"$DC_AGENT" -o "$TMP/out" -j flood --socket "$sock" --ringbuf-mb 1 -p posix --match-env DC_FLOOD=1 \
	--ready-file "$TMP/flood.ready" 2>"$TMP/flood.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/flood.ready" ] && break; sleep 0.1; done
mkdir -p "$TMP/f"
DC_FLOOD=1 "$DC_WORKLOADS/stress" "$TMP/f" 2 4 4 0 >/dev/null &
work=$!
sleep 0.5
# Held for half a second, as a node that is busy elsewhere holds it: the
# ring buffer fills, and from then on it never empties.
kill -STOP "$agent"
sleep 0.5
kill -CONT "$agent"
sleep 0.5
t0=$(date +%s%N)
out=$(DC_JOB_ID=flood DC_FLOOD=1 timeout 5 "$DC_REGISTER" "$sock" 0 0 1 || true)
t1=$(date +%s%N)
assert_eq "$out" "accepted" "a registration during the flood"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "registration took $(((t1 - t0) / 1000000)) ms"
echo "ok: registration answered in $(((t1 - t0) / 1000000)) ms"
t0=$(date +%s%N)
kill -TERM "$agent"
wait "$agent" || true
t1=$(date +%s%N)
wait "$work"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "SIGTERM took $(((t1 - t0) / 1000000)) ms"
echo "ok: SIGTERM obeyed in $(((t1 - t0) / 1000000)) ms"
assert_contains "$TMP/flood.err" "events lost (ring buffer full)" "the flood overflowed the ring buffer"

# --- 7, 8, 9. file names: UTF-8, invalid bytes, 300 bytes, control bytes ---
mkdir -p "$TMP/n"
long=$(printf 'd%.0s' $(seq 150))
mkdir -p "$TMP/n/$long"
cat >"$TMP/names.py" <<'PY'
import os, sys
d = sys.argv[1].encode()
long = sys.argv[2].encode()
names = [b"caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80.dat", b"bad-\xff\xfe.dat", b"line\nforged\x1b[31mred.dat",
         long + b"/" + b"x" * 140 + b"-one.dat", long + b"/" + b"x" * 140 + b"-two.dat"]
for n in names:
    fd = os.open(d + b"/" + n, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"1234")
    os.close(fd)
PY
trace names -p posix -- python3 "$TMP/names.py" "$TMP/n" "$long"
"$DC_MERGE" names -i "$TMP/out/names" -o "$TMP/names.json" -q
"$DC_SUMMARY" names -i "$TMP/out/names" --format json --top 100000 >"$TMP/names-sum.json"
"$DC_SUMMARY" names -i "$TMP/out/names" --top 100000 >"$TMP/names-sum.txt"
python3 - "$TMP/n" "$long" "$TMP/names.json" "$TMP/names-sum.json" <<'PY' || fail "names in the JSON outputs"
import json, sys
d, long = sys.argv[1].encode(), sys.argv[2].encode()
want = {d + b"/" + n for n in [b"caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80.dat", b"bad-\xff\xfe.dat",
        b"line\nforged\x1b[31mred.dat", long + b"/" + b"x" * 140 + b"-one.dat", long + b"/" + b"x" * 140 + b"-two.dat"]}
def decode(s):
    return s.encode("utf-8", "surrogateescape")
trace = json.load(open(sys.argv[3]))
writes = {decode(e["args"]["path"]) for e in trace["traceEvents"]
          if e.get("ph") == "X" and e["name"] == "write" and "path" in e.get("args", {})}
assert want <= writes, ("merge", sorted(want - writes))
raw = open(sys.argv[3], "rb").read()
assert "café-€-😀.dat".encode() in raw, "UTF-8 not passed through"
assert b"\\udcff\\udcfe" in raw, "invalid bytes not escaped as \\udcXX"
summ = json.load(open(sys.argv[4]))
files = {decode(f["path"]) for f in summ["top_files_by_bytes"] if f["level"] == "posix"}
assert want <= files, ("summary", sorted(want - files))
print("ok: every name round-trips through dc-merge and dc-summary JSON")
PY
for f in "$TMP/names-sum.txt" "$DUMP"; do
	grep -q "$(printf '\033')" "$f" && fail "an ESC byte reached $(basename "$f")"
	grep -q '^forged' "$f" && fail "a forged line in $(basename "$f")"
	assert_contains "$f" 'line\x0aforged\x1b[31mred.dat' "control bytes escaped in $(basename "$f")"
done
assert_eq "$(grep -c -- "-one.dat\$" "$DUMP") $(grep -c -- "-two.dat\$" "$DUMP")" "3 3" "two long paths stay two (open, openat and write each)"

# --- 10. counts after a damaged chunk ---
trace dmg -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 20000 8
# The first events chunk, as the reader finds it: a payload byte flipped.
read -r off skipped <<<"$("$DC_DUMP" --chunks "$NODEFILE" | awk '$3 == "type=events" && $4 != "count=0" {
	sub("payload_offset=", "", $5); sub("count=", "", $4); print $5 + 100, $4; exit }')"
[ -n "$off" ] || fail "no events chunk in $NODEFILE"
byte=$(od -An -tu1 -j "$off" -N1 "$NODEFILE" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$NODEFILE" bs=1 seek="$off" conv=notrunc status=none
"$DC_MERGE" dmg -i "$TMP/out/dmg" -o "$TMP/dmg.json" 2>"$TMP/dmg.err" || fail "merge of a damaged file"
python3 - "$TMP/dmg.json" "$skipped" <<'PY' || fail "JSON counts after damage"
import json, sys
t = json.load(open(sys.argv[1]))
o, skipped = t["otherData"], int(sys.argv[2])
x = sum(1 for e in t["traceEvents"] if e.get("ph") == "X")
assert o["events"] == x, (o["events"], x)
assert o["events_skipped_damaged"] == skipped, (o["events_skipped_damaged"], skipped)
assert o["events_in_node_files"] == x + skipped, o
assert "checksum" in o["nodes"][0]["skipped_because"], o["nodes"][0]
print("ok: JSON says", x, "events written and", skipped, "skipped, and why")
PY
"$DC_SUMMARY" dmg -i "$TMP/out/dmg" --format json >"$TMP/dmg-sum.json" 2>/dev/null
assert_eq "$(python3 -c "import json; d = json.load(open('$TMP/dmg-sum.json')); print(d['events_skipped_damaged'], d['events'] == sum(f['calls'] for f in d['functions']))")" \
	"$skipped True" "dc-summary: skipped events reported, the rest counted"

# --- 11, 12. probe sets: duplicate keys, many missing functions ---
cat >"$TMP/dup.yaml" <<'YAML'
set: dup
library: libc.so.6
functions:
  - {name: write, fd: 1, fd: 2}
YAML
expect_fail "duplicate key" "dup.yaml:4: key 'fd' appears twice in this mapping" "$DC_AGENT" -o "$TMP/out" -p "$TMP/dup.yaml" -- true
python3 -c "
print('set: many\nlibrary: libc.so.6\nfunctions:')
for i in range(3000): print('  - nosuch_fn_%d' % i)
print('  - {name: write, fd: 1, bytes: 3, ret: bytes}')" >"$TMP/many.yaml"
trace many -p "$TMP/many.yaml" -- "$DC_WORKLOADS/posix_write" "$TMP" 10 100
assert_contains "$TMP/many.err" "3000 functions not found" "missing functions counted"
assert_contains "$TMP/many.err" "nosuch_fn_0, nosuch_fn_1" "and the first few named"
assert_eq "$(calls many write "")" "10 1000 1000" "the function found is traced"
