#!/usr/bin/env python3
"""Prints umemcg-bench results as ratios against the baselines measured in the same run.

Speed targets are ratios, never absolute times (shared machines drift): each target row shows the
measured CPU time per iteration, its ratio to BM_atomic_add_uncontended from the same run, the
target and whether it holds.
"""
import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    rows = {b["name"]: b for b in data["benchmarks"] if b.get("run_type") != "aggregate"}
    base = rows.get("BM_atomic_add_uncontended")
    if not base:
        print("no BM_atomic_add_uncontended in the run")
        return 1
    unit = base["cpu_time"]
    print(f"{'benchmark':55s} {'cpu ns':>10s} {'x atomic':>9s}  target")

    def target_for(name):
        if name == "BM_local_lock_percpu_inc":
            return 0.5
        if name.startswith("BM_try_charge_memcg_stock_hit") and name.endswith("/3") \
                and "_mt" not in name:
            return 0.5
        if name.startswith("BM_try_charge_memcg_stock_miss"):
            try:
                return float(name.rsplit("/", 1)[1]) + 1
            except ValueError:
                return None
        return None

    for name, b in rows.items():
        ratio = b["cpu_time"] / unit
        t = target_for(name)
        verdict = ""
        if t is not None:
            verdict = f"<= {t:g}  {'holds' if ratio <= t else 'MISSED'}"
        print(f"{name:55s} {b['cpu_time']:10.2f} {ratio:9.2f}  {verdict}")
    # Throughput scaling of the multi-threaded stock-hit benchmark (target: >= 1.8x).
    for suffix in ("", "_pcstock"):
        one = rows.get(f"BM_try_charge_memcg_stock_hit_mt{suffix}/3/real_time/threads:1")
        two = rows.get(f"BM_try_charge_memcg_stock_hit_mt{suffix}/3/real_time/threads:2")
        if one and two:
            scale = (2 / two["real_time"]) / (1 / one["real_time"])
            print(f"two-thread scaling{suffix}: {scale:.2f}x (target >= 1.8x: "
                  f"{'holds' if scale >= 1.8 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
