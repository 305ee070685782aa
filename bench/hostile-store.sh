#!/usr/bin/env bash
# Hostile store values (issue 35): what the bot's memory and output come to when a store holds
# claim records of several MiB (an owner field of 8 MiB, as a hostile or broken writer could
# leave). Seeds a dedicated Redis with the matches of a saved page (`seed`), measures
# `backfill`, `--json claims list` and `claims release` on those ordinary records, then
# overwrites some of them with records of HOSTILE_MIB MiB each and measures the same commands
# again: peak resident size (`/usr/bin/time -v`, "Maximum resident set size") and bytes
# written to stdout and stderr. Prints one table (docs/benchmarks.md, "Hostile store values").
#
#   bash bench/hostile-store.sh                  # every seeded record made 8 MiB
#   HOSTILE_RECORDS=4 HOSTILE_MIB=8 bash bench/hostile-store.sh   # the first 4 only
#   CARGO_TARGET_DIR=… bash bench/hostile-store.sh   # the release binary there
#   HOSTILE_BIN=target/debug/cricket-announcer bash bench/hostile-store.sh   # another build
#
# Needs: redis-server and redis-cli (Redis 7), python3, GNU time (/usr/bin/time). Builds the
# release binary when it is missing. Starts its own Redis on a free loopback port, nothing
# kept on disk, and stops it on exit. Talks to no platform: every match is held, so nothing is
# posted (X's address is a closed loopback port).
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${CARGO_TARGET_DIR:-target}
out=$tgt/bench/hostile
records=${HOSTILE_RECORDS:-}
mib=${HOSTILE_MIB:-8}
bin=${HOSTILE_BIN:-$tgt/release/cricket-announcer}
mkdir -p "$out"
log() { printf '== %s\n' "$*" >&2; }

if [ ! -x "$bin" ]; then
  log "cargo build --release --bin cricket-announcer"
  cargo build --locked --release --bin cricket-announcer >"$out/build.log" 2>&1
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no >"$out/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
log "redis on port $port (pid $redis_pid)"

prefix=hostile:
page=fixtures/cricbuzz/live-scores_2026-07-17.html
export REDIS_URL="redis://127.0.0.1:$port/" KEY_PREFIX=$prefix SOURCES=$page INSTANCE_ID=bench \
  X_API_BASE_URL=http://127.0.0.1:9 X_API_KEY=k X_API_SECRET=s X_ACCESS_TOKEN=t \
  X_ACCESS_TOKEN_SECRET=ts RUST_LOG=info
unset CHANNELS_FILE DATABASE_URL STORE_PATH

# One command measured: its peak resident size (KiB), stdout and stderr bytes, exit code.
measure() {
  local name=$1
  shift
  local rc=0
  /usr/bin/time -v -o "$out/$name.time" "$bin" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr" || rc=$?
  local rss
  rss=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$out/$name.time")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rss" "$(stat -c %s "$out/$name.stdout")" \
    "$(stat -c %s "$out/$name.stderr")" "$rc" >>"$out/results.tsv"
}

: >"$out/results.tsv"
log "seed: every match of $page recorded, nothing posted"
"$bin" seed >"$out/seed.log" 2>&1
mapfile -t keys < <(redis-cli -p "$port" --scan --pattern "${prefix}match:*" | sort)
records=${records:-${#keys[@]}}
[ "${#keys[@]}" -ge "$records" ] || { echo "only ${#keys[@]} claims seeded" >&2; exit 1; }
first=${keys[0]#"${prefix}match:"}

log "ordinary records: ${#keys[@]}"
measure ordinary-backfill backfill
measure ordinary-list --json claims list
measure ordinary-release claims release "$first"

log "hostile records: $records of $mib MiB (an owner of $mib MiB each)"
python3 - "$mib" >"$out/hostile-record.json" <<'EOF'
import json, sys
owner = "A" * (int(sys.argv[1]) << 20)
print(json.dumps({"state": "claimed", "owner": owner, "token": "hostile",
                  "claimed_at": "2026-07-17T08:00:00Z", "updated_at": "2026-07-17T08:00:00Z"}), end="")
EOF
size=$(stat -c %s "$out/hostile-record.json")
for key in "${keys[@]:0:$records}"; do
  redis-cli -p "$port" -x SET "$key" <"$out/hostile-record.json" >/dev/null
  redis-cli -p "$port" EXPIRE "$key" 86400 >/dev/null
done
measure hostile-backfill backfill
measure hostile-list --json claims list
measure hostile-release claims release "$first"

python3 - "$out/results.tsv" "$records" "$size" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, rss, so, se, rc = line.rstrip("\n").split("\t")
    rows[name] = (int(rss), int(so), int(se), int(rc))
records, size = int(sys.argv[2]), int(sys.argv[3])
total = records * size
print(f"hostile records: {records} × {size:,} bytes = {total / 2**20:.1f} MiB in all")
print()
print("| command | peak RSS, ordinary | peak RSS, hostile | growth | growth ÷ records' size | stdout, hostile | stderr, hostile | exit (ord./host.) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for cmd, label in [("backfill", "`backfill`"), ("list", "`--json claims list`"), ("release", "`claims release KEY`")]:
    o, h = rows[f"ordinary-{cmd}"], rows[f"hostile-{cmd}"]
    growth = (h[0] - o[0]) * 1024
    print(f"| {label} | {o[0]:,} KiB | {h[0]:,} KiB | {growth / 2**20:.1f} MiB | {growth / total:.2f}× | {h[1]:,} B | {h[2]:,} B | {o[3]}/{h[3]} |")
EOF
