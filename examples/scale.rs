//! Scale: a sports desk's deployment, N matches × C channels on one Redis (issue 36), run
//! through the code `run` runs, in this process.
//!
//! Writes a synthetic Cricbuzz API page of N distinct matches (the saved page's Cyprus v
//! Estonia listing, retold with sides, id and start of its own), a channels file of C X
//! channels posting to a loopback stand-in, and builds the bot as `run` does (`App::build`) on
//! the given Redis under a fresh key prefix. It seeds (every match recorded on every channel,
//! nothing posted: the bot seeds channel `x000` and the others get copies of its keys, see
//! `copy_channel`; `BENCH_SCALE_SEED=bot` seeds each through the bot), then measures, each on
//! its own:
//! - `first`: the process's first cycle (every held key's TTL set again, in chunks);
//! - `steady`: the median of STEADY later cycles (nothing new: one read);
//! - `new_match`: a cycle whose page lists one match more (its claim and post on each channel);
//! - `reconcile`: one reconciliation (`App::reconcile`, what `run` does every 12th cycle).
//!
//! For each: wall time (ms), the Redis commands the server counted (`INFO commandstats`, every
//! call, a script's inner calls included), and this process's peak resident memory during it
//! (`VmHWM` after writing 5 to `/proc/self/clear_refs`, which resets it: proc(5)) beside its
//! resident memory before it. SLOWLOG: the longest command the server ran over the whole
//! measurement (`slowlog-log-slower-than` set to 1 ms; 0 when none took that long).
//!
//! Usage: `cargo build --release --example scale`, then
//! `target/release/examples/scale REDIS_URL N C [STEADY]`. Prints one JSON object. The Redis
//! should be one of its own (`bench/run.sh` starts one): its statistics are reset.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    unreachable_pub
)]

#[path = "support/mock_x.rs"]
mod mock_x;

use clap::Parser;
use cricket_announcer::app::App;
use cricket_announcer::cli::Cli;
use cricket_announcer::config::{Config, Invocation, Needs};
use serde_json::{json, Value};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The listing every synthetic match is made from (Cyprus v Estonia, 1st T20I).
const LISTING: u64 = 96_744;
/// Its start, 2024-06-17 05:30 UTC, in ms.
const START_MS: i64 = 1_718_602_200_000;

/// A side's name made of letters alone from `i` (base 26), so that every match is its own
/// fixture and no name reads as a slot code ("B1").
fn side(i: usize) -> String {
    let mut n = i;
    let mut word = String::new();
    for _ in 0..4 {
        word.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    let mut chars = word.chars();
    let first = chars.next().unwrap().to_ascii_uppercase();
    format!("{first}{}", chars.as_str())
}

/// The saved Cricbuzz API page with `n` listings of its own in place of the saved ones.
fn page(root: &str, n: usize) -> String {
    let saved =
        std::fs::read_to_string(format!("{root}/fixtures/cricbuzz/matches-v1-upcoming_2024-06-16.json")).unwrap();
    let mut page: Value = serde_json::from_str(&saved).unwrap();
    let mut template = None;
    for t in page["typeMatches"].as_array_mut().unwrap() {
        for s in t["seriesMatches"].as_array_mut().unwrap() {
            let Some(matches) = s.get_mut("seriesAdWrapper").and_then(|w| w.get_mut("matches")) else {
                continue;
            };
            let all = std::mem::take(matches.as_array_mut().unwrap());
            if let Some(m) = all.into_iter().find(|m| m["matchInfo"]["matchId"] == LISTING) {
                template = Some(m);
            }
        }
    }
    let template = template.expect("the saved page lists the template");
    let listings: Vec<Value> = (0..n)
        .map(|i| {
            let mut m = template.clone();
            let info = &mut m["matchInfo"];
            let word = side(i);
            info["matchId"] = (10_000_000 + i).into();
            info["team1"]["teamName"] = format!("{word} Hawks").into();
            info["team1"]["teamSName"] = format!("{}H", &word[..2].to_uppercase()).into();
            info["team2"]["teamName"] = format!("{word} Owls").into();
            info["team2"]["teamSName"] = format!("{}O", &word[..2].to_uppercase()).into();
            // One a minute from the saved start: one day holds 1,440 of them.
            info["startDate"] = (START_MS + i as i64 * 60_000).to_string().into();
            m
        })
        .collect();
    // Every listing in the first series of the page.
    let first = page["typeMatches"][0]["seriesMatches"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s.get("seriesAdWrapper").is_some())
        .unwrap();
    first["seriesAdWrapper"]["matches"] = Value::Array(listings);
    page.to_string()
}

/// This process's resident memory in KiB: (`VmRSS`, `VmHWM`). proc(5).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets the peak resident memory (`VmHWM`) to the current (proc(5), `clear_refs`).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

/// Every call the server counted, summed over commands (`INFO commandstats`; the `INFO`
/// itself left out).
async fn commands(conn: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(":calls=")?;
            (name != "info").then_some(())?;
            rest.split(',').next()?.parse::<u64>().ok()
        })
        .sum()
}

/// Runs `step`, measured: wall ms, commands, resident memory before and peak during (KiB).
async fn measured<F: std::future::Future<Output = T>, T>(
    conn: &mut redis::aio::MultiplexedConnection,
    step: F,
) -> (Value, T) {
    let before_cmds = commands(conn).await;
    let (rss_before, _) = memory_kib();
    reset_peak();
    let t = Instant::now();
    let out = step.await;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let (_, peak) = memory_kib();
    let cmds = commands(conn).await - before_cmds;
    (
        json!({"ms": ms, "commands": cmds, "rss_before_kib": rss_before, "peak_rss_kib": peak}),
        out,
    )
}

/// Gives channels `x001`… the records the bot's seed wrote for channel `x000` (its claims, its
/// identities and its first-start marker), each key copied under the other channel's prefix
/// with its TTL (`COPY`, Redis ≥ 6.2), in pipelines of 10,000: what seeding each channel
/// through the bot writes (every channel's records are its own keys), at some 1 µs a key
/// instead of two scripts' round trips a claim (10,000,000 claims: ~50 minutes through the bot,
/// measured at 1,000,000). The first measured cycle asserts that every channel holds every
/// match. `BENCH_SCALE_SEED=bot` seeds every channel through the bot instead.
async fn copy_channel(conn: &mut redis::aio::MultiplexedConnection, prefix: &str, channels: usize) {
    use redis::AsyncCommands;
    let from = format!("{prefix}ch:x000:");
    let mut keys: Vec<String> = Vec::new();
    {
        let options = redis::ScanOptions::default()
            .with_pattern(format!("{from}*"))
            .with_count(10_000);
        let mut scan = conn.scan_options::<String>(options).await.unwrap();
        while let Some(key) = scan.next_item().await {
            keys.push(key.unwrap());
        }
    }
    for i in 1..channels {
        let to = format!("{prefix}ch:x{i:03}:");
        for chunk in keys.chunks(10_000) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("COPY")
                    .arg(key)
                    .arg(format!("{to}{}", &key[from.len()..]))
                    .ignore();
            }
            let () = pipe.query_async(conn).await.unwrap();
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("usage: scale REDIS_URL N C [STEADY]");
    let n: usize = args.next().map_or(1_000, |s| s.parse().unwrap());
    let c: usize = args.next().map_or(1, |s| s.parse().unwrap());
    let steady_cycles: usize = args.next().map_or(5, |s| s.parse().unwrap());
    mock_x::run_beside(|mock| async move {
        let root = env!("CARGO_MANIFEST_DIR");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cricbuzz.json");
        std::fs::write(&file, page(root, n)).unwrap();
        let channels = dir.path().join("channels.toml");
        let toml: String = (0..c)
            .map(|i| {
                format!(
                    "[[channel]]\nname = \"x{i:03}\"\nsink = \"x\"\nbase_url = \"{}\"\n\n",
                    mock.base
                )
            })
            .collect();
        std::fs::write(&channels, toml).unwrap();
        // A channels file's X channels read their credentials from the environment.
        for (var, value) in [
            ("X_API_KEY", "k"),
            ("X_API_SECRET", "s"),
            ("X_ACCESS_TOKEN", "t"),
            ("X_ACCESS_TOKEN_SECRET", "ts"),
        ] {
            std::env::set_var(var, value);
        }
        let prefix = format!("bench:scale:{}:", uuid::Uuid::new_v4().simple());
        let argv: Vec<String> = vec![
            "cricket-announcer".into(),
            format!("--redis-url={url}"),
            format!("--key-prefix={prefix}"),
            format!("--source=cricbuzz-json={}", file.display()),
            format!("--channels={}", channels.display()),
            format!("--template-path={root}/templates/announce.txt"),
            format!("--x-api-base-url={}", mock.base),
            "--posts-per-minute=1000000".into(),
            "--posts-per-day=1000000".into(),
            "--max-posts-per-cycle=1000000".into(),
            // A page of 100,000 listings is some 150 MB of JSON.
            "--fetch-max-bytes=1000000000".into(),
            "run".into(),
        ];
        let cli = Cli::try_parse_from(argv).unwrap();
        let config = Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::Posting)).unwrap();
        let out: cricket_announcer::announcer::Output =
            std::sync::Arc::new(std::sync::Mutex::new(Box::new(std::io::sink())));
        let app = App::build(&config, out).await.unwrap();
        let mut conn = redis::Client::open(url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let t = Instant::now();
        let by_copy = c > 1 && std::env::var("BENCH_SCALE_SEED").map_or(true, |v| v != "bot");
        if by_copy {
            let seeded = app.seed(Some("x000")).await.unwrap();
            assert_eq!(seeded.seeded, n, "{seeded:?}");
            copy_channel(&mut conn, &prefix, c).await;
        } else {
            let seeded = app.seed(None).await.unwrap();
            assert_eq!(seeded.seeded, n * c, "{seeded:?}");
        }
        let seed_ms = t.elapsed().as_secs_f64() * 1e3;
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("slowlog-log-slower-than")
            .arg(1_000)
            .exec_async(&mut conn)
            .await
            .unwrap();
        redis::cmd("SLOWLOG").arg("RESET").exec_async(&mut conn).await.unwrap();
        let cancel = CancellationToken::new();
        let (first, summary) = measured(&mut conn, app.cycle(&cancel)).await;
        assert_eq!(summary.skipped, n * c, "{summary:?}");
        let mut steady = Vec::new();
        for _ in 0..steady_cycles {
            let (m, summary) = measured(&mut conn, app.cycle(&cancel)).await;
            assert_eq!(summary.skipped, n * c, "{summary:?}");
            steady.push(m);
        }
        std::fs::write(&file, page(root, n + 1)).unwrap();
        let (new_match, summary) = measured(&mut conn, app.cycle(&cancel)).await;
        assert_eq!((summary.posted, summary.skipped), (c, n * c), "{summary:?}");
        let (reconcile, decisions) = measured(&mut conn, app.reconcile()).await;
        let decisions = decisions.unwrap().len();
        let slowlog: Vec<Value> = redis::cmd("SLOWLOG")
            .arg("GET")
            .arg(10_000)
            .query_async::<redis::Value>(&mut conn)
            .await
            .map(|v| {
                // Each entry: [id, time, duration µs, [command args…], …].
                let redis::Value::Array(entries) = v else {
                    return Vec::new();
                };
                entries
                    .into_iter()
                    .filter_map(|e| {
                        let redis::Value::Array(fields) = e else { return None };
                        let us: i64 = redis::from_redis_value(fields.get(2)?.clone()).ok()?;
                        let cmd: Vec<String> = redis::from_redis_value(fields.get(3)?.clone()).unwrap_or_default();
                        Some(json!({"us": us, "command": cmd.first().cloned().unwrap_or_default()}))
                    })
                    .collect()
            })
            .unwrap();
        let slowest = slowlog.iter().max_by_key(|e| e["us"].as_i64().unwrap_or(0)).cloned();
        // The median steady cycle (by time).
        let mut by_ms = steady.clone();
        by_ms.sort_by(|a, b| a["ms"].as_f64().partial_cmp(&b["ms"].as_f64()).unwrap());
        let median = by_ms[by_ms.len() / 2].clone();
        let ratio = |m: &Value, field: &str| m[field].as_f64().unwrap() / median[field].as_f64().unwrap().max(1e-9);
        println!(
            "{}",
            json!({
                "matches": n,
                "channels": c,
                "sightings": n * c,
                "seed_ms": seed_ms,
                "seed": if by_copy { "copy" } else { "bot" },
                "first": first,
                "steady": median,
                "steady_all": steady,
                "new_match": new_match,
                "reconcile": reconcile,
                "reconcile_decisions": decisions,
                "time_vs_steady": {"first": ratio(&first, "ms"), "new_match": ratio(&new_match, "ms"), "reconcile": ratio(&reconcile, "ms")},
                "peak_rss_vs_steady": {"first": ratio(&first, "peak_rss_kib"), "new_match": ratio(&new_match, "peak_rss_kib"), "reconcile": ratio(&reconcile, "peak_rss_kib")},
                "slowlog_over_1ms": slowlog.len(),
                "slowest_command": slowest,
                "posts": mock.requests.load(std::sync::atomic::Ordering::SeqCst),
            })
        );
        // The bench's keys go with its Redis; a shared one is left to its owner's cleanup.
        drop(dir);
    });
}
