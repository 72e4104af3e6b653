#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# tools/verifier_corpus.py: bpfvm's verifier against the host kernel's on the kernel's verifier
# selftests (tools/testing/selftests/bpf/progs/verifier_*.c).
#
#   python3 tools/verifier_corpus.py [--build build] [--tarball /usr/src/linux-source-6.12.tar.xz]
#                                    [--min-verdict F] [--min-error F] [--list]
#
# The sources come from Debian's linux-source-6.12 package at run time (never from this
# repository): the selftests' progs/ and headers and the kernel tree's tools/include and libbpf
# headers are extracted once into BUILD/verifier-corpus/ (again when the tarball changes). Each
# verifier_*.c that compiles with clang-19 -target bpf without a vmlinux.h is built there, and
# every program of it is loaded alone as a SYSCALL program into the host kernel (libbpf) and into
# bpfvm (BUILD/tools/umemcg-verifier-corpus, one JSON line per program). Printed: how many files
# compile, the verdict agreement over the programs the kernel's verifier ran on, the first error
# line agreement over the shared rejections, and the disagreements grouped by kind (we reject
# what the kernel accepts, by our error; we accept what it rejects, by its error; other wording,
# by the pair), digits folded so that one kind is one group. The rows are kept in
# BUILD/verifier-corpus/rows.jsonl.
# Exit: 0 (the figures meet --min-verdict/--min-error, 0 by default), 1 (below), 0 with
# "skipped" when the package, clang-19 or bpf() is missing.
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = "linux-source-6.12"
SELFTESTS = ROOT + "/tools/testing/selftests/bpf"
MEMBERS = [SELFTESTS + "/progs/*.h", SELFTESTS + "/progs/verifier_*.c", SELFTESTS + "/*.h",
           ROOT + "/tools/include/*", ROOT + "/tools/lib/bpf/*.h"]


def skip(why):
    print("verifier corpus: skipped (%s)" % why)
    sys.exit(0)


def extract(tarball, work):
    stamp = os.path.join(work, "src.stamp")
    st = os.stat(tarball)
    key = "%s %d %d\n" % (tarball, st.st_size, int(st.st_mtime))
    src = os.path.join(work, "src")
    if os.path.exists(stamp) and open(stamp).read() == key:
        return os.path.join(src, ROOT)
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    subprocess.run(["tar", "-xJf", tarball, "-C", src, "--wildcards"] + MEMBERS, check=True)
    with open(stamp, "w") as f:
        f.write(key)
    return os.path.join(src, ROOT)


def compile_one(tree, src, obj):
    if os.path.exists(obj) and os.path.getmtime(obj) >= os.path.getmtime(src):
        return True
    progs = os.path.join(tree, "tools/testing/selftests/bpf/progs")
    multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                               text=True).stdout.strip()
    cmd = ["clang-19", "-O2", "-g", "-target", "bpf", "-mcpu=v4", "-Wno-everything",
           "-I" + progs, "-I" + os.path.dirname(progs),
           "-I" + os.path.join(tree, "tools/include/uapi"),  # also makes ../../../tools/include
           "-I" + os.path.join(tree, "tools/lib"),
           "-I/usr/include/bpf",  # bpf_helper_defs.h (generated in the kernel's build)
           "-I" + os.path.join(tree, "tools/include"),
           "-I/usr/include/" + multiarch, "-c", src, "-o", obj]
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0 and os.path.exists(obj):
        os.unlink(obj)
    return r.returncode == 0


def fold(s):
    return re.sub(r"-?\b\d+\b|0x[0-9a-f]+", "N", s)


def main():
    ap = argparse.ArgumentParser(description="bpfvm verifier against the host kernel on the verifier selftests")
    ap.add_argument("--build", default="build")
    ap.add_argument("--tarball", default="/usr/src/linux-source-6.12.tar.xz")
    ap.add_argument("--min-verdict", type=float, default=0.0)
    ap.add_argument("--min-error", type=float, default=0.0)
    ap.add_argument("--list", action="store_true", help="every disagreeing program")
    ap.add_argument("--only", default="", help="regex on file names")
    a = ap.parse_args()
    tool = os.path.join(a.build, "tools/umemcg-verifier-corpus")
    if not os.path.exists(a.tarball):
        skip("%s absent: install linux-source-6.12" % a.tarball)
    if not shutil.which("clang-19"):
        skip("no clang-19")
    if not os.access(tool, os.X_OK):
        print("verifier corpus: %s not built" % tool)
        sys.exit(2)
    work = os.path.join(a.build, "verifier-corpus")
    os.makedirs(os.path.join(work, "obj"), exist_ok=True)
    tree = extract(a.tarball, work)
    progs = os.path.join(tree, "tools/testing/selftests/bpf/progs")
    srcs = sorted(f for f in os.listdir(progs) if f.startswith("verifier_") and f.endswith(".c"))
    if a.only:
        srcs = [f for f in srcs if re.search(a.only, f)]
    objs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        futs = {f: ex.submit(compile_one, tree, os.path.join(progs, f),
                             os.path.join(work, "obj", f[:-2] + ".o")) for f in srcs}
        for f, fu in futs.items():
            if fu.result():
                objs[f] = os.path.join(work, "obj", f[:-2] + ".o")
    print("verifier corpus: %d of %d verifier_*.c compile without vmlinux.h" % (len(objs), len(srcs)))
    rows = []
    names = list(objs.values())
    chunks = [names[i::2] for i in range(2)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        outs = list(ex.map(lambda c: subprocess.run([tool] + c, capture_output=True, text=True)
                           if c else None, chunks))
    for o in outs:
        if o is None:
            continue
        if o.returncode != 0:
            print("verifier corpus: %s failed: %s" % (tool, o.stderr.strip()))
            sys.exit(2)
        rows += [json.loads(l) for l in o.stdout.splitlines() if l.startswith("{")]
    rows = [r for r in rows if "prog" in r]
    with open(os.path.join(work, "rows.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    if rows and not any(r["k_verified"] for r in rows):
        skip("the host kernel verified none of %d programs: bpf() refused?" % len(rows))
    judged = [r for r in rows if r["k_verified"]]
    same = [r for r in judged if r["u_loaded"] and r["u_ok"] == r["k_ok"]]
    rej = [r for r in same if not r["k_ok"]]
    same_err = [r for r in rej if r["u_error"] == r["k_error"]]
    annotated = [r for r in judged if r["expect"]]
    k_as_annot = [r for r in annotated if r["k_ok"] == (r["expect"] == "success")]
    v = len(same) / max(len(judged), 1)
    e = len(same_err) / max(len(rej), 1)
    print("verifier corpus: %d programs, %d verified by the host kernel (%d accepted)"
          % (len(rows), len(judged), sum(r["k_ok"] for r in judged)))
    print("verifier corpus: verdict %d/%d (%.1f%%), first error line %d/%d (%.1f%%) of the "
          "shared rejections" % (len(same), len(judged), 100 * v, len(same_err), len(rej), 100 * e))
    print("verifier corpus: the kernel as SYSCALL matches the selftests' own privileged "
          "expectation on %d/%d annotated programs" % (len(k_as_annot), len(annotated)))
    groups = collections.defaultdict(list)
    for r in judged:
        tag = os.path.basename(r["file"])[:-2] + ":" + r["prog"]
        if not r["u_loaded"]:
            groups[("our loader refuses the object", fold(r["u_error"]))].append(tag)
        elif r["u_ok"] and not r["k_ok"]:
            groups[("we accept, the kernel rejects", fold(r["k_error"]))].append(tag)
        elif r["k_ok"] and not r["u_ok"]:
            groups[("we reject, the kernel accepts", fold(r["u_error"]))].append(tag)
        elif not r["k_ok"] and r["u_error"] != r["k_error"]:
            groups[("other first error line",
                    "kernel: %s | ours: %s" % (fold(r["k_error"]), fold(r["u_error"])))].append(tag)
    order = sorted(groups.items(), key=lambda kv: (kv[0][0] == "other first error line",
                                                  -len(kv[1]), kv[0]))
    for (kind, what), tags in order:
        print("  %3d  %s: %s" % (len(tags), kind, what))
        if a.list:
            for t in tags:
                print("         %s" % t)
            continue
        print("         e.g. %s" % ", ".join(tags[:3]))
    sys.exit(0 if v >= a.min_verdict and e >= a.min_error else 1)


if __name__ == "__main__":
    main()
