#!/usr/bin/env bash
# 10 files written and read back through FILE streams; the standard
# streams named by the files behind their descriptors.
. "$(dirname "$0")/lib.sh"

trace stdio -- "$DC_WORKLOADS/stdio_files" "$TMP" 10

f="^$TMP/stdio_[0-9]+\\.txt\$"
assert_eq "$(calls stdio fopen "$f")" "20 0 0" "fopen, named by the file it opened"
assert_eq "$(calls stdio fclose "$f")" "20 0 0" "fclose (path carried from fopen)"
assert_eq "$(calls stdio fwrite "$f")" "10 1000 1000" "fwrite: 4 items of 25 bytes each time"
assert_eq "$(calls stdio fread "$f")" "10 1000 1000" "fread of 100 bytes"
assert_eq "$(calls syscall openat "$f")" "20 0 0" "openat system calls under fopen"
# fclose flushes the buffered 100 bytes: one libc write, seen at its system call.
assert_eq "$(calls posix write "$f")" "10 1000 1000" "libc writes flushed by fclose"
assert_eq "$(calls syscall write "$f")" "0 0 0" "no write reported twice"
assert_eq "$(lost_events)" "0" "lost events"

# Streams no fopen of the program's made: stdout and stderr sent to files,
# and a file read through freopen over stdin.
trace streams -- bash -c '"$1" "$2" >"$2/out.log" 2>>"$2/err.log"' sh "$DC_WORKLOADS/stdio_streams" "$TMP"
# gcc makes the program's fprintf(stdout, "done\n") an fwrite.
assert_eq "$(calls stdio fwrite "^$TMP/out\\.log\$")" "1 5 5" "a write to stdout, named by the file behind it"
assert_eq "$(calls stdio fwrite "^$TMP/err\\.log\$")" "1 5 5" "fwrite to stderr, named by the file behind it"
l="^$TMP/lines\\.txt\$"
assert_eq "$(calls stdio freopen "$l")" "1 0 0" "freopen over stdin"
assert_eq "$(calls stdio __isoc99_fscanf "$l" | cut -d' ' -f1)" "1" "fscanf"
# glibc's <stdio.h> inlines getline as a call of getdelim (optimized builds).
assert_eq "$(calls stdio getdelim "$l")" "2 0 10" "getline, as getdelim: the rest of a line and the next"
assert_eq "$(calls stdio rewind "$l" | cut -d' ' -f1) $(calls stdio fgetpos "$l" | cut -d' ' -f1) $(calls stdio fsetpos "$l" | cut -d' ' -f1)" \
	"1 1 1" "rewind, fgetpos, fsetpos"
assert_eq "$(calls stdio fprintf "$l")" "1 0 15" "fprintf to a file"
assert_eq "$(grep ' level=stdio ' "$DUMP" | grep -c ' path=$' || true)" "0" "no stream call without its file"
# A stream is one file from its fopen to its fclose, named as the kernel
# names it (bash's fopen of glibc's locale.alias, a symbolic link where
# there is one, names the file the link leads to, as its fclose does).
paths() { grep " level=stdio func=$1 " "$DUMP" | sed 's/.* path=//' | sort -u | tr '\n' ' '; }
assert_eq "$(paths fopen)" "$(paths fclose)" "the files of fopen and of fclose"
assert_eq "$(lost_events)" "0" "lost events"
