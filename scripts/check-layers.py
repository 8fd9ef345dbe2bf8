#!/usr/bin/env python3
"""Fails if a file includes a header its layer may not use.

The layers and what each may include (docs/architecture.md):

  src/base              base
  src/cache             base, cache
  src/backend/<name>/   base, backend/backend.h, backend/interop.h,
                        backend/prelude_half.h, backend/<name>/
  src/backend/*.c       base, backend/ (the registry)
  src/core              base, cache, core, backend/backend.h,
                        backend/interop.h, backend/registry.h
  src/algo/<folder>/    base and the algo folders at or below its own
                        (ALGO_USES below; docs/architecture.md):
                          array    algo/array
                          gen      + algo/gen
                          prim     + algo/prim, algo/kernels
                          ops      + algo/ops
                          linalg   + algo/linalg
                          offload  algo/array, algo/gen, algo/offload
  src/testing           anything under src/ (the tests' one door)
  src/mpi               public headers and src/mpi (kiln_mpi, a library
                        over libkiln's public API)
  src/gl                public headers and src/gl (kiln_gl, likewise)
  tests/, fuzz/         public headers, their own folder, testing/kiln_test_internal.h,
                        tools/kiln/demo_work.h (test_demo checks the demo)
  tools, bench, examples  public headers and their own folder

The build's per-layer include trees already refuse most of these; this
check also catches relative paths ("../core/internal.h"), which a compiler
resolves from the including file's folder whatever the include path says.
It also fails if src/core names a backend (the identifiers
KILN_BACKEND_OPENCL / KILN_BACKEND_CUDA, or a string holding "opencl:" or
"cuda:"): core reads each backend's table (selector prefix, priority,
languages) from the registry instead. src/algo's .c files get the same check as
a note only, until algorithms choose their variants by capability.
Usage: scripts/check-layers.py [ROOT]   (exit 1 and a list on a violation)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def rel(p):
    return os.path.relpath(p, ROOT).replace(os.sep, "/")


def resolve(src, name):
    """Where the compiler would find `name` included from src (or None)."""
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.exists(here):
        return rel(here)
    for root in ("src", "include", "tests", "tools/kiln"):
        p = os.path.normpath(os.path.join(ROOT, root, name))
        if os.path.exists(p):
            return rel(p)
    return None


# What each folder of src/algo may include besides base and public headers:
# its own folder and those below it. A file directly in src/algo/ (none
# now) or in a folder not listed here is refused.
ALGO_USES = {
    "array": ["array"],
    "gen": ["array", "gen"],
    "prim": ["array", "gen", "prim", "kernels"],
    "ops": ["array", "gen", "prim", "ops"],
    "linalg": ["array", "gen", "prim", "ops", "linalg"],
    "offload": ["array", "gen", "offload"],
}


def allowed(src_rel, target):
    """True if the file at src_rel may include target (both repo-relative)."""
    public = target == "include/kiln.h" or target.startswith("include/kiln/")
    top = src_rel.split("/")
    if top[0] == "src":
        layer = top[1]
        ok = ["src/base/"]
        if layer == "base":
            pass
        elif layer == "cache":
            ok += ["src/cache/"]
        elif layer == "backend" and len(top) > 3:
            ok += ["src/backend/backend.h", "src/backend/interop.h",
                   "src/backend/prelude_half.h", "src/backend/prelude_complex.h", "src/backend/%s/" % top[2]]
        elif layer == "backend":
            ok += ["src/backend/"]
        elif layer == "core":
            ok += ["src/cache/", "src/core/", "src/backend/backend.h",
                   "src/backend/interop.h", "src/backend/registry.h"]
        elif layer == "algo" and len(top) > 3 and top[2] in ALGO_USES:
            ok += ["src/algo/%s/" % f for f in ALGO_USES[top[2]]]
        elif layer == "algo":
            return False
        elif layer == "testing":
            ok += ["src/"]
        elif layer == "mpi":  # kiln_mpi: kiln's public API and its own folder
            ok += ["src/mpi/"]
        elif layer == "gl":  # kiln_gl: likewise (docs/gl.md)
            ok += ["src/gl/"]
        else:
            return False
        return public or any(target == o or (o.endswith("/") and target.startswith(o))
                             for o in ok)
    if top[0] == "include":
        return public
    if top[0] in ("tests", "fuzz"):
        return public or target.startswith(top[0] + "/") or target in (
            "src/testing/kiln_test_internal.h", "tools/kiln/demo_work.h")
    # tools, bench, examples: public headers and their own folder
    own = os.path.dirname(src_rel) + "/"
    return public or target.startswith(own)


BACKEND_IDENT = re.compile(r"\bKILN_BACKEND_(OPENCL|CUDA)\b")
BACKEND_SELECTOR = re.compile(r"(opencl|cuda):", re.I)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def backend_names(path):
    """'file:line: what' for each place the file names a backend."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    # blank out comments, keeping line numbers (history may name backends)
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    hits = []
    for m in BACKEND_IDENT.finditer(code):
        hits.append((m.start(), m.group(0)))
    for m in STRING.finditer(code):
        if BACKEND_SELECTOR.search(m.group(0)):
            hits.append((m.start(), "the string " + m.group(0)))
    return ["%s:%d: names a backend (%s)" % (rel(path), code.count("\n", 0, at) + 1, what)
            for at, what in sorted(hits)]


def naming_check():
    """Core must not name a backend (fails); algo should not (a note)."""
    fail, note = [], []
    for d, _, files in os.walk(os.path.join(ROOT, "src", "core")):
        fail += [h for f in sorted(files) if f.endswith((".c", ".h"))
                 for h in backend_names(os.path.join(d, f))]
    for d, _, files in sorted(os.walk(os.path.join(ROOT, "src", "algo"))):
        note += [h for f in sorted(files) if f.endswith(".c")
                 for h in backend_names(os.path.join(d, f))]
    for n in note:
        print("note: " + n)
    if note:
        print("check-layers: note: src/algo names a backend %d time(s); algorithms "
              "should choose by capability (kiln_device_info)" % len(note))
    for b in fail:
        print(b)
    if fail:
        print("check-layers: src/core names a backend %d time(s); read the backend's "
              "table (src/backend/backend.h) instead" % len(fail))
    return len(fail)


def main():
    bad = []
    for top in ("src", "include", "tests", "fuzz", "tools", "bench", "examples"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith((".c", ".h", ".cu", ".cl")):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    name = m.group(1)
                    target = resolve(path, name)
                    if target is None:
                        continue  # generated or system-like; the build decides
                    if not allowed(rel(path), target):
                        line = text.count("\n", 0, m.start()) + 1
                        bad.append('%s:%d: includes "%s" (%s), which its layer may not use'
                                   % (rel(path), line, name, target))
    for b in bad:
        print(b)
    if bad:
        print("check-layers: %d forbidden include(s); see docs/architecture.md" % len(bad))
    named = naming_check()
    if bad or named:
        return 1
    print("check-layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
