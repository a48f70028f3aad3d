#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB, prefix /usr), installs it, traces
# the quickstart's workload with the installed tools only, checks the man
# pages, the probe sets and the module file, then purges the package and
# checks that nothing of it is left. As root, after scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DC_DEB_BUILD_DIR:-build-deb}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/datacrumbs_*.deb | head -1)
echo "test-deb: $deb ($(du -h "$deb" | cut -f1))"
fail() { echo "test-deb: FAIL: $*" >&2; dpkg --purge datacrumbs >/dev/null 2>&1 || true; exit 1; }

dpkg -i "$deb" >/dev/null || fail "dpkg -i"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in /usr/sbin/dc-agent /usr/bin/dc-merge /usr/bin/dc-summary /usr/bin/dc-dump \
	/usr/share/datacrumbs/probes/posix.yaml /usr/libexec/datacrumbs/dc-prolog \
	/usr/share/datacrumbs/modulefiles/datacrumbs; do
	[ -e "$t" ] || fail "$t not installed"
done
pmpi=$(dpkg -L datacrumbs | grep '/libdcpmpi\.so$' | head -1)
[ -n "$pmpi" ] && [ -e "$pmpi" ] || fail "libdcpmpi.so not installed"
sed "s|\$prefix|/usr|" /usr/share/datacrumbs/modulefiles/datacrumbs | grep -q "setenv DC_PMPI $pmpi" ||
	fail "the module file's DC_PMPI is not $pmpi"
preload=$(dpkg -L datacrumbs | grep '/libdcpreload\.so$' | head -1)
[ -n "$preload" ] && [ -e "$preload" ] || fail "libdcpreload.so not installed"
sed "s|\$prefix|/usr|" /usr/share/datacrumbs/modulefiles/datacrumbs | grep -q "setenv DC_PRELOAD $preload" ||
	fail "the module file's DC_PRELOAD is not $preload"
man -w dc-merge >/dev/null && man -w dc-agent >/dev/null || fail "man pages"
# The installed agent, probe sets found under /usr/share, nothing from the source tree.
(cd "$work" && /usr/sbin/dc-agent -o "$work/out" -j deb -p posix -- /usr/libexec/datacrumbs/examples/posix_write "$work" 100 4096) \
	2>"$work/agent.err" || { cat "$work/agent.err"; fail "the installed dc-agent"; }
/usr/bin/dc-merge deb -i "$work/out/deb" -o "$work/deb.json" -q || fail "the installed dc-merge"
# The installed preload library, for a process that is no MPI rank.
(cd "$work" && /usr/sbin/dc-agent -o "$work/out" -j pre -p stdio-wrapper -- env LD_PRELOAD="$preload" \
	/usr/libexec/datacrumbs/examples/stdio_files "$work" 7) 2>"$work/pre.err" || { cat "$work/pre.err"; fail "the installed preload"; }
n=$(/usr/bin/dc-dump "$work/out/pre"/*.dcnode | grep -c ' level=stdio func=fwrite ' || true)
[ "$n" = 7 ] || fail "the installed preload recorded $n fwrites, not 7"
/usr/bin/dc-summary deb -i "$work/out/deb" --format json >"$work/sum.json" || fail "the installed dc-summary"
python3 -c "
import json, sys
d = json.load(open('$work/sum.json'))
w = [f for f in d['functions'] if f['function'] == 'write'][0]
assert (w['calls'], w['bytes']) == (100, 409600), w
print('test-deb: the installed tools traced 100 writes of 4 KiB')"
grep -q "prepend-path PATH \$prefix/bin" /usr/share/datacrumbs/modulefiles/datacrumbs && grep -q "^set prefix /usr$" /usr/share/datacrumbs/modulefiles/datacrumbs || fail "module file"

dpkg --purge datacrumbs >/dev/null || fail "dpkg --purge"
left=$(ls -d /usr/sbin/dc-agent /usr/bin/dc-merge /usr/share/datacrumbs /usr/libexec/datacrumbs 2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"
echo "test-deb: installed, used and purged cleanly"
