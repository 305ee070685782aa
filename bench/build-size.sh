#!/usr/bin/env bash
# Build and size, for choosing the release profile (issue 37): for each candidate profile, a cold
# `cargo build --release` in a fresh target directory (wall and CPU time), the binary's size as
# built, with `strip = "debuginfo"` and with `strip = true` (the same `strip` the profile
# setting runs, applied to a copy), and the resident memory of `run` at cycle 1,000 with 20
# channels (examples/cycles.rs against a Redis of its own). Then a cold `cargo test --no-run`
# (the suite's build, debug profile).
#
#   bash bench/build-size.sh                     # fat LTO (today's profile) and thin LTO
#   BUILD_PROFILES="fat" bash bench/build-size.sh
#   BUILD_SKIP_TEST=1 bash bench/build-size.sh   # without the cold test build
#
# CPU time (user + system) is the number to compare on a shared machine: wall time moves with
# whatever else runs, CPU time much less. Prints a Markdown table; each build's log stays in
# $BUILD_OUT (default target/build-size).
# Needs: redis-server, /usr/bin/time (Debian's `time`), binutils' strip.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BUILD_OUT:-target/build-size}
mkdir -p "$out"
log() { printf '== %s\n' "$*" >&2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$out/redis.pid" --logfile "$out/redis.log"
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url="redis://127.0.0.1:$port"

# time's format: wall seconds, user seconds, system seconds, peak RSS (KiB).
measure() { /usr/bin/time -f '%e %U %S %M' -o "$1" "${@:2}"; }

rows=()
for profile in ${BUILD_PROFILES:-fat thin}; do
  tgt=$(mktemp -d)
  case $profile in
    fat) env=(CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1) ;;
    thin) env=(CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16) ;;
    *) echo "unknown profile $profile (fat, thin)" >&2; exit 2 ;;
  esac
  log "cold release build, $profile LTO, in $tgt"
  measure "$out/$profile.time" env "${env[@]}" CARGO_TARGET_DIR="$tgt" \
    cargo build --locked --release --bin cricket-announcer --example cycles >"$out/$profile.log" 2>&1
  read -r wall user sys _ <"$out/$profile.time"
  bin=$tgt/release/cricket-announcer
  size=$(stat -c %s "$bin")
  cp "$bin" "$out/$profile.debuginfo" && strip --strip-debug "$out/$profile.debuginfo"
  cp "$bin" "$out/$profile.stripped" && strip "$out/$profile.stripped"
  log "memory at cycle 1,000 with 20 channels ($profile)"
  "$tgt/release/examples/cycles" "$url" 1000 20 >"$out/$profile.cycles.json"
  rss=$(python3 -c "
import json
last = json.load(open('$out/$profile.cycles.json'))['samples'][-1]
print(f\"{last['vm_rss_kib'] / 1024:.1f} MiB (cycle {last['cycle']})\")
")
  rows+=("| $profile LTO | $wall s | $(python3 -c "print(round($user + $sys))") s | $(numfmt --to=iec "$size") | $(numfmt --to=iec "$(stat -c %s "$out/$profile.debuginfo")") | $(numfmt --to=iec "$(stat -c %s "$out/$profile.stripped")") | $rss |")
  rm -rf "$tgt"
done

if [ "${BUILD_SKIP_TEST:-0}" != 1 ]; then
  tgt=$(mktemp -d)
  log "cold cargo test --no-run in $tgt"
  measure "$out/test.time" env CARGO_TARGET_DIR="$tgt" cargo test --locked --no-run >"$out/test.log" 2>&1
  read -r twall tuser tsys _ <"$out/test.time"
  rm -rf "$tgt"
fi

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); nproc $(nproc); $(rustc --version)"
echo
echo "| release profile | cold build, wall | cold build, CPU | binary | strip = \"debuginfo\" | strip = true | resident at cycle 1,000, 20 channels |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
if [ -n "${twall:-}" ]; then
  echo
  echo "cold \`cargo test --locked --no-run\` (debug): ${twall} s wall, $(python3 -c "print(round($tuser + $tsys))") s CPU"
fi
