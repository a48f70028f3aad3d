#!/usr/bin/env bash
# dc-merge --stitch as root against a hostile job user: a parts folder that
# user can change (or one inside a folder they can change) is refused,
# since the stitched file reads its events from the parts; a part that is a
# FIFO or a symbolic link is named and left out, never waited on or
# followed; the same for Perfetto parts and their stamps.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}"

evil=dcevil
id "$evil" >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin "$evil"

trace pj -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 10 100
job=$TMP/out/pj
mkdir -p "$TMP/root"
"$DC_MERGE" pj -i "$job" -f hdf5 --part 0/1 --parts "$TMP/root/pj.parts" -q
"$DC_MERGE" pj -i "$job" -f hdf5 --stitch --parts "$TMP/root/pj.parts" -o "$TMP/root/pj.h5" -q ||
	fail "the stitch of root's own parts"
echo "ok: root stitches parts in a folder of its own"

# A parts folder the job's user owns, or one in a folder they own.
cp -a "$TMP/root/pj.parts" "$TMP/evil.parts"
chown -R "$evil" "$TMP/evil.parts"
expect_fail "a parts folder another user owns" "as root, dc-merge stitches only parts in a folder that no other user can change" \
	"$DC_MERGE" pj -i "$job" -f hdf5 --stitch --parts "$TMP/evil.parts" -o "$TMP/root/e.h5"
mkdir -p "$TMP/evildir"
chown "$evil" "$TMP/evildir"
cp -a "$TMP/root/pj.parts" "$TMP/evildir/pj.parts"
expect_fail "a parts folder in a folder another user owns" "$TMP/evildir can be changed by another user" \
	"$DC_MERGE" pj -i "$job" -f hdf5 --stitch --parts "$TMP/evildir/pj.parts" -o "$TMP/root/e.h5"
[ ! -e "$TMP/root/e.h5" ] || fail "a stitched file was written from refused parts"

# left_out WHAT TEXT FORMAT PARTS OUT: the stitch ends at once, exit 3 (a
# node left out), naming why.
left_out() {
	local rc=0
	timeout 10 "$DC_MERGE" pj -i "$job" -f "$3" --stitch --parts "$4" -o "$5" 2>"$TMP/err.txt" || rc=$?
	assert_eq "$rc" "3" "$1: the stitch ends, its node left out (exit 3)"
	assert_contains "$TMP/err.txt" "$2" "$1: named"
}

# A part that is a FIFO or a link: named, left out, at once.
mkdir "$TMP/root/fifo.parts"
mkfifo "$TMP/root/fifo.parts/node-00000.h5"
left_out "a FIFO for a part" "node-00000.h5 is not a regular file (a FIFO)" hdf5 "$TMP/root/fifo.parts" "$TMP/root/f.h5"
mkdir "$TMP/root/link.parts"
ln -s "$TMP/root/pj.parts/node-00000.h5" "$TMP/root/link.parts/node-00000.h5"
left_out "a link for a part" "node-00000.h5 is a symbolic link: not followed" hdf5 "$TMP/root/link.parts" "$TMP/root/l.h5"

# Perfetto: a part and a stamp that are FIFOs.
"$DC_MERGE" pj -i "$job" -f perfetto --part 0/1 --parts "$TMP/root/pf.parts" -q
mv "$TMP/root/pf.parts/node-00000.pftrace.part" "$TMP/stamp.keep"
mkfifo "$TMP/root/pf.parts/node-00000.pftrace.part"
left_out "a FIFO for a Perfetto part's stamp" "node-00000.pftrace.part is not a regular file (a FIFO)" perfetto \
	"$TMP/root/pf.parts" "$TMP/root/p.pftrace"
rm "$TMP/root/pf.parts/node-00000.pftrace.part"
mv "$TMP/stamp.keep" "$TMP/root/pf.parts/node-00000.pftrace.part"
rm "$TMP/root/pf.parts/node-00000.pftrace"
mkfifo "$TMP/root/pf.parts/node-00000.pftrace"
left_out "a FIFO for a Perfetto part" "node-00000.pftrace is not a regular file (a FIFO)" perfetto \
	"$TMP/root/pf.parts" "$TMP/root/p2.pftrace"
