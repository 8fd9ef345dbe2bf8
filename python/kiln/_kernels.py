"""Programs and kernels from source, and the generators with PyOpenCL's
signatures: ElementwiseKernel, ReductionKernel, GenericScanKernel,
InclusiveScanKernel, ExclusiveScanKernel."""
import re

import numpy as np

from . import _kiln as _k
from ._array import Array, empty
from ._core import Context, get_default_queue
from ._dtypes import C_NAME, code_of, ctype_dtype

_LANG = {None: _k.KILN_LANG_AUTO, "auto": _k.KILN_LANG_AUTO, "opencl": _k.KILN_LANG_OPENCL_C,
         "cuda": _k.KILN_LANG_CUDA_C}


def _opts(options):
    if options is None:
        return None
    if isinstance(options, str):
        return options
    return " ".join(options)


def _default_context(context):
    if context is None:
        return get_default_queue().context
    return context


class LocalMemory:
    """Local (shared) memory of nbytes for a kernel parameter (PyOpenCL's
    cl.LocalMemory)."""

    __slots__ = ("_kiln_local_bytes",)

    def __init__(self, nbytes):
        self._kiln_local_bytes = int(nbytes)

    @property
    def size(self):
        return self._kiln_local_bytes


def _parse_params(params):
    """'float a, __global const float *x' -> [dtype or None (pointer) ...]"""
    out = []
    params = params.strip()
    if not params or params == "void":
        return out
    for p in params.split(","):
        p = p.strip()
        if "*" in p or "[" in p:
            out.append(None)
            continue
        words = [w for w in re.split(r"\s+", p) if w not in (
            "const", "__const", "KILN_CONST", "__private", "private", "restrict", "__restrict__")]
        out.append(ctype_dtype(" ".join(words[:-1])) if len(words) > 1 else None)
    return out


def _hints(dtypes):
    return bytes(0 if d is None else code_of(d) for d in dtypes)


def _kernel_signature(source, name):
    m = re.search(r"\b" + re.escape(name) + r"\s*\(([^)]*)\)\s*\{", source)
    if not m:
        return None
    return _parse_params(m.group(1))


class Kernel(_k.KernelBase):
    """A kernel of a built Program. Call it as PyOpenCL's:
    ``knl(queue, global_size, local_size, *args, wait_for=None) -> Event``.
    Arrays pass their buffer, scalars are converted to the parameter's
    type (read from the source; set_scalar_arg_dtypes overrides it)."""

    __slots__ = ("program", "function_name")

    def __new__(cls, program, name):
        self = super().__new__(cls, program._base, name)
        self.program = program
        self.function_name = name
        sig = _kernel_signature(program.source, name)
        if sig is not None:
            self._set_hints(_hints(sig))
        return self

    def set_scalar_arg_dtypes(self, dtypes):
        self._set_hints(_hints([None if d is None else np.dtype(d) for d in dtypes]))

    def set_args(self, *args):
        raise NotImplementedError("kiln launches are stateless: pass the arguments to the call")

    def __repr__(self):
        return f"<kiln.Kernel {self.function_name}>"


class Program:
    """Source (kiln's portable dialect, or native OpenCL C / CUDA C) for the
    devices of a context. ``Program(ctx, src).build(options)``; kernels are
    attributes: ``prg.vadd(queue, (n,), None, a, b, c)``."""

    def __init__(self, context, source, language=None):
        self.context = _default_context(context)
        self.source = source
        self.language = language
        self._base = None
        self._kernels = {}

    def build(self, options=None, cache=True):
        self._base = _k.ProgramBase(self.context, self.source, _opts(options), _LANG[self.language],
                                    not cache)
        return self

    def build_log(self, device=None):
        dev = device or self.context.devices[0]
        return self._base.build_log(dev._base)

    def __getattr__(self, name):
        if name.startswith("_") or self.__dict__.get("_base") is None:
            raise AttributeError(name)
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = Kernel(self, name)
        return k

    def kernel(self, name):
        return Kernel(self, name)


def _parse_arguments(arguments):
    if not isinstance(arguments, str):
        raise TypeError("arguments: give the C declarations as a string ('float a, float *x')")
    return _parse_params(arguments)


def _first_array(args):
    for a in args:
        if isinstance(a, Array):
            return a
    return None


class ElementwiseKernel:
    """PyOpenCL's ElementwiseKernel(context, arguments, operation, name,
    preamble, options); call ``knl(*args, range=None, queue=None,
    wait_for=None) -> Event`` (n = the first array's size)."""

    def __init__(self, context, arguments, operation, name="elwise_kernel", preamble="", options=None,
                 any_shape=False):
        self.context = _default_context(context)
        self._hints = _hints(_parse_arguments(arguments))
        self._gen = _k.elementwise_create(self.context, arguments, operation, name, preamble or None,
                                          _opts(options),
                                          _k.KILN_ELEMENTWISE_ANY_SHAPE if any_shape else 0)

    def __call__(self, *args, range=None, slice=None, queue=None, wait_for=None):
        first = _first_array(args)
        if range is not None:
            n = range if isinstance(range, int) else len(range)
        elif slice is not None:
            raise NotImplementedError("slice= is not supported; pass views instead")
        elif first is not None:
            n = first.size
        else:
            raise ValueError("ElementwiseKernel: no array argument to take the size from (give range=)")
        q = queue or (first.queue if first is not None else get_default_queue())
        return self._gen.launch(q, n, args, self._hints, wait_for)


class ReductionKernel:
    """PyOpenCL's ReductionKernel(ctx, dtype_out, neutral, reduce_expr,
    map_expr, arguments, name, options, preamble); the call returns a 0-d
    kiln Array (``(result, event)`` with return_event=True)."""

    def __init__(self, ctx, dtype_out, neutral, reduce_expr, map_expr=None, arguments=None,
                 name="reduce_kernel", options=None, preamble="", initial=None):
        self.context = _default_context(ctx)
        self.dtype_out = np.dtype(dtype_out)
        if arguments is None:
            raise ValueError("ReductionKernel: arguments are required")
        self._hints = _hints(_parse_arguments(arguments))
        out_type = C_NAME.get(self.dtype_out)
        if out_type is None:
            raise TypeError(f"ReductionKernel: unsupported dtype_out {self.dtype_out}")
        self._gen = _k.reduction_create(self.context, arguments, out_type, str(neutral), reduce_expr,
                                        map_expr or "in[i]", preamble or None, name, _opts(options),
                                        initial)

    def __call__(self, *args, queue=None, wait_for=None, return_event=False, range=None, out=None):
        first = _first_array(args)
        n = (range if isinstance(range, int) else len(range)) if range is not None else (
            first.size if first is not None else 0)
        q = queue or (first.queue if first is not None else get_default_queue())
        res = out if out is not None else empty((), self.dtype_out, q)
        ev = self._gen.launch(q, n, args, self._hints, wait_for, res)
        return (res, ev) if return_event else res


class GenericScanKernel:
    """PyOpenCL's GenericScanKernel(ctx, dtype, arguments, input_expr,
    scan_expr, neutral, output_statement, is_segment_start_expr=None, ...);
    call ``knl(*args, queue=None, wait_for=None, size=None) -> Event``."""

    def __init__(self, ctx, dtype, arguments, input_expr, scan_expr, neutral, output_statement,
                 is_segment_start_expr=None, input_fetch_exprs=None, index_dtype=None,
                 name_prefix="scan", options=None, preamble=""):
        self.context = _default_context(ctx)
        self.dtype = np.dtype(dtype)
        self._hints = _hints(_parse_arguments(arguments))
        self._gen = _k.scan_create(self.context, arguments, C_NAME[self.dtype], str(neutral),
                                   scan_expr, input_expr, output_statement, is_segment_start_expr,
                                   preamble or None, name_prefix, _opts(options))

    def __call__(self, *args, queue=None, wait_for=None, size=None):
        first = _first_array(args)
        n = size if size is not None else (first.size if first is not None else 0)
        q = queue or (first.queue if first is not None else get_default_queue())
        return self._gen.launch(q, n, args, self._hints, wait_for)


class _SimpleScan:
    _exclusive = False

    def __init__(self, ctx, dtype, scan_expr, neutral=None, name_prefix="scan", options=None,
                 preamble=""):
        dtype = np.dtype(dtype)
        t = C_NAME[dtype]
        if neutral is None:
            if self._exclusive:
                raise ValueError("ExclusiveScanKernel needs a neutral element")
            neutral = "0"
        out = "out[i] = prev_item" if self._exclusive else "out[i] = item"
        self._scan = GenericScanKernel(ctx, dtype, f"const {t} *in, {t} *out", "in[i]", scan_expr,
                                       neutral, out, name_prefix=name_prefix, options=options,
                                       preamble=preamble)
        self.dtype = dtype

    def __call__(self, input_ary, output_ary=None, queue=None, size=None, wait_for=None):
        if output_ary is None:
            output_ary = empty(input_ary.shape, self.dtype, input_ary.queue)
        self._scan(input_ary, output_ary, queue=queue, size=size, wait_for=wait_for)
        return output_ary


class InclusiveScanKernel(_SimpleScan):
    """PyOpenCL's InclusiveScanKernel(ctx, dtype, scan_expr, neutral=None)."""


class ExclusiveScanKernel(_SimpleScan):
    """PyOpenCL's ExclusiveScanKernel(ctx, dtype, scan_expr, neutral)."""

    _exclusive = True
