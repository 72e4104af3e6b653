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
# -j, default 2), TSAN_JOBS (test cases run at once, default: the number of CPUs), TSAN_TIMEOUT
# (seconds per test case, default 300), TSAN_CASES_FILE (optional: run only the cases named in
# it, one per line; a run of the test binaries with UMEMCG_THREADED_CASES=FILE writes the cases
# that started OS threads there, see test/catch_main.cc: the others ran on one thread, as fibers
# synchronised at every switch, where ThreadSanitizer has nothing to find).
# Suppressions: tools/tsan.supp (each entry documented there). liburcu's grace periods are
# annotated in shim/rcu.cc rather than suppressed (see shim/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${1:-build-tsan}
SPEC=${2:-}
JOBS=${JOBS:-2}
TIMEOUT=${TSAN_TIMEOUT:-300}
TSAN_JOBS=${TSAN_JOBS:-$(nproc)}
TARGETS=(test/shim/test-shim test/kernel/test-kernel test/mm/test-mm)

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O2 with line tables only: reports keep function, file and line, and the build takes less
  # time than with full debug information.
  CC=clang CXX=clang++ meson setup "$BUILD_DIR" -Doptimization=2 -Ddebug=false \
    -Dc_args=-gline-tables-only -Dcpp_args=-gline-tables-only -Db_sanitize=thread \
    -Db_lundef=false -Djemalloc=disabled >/dev/null || {
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

# One case: runs it and writes "rc" into $2.rc and its output into $2.out.
run_case() {
  local out
  out=$(timeout "$TIMEOUT" "$1" "$(escape_name "$3")" 2>&1)
  echo $? >"$2.rc"
  printf '%s\n' "$out" >"$2.out"
}

tmp=$(mktemp -d)
passed=0
failed=0
for target in "${TARGETS[@]}"; do
  exe="$BUILD_DIR/$target"
  name=$(basename "$exe")
  p=0 f=0
  t0=$(date +%s)
  # --list-test-names-only prints one name per line (no wrapping).
  mapfile -t cases < <("$exe" --list-test-names-only ${SPEC:+"$SPEC"} | sed '/^$/d')
  all=${#cases[@]}
  if [ -n "${TSAN_CASES_FILE:-}" ]; then
    mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -Fxf "$TSAN_CASES_FILE")
    echo "$name: ${#cases[@]} of $all cases started OS threads ($TSAN_CASES_FILE)" >&2
  fi
  # TSAN_JOBS cases at once, each in its own process.
  for i in "${!cases[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$TSAN_JOBS" ]; do wait -n || true; done
    run_case "$exe" "$tmp/$i" "${cases[i]}" &
  done
  wait
  for i in "${!cases[@]}"; do
    c=${cases[i]}
    rc=$(cat "$tmp/$i.rc" 2>/dev/null || echo 1)
    if [ "$rc" -eq 0 ] && grep -q '^All tests passed' "$tmp/$i.out"; then
      p=$((p + 1))
      continue
    fi
    f=$((f + 1))
    why="exit $rc"
    [ "$rc" -eq 66 ] && why="ThreadSanitizer report"
    [ "$rc" -eq 124 ] && why="timeout after ${TIMEOUT}s"
    echo "---- $name: FAILED ($why): $c" >&2
    # What CI keeps of a log is its end: each report's one-line summary first, then the reports
    # without the C++ library's frames and build ids, cut at 150 lines.
    grep -E '^SUMMARY: ThreadSanitizer' "$tmp/$i.out" | sort | uniq -c >&2
    grep -vE '^ +#[0-9]+ .*(/include/c\+\+/|/lib/gcc/)' "$tmp/$i.out" |
      sed -E 's/ \(BuildId: [0-9a-f]+\)//' | head -150 >&2
  done
  rm -f "$tmp"/*
  echo "$name: test cases: $((p + f)) | $p passed | $f failed ($(( $(date +%s) - t0 )) s)" >&2
  passed=$((passed + p))
  failed=$((failed + f))
done
rm -rf "$tmp"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
