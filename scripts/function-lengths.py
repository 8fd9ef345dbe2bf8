#!/usr/bin/env python3
"""Lists C functions in src/ longer than a limit (default 100 lines, from
the line of the opening brace's declaration to the closing brace), longest
first: the measure of issue 43's "short functions" item.
Usage: scripts/function-lengths.py [LIMIT] [--check]
--check (make test): exit 1 when more functions are over 100 lines than
scripts/function-lengths-ceiling.txt records (lower it as they shrink;
the goal is 0)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from importlib import import_module  # noqa: E402

strip_comments = import_module("check-duplicates").strip_comments


def functions(path):
    text = strip_comments(open(path, encoding="utf-8", errors="replace").read())
    depth, start, name, decl = 0, None, None, (None, "?")
    for no, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        m = re.match(r"^[A-Za-z_][\w\s\*]*?(\w+)\s*\(", line)
        if depth == 0 and m:
            decl = (no, m.group(1))
        if depth == 0 and start is None and re.search(r"\)\s*\{$", s) and decl[0]:
            start, name = decl
        depth += line.count("{") - line.count("}")
        if start is not None and depth == 0:
            yield name, start, no - start + 1
            start = None


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    limit = int(args[0]) if args else 100
    files = subprocess.run(["git", "ls-files", "src"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    long_ones = []
    for f in files:
        if f.endswith(".c"):
            for name, line, n in functions(os.path.join(ROOT, f)):
                if n > limit:
                    long_ones.append((n, f, line, name))
    for n, f, line, name in sorted(long_ones, reverse=True):
        print(f"{n:5d} {f}:{line} {name}")
    print(f"{len(long_ones)} functions over {limit} lines")
    if check:
        with open(os.path.join(ROOT, "scripts", "function-lengths-ceiling.txt")) as fh:
            ceiling = int(fh.read().split("#")[0].split()[0])
        if len(long_ones) > ceiling:
            print(f"function-lengths: {len(long_ones)} functions over {limit} lines, more than "
                  f"the ceiling {ceiling} (scripts/function-lengths-ceiling.txt): split the new one")
            return 1
        print(f"function-lengths: ok ({len(long_ones)} <= ceiling {ceiling}; the goal is 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
