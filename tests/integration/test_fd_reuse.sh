#!/usr/bin/env bash
# An fd or FILE * reused after a close names what it is now: the pipe that
# gets the closed file's fd number, and the stream fdopen makes of it at
# the closed stream's address, are named pipe:[INODE], as the kernel names
# the pipe. The calls on the file itself keep its path, close and fclose
# included. libc's write, read and close are thin wrappers,
# observed at their system calls: the close that fclose makes through an
# inner entry point of libc is seen too.
. "$(dirname "$0")/lib.sh"

trace reuse -- "$DC_WORKLOADS/fd_reuse" "$TMP"

f="^$TMP/fd_reuse\\.dat\$"
p='^pipe:\[[0-9]+\]$'
for level in posix; do
	assert_eq "$(calls $level write "$f")" "2 8 8" "$level writes on the file: its own 4 bytes and the stream's 4"
	assert_eq "$(calls $level write "$p")" "2 8 8" "$level writes on the pipe, named as the pipe"
	assert_eq "$(calls $level read "$p")" "2 8 8" "$level reads on the pipe, named as the pipe"
	assert_eq "$(calls $level read "$f" | cut -d' ' -f1)" "0" "$level reads named by the closed file"
done
assert_eq "$(calls posix close "$f" | cut -d' ' -f1)" "2" "closes of the file: open's fd, then fopen's"
assert_eq "$(calls posix close "$p" | cut -d' ' -f1)" "2" "closes of the pipe's two ends"
assert_eq "$(calls syscall close . | cut -d' ' -f1)" "0" "no close reported twice"
assert_eq "$(calls stdio fputs "$f" | cut -d' ' -f1)" "1" "fputs on the file's stream"
assert_eq "$(calls stdio fputs "$p" | cut -d' ' -f1)" "1" "fputs on the pipe's stream, at the same address"
assert_eq "$(calls stdio fclose "$f" | cut -d' ' -f1)" "1" "fclose of the file's stream"
assert_eq "$(calls stdio fclose "$p" | cut -d' ' -f1)" "1" "fclose of the pipe's stream"
assert_eq "$(lost_events)" "0" "lost events"
