#!/usr/bin/env python3
"""Checks the layering of docs/architecture.md on #include lines, transitively.

Dependencies run one way: shim/ includes nothing of the project; kernel/ only shim/; bpfvm/
only shim/; mm/ kernel/, bpfvm/ and shim/. Tests follow the folder they test: test/shim/ reaches
only shim/ (and test helpers that themselves stay within it), test/kernel/ kernel/ and shim/,
test/bpfvm/ bpfvm/ and shim/, test/mm/ what mm/ may. tools/, bench/, test/tools/ and test/fuzz/
may include everything.

A file's reach is every project folder whose headers it includes, directly or through other
project headers (a test helper that includes mm/ carries mm/ into every test including it).
The meson build enforces the same arrows at link time; this check catches a header-only
include the linker never sees.

Usage: check_layering.py [--root DIR]
Exit status: 0 when every file keeps to its layer, 1 with one line per violation.
"""
import argparse
import os
import re
import sys

# Folder -> the project folders its files may reach ("test" covers test/support/ and the
# folder's own test files).
ALLOWED = {
    "shim": {"shim"},
    "kernel": {"shim", "kernel"},
    "bpfvm": {"shim", "bpfvm"},
    "mm": {"shim", "kernel", "bpfvm", "mm"},
    "test/shim": {"shim", "test"},
    "test/kernel": {"shim", "kernel", "test"},
    "test/bpfvm": {"shim", "bpfvm", "test"},
    "test/mm": {"shim", "kernel", "bpfvm", "mm", "test"},
}
LAYERS = ("shim", "kernel", "bpfvm", "mm", "tools", "bench", "test")
SOURCE_EXT = (".h", ".cc", ".c", ".def", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    """The rule folder of a repository-relative path: 'mm', 'test/mm', ..."""
    parts = rel.split("/")
    if parts[0] == "test" and len(parts) > 2:
        return "test/" + parts[1]
    return parts[0]


def layer_of(rel):
    top = rel.split("/")[0]
    return top if top in LAYERS else None


def collect(root):
    files = {}
    for top in LAYERS:
        base = os.path.join(root, top)
        for dirpath, _, names in os.walk(base):
            for n in names:
                if n.endswith(SOURCE_EXT):
                    full = os.path.join(dirpath, n)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    with open(full, encoding="utf-8", errors="replace") as f:
                        files[rel] = INCLUDE.findall(f.read())
    return files


def resolve(rel, inc, files):
    """An include as written -> the repository file it names, or None (system/abseil)."""
    if inc in files:
        return inc
    local = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, "/")
    return local if local in files else None


def check(root):
    files = collect(root)
    reach_cache = {}

    def reach(rel, stack):
        """Map of folder -> the include chain that first reached it."""
        if rel in reach_cache:
            return reach_cache[rel]
        out = {}
        stack.add(rel)
        for inc in files.get(rel, []):
            target = resolve(rel, inc, files)
            if target is None or target in stack:
                continue
            lay = layer_of(target)
            if lay and lay not in out:
                out[lay] = [target]
            for lay2, chain in reach(target, stack).items():
                if lay2 not in out:
                    out[lay2] = [target] + chain
        stack.discard(rel)
        reach_cache[rel] = out
        return out

    bad = []
    for rel in sorted(files):
        allowed = ALLOWED.get(folder_of(rel))
        if allowed is None:
            continue
        for lay, chain in sorted(reach(rel, set()).items()):
            if lay not in allowed:
                bad.append(f"{rel}: reaches {lay}/ through {' -> '.join(chain)} "
                           f"({folder_of(rel)}/ may reach {', '.join(sorted(allowed))})")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    bad = check(args.root)
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} layering violation(s)")
        return 1
    print("layering: every file keeps to its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
