#!/usr/bin/env python3
"""Counts the charge paths' instructions under callgrind and judges targets S1 and S2.

Instruction counts are exact and repeatable here, unlike times: the same binary and inputs give
the same count whatever else the machine does. For each path, umemcg-insn runs N and 2N
operations under `valgrind --tool=callgrind --toggle-collect=FUNCTION` (only instructions
executed inside FUNCTION and what it calls are counted); the difference divided by N is the
inclusive count of one operation, with set-up and teardown cancelled out.

  S1  try_charge_memcg() of one page served by the stock, depth 3, both designs:
      target <= 35 instructions.
  S2  the slow path of a depth-1 stock miss, both designs (try_charge_memcg_slow for the memcg
      stock, try_charge_memcg_pcstock for the page_counter stock): target <= 200 instructions.
  S7  one bpf_memcg_high_policy() dispatch with 1 and with 3 trivial high_policy programs
      attached (the programs' own two instructions included), and each further policy (half
      the step from 1 to 3). S7's target is in nanoseconds (tools/bench_ratios.py); the counts
      are its load-independent measure and have guards only.
Each path also has a guard, the count measured when the guard was last set: the check fails
when a path grows past its guard, so that no change adds instructions to a charge path unseen.
A change that lowers a count should lower its guard with it.

A umemcg-insn built without the BPF test objects has no dispatch paths: their rows are skipped.

Usage: insn_check.py [--insn PATH_TO_umemcg-insn] [--n N] [--json OUT.json]
Exit status: 0 when every path is within its guard, 1 when one grew past it, 2 when valgrind is
missing or a run fails. With --json, the counts are also written to OUT.json ({label: count}),
and a path the binary cannot run (an older umemcg-insn, tools/ab.sh) is recorded as null and
skipped instead of failing the check.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# (label, umemcg-insn path, function to count, target or None, guard). The guards were
# measured with gcc 12 -O2 (the build's debugoptimized) on x86-64; the hit is counted with the
# memcg in the stock's first slot (each further slot scanned costs 4 instructions).
DISPATCH1 = "S7 dispatch of 1 high_policy program (bpf_memcg_high_policy)"
DISPATCH3 = "S7 dispatch of 3 high_policy programs (bpf_memcg_high_policy)"
FURTHER = "S7 each further high_policy program (half the step from 1 to 3)"
CHECKS = [
    ("S1 stock hit, 1 page, depth 3 (memcg stock)", "hit", "umemcg::try_charge_memcg(*",
     35, 27),
    ("S1 stock hit, 1 page, depth 3 (page_counter stock)", "hit_pcstock",
     "umemcg::try_charge_memcg(*", 35, 34),
    ("S2 slow path of a depth-1 stock miss (memcg stock, try_charge_memcg_slow)", "miss",
     "*try_charge_memcg_slow(*", 200, 181),
    ("S2 slow path of a depth-1 stock miss (page_counter stock, try_charge_memcg_pcstock)",
     "miss_pcstock", "umemcg::try_charge_memcg_pcstock(*", 200, 197),
    (DISPATCH1, "dispatch1", "umemcg::bpf_memcg_high_policy(*", None, 217),
    (DISPATCH3, "dispatch3", "umemcg::bpf_memcg_high_policy(*", None, 383),
]


class NoDispatch(Exception):
    """umemcg-insn has no dispatch paths (built without the BPF test objects)."""


def callgrind_total(insn, path, n, func):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               f"--toggle-collect={func}", insn, path, str(n)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 and "built without the BPF test objects" in r.stderr:
            raise NoDispatch()
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
        with open(out) as f:
            for line in f:
                m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
                if m:
                    return int(m.group(1))
    raise RuntimeError(f"no totals line in callgrind's output for {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--insn", default="build/bench/umemcg-insn")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--json", help="also write the counts to this file")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        print("insn_check: valgrind is not installed", file=sys.stderr)
        return 2
    failed = False
    counts = {}
    for label, path, func, target, guard in CHECKS:
        try:
            one = callgrind_total(args.insn, path, args.n, func)
            two = callgrind_total(args.insn, path, 2 * args.n, func)
        except NoDispatch:
            print(f"{label}: skipped (umemcg-insn was built without the BPF test objects)")
            counts[label] = None
            continue
        except (RuntimeError, OSError) as e:
            print(f"insn_check: {e}", file=sys.stderr)
            if not args.json:
                return 2
            counts[label] = None
            continue
        per = (two - one) / args.n
        grown = per > guard
        verdict = ("no instruction target" if target is None else
                   f"target <= {target}: {'holds' if per <= target else 'MISSED'}")
        print(f"{label}: {per:.1f} instructions ({verdict}; guard <= {guard}: "
              f"{'GROWN' if grown else 'kept'})")
        failed = failed or grown
        counts[label] = per
    if counts.get(DISPATCH1) is not None and counts.get(DISPATCH3) is not None:
        counts[FURTHER] = (counts[DISPATCH3] - counts[DISPATCH1]) / 2
        print(f"{FURTHER}: {counts[FURTHER]:.1f} instructions")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(counts, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
