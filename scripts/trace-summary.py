#!/usr/bin/env python3
"""Where a program's device time went, from a kiln trace file (KILN_TRACE=path
or kiln_trace_start/stop; docs/api.md, "Timeline"): one line per command
name with its count, median, minimum, maximum and total duration, largest
total first, and the share of the traced busy time.

    KILN_TRACE=/tmp/t.json KILN_DEVICE=cuda:0 KILN_BENCH_OPS=sort_int32 \\
        build/bench/bench_sort 268435456
    python3 scripts/trace-summary.py /tmp/t.json [--device SUBSTRING]

Durations are the device's own (commands of profiling queues: "timing":
"device"); host-timed commands are listed apart, since their time includes
waiting. --device keeps the commands of devices whose name has SUBSTRING."""
import json
import signal
import statistics
import sys


def main():
    import argparse
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a kiln trace file (JSON)")
    ap.add_argument("--device", metavar="SUBSTRING",
                    help="only the commands of devices whose name has SUBSTRING")
    a = ap.parse_args()
    want = a.device
    try:
        with open(a.trace) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"trace-summary: cannot read {a.trace}: {e}")
    events = trace.get("traceEvents", [])
    names = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    groups = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        dev = names.get(e.get("pid"), "?")
        if want and want not in dev:
            continue
        timing = e.get("args", {}).get("timing", "host")
        groups.setdefault((timing, e["name"]), []).append(float(e.get("dur", 0)))
    if not groups:
        sys.exit("trace-summary: no commands in the trace" + (f" on a device matching {want!r}" if want else ""))
    other = trace.get("otherData", {})
    busy = sum(sum(v) for (t, _), v in groups.items() if t == "device")
    print(f"{'timing':6} {'command':28} {'count':>6} {'median us':>10} {'min':>9} {'max':>9} {'total us':>11} {'share':>6}")
    for (timing, name), d in sorted(groups.items(), key=lambda kv: (kv[0][0] != "device", -sum(kv[1]))):
        total = sum(d)
        share = f"{100 * total / busy:5.1f}%" if timing == "device" and busy else "     -"
        print(f"{timing:6} {name:28} {len(d):6d} {statistics.median(d):10.1f} {min(d):9.1f} "
              f"{max(d):9.1f} {total:11.1f} {share}")
    if other.get("dropped") or other.get("unfinished"):
        print(f"(dropped {other.get('dropped', 0)}, unfinished {other.get('unfinished', 0)})")


if __name__ == "__main__":
    main()
