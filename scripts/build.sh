#!/usr/bin/env bash
# Configures and builds into build/ (or $DC_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DC_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${DC_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
