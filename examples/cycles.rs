//! Memory: resident set of the bot after many cycles with 20 sources.
//!
//! Builds the `App` from configuration exactly as `run` does (flags through `Cli`, then
//! `Config::from_settings` and `App::build`), with 20 local-file sources (copies of the saved
//! pages in `fixtures/`, every parser represented), a dedicated Redis and a loopback X stand-in,
//! logging at `info` into a sink. Then calls `App::cycle` back to back (no poll interval: this
//! is many hours of `run` squeezed together) and samples `VmRSS` from `/proc/self/status` every
//! 100 cycles. The first cycles post (5 per cycle, the default flood cap); after that every
//! match is already claimed and each cycle re-reads, re-parses and refreshes claims.
//!
//! Usage: `cargo run --release --example cycles -- REDIS_URL [CYCLES]`. Prints one JSON object.

#[path = "support/mock_x.rs"]
mod mock_x;

use clap::Parser;
use cricket_announcer::announcer::Output;
use cricket_announcer::app::App;
use cricket_announcer::cli::Cli;
use cricket_announcer::config::{Config, Needs};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// (kind, fixture): every parser, cycled to make 20 sources.
const PAGES: &[(&str, &str)] = &[
    ("cricbuzz", "cricbuzz/live-scores_2026-07-17.html"),
    (
        "espncricinfo",
        "espncricinfo/series-match-results_ipl-2022_2022-07-27.html",
    ),
    (
        "espncricinfo",
        "espncricinfo/match-page_1478914_2026-02-21_rendered.html",
    ),
    ("cricbuzz-json", "cricbuzz/matches-v1-live_2024-06-16.json"),
    ("cricbuzz-json", "cricbuzz/matches-v1-upcoming_2024-06-16.json"),
    ("espn-rss", "espncricinfo/rss-livescores_2019-01-31.xml"),
    ("cricketdata", "cricketdata/current-matches_2026-05-18.json"),
    (
        "css:cricbuzz-2018",
        "cricbuzz/old-layout_match-page_20082_2018-04-23.html",
    ),
    (
        "css:espncricinfo-2020",
        "espncricinfo/old-layout_match-page_1213062_2020-02-07.html",
    ),
];
const SOURCES: usize = 20;

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let redis_url = args.next().expect("usage: cycles REDIS_URL [CYCLES]");
    let cycles: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(1000);
    let root = env!("CARGO_MANIFEST_DIR");
    let rss_at_start = vm_rss_kib();

    let _logs =
        tracing::subscriber::set_default(cricket_announcer::telemetry::subscriber("info", std::io::sink, false));
    let dir = tempfile::tempdir().unwrap();
    let mut sources = Vec::new();
    for i in 0..SOURCES {
        let (kind, file) = PAGES[i % PAGES.len()];
        let ext = file.rsplit('.').next().unwrap();
        let copy = dir.path().join(format!("source-{i:02}.{ext}"));
        std::fs::copy(format!("{root}/fixtures/{file}"), &copy).unwrap();
        sources.push(format!("{kind}={}", copy.display()));
    }
    let mock = mock_x::start().await;
    let prefix = format!("bench:cycles:{}:", uuid::Uuid::new_v4().simple());
    let mut argv: Vec<String> = [
        "cricket-announcer",
        "--redis-url",
        &redis_url,
        "--key-prefix",
        &prefix,
        "--x-api-base-url",
        mock.base.as_str(),
        "--x-api-key",
        "k",
        "--x-api-secret",
        "s",
        "--x-access-token",
        "t",
        "--x-access-token-secret",
        "ts",
        "--poll-interval-secs",
        "1",
        "--posts-per-minute",
        "1000000",
        "--posts-per-day",
        "1000000",
        "--template-path",
        &format!("{root}/templates/announce.txt"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in &sources {
        argv.extend(["--source".to_string(), s.clone()]);
    }
    argv.push("run".into());
    let cli = Cli::try_parse_from(argv).unwrap();
    let config = Config::from_settings(&cli.settings, &cli.source, Needs::Posting, false, false, false).unwrap();
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::sink())));
    let app = App::build(&config, out).await.unwrap();
    app.init_store().await.unwrap();

    let cancel = CancellationToken::new();
    let mut samples = vec![serde_json::json!({ "cycle": 0, "vm_rss_kib": vm_rss_kib() })];
    let mut first = None;
    let mut last = None;
    let t = Instant::now();
    for c in 1..=cycles {
        let summary = app.cycle(&cancel).await;
        assert_eq!(summary.sources_failed, 0, "{summary:?}");
        if c == 1 {
            first = Some(summary.line(false));
        }
        last = Some(summary.line(false));
        if c % 100 == 0 {
            samples.push(serde_json::json!({ "cycle": c, "vm_rss_kib": vm_rss_kib() }));
        }
    }
    let elapsed = t.elapsed();
    println!(
        "{}",
        serde_json::json!({
            "sources": SOURCES,
            "cycles": cycles,
            "ms_per_cycle": elapsed.as_secs_f64() * 1e3 / cycles as f64,
            "posts": mock.requests.load(std::sync::atomic::Ordering::SeqCst),
            "first_cycle": first,
            "last_cycle": last,
            "vm_rss_kib_at_start": rss_at_start,
            "samples": samples,
        })
    );
}
