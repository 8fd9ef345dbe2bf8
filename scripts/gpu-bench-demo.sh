#!/usr/bin/env bash
# The demo's GPU figures in one run (issue 5's speed targets), on the GPU
# machine, from the repository root, after scripts/gpu-test.sh has built
# the tree:
#   1. kiln demo on cuda:0 and NVIDIA's OpenCL: masks 1024² and 8192²,
#      distances 16384×64 in float32 and float64, 20 repetitions, JSON;
#      serial C cases longer than 10 s are estimated from 1/16 of the rows
#      (--host-max-seconds, marked in the tables);
#   2. a sweep of the distance kernels' tiles on cuda:0: both the symmetric
#      kernel (the default: blocks on and above the diagonal, mirrored; the
#      same bits, half the arithmetic) and the full one (every block, like
#      torch.cdist), float32 and float64 (SWEEP=long: the wide search;
#      SWEEP_ONLY=1: only the sweep, not 1, 3 or 4; PDIST_CFGS: your own lines of
#      "f32|f64|sym f32|sym f64" tiles, "-" = the default);
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
if [ -z "${SWEEP_ONLY:-}" ]; then
say "kiln demo ($DEVICES): masks $SIZES; distances ${POINTS}x64"
timeout 150 "$KILN" demo $DEVARGS --sizes "$SIZES" \
  --points "$POINTS" --dims 64 --reps 20 --host-max-seconds 10 --json \
  --out "$OUTD/demo-gpu-pictures" >"$JSON" 2>>"$LOG"
say "kiln demo exit $?"
fi

# --- 2. tile sweep (distances only matter: a tiny mask) -----------------------
# Each run sets the four kernels' tiles at once ("full f32|full f64|sym f32|
# sym f64", TSxRBI[xRBJ][,kKT][,pPF][,bMINB]; "-" = the default), so one
# run times four candidates. SWEEP=long: the wide search.
SWEEP_FILE="$OUTD/demo-gpu-sweep.txt"
: > "$SWEEP_FILE"
if [ -n "${PDIST_CFGS:-}" ]; then
  CFGS="$PDIST_CFGS"
elif [ "${SWEEP:-short}" = long ]; then
  CFGS="16x8,k16,p0|16x4,k8,p1|16x8,k16,p0|16x8,k8,p1
16x8,k8,p0|16x4,k16,p0|16x8,k8,p0|16x4,k8,p1
16x8,k32,p0|16x4,k16,p1|16x8,k32,p0|16x4,k16,p0
16x8x4,k16,p0,b3|16x4x8,k16,p0,b2|16x4,k16,p0|16x6,k8,p1
16x4x8,k16,p0,b3|16x8x4,k8,p0,b2|16x6,k16,p0|16x8,k8,p0
16x6,k16,p0|16x8x4,k16,p0|16x8,k16,p1|16x4,k8,p0
16x4,k16,p0|16x6,k8,p1|16x4,k8,p0|16x6,k8,p0
8x8,k16,p0|16x4x8,k8,p1|8x8,k16,p0|16x4,k16,p1
16x8x6,k16,p0|16x4,k8,p0|16x8x4,k16,p0,b3|16x8,k16,p0
16x8x12,k16,p0|16x4x6,k8,p1|16x8,k16,p0,b2|16x5,k8,p1"
else
  # the defaults, then the defaults of 2026-11-21..27 (scalar local
  # loads; every field given, since omitted ones come from the defaults)
  CFGS="-|-|-|-
16x8x8,k16,p0,b1,v0|16x4x8,k16,p0,b2,v0|16x8,k16,p0,b2,v0|16x4,k16,p0,b1,v0"
fi
i=0
while IFS='|' read -r f32 f64 s32 s64; do
  i=$((i+1))
  say "sweep $i: full $f32 / $f64, symmetric $s32 / $s64"
  env $( [ "$f32" != - ] && echo KILN_DEMO_PDIST_TILE_F32=$f32 ) \
      $( [ "$f64" != - ] && echo KILN_DEMO_PDIST_TILE_F64=$f64 ) \
      $( [ "$s32" != - ] && echo KILN_DEMO_PDIST_SYM_TILE_F32=$s32 ) \
      $( [ "$s64" != - ] && echo KILN_DEMO_PDIST_SYM_TILE_F64=$s64 ) \
    timeout 60 "$KILN" demo --device "$FIRST" --sizes 64 --kernels-only \
    --points "$POINTS" --dims 64 --reps 10 --no-openmp --host-max-seconds 0.5 --json \
    --out "$OUTD/demo-gpu-pictures" > "$OUTD/demo-gpu-sweep-$i.json" 2>>"$LOG"
  python3 - "$OUTD/demo-gpu-sweep-$i.json" >> "$SWEEP_FILE" <<'PY'
import json, sys
try:
    kj = json.load(open(sys.argv[1]))
except Exception as e:
    print("| no result (%s) | | | | |" % e); sys.exit()
for r in kj["results"]:
    if r["workload"] == "pdist" and r["method"].startswith("kiln"):
        if "error" in r:
            print("| %s | %s | %s | error | %s |" % (r.get("variant"), r["case"], r.get("kernel", "?"), r["error"]))
        else:
            print("| %s | %s | %s | %.4f | %.1e |" % (r.get("variant"), r["case"], r.get("kernel", "?"), r["device_ms"], r["relerr"]))
PY
  rm -f "$OUTD/demo-gpu-sweep-$i.json"
done <<< "$CFGS"
sort -t'|' -k2,3 -k5n "$SWEEP_FILE" -o "$SWEEP_FILE"
[ -n "${SWEEP_ONLY:-}" ] && { cat "$SWEEP_FILE"; exit 0; }

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
python3 - "$JSON" "$OUTD/demo-gpu-rows.json" "$OUTD/demo-gpu-peers.md" "$SWEEP_FILE" "$POINTS" "$FIRST" > "$OUTD/demo-gpu.md" <<'PY'
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
    # Both distance kernels: with symmetry (the default: each off-diagonal
    # block computed once, written twice, the same bits) and without (every
    # block, like torch.cdist(x, x)).
    for prec, ratio, tol in (("float32", 1.5, 1e-6), ("float64", 1.2, 1e-13)):
        case = "%sx64 %s" % (points, prec)
        t = torch(case)
        for method, what in (("kiln kernel (symmetry)", "with symmetry"),
                             ("kiln kernel (no symmetry)", "without symmetry, like torch.cdist"),
                             ("kiln kernel", "")):
            r = kiln("pdist", case, method, dev)
            if not r or (not what and r.get("variant") in ("symmetric", "full")):
                continue
            tdev = t["theirs_dev_ms"] if t else None
            got = tdev / r["device_ms"] if tdev else None
            out.append("| distances %s%s vs torch.cdist (%s ms) | %s | %.4f | ≥ %.1fx, rel. error < %g | %s (%s, rel. error %.1e) |" % (
                prec, " " + what if what else "", "%.3f" % tdev if tdev else "?", r["device"], r["device_ms"], ratio, tol,
                "PASS" if got and got >= ratio and r["relerr"] < tol else "MISS",
                "%.2fx" % got if got else "no torch", r["relerr"]))
out += ["", "Distance kernel tile sweep on %s (KILN_DEMO_PDIST_TILE_F32/_F64, _SYM_TILE_F32/_F64: TSxRBIxRBJ, kKT dimensions per step, prefetch, bN groups per SM):" % first, "",
        "| kernel | case | tile | device ms | rel. error |", "|---|---|---|---:|---:|"]
out += [l.rstrip() for l in open(spath)] if os.path.exists(spath) else []
out += [""]
if os.path.exists(ppath):
    out += open(ppath).read().splitlines()
print("\n".join(out))
PY
say "wrote $OUTD/demo-gpu.md"
cat "$OUTD/demo-gpu.md"
