#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# tools/tsan.sh: the ThreadSanitizer stage (targets R5): configures a clang TSan build in the
# given directory (default build-tsan), builds only the test executables it runs (test-shim,
# test-kernel, test-mm), runs every test case of each in its own process under TSan, and ends
# with the line
# "N passed, N failed" (one count per test case). A test case fails if Catch2 fails it, if it
# crashes, or if TSan reports anything while it runs (exit code 66, see TSAN_OPTIONS below).
#
#   bash tools/tsan.sh [BUILD_DIR] [CATCH_TEST_SPEC]
#
# CATCH_TEST_SPEC (optional) narrows the cases run, e.g. "[threads]". Environment: JOBS (ninja
# -j, default 2), TSAN_TIMEOUT (seconds per test case, default 300).
# Suppressions: tools/tsan.supp (each entry documented there). liburcu's grace periods are
# annotated in shim/rcu.cc rather than suppressed (see shim/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${1:-build-tsan}
SPEC=${2:-}
JOBS=${JOBS:-2}
TIMEOUT=${TSAN_TIMEOUT:-300}
TARGETS=(test/shim/test-shim test/kernel/test-kernel test/mm/test-mm)

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$BUILD_DIR" --buildtype=debugoptimized \
    -Db_sanitize=thread -Db_lundef=false -Djemalloc=disabled >/dev/null || {
    echo "tsan: meson setup failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  }
fi
# The tests load the clang-compiled BPF objects (test/progs): build them too.
mapfile -t PROGS < <(ninja -C "$BUILD_DIR" -t targets all | sed -n 's|^\(test/progs/[^:]*\.bpf\.o\): .*|\1|p')
if ! ninja -C "$BUILD_DIR" -j"$JOBS" "${TARGETS[@]}" "${PROGS[@]}" >&2; then
  echo "tsan: build failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# halt_on_error=0: a case runs to its end and every report in it is printed; exitcode=66 makes
# the process fail when there was any report. history_size=4 keeps older stacks of long stress
# cases restorable.
export TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp halt_on_error=0 exitcode=66 history_size=4 ${TSAN_OPTIONS:-}"

# Catch2 v2 test specs treat , [ ] \ specially: escape them to select one case by name.
escape_name() { printf '%s' "$1" | sed 's/[],[\\]/\\&/g'; }

passed=0
failed=0
for target in "${TARGETS[@]}"; do
  exe="$BUILD_DIR/$target"
  name=$(basename "$exe")
  p=0 f=0
  t0=$(date +%s)
  # --list-test-names-only prints one name per line (no wrapping).
  mapfile -t cases < <("$exe" --list-test-names-only ${SPEC:+"$SPEC"} | sed '/^$/d')
  for c in "${cases[@]}"; do
    out=$(timeout "$TIMEOUT" "$exe" "$(escape_name "$c")" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q '^All tests passed'; then
      p=$((p + 1))
      continue
    fi
    f=$((f + 1))
    why="exit $rc"
    [ "$rc" -eq 66 ] && why="ThreadSanitizer report"
    [ "$rc" -eq 124 ] && why="timeout after ${TIMEOUT}s"
    echo "---- $name: FAILED ($why): $c" >&2
    printf '%s\n' "$out" | head -150 >&2
  done
  echo "$name: test cases: $((p + f)) | $p passed | $f failed ($(( $(date +%s) - t0 )) s)" >&2
  passed=$((passed + p))
  failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
