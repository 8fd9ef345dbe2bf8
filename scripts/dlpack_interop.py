#!/usr/bin/env python3
"""kiln <-> NumPy / CuPy / PyTorch through DLPack, by ctypes over libkiln.

    python3 scripts/dlpack_interop.py BUILD/libkiln.so [--device SEL]
        [--peers numpy,cupy,torch]

For every peer that imports (others are skipped with a note) and both
managed tensor kinds (DLManagedTensor, "dltensor" capsules;
DLManagedTensorVersioned, "dltensor_versioned"):
  export  kiln -> peer: a kiln array and a strided view with an offset
          (peer.from_dlpack on a small wrapper class with __dlpack__ and
          __dlpack_device__), values checked; then a write through the peer
          must be seen by kiln once the peer drops the tensor (zero copy on
          CUDA and PoCL; a mapped copy written back on an OpenCL GPU);
  import  peer -> kiln: kiln_array_from_dlpack* of the peer's __dlpack__()
          capsule (dense and strided), values checked; on CUDA a kiln fill
          must be seen by the peer (zero copy); the peer's deleter must run.
Every dtype both sides know is exported and imported once.

--device: kiln's device (default cuda:0 when CuPy or torch sees a GPU, else
pocl). NumPy only imports host memory: with --device cuda:0 its rows are
skipped. CuPy and torch only import CUDA memory: on pocl theirs are skipped.
Prints one line per check and "N passed, N failed"; exit 1 on a failure.
"""
import argparse
import ctypes as C
import gc
import sys

# ---------------------------------------------------------------- DLPack ABI


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    pass


DELETER = C.CFUNCTYPE(None, C.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p),
                            ("deleter", DELETER)]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    pass


DELETER_V = C.CFUNCTYPE(None, C.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", DELETER_V),
    ("flags", C.c_uint64), ("dl_tensor", DLTensor)]

kDLCPU, kDLCUDA = 1, 2

# kiln dtypes (include/kiln.h) and their NumPy names
KILN_DTYPES = {"int8": 1, "uint8": 2, "int16": 3, "uint16": 4, "int32": 5,
               "uint32": 6, "int64": 7, "uint64": 8, "float16": 9,
               "float32": 10, "float64": 11}

# ---------------------------------------------------------------- capsules

api = C.pythonapi
CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)
api.PyCapsule_New.restype = C.py_object
api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, CAPSULE_DESTRUCTOR]
api.PyCapsule_IsValid.restype = C.c_int
api.PyCapsule_IsValid.argtypes = [C.py_object, C.c_char_p]
api.PyCapsule_GetPointer.restype = C.c_void_p
api.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
api.PyCapsule_SetName.restype = C.c_int
api.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
# raw forms for the destructor, which gets a borrowed PyObject *
_IsValidRaw = C.PYFUNCTYPE(C.c_int, C.c_void_p, C.c_char_p)(("PyCapsule_IsValid", api))
_GetPointerRaw = C.PYFUNCTYPE(C.c_void_p, C.c_void_p, C.c_char_p)(("PyCapsule_GetPointer", api))

# capsule names must outlive the capsules: module-level buffers
NAME = C.create_string_buffer(b"dltensor")
NAME_V = C.create_string_buffer(b"dltensor_versioned")
USED = C.create_string_buffer(b"used_dltensor")
USED_V = C.create_string_buffer(b"used_dltensor_versioned")


@CAPSULE_DESTRUCTOR
def _capsule_gone(cap):
    """A capsule nobody consumed: its tensor is still ours, delete it."""
    if _IsValidRaw(cap, NAME):
        t = C.cast(_GetPointerRaw(cap, NAME), C.POINTER(DLManagedTensor))
        t.contents.deleter(t)
    elif _IsValidRaw(cap, NAME_V):
        t = C.cast(_GetPointerRaw(cap, NAME_V), C.POINTER(DLManagedTensorVersioned))
        t.contents.deleter(t)


# ---------------------------------------------------------------- kiln


class Kiln:
    def __init__(self, path, selector):
        L = self.L = C.CDLL(path)
        vp, pp = C.c_void_p, C.POINTER(C.c_void_p)
        sz = C.POINTER(C.c_size_t)
        sig = {
            "kiln_device_select": [C.c_char_p, pp],
            "kiln_context_create": [pp, C.c_size_t, pp],
            "kiln_queue_create": [vp, vp, C.c_uint, pp],
            "kiln_queue_finish": [vp],
            "kiln_array_from_host": [vp, C.c_int, C.c_uint, sz, vp, pp],
            "kiln_array_read": [vp, vp, vp],
            "kiln_array_fill": [vp, vp, vp, C.c_size_t, vp, vp],
            "kiln_array_view": [vp, vp, pp],
            "kiln_array_to_dlpack": [vp, vp, C.POINTER(C.POINTER(DLManagedTensor))],
            "kiln_array_to_dlpack_versioned":
                [vp, vp, C.POINTER(C.POINTER(DLManagedTensorVersioned))],
            "kiln_array_from_dlpack": [vp, vp, pp],
            "kiln_array_from_dlpack_versioned": [vp, vp, pp],
        }
        for name, args in sig.items():
            getattr(L, name).argtypes = args
            getattr(L, name).restype = C.c_int
        L.kiln_array_release.argtypes = [vp]
        L.kiln_array_release.restype = None
        L.kiln_array_size.argtypes = [vp]
        L.kiln_array_size.restype = C.c_size_t
        L.kiln_array_dtype.argtypes = [vp]
        L.kiln_array_dtype.restype = C.c_int
        L.kiln_last_error_message.restype = C.c_char_p
        self.dev, self.ctx, self.queue = vp(), vp(), vp()
        self.ok(L.kiln_device_select(selector.encode(), C.byref(self.dev)), "select")
        self.ok(L.kiln_context_create(C.byref(self.dev), 1, C.byref(self.ctx)), "context")
        self.ok(L.kiln_queue_create(self.ctx, self.dev, 0, C.byref(self.queue)), "queue")

    def ok(self, st, what):
        if st != 0:
            raise RuntimeError("%s: status %d: %s" % (
                what, st, self.L.kiln_last_error_message().decode(errors="replace")))

    def from_numpy(self, a):
        import numpy as np
        a = np.ascontiguousarray(a)
        shape = (C.c_size_t * a.ndim)(*a.shape)
        out = C.c_void_p()
        self.ok(self.L.kiln_array_from_host(self.ctx, KILN_DTYPES[a.dtype.name], a.ndim,
                                            shape, a.ctypes.data, C.byref(out)), "from_host")
        return out

    def read(self, arr, shape, dtype):
        import numpy as np
        out = np.empty(shape, dtype=dtype)
        self.ok(self.L.kiln_array_read(self.queue, arr, out.ctypes.data), "read")
        return out

    def view(self, arr, slices):
        s = (C.c_ssize_t * (3 * len(slices)))(*[v for sl in slices for v in sl])
        out = C.c_void_p()
        self.ok(self.L.kiln_array_view(arr, s, C.byref(out)), "view")
        return out

    def import_capsule(self, cap):
        """kiln_array_from_dlpack* of a peer's capsule; renames it 'used'."""
        out = C.c_void_p()
        if api.PyCapsule_IsValid(cap, NAME_V):
            p = api.PyCapsule_GetPointer(cap, NAME_V)
            self.ok(self.L.kiln_array_from_dlpack_versioned(self.ctx, p, C.byref(out)),
                    "from_dlpack_versioned")
            api.PyCapsule_SetName(cap, USED_V)
        else:
            p = api.PyCapsule_GetPointer(cap, NAME)
            self.ok(self.L.kiln_array_from_dlpack(self.ctx, p, C.byref(out)), "from_dlpack")
            api.PyCapsule_SetName(cap, USED)
        return out


class KilnTensor:
    """The tiny wrapper NumPy/CuPy/torch's from_dlpack want: __dlpack__ and
    __dlpack_device__ over a kiln array (the array stays the caller's)."""

    def __init__(self, k, arr):
        self.k, self.arr, self.kinds = k, arr, []
        t = C.POINTER(DLManagedTensor)()
        k.ok(k.L.kiln_array_to_dlpack(k.queue, arr, C.byref(t)), "to_dlpack (probe)")
        d = t.contents.dl_tensor.device
        self.device = (d.device_type, d.device_id)
        t.contents.deleter(t)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # kiln finishes its queue before exporting: ready on every stream
        if max_version is not None and max_version[0] >= 1:
            self.kinds.append("versioned")
            t = C.POINTER(DLManagedTensorVersioned)()
            self.k.ok(self.k.L.kiln_array_to_dlpack_versioned(self.k.queue, self.arr,
                                                              C.byref(t)), "to_dlpack_versioned")
            return api.PyCapsule_New(C.cast(t, C.c_void_p), NAME_V, _capsule_gone)
        self.kinds.append("legacy")
        t = C.POINTER(DLManagedTensor)()
        self.k.ok(self.k.L.kiln_array_to_dlpack(self.k.queue, self.arr, C.byref(t)),
                  "to_dlpack")
        return api.PyCapsule_New(C.cast(t, C.c_void_p), NAME, _capsule_gone)


# ---------------------------------------------------------------- checks

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print("%s  %s" % ("ok  " if ok else "FAIL", what))


def peers(names, on_cuda):
    """name -> (from_dlpack, to_numpy, is_cuda, module) for the importable ones."""
    out = {}
    for n in names:
        try:
            if n == "numpy":
                import numpy as np
                if on_cuda:
                    print("note: numpy skipped (it imports host memory only)")
                    continue
                out[n] = (np.from_dlpack, lambda x: x, lambda a: a.copy(), np)
            elif n == "cupy":
                import cupy as cp
                if not on_cuda:
                    print("note: cupy skipped (kiln's device is not CUDA)")
                    continue
                out[n] = (cp.from_dlpack, cp.asnumpy, cp.asarray, cp)
            elif n == "torch":
                import torch
                if not on_cuda:
                    # torch imports host memory too
                    out[n] = (torch.from_dlpack, lambda t: t.numpy(),
                              lambda a: torch.from_numpy(a.copy()), torch)
                    continue
                out[n] = (torch.from_dlpack, lambda t: t.cpu().numpy(),
                          lambda a: torch.from_numpy(a.copy()).cuda(), torch)
        except Exception as e:  # not installed, or no GPU
            print("note: %s skipped: %s" % (n, e))
    return out


def sync(name, mod, on_cuda):
    if not on_cuda:
        return
    if name == "cupy":
        mod.cuda.runtime.deviceSynchronize()
    elif name == "torch":
        mod.cuda.synchronize()


def main():
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib")
    ap.add_argument("--device", default=None)
    ap.add_argument("--peers", default="numpy,cupy,torch")
    args = ap.parse_args()
    sel = args.device
    if sel is None:
        sel = "pocl"
        try:
            import torch
            if torch.cuda.is_available():
                sel = "cuda:0"
        except Exception:
            pass
    k = Kiln(args.lib, sel)
    on_cuda = sel.startswith("cuda")
    print("kiln device: %s" % sel)
    rng = np.random.default_rng(20261124)
    for name, (from_dlpack, to_np, from_np, mod) in peers(args.peers.split(","),
                                                             on_cuda).items():
        for versioned in (False, True):
            kind = "versioned" if versioned else "legacy"
            # ---- export: a dense array and a strided view with an offset
            host = rng.standard_normal((6, 10)).astype(np.float32)
            arr = k.from_numpy(host)
            if name == "torch":
                # PyTorch has no negative strides: importing one ends the
                # process (a c10::Error in at::fromDLPack escapes as
                # std::terminate), so torch gets a positive-stride view
                view = k.view(arr, [(1, 6, 2), (1, 10, 3)])
                want_view = host[1:6:2, 1:10:3]
            else:
                view = k.view(arr, [(1, 6, 2), (9, -20, -3)])
                want_view = host[1:6:2, 9::-3]
            for label, a, want in (("dense", arr, host), ("view", view, want_view)):
                try:
                    kt = KilnTensor(k, a)
                    x = from_dlpack(kt if versioned else _LegacyOnly(kt))
                    if versioned and kt.kinds != ["versioned"]:
                        print("note: %s did not ask for a versioned tensor (%s)" %
                              (name, kt.kinds))
                    check(np.array_equal(to_np(x), want),
                          "%s %s export %s: values" % (name, kind, label))
                    try:
                        x[0, 0] = 99.0
                        del x
                        gc.collect()
                        sync(name, mod, on_cuda)
                        back = k.read(a, want.shape, np.float32)
                        check(back[0, 0] == 99.0,
                              "%s %s export %s: the peer's write reaches kiln" %
                              (name, kind, label))
                    except (ValueError, RuntimeError) as e:
                        print("note: %s %s export %s: no write (%s)" % (name, kind, label, e))
                except Exception as e:
                    check(False, "%s %s export %s: %s" % (name, kind, label, e))
            k.L.kiln_array_release(view)
            k.L.kiln_array_release(arr)
            # ---- import: dense and strided peer arrays
            src = rng.standard_normal((5, 8)).astype(np.float64)
            for label, want in (("dense", src), ("strided", src[::2, ::3])):
                try:
                    px = from_np(src)
                    if label == "strided":
                        px = px[::2, ::3]
                    sync(name, mod, on_cuda)
                    cap = None
                    if versioned:
                        try:
                            cap = px.__dlpack__(max_version=(1, 0))
                        except TypeError:
                            print("note: %s's __dlpack__ has no max_version" % name)
                    if cap is None:
                        cap = px.__dlpack__()
                    if versioned and api.PyCapsule_IsValid(cap, NAME):
                        print("note: %s gave a legacy capsule for max_version=(1, 0)" % name)
                    a = k.import_capsule(cap)
                    del cap
                    got = k.read(a, want.shape, np.float64)
                    check(np.array_equal(got, want), "%s %s import %s: values" %
                          (name, kind, label))
                    if on_cuda:
                        nine = C.c_double(9.0)
                        k.ok(k.L.kiln_array_fill(k.queue, a, C.byref(nine), 0, None, None),
                             "fill")
                        k.ok(k.L.kiln_queue_finish(k.queue), "finish")
                        check(bool((to_np(px) == 9.0).all()),
                              "%s %s import %s: zero copy (kiln's fill seen by the peer)" %
                              (name, kind, label))
                    k.L.kiln_array_release(a)
                except Exception as e:
                    check(False, "%s %s import %s: %s" % (name, kind, label, e))
        # ---- every dtype both ways
        for dt, code in KILN_DTYPES.items():
            try:
                host = (rng.standard_normal(37) * 50).astype(dt)
                arr = k.from_numpy(host)
                x = from_dlpack(KilnTensor(k, arr))
                ok_out = np.array_equal(to_np(x), host)
                del x
                k.L.kiln_array_release(arr)
                px = from_np(host)
                sync(name, mod, on_cuda)
                a = k.import_capsule(px.__dlpack__())
                ok_in = k.L.kiln_array_dtype(a) == code and np.array_equal(
                    k.read(a, host.shape, dt), host)
                k.L.kiln_array_release(a)
                check(ok_out and ok_in, "%s dtype %s both ways" % (name, dt))
            except Exception as e:
                if name == "torch" and dt in ("uint16", "uint32", "uint64"):
                    print("note: torch dtype %s: %s (torch's unsigned types are "
                          "limited)" % (dt, e))
                else:
                    check(False, "%s dtype %s: %s" % (name, dt, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


class _LegacyOnly:
    """Hides max_version from a peer so that it gets a DLManagedTensor."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if max_version is not None:
            # a peer that asks for the versioned form accepts the legacy one
            # only when it retries without max_version: refuse the first ask
            raise TypeError("legacy only")
        return self.t.__dlpack__(stream=stream)


if __name__ == "__main__":
    sys.exit(main())
