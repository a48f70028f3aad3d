#!/usr/bin/env bash
# Builds and runs the whole test suite: unit tests and, as root, the
# integration tests that load eBPF programs and run real workloads.
set -euo pipefail
cd "$(dirname "$0")/.."
DC_TEST_HOOKS=ON "$(dirname "$0")/build.sh"
cd "${DC_BUILD_DIR:-build}"
ctest --output-on-failure "$@"
