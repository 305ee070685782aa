#!/usr/bin/env python3
"""Reads the results bench/run.sh left in DIR and prints the benchmark table (Markdown)."""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def crit_ns(case):
    with open(os.path.join(os.environ.get("CRITERION_HOME", "target/criterion"), "parse", case, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"]


def t(secs):
    if secs is None:
        return "–"
    if secs >= 1e-3:
        return f"{secs * 1e3:.2f} ms"
    return f"{secs * 1e6:.0f} µs"


def sites_section():
    """Part 2b: the held cycle with two sites configured beside one (`examples/sites.rs`)."""
    if not os.path.exists(os.path.join(out, "sites.json")):
        return
    st = load("sites.json")
    rows = st["rows"]
    print(f"### 2b. Held cycle, two sites beside one ({st['matches']} matches; {st['repeats']} repeats × "
          f"{st['held_cycles']} held cycles, the rows taking turns)\n")
    print("| row | ms per 1,000 matches (median) | ÷ `held_1site`, median of per-cycle ratios (target ≤ 1.10) |")
    print("| --- | ---: | --- |")

    def judged(ratio):
        return f"{ratio:.3f} {'✅' if ratio <= 1.10 else '❌'}"

    print(f"| held_1site | {rows['held_1site']['ms_per_1000']:.2f} | 1 |")
    print(f"| held_2sites (claims under the key read) | {rows['held_2sites']['ms_per_1000']:.2f} | "
          f"{judged(st['ratio_2sites_to_1site'])} (ratio of medians {st['ratio_of_medians']:.3f}) |")
    print(f"| held_2sites_other (claims under the other site's keys) | {rows['held_2sites_other']['ms_per_1000']:.2f} | "
          f"{judged(st['ratio_2sites_other_to_1site'])} |")
    print(f"| held_2sites_other_first | {rows['held_2sites_other_first']['ms_per_1000']:.2f} | (once per process: "
          f"each claim found through the other site's listing; not judged) |")
    print(f"| sightings_1site | {rows['sightings_1site']['ms_per_1000']:.2f} | 1 (not judged) |")
    print(f"| sightings_2sites (2 listings a match) | {rows['sightings_2sites']['ms_per_1000']:.2f} | "
          f"{st['sightings_ratio']:.3f} (not judged) |")
    print("\nPer-cycle ratios `held_2sites` ÷ `held_1site`, in the order run: "
          + ", ".join(f"{r:.2f}" for r in st["ratios_each"]) + ".\n")


print("### Machine\n\n```")
print(open(os.path.join(out, "machine.txt")).read().rstrip())
print("```\n")
if os.environ.get("BENCH_ONLY") == "sites":
    sites_section()
    sys.exit(0)

# 1. Extraction
ext = load("extract.json")
print("### 1. Extraction (page text → matches; fetch excluded; medians)\n")
print("| page | size | matches | ours (Rust) | BeautifulSoup + lxml | ours ×faster | selectolax, extract | selectolax, bare parse | ours ÷ bare parse | targets (≥20× BS4, ≤ bare parse) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for case, row in ext.items():
    ours = crit_ns(case) / 1e9
    size = f"{row['bytes'] / 1024:.0f} KiB"
    if "bs4" in row:
        x_bs4 = row["bs4"] / ours
        vs_bare = ours / row["selectolax_parse"]
        met = ("✅" if x_bs4 >= 20 else "❌") + " / " + ("✅" if vs_bare <= 1 else "❌")
        print(
            f"| {case} | {size} | {row['matches']} | {t(ours)} | {t(row['bs4'])} | {x_bs4:.0f}× | "
            f"{t(row['selectolax'])} | {t(row['selectolax_parse'])} | {vs_bare:.2f} | {met} |"
        )
    else:
        x_json = row["json"] / ours
        # One sample of each, minutes apart: when the alternating rounds below ran, they are
        # the judged measure and this row only reports.
        met = ("one sample; judged in rounds below" if os.path.isdir(os.path.join(out, "json-round-1"))
               else "✅" if x_json >= 2 else "❌")
        print(
            f"| {case} (JSON API) | {size} | {row['matches']} | {t(ours)} | – (stdlib json + walk: {t(row['json'])}, "
            f"ours {x_json:.2f}× faster) | – | – | – | – | ≥2× stdlib json + walk: {met} |"
        )
print()

# The JSON API pages in alternating rounds (ours, then Python, within the same minute): the
# median round by ratio is judged, every round's ratio printed.
rounds = []
i = 1
while os.path.isdir(os.path.join(out, f"json-round-{i}")):
    rounds.append(os.path.join(out, f"json-round-{i}"))
    i += 1
if rounds:
    print(f"JSON API pages in {len(rounds)} alternating rounds (criterion on our parser, then stdlib "
          "json + walk, each round within a minute); judged: the median round by ratio (ratios to two "
          "decimals, so that a ratio under 2 never prints as 2.0). For reference only: the fastest "
          "round of each side, from whichever rounds they came.\n")
    print("| page | ours, median round | stdlib json + walk, median round | ours ×faster, median round | every round (×faster) | rounds ≥ 2× | fastest of each: ours, Python (×faster) | target ≥ 2× |")
    print("| --- | ---: | ---: | ---: | --- | ---: | --- | --- |")
    for case in [c for c, r in ext.items() if "json" in r]:
        per = []
        for d in rounds:
            with open(os.path.join(d, f"{case}.json")) as f:
                ours_r = json.load(f)["median"]["point_estimate"] / 1e9
            with open(os.path.join(d, "extract.json")) as f:
                py_r = json.load(f)[case]["json"]
            per.append((py_r / ours_r, ours_r, py_r))
        ratio, ours_m, py_m = sorted(per)[len(per) // 2]
        met = sum(1 for p in per if p[0] >= 2)
        ours_best, py_best = min(p[1] for p in per), min(p[2] for p in per)
        print(f"| {case} | {t(ours_m)} | {t(py_m)} | {ratio:.2f}× | "
              + ", ".join(f"{p[0]:.2f}×" for p in per)
              + f" | {met} of {len(per)} | {t(ours_best)}, {t(py_best)} ({py_best / ours_best:.2f}×)"
              + f" | {'✅' if ratio >= 2 else '❌'} |")
    print()
if os.environ.get("BENCH_ONLY") == "extract":
    sys.exit(0)

# 2. Claim path: pairs of (claims example, redis-benchmark), run alternately.
def ref_ms_of(path):
    with open(path) as f:
        rows = [l.strip().replace('"', "").split(",") for l in f if l.strip()]
    rps = float(next(r for r in rows if r[0] == "SET")[1])
    return rps, 1000 / rps * 1e3


pairs = []
i = 1
while os.path.exists(os.path.join(out, f"claims-{i}.json")):
    claims_i = load(f"claims-{i}.json")
    rps_i, ref_i = ref_ms_of(os.path.join(out, f"redis-benchmark-{i}.csv"))
    assert "cycle_held" in claims_i["rows"], f"claims-{i}.json has no cycle_held row to judge"
    pairs.append((claims_i["rows"]["cycle_held"]["ms_per_1000"] / ref_i, i, claims_i, rps_i, ref_i))
    i += 1
assert pairs, "no claims-N.json / redis-benchmark-N.csv pairs"
by_ratio = sorted(pairs, key=lambda p: p[0])
held_ratio, pair_no, claims, rps, ref_ms = by_ratio[len(by_ratio) // 2]
print(f"### 2. Claim path ({claims['sightings']} sightings; {len(pairs)} pairs, the median pair shown)\n")
print(f"Each pair: the `claims` example (medians of {claims['repeats']} repeats), then "
      f"`redis-benchmark -P 16 -t set -n 100000` on the same server. Shown: pair {pair_no}, the "
      f"median of {len(pairs)} by the judged ratio; its reference: {rps:,.0f} SET/s, i.e. "
      f"{ref_ms:.2f} ms per 1,000 SETs.\n")
print("| path | ms per 1,000 sightings | × redis-benchmark (target ≤ 2×) | commands per sighting | socket reads per sighting |")
print("| --- | ---: | ---: | --- | ---: |")
# The 2x target is judged on what nearly every cycle does with a listed match: look it up in the
# batch and find it held (`cycle_held`). The other rows are for comparison; how often each
# happens is said beside it.
notes = {
    "cycle_held": None,
    "cycle_held_first": "the first held cycle: every record parsed",
    "cycle_held_refresh": "at start; later once per TTL/8",
    "cycle_new": "once per match; includes the post",
    "cycle_held_20ch": None,
}
for name, row in claims["rows"].items():
    per = row["per_sighting"]
    cmds = ", ".join(f"{k} {v:g}" for k, v in per.items() if not k.startswith("("))
    ratio = row["ms_per_1000"] / ref_ms
    if name in ("cycle_held", "cycle_held_20ch"):
        mark = "✅" if ratio <= 2 else "❌"
    else:
        mark = f"({notes.get(name, 'not the cycle')})"
    print(f"| {name} | {row['ms_per_1000']:.2f} | {ratio:.1f}× {mark} | "
          f"{per['(commands)']:g} ({cmds}) | {per.get('(socket reads)', 0):.3g} |")
within = sum(1 for p in pairs if p[0] <= 2)
print(f"\n`cycle_held` ÷ reference in each pair, in the order run: "
      + ", ".join(f"{p[0]:.2f}×" for p in pairs)
      + f" (median {held_ratio:.2f}×; {within} of {len(pairs)} within 2×). "
      + "References: " + ", ".join(f"{p[4]:.2f}" for p in pairs) + " ms per 1,000 SETs; "
      + "`cycle_held`: " + ", ".join(f"{p[2]['rows']['cycle_held']['ms_per_1000']:.2f}" for p in pairs) + " ms.")
print("\nJudged against 2×: `cycle_held`, a cycle's batch look-up of matches already claimed, as "
      "every cycle after a match's first sees it. `cycle_new` includes 1,000 posts to the "
      "loopback X stand-in.")
print()

# 2b. The held cycle with two sites beside one site (see sites_section).
sites_section()

# 3. Decision latency
d = load("decision.json")
print(f"### 3. Decision latency ({d['posts']} posts, {d['iterations']} iterations of `{d['page']}`)\n")
print("| interval | p50 | p99 | max | target p99 ≤ 5 ms |")
print("| --- | ---: | ---: | ---: | --- |")
for key, label in [
    ("first_post_us", "page bytes → first POST"),
    ("page_to_post_us", "page bytes → each POST"),
    ("announce_to_post_us", "announce start → its POST"),
]:
    s = d[key]
    print(f"| {label} | {s['p50'] / 1e3:.2f} ms | {s['p99'] / 1e3:.2f} ms | {s['max'] / 1e3:.2f} ms | "
          f"{'✅' if s['p99'] <= 5000 else '❌'} |")
print()

# 4. Memory
c = load("cycles.json")


def cycle_line(f):
    return (f"sources read {f['sources_read']}, failed {f['sources_failed']}; matches {f['matches']}; "
            f"posted {f['posted']}, skipped {f['skipped']}, failed {f['failed']}, deferred {f['deferred']}")


samples = c["samples"]
rss = [s["vm_rss_kib"] / 1024 for s in samples]
print(f"### 4. Memory of `cricket-announcer run` ({c['sources']} sources, {c['cycles']} cycles {c['interval_ms']} ms apart, {c['ms_per_cycle_with_interval']:.1f} ms per cycle with the interval, {c['posts']} posts)\n")
print("| cycle | " + " | ".join(str(s["cycle"]) for s in samples) + " |")
print("| --- | " + " | ".join("---:" for _ in samples) + " |")
print("| VmRSS (MiB) | " + " | ".join(f"{r:.1f}" for r in rss) + " |")
if all("rss_anon_kib" in s for s in samples):
    print("| of which anonymous: heap, stacks (MiB) | " + " | ".join(f"{s['rss_anon_kib'] / 1024:.1f}" for s in samples) + " |")
    print("| of which file-backed: the binary's and libraries' pages (MiB) | " + " | ".join(f"{s['rss_file_kib'] / 1024:.1f}" for s in samples) + " |")
after = rss[1:]
growth = after[-1] - after[0] if len(after) > 1 else 0.0
print(f"\nAfter 1,000 cycles: {rss[-1]:.1f} MiB (target ≤ 15 MB: {'✅' if rss[-1] * 1.048576 <= 15 else '❌'}); "
      f"change from cycle {samples[1]['cycle']} to {samples[-1]['cycle']}: {growth:+.1f} MiB. "
      f"First cycle: {cycle_line(c['first_cycle'])}. Last: {cycle_line(c['last_cycle'])}.\n")

# 5. Build and size
size = int(open(os.path.join(out, "binary-size.txt")).read())
print("### 5. Build and size\n")
print(f"- release binary `target/release/cricket-announcer`: {size / 1048576:.1f} MiB ({size:,} bytes)")
cold = os.path.join(out, "cold-build-secs.txt")
if os.path.exists(cold):
    print(f"- cold `cargo build --release` (fresh target dir, registry cached): {float(open(cold).read()):.0f} s")
else:
    print("- cold build: not run (BENCH_COLD=1)")
