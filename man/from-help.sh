#!/bin/sh
# from-help.sh TOOL SECTION SUMMARY: a man page made of TOOL --help, so that
# the manual and the help never disagree.
set -eu
tool=$1
section=$2
summary=$3
name=$(basename "$tool")
printf '.TH %s %s "" "DataCrumbs %s" "DataCrumbs"\n' "$(echo "$name" | tr a-z A-Z)" "$section" \
	"$("$tool" --version | grep -o '[0-9][0-9.]*[0-9]' | head -1)"
printf '.SH NAME\n%s \\- %s\n.SH DESCRIPTION\n.nf\n' "$name" "$summary"
"$tool" --help | sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"
printf '.fi\n.SH SEE ALSO\ndc-agent(8), dc-merge(1), dc-summary(1), dc-dump(1); the README and docs/ of DataCrumbs.\n'
