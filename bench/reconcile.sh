#!/usr/bin/env bash
# Reconciliation and the batch read at a sports desk's scale (issue 36), on a Redis of its own:
# the claims to settle read by a scan of every channel's keys (what `reconcile` did before the
# index) beside the index of unsettled claims (one pass for every channel), and the held cycle's
# batch read of every claim as MGETs of at most 1,000 keys beside one MGET of them all. One JSON
# line per configuration (examples/reconcile.rs says what each field is), then a table.
#
#   bash bench/reconcile.sh                       # 100,000 claims as 5,000 × 20 and 1,000 × 100,
#                                                 # then 5 claims beside 170,000 foreign keys
#   BENCH_RECONCILE="MATCHES:CHANNELS:UNSETTLED:FOREIGN …" bash bench/reconcile.sh
#   CARGO_TARGET_DIR=… bash bench/reconcile.sh
#
# Needs redis-server and redis-cli (Redis 7). Starts its Redis on a free loopback port and stops
# it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${CARGO_TARGET_DIR:-target}
out=$tgt/bench
mkdir -p "$out"
log() { printf '== %s\n' "$*" >&2; }

log "cargo build --release --example reconcile"
cargo build --locked --release --example reconcile >"$out/reconcile-build.log" 2>&1

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no >"$out/reconcile-redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url="redis://127.0.0.1:$port/"

: >"$out/reconcile.jsonl"
for config in ${BENCH_RECONCILE:-5000:20:5:0 1000:100:5:0 5:1:5:170000}; do
  IFS=: read -r matches channels unsettled foreign <<<"$config"
  log "reconcile: $matches matches × $channels channels, $unsettled unsettled per channel, $foreign foreign keys"
  "$tgt/release/examples/reconcile" "$url" "$matches" "$channels" "$unsettled" "$foreign" 3 | tee -a "$out/reconcile.jsonl"
  redis-cli -p "$port" flushall >/dev/null
done

python3 - "$out/reconcile.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def cmds(m):
    # The measurement's own commands (CONFIG RESETSTAT, SLOWLOG RESET) are not the read's.
    own = ("config", "slowlog", "info")
    return ", ".join(f"{k} {v:,}" for k, v in sorted(m["commands"].items()) if k.split("|")[0] not in own)
print("| claims (matches × channels) | unsettled | foreign keys | read by scan: ms, commands, longest µs | read by index: ms, commands, longest µs | index filled once: ms, SCANs | batch read, one MGET: ms, longest µs | batch read, MGETs of 1,000: ms, MGETs (server's mean), longest µs |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    s, i, f, one, sl = r["reconcile_read_by_scan"], r["reconcile_read_by_index"], r["fill_once"], r["batch_read_one_mget"], r["batch_read_sliced"]
    print(f"| {r['claims']:,} ({r['matches']:,} × {r['channels']}) | {r['unsettled']} | {r['foreign_keys']:,} "
          f"| {s['ms']:,} ms; {cmds(s)}; {s['longest_command_us']:,} µs "
          f"| {i['ms']:,} ms; {cmds(i)}; {i['longest_command_us']:,} µs "
          f"| {f['ms']:,} ms; {f['commands'].get('scan', 0):,} SCAN "
          f"| {one['ms']:,} ms; {one['longest_command_us']:,} µs "
          f"| {sl['ms']:,} ms; {sl['commands'].get('mget', 0):,} (mean {sl.get('usec_per_call', {}).get('mget', 0):,} µs); {sl['longest_command_us']:,} µs |")
PY
