#!/usr/bin/env python3
"""Registers and spills of the demo's GPU distance kernel (pdist, pdist_sym)
for sm_90 at given tiles, without a GPU: the kernel source is taken from
tools/kiln/demo_kernels.h, NVRTC (libnvrtc) makes PTX for CUDA, ptxas -v
reports on it.

    python3 scripts/pdist-kernel-resources.py f32|f64 SPEC [SPEC...]

SPEC is the demo's tile spec (docs/demo.md): TSxRBI[xRBJ][,kKT][,pPF]
[,bGROUPS_PER_SM][,vVEC]; "s:" in front gives the symmetric kernel (RBJ =
RBI). Example, the CUDA defaults of 2026-11-27 and the float32 full kernel
without its groups-per-SM bound (129 registers: one group a multiprocessor;
1.69 ms against 1.54 with the bound at k16/k8 on an H200):

    python3 scripts/pdist-kernel-resources.py f32 16x8x8,k8,b2 s:16x8,k8,b2 16x8x8,k8
    python3 scripts/pdist-kernel-resources.py f64 16x4x8,k16,b2 s:16x4,k16,b3

A cheap check before a GPU call: a tile whose registers exceed what its
groups per SM allow (65536 / (TS*TS*groups)) runs fewer groups than asked.
The symmetric kernel's shared bytes are for one mirror row block (P_MP 1);
the demo may give it more. Needs libnvrtc and ptxas (CUDA_HOME, default
/usr/local/cuda); not run in CI (no CUDA there)."""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

from cuda_tools import nvrtc_and_ptxas

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def c_string(path, name):
    """The value of `static const char name[] = "..." "...";` in a C file."""
    text = open(path).read()
    start = text.index("static const char %s[] =" % name)
    end = text.index('";\n', start)
    body = text[text.index("\n", start) + 1:end + 1]
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
    return "".join(p.encode().decode("unicode_escape") for p in parts)


def parse(spec):
    sym = spec.startswith("s:")
    fields = (spec[2:] if sym else spec).split(",")
    dims = [int(v) for v in fields[0].split("x")]
    t = {"ts": dims[0], "rbi": dims[1],
         "rbj": dims[2] if len(dims) > 2 else dims[1],
         "kt": 16, "pf": 0, "minb": 1, "vec": 1}
    keys = {"k": "kt", "p": "pf", "b": "minb", "v": "vec"}
    for f in fields[1:]:
        if f[:1] not in keys:
            raise ValueError("bad field '%s' in '%s'" % (f, spec))
        t[keys[f[0]]] = int(f[1:])
    if sym:
        t["rbj"] = t["rbi"]
    return sym, t


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("f32", "f64"):
        sys.exit(__doc__)
    dbl = sys.argv[1] == "f64"
    lib, ptxas = nvrtc_and_ptxas()
    nvrtc = ctypes.CDLL(lib)
    kernel = c_string(os.path.join(ROOT, "tools/kiln/demo_kernels.h"),
                      "demo_pdist_source")
    prelude = open(os.path.join(ROOT, "src/backend/cuda/prelude_cuda.h")).read()
    vmax = 2 if dbl else 4
    for spec in sys.argv[2:]:
        try:
            sym, t = parse(spec)
        except ValueError as e:
            sys.exit(str(e))
        # as tools/kiln/demo_work.c: 16-byte runs where the tile allows
        v = vmax if t["vec"] and t["rbi"] % vmax == 0 and t["rbj"] % vmax == 0 else 1
        src = prelude + (
            "\n#define REAL %s\n#define REAL_IS_DOUBLE %d\n"
            "#define IMIN(a, b) ((a) < (b) ? (a) : (b))\n"
            "#define IMAX(a, b) ((a) > (b) ? (a) : (b))\n"
            "#define P_NAME pd\n#define P_SYM %d\n#define P_TS %d\n"
            "#define P_RBI %d\n#define P_RBJ %d\n#define P_KT %d\n"
            "#define P_PF %d\n#define P_MINB %d\n#define P_MP 1\n#define P_V %d\n"
            % ("double" if dbl else "float", dbl, sym, t["ts"], t["rbi"],
               t["rbj"], t["kt"], t["pf"], t["minb"], v)) + kernel
        prog = ctypes.c_void_p()
        nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"pd.cu",
                                 0, None, None)
        opts = (ctypes.c_char_p * 2)(b"--gpu-architecture=compute_90",
                                     b"-DKILN_BACKEND_CUDA=1")
        if nvrtc.nvrtcCompileProgram(prog, 2, opts) != 0:
            n = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            nvrtc.nvrtcGetProgramLog(prog, log)
            sys.exit("%s: NVRTC failed:\n%s" % (spec, log.value.decode()[:3000]))
        n = ctypes.c_size_t()
        nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n))
        ptx = ctypes.create_string_buffer(n.value)
        nvrtc.nvrtcGetPTX(prog, ptx)
        nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pd.ptx")
            open(path, "wb").write(ptx.value)
            r = subprocess.run([ptxas, "-v", "-arch=sm_90", path, "-o",
                                os.path.join(tmp, "pd.cubin")],
                               capture_output=True, text=True)
        out = r.stdout + r.stderr
        regs = re.search(r"Used (\d+) registers", out)
        spill = re.search(r"(\d+) bytes spill stores", out)
        smem = re.search(r"(\d+) bytes smem", out)
        if not regs:
            sys.exit("%s: ptxas gave no report:\n%s" % (spec, out[:2000]))
        r_ = int(regs.group(1))
        fits = 65536 // (t["ts"] * t["ts"] * r_) if r_ else 0
        print("%s %-20s V=%d  %3d registers, %s bytes spilled, %s bytes shared,"
              " %d groups of %d fit a multiprocessor's registers"
              % (sys.argv[1], spec, v, r_, spill.group(1) if spill else "0",
                 smem.group(1) if smem else "?", fits, t["ts"] * t["ts"]))


if __name__ == "__main__":
    main()
