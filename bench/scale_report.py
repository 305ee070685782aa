"""The scale run's table (bench/run.sh part 6, issue 36): one row per size, from the JSON each
`examples/scale` run printed. Usage: python3 bench/scale_report.py target/bench/scale-*.json"""

import json
import sys


def mib(kib):
    return f"{kib / 1024:.1f}"


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    runs.sort(key=lambda r: (r["matches"], r["channels"]))
    print("| N × C | sightings | steady ms | first ms (×) | new match ms (×) | reconcile ms (×) "
          "| commands steady / first / new / reconcile | SLOWLOG max (µs, ≥1 ms) "
          "| peak RSS MiB steady / first / new (×) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for r in runs:
        s, f, n, rec = r["steady"], r["first"], r["new_match"], r["reconcile"]
        t, m = r["time_vs_steady"], r["peak_rss_vs_steady"]
        slow = r["slowest_command"]
        slow = f'{slow["us"]} ({slow["command"]})' if slow else "none"
        print(
            f'| {r["matches"]:,} × {r["channels"]} | {r["sightings"]:,} | {s["ms"]:.1f} '
            f'| {f["ms"]:.1f} ({t["first"]:.2f}×) | {n["ms"]:.1f} ({t["new_match"]:.2f}×) '
            f'| {rec["ms"]:.1f} ({t["reconcile"]:.2f}×) '
            f'| {s["commands"]:,} / {f["commands"]:,} / {n["commands"]:,} / {rec["commands"]:,} '
            f'| {slow} '
            f'| {mib(s["peak_rss_kib"])} / {mib(f["peak_rss_kib"])} / {mib(n["peak_rss_kib"])} '
            f'({m["first"]:.2f}×, {m["new_match"]:.2f}×) |'
        )


if __name__ == "__main__":
    main(sys.argv[1:])
