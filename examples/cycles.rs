//! Memory: resident set of `cricket-announcer run` after many cycles with 20 sources.
//!
//! Runs the release binary itself (`target/release/cricket-announcer`, next to this example's
//! directory) as a child process: `run --init-store --cycles N` with 20 local-file sources
//! (copies of the saved pages in `fixtures/`, every parser represented), the given Redis under a
//! fresh key prefix, and a loopback X stand-in served from this process, logging JSON at
//! `info`. The poll interval is 200 ms (the hidden `POLL_INTERVAL_MS` knob): many hours of `run`
//! squeezed together, with the process idle between cycles as it is in production. Each time
//! the child logs `cycle done` for cycle 1, 100, 200, …, this example reads `VmRSS` (and its
//! anonymous and file-backed parts) from `/proc/<pid>/status`. The first cycles post (5 per
//! cycle, the default flood cap); after that every match is already claimed and each cycle
//! re-reads, re-parses and refreshes claims.
//!
//! With CHANNELS (issue 21: 20), the bot runs with a channels file of that many X channels, all
//! posting to the same stand-in: one claim per (match, channel), one batch read per cycle.
//!
//! Usage: `cargo build --release --bin cricket-announcer --example cycles`, then
//! `target/release/examples/cycles REDIS_URL [CYCLES] [CHANNELS]`. Prints one JSON object.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    unreachable_pub
)]

#[path = "support/mock_x.rs"]
mod mock_x;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Instant;

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
/// Milliseconds between cycle starts: longer than a cycle, so the process is idle (as between
/// real polls) when each sample is read.
const INTERVAL_MS: u64 = 200;

/// The process's resident memory in KiB: `VmRSS`, and its parts `RssAnon` (heap, stacks: what
/// the bot allocates) and `RssFile` (pages of the binary and shared libraries mapped in: the
/// kernel maps code around each page run, so this follows the binary's size more than its
/// work). `None` once the process has exited (a zombie has no `VmRSS`). proc(5).
fn rss_kib(pid: u32) -> Option<[u64; 3]> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some([field("VmRSS:")?, field("RssAnon:")?, field("RssFile:")?])
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let redis_url = args.next().expect("usage: cycles REDIS_URL [CYCLES]");
    let cycles: u64 = args.next().map(|s| s.parse().unwrap()).unwrap_or(1000);
    let channels: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(0);
    let root = env!("CARGO_MANIFEST_DIR");
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("cricket-announcer");
    assert!(
        bin.exists(),
        "build it first: cargo build --release --bin cricket-announcer"
    );

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
    let mut cmd = Command::new(&bin);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("REDIS_URL", &redis_url)
        .env("KEY_PREFIX", &prefix)
        .env("X_API_BASE_URL", mock.base.as_str())
        .env("X_API_KEY", "k")
        .env("X_API_SECRET", "s")
        .env("X_ACCESS_TOKEN", "t")
        .env("X_ACCESS_TOKEN_SECRET", "ts")
        .env("POLL_INTERVAL_MS", INTERVAL_MS.to_string())
        .env("POSTS_PER_MINUTE", "1000000")
        .env("POSTS_PER_DAY", "1000000")
        .env("TEMPLATE_PATH", format!("{root}/templates/announce.txt"))
        .env("LOG_FORMAT", "json")
        .env("RUST_LOG", "info");
    for s in &sources {
        cmd.arg("--source").arg(s);
    }
    if channels > 0 {
        let file = dir.path().join("channels.toml");
        let toml: String = (0..channels)
            .map(|c| {
                format!(
                    "[[channel]]\nname = \"x{c:02}\"\nsink = \"x\"\nbase_url = \"{}\"\n\n",
                    mock.base
                )
            })
            .collect();
        std::fs::write(&file, toml).unwrap();
        cmd.env("CHANNELS_FILE", &file);
    }
    // One cycle more than measured: the last sample is read while the process waits for its next
    // cycle, not while it exits (a process on its way out has no memory to read).
    cmd.args(["run", "--init-store", "--cycles", &(cycles + 1).to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let rss_at_start = rss_kib(pid).map(|[total, ..]| total);
    let stderr = child.stderr.take().unwrap();

    // The child's log is read on a thread of its own: reading it must never hold up the child.
    let samples = tokio::task::spawn_blocking(move || {
        let mut samples = Vec::new();
        let (mut first, mut last) = (None, None);
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap();
            let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let fields = &event["fields"];
            if fields["message"] != "cycle done" {
                continue;
            }
            let cycle = fields["cycle"].as_u64().unwrap();
            if cycle > cycles {
                continue;
            }
            let [rss, anon, file] = rss_kib(pid).expect("the child runs one cycle past the last sample");
            assert_eq!(fields["sources_failed"], 0, "{line}");
            if cycle == 1 || cycle % 100 == 0 {
                samples.push(serde_json::json!({
                    "cycle": cycle,
                    "vm_rss_kib": rss,
                    "rss_anon_kib": anon,
                    "rss_file_kib": file,
                }));
            }
            if cycle == 1 {
                first = Some(fields.clone());
            }
            last = Some(fields.clone());
        }
        (samples, first, last)
    });
    let (samples, first, last) = samples.await.unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "cricket-announcer run exited with {status}");
    let elapsed = t.elapsed();
    println!(
        "{}",
        serde_json::json!({
            "sources": SOURCES,
            "channels": channels,
            "cycles": cycles,
            "interval_ms": INTERVAL_MS,
            "ms_per_cycle_with_interval": elapsed.as_secs_f64() * 1e3 / (cycles + 1) as f64,
            "posts": mock.requests.load(std::sync::atomic::Ordering::SeqCst),
            "first_cycle": first,
            "last_cycle": last,
            "vm_rss_kib_at_start": rss_at_start,
            "samples": samples,
        })
    );
}
