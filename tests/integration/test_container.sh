#!/usr/bin/env bash
# A job in a container root of its own: its libc is another file than the
# node's (Debian's libc6, copied from the package's file list), entered with
# unshare as a container runtime does (its own mount and pid namespaces).
# The uprobe sets reach the container's libc too, at the same exact counts
# as on the node's (test_stdio.sh), from each process's first call.
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || fail "unshare (util-linux) is needed"
root=$TMP/root
mkdir -p "$root/bin" "$root/a" "$root/b"
# Debian's libc6, as its package lists it: the loader, libc and the rest.
# Its folders are made real ones (the node's /lib may be a link to /usr/lib).
dpkg -L libc6 | while read -r f; do
	[ -d "$f" ] || [ ! -e "$f" ] || { mkdir -p "$root${f%/*}" && cp -P "$f" "$root$f"; }
done
cp "$DC_WORKLOADS/stdio_files" "$root/bin/"
node_libc=$(ldd "$DC_WORKLOADS/stdio_files" | awk '$1 == "libc.so.6" { print $3 }')
[ -n "$node_libc" ] || fail "the workload's libc.so.6 not found by ldd"
assert_eq "$(ldd "$DC_WORKLOADS/stdio_files" | grep -c '=> /')" "1" "the workload needs libc alone"
[ "$(stat -Lc %d:%i "$node_libc")" != "$(stat -Lc %d:%i "$root$node_libc")" ] ||
	fail "the container's libc is the node's file"

# Two processes, one after the other, each its own pid namespace: the first
# stops once for the agent to probe the container's libc, the second finds
# it probed (probed twice, each call would count twice).
in_root() { echo unshare --mount --pid --fork --root="$root" /bin/stdio_files "$@"; }
trace container -v -p posix,stdio,syscalls -- bash -c "$(in_root /a 10) && $(in_root /b 5)"

assert_eq "$(grep -c "another file than the node's: probe set 'stdio'" "$TMP/container.err")" "1" \
	"the container's libc probed once for the stdio set"
assert_eq "$(grep -c "another file than the node's: probe set 'posix'" "$TMP/container.err")" "1" \
	"...and once for the posix set"
for d in a:10 b:5; do
	dir=${d%:*} n=${d#*:}
	f="^/$dir/stdio_[0-9]+\\.txt\$"
	assert_eq "$(calls stdio fopen "$f")" "$((2 * n)) 0 0" "/$dir: fopen, named as the container sees the file"
	assert_eq "$(calls stdio fclose "$f")" "$((2 * n)) 0 0" "/$dir: fclose"
	assert_eq "$(calls stdio fwrite "$f")" "$n $((100 * n)) $((100 * n))" "/$dir: fwrite: 4 items of 25 bytes each time"
	assert_eq "$(calls stdio fread "$f")" "$n $((100 * n)) $((100 * n))" "/$dir: fread of 100 bytes"
	assert_eq "$(calls syscall openat "$f")" "$((2 * n)) 0 0" "/$dir: openat system calls under fopen"
	assert_eq "$(calls posix write "$f")" "$n $((100 * n)) $((100 * n))" "/$dir: libc writes flushed by fclose"
	assert_eq "$(calls syscall write "$f")" "0 0 0" "/$dir: no write reported twice"
done
assert_eq "$(lost_events)" "0" "lost events"

# The same root through an overlay, as Podman and Docker give an image: its
# upper layer on another file system (a tmpfs), so that the overlay's own
# inodes, which the processes' descriptors hold, have other numbers than
# stat shows; the probes go on the layer's file that the mappings hold.
mkdir -p "$TMP/upper" "$TMP/merged"
mount -t tmpfs tmpfs "$TMP/upper"
trap 'umount "$TMP/merged" 2>/dev/null || true; umount "$TMP/upper" 2>/dev/null || true; cleanup_tmp' EXIT
mkdir -p "$TMP/upper/u" "$TMP/upper/w"
mount -t overlay overlay -o "lowerdir=$root,upperdir=$TMP/upper/u,workdir=$TMP/upper/w" "$TMP/merged"
trace overlay -v -p posix,stdio,syscalls -- unshare --mount --pid --fork --root="$TMP/merged" /bin/stdio_files /a 4
f="^/a/stdio_[0-9]+\\.txt\$"
# The overlay's inode of a descriptor is in its fdinfo from Linux 5.14 on;
# before, the agent cannot tell the file mapped from what stat shows, and
# leaves it unprobed rather than guess.
if grep -q '^ino:' /proc/self/fdinfo/0; then
	assert_eq "$(grep -c "another file than the node's: probe set 'stdio'" "$TMP/overlay.err")" "1" \
		"overlay: the image's libc probed once for the stdio set"
	assert_eq "$(calls stdio fwrite "$f") / $(calls stdio fopen "$f") / $(calls posix write "$f")" \
		"4 400 400 / 8 0 0 / 4 400 400" "overlay: fwrite, fopen and libc's write, each once"
else
	assert_eq "$(grep -c "another file than the node's" "$TMP/overlay.err") $(calls stdio fwrite "$f")" "0 0 0 0" \
		"overlay, no ino in fdinfo (before Linux 5.14): the image's libc not probed"
	assert_eq "$(calls syscall openat "$f")" "8 0 0" "...its system calls recorded"
fi
umount "$TMP/merged"

# The default sets record STDIO in libdcpreload.so, which the agent gives
# the command by its path on the node: inside the root there is none, and
# the agent says so and how to record STDIO there. POSIX is recorded.
trace defaults -- bash -c "$(in_root /a 3)"
assert_contains "$TMP/defaults.err" "runs on a libc of its own (a container's?) and could not preload" \
	"the preload missing inside, said"
assert_contains "$TMP/defaults.err" "-p posix,stdio,syscalls records them" "...with the fix"
assert_eq "$(calls posix write "^/a/stdio_[0-9]+\\.txt\$")" "3 300 300" "libc writes on the container's libc"

# What a job's process maps for execution is the job user's to choose: a
# FIFO (mmap refuses it, after the process stopped at its entry), then more
# files than the agent looks at, each named like libc (a file named like
# no set's library stops no one). Each stop ends, the agent opens nothing
# that blocks, and past its bound it stops no one and says so.
cat >"$TMP/maps.py" <<'PY'
import mmap, os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.mkfifo(d + "/libc-fifo.so")
fd = os.open(d + "/libc-fifo.so", os.O_RDWR)
try:
    mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
except OSError:
    pass
os.close(fd)
for i in range(n):
    with open("%s/libc-%d.so" % (d, i), "wb") as f:
        f.write(b"\0" * 4096)
    fd = os.open("%s/libc-%d.so" % (d, i), os.O_RDONLY)
    try:
        mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC).close()
    except OSError:
        pass
    os.close(fd)
print("mapped", n, file=sys.stderr)
PY
mkdir -p "$TMP/maps"
trace maps -v -p posix,stdio -- timeout 120 python3 "$TMP/maps.py" "$TMP/maps" 1100
assert_contains "$TMP/maps.err" "mapped 1100" "every mapping returned"
assert_contains "$TMP/maps.err" "more than 1024 library files in the job" "the bound, said"
assert_contains "$TMP/maps.err" "library files of the job's looked at, 0 probed" "none of them probed"
# Files named like no set's library (a program's plugins): none looked at,
# beyond what python3 itself makes the agent look at (none, where the
# node's libc is known by its inode: see the overlay above).
sed 's/libc-/plugin-/' "$TMP/maps.py" >"$TMP/plugins.py"
mkdir -p "$TMP/plugins" "$TMP/none"
trace none -v -p posix,stdio -- python3 "$TMP/plugins.py" "$TMP/none" 0
trace plugins -v -p posix,stdio -- python3 "$TMP/plugins.py" "$TMP/plugins" 200
assert_contains "$TMP/plugins.err" "mapped 200" "every mapping returned"
looked() { grep -o "[0-9]* library files of the job's looked at, 0 probed" "$1" | cut -d' ' -f1; }
assert_eq "$(looked "$TMP/plugins.err")" "$(looked "$TMP/none.err")" "plugins stop no one"
