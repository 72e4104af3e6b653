#!/usr/bin/python3
"""Compares the umemcg-bench runs of two builds (tools/ab.sh) with Google Benchmark's own
comparison library (compare.py's gbench.report, Debian's libbenchmark-tools) and prints one line
per benchmark: the medians of both builds, the change, and the Mann-Whitney U test's p-value;
then, when given, the callgrind instruction counts of both (tools/insn_check.py --json).

A difference is called real only when the U test says so (p below ALPHA, 0.05) with at least 9
repetitions on each side, the number compare.py's library asks for; with fewer the line says
"likely", and with p above ALPHA it says the runs cannot tell a difference. Manual-time rows
are compared on real time (their timed operation alone), the others on CPU time.

Usage: ab_report.py --base RUN.json... --work RUN.json... [--insn-base I.json --insn-work I.json]
                    [--compare-json OUT.json] [--title TEXT]
Each RUN.json is one umemcg-bench --benchmark_out file; all the non-aggregate rows of a side are
that side's repetitions (separate interleaved runs, or one run's --benchmark_repetitions).
Runs with Debian's /usr/bin/python3, which has scipy.
"""
import argparse
import json
import statistics
import sys

sys.path.insert(0, "/usr/share/benchmark")
from gbench import report  # noqa: E402  (compare.py's library)

ALPHA = 0.05
OPTIMAL_REPETITIONS = report.UTEST_OPTIMAL_REPETITIONS


def merged(paths):
    """One Google Benchmark JSON holding every non-aggregate row of the given files."""
    data = None
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        rows = [b for b in d["benchmarks"] if b.get("run_type") != "aggregate"]
        if data is None:
            data = {"context": d.get("context", {}), "benchmarks": []}
        data["benchmarks"] += rows
    return data


def verdict(p, change, reps_ok):
    if p is None:
        return "too few runs for the U test"
    direction = "slower" if change > 0 else "faster"
    if p < ALPHA and reps_ok:
        return f"real: {direction}"
    if p < ALPHA:
        return f"likely {direction} (fewer than {OPTIMAL_REPETITIONS} runs each)"
    return "no difference the runs can tell"


def time_lines(base, work):
    diff = report.get_difference_report(base, work, utest=True)
    out = [f"{'benchmark':54s} {'base':>10s} {'work':>10s} {'change':>8s} {'p':>7s}  verdict"]
    for entry in diff:
        if entry.get("run_type") == "aggregate":  # the library's overall geomean
            continue
        name = entry["name"]
        # A benchmark timed on the wall clock (UseManualTime, UseRealTime: its name ends so)
        # is compared on its real time: its CPU time is only the benchmark thread's share,
        # e.g. none of the work its machine's other threads do.
        wall = name.endswith("/manual_time") or name.endswith("/real_time")
        key, pkey = ("real_time", "time_pvalue") if wall else ("cpu_time", "cpu_pvalue")
        m = entry["measurements"]
        old = statistics.median(x[key] for x in m)
        new = statistics.median(x[key + "_other"] for x in m)
        change = (new - old) / old * 100 if old else 0.0
        ut = entry.get("utest") or {}
        p = ut.get(pkey)
        reps_ok = min(ut.get("nr_of_repetitions", 0),
                      ut.get("nr_of_repetitions_other", 0)) >= OPTIMAL_REPETITIONS
        unit = entry.get("time_unit", "ns")
        ps = f"{p:7.4f}" if p is not None else "      -"
        out.append(f"{name:54s} {old:8.2f}{unit:>2s} {new:8.2f}{unit:>2s} {change:+7.1f}% {ps}  "
                   f"{verdict(p, change, reps_ok)}")
    return diff, out


def insn_lines(base_path, work_path):
    with open(base_path) as f:
        base = json.load(f)
    with open(work_path) as f:
        work = json.load(f)
    out = [f"{'path (callgrind, instructions per operation)':78s} {'base':>7s} {'work':>7s} "
           f"{'change':>7s}"]
    for label in list(dict.fromkeys(list(work) + list(base))):
        old, new = base.get(label), work.get(label)
        fmt = lambda v: f"{v:7.1f}" if v is not None else "      -"  # noqa: E731
        change = f"{new - old:+7.1f}" if old is not None and new is not None else "      -"
        out.append(f"{label:78s} {fmt(old)} {fmt(new)} {change}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", nargs="+", required=True)
    ap.add_argument("--work", nargs="+", required=True)
    ap.add_argument("--insn-base")
    ap.add_argument("--insn-work")
    ap.add_argument("--compare-json")
    ap.add_argument("--title", default="base -> work")
    args = ap.parse_args()
    try:
        diff, lines = time_lines(merged(args.base), merged(args.work))
    except (OSError, ValueError, KeyError) as e:
        print(f"ab_report: cannot read the runs: {e}", file=sys.stderr)
        return 2
    if args.compare_json:
        with open(args.compare_json, "w") as f:
            json.dump(diff, f, indent=1)
    print(f"== time: {args.title}; the U test says whether a change is real")
    print("\n".join(lines))
    n = len(lines) - 1
    if n:
        print(f"({n} benchmarks tested at p < {ALPHA}: about {n * ALPHA:.1f} of them may be called "
              f"real by chance; a real change is called again by a second run)")
    if args.insn_base and args.insn_work:
        print(f"== instructions: {args.title}; exact, one run decides")
        print("\n".join(insn_lines(args.insn_base, args.insn_work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
