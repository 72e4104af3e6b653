#!/usr/bin/env bash
# tools/ab.sh: what did my change cost? Builds the working tree and a base revision side by side
# and compares their charge-path and dispatch benchmarks, and their instruction counts.
#
#   bash tools/ab.sh BASE [--reps N] [--filter REGEX] [--min-time SECONDS]
#
# BASE is any revision (HEAD, main~3, a commit id). The working tree is built as it is,
# uncommitted changes included, in $BUILD_DIR (default build, configured as tools/run.sh does
# when it does not exist yet). BASE is checked out in a detached git worktree, build-ab/base-src,
# and built in build-ab/base with the same compiler and MESON_ARGS; a later run against another
# revision checks that worktree out again and rebuilds incrementally. The report is printed and
# kept in build-ab/report.txt.
#
# Times: the benchmarks matching REGEX (default: the stock hit and miss at depths 1 and 3, uncharge,
# and the bpf_memcg_ops rows of targets S6 and S7) run N times (default 9) for each build,
# interleaved (base, work, work, base, ...) so that drift of the machine falls on both alike.
# tools/ab_report.py compares the two sets with Google Benchmark's own comparison library
# (compare.py's gbench.report, Debian's libbenchmark-tools): per benchmark the medians, the
# change, and the Mann-Whitney U test's p-value saying whether the difference is real.
# build-ab/compare.json keeps that library's full report.
# Instructions: tools/insn_check.py (of the working tree) counts the charge paths of targets S1 and
# S2, and S7's dispatch, in both builds under callgrind, exact and repeatable where times are not
# (a path an older umemcg-insn lacks is shown as "-").
# Environment: BUILD_DIR, MESON_ARGS as for tools/run.sh; UMEMCG_SKIP_APT=1 skips the package
# step; AB_DIR (default build-ab) holds the base worktree, its build and the runs: clones of
# one repository may share one (an absolute path), so that a base revision is built once.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: bash tools/ab.sh BASE [--reps N] [--filter REGEX] [--min-time SECONDS]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
base_rev=$1; shift
reps=9
filter='^BM_try_charge_memcg_stock_(hit|miss)(_pcstock)?/[13](/manual_time)?$|^BM_uncharge(_pcstock)?/3/manual_time$|^BM_bpf_memcg_high_policy/|^BM_bpf_policy_stock_hit/'
min_time=0.1
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) [ $# -ge 2 ] || usage; reps=$2; shift 2 ;;
    --filter) [ $# -ge 2 ] || usage; filter=$2; shift 2 ;;
    --min-time) [ $# -ge 2 ] || usage; min_time=$2; shift 2 ;;
    *) usage ;;
  esac
done
if ! [[ $reps =~ ^[0-9]+$ ]] || [ "$reps" -lt 2 ]; then
  echo "ab: --reps must be a number >= 2" >&2; exit 2
fi
[[ $min_time =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "ab: --min-time must be a number of seconds" >&2; exit 2; }
base_sha=$(git rev-parse --verify --quiet "$base_rev^{commit}") ||
  { echo "ab: no such revision: $base_rev" >&2; exit 2; }

# The comparison library (compare.py's) and scipy for its U test, valgrind for the counts;
# Debian packages them for its own /usr/bin/python3.
if [ "${UMEMCG_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in libbenchmark-tools python3-scipy valgrind; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}" >&2
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
[ -f /usr/share/benchmark/gbench/report.py ] ||
  { echo "ab: /usr/share/benchmark/gbench is missing (Debian package libbenchmark-tools)" >&2; exit 2; }

out=${AB_DIR:-build-ab}
work_dir=${BUILD_DIR:-build}
base_dir=$out/base
mkdir -p "$out"
# The base revision's tree: a detached worktree, checked out at BASE (a worktree whose directory
# was deleted is pruned first, so that the path can be registered again).
git worktree prune
if git -C "$out/base-src" rev-parse --git-dir >/dev/null 2>&1 &&
   [ "$(git -C "$out/base-src" rev-parse --show-toplevel)" = "$(cd "$out/base-src" && pwd -P)" ]; then
  git -C "$out/base-src" checkout -q --force --detach "$base_sha"
else
  rm -rf "$out/base-src"
  git worktree add -q --detach "$out/base-src" "$base_sha"
fi

build() {  # build SRC_DIR BUILD_DIR
  local src=$1 dir=$2
  if [ ! -f "$dir/build.ninja" ]; then
    # shellcheck disable=SC2086
    meson setup "$dir" "$src" ${MESON_ARGS:-} >/dev/null
  fi
  local targets
  targets=$(ninja -C "$dir" -t targets all | cut -d: -f1)
  # umemcg-bench; the BPF objects its dispatch rows load (test/progs, found at run time); and
  # umemcg-insn, which revisions before it lack (they get no instruction counts).
  # shellcheck disable=SC2046
  ninja -C "$dir" bench/umemcg-bench $(grep -E '^(test/progs/.*\.bpf\.o|bench/umemcg-insn)$' <<<"$targets") >&2
}
echo "== building the working tree ($work_dir) and $base_rev = ${base_sha:0:12} ($base_dir)" >&2
build . "$work_dir"
build "$out/base-src" "$base_dir"

rm -f "$out"/base.run*.json "$out"/work.run*.json "$out"/insn-*.json "$out/bench.log"
run_one() {  # run_one BUILD_DIR OUT_JSON (the run's own output goes to $out/bench.log)
  "$1/bench/umemcg-bench" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
    --benchmark_out="$2" --benchmark_out_format=json >>"$out/bench.log" 2>&1 ||
    { tail -20 "$out/bench.log" >&2; echo "ab: $1/bench/umemcg-bench failed" >&2; exit 1; }
}
echo "== $reps interleaved runs of each build: $filter" >&2
base_runs=() work_runs=()
for ((i = 0; i < reps; i++)); do
  if ((i % 2 == 0)); then order="base work"; else order="work base"; fi
  for which in $order; do
    if [ "$which" = base ]; then
      run_one "$base_dir" "$out/base.run$i.json"; base_runs+=("$out/base.run$i.json")
    else
      run_one "$work_dir" "$out/work.run$i.json"; work_runs+=("$out/work.run$i.json")
    fi
  done
done

insn_args=()
for which in base work; do
  if [ "$which" = base ]; then dir=$base_dir; else dir=$work_dir; fi
  if [ -x "$dir/bench/umemcg-insn" ] && command -v valgrind >/dev/null; then
    echo "== callgrind: the charge paths of $which" >&2
    # Exit status 1 is a guard exceeded: a figure to compare here, not a failure.
    python3 tools/insn_check.py --insn "$dir/bench/umemcg-insn" --json "$out/insn-$which.json" \
      >/dev/null || [ $? -eq 1 ]
    insn_args+=("--insn-$which" "$out/insn-$which.json")
  fi
done

/usr/bin/python3 tools/ab_report.py --base "${base_runs[@]}" --work "${work_runs[@]}" \
  "${insn_args[@]}" --compare-json "$out/compare.json" \
  --title "$base_rev (${base_sha:0:12}) -> the working tree" | tee "$out/report.txt"
