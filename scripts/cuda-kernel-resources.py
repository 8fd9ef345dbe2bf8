#!/usr/bin/env python3
"""Registers, spills and shared memory of kiln's generated CUDA kernels for
sm_90, without a GPU: NVRTC (libnvrtc) makes PTX of each source that
tests/test_array_nvrtc (or tests/test_sort_nvrtc: the onesweep sort's 16
key/value widths) saved, ptxas -v reports on it.

    mkdir /tmp/srcs && KT_SRC_DIR=/tmp/srcs build/tests/test_array_nvrtc
    mkdir /tmp/sort && KT_DUMP_DIR=/tmp/sort build/tests/test_sort_nvrtc
    python3 scripts/cuda-kernel-resources.py /tmp/srcs [--all]

For the SASS itself, cuobjdump (pip wheel nvidia-cuda-cuobjdump) reads the
cubins test_sort_nvrtc saves beside the sources: cuobjdump -sass
-fun kiln_sort_os_pass /tmp/sort/os-8.cubin.

Prints one line per distinct (kernel, registers, spill) with the first
source that gave it; without --all only kernels that spill or use 96
registers or more (fewer than 3 blocks of 256 threads a multiprocessor).
A cheap check before a GPU call: a template change that costs registers
shows here (the onesweep sort once went from 79 to 97 over a signed
shift). Needs libnvrtc and ptxas (CUDA_HOME, default /usr/local/cuda)."""
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

from cuda_tools import nvrtc_and_ptxas


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    show_all = "--all" in sys.argv
    lib, ptxas = nvrtc_and_ptxas()
    nvrtc = ctypes.CDLL(lib)

    def to_ptx(src):
        prog = ctypes.c_void_p()
        if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None):
            return None
        opts = (ctypes.c_char_p * 1)(b"--gpu-architecture=compute_90")
        ok = nvrtc.nvrtcCompileProgram(prog, 1, opts) == 0
        out = None
        if ok:
            n = ctypes.c_size_t()
            nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            nvrtc.nvrtcGetPTX(prog, buf)
            out = buf.value
        nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
        return out

    seen, failed = {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        ptx_path = os.path.join(tmp, "k.ptx")
        files = sorted(glob.glob(os.path.join(args[0], "*.cu")))
        for path in files:
            src = open(path, "rb").read()
            what = src.split(b"\n", 1)[0].decode(errors="replace").lstrip("/ ")
            # the sort's sources: name them by file and key/value widths
            widths = re.findall(rb"^#define (KILN_KEY_BYTES|KILN_VAL_BYTES|KILN_OS_MINB) (\d+)",
                                src, re.M)
            if widths:
                what = os.path.basename(path) + " " + " ".join(
                    f"{k.decode()[5:].lower()}={v.decode()}" for k, v in widths)
            ptx = to_ptx(src)
            if ptx is None:
                failed += 1
                continue
            open(ptx_path, "wb").write(ptx)
            log = subprocess.run([ptxas, "-arch=sm_90", "-v", "-o", os.devnull, ptx_path],
                                 capture_output=True, text=True).stderr
            for block in log.split("ptxas info    : Compiling entry function ")[1:]:
                name = block.split("'")[1]
                regs = re.search(r"Used (\d+) registers", block)
                spill = re.search(r"(\d+) bytes spill stores", block)
                smem = re.search(r"(\d+) bytes smem", block)
                key = (name, int(regs.group(1)) if regs else -1, int(spill.group(1)) if spill else 0)
                if key not in seen:
                    seen[key] = (int(smem.group(1)) if smem else 0, what)
        print(f"{len(files)} sources, {failed} not compiled, {len(seen)} distinct kernel results")
        print(f"{'regs':>5} {'spill':>6} {'smem':>6}  kernel  [first source]")
        for (name, regs, spill), (smem, what) in sorted(seen.items(), key=lambda x: (-x[0][2], -x[0][1])):
            if show_all or spill > 0 or regs >= 96:
                print(f"{regs:5d} {spill:6d} {smem:6d}  {name}  [{what}]")


if __name__ == "__main__":
    main()
