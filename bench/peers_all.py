#!/usr/bin/env python3
"""Issue 48's one table, regenerated (scripts/gpu-bench-all.sh runs this).

    python3 bench/peers_all.py peers TOPIC --json FILE [--sizes N,N...]
        [--peers torch,cupy]
        Times the GPU peers (PyTorch, CuPy) of one topic and writes FILE
        (JSON, rewritten after every op, so a peer stopped by a time limit
        leaves what it measured). TOPIC: algo (copy, axpy, sum, dot,
        scan_int32), sort (sort_int32, argsort_int32, sort_int64 of n/2
        keys), select (copy_if_f32), take, tkb (sum_axis0 of a 16384^2
        matrix, hist_uniform: 256 bins over [0, 1]), random (fill_f32,
        uniform_f32, normal_f32), or sweep (axpy, sum, dot, scan_int32,
        sort_int32, copy_if_f32, take, hist_uniform, uniform_f32 at every
        size of --sizes). Timing: CUDA events around the call, median of 11
        after 2 warm-ups (of 5 above 2^24), results left on the device, and
        the host wall time from the first event's record to the end of the
        synchronize. A peer that cannot be imported, or has no CUDA device,
        is recorded as absent.

    python3 bench/peers_all.py table DIR [--md FILE] [--chart FILE.png]
        Reads what gpu-bench-all.sh left in DIR (each step's stdout in
        STEP.out, exit status in STEP.rc, seconds in STEP.secs; the peers'
        JSON in STEP.json) and prints the ratio table (op, kiln cuda:0,
        NVIDIA OpenCL, best peer, ratio best peer / kiln cuda:0, goal,
        met/miss), the size sweep (text, and a PNG chart when matplotlib is
        importable) and the steps' times. Exit status 1 when any kiln
        result failed its verification (a WRONG line or a crash), 2 when
        some kiln step only timed out or was skipped for the budget, else 0.

Needs only the Python standard library for `table`; `peers` needs torch
and/or cupy (numpy is not used)."""
import glob
import json
import os
import re
import statistics
import sys
import time

RUNS = 11
MATRIX = 16384  # sum_axis0's matrix side (issue 48's row)


def runs_for(n):
    return RUNS if n <= 1 << 24 else 5


# --------------------------------------------------------------------------
# peers


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch has no CUDA device here")
        self.t = torch
        self.dev = torch.device("cuda")
        self.device_name = torch.cuda.get_device_name(0)
        self.version = torch.__version__

    def event(self):
        return self.t.cuda.Event(enable_timing=True)

    def elapsed_ms(self, a, b):
        return a.elapsed_time(b)

    def sync(self):
        self.t.cuda.synchronize()

    def free(self):
        self.t.cuda.empty_cache()

    # data and ops: each maker returns {op: callable}
    def f32(self, n):
        t = self.t
        return (t.arange(n, device=self.dev) % 1000).to(t.float32) * 0.001

    def algo(self, n, ops):
        t = self.t
        x = self.f32(n)
        y = t.ones(n, dtype=t.float32, device=self.dev)
        z = t.empty_like(x)
        xi = (t.arange(n, device=self.dev) % 7).to(t.int32)
        oi = t.empty_like(xi)
        return {"copy": lambda: z.copy_(x),
                "axpy": lambda: t.add(y, x, alpha=2, out=z),
                "sum": lambda: x.sum(),
                "dot": lambda: t.dot(x, y),
                "scan_int32": lambda: t.cumsum(xi, 0, dtype=t.int32, out=oi)}

    def keys32(self, n):
        t = self.t
        return t.randint(-2**31, 2**31, (n,), dtype=t.int64,
                         device=self.dev).to(t.int32)

    def sort(self, n, ops):
        t = self.t
        r = {}
        if "sort_int32" in ops or "argsort_int32" in ops:
            k32 = self.keys32(n)
            r["sort_int32"] = lambda: t.sort(k32)
            r["argsort_int32"] = lambda: t.argsort(k32, stable=True)
        if "sort_int64" in ops:
            hi = t.randint(0, 2**32, (n // 2,), dtype=t.int64, device=self.dev)
            lo = t.randint(0, 2**32, (n // 2,), dtype=t.int64, device=self.dev)
            k64 = (hi << 32) ^ lo
            r["sort_int64"] = lambda: t.sort(k64)
        return r

    def select(self, n, ops):
        u = self.t.rand(n, device=self.dev)
        return {"copy_if_f32": lambda: u[u > 0.5]}

    def take(self, n, ops):
        t = self.t
        x = self.f32(n)
        idx = t.randint(0, n, (n,), dtype=t.int64, device=self.dev)
        o = t.empty_like(x)
        return {"take": lambda: t.index_select(x, 0, idx, out=o)}

    def tkb(self, n, ops):
        t = self.t
        r = {}
        if "sum_axis0" in ops:
            m = t.rand(MATRIX, MATRIX, device=self.dev) - 0.5
            r["sum_axis0"] = lambda: m.sum(0)
        if "hist_uniform" in ops:
            u = t.rand(n, device=self.dev)
            r["hist_uniform"] = lambda: t.histc(u, 256, 0.0, 1.0)
        return r

    def random(self, n, ops):
        t = self.t
        out = t.empty(n, dtype=t.float32, device=self.dev)
        return {"fill_f32": lambda: out.fill_(1.0),
                "uniform_f32": lambda: t.rand(n, out=out),
                "normal_f32": lambda: t.randn(n, out=out)}


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()  # raises without a device
        self.cp = cp
        self.device_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        self.version = cp.__version__
        self._axpy = None

    def event(self):
        return self.cp.cuda.Event()

    def elapsed_ms(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b)

    def sync(self):
        self.cp.cuda.Stream.null.synchronize()

    def free(self):
        self.cp.get_default_memory_pool().free_all_blocks()

    def f32(self, n):
        cp = self.cp
        return (cp.arange(n) % 1000).astype(cp.float32) * cp.float32(0.001)

    def algo(self, n, ops):
        cp = self.cp
        x = self.f32(n)
        y = cp.ones(n, cp.float32)
        z = cp.empty_like(x)
        xi = (cp.arange(n) % 7).astype(cp.int32)
        oi = cp.empty_like(xi)
        if self._axpy is None:
            self._axpy = cp.ElementwiseKernel(
                "float32 a, float32 x, float32 y", "float32 z", "z = a*x + y",
                "axpy")
        k = self._axpy
        return {"copy": lambda: cp.copyto(z, x),
                "axpy": lambda: k(cp.float32(2), x, y, z),
                "sum": lambda: x.sum(),
                "dot": lambda: cp.dot(x, y),
                "scan_int32": lambda: cp.cumsum(xi, out=oi)}

    def sort(self, n, ops):
        cp = self.cp
        r = {}
        cp.random.seed(1)
        if "sort_int32" in ops or "argsort_int32" in ops:
            k32 = cp.random.randint(-2**31, 2**31, size=n, dtype="l").astype(cp.int32)
            r["sort_int32"] = lambda: cp.sort(k32)
            r["argsort_int32"] = lambda: cp.argsort(k32)
        if "sort_int64" in ops:
            hi = cp.random.randint(0, 2**32, size=n // 2, dtype="l")
            lo = cp.random.randint(0, 2**32, size=n // 2, dtype="l")
            k64 = (hi << 32) ^ lo
            r["sort_int64"] = lambda: cp.sort(k64)
        return r

    def select(self, n, ops):
        cp = self.cp
        u = cp.random.default_rng(1).random(n, dtype=cp.float32)
        return {"copy_if_f32": lambda: u[u > 0.5]}

    def take(self, n, ops):
        cp = self.cp
        x = self.f32(n)
        cp.random.seed(1)
        idx = cp.random.randint(0, n, size=n, dtype="l")
        o = cp.empty_like(x)
        return {"take": lambda: cp.take(x, idx, out=o)}

    def tkb(self, n, ops):
        cp = self.cp
        g = cp.random.default_rng(1)
        r = {}
        if "sum_axis0" in ops:
            m = g.random((MATRIX, MATRIX), dtype=cp.float32) - 0.5
            r["sum_axis0"] = lambda: m.sum(0)
        if "hist_uniform" in ops:
            u = g.random(n, dtype=cp.float32)
            r["hist_uniform"] = lambda: cp.histogram(u, 256, (0.0, 1.0))[0]
        return r

    def random(self, n, ops):
        cp = self.cp
        g = cp.random.default_rng(1)
        out = cp.empty(n, cp.float32)
        return {"fill_f32": lambda: out.fill(1.0),
                "uniform_f32": lambda: g.random(n, dtype=cp.float32),
                "normal_f32": lambda: g.standard_normal(n, dtype=cp.float32)}


class Fake:
    """--peers fake, or PEERS_ALL_FAKE=1 (every peer named is this one,
    recorded under its name): host-side stand-ins (wall-clock "events") that only
    exercise this script's plan, JSON and table on a machine without a GPU;
    its figures mean nothing."""
    name = "fake"
    device_name, version = "host (fake peer: not a measurement)", "0"

    class Ev:
        def record(self):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

    def event(self):
        return self.Ev()

    def elapsed_ms(self, a, b):
        return (b.t - a.t) * 1e3

    def sync(self):
        pass

    def free(self):
        pass

    def __getattr__(self, maker):
        if maker not in dict(TOPICS):
            raise AttributeError(maker)
        ops = TOPICS[maker][1]
        return lambda n, want: {op: (lambda m=min(n, 1 << 16): sum(range(m)))
                                for op in ops if op in want}


TOPICS = {
    "algo": ("algo", ["copy", "axpy", "sum", "dot", "scan_int32"]),
    "sort": ("sort", ["sort_int32", "argsort_int32", "sort_int64"]),
    "select": ("select", ["copy_if_f32"]),
    "take": ("take", ["take"]),
    "tkb": ("tkb", ["sum_axis0", "hist_uniform"]),
    "random": ("random", ["fill_f32", "uniform_f32", "normal_f32"]),
}
# the sweep's ops and the maker each comes from
SWEEP_OPS = [("axpy", "algo"), ("sum", "algo"), ("dot", "algo"),
             ("scan_int32", "algo"), ("sort_int32", "sort"),
             ("copy_if_f32", "select"), ("take", "take"),
             ("hist_uniform", "tkb"), ("uniform_f32", "random")]
DEFAULT_N = {"algo": 1 << 28, "sort": 1 << 28, "select": 1 << 28,
             "take": 1 << 28, "tkb": 1 << 28, "random": 1 << 26}


def time_op(p, f, runs):
    """(device seconds, wall seconds): medians over runs after 2 warm-ups."""
    a, b = p.event(), p.event()
    for _ in range(2):
        f()
    p.sync()
    ts, ws = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        a.record()
        f()
        b.record()
        b.synchronize()
        ws.append(time.perf_counter() - t0)
        ts.append(p.elapsed_ms(a, b) * 1e-3)
    return statistics.median(ts), statistics.median(ws)


def peers_main(args):
    topic, path, sizes, names = None, None, None, ["torch", "cupy"]
    while args:
        a = args.pop(0)
        if a == "--json":
            path = args.pop(0)
        elif a == "--sizes":
            sizes = [int(s, 0) for s in args.pop(0).split(",") if s]
        elif a == "--peers":
            names = [s for s in args.pop(0).split(",") if s]
        else:
            topic = a
    if topic not in TOPICS and topic != "sweep" or not path:
        print(__doc__)
        return 2
    if sizes is None:
        sizes = [DEFAULT_N.get(topic, 1 << 28)]
    doc = {"topic": topic, "sizes": sizes, "peers": {}}

    def save():
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
        os.replace(tmp, path)

    save()
    for name in names:
        rec = doc["peers"][name] = {"results": {}, "errors": []}
        try:
            if os.environ.get("PEERS_ALL_FAKE") == "1":  # dry runs only
                p = Fake()
            else:
                p = {"torch": Torch, "cupy": Cupy, "fake": Fake}[name]()
            rec["device"], rec["version"] = p.device_name, p.version
        except Exception as e:  # noqa: BLE001 - absent: a note, not a failure
            rec["absent"] = f"{type(e).__name__}: {e}"
            print(f"{name}: absent ({rec['absent']})", file=sys.stderr)
            save()
            continue
        save()
        plan = ([(n, [op for op, mk in SWEEP_OPS if mk == m], m)
                 for n in sizes for m in dict.fromkeys(mk for _, mk in SWEEP_OPS)]
                if topic == "sweep" else
                [(n, TOPICS[topic][1], TOPICS[topic][0]) for n in sizes])
        for n, ops, maker in plan:
            try:
                fns = getattr(p, maker)(n, ops)
            except Exception as e:  # noqa: BLE001
                rec["errors"].append(f"{maker} n={n}: {type(e).__name__}: {e}")
                print(f"{name} {maker} n={n}: {e}", file=sys.stderr)
                continue
            for op in ops:
                if op not in fns:
                    continue
                try:
                    d, w = time_op(p, fns[op], runs_for(n))
                    rec["results"].setdefault(op, {})[str(n)] = [d, w]
                    print(f"PEER {name} {op} {n} {d:.9f} {w:.9f}", flush=True)
                except Exception as e:  # noqa: BLE001
                    rec["errors"].append(f"{op} n={n}: {type(e).__name__}: {e}")
                    print(f"{name} {op} n={n}: {e}", file=sys.stderr)
                save()
            del fns
            p.free()
    save()
    return 0


# --------------------------------------------------------------------------
# the table


def read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


class Step:
    """One step of gpu-bench-all.sh: its output, exit status and seconds."""

    def __init__(self, d, name):
        self.name = name
        self.out = read(os.path.join(d, name + ".out"))
        self.err = read(os.path.join(d, name + ".err")) or ""
        rc = read(os.path.join(d, name + ".rc"))
        self.rc = None if rc is None else rc.strip()
        secs = read(os.path.join(d, name + ".secs"))
        self.secs = float(secs) if secs else None
        j = read(os.path.join(d, name + ".json"))
        try:
            self.json = json.loads(j) if j else None
        except ValueError:
            self.json = None

    @property
    def ran(self):
        return self.rc is not None and self.rc != "skipped"

    def state(self):
        """'ok', 'absent', 'skipped', 'timeout', 'wrong', 'failed' or
        'missing' (never run)."""
        if self.rc is None:
            return "missing"
        if self.rc in ("skipped", "absent"):
            return self.rc
        if self.rc in ("124", "137"):
            return "timeout"
        text = (self.out or "") + self.err
        if re.search(r"\bWRONG\b|wrong result", text, re.I):
            return "wrong"
        return "ok" if self.rc == "0" else "failed"


def kiln_results(step):
    """{op: (device_s, wall_s or None)} from a kiln bench's stdout: RESULT
    and WALL lines, the table rows of bench_sort / bench_random for their
    wall times, SWEEP lines of bench_algo --sweep ({op: {n: (d, w)}})."""
    res, walls, sweep = {}, {}, {}
    for line in (step.out or "").splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "RESULT":
            res[f[1]] = float(f[2])
        elif len(f) == 3 and f[0] == "WALL":
            walls[f[1]] = float(f[2])
        elif len(f) == 5 and f[0] == "SWEEP":
            sweep.setdefault(f[1], {})[int(f[2])] = (float(f[3]), float(f[4]))
        elif len(f) == 4 and f[0] in ("sort_int32", "argsort_int32", "sort_int64"):
            try:  # bench_sort: op ms Mkeys/s wall_ms
                walls[f[0]] = float(f[3]) * 1e-3
            except ValueError:
                pass
        elif len(f) >= 5 and f[1] == "f32" and f[0] in ("uniform", "normal"):
            try:  # bench_random: "uniform f32" device_ms wall_ms ...
                walls[f[0] + "_f32"] = float(f[3]) * 1e-3
            except ValueError:
                pass
        elif len(f) >= 5 and f[0] == "fill" and f[1] == "(floor)":
            try:
                walls["fill_f32"] = float(f[3]) * 1e-3
            except ValueError:
                pass
    out = {op: (t, walls.get(op)) for op, t in res.items()}
    return out, sweep


def device_line(step):
    for line in (step.out or "").splitlines():
        if line.startswith("device:"):
            return line[len("device:"):].strip()
        m = re.match(r"bench_random: .* on (.*)$", line)
        if m:
            return m.group(1)
    return None


def cub_results(step):
    """{case: (ms, n, ok)} from a bench/ref program's `CUB case [n] ms` lines."""
    res = {}
    for line in (step.out or "").splitlines():
        m = re.match(r"CUB (\S+) (?:(\d+) )?([0-9.]+) ms(.*)$", line)
        if m:
            res[m.group(1)] = (float(m.group(3)) * 1e-3,
                               int(m.group(2)) if m.group(2) else None,
                               "WRONG" not in m.group(4))
    return res


def peer_results(step):
    """{peer: {op: {n: (d, w)}}} and {peer: why absent}."""
    res, absent = {}, {}
    if step.json:
        for name, rec in step.json.get("peers", {}).items():
            if "absent" in rec:
                absent[name] = rec["absent"]
                continue
            res[name] = {op: {int(n): tuple(v) for n, v in per.items()}
                         for op, per in rec.get("results", {}).items()}
    return res, absent


def ms(t):
    if t is None:
        return "-"
    return f"{t * 1e3:.3f}" if t < 10 else f"{t * 1e3:.1f}"


def us(t):
    return "-" if t is None else f"{t * 1e6:.1f}"


def table_main(args):
    d, md_path, chart_path = None, None, None
    while args:
        a = args.pop(0)
        if a == "--md":
            md_path = args.pop(0)
        elif a == "--chart":
            chart_path = args.pop(0)
        else:
            d = a
    if not d:
        print(__doc__)
        return 2
    S = {os.path.basename(p)[:-len(ext)]: None
         for ext in (".rc",) for p in glob.glob(os.path.join(d, "*" + ext))}
    steps = {name: Step(d, name) for name in S}

    def step(name):
        return steps.get(name) or Step(d, name)

    lines = []
    say = lines.append
    meta = read(os.path.join(d, "meta.txt")) or ""
    card = re.search(r"^card: (.*)$", meta, re.M)
    card = card.group(1).strip() if card else None
    scale = re.search(r"^scale: (\d+)$", meta, re.M)
    n28 = (1 << 28) >> (int(scale.group(1)) if scale else 0)
    kiln_cuda = {}
    kiln_ocl = {}
    ocl_state = read(os.path.join(d, "opencl.txt"))
    ocl_absent = ocl_state is not None and ocl_state.strip().startswith("absent")
    failures, incomplete = [], []
    for topic in ("algo", "sort", "select", "take", "tkb", "random"):
        for dev, dst in (("cuda0", kiln_cuda), ("nvidia", kiln_ocl)):
            s = step(f"{topic}.{dev}")
            st = s.state()
            r, _ = kiln_results(s)
            for op, v in r.items():
                dst[op] = v
            dst.setdefault("_state", {})[topic] = st
            if st in ("wrong", "failed"):
                failures.append(f"{s.name}: {st} (exit {s.rc})")
            elif st in ("timeout", "skipped", "missing") and not (dev == "nvidia" and ocl_absent):
                incomplete.append(f"{s.name}: {st}")
    peers, absent = {}, {}
    for topic in ("algo", "sort", "select", "take", "tkb", "random"):
        r, a = peer_results(step(f"{topic}.peers"))
        for name, ops in r.items():
            for op, per in ops.items():
                peers.setdefault(name, {})[op] = per[max(per)]
        absent.update(a)
    cub = {}
    for name in ("cub_sort", "cub_scan", "cub_select", "cub_reduce", "cub_histogram"):
        s = step(name)
        cub[name] = (s.state(), cub_results(s))
        if s.state() == "wrong":  # a reference's fault, not kiln's
            incomplete.append(f"{name}: CUB's own result WRONG (its figures are left out)")
            cub[name] = ("wrong", {})

    def cubv(prog, case):
        stt, r = cub[prog]
        if case in r:
            return r[case][0]
        return None

    def cub_state(prog):
        stt = cub[prog][0]
        return {"absent": "absent", "missing": "absent", "skipped": "skipped",
                "timeout": "timed out"}.get(stt, stt)

    def kv(dst, op):
        v = dst.get(op)
        return v[0] if v else None

    def kcell(dst, op, topic, ocl=False):
        v = kv(dst, op)
        if v is not None:
            txt = ms(v)
            if ocl and kv(kiln_cuda, op):
                txt += f" ({v / kv(kiln_cuda, op):.2f}× cuda:0)"
            return txt
        if ocl and ocl_absent:
            return "absent"
        st = dst.get("_state", {}).get(topic, "missing")
        return {"ok": "-", "timeout": "timed out", "missing": "not run"}.get(st, st.upper())

    def peer_cands(op, cub_case=None, only=None):
        c = []
        for name in ("torch", "cupy"):
            if only and name not in only:
                continue
            if name in peers and op in peers[name]:
                c.append((name, peers[name][op][0]))
        if cub_case:
            v = cubv(*cub_case)
            if v is not None:
                c.append(("CUB", v))
        return c

    def peer_text(c, op, cub_case):
        parts = [f"{nm} {ms(t)}" for nm, t in sorted(c, key=lambda x: x[1])]
        for name in ("torch", "cupy"):
            if name in absent:
                parts.append(f"{name} absent")
            elif not any(nm == name for nm, _ in c):
                parts.append(f"{name} -")
        if cub_case and not any(nm == "CUB" for nm, _ in c):
            parts.append(f"CUB {cub_state(cub_case[0])}")
        return ", ".join(parts)

    rows = []  # (op, cuda, ocl, peers, ratio, goal, verdict)

    def verdict(ok):
        return "?" if ok is None else ("met" if ok else "**miss**")

    def row_vs(label, op, topic, goal_txt, need, cub_case=None, against=None,
               alt=None):
        """A row whose goal is best-peer (or a named peer set) / kiln >= need.
        alt: (text, fn) another way to meet it (e.g. % of copy)."""
        c = peer_cands(op, cub_case)
        k = kv(kiln_cuda, op)
        ref = [x for x in c if against is None or x[0] in against]
        ratio = None
        if k and ref:
            best = min(ref, key=lambda x: x[1])
            ratio = best[1] / k
        ok = None if ratio is None else ratio >= need
        extra = ""
        if alt and k:
            a_ok, a_txt = alt()
            if a_ok is not None:
                extra = f"; {a_txt}"
                ok = (ok or False) or a_ok
        rtxt = "-" if ratio is None else f"{ratio:.2f}×"
        if against and ratio is not None and len(against) == 1:
            rtxt += f" {against[0]}"
        rows.append((label, kcell(kiln_cuda, op, topic),
                     kcell(kiln_ocl, op, topic, True), peer_text(c, op, cub_case),
                     rtxt + extra, goal_txt, verdict(ok)))

    def frac_copy(dst, op, bytes_per):
        """kiln's % of its same-run copy (8 bytes per element)."""
        k, cpy = kv(dst, op), kv(dst, "copy")
        if not k or not cpy:
            return None
        return bytes_per / 8 * cpy / k

    row_vs("sort int32 keys, 2^28", "sort_int32", "sort", "≥ 1.2× CUB", 1.2,
           ("cub_sort", "sort_keys_int32"), ["CUB"])
    row_vs("sort int64 keys, 2^27", "sort_int64", "sort", "≥ 1.2× CUB", 1.2,
           ("cub_sort", "sort_keys_int64"), ["CUB"])
    rows.append(("sort float32 keys; pairs float32 → int32", "not benchmarked",
                 "not benchmarked", "CUB: not benchmarked", "-", "≥ 1.2× CUB",
                 "? (bench_sort has no float32 case)"))
    # argsort: >= 1.5x torch and >= 1.5x CUB: the smaller ratio counts
    c = peer_cands("argsort_int32", ("cub_sort", "argsort_int32_idx64"))
    k = kv(kiln_cuda, "argsort_int32")
    need = [x for x in c if x[0] in ("torch", "CUB")]
    r = min(x[1] for x in need) / k if k and need else None
    rows.append(("argsort int32 → int64, 2^28", kcell(kiln_cuda, "argsort_int32", "sort"),
                 kcell(kiln_ocl, "argsort_int32", "sort", True),
                 peer_text(c, "argsort_int32", ("cub_sort", "argsort_int32_idx64")),
                 "-" if r is None else f"{r:.2f}× (the lesser of "
                 + ", ".join(x[0] for x in need) + ")",
                 "≥ 1.5× torch and CUB",
                 verdict(None if r is None or len(need) < 2 else r >= 1.5)))
    # scan: >= 90% of the same run's copy on both backends
    fc, fo = frac_copy(kiln_cuda, "scan_int32", 8), frac_copy(kiln_ocl, "scan_int32", 8)
    c = peer_cands("scan_int32", ("cub_scan", "scan_int32"))
    best = min(c, key=lambda x: x[1]) if c else None
    k = kv(kiln_cuda, "scan_int32")
    cell_c = kcell(kiln_cuda, "scan_int32", "algo") + (f" ({fc:.0%} of copy)" if fc else "")
    cell_o = kcell(kiln_ocl, "scan_int32", "algo", True) + (f" ({fo:.0%} of copy)" if fo else "")
    ok = None
    if fc is not None and (fo is not None or ocl_absent):
        ok = fc >= 0.9 and (fo is None or fo >= 0.9)
    rows.append(("int32 inclusive scan, 2^28", cell_c, cell_o,
                 peer_text(c, "scan_int32", ("cub_scan", "scan_int32")),
                 f"{best[1] / k:.2f}× {best[0]}" if best and k else "-",
                 "≥ 90% of copy on both backends" + (" (OpenCL absent: cuda:0 only)" if ocl_absent else ""),
                 verdict(ok)))
    row_vs(f"sum along axis 0, {MATRIX}²", "sum_axis0", "tkb", "≥ 1.0×", 1.0)
    row_vs("take (random int64 indices), 2^28", "take", "take",
           "≥ 1.2× torch (or ≥ 95% of a raw gather: not measured)", 1.2, None, ["torch"])
    for op, label, bpe, cubc in (("axpy", "axpy f32, 2^28", 12, None),
                                 ("sum", "sum f32, 2^28", 4, ("cub_reduce", "sum_f32")),
                                 ("dot", "dot f32, 2^28", 8, None)):
        def alt(op=op, bpe=bpe):
            f = frac_copy(kiln_cuda, op, bpe)
            return (None, "") if f is None else (f >= 0.97, f"{f:.0%} of copy")
        row_vs(label, op, "algo", "≥ 1.05× best, or ≥ 97% of the same-run copy",
               1.05, cubc, None, alt)
    row_vs("copy_if f32 (x > 0.5), 2^28", "copy_if_f32", "select", "≥ 1.2× CUB", 1.2,
           ("cub_select", "copy_if_f32"), ["CUB"])
    row_vs("histogram 256 bins f32 (uniform), 2^28", "hist_uniform", "tkb",
           "≥ 1.0× best (item 2)", 1.0, ("cub_histogram", "hist_uniform"))
    row_vs("random uniform f32, 2^26", "uniform_f32", "random", "≥ 1.2× the best", 1.2)
    row_vs("random normal f32, 2^26", "normal_f32", "random", "≥ 1.2× the best", 1.2)
    row_vs("buffer fill f32, 2^26", "fill_f32", "random", "≥ 1.0× torch fill_", 1.0,
           None, ["torch"])

    # ---- the sweep
    sw_algo = step("sweep.algo")
    _, sw = kiln_results(sw_algo)
    ksweep = {op: dict(v) for op, v in sw.items()}  # op -> n -> (d, w)
    for s in sorted(steps):
        m = re.match(r"sweep\.(sort|select|take|tkb|random)\.(\d+)$", s)
        if not m:
            continue
        st = steps[s]
        r, _ = kiln_results(st)
        n = int(m.group(2))
        for op, v in r.items():
            ksweep.setdefault(op, {})[n] = v
        if st.state() in ("wrong", "failed"):
            failures.append(f"{s}: {st.state()} (exit {st.rc})")
        elif st.state() == "timeout":
            incomplete.append(f"{s}: timed out")
            ksweep.setdefault("_timeout", {}).setdefault(m.group(1), []).append(n)
    if sw_algo.state() in ("wrong", "failed"):
        failures.append(f"sweep.algo: {sw_algo.state()} (exit {sw_algo.rc})")
    elif sw_algo.state() in ("timeout", "skipped"):
        incomplete.append(f"sweep.algo: {sw_algo.state()}")
    # the 2^28 points of the binaries run per size come from the main table
    for op in ("sort_int32", "copy_if_f32", "take", "hist_uniform"):
        v = kiln_cuda.get(op)
        if v and n28 not in ksweep.get(op, {}):
            ksweep.setdefault(op, {})[n28] = v
    speers = {}
    for name in ("torch", "cupy"):
        r, a = peer_results(step(f"sweep.{name}"))
        absent.update(a)
        if name in r:
            speers[name] = r[name]
    sweep_ops = [op for op, _ in SWEEP_OPS]
    sizes = sorted({n for op in sweep_ops for n in ksweep.get(op, {})} |
                   {n for p in speers.values() for op in sweep_ops for n in p.get(op, {})})
    sweep_lines = []
    sl = sweep_lines.append
    for op in sweep_ops:
        sl("")
        sl(f"**{op}** (µs per op; device = events / marker to end, wall = enqueue to completion)")
        sl("")
        cols = ["kiln device", "kiln wall"]
        for name in ("torch", "cupy"):
            cols += [f"{name} device", f"{name} wall"] if name in speers else [f"{name}"]
        cols += ["best peer / kiln (device, wall)"]
        sl("| n | " + " | ".join(cols) + " |")
        sl("|---:|" + "---:|" * len(cols))
        met_d = met_w = total = kiln_n = wall_n = 0
        worst = None
        for n in sizes:
            kd, kw = ksweep.get(op, {}).get(n, (None, None))
            kiln_n += kd is not None
            cells = [us(kd), us(kw)]
            pd, pw = [], []
            for name in ("torch", "cupy"):
                if name not in speers:
                    cells.append("absent" if name in absent else "-")
                    continue
                v = speers[name].get(op, {}).get(n)
                cells += [us(v[0]) if v else "-", us(v[1]) if v else "-"]
                if v:
                    pd.append(v[0])
                    pw.append(v[1])
            rd = min(pd) / kd if kd and pd else None
            rw = min(pw) / kw if kw and pw else None
            if rd is not None:
                total += 1
                met_d += rd >= 1.0
                wall_n += rw is not None
                met_w += rw is not None and rw >= 1.0
                if worst is None or rd < worst[0]:
                    worst = (rd, n)
            cells.append("-" if rd is None else f"{rd:.2f}, " + ("-" if rw is None else f"{rw:.2f}"))
            if kd is None and n in ksweep.get("_timeout", {}).get(dict(SWEEP_OPS)[op], []):
                cells[0] = "timed out"
            sl(f"| 2^{n.bit_length() - 1} | " + " | ".join(cells) + " |")
        if total:
            ok = met_d == total and met_w == wall_n and total >= len(sizes)
            wtxt = f"{met_w}/{wall_n} (wall)" if wall_n else "wall: not reported"
            rows.append((f"sweep {op}, 2^{sizes[0].bit_length() - 1}–2^{sizes[-1].bit_length() - 1}",
                         f"{total} sizes measured", "-",
                         "torch/CuPy, same sizes",
                         f"kiln ≤ best at {met_d}/{total} (device), {wtxt}; "
                         f"worst {worst[0]:.2f}× at 2^{worst[1].bit_length() - 1}",
                         "kiln ≤ the best peer at every size", verdict(ok)))
        else:
            rows.append((f"sweep {op}", f"kiln at {kiln_n} of {len(sizes)} sizes", "-",
                         "no peer measured (" + ", ".join(
                             f"{p} absent" if p in absent else f"{p} -" for p in ("torch", "cupy")) + ")",
                         "-", "kiln ≤ the best peer at every size", "?"))
    rs = step(f"sweep.random.{n28}")
    if rs.rc is not None:
        rows.append(("bench_random finishes at 2^28", rs.state() +
                     (f" in {rs.secs:.0f} s" if rs.secs else ""), "-", "-", "-",
                     "finishes (within its step's limit)",
                     verdict(rs.state() == "ok")))

    # ---- print
    when = re.search(r"^date: (.*)$", meta, re.M)
    tree = re.search(r"^tree: (.*)$", meta, re.M)
    say(f"# kiln against CUB, PyTorch and CuPy on {card or 'an unnamed GPU (nvidia-smi gave no name)'}")
    say("")
    say(f"scripts/gpu-bench-all.sh, {when.group(1) if when else '?'}, tree {tree.group(1) if tree else '?'}. "
        "Device-event medians in ms (11 runs after 2 warm-ups; 5 above 2^24 for the peers and "
        "the sweep), each kiln result verified by its bench program; ratio = best peer's time / "
        "kiln cuda:0's (> 1: kiln is faster). The NVIDIA OpenCL column gives its time over cuda:0's "
        "(item 3's goal: ≤ 1.1).")
    for name in ("torch", "cupy"):
        for s in steps.values():
            if s.json and name in s.json.get("peers", {}) and "device" in s.json["peers"][name]:
                rec = s.json["peers"][name]
                say(f"{name} {rec.get('version', '?')} on {rec['device']}.")
                break
        else:
            if name in absent:
                say(f"{name}: absent ({absent[name]}).")
    for name in ("cub_sort", "cub_scan"):
        dl = device_line(step(name)) if step(name).out else None
        if dl:
            say(f"CUB references (bench/ref): {dl}.")
            break
    if ocl_absent:
        say(f"NVIDIA OpenCL: {ocl_state.strip()}.")
    say("")
    head = ["op", "kiln cuda:0", "NVIDIA OpenCL", "peers (ms)", "ratio (peer/kiln)", "goal", "met/miss"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        table.append("| " + " | ".join(r) + " |")
    lines += table
    ocl_slow = []
    for op in ("copy", "axpy", "sum", "dot", "scan_int32", "sort_int32", "argsort_int32",
               "sort_int64", "copy_if_f32", "take", "sum_axis0", "hist_uniform",
               "fill_f32", "uniform_f32", "normal_f32"):
        a, b = kv(kiln_cuda, op), kv(kiln_ocl, op)
        if a and b and b / a > 1.1:
            ocl_slow.append(f"{op} {b / a:.2f}×")
    say("")
    if ocl_absent:
        say("Item 3 (NVIDIA OpenCL within 1.1× of cuda:0): not judged, OpenCL absent.")
    else:
        say("Item 3 (NVIDIA OpenCL within 1.1× of cuda:0): " +
            ("over on " + ", ".join(ocl_slow) if ocl_slow else "no op over 1.1× among those measured") + ".")
    say("")
    say(f"## Size sweep on {card or 'the GPU'} (cuda:0 against torch and CuPy)")
    lines += sweep_lines
    if chart_path and sizes:
        if chart(chart_path, sweep_ops, ksweep, speers):
            say("")
            say(f"Chart: {os.path.basename(chart_path)}")
    say("")
    say("## Steps")
    say("")
    say("| step | state | seconds |")
    say("|---|---|---:|")
    order = read(os.path.join(d, "order.txt")) or ""
    names = [s for s in order.split() if s in steps] + sorted(set(steps) - set(order.split()))
    for s in names:
        st = steps[s]
        say(f"| {s} | {st.state()} | {st.secs:.1f} |" if st.secs is not None
            else f"| {s} | {st.state()} | - |")
    say("")
    if failures:
        say("**KILN VERIFICATION FAILED** (or a kiln bench crashed): " + "; ".join(failures))
    if incomplete:
        say("Incomplete (timed out or skipped for the budget): " + "; ".join(incomplete))
    if not failures and not incomplete:
        say("Every kiln step finished and verified its results.")
    text = "\n".join(lines)
    print(text)
    if md_path:
        with open(md_path, "w") as fh:
            fh.write(text + "\n")
    if failures:
        print("\n*** KILN VERIFICATION FAILED: " + "; ".join(failures) + " ***", file=sys.stderr)
        return 1
    return 2 if incomplete else 0


def chart(path, ops, ksweep, speers):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"note: matplotlib not importable ({e}): no chart, text only", file=sys.stderr)
        return False
    cols = 3
    rws = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rws, cols, figsize=(13, 3.6 * rws))
    axes = axes.ravel()
    series = [("kiln cuda:0", ksweep, "o", "C0")] + \
        [(name, speers[name], m, c) for name, m, c in (("torch", "P", "C1"), ("cupy", "*", "C2"))
         if name in speers]
    for ax, op in zip(axes, ops):
        for label, data, mark, color in series:
            pts = sorted((n, v) for n, v in data.get(op, {}).items() if v and v[0])
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1][0] * 1e6 for p in pts], "-" + mark,
                    color=color, label=f"{label} device", markersize=3)
            wp = [(p[0], p[1][1]) for p in pts if p[1][1]]
            if wp:
                ax.plot([p[0] for p in wp], [p[1] * 1e6 for p in wp], "--" + mark,
                        color=color, label=f"{label} wall", markersize=3, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("n")
        ax.set_ylabel("µs per op")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[len(ops):]:
        ax.axis("off")
    h, lab = axes[0].get_legend_handles_labels()
    if h:
        fig.legend(h, lab, loc="lower center", ncol=6, fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=80)
    print(f"chart written to {path}", file=sys.stderr)
    return True


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("peers", "table"):
        print(__doc__)
        return 2
    if sys.argv[1] == "peers":
        return peers_main(sys.argv[2:])
    return table_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
