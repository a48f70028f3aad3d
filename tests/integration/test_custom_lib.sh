#!/usr/bin/env bash
# A library no shipped set knows, probed with `functions: all`.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/dctest.yaml" <<YAML
set: dctest
category: mylib
library: $DC_WORKLOADS/libdctest.so
functions: all
YAML
trace custom -p "$TMP/dctest.yaml" -- "$DC_WORKLOADS/custom_lib" 3 5

assert_eq "$(calls mylib dct_alpha '')" "3 0 0" "dct_alpha calls"
assert_eq "$(calls mylib dct_beta '')" "5 0 0" "dct_beta calls"
assert_eq "$(grep -c '^event .*level=mylib' "$DUMP")" "8" "calls of the library in all (the static helper is not exported)"
assert_eq "$(grep -E '^function .*level=mylib' "$DUMP" | sed 's/.*name=//; s/ .*//' | sort | tr '\n' ' ')" "dct_alpha dct_beta " "functions found in the dynamic symbol table"
