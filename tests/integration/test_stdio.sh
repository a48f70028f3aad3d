#!/usr/bin/env bash
# 10 files written and read back through FILE streams.
. "$(dirname "$0")/lib.sh"

trace stdio -- "$DC_WORKLOADS/stdio_files" "$TMP" 10

f="^$TMP/stdio_[0-9]+\\.txt\$"
assert_eq "$(calls stdio fopen "$f")" "20 0 0" "fopen"
assert_eq "$(calls stdio fclose "$f")" "20 0 0" "fclose (path carried from fopen)"
assert_eq "$(calls stdio fwrite "$f")" "10 1000 1000" "fwrite: 4 items of 25 bytes each time"
assert_eq "$(calls stdio fread "$f")" "10 1000 1000" "fread of 100 bytes"
assert_eq "$(calls syscall openat "$f")" "20 0 0" "openat system calls under fopen"
# fclose flushes the buffered 100 bytes: one libc write, seen at its system call.
assert_eq "$(calls posix write "$f")" "10 1000 1000" "libc writes flushed by fclose"
assert_eq "$(calls syscall write "$f")" "0 0 0" "no write reported twice"
assert_eq "$(lost_events)" "0" "lost events"
