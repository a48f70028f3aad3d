#!/usr/bin/env bash
# Arguments of each kind of call: offsets, sizes, paths. libc's thin
# wrappers (read, pread, pwrite, lseek, fsync, close...) are observed once,
# at their system calls, under their libc names.
. "$(dirname "$0")/lib.sh"

trace mixed -- "$DC_WORKLOADS/mixed_io" "$TMP"

f="^$TMP/mixed\\.dat\$"
assert_eq "$(calls posix read "$f")" "1 50 50" "libc read"
assert_eq "$(calls posix fsync "$f")" "1 0 0" "libc fsync"
assert_eq "$(calls posix close "$f")" "1 0 0" "libc close"
for fn in read fsync close pwrite64 pread64 lseek; do
	assert_eq "$(calls syscall $fn "$f")" "0 0 0" "$fn not reported twice"
done
assert_eq "$(calls posix pwrite "$f")" "1 4096 4096" "libc pwrite"
assert_eq "$(calls posix pread "$f")" "1 1000 1000" "libc pread"
assert_eq "$(grep -E "level=posix func=pwrite .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=8192" "pwrite offset"
assert_eq "$(grep -E "level=posix func=lseek .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=100" "lseek offset"
assert_eq "$(grep -E "level=posix func=ftruncate .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=5000" "ftruncate length"
assert_eq "$(calls posix mkdir "^$TMP/sub\$")" "1 0 0" "libc mkdir"
assert_eq "$(calls posix rename "$f")" "1 0 0" "libc rename (path of the old name)"
assert_eq "$(calls posix unlink "^$TMP/sub/moved\\.dat\$")" "1 0 0" "libc unlink"
