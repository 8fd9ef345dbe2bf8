"""python -m kiln devices | version"""
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv else "devices"
    import kiln

    if cmd == "version":
        print(f"kiln {kiln.__version__} (libkiln {kiln.kiln_version})")
        return 0
    if cmd == "devices":
        try:
            devs = kiln.devices()
        except kiln.KilnError as e:
            print(f"kiln: {e}", file=sys.stderr)
            return 1
        if not devs:
            print("kiln: no devices")
            return 1
        try:
            default = kiln.get_device()
        except kiln.KilnError:
            default = None
        for i, d in enumerate(devs):
            info = d.info()
            mark = "*" if d == default else " "
            mem = info["global_mem_bytes"] / 2**30
            print(f"{mark} {i}: {info['id']:<12} {info['type']:<4} {info['name']} "
                  f"({info['platform']}; {info['compute_units']} units, {mem:.1f} GiB)")
        print("(* = default: $KILN_DEVICE, else kiln's preference)")
        return 0
    print("usage: python -m kiln [devices|version]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
