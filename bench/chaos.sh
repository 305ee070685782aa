#!/usr/bin/env bash
# Chaos trials (issue 35): on each store, CHAOS_TRIALS times, three `backfill --init-store`
# processes race over the same saved pages against one store, one of them is killed
# (SIGKILL) at a random moment, and X's stand-in fails at random: it creates the post and
# answers 201, creates it and answers 500, creates it and answers after the bot's
# POST_TIMEOUT_SECS (a lost answer), creates nothing and answers 503, or creates nothing and
# answers 400. A second round of the same three processes follows (the claims left `unknown`
# or stuck must stay unposted). The stand-in records every post it created; a duplicate is a
# post text created twice. Prints the trials and duplicates per store; exits 1 on any
# duplicate.
#
#   bash bench/chaos.sh                          # 20 trials on each of redis, postgres, embedded
#   CHAOS_TRIALS=60 CHAOS_STORES="redis postgres" bash bench/chaos.sh
#   CHAOS_BIN=target/debug/cricket-announcer bash bench/chaos.sh
#   CHAOS_SELFTEST=1 CHAOS_TRIALS=1 bash bench/chaos.sh   # each process under its own prefix (no
#                                   # shared claims): must report duplicates, showing it can
#
# Needs: redis-server and redis-cli (Redis 7), psql and the PostgreSQL of `.ci/run`
# (postgres://postgres@127.0.0.1:5432/test; each run works in a schema of its own, dropped on
# exit), python3. Starts its own Redis and its own X stand-in on free loopback ports, and
# stops them on exit. Builds the release binary when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${CARGO_TARGET_DIR:-target}
out=$tgt/bench/chaos
trials=${CHAOS_TRIALS:-20}
stores=${CHAOS_STORES:-redis postgres embedded}
bin=${CHAOS_BIN:-$tgt/release/cricket-announcer}
mkdir -p "$out"
log() { printf '== %s\n' "$*" >&2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if [ ! -x "$bin" ]; then
  log "cargo build --release --bin cricket-announcer"
  cargo build --locked --release --bin cricket-announcer >"$out/build.log" 2>&1
fi

pids=()
schema=chaos_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  psql -q -h 127.0.0.1 -U postgres -d test -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --daemonize no >"$out/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
psql -q -h 127.0.0.1 -U postgres -d test -c "CREATE SCHEMA $schema" >/dev/null

# X's stand-in: one outcome drawn per create; every post it created is appended to the file
# named by the request's path-free state (CREATED, set per trial through /reset).
x_port=$(free_port)
python3 - "$x_port" >"$out/x.log" 2>&1 <<'EOF' &
import http.server, json, random, sys, threading, time
lock = threading.Lock()
state = {"file": None, "n": 0}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.startswith("/reset"):
            with lock:
                state["file"] = body.decode()
            return self.answer(200, {})
        text = json.loads(body or b"{}").get("text", "")
        roll = random.random()
        created = roll < 0.80
        with lock:
            state["n"] += 1
            tid = str(1800000000000000000 + state["n"])
            if created:
                with open(state["file"], "a") as f:
                    f.write(json.dumps(text) + "\n")
        if roll < 0.50:
            return self.answer(201, {"data": {"id": tid, "text": text}})
        if roll < 0.65:
            return self.answer(500, {"title": "Internal Error"})
        if roll < 0.80:
            time.sleep(2.5)  # past the bot's POST_TIMEOUT_SECS: the answer is lost
            return self.answer(201, {"data": {"id": tid, "text": text}})
        if roll < 0.90:
            return self.answer(503, {"title": "Service Unavailable"})
        return self.answer(400, {"title": "Invalid Request", "detail": "chaos"})
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
pids+=($!)
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $x_port))" 2>/dev/null && break; sleep 0.1; done

sources=(--source fixtures/cricbuzz/live-scores_2026-07-17.html
  --source fixtures/cricketdata/current-matches_2026-05-18.json
  --source fixtures/espncricinfo/rss-livescores_2019-01-31.xml)
export X_API_BASE_URL="http://127.0.0.1:$x_port" X_API_KEY=k X_API_SECRET=s X_ACCESS_TOKEN=t \
  X_ACCESS_TOKEN_SECRET=ts POST_TIMEOUT_SECS=1 POSTS_PER_MINUTE=1000 POSTS_PER_DAY=100000 \
  MAX_POSTS_PER_CYCLE=100 RUST_LOG=warn
unset CHANNELS_FILE REDIS_URL DATABASE_URL STORE_PATH

: >"$out/results.tsv"
for store in $stores; do
  dups_total=0 posts_total=0 killed_total=0
  for trial in $(seq 1 "$trials"); do
    dir=$out/$store-$trial
    rm -rf "$dir"
    mkdir -p "$dir"
    created=$(realpath "$dir")/created.jsonl
    : >"$created"
    curl -s -X POST --data-binary "$created" "http://127.0.0.1:$x_port/reset" >/dev/null
    prefix="chaos$$-$store-$trial:"
    case $store in
      redis) env=(REDIS_URL="redis://127.0.0.1:$redis_port/") ;;
      postgres) env=(DATABASE_URL="postgres://postgres@127.0.0.1:5432/test?options=-csearch_path%3D$schema") ;;
      embedded) env=(STORE_PATH="$(realpath "$dir")/claims.db") ;;
    esac
    for round in 1 2; do
      procs=()
      for i in 1 2 3; do
        env "${env[@]}" KEY_PREFIX="$prefix${CHAOS_SELFTEST:+p$i:}" INSTANCE_ID="chaos-$i" "$bin" backfill --init-store "${sources[@]}" \
          >"$dir/r$round-p$i.out" 2>"$dir/r$round-p$i.err" &
        procs+=($!)
      done
      if [ "$round" = 1 ]; then
        # One of them killed at a random moment in its first two seconds.
        sleep "$(python3 -c 'import random; print(round(random.uniform(0.2, 2.0), 2))')"
        kill -9 "${procs[$((RANDOM % 3))]}" 2>/dev/null && killed_total=$((killed_total + 1)) || true
      fi
      for p in "${procs[@]}"; do wait "$p" 2>/dev/null || true; done
    done
    posts=$(wc -l <"$created")
    dups=$(sort "$created" | uniq -d | wc -l)
    posts_total=$((posts_total + posts))
    dups_total=$((dups_total + dups))
    [ "$dups" = 0 ] || log "$store trial $trial: $dups posts created twice (see $dir)"
    if [ "$store" = redis ]; then
      redis-cli -p "$redis_port" --scan --pattern "$prefix*" | xargs -r redis-cli -p "$redis_port" DEL >/dev/null
    fi
  done
  log "$store: $trials trials, $killed_total processes killed, $posts_total posts created, $dups_total duplicates"
  printf '%s\t%s\t%s\t%s\t%s\n' "$store" "$trials" "$killed_total" "$posts_total" "$dups_total" >>"$out/results.tsv"
done

echo "| store | trials | processes killed | posts created at X | duplicates |"
echo "| --- | ---: | ---: | ---: | ---: |"
bad=0
while IFS=$'\t' read -r store n killed posts dups; do
  echo "| $store | $n | $killed | $posts | $dups |"
  [ "$dups" = 0 ] || bad=1
done <"$out/results.tsv"
exit "$bad"
