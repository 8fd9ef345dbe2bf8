#!/usr/bin/env bash
# The demo's GPU figures in one run (issue 5's speed targets), on the GPU
# machine, from the repository root, after scripts/gpu-test.sh has built
# the tree:
#   1. kiln demo on cuda:0 and NVIDIA's OpenCL: masks 1024² and 8192²,
#      distances 16384×64 in float32 and float64, 20 repetitions, JSON;
#      serial C cases longer than 10 s are estimated from 1/16 of the rows
#      (--host-max-seconds, marked in the tables);
#   2. a short sweep of the distance kernel on cuda:0: tile
#      (KILN_DEMO_PDIST_TILE; default 16x8), register prefetch
#      (KILN_DEMO_PDIST_PREFETCH; default: float64 only; "-" = default) and
#      the symmetric variant (KILN_DEMO_PDIST_SYM=1: upper-triangle blocks,
#      mirrored; half the arithmetic; off by default);
#   3. bench/peers_demo.py on the same JSON: CuPy (the seeds' naive kernel as
#      a RawKernel, the vectorised NumPy code on CuPy arrays), torch.cdist
#      in float32 and float64 (device times from CUDA events, accuracy);
#      missing peers are skipped and named;
#   4. ${OUT:-/tmp}/demo-gpu.md: the peers table, the targets with pass/miss,
#      the tile sweep. The same table goes to bench/results/<label>-<date>.md
#      and ${OUT}/results/.
#   BUILD_DIR (default build-gpu), OUT (default /tmp). Under 5 minutes.
#   For a dry run elsewhere: DEVICES="pocl" POINTS=512 SIZES=256,512.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD="${BUILD_DIR:-build-gpu}"
OUTD="${OUT:-/tmp}"
KILN="$BUILD/kiln"
DEVICES="${DEVICES:-cuda:0 nvidia}"
POINTS="${POINTS:-16384}"
SIZES="${SIZES:-1024,8192}"
DEVARGS=""
for d in $DEVICES; do DEVARGS="$DEVARGS --device $d"; done
FIRST="${DEVICES%% *}"
mkdir -p "$OUTD/results"
LOG="$OUTD/demo-gpu.log"
: > "$LOG"
say() { echo "== $*" | tee -a "$LOG" >&2; }

[ -x "$KILN" ] || { say "no $KILN: build with scripts/gpu-test.sh first"; exit 1; }
# NVIDIA's OpenCL library may live in /usr/lib, off the loader's path.
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
"$KILN" devices 2>&1 | tee -a "$LOG" >&2

# --- 1. kiln demo ----------------------------------------------------------
JSON="$OUTD/demo-gpu.json"
say "kiln demo ($DEVICES): masks $SIZES; distances ${POINTS}x64"
timeout 150 "$KILN" demo $DEVARGS --sizes "$SIZES" \
  --points "$POINTS" --dims 64 --reps 20 --host-max-seconds 10 --json \
  --out "$OUTD/demo-gpu-pictures" >"$JSON" 2>>"$LOG"
say "kiln demo exit $?"

# --- 2. tile sweep (distances only matter: a tiny mask) -----------------------
SWEEP="$OUTD/demo-gpu-sweep.txt"
: > "$SWEEP"
for cfg in 16x8:0:0 16x8:1:0 16x4:-:0 16x8:-:1; do
  tile=${cfg%%:*}; rest=${cfg#*:}; pf=${rest%%:*}; sym=${rest#*:}
  say "tile $tile prefetch $pf symmetric $sym"
  if [ "$pf" = "-" ]; then unset KILN_DEMO_PDIST_PREFETCH; else export KILN_DEMO_PDIST_PREFETCH=$pf; fi
  KILN_DEMO_PDIST_SYM=$sym KILN_DEMO_PDIST_TILE=$tile timeout 30 "$KILN" demo --device "$FIRST" --sizes 64 \
    --points "$POINTS" --dims 64 --reps 10 --no-openmp --host-max-seconds 0.5 --json \
    --out "$OUTD/demo-gpu-pictures" > "$OUTD/demo-gpu-tile-$tile-$pf-$sym.json" 2>>"$LOG"
  python3 - "$tile prefetch $pf sym $sym" "$OUTD/demo-gpu-tile-$tile-$pf-$sym.json" >> "$SWEEP" <<'PY'
import json, sys
try:
    kj = json.load(open(sys.argv[2]))
except Exception as e:
    print("| %s | no result (%s) | | |" % (sys.argv[1], e)); sys.exit()
for r in kj["results"]:
    if r["workload"] == "pdist" and r["method"].startswith("kiln") and "error" not in r:
        print("| %s | %s | %.4f | %.1e |" % (sys.argv[1], r["case"], r["device_ms"], r["relerr"]))
PY
done
unset KILN_DEMO_PDIST_PREFETCH

# --- 3. peers ------------------------------------------------------------------
LABEL="gpu-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')"
[ "$LABEL" = "gpu-" ] && LABEL=gpu
say "peers (label $LABEL)"
timeout 100 python3 bench/peers_demo.py --kiln-json "$JSON" --sizes "$SIZES" \
  --points "$POINTS" --dims 64 --reps 20 --numpy-max-size 1024 --label "$LABEL" \
  --results "$ROOT/bench/results" --rows-json "$OUTD/demo-gpu-rows.json" \
  > "$OUTD/demo-gpu-peers.md" 2>>"$LOG"
say "peers exit $?"
cp "$ROOT"/bench/results/"$LABEL"-*.md "$OUTD/results/" 2>/dev/null

# --- 4. summary -------------------------------------------------------------------
python3 - "$JSON" "$OUTD/demo-gpu-rows.json" "$OUTD/demo-gpu-peers.md" "$SWEEP" "$POINTS" "$FIRST" > "$OUTD/demo-gpu.md" <<'PY'
import json, os, sys
jpath, rpath, ppath, spath, points, first = sys.argv[1:7]
out = ["# kiln demo on the GPU: issue 5 targets", ""]
try:
    kj = json.load(open(jpath))
except Exception as e:
    kj = {"results": []}
    out.append("kiln demo gave no JSON: %s" % e)
rows = json.load(open(rpath)) if os.path.exists(rpath) else []
res = [r for r in kj["results"] if "error" not in r]
def kiln(workload, case, method, dev):
    c = [r for r in res if r["workload"] == workload and r["case"] == case
         and r["method"].startswith(method) and r["device"].startswith(dev)]
    return c[0] if c else None
def torch(case):
    c = [r for r in rows if r["case"] == case and r["theirs"].startswith("torch")]
    return c[0] if c else None
out += ["| target | device | kiln (device ms) | goal | result |", "|---|---|---:|---|---|"]
for dev in ("cuda:0", "opencl"):
    for size, goal in ((8192, 0.05), (1024, 0.010)):
        r = kiln("mask", "%dx%d" % (size, size), "kiln fast", dev)
        if r:
            out.append("| mask %d² | %s | %.4f | ≤ %.3f ms, 0 pixels differ | %s (%d px differ) |" % (
                size, r["device"], r["device_ms"], goal,
                "PASS" if r["device_ms"] <= goal and r["ok"] else "MISS", r["mismatches"]))
    for prec, ratio, tol in (("float32", 1.5, 1e-6), ("float64", 1.2, 1e-13)):
        case = "%sx64 %s" % (points, prec)
        r, t = kiln("pdist", case, "kiln", dev), torch(case)
        if r:
            tdev = t["theirs_dev_ms"] if t else None
            got = tdev / r["device_ms"] if tdev else None
            out.append("| distances %s vs torch.cdist (%s ms) | %s | %.4f | ≥ %.1fx, rel. error < %g | %s (%s, rel. error %.1e) |" % (
                prec, "%.3f" % tdev if tdev else "?", r["device"], r["device_ms"], ratio, tol,
                "PASS" if got and got >= ratio and r["relerr"] < tol else "MISS",
                "%.2fx" % got if got else "no torch", r["relerr"]))
out += ["", "Distance kernel tile sweep on %s (KILN_DEMO_PDIST_TILE, _PREFETCH, _SYM; defaults 16x8, prefetch in float64 only, not symmetric):" % first, "",
        "| tile | case | device ms | rel. error |", "|---|---|---:|---:|"]
out += [l.rstrip() for l in open(spath)] if os.path.exists(spath) else []
out += [""]
if os.path.exists(ppath):
    out += open(ppath).read().splitlines()
print("\n".join(out))
PY
say "wrote $OUTD/demo-gpu.md"
cat "$OUTD/demo-gpu.md"
