#!/usr/bin/env bash
# The optional kernel sets: block requests and page cache, attributed to
# the process that caused them.
. "$(dirname "$0")/lib.sh"

# Needs a block device under TMP (not tmpfs) for block requests.
[ "$(stat -f -c %T "$TMP")" != tmpfs ] || fail "TMP is on tmpfs: set TMPDIR to a disk-backed folder"
# Earlier tests' dirty pages written first: background writeback running
# during the test would write some of this file's pages from a flusher
# thread, on no process's behalf.
sync
trace kio -p posix,block,pagecache -- "$DC_WORKLOADS/sync_write" "$TMP" 4
ino=$(stat -c %i "$TMP/sync.dat")
pid=$(field process pid kind start)

# Every page of the new file entered the cache once, through this process.
assert_eq "$(grep "func=page_cache_add " "$DUMP" | grep " ret=$ino " | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^bytes=/) s += substr($i, 7)} END {print s}')" \
	"4194304" "page cache bytes added for the file"
assert_eq "$(grep "^event .*level=pagecache" "$DUMP" | grep -vc " pid=$pid " || true)" "0" "page cache events of other processes"

# Buffered: the block requests this process issued, in fsync (the
# writeback it starts) and maybe in write(). Not an exact count: in the
# kernel matrix's guests part of such a file (2 of 4 MiB at times) goes to
# the disk from a kernel thread, which is not the job's and not counted.
bytes=$(calls block block_rq '' "$pid" | cut -d' ' -f3)
[ "$bytes" -gt 0 ] && [ "$bytes" -lt $((5 << 20)) ] || fail "block bytes $bytes"
echo "ok: $bytes bytes of block requests (of 4 MiB of data, and the file system's metadata)"
inside=$(grep -E "func=(fsync|block_rq) " "$DUMP" | awk '
	{ for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	  printf "%.0f %.0f %s\n", kv["ts"], kv["ts"] + kv["dur"], kv["func"] }' | sort -n | awk '
	$3 == "fsync" { end = $2; next } { if ($1 <= end) in_++; else out++ } END { print in_ + 0, out + 0 }')
[ "$(echo "$inside" | cut -d' ' -f1)" -ge 1 ] || fail "no block request issued inside fsync ($inside)"
echo "ok: block requests inside and outside fsync: $inside"
assert_eq "$(grep "^event .*level=block" "$DUMP" | grep -vc " pid=$pid " || true)" "0" "block requests of other processes"

# Direct I/O (a new file): every byte goes to the disk from the process's
# own writes, exactly once, in requests attributed to it and issued inside
# those writes (fsync then writes only the file system's metadata).
mkdir "$TMP/direct"
trace kdirect -p posix,block -- "$DC_WORKLOADS/sync_write" "$TMP/direct" 4 direct
pid=$(field process pid kind start)
in_writes=$(grep -E "^event .* pid=$pid .*func=(write|block_rq) " "$DUMP" | awk '
	{ for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	  printf "%.0f %.0f %s %s\n", kv["ts"], kv["ts"] + kv["dur"], kv["func"], kv["bytes"] }' | sort -n | awk '
	$3 == "write" { end = $2; next } $1 <= end { n++; b += $4 } END { print n + 0, b + 0 }')
if [ "$(echo "$in_writes" | cut -d' ' -f2)" != 4194304 ]; then
	# What the kernel did instead, for the log: the writes, the requests.
	grep -E "^event .*func=(write|fsync|block_rq) " "$DUMP" >&2
	"$DC_DUMP" "$OUT"/*.dcn | grep -E "^(stat|lost)" >&2 || true
fi
assert_eq "$(echo "$in_writes" | cut -d' ' -f2)" "4194304" "direct I/O: block bytes issued inside the process's writes"
assert_eq "$(grep "^event .*level=block" "$DUMP" | grep -vc " pid=$pid " || true)" "0" "direct I/O: block requests of other processes"
# No run of a program skipped by the kernel (one's interrupt inside another).
for job in kio kdirect; do
	! grep -F "skipped the agent's programs" "$TMP/$job.err" || fail "$job: the kernel skipped programs"
done
echo "ok: no program run skipped"
