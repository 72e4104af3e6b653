#!/usr/bin/env bash
# tools/run.sh: sets up everything umemcg needs on a Debian 12 machine (packages, configure,
# build) and runs one job:
#   bash tools/run.sh main     the main job: the seed scenarios with their tables
#                              (`umemcg scenario run all`), then the benchmark summary
#   bash tools/run.sh tests    the test suite; ends with a line "N passed, N failed"
#   bash tools/run.sh build    set up and build only
# Environment: BUILD_DIR (default build), MESON_ARGS (extra `meson setup` arguments),
# UMEMCG_SKIP_APT=1 to skip the package step, TEST_JOBS (test processes at once; default: CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(meson ninja-build pkg-config g++ clang clang-19 llvm-19 libclang-rt-14-dev libclang-rt-19-dev
          liburcu-dev libjemalloc-dev catch2 libbenchmark-dev libabsl-dev libelf-dev
          libbpf-dev nlohmann-json3-dev python3 valgrind
          libbenchmark-tools python3-scipy)  # compare.py's library: tools/ab_report.py and its test

setup_packages() {
  [ "${UMEMCG_SKIP_APT:-0}" = 1 ] && return 0
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

BUILD_DIR=${BUILD_DIR:-build}

setup_build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    # shellcheck disable=SC2086
    meson setup "$BUILD_DIR" ${MESON_ARGS:-} >/dev/null
  fi
  ninja -C "$BUILD_DIR" >&2
}

# Runs every Catch2 test executable; prints one line per executable and the closing count.
# TEST_JOBS processes run at once (default: the number of CPUs). An executable with at least
# 8 source files is split into TEST_JOBS shards by file (Catch2's -# file tags, hidden tests
# excluded as Catch2 excludes them by default); the shards' counts must add up to the
# executable's whole list, or the executable counts as one failure.
run_tests() {
  local jobs=${TEST_JOBS:-$(nproc)} tmp exe name out line p f rc i n k
  local -a exes=() specs=() outs=() files=()
  tmp=$(mktemp -d)
  for exe in "$BUILD_DIR"/test/*/test-*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    exes+=("$exe")
  done
  # One job per shard: "EXE<TAB>SPEC" (an empty SPEC runs the whole executable).
  local -a job_exe=() job_spec=()
  for exe in "${exes[@]}"; do
    mapfile -t files < <("$exe" -# --list-tags 2>/dev/null | sed -n 's/^ *[0-9]* *\(\[#[^]]*\]\)$/\1/p')
    if [ "$jobs" -gt 1 ] && [ "${#files[@]}" -ge 8 ]; then
      specs=()
      for ((i = 0; i < ${#files[@]}; i++)); do
        k=$((i % jobs))
        specs[k]="${specs[k]:+${specs[k]},}${files[i]}~[.]"
      done
      for k in "${!specs[@]}"; do job_exe+=("$exe"); job_spec+=("${specs[k]}"); done
    else
      job_exe+=("$exe"); job_spec+=("")
    fi
  done
  n=${#job_exe[@]}
  for ((i = 0; i < n; i++)); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    (
      if [ -n "${job_spec[i]}" ]; then "${job_exe[i]}" -# "${job_spec[i]}" >"$tmp/$i.out" 2>&1
      else "${job_exe[i]}" >"$tmp/$i.out" 2>&1; fi
      echo $? >"$tmp/$i.rc"
    ) &
  done
  wait
  local passed=0 failed=0 ep ef listed
  for exe in "${exes[@]}"; do
    ep=0 ef=0
    for ((i = 0; i < n; i++)); do
      [ "${job_exe[i]}" = "$exe" ] || continue
      out=$(cat "$tmp/$i.out"); rc=$(cat "$tmp/$i.rc" 2>/dev/null || echo 1)
      line=$(printf '%s\n' "$out" | grep -E "^(All tests passed|test cases:)" | tail -1 || true)
      if [[ $line =~ ^All\ tests\ passed\ \(([0-9]+)\ assertions?\ in\ ([0-9]+)\ test\ cases?\) ]]; then
        p=${BASH_REMATCH[2]}; f=0
      elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ passed\ \|\ +([0-9]+)\ failed ]]; then
        p=${BASH_REMATCH[2]}; f=${BASH_REMATCH[3]}
      elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ failed ]]; then
        p=0; f=${BASH_REMATCH[2]}
      else
        p=0; f=1  # crashed or printed no summary
      fi
      if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
      if [ "$f" -ne 0 ]; then printf '%s\n' "$out" | tail -60 >&2; fi
      ep=$((ep + p)); ef=$((ef + f))
    done
    # (Catch2 v2's list commands exit with the number of entries listed.)
    listed=$({ "$exe" --list-test-names-only 2>/dev/null || true; } | sed '/^$/d' | wc -l)
    if [ "$ef" -eq 0 ] && [ "$ep" -ne "$listed" ]; then
      echo "$(basename "$exe"): its shards ran $ep of its $listed test cases" >&2
      ef=1
    fi
    echo "$(basename "$exe"): $ep passed, $ef failed" >&2
    passed=$((passed + ep)); failed=$((failed + ef))
  done
  rm -rf "$tmp"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

bench_summary() {
  local json="$BUILD_DIR/bench-summary.json"
  "$BUILD_DIR/bench/umemcg-bench" --benchmark_min_time=0.2 \
    --benchmark_out="$json" --benchmark_out_format=json
  # S6 and S7 are medians of interleaved repetitions: their rows again, 15 times each, in a
  # random order, so that the machine's drift falls on the compared rows alike.
  local reps="$BUILD_DIR/bench-s6s7.json"
  "$BUILD_DIR/bench/umemcg-bench" \
    --benchmark_filter='^BM_bpf_policy_stock_hit/|^BM_bpf_memcg_high_policy/|^BM_interp_alu_fast$' \
    --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true \
    --benchmark_min_time=0.05 --benchmark_out="$reps" --benchmark_out_format=json >/dev/null
  # S2 is the worst of eight ratios, so one disturbed row decides it: its rows again, 7 times
  # each, interleaved the same way.
  local reps_s2="$BUILD_DIR/bench-s2.json"
  "$BUILD_DIR/bench/umemcg-bench" \
    --benchmark_filter='^BM_floor_atomic_chain/|^BM_try_charge_memcg_stock_miss' \
    --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
    --benchmark_min_time=0.05 --benchmark_out="$reps_s2" --benchmark_out_format=json >/dev/null
  python3 tools/bench_ratios.py "$json" "$reps" "$reps_s2"
  # S1 and S2 in instructions (callgrind): exact and repeatable where times are not; and the
  # instructions of S7's dispatch.
  python3 tools/insn_check.py --insn "$BUILD_DIR/bench/umemcg-insn"
  # The conformance plugin process on the same interpreter loops (S5: the same speed).
  python3 tools/plugin_speed.py --plugin "$BUILD_DIR/tools/umemcg-bpf-plugin"
}

job=${1:-}
case "$job" in
  main)
    setup_packages; setup_build
    # The seed experiments' tables (docs/scenarios.md); a verdict not met is the job's status,
    # after the benchmark summary has been printed too.
    scenario_rc=0
    "$BUILD_DIR/tools/umemcg" scenario run all --jobs 2 --json "$BUILD_DIR/scenarios.json" \
      --trace "$BUILD_DIR/scenarios.trace.json" --plot "$BUILD_DIR/scenarios.svg" || scenario_rc=$?
    bench_summary
    exit "$scenario_rc" ;;
  tests)
    setup_packages; setup_build
    run_tests ;;
  build)
    setup_packages; setup_build ;;
  *)
    echo "usage: bash tools/run.sh main|tests|build" >&2
    exit 2 ;;
esac
