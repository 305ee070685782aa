#!/usr/bin/env bash
# Instruction counts of docs/benchmarks.md section 4b (issue 31: the held cycle with two sites
# ≤ 1.10× the held cycle with one): each row of examples/sites.rs alone under callgrind, with 1
# and with 11 held cycles of 1,000 matches; (11 − 1) ÷ 10 is one held cycle. The held cycle is
# counted with the harness's parts switched off (`--toggle-collect`): building the sightings
# (`sites::sightings_of`) and dropping them (`sites::done_with`), both counted apart as the
# sightings' row, and the harness's copy of the listings (`sites::listings`), which stands for
# the pages read and is no part of the cycle. What is left is what the timed rows time: one
# batch look-up (with the Redis connection's task reading its answer) and `announce` of each
# sighting, found held.
#
#   bash bench/sites-count.sh                      # target/release/examples/sites
#   SITES=/path/to/examples/sites bash bench/sites-count.sh
#
# Needs: valgrind, redis-server, a release build of the example (`cargo build --release
# --example sites`). Starts its own Redis on a free loopback port and stops it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
sites=${SITES:-target/release/examples/sites}
out=${SITES_OUT:-target/sites-count}
mkdir -p "$out"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$out/redis.pid" --logfile "$out/redis.log"
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

# count TAG ROW CYCLES TOGGLES…: total instructions of one run (collection off inside TOGGLES).
count() {
  local row=$2 cycles=$3 file="$out/$2-$3-$1.callgrind"
  local toggles=("--toggle-collect=once_cell::imp::OnceCell<T>::initialize::{{closure}}")
  for f in "${@:4}"; do toggles+=("--toggle-collect=$f"); done
  valgrind --tool=callgrind "${toggles[@]}" --collect-atstart=yes --callgrind-out-file="$file" \
    "$sites" "redis://127.0.0.1:$port/" 1000 1 "$cycles" "$row" >/dev/null 2>"$file.log"
  awk '/^summary:/ {print $2}' "$file"
}

echo "| row | held cycle, instructions per 1,000 matches | ÷ one site | sightings (built and dropped), per 1,000 listings |"
echo "| --- | ---: | ---: | ---: |"
one=
for row in 1site 2sites 2sites_other; do
  h1=$(count held "$row" 1 sites::sightings_of sites::done_with sites::listings)
  h11=$(count held "$row" 11 sites::sightings_of sites::done_with sites::listings)
  # The sightings: the run without the listings' copy alone, less the held cycle.
  a1=$(count cycle "$row" 1 sites::listings)
  a11=$(count cycle "$row" 11 sites::listings)
  python3 - "$row" "$h1" "$h11" "$a1" "$a11" "${one:-0}" <<'EOF'
import sys
row, h1, h11, a1, a11, one = sys.argv[1], *map(int, sys.argv[2:])
held = (h11 - h1) / 10
sightings = ((a11 - a1) - (h11 - h1)) / 10
ratio = f"{held / one:.3f}×" if one else "1"
n = 2000 if row != "1site" else 1000
print(f"| `held_{row}` | {held / 1e6:.3f} M | {ratio} | {sightings / 1e6:.2f} M ({n} listings) |")
EOF
  if [ -z "$one" ]; then one=$(( (h11 - h1) / 10 )); fi
done
