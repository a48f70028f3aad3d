#!/usr/bin/env bash
# Configures and builds into build/ (or $DC_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DC_BUILD_DIR:-build}
# Test hooks (common/test_hooks.h) only when scripts/test.sh asks for them.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDC_TEST_HOOKS="${DC_TEST_HOOKS:-OFF}" ${DC_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
