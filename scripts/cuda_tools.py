"""Shared by the offline CUDA scripts (cuda-kernel-resources.py,
pdist-kernel-resources.py): where libnvrtc and ptxas are."""
import glob
import os
import sys


def find(cuda, names):
    for n in names:
        hits = glob.glob(os.path.join(cuda, "**", n), recursive=True)
        if hits:
            return sorted(hits)[0]
    return None


def nvrtc_and_ptxas():
    """(libnvrtc path, ptxas path) under CUDA_HOME (default
    /usr/local/cuda) or /usr/local/cuda-*; exits with a message if either
    is missing."""
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    lib = ptxas = None
    for c in [cuda] + sorted(glob.glob("/usr/local/cuda-*")):
        lib = lib or find(c, ["libnvrtc.so", "libnvrtc.so.*"])
        ptxas = ptxas or find(c, ["ptxas"])
    if not lib or not ptxas:
        sys.exit("libnvrtc or ptxas not found (set CUDA_HOME)")
    return lib, ptxas
