#!/usr/bin/env bash
# The optional kernel sets: block requests and page cache, attributed to
# the process that caused them.
. "$(dirname "$0")/lib.sh"

# Needs a block device under TMP (not tmpfs) for block requests.
[ "$(stat -f -c %T "$TMP")" != tmpfs ] || fail "TMP is on tmpfs: set TMPDIR to a disk-backed folder"
trace kio -p posix,block,pagecache -- "$DC_WORKLOADS/sync_write" "$TMP" 4
ino=$(stat -c %i "$TMP/sync.dat")
pid=$(field process pid kind start)

# Every page of the new file entered the cache once, through this process.
assert_eq "$(grep "func=page_cache_add " "$DUMP" | grep " ret=$ino " | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^bytes=/) s += substr($i, 7)} END {print s}')" \
	"4194304" "page cache bytes added for the file"
assert_eq "$(grep "^event .*level=pagecache" "$DUMP" | grep -vc " pid=$pid " || true)" "0" "page cache events of other processes"

# The 4 MiB went to disk in block requests this process issued: most in
# fsync, some maybe in write() already, when the kernel starts writeback.
bytes=$(calls block block_rq '' "$pid" | cut -d' ' -f3)
[ "$bytes" -ge 4194304 ] && [ "$bytes" -lt $((5 << 20)) ] || fail "block bytes $bytes"
echo "ok: $bytes bytes of block requests (4 MiB of data and the file system's metadata)"
inside=$(grep -E "func=(fsync|block_rq) " "$DUMP" | awk '
	{ for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	  printf "%.0f %.0f %s\n", kv["ts"], kv["ts"] + kv["dur"], kv["func"] }' | sort -n | awk '
	$3 == "fsync" { end = $2; next } { if ($1 <= end) in_++; else out++ } END { print in_ + 0, out + 0 }')
[ "$(echo "$inside" | cut -d' ' -f1)" -ge 1 ] || fail "no block request issued inside fsync ($inside)"
echo "ok: block requests inside and outside fsync: $inside"
assert_eq "$(grep "^event .*level=block" "$DUMP" | grep -vc " pid=$pid " || true)" "0" "block requests of other processes"
