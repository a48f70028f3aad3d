#!/usr/bin/env bash
# Arguments of each kind of call: offsets, sizes, paths, at both levels.
. "$(dirname "$0")/lib.sh"

trace mixed -- "$DC_WORKLOADS/mixed_io" "$TMP"

f="^$TMP/mixed\\.dat\$"
for level in posix syscall; do
	assert_eq "$(calls $level read "$f")" "1 50 50" "$level read"
	assert_eq "$(calls $level fsync "$f")" "1 0 0" "$level fsync"
	assert_eq "$(calls $level close "$f")" "1 0 0" "$level close"
done
assert_eq "$(calls posix pwrite "$f")" "1 4096 4096" "libc pwrite"
assert_eq "$(calls syscall pwrite64 "$f")" "1 4096 4096" "pwrite64 system call"
assert_eq "$(calls posix pread "$f")" "1 1000 1000" "libc pread"
assert_eq "$(calls syscall pread64 "$f")" "1 1000 1000" "pread64 system call"
assert_eq "$(grep -E "level=posix func=pwrite .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=8192" "pwrite offset"
assert_eq "$(grep -E "level=syscall func=lseek .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=100" "lseek offset"
assert_eq "$(grep -E "level=posix func=ftruncate .*path=$TMP/mixed.dat" "$DUMP" | grep -o 'offset=[0-9]*')" "offset=5000" "ftruncate length"
assert_eq "$(calls posix mkdir "^$TMP/sub\$")" "1 0 0" "libc mkdir"
assert_eq "$(calls posix rename "$f")" "1 0 0" "libc rename (path of the old name)"
assert_eq "$(calls posix unlink "^$TMP/sub/moved\\.dat\$")" "1 0 0" "libc unlink"
