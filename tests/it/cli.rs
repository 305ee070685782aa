//! The binary, run as real processes against real Redis (or a shared SQLite file), a page
//! server and a mock X API on loopback.

use crate::helpers::{
    ensure_schema, fixture, keys, raw_postgres, raw_redis, root, schema_for, schema_url, unique_prefix, x_accepts,
};
use std::path::Path;
use std::process::Output;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The announceable matches of the Cricbuzz fixture: upcoming or live, teams known.
pub(crate) const CRICBUZZ_KEYS: [&str; 4] = [
    "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
    "2026-07-17_blaze-women-v-surrey-women_1st-semi-final",
    "2026-07-17_durham-women-v-hampshire-women_2nd-semi-final",
    "2026-07-17_galle-marvels-v-jaffna-kings_1st-match",
];

pub(crate) fn bot(dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("cricket-announcer"));
    // A clean environment: nothing from the developer's shell or .env leaks in.
    cmd.env_clear()
        .current_dir(dir)
        .env("TEMPLATE_PATH", root().join("templates/announce.txt"))
        .env("RUST_LOG", "info")
        .kill_on_drop(true);
    cmd
}

/// The whole number written in `text` right after `marker`, up to `end`.
pub(crate) fn number_after(text: &str, marker: &str, end: char) -> Option<u64> {
    text.split(marker).nth(1)?.split(end).next()?.parse().ok()
}

pub(crate) fn with_x(cmd: &mut tokio::process::Command, x: &MockServer) {
    cmd.env("X_API_BASE_URL", x.uri())
        .env("X_API_KEY", "k")
        .env("X_API_SECRET", "s")
        .env("X_ACCESS_TOKEN", "t")
        .env("X_ACCESS_TOKEN_SECRET", "ts");
}

pub(crate) async fn page_server() -> MockServer {
    let site = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/cricket-match/live-scores"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/html; charset=utf-8")
                .set_body_string(fixture("cricbuzz/live-scores_2026-07-17.html")),
        )
        .mount(&site)
        .await;
    site
}

pub(crate) fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub(crate) async fn redis_state(prefix: &str) -> Vec<(String, String, i64)> {
    let mut conn = raw_redis().await;
    let mut out = Vec::new();
    for k in keys(prefix).await.into_iter().filter(|k| k.contains(":match:")) {
        let raw: String = redis::cmd("GET").arg(&k).query_async(&mut conn).await.unwrap();
        let ttl: i64 = redis::cmd("TTL").arg(&k).query_async(&mut conn).await.unwrap();
        let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
        out.push((
            k.trim_start_matches(&format!("{prefix}match:")).to_string(),
            v["state"].as_str().unwrap().to_string(),
            ttl,
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_backfill_processes_on_one_redis_post_each_match_once() {
    let (site, x) = (page_server().await, MockServer::start().await);
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut children = Vec::new();
    for i in 0..3 {
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        cmd.env("REDIS_URL", crate::helpers::redis_url())
            .env("KEY_PREFIX", &prefix)
            .env("INSTANCE_ID", format!("replica-{i}"))
            .env("SOURCES", format!("{}/cricket-match/live-scores", site.uri()))
            .args(["backfill", "--init-store"]);
        children.push(start(&mut cmd));
    }
    let outputs = wait_all(children).await;
    for o in &outputs {
        assert!(o.status.success(), "{:?}", text(o));
    }
    x.verify().await;
    let state = redis_state(&prefix).await;
    let got: Vec<_> = state.iter().map(|(k, s, _)| (k.as_str(), s.as_str())).collect();
    assert_eq!(got, CRICBUZZ_KEYS.iter().map(|k| (*k, "posted")).collect::<Vec<_>>());
    let mut conn = raw_redis().await;
    let all = keys(&prefix).await;
    assert_eq!(
        all.len(),
        1 + 4 * 3,
        "the first-start marker, four claims, and the page id and fixture list of each: {all:?}"
    );
    for k in all {
        let ttl: i64 = redis::cmd("TTL").arg(&k).query_async(&mut conn).await.unwrap();
        assert!(ttl > 0, "{k} has TTL {ttl}: every key written must expire");
    }
    // Each process read the page and decided all four announceable matches: posted by it, or
    // skipped as another's; together they posted each once.
    let mut posted = 0;
    for o in &outputs {
        let stdout = text(o).0;
        let summary: Vec<&str> = stdout.lines().filter(|l| l.starts_with("backfill: ")).collect();
        let [line] = summary[..] else {
            panic!("one summary line expected: {stdout}")
        };
        let n = number_after(line, "; posted ", ',').unwrap_or_else(|| panic!("no posted count in {line:?}"));
        assert_eq!(
            line,
            format!(
                "backfill: sources read 1, failed 0; matches seen 9, not announceable 5; posted {n}, skipped {}, failed 0",
                4 - n
            )
        );
        posted += n;
    }
    assert_eq!(posted, 4, "each match posted by exactly one process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_backfill_processes_on_one_embedded_store_post_each_match_once() {
    let (site, x) = (page_server().await, MockServer::start().await);
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let mut children = Vec::new();
    for i in 0..3 {
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        cmd.env("STORE_PATH", &db)
            .env("INSTANCE_ID", format!("replica-{i}"))
            .env("SOURCES", format!("{}/cricket-match/live-scores", site.uri()))
            .args(["backfill", "--init-store"]);
        children.push(start(&mut cmd));
    }
    for o in wait_all(children).await {
        assert!(o.status.success(), "{:?}", text(&o));
    }
    x.verify().await;
    let mut cmd = bot(dir.path());
    let listed = cmd
        .env("STORE_PATH", &db)
        .args(["claims", "list", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<_> = rows
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["claim"]["state"].as_str().unwrap()))
        .collect();
    assert_eq!(got, CRICBUZZ_KEYS.iter().map(|k| (*k, "posted")).collect::<Vec<_>>());
    assert!(rows.iter().all(|r| r["ttl_secs"].as_u64().unwrap() > 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_sources_says_whether_postgres_holds_the_ledger_and_creates_none() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let schema = schema_for(&prefix);
    ensure_schema(&schema).await;
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let run = |url: String, args: &[&str]| {
        let mut cmd = bot(dir.path());
        cmd.env("DATABASE_URL", url)
            .env("KEY_PREFIX", &prefix)
            .env("SOURCES", &page)
            .args(args);
        cmd.output()
    };
    let store_line = |o: &std::process::Output| text(o).0.lines().last().unwrap_or_default().to_string();
    let tables = || async {
        let db = raw_postgres(&schema).await;
        let row = db
            .query_one(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
                &[&schema],
            )
            .await
            .unwrap();
        row.get::<_, i64>(0)
    };

    let o = run(schema_url(&schema), &["check-sources"]).await.unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let line = store_line(&o);
    assert!(line.starts_with("store postgres: ok (connected (postgres "), "{line}");
    assert!(
        line.ends_with(&format!(
            "no claims ledger yet in schema {schema}: `seed` or `run --init-store` makes it)"
        )),
        "{line}"
    );
    assert_eq!(tables().await, 0, "checking creates nothing");
    // For scripts: whether the store is fit, beside the sentence.
    let o = run(schema_url(&schema), &["check-sources", "--json"]).await.unwrap();
    let store: serde_json::Value = serde_json::from_str(text(&o).0.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&store["store"], &store["ok"]),
        (&"postgres".into(), &true.into()),
        "{store}"
    );

    let o = run(schema_url(&schema), &["seed"]).await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(schema_url(&schema), &["check-sources"]).await.unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(
        store_line(&o).starts_with("store postgres: ok (claims ledger found (postgres "),
        "{}",
        store_line(&o)
    );

    // Nothing listens there: an error, and the check fails.
    let o = run("postgres://postgres@127.0.0.1:1/test".into(), &["check-sources"])
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    assert!(
        store_line(&o).starts_with("store postgres: ERROR: "),
        "{}",
        store_line(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_backfill_processes_on_one_postgres_ledger_post_each_match_once() {
    let (site, x) = (page_server().await, MockServer::start().await);
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let schema = schema_for(&prefix);
    ensure_schema(&schema).await;
    let mut children = Vec::new();
    for i in 0..3 {
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        cmd.env("DATABASE_URL", schema_url(&schema))
            .env("KEY_PREFIX", &prefix)
            .env("INSTANCE_ID", format!("replica-{i}"))
            .env("SOURCES", format!("{}/cricket-match/live-scores", site.uri()))
            .args(["backfill", "--init-store"]);
        children.push(start(&mut cmd));
    }
    for o in wait_all(children).await {
        assert!(o.status.success(), "{:?}", text(&o));
    }
    x.verify().await;
    let listed = bot(dir.path())
        .env("DATABASE_URL", schema_url(&schema))
        .env("KEY_PREFIX", &prefix)
        .args(["claims", "list", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    let got: Vec<(String, String)> = crate::helpers::listed(&stdout);
    let expected: Vec<(String, String)> = CRICBUZZ_KEYS
        .iter()
        .map(|k| (k.to_string(), "posted".to_string()))
        .collect();
    assert_eq!(got, expected);
    let db = raw_postgres(&schema).await;
    let rows: Vec<(String, String, Option<String>)> = db
        .query("SELECT match_key, state, tweet_id FROM claims ORDER BY match_key", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let tweet = Some("1800000000000000001".to_string());
    assert_eq!(
        rows,
        CRICBUZZ_KEYS
            .iter()
            .map(|k| (k.to_string(), "posted".to_string(), tweet.clone()))
            .collect::<Vec<_>>(),
        "one row per match in the ledger"
    );
    let mut keys: Vec<String> = db
        .query("SELECT key FROM store_keys WHERE expires_at > now() ORDER BY key", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    keys.retain(|k| !k.starts_with(&format!("{prefix}id:")));
    assert_eq!(keys, vec![format!("{prefix}store:initialised")]);
    let identities: i64 = db
        .query_one("SELECT count(*) FROM store_keys WHERE key LIKE '%:id:%'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(identities, 4 * 2, "each claim's page id and fixture list, once");
}

#[tokio::test]
async fn redis_url_and_database_url_together_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .env("REDIS_URL", "redis://:hunter2-redis@127.0.0.1:6379/")
        .env("DATABASE_URL", "postgres://bot:hunter2-pg@127.0.0.1:5432/test")
        .args(["--dry-run", "backfill", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(
        stderr.contains("REDIS_URL and DATABASE_URL are both set: choose one claim store"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2") && !stdout.contains("hunter2"), "{stderr}");
}

#[tokio::test]
async fn a_database_url_that_is_not_postgres_names_the_variable_and_hides_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .env("DATABASE_URL", "mysql://bot:hunter2-my@127.0.0.1/test")
        .args(["--dry-run", "backfill", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(
        stderr.contains("invalid DATABASE_URL=\"(hidden)\": expected postgres:// or postgresql://"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    // An sslmode libpq does not know is a bad setting too (exit 2), before anything connects.
    for args in [&["check-sources"][..], &["claims", "list"], &["--dry-run", "backfill"]] {
        let o = bot(dir.path())
            .env(
                "DATABASE_URL",
                "postgres://bot:hunter2-pg@127.0.0.1:1/test?sslmode=bogus",
            )
            .env("SOURCES", "x.html")
            .args(args)
            .output()
            .await
            .unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end().lines().last(),
            Some("error: invalid DATABASE_URL=\"(hidden)\": sslmode=\"bogus\" is not one of disable, prefer, require, verify-ca, verify-full"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_writes_nothing_and_a_real_backfill_afterwards_posts_every_match_once() {
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let mut dry = bot(dir.path());
    dry.env("REDIS_URL", crate::helpers::redis_url())
        .env("KEY_PREFIX", &prefix);
    let o = dry
        .arg("--dry-run")
        .arg("backfill")
        .arg("--source")
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        stdout.matches("\n--- ").count() + usize::from(stdout.starts_with("--- ")),
        4,
        "{stdout}"
    );
    assert!(stdout.contains(
        "--- 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i (cricbuzz:158062; weighted length 157/280)\n\
         Coming up: Zimbabwe v Bangladesh, 2nd T20I\n"
    ));
    assert!(!stdout.contains("TBC"), "a TBC match is never announced");
    assert!(stdout.contains("backfill: sources read 1, failed 0; matches seen 9, not announceable 5; would post 4"));
    assert!(keys(&prefix).await.is_empty(), "dry run wrote to Redis");
    assert_eq!(x.received_requests().await.unwrap().len(), 0);

    let mut real = bot(dir.path());
    with_x(&mut real, &x);
    real.env("REDIS_URL", crate::helpers::redis_url())
        .env("KEY_PREFIX", &prefix);
    let o = real
        .args(["backfill", "--init-store", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    x.verify().await;
    assert_eq!(redis_state(&prefix).await.len(), 4);
}

#[tokio::test]
async fn dry_run_json_prints_one_object_per_post() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let mut cmd = bot(dir.path());
    let o = cmd
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["--dry-run", "--json", "backfill", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5, "four posts and a summary: {stdout}");
    // Soonest first: the first semi-final at 10:00 UTC, then Zimbabwe v Bangladesh at 10:30.
    assert_eq!(
        lines[0]["match_key"],
        "2026-07-17_blaze-women-v-surrey-women_1st-semi-final"
    );
    assert_eq!(lines[1]["match_key"], "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i");
    assert!(!dir.path().join("s.db").exists(), "a dry run creates no store file");
    assert_eq!(lines[1]["weighted_length"], 157);
    assert_eq!(lines[4]["summary"]["posted"], 4);
    assert_eq!(
        lines[4]["dry_run"], true,
        "the summary says its posts were only printed"
    );
}

#[tokio::test]
async fn a_broken_source_is_an_error_naming_it_and_the_other_sources_still_run() {
    let (site, x) = (MockServer::start().await, MockServer::start().await);
    Mock::given(method("GET"))
        .and(path("/redesigned"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html><body>New look!</body></html>"))
        .mount(&site)
        .await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let broken = format!("cricbuzz={}/redesigned", site.uri());
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let o = cmd
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["backfill", "--init-store"])
        .arg("--source")
        .arg(&broken)
        .arg("--source")
        .arg(&good)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(&broken) && stderr.contains("layout not recognised"),
        "{stderr}"
    );
    assert!(stdout.contains("sources read 1, failed 1"), "{stdout}");
    x.verify().await;
}

#[tokio::test]
async fn an_empty_page_is_an_error_naming_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.html");
    std::fs::write(&empty, "").unwrap();
    let o = bot(dir.path())
        .args(["--dry-run", "backfill", "--source"])
        .arg(&empty)
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr.contains("empty.html") && stderr.contains("the page is empty"),
        "{stderr}"
    );
}

#[tokio::test]
async fn missing_x_credentials_outside_dry_run_name_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .args(["backfill", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("X_API_KEY is not set"), "{stderr}");
}

#[tokio::test]
async fn a_malformed_setting_names_the_variable_and_secrets_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .env("POLL_INTERVAL_SECS", "five")
        .env("X_API_SECRET", "hunter2-secret")
        .args(["--dry-run", "backfill", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("invalid POLL_INTERVAL_SECS=\"five\""), "{stderr}");
    assert!(!stderr.contains("hunter2") && !stdout.contains("hunter2"));
    let o = bot(dir.path())
        .env("CLAIM_TTL_SECS", "600")
        .args(["--dry-run", "backfill", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    assert!(
        text(&o)
            .1
            .contains("invalid CLAIM_TTL_SECS=\"600\": must be at least 86400 seconds"),
        "{:?}",
        text(&o)
    );
}

#[tokio::test]
async fn a_malformed_env_file_is_an_error_not_a_silent_default() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "SOURCES='unterminated\n").unwrap();
    let o = bot(dir.path()).args(["--dry-run", "backfill"]).output().await.unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(".env"), "{stderr}");

    // A quote left open is named by the line that opened it, and a stray quote by its line.
    for (env, line) in [
        (
            "RUST_LOG=info\nX_API_SECRET=\"abc\nPOLL_INTERVAL_SECS=60\n",
            "line 2 (X_API_SECRET)",
        ),
        ("RUST_LOG=info\nLOG_FORMAT=text\nX_API_KEY=a\"b\n", "line 3 (X_API_KEY)"),
    ] {
        std::fs::write(dir.path().join(".env"), env).unwrap();
        let o = bot(dir.path()).args(["--dry-run", "backfill"]).output().await.unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{line} cannot be parsed")),
            "{env:?}: {stderr}"
        );
        assert!(!stderr.contains("abc") && !stderr.contains("a\"b"), "{stderr}");
    }

    // A line with no readable variable name is named by its number alone.
    std::fs::write(dir.path().join(".env"), "RUST_LOG=info\nstray words\n").unwrap();
    let o = bot(dir.path()).args(["--dry-run", "backfill"]).output().await.unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "error: cannot read .env: line 2 cannot be parsed (check its quotes; values with spaces need quotes)"
    );
}

/// Runs one successful `backfill --init-store` of `page` into the embedded store `db`.
/// Its owner name is longer than a `claims list` column would be by default.
async fn backfill_into(dir: &Path, db: &Path, page: &Path, x: &MockServer) {
    let mut cmd = bot(dir);
    with_x(&mut cmd, x);
    let o = cmd
        .env("STORE_PATH", db)
        .env("INSTANCE_ID", "announcer-1.cricket-desk.example.org:4242")
        .args(["backfill", "--init-store", "--source"])
        .arg(page)
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
}

/// Waits for processes that were all started before the first is awaited.
pub(crate) async fn wait_all(children: Vec<tokio::process::Child>) -> Vec<Output> {
    let mut out = Vec::new();
    for c in children {
        out.push(c.wait_with_output().await.unwrap());
    }
    out
}

/// Starts `cmd` now, capturing its output.
pub(crate) fn start(cmd: &mut tokio::process::Command) -> tokio::process::Child {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_match_on_two_sites_is_announced_once_with_both_ids_as_aliases() {
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let espn = dir.path().join("espn.html");
    std::fs::write(&espn, crate::sources::espn_page_for_zim_v_ban()).unwrap();
    let cricbuzz = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let db = dir.path().join("s.db");
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let o = cmd
        .env("STORE_PATH", &db)
        .env("SOURCES", format!("{},{}", cricbuzz.display(), espn.display()))
        .args(["backfill", "--init-store"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("sources read 2, failed 0; matches seen 9"), "{stdout}");
    x.verify().await;
    let shown = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "show", "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i", "--json"])
        .output()
        .await
        .unwrap();
    let row: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        row["claim"]["aliases"],
        serde_json::json!([
            "cricbuzz:158062",
            "espncricinfo:1530442",
            "key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
            "fixture:2026-07-17_bangladesh-v-zimbabwe"
        ])
    );
    assert_eq!(row["state"], "posted");
}

#[tokio::test]
async fn check_sources_prints_each_source_with_its_status_and_first_matches() {
    let site = page_server().await;
    let dir = tempfile::tempdir().unwrap();
    let good = format!("{}/cricket-match/live-scores", site.uri());
    let broken = format!("{}/nothing-here", site.uri());
    let o = bot(dir.path())
        .env("SOURCES", format!("{good} {broken}"))
        .arg("check-sources")
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // A row per source, each followed by the first matches it lists, one a line; then the
    // store (the embedded one, whose file no command has made yet: checking makes none).
    assert_eq!(lines.len(), 6 + 1 + 1, "{stdout}");
    assert!(
        lines[7].starts_with("store embedded: ok (STORE_PATH=")
            && lines[7].ends_with(", not made yet: `seed` or `run` makes it)"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{stdout}");
    assert!(
        lines[1].starts_with(&good) && lines[1].ends_with(" 9  ok"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "  Zimbabwe v Bangladesh, 2nd T20I (upcoming)");
    // Each with its description: two matches of the same teams are told apart.
    assert_eq!(lines[4], "  Surrey Women v The Blaze Women, Semi Final 1 (upcoming)");
    assert!(
        lines[5].starts_with(&broken) && lines[5].ends_with(" 0  ERROR"),
        "{}",
        lines[5]
    );
    assert!(
        lines[6].starts_with("  source ") && lines[6].contains("404"),
        "{stdout}"
    );
}

#[tokio::test]
async fn claims_release_refuses_a_posted_claim_unless_forced() {
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    backfill_into(dir.path(), &db, &page, &x).await;
    let key = "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i";
    let refused = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "release", key])
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(3));
    assert!(
        text(&refused)
            .1
            .contains("refused: 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i is posted"),
        "{:?}",
        text(&refused)
    );
    let listed = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "list", "--state", "posted", "--wide"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        text(&listed).0.lines().count(),
        5,
        "a header and four posted claims: {}",
        text(&listed).0
    );
    // Every column starts where its heading does, however long the owner names.
    let (table, _) = text(&listed);
    let header = table.lines().next().unwrap();
    for heading in ["STATE", "OWNER", "SINCE (UTC)"] {
        let at = header.find(heading).unwrap();
        for row in table.lines().skip(1) {
            assert!(
                row[..at].ends_with(' ') && !row[at..].starts_with(' '),
                "{heading} at {at}:\n{table}"
            );
        }
    }
    let forced = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "release", key, "--force"])
        .output()
        .await
        .unwrap();
    assert!(forced.status.success());
    let (out, _) = text(&forced);
    assert!(
        out.starts_with("released 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i (was posted"),
        "{out}"
    );
    assert!(
        out.trim_end()
            .ends_with("; it was posted, and will be posted again if a source still lists it"),
        "{out}"
    );
    let listed = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "list", "--json"])
        .output()
        .await
        .unwrap();
    assert_eq!(text(&listed).0.lines().count(), 3);
}

#[tokio::test]
async fn bad_credentials_stop_posting_with_one_clear_error_and_a_failing_backfill() {
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"title": "Unauthorized", "detail": "Unauthorized", "status": 401})),
        )
        .expect(1)
        .mount(&x)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let o = cmd
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["backfill", "--init-store", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    // Posting halted: the bot refused to post from then on.
    assert_eq!(o.status.code(), Some(4), "{stdout}{stderr}");
    assert_eq!(stderr.matches("posting stops for this process").count(), 1, "{stderr}");
    assert!(stdout.contains("posted 0, skipped 0, failed 1"), "{stdout}");
    x.verify().await;
}

#[tokio::test]
async fn a_dry_run_on_an_existing_embedded_store_shows_skips_and_leaves_the_file_untouched() {
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    backfill_into(dir.path(), &db, &page, &x).await;
    let before = std::fs::read(&db).unwrap();
    let o = bot(dir.path())
        .env("STORE_PATH", &db)
        // Held matches are skipped at DEBUG: a line each every cycle would bury the news.
        .env("RUST_LOG", "debug")
        .args(["--dry-run", "backfill", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("would post 0, skipped 4"), "{stdout}");
    assert_eq!(stderr.matches("dry run: would skip").count(), 4, "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the store file is unchanged");
    x.verify().await;
}

#[tokio::test]
async fn a_dry_run_never_releases_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .args(["--dry-run", "claims", "release", "--force", "some-key"])
        .output()
        .await
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o)
            .1
            .contains("claims release deletes a claim by design; it has no dry run"),
        "{:?}",
        text(&o)
    );
}

#[tokio::test]
async fn an_api_key_never_shows_in_logs_or_errors_even_when_fetches_fail_and_retry() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let o = bot(dir.path())
        .env("CRICKETDATA_API_KEY", "SEKRITCD")
        .args(["check-sources", "--source"])
        .arg(format!("cricketdata=http://127.0.0.1:{port}/currentMatches"))
        // Credentials written into a source URL itself: userinfo, and a token parameter.
        .arg("--source")
        .arg(format!(
            "http://reader:PWSEKRIT@127.0.0.1:{port}/scores?token=TOKSEKRIT&page=2"
        ))
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr.contains("fetch failed; retrying"),
        "the retry path ran: {stderr}"
    );
    for secret in ["SEKRITCD", "PWSEKRIT", "TOKSEKRIT", "reader"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret}: {stdout}{stderr}"
        );
    }
    assert!(
        stdout.contains("apikey=REDACTED") && stdout.contains("could not connect"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "http://REDACTED@127.0.0.1:{port}/scores?token=REDACTED&page=2"
        )),
        "{stdout}"
    );
}

/// A `.env` in a parent folder gives its relative paths from its own folder, and the embedded
/// store is kept there: run from a subfolder, the bot uses the deployment's store and channels
/// file, not a second store of the subfolder's (a new user ran `seed` from `sub/` and got
/// `sub/mystore.db`).
#[tokio::test]
async fn a_parent_folders_env_gives_its_paths_from_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let seed = |env: &str| {
        std::fs::write(dir.path().join(".env"), env).unwrap();
        let mut cmd = bot(&sub);
        cmd.env("SOURCES", &page).arg("seed");
        cmd
    };
    let o = seed("STORE_PATH=mystore.db\n").output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(dir.path().join("mystore.db").is_file());
    assert!(!sub.join("mystore.db").exists() && !sub.join("cricket-announcer.db").exists());
    // No STORE_PATH: the default file, beside the .env too.
    let o = seed("RUST_LOG=info\n").output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(dir.path().join("cricket-announcer.db").is_file());
    assert!(!sub.join("cricket-announcer.db").exists());
    // The caller's own setting stays the caller's: relative to the working directory.
    let o = seed("STORE_PATH=mystore.db\n")
        .env("STORE_PATH", "own.db")
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(sub.join("own.db").is_file());
}

#[tokio::test]
async fn a_malformed_env_line_is_named_by_number_and_variable_without_its_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".env"),
        "RUST_LOG=info\nX_API_SECRET=s3cr3t value with spaces\n",
    )
    .unwrap();
    let o = bot(dir.path()).args(["--dry-run", "backfill"]).output().await.unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr.contains("line 2 (X_API_SECRET) cannot be parsed"), "{stderr}");
    assert!(!stderr.contains("s3cr3t"), "{stderr}");
}

#[tokio::test]
async fn out_of_range_settings_and_unusable_templates_are_refused_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let run = |env: (&'static str, String)| {
        let mut cmd = bot(dir.path());
        cmd.env(env.0, env.1)
            .args(["--dry-run", "backfill", "--source"])
            .arg(&page);
        cmd
    };
    let no_link = dir.path().join("no-link.txt");
    std::fs::write(&no_link, "Coming up: {{ title }}").unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let refused = [
        (
            ("POST_TIMEOUT_SECS", "18446744073709551615".to_string()),
            "invalid POST_TIMEOUT_SECS=\"18446744073709551615\": must be at most",
        ),
        (("STATES", String::new()), "invalid STATES=\"\": no state given"),
        (
            ("TEMPLATE_PATH", no_link.display().to_string()),
            "no-link.txt: it never uses {{ link }}",
        ),
        (
            ("TEMPLATE_PATH", empty.display().to_string()),
            "empty.txt: it renders to an empty post",
        ),
    ];
    for (setting, said) in refused {
        let o = run(setting.clone()).output().await.unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{setting:?}: {stderr}");
        assert!(stderr.contains(said), "{setting:?}: {stderr}");
    }
}

/// A template error is one readable line on stderr (minijinja's own report spans several lines,
/// which showed as literal `\n`), naming the template, its line and the text at fault: for
/// `TEMPLATE_PATH` and for a channel's inline template alike.
#[tokio::test]
async fn a_template_error_is_one_line_naming_the_template_line_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "Coming up: {{ title }}\n{{ venu }}\n{{ link }}\n").unwrap();
    let o = bot(dir.path())
        .env("TEMPLATE_PATH", &bad)
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["--dry-run", "backfill", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        error,
        [format!(
            "error: TEMPLATE_PATH: template {0}: undefined value: `venu` is undefined (in {0}:2) near \"venu\"",
            bad.display()
        )],
        "{stderr}"
    );
    assert!(!stderr.contains("\\n"), "{stderr}");

    let channels = dir.path().join("channels.toml");
    std::fs::write(
        &channels,
        "[[channel]]\nname = \"club\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\ntemplate = \"{{ title }\\n{{ link }}\"\n",
    )
    .unwrap();
    let o = bot(dir.path())
        .env("CHANNELS_FILE", &channels)
        .env("STORE_PATH", dir.path().join("s.db"))
        .args(["--dry-run", "backfill", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    let inline = channels.join("#club").display().to_string();
    assert_eq!(
        error,
        [format!(
            "error: channel club in CHANNELS_FILE: template {inline}: syntax error: unexpected `}}`, expected end of \
             variable block (in {inline}:1) near \"}}\""
        )],
        "{stderr}"
    );
    assert!(!stderr.contains("\\n"), "{stderr}");
}

/// `cricket-announcer … 2>&1 | head -1`: once the reader has gone, writing the posts, the log
/// lines and the summary fails with a broken pipe. The run ends as the README says a backfill
/// ends (exit 0: every source was read and the store answered; the unwritten posts count as
/// failed), never with a panic (exit 101), which `println!`, `eprintln!` and tracing's own
/// fallback report of a failed log write each caused.
#[tokio::test]
async fn a_closed_stdout_and_stderr_end_the_run_as_documented_not_with_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("page.html"),
        fixture("cricbuzz/live-scores_2026-07-17.html"),
    )
    .unwrap();
    let mut child = bot(dir.path())
        .args(["--dry-run", "backfill", "--source", "page.html"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader leaves before the bot writes anything.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().await.unwrap();
    // The dry run had nowhere to show its posts: it did not complete.
    assert_eq!(status.code(), Some(1), "{status:?}");
}

/// A dry run whose output cannot be written stops at the first post and says so; it does not
/// report success with nothing shown.
#[tokio::test]
async fn a_dry_run_whose_output_cannot_be_written_stops_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("page.html"),
        fixture("cricbuzz/live-scores_2026-07-17.html"),
    )
    .unwrap();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    // Spawned, not `output()`: that would replace stdout with a pipe.
    let o = bot(dir.path())
        .args(["--dry-run", "backfill", "--source", "page.html"])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    // One post tried, then the stop, said once.
    assert_eq!(
        stderr
            .matches("the dry run's output cannot be written; stopping the dry run")
            .count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("match not announced"), "{stderr}");
    assert!(
        stderr.contains("cannot write dry-run output: No space left on device"),
        "{stderr}"
    );
}

/// A mistyped `STORE_PATH` must not read as "no claims": the claims commands refuse a store
/// file that does not exist, naming the path, and create nothing.
#[tokio::test]
async fn claims_commands_refuse_an_embedded_store_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.db");
    for args in [
        vec!["claims", "list"],
        vec!["claims", "show", "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i"],
    ] {
        let o = bot(dir.path())
            .env("STORE_PATH", &missing)
            .args(&args)
            .output()
            .await
            .unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "no embedded store at STORE_PATH={}: nothing was ever claimed there",
                missing.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(!missing.exists(), "{args:?} created the store");
    }
}

/// A value at a claim key that the bot did not write is shown for what it is: an unreadable
/// record with no time (not 1970), which `claims release` refuses to delete, saying why.
#[tokio::test]
async fn a_foreign_value_is_listed_without_a_time_and_never_released() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = crate::helpers::unique_prefix();
    let mut conn = crate::helpers::raw_redis().await;
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}match:2026-07-17_a-v-b_final"))
        .arg("just a string")
        .arg("EX")
        .arg(600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let run = |args: &[&str]| {
        let mut cmd = bot(dir.path());
        cmd.env("REDIS_URL", crate::helpers::redis_url())
            .env("KEY_PREFIX", &prefix)
            .args(args);
        cmd
    };
    let o = run(&["claims", "list", "--wide"]).output().await.unwrap();
    let (table, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let row = table.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cells[..5],
        ["2026-07-17_a-v-b_final", "unknown", "(unreadable", "record)", "-"],
        "{table}"
    );
    assert!(row.contains("not a claim record (not JSON)"), "{row}");
    let o = run(&["claims", "release", "2026-07-17_a-v-b_final", "--force"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("holds a value cricket-announcer did not write")
            && stderr.contains("DEL the key ending in match:2026-07-17_a-v-b_final"),
        "{stderr}"
    );
    let left: Option<String> = redis::cmd("GET")
        .arg(format!("{prefix}match:2026-07-17_a-v-b_final"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left.as_deref(), Some("just a string"));
}

/// "Stuck" is judged by the holder's own deadline, not the reader's `POST_TIMEOUT_SECS`: a bot
/// with a 90 s post timeout still posting after 60 s is not stuck to an operator shell running
/// with the default 30 s, so `claims release` refuses it (and says when it may), while a claim
/// past its owner's deadline is released.
#[tokio::test]
async fn claims_release_waits_for_the_holders_own_deadline_not_the_readers_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let now = chrono::Utc::now();
    let record = |claimed_secs_ago: i64, deadline_in_secs: i64| {
        let at = (now - chrono::Duration::seconds(claimed_secs_ago)).to_rfc3339();
        let deadline = (now + chrono::Duration::seconds(deadline_in_secs)).to_rfc3339();
        serde_json::json!({
            "state": "claimed", "owner": "slow-bot:1", "token": uuid::Uuid::new_v4().to_string(),
            "claimed_at": at, "updated_at": at, "deadline": deadline,
        })
        .to_string()
    };
    for (key, value) in [
        ("2026-07-17_a-v-b_1st-t20i", record(60, 45)),
        ("2026-07-17_a-v-b_2nd-t20i", record(200, -95)),
    ] {
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}match:{key}"))
            .arg(value)
            .arg("EX")
            .arg(3600)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let release = |key: &'static str| {
        let mut cmd = bot(dir.path());
        cmd.env("REDIS_URL", crate::helpers::redis_url())
            .env("KEY_PREFIX", &prefix)
            .env("POST_TIMEOUT_SECS", "30")
            .args(["claims", "release", key]);
        cmd
    };
    let o = release("2026-07-17_a-v-b_1st-t20i").output().await.unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("is claimed (owner slow-bot:1)"), "{stderr}");
    assert!(stderr.contains("its owner gives up at "), "{stderr}");
    let left = number_after(&stderr, "(in ", ' ').unwrap_or_else(|| panic!("says how long: {stderr}"));
    assert!((1..=45).contains(&left), "at most 45 s left: {stderr}");
    let o = release("2026-07-17_a-v-b_2nd-t20i").output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("released 2026-07-17_a-v-b_2nd-t20i (was stuck, owner slow-bot:1)"),
        "{stdout}"
    );
    let left = keys(&prefix).await;
    assert_eq!(left, vec![format!("{prefix}match:2026-07-17_a-v-b_1st-t20i")]);
    let _: () = redis::cmd("DEL").arg(&left[0]).query_async(&mut conn).await.unwrap();
}

/// The going-live steps as a new user takes them: `.env.example` copied to `.env` with only
/// the X credentials and `SOURCES` filled in; its blank lines (`REDIS_CA_FILE=`…) are unset.
#[tokio::test]
async fn a_dotenv_copied_from_the_example_with_its_blank_lines_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let example = std::fs::read_to_string(root().join(".env.example")).unwrap();
    let filled: String = example
        .lines()
        .map(|l| match l.split_once('=') {
            Some(("SOURCES", _)) => format!("SOURCES={}", page.display()),
            Some((k, _)) if k.starts_with("X_") && !k.contains("BASE_URL") => format!("{k}=value"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.path().join(".env"), filled).unwrap();
    let o = bot(dir.path())
        .env_remove("TEMPLATE_PATH")
        .arg("check-sources")
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
}
