#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Interpreter speed of the umemcg-bpf-plugin process, in ns per executed eBPF instruction.

Feeds the loop programs of bench/bpfvm_interp_bench.cc (ALU, context loads, stack spills, helper
calls, local calls; the same instructions) to the plugin as the bpf_conformance suite does
(program as hex bytes on stdin, memory as hex bytes in argv[1]), --iters loop iterations each,
and checks r0. Their loops are too long for the verifier (1M processed instructions), so the
plugin runs them in its safe mode. The executed-instruction count is known from each program's
shape. Columns:
  proc ms     wall time of the whole process (what the conformance suite waits for)
  verify ms   the verifier's attempt, as the plugin reports it (UMEMCG_BPF_PLUGIN_VERBOSE=1)
  run ms      the interpreter run, as the plugin reports it
  ns/insn     run time / executed instructions: the interpreter's speed inside the process
  proc ns/insn  (proc ms - verify ms) / executed instructions: the same with process start,
              input parsing and prepare included
(The verifier's attempt varies by tens of ms from run to run, so differences of whole-process
wall times at two iteration counts do not give a usable per-instruction time.)
The best (minimum) of --reps runs is taken (other processes only ever add time). With --bench
BIN, also runs BIN (umemcg-bench) on the BM_interp_*_safe and _fast rows, printed alongside.

Usage: python3 tools/plugin_speed.py [--plugin build/tools/umemcg-bpf-plugin]
           [--bench build/bench/umemcg-bench] [--reps 3] [--iters 5000000]
Takes about 3 s (plus 10 s with --bench). Exit status 1 if a run fails or gives a wrong r0.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import time

# --- a tiny assembler for the instructions the loop programs use ------------------------------
OPS = {
    "mov": 0xB7, "movx": 0xBF, "add": 0x07, "addx": 0x0F, "add32": 0x04, "sub": 0x17,
    "xor": 0xA7, "lsh": 0x67, "rsh": 0x77, "and": 0x57, "jne": 0x55, "ldxdw": 0x79,
    "ldxw": 0x61, "stxdw": 0x7B, "stxw": 0x63, "call": 0x85, "exit": 0x95,
}


def insn(op, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", OPS[op], (src << 4) | dst, off, imm)


def lddw(dst, value):
    return struct.pack("<BBhi", 0x18, dst, 0, value & 0xFFFFFFFF) + struct.pack(
        "<BBhi", 0, 0, 0, (value >> 32) & 0xFFFFFFFF)


def assemble(lines):
    """lines: tuples (op, args...) or labels (str ending in ':'); jumps and local calls name a
    label. Returns the bytecode."""
    pc, labels = 0, {}
    for ln in lines:
        if isinstance(ln, str):
            labels[ln[:-1]] = pc
        else:
            pc += 2 if ln[0] == "lddw" else 1
    out, pc = b"", 0
    for ln in lines:
        if isinstance(ln, str):
            continue
        op, *a = ln
        if op == "lddw":
            out += lddw(*a)
            pc += 2
            continue
        if op == "jne":  # jne dst, imm, label
            out += insn("jne", dst=a[0], imm=a[1], off=labels[a[2]] - pc - 1)
        elif op == "call_local":
            out += insn("call", src=1, imm=labels[a[0]] - pc - 1)
        elif op == "call":
            out += insn("call", imm=a[0])
        elif op in ("ldxdw", "ldxw"):  # dst, src, off
            out += insn(op, dst=a[0], src=a[1], off=a[2])
        elif op in ("stxdw", "stxw"):  # dst, off, src
            out += insn(op, dst=a[0], off=a[1], src=a[2])
        elif op.endswith("x") and op in OPS:  # reg, reg
            out += insn(op, dst=a[0], src=a[1])
        elif op == "exit":
            out += insn("exit")
        else:  # reg, imm
            out += insn(op, dst=a[0], imm=a[1])
        pc += 1
    return out


# --- the loop programs (bench/bpfvm_interp_bench.cc) -----------------------------------------
# Each: (name, lines(n), executed(n), expected r0(n) or None). r1 = the memory at entry.
CTX = struct.pack("<QQII", 3, 5, 7, 11)  # the bench's Ctx {a, b, c, d}


def alu(n):
    return [("mov", 0, 0), ("lddw", 1, n), "loop:", ("addx", 0, 1), ("xor", 0, 0x55),
            ("lsh", 0, 1), ("rsh", 0, 1), ("movx", 2, 0), ("and", 2, 0xFF), ("add32", 2, 3),
            ("sub", 1, 1), ("jne", 1, 0, "loop"), ("exit",)]


def ctx_loads(n):
    return [("movx", 6, 1), ("mov", 0, 0), ("lddw", 7, n), "loop:", ("ldxdw", 2, 6, 0),
            ("ldxdw", 3, 6, 8), ("ldxw", 4, 6, 16), ("ldxw", 5, 6, 20), ("addx", 0, 2),
            ("addx", 0, 3), ("addx", 0, 4), ("addx", 0, 5), ("sub", 7, 1),
            ("jne", 7, 0, "loop"), ("exit",)]


def stack(n):
    return [("mov", 0, 1), ("lddw", 7, n), "loop:", ("stxdw", 10, -8, 0),
            ("stxdw", 10, -16, 7), ("ldxdw", 2, 10, -8), ("ldxdw", 3, 10, -16), ("addx", 2, 3),
            ("stxw", 10, -20, 2), ("ldxw", 0, 10, -20), ("sub", 7, 1), ("jne", 7, 0, "loop"),
            ("exit",)]


def helper_calls(n):
    return [("mov", 0, 0), ("lddw", 7, n), "loop:", ("movx", 1, 0), ("movx", 2, 7),
            ("call", 1), ("sub", 7, 1), ("jne", 7, 0, "loop"), ("exit",)]


def local_calls(n):
    return [("mov", 0, 0), ("lddw", 7, n), "loop:", ("movx", 1, 0), ("movx", 2, 7),
            ("call_local", "f"), ("sub", 7, 1), ("jne", 7, 0, "loop"), ("exit",), "f:",
            ("movx", 0, 1), ("addx", 0, 2), ("exit",)]


PROGRAMS = [
    # name, builder, (prologue, per iteration) instruction counts (ld_imm64 counts once; the
    # final exit is in the prologue), expected r0
    ("alu", alu, (3, 9), None),
    ("ctx_loads", ctx_loads, (4, 10), lambda n: n * (3 + 5 + 7 + 11)),
    ("stack", stack, (3, 9), lambda n: (1 + n * (n + 1) // 2) & 0xFFFFFFFF),
    ("helper_calls", helper_calls, (3, 5), lambda n: n * (n + 1) // 2),
    ("local_calls", local_calls, (3, 8), lambda n: n * (n + 1) // 2),
]


def hexbytes(b):
    return "  ".join(f"{x:02x}" for x in b)


def run_once(plugin, code, mem):
    t0 = time.perf_counter()
    p = subprocess.run([plugin, hexbytes(mem)], input=hexbytes(code), capture_output=True,
                       text=True, env=dict(os.environ, UMEMCG_BPF_PLUGIN_VERBOSE="1"))
    t = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"plugin exit {p.returncode}: {p.stdout.strip()}")
    mode = re.search(r"(fast|safe|checked) mode", p.stderr)
    tm = re.search(r"time: verify ([\d.]+) ms, run ([\d.]+) ms", p.stderr)
    return {"proc": t * 1e3, "r0": int(p.stdout.strip(), 16),
            "mode": mode.group(1) if mode else "?",
            "verify": float(tm.group(1)) if tm else float("nan"),
            "run": float(tm.group(2)) if tm else float("nan")}


def bench_rows(bench):
    out = subprocess.run([bench, "--benchmark_filter=BM_interp_.*_(fast|safe)$",
                          "--benchmark_repetitions=3", "--benchmark_min_time=0.2",
                          "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for m in re.finditer(r"(BM_interp_\S+)_median.*ns_per_insn=([\d.]+)(ns|ps)", out):
        rows[m.group(1)] = float(m.group(2)) * (1e-3 if m.group(3) == "ps" else 1)
    return rows


def best_of(plugin, code, reps, want):
    """Per-column minimum over reps runs; raises RuntimeError on a failed run or a wrong r0."""
    best = None
    for _ in range(reps):
        r = run_once(plugin, code, CTX)
        if want is not None and r["r0"] != want:
            raise RuntimeError(f"r0 {r['r0']:#x}, expected {want:#x}")
        best = r if best is None else {k: min(v, r[k]) if isinstance(v, float) else v
                                       for k, v in best.items()}
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin", default="build/tools/umemcg-bpf-plugin")
    ap.add_argument("--bench", default=None, help="umemcg-bench, for the in-process rows")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5_000_000)
    args = ap.parse_args()
    rows = bench_rows(args.bench) if args.bench else {}
    hdr = (f"{'program':14s} {'mode':5s} {'insns':>10s} {'proc ms':>8s} {'verify ms':>9s} "
           f"{'run ms':>8s} {'ns/insn':>8s} {'proc ns/insn':>12s}")
    if rows:
        hdr += f" {'bench safe':>10s} {'bench fast':>10s}"
    print(hdr)
    failed = False
    for name, build, (pro, per), want in PROGRAMS:
        try:
            big = best_of(args.plugin, assemble(build(args.iters)), args.reps,
                          want(args.iters) & (2**64 - 1) if want else None)
        except RuntimeError as e:
            print(f"{name}: {e}")
            failed = True
            continue
        insns = pro + per * args.iters
        ns = big["run"] * 1e6 / insns
        wall = (big["proc"] - big["verify"]) * 1e6 / insns
        line = (f"{name:14s} {big['mode']:5s} {insns:10d} {big['proc']:8.1f} "
                f"{big['verify']:9.1f} {big['run']:8.1f} {ns:8.3f} {wall:12.3f}")
        if rows:
            line += (f" {rows.get(f'BM_interp_{name}_safe', float('nan')):10.3f}"
                     f" {rows.get(f'BM_interp_{name}_fast', float('nan')):10.3f}")
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
