#!/usr/bin/env python3
"""Fails where a function has more than three `if (st == KILN_OK` steps in a row.

A ladder is a run of statements `if (st == KILN_OK ...) <step>;` at one
indentation with nothing but their own bodies, blank lines and comments
between them. Issue 43, item 3: a sequence of enqueued steps is a chain
(src/algo/gen/chain.h: kiln__chain, sticky status, the first failure wins)
and a sequence of argument checks a checker (kiln__check), so that each
step reads as one call and no step can be forgotten behind a missing
`if`.

Runs listed in scripts/ladders-allowed.txt ("path function steps", one a
line) are notes, not failures, while they stay at or under their count:
the ones left in code other work had open when the rule came (issue 43's
note names them). Take a line out when its function is fixed.

Usage: scripts/check-ladders.py [--max N] [--list] [ROOT]
  --max N   the longest run allowed (default 3)
  --list    print every run over the limit (default: only the count and
            the worst five when it fails)
Exit 1 when a run is over the limit.
"""
import os
import re
import sys

STEP = re.compile(r"^(\s*)(?:else\s+)?if \(st == KILN_OK\b")
COMMENT = re.compile(r"/\*.*?\*/", re.S)


def strip_comments(text):
    """Comments blanked out, line numbers kept."""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def ladders(path):
    """(first line, length, function) for each run of steps in path."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = strip_comments(fh.read()).split("\n")
    runs = []
    func = "?"
    run_start, run_len, run_indent = None, 0, None
    for i, line in enumerate(lines):
        if re.match(r"^[A-Za-z_].*\(", line) and not line.startswith(("if", "for", "while")):
            func = re.sub(r"\(.*", "", line).split()[-1].lstrip("*")
        if not line.strip():
            continue
        m = STEP.match(line)
        indent = len(line) - len(line.lstrip())
        if m and (run_indent is None or indent == run_indent):
            if run_start is None:
                run_start, run_indent = i + 1, indent
            run_len += 1
            continue
        if run_indent is not None and indent > run_indent:
            continue  # the step's own body or continuation
        if run_indent is not None and line.strip().startswith(("}", "else")) and indent >= run_indent:
            continue
        if run_start is not None:
            runs.append((run_start, run_len, func))
        run_start, run_len, run_indent = None, 0, None
        if m:
            run_start, run_len, run_indent = i + 1, 1, indent
    if run_start is not None:
        runs.append((run_start, run_len, func))
    return runs


def main(argv):
    limit, listing, root = 3, False, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--max":
            limit = int(args.pop(0))
        elif a == "--list":
            listing = True
        else:
            root = a
    root = os.path.abspath(root or os.path.join(os.path.dirname(__file__), ".."))
    allowed = {}
    allow_file = os.path.join(root, "scripts", "ladders-allowed.txt")
    if os.path.exists(allow_file):
        with open(allow_file, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split("#")[0].split()
                if len(parts) == 3:
                    allowed[(parts[0], parts[1])] = int(parts[2])
    over, notes = [], []
    for d, _, files in sorted(os.walk(os.path.join(root, "src"))):
        for f in sorted(files):
            if f.endswith(".c"):
                p = os.path.join(d, f)
                for line, n, func in ladders(p):
                    rp = os.path.relpath(p, root).replace(os.sep, "/")
                    if n > limit and n <= allowed.get((rp, func), 0):
                        notes.append((n, rp, line, func))
                    elif n > limit:
                        over.append((n, rp, line, func))
    over.sort(key=lambda t: (-t[0], t[1], t[2]))
    shown = over if listing else over[:5]
    for n, p, line, func in shown:
        print("%s:%d: %s: %d `if (st == KILN_OK` steps in a row (at most %d)" % (p, line, func, n,
                                                                                   limit))
    for n, p, line, func in notes:
        print("note: %s:%d: %s: %d steps in a row (allowed for now by "
              "scripts/ladders-allowed.txt)" % (p, line, func, n))
    if over:
        print("check-ladders: %d run(s) over %d; chain the steps (kiln__chain, "
              "src/algo/gen/chain.h) or check the arguments with kiln__check" % (len(over), limit))
        return 1
    print("check-ladders: ok (no run over %d%s)" % (limit, ", %d allowed for now" % len(notes)
                                                     if notes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
