#!/usr/bin/env bash
# Fuzzes every parser: each property in tests/it/fuzz.rs runs for SECS seconds (default 600)
# with an effectively unbounded case count, in release mode. A property that finds a panic or
# an insane match fails and prints proptest's minimal failing input.
#
#   bench/fuzz.sh            # ten minutes per parser, one after another
#   bench/fuzz.sh 600 3      # ten minutes each, three at a time
set -u
cd "$(dirname "$0")/.."
secs=${1:-600}
jobs=${2:-1}
props=(
  damaged_cricbuzz_pages_never_panic
  damaged_cricbuzz_json_never_panics
  damaged_espncricinfo_pages_never_panic
  damaged_espn_rss_never_panics
  damaged_cricketdata_never_panics
  damaged_css_profile_pages_never_panic
  arbitrary_text_never_panics_any_parser
)
cargo test --release --locked --test it --no-run >/dev/null 2>&1 || { echo "build failed"; exit 1; }
bin=$(ls -t target/release/deps/it-* | grep -v '\.d$' | head -n1)
run() {
  local p=$1 start end rc
  start=$(date +%s)
  PROPTEST_CASES=1000000000 timeout "$secs" "$bin" --exact "fuzz::$p" --test-threads 1 >"target/fuzz-$p.log" 2>&1
  rc=$?
  end=$(date +%s)
  case $rc in
    124) echo "$p: no failure in $((end - start)) s" ;;
    0) echo "$p: all cases passed in $((end - start)) s" ;;
    *) echo "$p: FAILED (exit $rc), see target/fuzz-$p.log" ;;
  esac
}
export -f run
export secs bin
printf '%s\n' "${props[@]}" | xargs -P "$jobs" -I{} bash -c 'run {}'
