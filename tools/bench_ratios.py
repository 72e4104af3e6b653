#!/usr/bin/env python3
"""Prints the benchmark summary of one umemcg-bench run: one line per speed target, then the table.

Speed targets are ratios inside one run, never absolute times (shared machines drift), so each
target line states what it measures in words, the figure from this run, the target and a verdict.
The table after it lists every benchmark's time; the "x atomic" column (the time divided by one
uncontended atomic add from the same run) is printed only for charge-path and primitive rows,
where an atomic add is the unit the targets are written in (an interpreter loop is not).

Google Benchmark's JSON context says "library_build_type: debug" for Debian's package: that is
the library's own assertions, not the code measured (which the project builds optimised).

A benchmark run several times (--benchmark_repetitions, interleaved with
--benchmark_enable_random_interleaving) is read as the median of its repetitions' times, and the
lines of targets judged that way (S2, S6, S7) say how many repetitions they took. When several
files are given, a benchmark's rows in a later file replace its rows of the earlier ones: the main
job passes the full run first and the interleaved repetitions of the S2, S6 and S7 rows after it.

Usage: bench_ratios.py RESULT.json [REPETITIONS.json...]
"""
import json
import statistics
import sys

SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# Fewer repetitions than this cannot give the median S6 asks for.
MIN_REPETITIONS = 5
# A row's numbers that describe the run rather than measure it (no median is taken of them).
NOT_MEASURED = ("family_index", "per_family_instance_index", "repetitions", "repetition_index",
                "threads", "iterations")
# Rows whose time reads meaningfully in atomic adds.
ATOMIC_UNIT_PREFIXES = ("BM_try_charge", "BM_uncharge", "BM_page_counter", "BM_floor",
                        "BM_local_lock", "BM_atomic", "BM_rcu", "BM_rwsem",
                        "BM_bpf_policy_stock_hit")


def ns(b, key="cpu_time"):
    return b[key] * SCALE.get(b.get("time_unit", "ns"), 1.0)


def own_time(name, b):
    """Manual-time rows time only their operation (real_time); the others use CPU time."""
    return ns(b, "real_time") if name.endswith("/manual_time") else ns(b)


def per_insn_ns(b):
    v = b.get("ns_per_insn")
    if v is None:
        return None
    return v * 1e9 if v < 1e-3 else v  # an inverted rate counter: seconds per instruction


def verdict(ok):
    return "holds" if ok else "MISSED"


def target_lines(rows):
    """One line per target the run measured, in target order."""
    out = []
    base = rows.get("BM_atomic_add_uncontended")
    unit = ns(base) if base else None

    # S1: the stock hit. Its target is an instruction count (callgrind), which a timed run
    # cannot judge; the time is shown against the atomic add for orientation only.
    for suffix, design in (("", "memcg stock"), ("_pcstock", "page_counter stock")):
        hit = rows.get(f"BM_try_charge_memcg_stock_hit{suffix}/3")
        if hit and unit:
            out.append(f"S1 stock hit, 1 page, depth 3 ({design}): {ns(hit):.2f} ns = "
                       f"{ns(hit) / unit:.2f}x an atomic add (target: <= 35 instructions, "
                       f"judged by callgrind, not by time)")

    # S2: a stock miss at depth d against the d + 1 locked adds it cannot avoid. The worst of
    # eight ratios: one disturbed row decides it, so the main job measures these rows as medians
    # of interleaved repetitions too, and the line says how many.
    for suffix, design in (("", "memcg stock"), ("_pcstock", "page_counter stock")):
        worst = None
        n = None
        for d in range(1, 9):
            chain = rows.get(f"BM_floor_atomic_chain/{d + 1}")
            miss = rows.get(f"BM_try_charge_memcg_stock_miss{suffix}/{d}/manual_time")
            if chain and miss:
                r = ns(miss, "real_time") / ns(chain)
                seen = min(chain.get("repetitions_seen", 1), miss.get("repetitions_seen", 1))
                n = seen if n is None else min(n, seen)
                if worst is None or r > worst[1]:
                    worst = (d, r)
        if worst:
            median = f", medians of {n} repetitions" if n and n > 1 else ""
            out.append(f"S2 stock miss against its d+1 locked adds, d = 1..8 ({design}{median}): "
                       f"worst {worst[1]:.2f}x at depth {worst[0]} (target <= 2x: "
                       f"{verdict(worst[1] <= 2.0)})")

    # S3: two threads on two vCPUs charging one memcg. For a multi-threaded benchmark, Google
    # Benchmark's real_time per iteration is already per item over all threads (the threads'
    # mean wall time divided by all their iterations), so throughput(2) / throughput(1) is
    # real_time(1 thread) / real_time(2 threads).
    for suffix, design in (("", "memcg stock"), ("_pcstock", "page_counter stock")):
        one = rows.get(f"BM_try_charge_memcg_stock_hit_mt{suffix}/3/real_time/threads:1")
        two = rows.get(f"BM_try_charge_memcg_stock_hit_mt{suffix}/3/real_time/threads:2")
        if one and two:
            scale = ns(one, "real_time") / ns(two, "real_time")
            out.append(f"S3 two threads on two vCPUs, one memcg, stock hits ({design}): "
                       f"{scale:.2f}x the one-thread throughput (target >= 1.8x: "
                       f"{verdict(scale >= 1.8)})")

    # S5: the interpreter against the switch-loop reference on the same program.
    for prog in ("alu", "ctx_loads", "stack", "helper_calls", "local_calls"):
        ref = rows.get(f"BM_interp_{prog}_ref")
        if not ref or per_insn_ns(ref) is None:
            continue
        r = per_insn_ns(ref)
        parts, worst = [], 0.0
        for mode in ("fast", "safe"):
            b = rows.get(f"BM_interp_{prog}_{mode}")
            if b and per_insn_ns(b) is not None:
                x = per_insn_ns(b) / r
                worst = max(worst, x)
                parts.append(f"{mode} {per_insn_ns(b):.2f} ns = {x:.2f}x")
        out.append(f"S5 interpreter on the '{prog}' loop, per instruction, against a "
                   f"switch loop with checks ({r:.2f} ns): " + ", ".join(parts) +
                   f" (target <= 0.5x: {verdict(worst <= 0.5)})")

    # S6: three trivial policies attached must not slow the stock hit. The target asks for the
    # median of interleaved repetitions: a single run of each (drift between the two) is shown
    # but not judged.
    hit0 = rows.get("BM_bpf_policy_stock_hit/0")
    hit3 = rows.get("BM_bpf_policy_stock_hit/3")
    if hit0 and hit3:
        d = ns(hit3) / ns(hit0) - 1.0
        n = min(hit0["repetitions_seen"], hit3["repetitions_seen"])
        judged = (f"target <= +3%: {verdict(d <= 0.03)}" if n >= MIN_REPETITIONS else
                  f"target <= +3% as the median of interleaved repetitions: not judged on {n}")
        out.append(f"S6 stock hit with 3 high_policy programs attached against none, median of "
                   f"{n} repetitions: {ns(hit3):.2f} ns against {ns(hit0):.2f} ns, "
                   f"{d * 100:+.1f}% ({judged})")

    # S7: dispatch cost beyond the programs' own instructions (each policy's prog_insns at the
    # fast interpreter's ns per instruction on the ALU loop of the same run): all of it for 3
    # policies, and the step from 1 to 3 policies for each further one.
    alu = rows.get("BM_interp_alu_fast")
    if alu and per_insn_ns(alu) is not None:
        disp1 = rows.get("BM_bpf_memcg_high_policy/1")
        disp3 = rows.get("BM_bpf_memcg_high_policy/3")
        if disp3:
            own = disp3.get("prog_insns", 0) * per_insn_ns(alu)
            extra = ns(disp3) - 3 * own
            out.append(f"S7 over-high charge dispatching 3 policies, median of "
                       f"{disp3['repetitions_seen']} repetitions: {ns(disp3):.1f} ns, of which "
                       f"the programs' own instructions {3 * own:.1f} ns; added {extra:.1f} ns "
                       f"(target <= 30 ns: {verdict(extra <= 30)})")
        if disp1 and disp3:
            own = disp3.get("prog_insns", 0) * per_insn_ns(alu)
            step = (ns(disp3) - ns(disp1)) / 2 - own
            out.append(f"S7 each further policy (1 -> 3 policies: {ns(disp1):.1f} -> "
                       f"{ns(disp3):.1f} ns, halved), beyond its own instructions ({own:.1f} "
                       f"ns): {step:.1f} ns (target <= 8 ns: {verdict(step <= 8)})")

    # S9: 10,000 cgroups created and removed through the cgroup filesystem, and the heap bytes
    # a memcg costs (a line fitted over machines of 1 to 8 vCPUs): the memcg itself, which the
    # target is about, and the whole cgroup directory it lives in.
    mkrm = rows.get("BM_cgroupfs_mkdir_rmdir/10000/real_time")
    if mkrm:
        sec = ns(mkrm, "real_time") / 1e9
        out.append(f"S9 10,000 cgroups created and removed through /sys/fs/cgroup: {sec:.2f} s "
                   f"(target <= 1 s: {verdict(sec <= 1.0)})")
    mem = rows.get("BM_memcg_bytes_per_cgroup/iterations:1/real_time")
    if mem and "memcg_bytes_fixed" in mem:
        fixed, per_cpu = mem["memcg_bytes_fixed"], mem["memcg_bytes_per_vcpu"]
        out.append(f"S9 heap bytes per memcg (what the memory controller's css_alloc and "
                   f"css_online allocate; statistics come with the first update): {fixed:.0f} B "
                   f"+ {per_cpu:.0f} B per vCPU (target <= 4096 B + 256 B per vCPU: "
                   f"{verdict(fixed <= 4096 and per_cpu <= 256)})")
    if mem and "memcg_stats_bytes_fixed" in mem:
        sf, sp = mem["memcg_stats_bytes_fixed"], mem["memcg_stats_bytes_per_vcpu"]
        out.append(f"S9 what a memcg's statistics add once it is updated on every vCPU: {sf:.0f} "
                   f"B + {sp:.0f} B per vCPU (a memcg in use on every vCPU: "
                   f"{fixed + sf:.0f} B + {per_cpu + sp:.0f} B per vCPU; no target of its own)")
    if mem and "dir_bytes_fixed" in mem:
        out.append(f"S9 heap bytes per cgroup directory with memory enabled (its memcg, the "
                   f"cgroup core, every file's kernfs node; the memory.* files "
                   f"{mem.get('memory_files_bytes', 0):.0f} B): {mem['dir_bytes_fixed']:.0f} B + "
                   f"{mem['dir_bytes_per_vcpu']:.0f} B per vCPU (no target of its own)")

    # S10: each sample policy verifies in <= 5 ms.
    verify = {n: b for n, b in rows.items() if n.startswith("BM_verify/")}
    if verify:
        name, b = max(verify.items(), key=lambda nb: ns(nb[1]))
        ms = ns(b) / 1e6
        out.append(f"S10 verifier, slowest of {len(verify)} sample programs "
                   f"({name[len('BM_verify/'):]}): {ms:.3f} ms (target <= 5 ms: "
                   f"{verdict(ms <= 5.0)})")
    # S12: one emulated anon fault plus its unmap (native mode) against the host kernel's anon
    # fault plus MADV_DONTNEED, per page, from the same run (items are pages).
    host = rows.get("BM_host_anon_fault_dontneed")
    emu = rows.get("BM_emu_anon_fault_dontneed/manual_time")
    if host and emu and host.get("items_per_second") and emu.get("items_per_second"):
        h, e = 1e9 / host["items_per_second"], 1e9 / emu["items_per_second"]
        out.append(f"S12 anon fault + unmap per page, emulated (native mode) against the host "
                   f"kernel's fault + MADV_DONTNEED: {e:.0f} ns against {h:.0f} ns = {e / h:.3f}x "
                   f"(target <= 0.2x: {verdict(e / h <= 0.2)})")
    # S13: 100M of anon touched under memory.max=30M with 1G of swap, simulated mode, wall time.
    swap = rows.get("BM_swap_anon_100M_memmax_30M/0/real_time")
    if swap:
        sec = ns(swap, "real_time") / 1e9
        out.append(f"S13 100M of anon under memory.max=30M with 1G of swap (simulated mode, "
                   f"{swap.get('pswpout', 0):.0f} pages swapped out): {sec:.3f} s of wall time "
                   f"(target <= 1 s: {verdict(sec <= 1.0)})")
    return out


def table_lines(rows):
    base = rows.get("BM_atomic_add_uncontended")
    unit = ns(base) if base else None
    out = [f"{'benchmark':62s} {'ns':>12s} {'x atomic':>9s}"]
    for name, b in rows.items():
        t = own_time(name, b)
        x = f"{t / unit:9.2f}" if unit and name.startswith(ATOMIC_UNIT_PREFIXES) else " " * 9
        out.append(f"{name:62s} {t:12.2f} {x}")
    return out


def median_rows(datas):
    """One row per benchmark: its times are the medians of its repetitions (a later file's rows
    of a benchmark replace an earlier file's); repetitions_seen counts them. Failed repetitions
    are left out, and a benchmark none of whose repetitions ran has no row."""
    runs = {}
    for data in datas:
        mine = {}
        for b in data["benchmarks"]:
            # A repetition that failed (SkipWithError) has no time: it is left out.
            if b.get("run_type") != "aggregate" and not b.get("error_occurred"):
                mine.setdefault(b["name"], []).append(b)
        runs.update(mine)
    rows = {}
    for name, reps in runs.items():
        row = dict(reps[0])
        for key in ("real_time", "cpu_time"):
            row[key] = statistics.median(ns(b, key) for b in reps)
        row["time_unit"] = "ns"
        # The counters (ns_per_insn, items_per_second, ...) too.
        for key, v in reps[0].items():
            if key not in NOT_MEASURED and key not in ("real_time", "cpu_time") and \
                    isinstance(v, (int, float)) and not isinstance(v, bool):
                row[key] = statistics.median(b.get(key, v) for b in reps)
        row["repetitions_seen"] = len(reps)
        rows[name] = row
    return rows


def summary(*datas):
    rows = median_rows(datas)
    return target_lines(rows) + [""] + table_lines(rows)


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    datas = []
    for p in paths:
        with open(p) as f:
            datas.append(json.load(f))
    for line in summary(*datas):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
