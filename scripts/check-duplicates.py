#!/usr/bin/env python3
"""Counts pairs of places in src/ and tests/ that share a run of six or more
lines, the same lines or lines of the same shape (other names, numbers and
strings), and fails when a count rises above the ceiling recorded in
scripts/duplicates-ceiling.txt (issue 43: the counts must only go down).

A pair is two files (or one file with itself) sharing at least one such
run; comments, blank lines, lone punctuation and #include lines are passed
over, and a run of lines standing in more than eight places is too common
to count (boilerplate such as a status check). Exit 0 when every count is
at or under its ceiling; --list prints the pairs; --update rewrites the
ceilings to the current counts.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

RUN = 6
TOO_COMMON = 8
AREAS = ("src", "tests")
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".cl")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CEILING = os.path.join(ROOT, "scripts", "duplicates-ceiling.txt")

KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while _Bool _Atomic bool true false
NULL""".split())
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\d[\w.]*|\S')


def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def shape(line):
    toks = []
    for t in TOKEN.findall(line):
        if t[0] in "\"'":
            toks.append("S")
        elif t[0].isdigit():
            toks.append("N")
        elif t[0].isalpha() or t[0] == "_":
            toks.append(t if t in KEYWORDS else "I")
        else:
            toks.append(t)
    return " ".join(toks)


def significant(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip_comments(f.read())
    lines = []
    for no, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s or s.startswith("#include") or not re.search(r"\w", s):
            continue
        lines.append((no, shape(s)))
    return lines


def files_of(area):
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", area], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [p for p in out if p.endswith(SUFFIXES) and os.path.isfile(os.path.join(ROOT, p))]


def pairs_in(area):
    windows = defaultdict(list)
    for path in files_of(area):
        lines = significant(os.path.join(ROOT, path))
        for i in range(len(lines) - RUN + 1):
            key = "\n".join(s for _, s in lines[i:i + RUN])
            windows[key].append((path, lines[i][0], lines[i + RUN - 1][0]))
    pairs = defaultdict(list)
    for places in windows.values():
        if len(places) < 2 or len(places) > TOO_COMMON:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, sa, ea), (fb, sb, eb) = sorted((places[a], places[b]))
                if fa == fb and sb <= ea:
                    continue  # overlapping windows of one run
                pairs[(fa, fb)].append((sa, ea, sb, eb))
    return pairs


def main():
    counts, listing = {}, "--list" in sys.argv
    for area in AREAS:
        p = pairs_in(area)
        counts[area] = len(p)
        if listing:
            for (fa, fb), runs in sorted(p.items(), key=lambda kv: -len(kv[1])):
                sa, ea, sb, eb = runs[0]
                print(f"  {fa}:{sa}-{ea} ~ {fb}:{sb}-{eb} ({len(runs)} windows)")
    if "--update" in sys.argv:
        with open(CEILING, "w") as f:
            f.write("# scripts/check-duplicates.py: pairs of places sharing 6+ lines;\n"
                    "# lower these as duplicates go, never raise them\n")
            for area in AREAS:
                f.write(f"{area} {counts[area]}\n")
    ceilings = {}
    if os.path.exists(CEILING):
        for line in open(CEILING):
            if line.strip() and not line.startswith("#"):
                k, v = line.split()
                ceilings[k] = int(v)
    bad = 0
    for area in AREAS:
        top = ceilings.get(area)
        state = "ok" if top is None or counts[area] <= top else "ROSE"
        bad |= state != "ok"
        print(f"check-duplicates: {area}: {counts[area]} pairs (ceiling {top}) {state}")
    if bad:
        print("check-duplicates: a count rose: see scripts/check-duplicates.py --list; share the "
              "repeated code instead", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
