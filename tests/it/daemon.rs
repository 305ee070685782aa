//! `run` as a long-lived process: shutdown on signals, JSON logs, the metrics and health
//! endpoint, and several replicas on one Redis while the pages change under them.

use crate::cli::{bot, page_server, redis_state, with_x};
use crate::helpers::{fixture, free_port, redis_url, root, unique_prefix, OwnRedis};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Upper bound of every wait in these tests; they normally take well under it.
const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `check` every 50 ms until it is true; panics naming `what` after [`PATIENCE`].
pub(crate) async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "gave up waiting: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A running bot whose stderr goes to a file (a pipe nobody reads would fill and block it).
pub(crate) struct Running {
    child: tokio::process::Child,
    log: PathBuf,
}

impl Running {
    pub(crate) fn start(cmd: &mut tokio::process::Command, dir: &Path, name: &str) -> Running {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let child = cmd.stdout(Stdio::null()).stderr(file).spawn().unwrap();
        Running { child, log }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn signal(&self, signal: libc::c_int) {
        let pid = self.child.id().expect("the process is still running") as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
    }

    /// Waits for the exit; panics (with the log) if it takes longer than [`PATIENCE`].
    pub(crate) async fn exit_code(&mut self) -> Option<i32> {
        match tokio::time::timeout(PATIENCE, self.child.wait()).await {
            Ok(status) => status.unwrap().code(),
            Err(_) => panic!("the process did not exit; its log:\n{}", self.log()),
        }
    }
}

fn x_created() -> ResponseTemplate {
    ResponseTemplate::new(201).set_body_json(serde_json::json!({"data": {"id": "1800000000000000001", "text": "ok"}}))
}

/// The texts X received in `POST /2/tweets` bodies, with how often each came.
async fn posts_by_text(x: &MockServer) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for r in x.received_requests().await.unwrap_or_default() {
        if r.method == wiremock::http::Method::POST {
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            *counts.entry(body["text"].as_str().unwrap().to_string()).or_insert(0) += 1;
        }
    }
    counts
}

/// Settings every live `run` here shares: generous pace so only the claim decides.
fn live_run(dir: &Path, x: &MockServer, prefix: &str, redis: &str) -> tokio::process::Command {
    let mut cmd = bot(dir);
    with_x(&mut cmd, x);
    cmd.env("REDIS_URL", redis)
        .env("KEY_PREFIX", prefix)
        .env("POSTS_PER_MINUTE", "1000")
        .env("POSTS_PER_DAY", "100000")
        .env("MAX_POSTS_PER_CYCLE", "100");
    cmd
}

/// A live `command --init-store` (`run`, `backfill`) of the saved page on Redis, with `env`,
/// given `signal` while X holds its first post (X answers each `x_delay` late).
struct SignalledWhilePosting {
    bot: Running,
    x: MockServer,
    prefix: crate::helpers::Prefix,
    _dir: tempfile::TempDir,
    _site: MockServer,
}

impl SignalledWhilePosting {
    async fn start(
        command: &str,
        env: &[(&str, &str)],
        x_delay: Duration,
        signal: libc::c_int,
    ) -> SignalledWhilePosting {
        let site = page_server().await;
        let x = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/2/tweets"))
            .respond_with(x_created().set_delay(x_delay))
            .mount(&x)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let prefix = unique_prefix();
        let mut cmd = live_run(dir.path(), &x, &prefix, &redis_url());
        cmd.env("SOURCES", format!("{}/cricket-match/live-scores", site.uri()))
            .envs(env.iter().copied())
            .args([command, "--init-store"]);
        let bot = Running::start(&mut cmd, dir.path(), command);
        wait_until("X receives the first post", || async {
            !posts_by_text(&x).await.is_empty()
        })
        .await;
        bot.signal(signal);
        SignalledWhilePosting {
            bot,
            x,
            prefix,
            _dir: dir,
            _site: site,
        }
    }
}

/// `command` (`run`, `backfill`) gets `signal` while X holds its first post: the post in flight
/// finishes and is recorded, no later match is claimed, and the exit is 0.
async fn a_signal_lets_the_post_in_flight_finish_and_record_it(command: &str, signal: libc::c_int) {
    // X answers slowly, so the signal arrives while the first post is in flight.
    let mut signalled = SignalledWhilePosting::start(command, &[], Duration::from_secs(2), signal).await;
    assert_eq!(signalled.bot.exit_code().await, Some(0), "{}", signalled.bot.log());
    let state = redis_state(&signalled.prefix).await;
    let states: Vec<&str> = state.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(
        states,
        ["posted"],
        "the post in flight is recorded and no later match is claimed: {state:?}\n{}",
        signalled.bot.log()
    );
    assert_eq!(posts_by_text(&signalled.x).await.values().sum::<usize>(), 1);
    assert!(
        signalled
            .bot
            .log()
            .contains("signal received; finishing the current match, then stopping"),
        "{}",
        signalled.bot.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_post_in_flight_finish_and_record_it_then_exits_zero() {
    a_signal_lets_the_post_in_flight_finish_and_record_it("run", libc::SIGTERM).await;
}

/// `backfill` stops on SIGINT (Ctrl-C) as `run` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_backfill_lets_the_post_in_flight_finish_and_record_it_then_exits_zero() {
    a_signal_lets_the_post_in_flight_finish_and_record_it("backfill", libc::SIGINT).await;
}

/// A backfill whose post in flight outlasts `SHUTDOWN_GRACE_SECS` after SIGTERM exits 1, as
/// `run` does, leaving that claim `claimed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_backfill_past_the_grace_exits_one() {
    let mut signalled = SignalledWhilePosting::start(
        "backfill",
        &[("SHUTDOWN_GRACE_SECS", "1")],
        Duration::from_secs(10),
        libc::SIGTERM,
    )
    .await;
    assert_eq!(signalled.bot.exit_code().await, Some(1), "{}", signalled.bot.log());
    assert!(
        signalled.bot.log().contains("SHUTDOWN_GRACE_SECS ran out"),
        "{}",
        signalled.bot.log()
    );
    let state = redis_state(&signalled.prefix).await;
    let states: Vec<&str> = state.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(states, ["claimed"], "{state:?}");
}

#[tokio::test]
async fn with_log_format_json_every_log_line_on_stderr_is_a_json_object() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let o = bot(dir.path())
        .env("LOG_FORMAT", "json")
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["--dry-run", "run", "--cycles", "1", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let done = lines
        .iter()
        .find(|l| l["fields"]["message"] == "cycle done")
        .unwrap_or_else(|| panic!("no `cycle done` line: {stderr}"));
    assert_eq!(done["level"], "INFO");
    assert_eq!(done["fields"]["matches"], 9);
    assert_eq!(done["fields"]["posted"], 4, "dry run: would post 4");
}

/// The value of the sample `series` (name and labels, exactly as rendered) in a scrape.
pub(crate) fn sample(scrape: &str, series: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

pub(crate) async fn get(url: &str) -> Option<(u16, String)> {
    let r = cricket_announcer::http_client::builder()
        .build()
        .ok()?
        .get(url)
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.text().await.ok()?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_after_one_cycle_count_the_poll_the_matches_the_claims_and_the_posts() {
    let site = page_server().await;
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(x_created())
        .mount(&x)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let addr = format!("127.0.0.1:{}", free_port());
    let source = format!("{}/cricket-match/live-scores", site.uri());
    let mut cmd = live_run(dir.path(), &x, &prefix, &redis_url());
    cmd.env("SOURCES", &source)
        .env("METRICS_ADDR", &addr)
        .args(["run", "--init-store"]);
    let mut bot = Running::start(&mut cmd, dir.path(), "run");
    let metrics_url = format!("http://{addr}/metrics");

    // The default 300 s interval leaves the process after exactly one cycle for the test.
    wait_until("the first cycle shows in /metrics", || async {
        get(&metrics_url)
            .await
            .is_some_and(|(_, body)| sample(&body, "cricket_announcer_polls_total") == Some(1.0))
    })
    .await;
    let (_, scrape) = get(&metrics_url).await.unwrap();
    let read_series = format!("cricket_announcer_source_reads_total{{source=\"{source}\"}}");
    assert_eq!(
        sample(&scrape, "cricket_announcer_matches_seen_total"),
        Some(9.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, "cricket_announcer_claims_total{result=\"won\"}"),
        Some(4.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, "cricket_announcer_posts_total{outcome=\"posted\"}"),
        Some(4.0),
        "{scrape}"
    );
    assert_eq!(sample(&scrape, &read_series), Some(1.0), "{scrape}");
    assert_eq!(
        sample(&scrape, "cricket_announcer_cycle_duration_seconds_count"),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(
        get(&format!("http://{addr}/healthz")).await,
        Some((200, "ok\n".to_string()))
    );

    bot.signal(libc::SIGTERM);
    assert_eq!(bot.exit_code().await, Some(0), "{}", bot.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_200_then_503_once_the_store_goes_away() {
    let mut redis = OwnRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = bot(dir.path());
    cmd.env("REDIS_URL", redis.url())
        .env("KEY_PREFIX", unique_prefix())
        .env("METRICS_ADDR", &addr)
        .arg("--dry-run")
        .arg("run")
        .arg("--source")
        .arg(&page);
    let mut bot = Running::start(&mut cmd, dir.path(), "run");
    let health = format!("http://{addr}/healthz");

    wait_until("/healthz answers 200", || async {
        get(&health).await.is_some_and(|(status, _)| status == 200)
    })
    .await;
    redis.stop();
    wait_until("/healthz answers 503", || async {
        get(&health).await.is_some_and(|(status, _)| status == 503)
    })
    .await;
    let (_, body) = get(&health).await.unwrap();
    assert!(body.starts_with("unhealthy: store unreachable"), "{body}");

    bot.signal(libc::SIGTERM);
    assert_eq!(bot.exit_code().await, Some(0), "{}", bot.log());
}

/// The Cricbuzz JSON fixture cut down to the first `n` upcoming matches of its first series.
fn cricbuzz_json_with(n: usize) -> String {
    let mut page: serde_json::Value =
        serde_json::from_str(&fixture("cricbuzz/matches-v1-upcoming_2024-06-16.json")).unwrap();
    let types = page["typeMatches"].as_array_mut().unwrap();
    types.truncate(1);
    let series = types[0]["seriesMatches"].as_array_mut().unwrap();
    series.retain(|s| s.get("seriesAdWrapper").is_some());
    series.truncate(1);
    let matches = series[0]["seriesAdWrapper"]["matches"].as_array_mut().unwrap();
    // Upcoming, and both teams known: "B1 v West Indies" is not announced until B1 is.
    let slot =
        |m: &serde_json::Value, t: &str| ["B1", "D2"].contains(&m["matchInfo"][t]["teamName"].as_str().unwrap_or(""));
    matches.retain(|m| m["matchInfo"]["state"] == "Upcoming" && !slot(m, "team1") && !slot(m, "team2"));
    assert!(matches.len() >= n, "the fixture has {} upcoming matches", matches.len());
    matches.truncate(n);
    page.to_string()
}

async fn serve_page(site: &MockServer, body: String) {
    site.reset().await;
    Mock::given(method("GET"))
        .and(path("/matches"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/json")
                .set_body_string(body),
        )
        .mount(site)
        .await;
}

/// Every claim under `prefix`: (state, owner).
async fn claims(prefix: &str) -> Vec<(String, String)> {
    let mut conn = crate::helpers::raw_redis().await;
    let mut out = Vec::new();
    for k in crate::helpers::keys(prefix)
        .await
        .into_iter()
        .filter(|k| k.contains(":match:"))
    {
        let raw: String = redis::cmd("GET").arg(&k).query_async(&mut conn).await.unwrap();
        let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
        out.push((v["state"].as_str().unwrap().into(), v["owner"].as_str().unwrap().into()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_run_replicas_announce_matches_added_over_time_once_even_when_one_is_killed() {
    const FIRST: usize = 3;
    const LATER: usize = 8;
    let site = MockServer::start().await;
    serve_page(&site, cricbuzz_json_with(FIRST)).await;
    let x = MockServer::start().await;
    // A little latency so the kill can land while a post is in flight.
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(x_created().set_delay(Duration::from_millis(300)))
        .mount(&x)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut replicas = Vec::new();
    for i in 0..3 {
        let mut cmd = live_run(dir.path(), &x, &prefix, &redis_url());
        cmd.env("SOURCES", format!("cricbuzz-json={}/matches", site.uri()))
            .env("POLL_INTERVAL_SECS", "1")
            .env("FETCH_PER_HOST_PER_MINUTE", "600")
            .env("INSTANCE_ID", format!("replica-{i}"))
            .args(["run", "--init-store"]);
        replicas.push(Running::start(&mut cmd, dir.path(), &format!("replica-{i}")));
    }
    let logs = |replicas: &[Running]| replicas.iter().map(Running::log).collect::<Vec<_>>().join("\n");

    wait_until("the first page's matches are posted", || async {
        claims(&prefix).await.iter().filter(|(s, _)| s == "posted").count() == FIRST
    })
    .await;
    serve_page(&site, cricbuzz_json_with(LATER)).await;
    wait_until("a later match is claimed", || async {
        claims(&prefix).await.len() > FIRST
    })
    .await;
    replicas[0].signal(libc::SIGKILL);

    // Every later match ends posted, except at most the one the killed replica held.
    wait_until("every match is posted or held by the killed replica", || async {
        let c = claims(&prefix).await;
        c.len() == LATER && c.iter().all(|(s, owner)| s == "posted" || owner == "replica-0")
    })
    .await;
    let c = claims(&prefix).await;
    let lost: Vec<_> = c.iter().filter(|(s, _)| s != "posted").collect();
    assert!(
        lost.len() <= 1,
        "only the killed replica's in-flight match may be lost: {lost:?}"
    );
    assert!(lost.iter().all(|(s, _)| s == "claimed"), "{lost:?}");

    let posts = posts_by_text(&x).await;
    let twice: Vec<_> = posts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "posted more than once: {twice:?}\n{}",
        logs(&replicas)
    );
    assert!(posts.len() >= LATER - 1, "{posts:?}");

    for r in &mut replicas[1..] {
        r.signal(libc::SIGTERM);
        assert_eq!(r.exit_code().await, Some(0), "{}", r.log());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_503_when_no_source_has_been_read_for_the_allowed_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.html");
    std::fs::write(&empty, "").unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = bot(dir.path());
    cmd.env("STORE_PATH", dir.path().join("s.db"))
        .env("METRICS_ADDR", &addr)
        .env("POLL_INTERVAL_SECS", "1")
        .env("HEALTH_MAX_STALE_CYCLES", "1")
        .arg("--dry-run")
        .arg("run")
        .arg("--source")
        .arg(&empty);
    let mut bot = Running::start(&mut cmd, dir.path(), "run");
    let health = format!("http://{addr}/healthz");

    // The only source always fails, so once more than one interval has passed, it is stale.
    wait_until("/healthz answers 503", || async {
        get(&health).await.is_some_and(|(status, _)| status == 503)
    })
    .await;
    let (_, body) = get(&health).await.unwrap();
    assert!(body.starts_with("unhealthy: no source read for "), "{body}");
    assert!(body.contains("more than 1 poll intervals"), "{body}");

    bot.signal(libc::SIGTERM);
    assert_eq!(bot.exit_code().await, Some(0), "{}", bot.log());
}
