#!/usr/bin/env bash
# Soak: run 1,000 fast poll cycles of `cricket-announcer run` against local pages and print the
# process's resident memory (VmRSS from /proc/<pid>/status) every SAMPLE_EVERY cycles. A leak
# shows as RSS still climbing after the first samples. Not part of CI.
#
#   bench/soak.sh                        # release build, 1000 cycles, sample every 100
#   CYCLES=200 SAMPLE_EVERY=20 PROFILE=dev bench/soak.sh
#
# What runs: a dry-run `run --cycles $CYCLES` (nothing posted, nothing written) with two
# sources read every cycle: the Cricbuzz fixture served over HTTP by python3's http.server
# (fetch, decode, parse) and the Cricbuzz JSON fixture as a file. POLL_INTERVAL_MS is the
# hidden testing knob that replaces POLL_INTERVAL_SECS (whose minimum is one second).
set -euo pipefail
cd "$(dirname "$0")/.."

CYCLES=${CYCLES:-1000}
SAMPLE_EVERY=${SAMPLE_EVERY:-100}
INTERVAL_MS=${INTERVAL_MS:-20}
PROFILE=${PROFILE:-release}

if [ "$PROFILE" = release ]; then
  cargo build --release --locked --quiet
  bin=target/release/cricket-announcer
else
  cargo build --locked --quiet
  bin=target/debug/cricket-announcer
fi

work=$(mktemp -d)
cleanup() {
  [ -n "${bot:-}" ] && kill "$bot" 2>/dev/null || true
  [ -n "${web:-}" ] && kill "$web" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cp fixtures/cricbuzz/live-scores_2026-07-17.html "$work/live-scores.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
web=$!
for _ in $(seq 1 50); do
  curl -fs "http://127.0.0.1:$port/live-scores.html" -o /dev/null 2>/dev/null && break
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/live-scores.html')" 2>/dev/null && break
  sleep 0.1
done

env -i PATH="$PATH" \
  STORE_PATH="$work/soak.db" \
  TEMPLATE_PATH="$PWD/templates/announce.txt" \
  POLL_INTERVAL_MS="$INTERVAL_MS" \
  FETCH_PER_HOST_PER_MINUTE=1000000 \
  LOG_FORMAT=json RUST_LOG=info \
  "$bin" --dry-run run --cycles "$CYCLES" \
  --source "cricbuzz=http://127.0.0.1:$port/live-scores.html" \
  --source "cricbuzz-json=$PWD/fixtures/cricbuzz/matches-v1-upcoming_2024-06-16.json" \
  >/dev/null 2>"$work/log" &
bot=$!

echo "soak: $bin, $CYCLES cycles every ${INTERVAL_MS} ms, pid $bot"
printf '%8s %10s %8s\n' cycles rss_kib seconds
start=$(date +%s.%N)
next=0
while kill -0 "$bot" 2>/dev/null; do
  done_cycles=$(grep -c '"message":"cycle done"' "$work/log" || true)
  if [ "$done_cycles" -ge "$next" ]; then
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$bot/status" 2>/dev/null || echo "-")
    [ -n "$rss" ] && printf '%8d %10s %8.1f\n' "$done_cycles" "$rss" "$(echo "$(date +%s.%N) - $start" | bc)"
    next=$((done_cycles - done_cycles % SAMPLE_EVERY + SAMPLE_EVERY))
  fi
  sleep 0.05
done
wait "$bot" && status=0 || status=$?
done_cycles=$(grep -c '"message":"cycle done"' "$work/log" || true)
errors=$(grep -c '"level":"ERROR"' "$work/log" || true)
echo "soak: exit $status after $done_cycles cycles, $errors error lines, $(echo "$(date +%s.%N) - $start" | bc) s"
[ "$status" -eq 0 ] && [ "$done_cycles" -eq "$CYCLES" ] && [ "$errors" -eq 0 ]
