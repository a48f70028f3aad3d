#!/usr/bin/env bash
# The stdio uprobe sets: 10 files written and read back through FILE
# streams; the standard streams named by the files behind their
# descriptors.
. "$(dirname "$0")/lib.sh"

trace stdio -p posix,stdio,syscalls -- "$DC_WORKLOADS/stdio_files" "$TMP" 10

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
trace streams -p posix,stdio,syscalls -- bash -c '"$1" "$2" popen >"$2/out.log" 2>>"$2/err.log"' sh "$DC_WORKLOADS/stdio_streams" "$TMP"
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
o="^$TMP/out\\.log\$" t="^$TMP/text\\.txt\$"
assert_eq "$(calls stdio printf "$o") / $(calls stdio puts "$o") / $(calls stdio vprintf "$o")" "1 0 9 / 1 6 6 / 1 0 2" \
	"printf, puts (with its newline) and vprintf, on the standard output's file"
assert_eq "$(calls stdio fputs "$t")" "1 6 6" "fputs: its text's length"
assert_eq "$(calls stdio fgets "$t")" "2 6 6" "fgets: the line it read, and none at the end"
# The C library's pclose is fclose: each on its pipe, the close after the
# shell's cats have taken the pipe's freed struct file again and again.
assert_eq "$(calls stdio fputs '^pipe:\[[0-9]+\]$') / $(calls stdio fclose '^pipe:\[[0-9]+\]$')" "5 30 30 / 5 0 0" \
	"fputs and pclose on streams popen made, each named by its pipe"
assert_eq "$(grep -Ec ' func=(fputc|putc|fgetc|getc|getchar|putchar) ' "$DUMP" || true)" "0" \
	"one-character calls only with the stdio-chars set"
assert_eq "$(grep ' level=stdio ' "$DUMP" | grep -c ' path=$' || true)" "0" "no stream call without its file"
# A stream is one file from its fopen to its fclose, named as the kernel
# names it (bash's fopen of glibc's locale.alias, a symbolic link where
# there is one, names the file the link leads to, as its fclose does).
# (The program's own: the cats its popen runs make calls of their own.)
me=$(field event pid func freopen)
paths() { grep " pid=$me .* level=stdio func=$1 " "$DUMP" | sed 's/.* path=//' | grep -v '^pipe:' | sort -u | tr '\n' ' '; }
assert_eq "$(paths fopen)" "$(paths fclose)" "the files of fopen and of fclose"
assert_eq "$(lost_events)" "0" "lost events"

# The one-character calls: a byte each, none at the end; getc is fgetc's
# other name (one address: one probe, under the first name).
trace chars -p stdio-chars -- bash -c '"$1" "$2" >"$2/out.log" 2>>"$2/err.log"' sh "$DC_WORKLOADS/stdio_streams" "$TMP"
assert_eq "$(calls stdio fputc "$t") / $(calls stdio putc "$t")" "1 1 1 / 1 1 1" "fputc and putc"
assert_eq "$(calls stdio fgetc "$t")" "3 3 2" "fgetc and getc: a byte each, none at the end"
assert_eq "$(calls stdio getchar "$l") / $(calls stdio putchar "$o")" "1 1 1 / 1 1 1" \
	"getchar and putchar, on the standard input's and output's files"

# A program built with _FORTIFY_SOURCE calls the checking forms, each on
# its file with its bytes (the build is checked: the test proves nothing
# of a program that calls the plain forms).
W="$DC_WORKLOADS/stdio_fortified"
for s in __fprintf_chk __vfprintf_chk __printf_chk __fgets_chk __fread_chk; do
	nm -D --undefined-only "$W" | grep -qw "$s" || fail "stdio_fortified does not call $s: not built fortified"
done
trace fortified -p stdio -- bash -c '"$1" "$2" >"$2/fort.log"' sh "$W" "$TMP"
f="^$TMP/fort_0\\.txt\$" o="^$TMP/fort\\.log\$"
assert_eq "$(calls stdio __fprintf_chk "$f") / $(calls stdio __vfprintf_chk "$f")" "1 0 4 / 1 0 4" \
	"__fprintf_chk and __vfprintf_chk on the file"
assert_eq "$(calls stdio __fgets_chk "$f") / $(calls stdio __fread_chk "$f")" "1 4 4 / 1 4 4" \
	"__fgets_chk (its line) and __fread_chk (asked and moved)"
assert_eq "$(calls stdio __printf_chk "$o") / $(calls stdio __vfprintf_chk "$o")" "1 0 4 / 1 0 5" \
	"__printf_chk, and vprintf as __vfprintf_chk, on the standard output's file"
assert_eq "$(grep ' level=stdio ' "$DUMP" | grep -c ' path=$' || true)" "0" "no stream call without its file"
