#!/usr/bin/env bash
# The held cycle with results enabled beside the held cycle without (issue 32: within 1.2×),
# counted in instructions (callgrind), which the machine's load does not move.
#
#   bash bench/results-held.sh                       # target/release/cricket-announcer
#   BIN=path/to/cricket-announcer bash bench/results-held.sh
#
# For each of EVENTS=announce and EVENTS=announce,result: a Redis of its own, `seed` (every
# announcement and every result on the pages recorded, none posted), then `run --cycles 1` and
# `run --cycles 11` under callgrind, 50 ms apart. (11 − 1) ÷ 10 is one held cycle: the pages
# read and parsed, one batch look-up of every claim (the results' too), each match found held.
# The pages: four saved ones listing 179 matches: 171 announcements and 100 results recorded
# by `seed` (RESULT_MAX_AGE set so that every result is due). Prints a Markdown table.
# Needs: redis-server, valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/cricket-announcer}
out=$(mktemp -d)
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true; rm -rf "$out"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$out/redis.pid" --logfile "$out/redis.log"
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
f=$PWD/fixtures
sources="cricbuzz-json=$f/cricbuzz/matches-v1-live_2024-06-16.json,cricbuzz-json=$f/cricbuzz/matches-v1-upcoming_2024-06-16.json"
sources="$sources,espncricinfo=$f/espncricinfo/series-match-results_ipl-2022_2022-07-27.html"
sources="$sources,cricketdata=$f/cricketdata/current-matches_2026-05-18.json"

bot() {
  env -i PATH="$PATH" REDIS_URL="redis://127.0.0.1:$port/" KEY_PREFIX="bench-$1:" SOURCES="$sources" \
    EVENTS="$1" RESULT_MAX_AGE=3650d POLL_INTERVAL_MS=50 RUST_LOG=warn \
    X_API_BASE_URL=http://127.0.0.1:9/ X_API_KEY=k X_API_SECRET=s X_ACCESS_TOKEN=t X_ACCESS_TOKEN_SECRET=ts \
    "${@:2}"
}
instructions() { grep -m1 '^summary:' "$1" | awk '{print $2}'; }

rows=()
for events in announce announce,result; do
  bot "$events" "$bin" seed >"$out/seed-$events.txt"
  for n in 1 11; do
    bot "$events" valgrind --tool=callgrind --callgrind-out-file="$out/$events-$n.out" \
      "$bin" run --cycles "$n" >/dev/null 2>"$out/$events-$n.err"
  done
  per=$(( ($(instructions "$out/$events-11.out") - $(instructions "$out/$events-1.out")) / 10 ))
  rows+=("$events|$per|$(tail -1 "$out/seed-$events.txt")")
done
base=${rows[0]#*|}; base=${base%%|*}
echo "| EVENTS | instructions per held cycle | ÷ announce only | seed's summary |"
echo "| --- | ---: | ---: | --- |"
for r in "${rows[@]}"; do
  IFS='|' read -r events per seed <<<"$r"
  echo "| \`$events\` | $per | $(python3 -c "print(f'{$per / $base:.3f}×')") | $seed |"
done
