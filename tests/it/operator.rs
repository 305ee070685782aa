//! A newcomer's first hour and an operator's months, run as real processes: the installed
//! binary from any directory, seed without credentials, the exit-code table, logs and help for
//! people, tables that fit, and the hardening of what the bot reads (`.env`, templates, store
//! records, PostgreSQL schemas).

use crate::cli::{bot, page_server, text, with_x};
use crate::helpers::{database_url, raw_postgres, raw_redis, redis_url, root, unique_prefix};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fixture_page() -> std::path::PathBuf {
    root().join("fixtures/cricbuzz/live-scores_2026-07-17.html")
}

/// `bot` as an installed binary runs it: no `TEMPLATE_PATH`, from a directory with no
/// `templates/`.
fn installed(dir: &std::path::Path) -> tokio::process::Command {
    let mut cmd = bot(dir);
    cmd.env_remove("TEMPLATE_PATH");
    cmd
}

/// Runs `cmd` with `args` and `--source` the fixture page: its exit code, stdout and stderr.
pub(crate) async fn on_fixture(cmd: &mut tokio::process::Command, args: &[&str]) -> (Option<i32>, String, String) {
    let o = cmd
        .args(args)
        .arg("--source")
        .arg(fixture_page())
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    (o.status.code(), stdout, stderr)
}

#[tokio::test]
async fn the_installed_binary_runs_from_any_directory_with_its_built_in_template() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = on_fixture(&mut installed(dir.path()), &["--dry-run", "backfill"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("--- 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i (cricbuzz:158062; weighted length 157/280)\nComing up: Zimbabwe v Bangladesh, 2nd T20I\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains(" template=(built-in templates/announce.txt) "),
        "{stderr}"
    );
}

#[tokio::test]
async fn seed_needs_no_x_credentials_and_its_dry_run_prints_what_it_would_record_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let seed = |dry: bool| {
        let mut cmd = installed(dir.path());
        cmd.env("STORE_PATH", &db);
        if dry {
            cmd.arg("--dry-run");
        }
        cmd.args(["seed", "--source"]).arg(fixture_page());
        cmd
    };
    let o = seed(true).output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.starts_with("would record 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i  Zimbabwe v Bangladesh, 2nd T20I\n"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some(
            "seed (dry run, nothing written): sources read 1, failed 0; matches seen 9, not announceable 1; \
             would record 8, already claimed 0; then it would mark the store initialised"
        )
    );
    assert!(!db.exists(), "a dry run created the store");
    let o = seed(false).output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        "seed: sources read 1, failed 0; matches seen 9, not announceable 1; posted 0, skipped 0, failed 0, seeded 8"
    );
    let o = seed(true).output().await.unwrap();
    assert!(
        text(&o)
            .0
            .contains("would record 0, already claimed 8; the store is already initialised"),
        "{:?}",
        text(&o)
    );
}

#[tokio::test]
async fn run_on_a_store_never_initialised_exits_4_at_once_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let x = MockServer::start().await;
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let started = Instant::now();
    // No --cycles: it must not idle until the next poll.
    let o = tokio::time::timeout(
        Duration::from_secs(30),
        cmd.env("STORE_PATH", dir.path().join("s.db"))
            .args(["run", "--source"])
            .arg(fixture_page())
            .output(),
    )
    .await
    .expect("run idled instead of exiting")
    .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        stderr.contains("stopped: this bot may not post; exiting reason=the store was never initialised; run `cricket-announcer seed`"),
        "{stderr}"
    );
}

/// README, exit codes: 5 is "a `backfill` (or `run --cycles N`) in which a post failed or its
/// outcome is unknown". A bounded run counts its failures over every cycle; the same run whose
/// posts all go out exits 0.
#[tokio::test]
async fn a_bounded_run_whose_post_ended_unknown_exits_5_and_one_whose_posts_went_out_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    for (status, store, expected) in [(504, "failing.db", 5), (201, "posting.db", 0)] {
        let x = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/2/tweets"))
            .respond_with(
                ResponseTemplate::new(status).set_body_json(serde_json::json!({"data": {"id": "1", "text": "t"}})),
            )
            .mount(&x)
            .await;
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        let (code, stdout, stderr) = on_fixture(
            cmd.env("STORE_PATH", dir.path().join(store))
                .env("MAX_POSTS_PER_CYCLE", "1")
                .env("POLL_INTERVAL_MS", "50"),
            &["run", "--init-store", "--cycles", "2"],
        )
        .await;
        assert_eq!(code, Some(expected), "X answering {status}: {stdout}{stderr}");
        let posts = x
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.method == wiremock::http::Method::POST)
            .count();
        // One post a cycle (the cap): the unknown one is not tried again, the next match is.
        assert_eq!(posts, 2, "X answering {status}: {stderr}");
    }
}

#[tokio::test]
async fn a_backfill_whose_post_ended_unknown_exits_5_and_a_dry_run_with_posts_too_long_too() {
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(ResponseTemplate::new(504))
        .mount(&x)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let (code, stdout, stderr) = on_fixture(
        cmd.env("STORE_PATH", dir.path().join("s.db"))
            .env("MAX_POSTS_PER_CYCLE", "1"),
        &["backfill", "--init-store"],
    )
    .await;
    assert_eq!(code, Some(5), "{stdout}{stderr}");
    assert!(stdout.contains("posted 0, skipped 0, failed 1"), "{stdout}");

    let long = dir.path().join("long.txt");
    std::fs::write(&long, format!("{}\n{{{{ link }}}}", "word ".repeat(60))).unwrap();
    let (code, stdout, stderr) =
        on_fixture(bot(dir.path()).env("TEMPLATE_PATH", &long), &["--dry-run", "backfill"]).await;
    assert_eq!(code, Some(5), "{stdout}{stderr}");
    assert!(stdout.contains("would post 0, skipped 0, failed 4"), "{stdout}");
}

#[tokio::test]
async fn a_bad_value_of_any_option_or_variable_exits_2_listing_the_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], (&str, &str), &str); 8] = [
        (
            &["claims", "list", "--state", "posed"],
            ("RUST_LOG", "info"),
            "invalid value 'posed' for '--state <STATE>'\n  [possible values: claimed, posted, unknown, failed, seeded, stuck]",
        ),
        (
            &["--dry-run", "backfill", "--source", "x.html"],
            ("FORMATS", "T20I, T20l"),
            "invalid value 'T20l' for '--formats <FORMATS>'\n  [possible values: test, odi, t20i, t20, first-class, list-a, hundred]",
        ),
        (
            &["--dry-run", "backfill", "--source", "x.html"],
            ("STATES", "upcomming"),
            "[possible values: upcoming, live, complete, abandoned, other]",
        ),
        (
            &["--dry-run", "backfill", "--source", "x.html"],
            ("SHORTENER", "tinyurl"),
            "[possible values: none, isgd, bitly]",
        ),
        (
            &["claims", "list"],
            ("RUST_LOG", "inf"),
            "\"inf\" is not a log level; expected one of trace, debug, info, warn, error, off",
        ),
        (
            &["claims", "list"],
            ("LOG_FORMAT", "xml"),
            "[possible values: text, json]",
        ),
        (
            &["claims", "show", "Bad Key"],
            ("RUST_LOG", "info"),
            "error: \"Bad Key\" is not a match key",
        ),
        (
            &["--dry-run", "backfill", "--source", "x.html"],
            ("POLL_INTERVAL_SECS", "five"),
            "error: invalid POLL_INTERVAL_SECS=\"five\": expected a whole number of seconds",
        ),
    ];
    for (args, (var, value), expected) in cases {
        let o = bot(dir.path()).env(var, value).args(args).output().await.unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{var}={value}: {stderr}");
        assert!(stderr.contains(expected), "{var}={value}: {stderr}");
    }
}

#[tokio::test]
async fn a_run_logs_one_startup_line_one_line_per_cycle_and_no_span_names() {
    let site = page_server().await;
    let x = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let source = format!("{}/cricket-match/live-scores?apikey=SEKRIT", site.uri());
    let o = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["seed", "--source", &source])
        .output()
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let o = cmd
        .env("STORE_PATH", &db)
        .env("POLL_INTERVAL_MS", "20")
        .args(["run", "--cycles", "3", "--source", &source])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let starting: Vec<&&str> = lines.iter().filter(|l| l.contains(" INFO starting ")).collect();
    assert_eq!(starting.len(), 1, "{stderr}");
    let expected = format!(
        "INFO starting version={} command=run store=embedded {} sources=\"{}/cricket-match/live-scores?apikey=REDACTED\" \
         template={} interval=20ms posting=live: posts to X announce_before=off timezone=UTC",
        env!("CARGO_PKG_VERSION"),
        db.display(),
        site.uri(),
        root().join("templates/announce.txt").display()
    );
    assert!(starting[0].ends_with(&expected), "{}\n{expected}", starting[0]);
    assert_eq!(
        lines.iter().filter(|l| l.contains(" INFO cycle done ")).count(),
        3,
        "{stderr}"
    );
    // The four held matches are skipped every cycle, at DEBUG: no line at INFO.
    assert!(!stderr.contains("skipped: match already claimed"), "{stderr}");
    assert!(!stderr.contains("SEKRIT") && !stderr.contains('{'), "{stderr}");
    assert_eq!(
        lines.len(),
        1 + 3 + 3,
        "startup, three cycles, the limit, the stop and the clean shutdown: {stderr}"
    );
}

#[tokio::test]
async fn each_command_help_lists_only_its_options_and_short_help_fits_a_screen() {
    let dir = tempfile::tempdir().unwrap();
    let help = |args: &'static [&'static str]| {
        let mut cmd = bot(dir.path());
        cmd.args(args);
        async move {
            let o = cmd.output().await.unwrap();
            assert_eq!(o.status.code(), Some(0), "{args:?}");
            text(&o).0
        }
    };
    let seed = help(&["seed", "--help"]).await;
    assert!(seed.contains("--dry-run") && seed.contains("--redis-url"), "{seed}");
    for absent in [
        "--shorten",
        "--x-api-key",
        "--template-path",
        "--poll-interval-secs",
        "--formats",
    ] {
        assert!(!seed.contains(absent), "seed --help shows {absent}");
    }
    let check = help(&["check-sources", "--help"]).await;
    assert!(!check.contains("--dry-run") && !check.contains("--x-api-key") && check.contains("--wide"));
    // It looks at whichever store is configured, and tells a lead time's wait by each
    // channel's filter and zone.
    for used in [
        "--redis-url",
        "--database-url",
        "--store-path",
        "--channels",
        "--timezone",
        "--series",
    ] {
        assert!(check.contains(used), "check-sources --help hides {used}: {check}");
    }
    // What reconciling does on each platform, read before running it: X only reads, Mastodon
    // and Bluesky repeat the create, Discord and Telegram are listed.
    let reconcile = help(&["claims", "reconcile", "--help"]).await;
    let says = reconcile
        .split("Usage:")
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let per_platform = [
        "X: searches the account's recent posts for the claim's post; found: posted, with its id; not found: the time of the check. Never posts.",
        "Mastodon and Bluesky: REPEAT the create under the post's own dedupe key",
        "(Bluesky: there already, or made now by the repeat; Mastodon cannot tell the two apart)",
        "Discord and Telegram: cannot be asked; their claims are listed for the operator.",
    ];
    let unsaid: Vec<&str> = per_platform.into_iter().filter(|p| !says.contains(p)).collect();
    assert!(unsaid.is_empty(), "{unsaid:?} not in {reconcile}");
    let list = help(&["claims", "list", "--help"]).await;
    assert!(!list.contains("--dry-run") && !list.contains("--shorten") && !list.contains("--sources"));
    for args in [&["run", "-h"][..], &["backfill", "-h"], &["-h"]] {
        let mut cmd = bot(dir.path());
        let short = text(&cmd.args(args).output().await.unwrap()).0;
        assert!(
            short.lines().count() <= 50,
            "{args:?} -h is {} lines",
            short.lines().count()
        );
    }
    let o = bot(dir.path())
        .args(["seed", "--shorten", "--dry-run", "--source", "x.html"])
        .output()
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("--shorten applies to a dry run of run or backfill only"));
}

#[tokio::test]
async fn no_secret_shows_in_help() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = [
        ("REDIS_URL", "redis://:PWREDIS@10.0.0.5:6379/0", "PWREDIS"),
        ("DATABASE_URL", "postgres://u:PWPG@db/x", "PWPG"),
        ("SOURCES", "https://u:PWSRC@example.com/s?apikey=KEYSRC", "KEYSRC"),
        ("X_API_BASE_URL", "https://u:PWX@api.x.com", "PWX"),
        ("X_API_KEY", "KEYX", "KEYX"),
        ("X_API_SECRET", "SECX", "SECX"),
        ("X_ACCESS_TOKEN", "TOKX", "TOKX"),
        ("X_ACCESS_TOKEN_SECRET", "TOKSECX", "TOKSECX"),
        ("SHORTENER_BASE_URL", "https://u:PWSH@short.example", "PWSH"),
        ("BITLY_TOKEN", "TOKBITLY", "TOKBITLY"),
        ("CRICBUZZ_API_KEY", "KEYCB", "KEYCB"),
        ("CRICKETDATA_API_KEY", "KEYCD", "KEYCD"),
    ];
    for args in [
        &["run", "--help"][..],
        &["backfill", "--help"],
        &["seed", "--help"],
        &["--help"],
    ] {
        let mut cmd = bot(dir.path());
        for (var, value, _) in secrets {
            cmd.env(var, value);
        }
        let (stdout, stderr) = text(&cmd.args(args).output().await.unwrap());
        assert!(stdout.contains("[env: SOURCES]") || args == ["--help"], "{stdout}");
        for (var, _, secret) in secrets {
            assert!(!stdout.contains(secret) && stderr.is_empty(), "{args:?} shows {var}");
        }
    }
}

#[tokio::test]
async fn claims_tables_fit_100_columns_escape_store_text_say_when_empty_and_end_quietly_on_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let now = chrono::Utc::now().to_rfc3339();
    let records = [
        ("2026-07-17_a-v-b_final", "o".repeat(64 * 1024)),
        ("2026-07-17_c-v-d_final", "evil\nINFO forged\u{1b}[2J".to_string()),
    ];
    for (key, owner) in &records {
        let record = serde_json::json!({
            "state": "posted", "owner": owner, "token": "t", "claimed_at": now, "updated_at": now,
            "tweet_id": "1800000000000000001", "detail": owner,
        });
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}match:{key}"))
            .arg(record.to_string())
            .arg("EX")
            .arg(600)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let run = |args: &[&str], prefix: &str| {
        let mut cmd = bot(dir.path());
        cmd.env("REDIS_URL", redis_url()).env("KEY_PREFIX", prefix).args(args);
        cmd
    };
    let o = run(&["claims", "list"], &prefix).output().await.unwrap();
    let (table, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    assert!(
        table.contains(r"evil\nINFO forge") && !table.contains('\u{1b}'),
        "{table}"
    );
    let o = run(&["claims", "show", "2026-07-17_a-v-b_final"], &prefix)
        .output()
        .await
        .unwrap();
    let (shown, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(shown.lines().nth(1).unwrap().contains("ooo…"), "{shown}");
    let o = run(&["claims", "show", "2026-07-17_a-v-b_final", "--wide"], &prefix)
        .output()
        .await
        .unwrap();
    assert!(text(&o).0.contains(&"o".repeat(64 * 1024)));
    // `claims list | head -0`: the reader is gone before anything is written.
    let mut child = run(&["claims", "list"], &prefix)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().await.unwrap();
    assert_eq!((o.status.code(), text(&o).1.as_str()), (Some(0), ""));
    let o = run(&["claims", "list", "--state", "stuck"], &prefix)
        .output()
        .await
        .unwrap();
    assert_eq!(
        text(&o).0,
        "no claims in state stuck (store redis redis://127.0.0.1:6379/)\n"
    );
    for (key, _) in &records {
        let _: () = redis::cmd("DEL")
            .arg(format!("{prefix}match:{key}"))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}

/// Two claims of one fixture: the default table shows each key whole (rows differ, and the
/// key pasted into `claims show` finds its claim) and a 19-digit post id whole; the owner is
/// what is cut.
#[tokio::test]
async fn claims_list_shows_keys_and_post_ids_whole_and_cuts_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let now = chrono::Utc::now().to_rfc3339();
    let keys = [
        "2024-06-16_australia-v-scotland_35th-match",
        "2024-06-16_australia-v-scotland_35th-match-reserve",
    ];
    let id = "1802345678901234567";
    for (key, tweet) in keys.iter().zip([Some(id), None]) {
        let record = serde_json::json!({
            "state": if tweet.is_some() { "posted" } else { "failed" },
            "owner": "worker-with-a-long-name:4242", "token": "t", "claimed_at": now,
            "updated_at": now, "tweet_id": tweet, "detail": "d".repeat(200),
        });
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}match:{key}"))
            .arg(record.to_string())
            .arg("EX")
            .arg(600)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let o = bot(dir.path())
        .env("REDIS_URL", redis_url())
        .env("KEY_PREFIX", &prefix)
        .args(["claims", "list"])
        .output()
        .await
        .unwrap();
    for key in keys {
        let _: () = redis::cmd("DEL")
            .arg(format!("{prefix}match:{key}"))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let (table, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for (row, key) in rows.iter().zip(keys) {
        assert_eq!(row.split_whitespace().next(), Some(key), "{table}");
        assert!(row.contains("worker-wi…") && !row.contains("worker-with"), "{table}");
    }
    assert!(rows[0].ends_with(&format!("  {id}")), "{table}");
    assert!(rows[1].contains("ddd…"), "{table}");
}

/// `--limit N` lists at most N claims, after `--state`; `--wide` and `--json`, global flags,
/// are accepted before `claims`, between `claims` and `list`, and after `list`.
#[tokio::test]
async fn claims_list_takes_a_limit_and_the_global_flags_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let now = chrono::Utc::now().to_rfc3339();
    let owner = "o".repeat(150);
    let states = [
        ("2026-07-17_a-v-b_final", "posted"),
        ("2026-07-17_c-v-d_final", "failed"),
        ("2026-07-17_e-v-f_final", "failed"),
    ];
    for (key, state) in states {
        let record = serde_json::json!({
            "state": state, "owner": owner, "token": "t", "claimed_at": now, "updated_at": now,
        });
        let _: () = redis::cmd("SET")
            .arg(format!("{prefix}match:{key}"))
            .arg(record.to_string())
            .arg("EX")
            .arg(600)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let mut outputs = Vec::new();
    for args in [
        &["claims", "list", "--limit", "1"][..],
        &["claims", "list", "--state", "failed", "--limit", "1"],
        &["claims", "list", "--limit", "5"],
        &["claims", "list", "--limit", "0"],
        &["--wide", "claims", "list"],
        &["claims", "--wide", "list"],
        &["claims", "list", "--wide"],
        &["--json", "claims", "list"],
        &["claims", "--json", "list"],
        &["claims", "list", "--json", "--limit", "2"],
    ] {
        let o = bot(dir.path())
            .env("REDIS_URL", redis_url())
            .env("KEY_PREFIX", &prefix)
            .args(args)
            .output()
            .await
            .unwrap();
        let (stdout, stderr) = text(&o);
        outputs.push((args, o.status.code(), stdout, stderr));
    }
    for (key, _) in states {
        let _: () = redis::cmd("DEL")
            .arg(format!("{prefix}match:{key}"))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let keys = |table: &str| -> Vec<String> {
        table
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let [limited, failed, five, zero, wide @ .., json_before, json_between, json_limited] = &outputs[..] else {
        unreachable!()
    };
    for (args, code, stdout, stderr) in &outputs {
        if args.contains(&"0") {
            continue;
        }
        assert_eq!(*code, Some(0), "{args:?}: {stdout}{stderr}");
    }
    assert_eq!(keys(&limited.2), ["2026-07-17_a-v-b_final"], "{}", limited.2);
    assert_eq!(keys(&failed.2), ["2026-07-17_c-v-d_final"], "{}", failed.2);
    assert_eq!(keys(&five.2).len(), 3, "{}", five.2);
    assert_eq!(zero.1, Some(2), "{}", zero.3);
    assert!(zero.3.contains("--limit"), "{}", zero.3);
    assert!(
        zero.3
            .contains("\"0\" is not a number of claims: write a whole number, at least 1"),
        "{}",
        zero.3
    );
    for (args, _, table, _) in wide {
        assert_eq!(keys(table).len(), 3, "{args:?}: {table}");
        assert!(table.lines().skip(1).all(|l| l.contains(&owner)), "{args:?}: {table}");
    }
    for (args, _, lines, _) in [json_before, json_between] {
        assert_eq!(lines.lines().count(), 3, "{args:?}: {lines}");
    }
    let listed: Vec<serde_json::Value> = json_limited
        .2
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let listed: Vec<&str> = listed.iter().map(|v| v["key"].as_str().unwrap()).collect();
    assert_eq!(listed, ["2026-07-17_a-v-b_final", "2026-07-17_c-v-d_final"]);
}

/// A command that writes creates the schema `search_path` names, then the ledger; the commands
/// that only read create nothing: a dry run reads every match as unclaimed, and `claims list`
/// refuses (a mistyped schema must not read as "no claims").
#[tokio::test]
async fn a_missing_postgres_schema_is_created_by_a_command_that_writes_and_by_no_reader() {
    let dir = tempfile::tempdir().unwrap();
    let schema = format!("t_new_{}", uuid::Uuid::new_v4().simple());
    let base = database_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
    let admin = raw_postgres("public").await;
    let tables = || async {
        admin
            .query_one(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('claims', 'store_keys')",
                &[&schema],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let list = bot(dir.path())
        .env("DATABASE_URL", &url)
        .args(["claims", "list"])
        .output()
        .await
        .unwrap();
    let dry = on_fixture(bot(dir.path()).env("DATABASE_URL", &url), &["--dry-run", "backfill"]).await;
    let before_seed = tables().await;
    let seed = on_fixture(bot(dir.path()).env("DATABASE_URL", &url), &["seed"]).await;
    let after_seed = tables().await;
    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await
        .unwrap();
    let (stdout, stderr) = text(&list);
    assert_eq!(list.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "postgres store error on finding the claims ledger: no claims ledger in the schema {schema} (nothing was ever claimed there)"
        )),
        "{stderr}"
    );
    assert_eq!(dry.0, Some(0), "{}{}", dry.1, dry.2);
    assert!(dry.1.contains("would post 4, skipped 0"), "{}", dry.1);
    assert_eq!(before_seed, 0, "a reader created the ledger");
    assert_eq!(seed.0, Some(0), "{}", seed.2);
    assert_eq!(after_seed, 2, "{}", seed.2);
}

#[tokio::test]
async fn a_dotenv_with_a_nul_byte_exits_2_naming_the_line_never_the_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), b"RUST_LOG=info\nX_API_KEY=abc\0SEKRIT\n").unwrap();
    let o = bot(dir.path()).args(["claims", "list"]).output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: cannot read .env: line 2 (X_API_KEY) contains a NUL byte; remove it\n"
    );
    assert!(!stdout.contains("SEKRIT"));
}

#[tokio::test]
async fn a_template_path_that_is_not_a_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, _, stderr) = on_fixture(
        bot(dir.path()).env("TEMPLATE_PATH", "/dev/zero"),
        &["--dry-run", "backfill"],
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.ends_with(
            "error: TEMPLATE_PATH: cannot use template /dev/zero: not a regular file; set TEMPLATE_PATH to a template file\n"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_run_whose_store_loses_its_data_exits_4_instead_of_idling() {
    let dir = tempfile::tempdir().unwrap();
    let x = MockServer::start().await;
    let prefix = unique_prefix();
    let store = |cmd: &mut tokio::process::Command| {
        cmd.env("REDIS_URL", redis_url()).env("KEY_PREFIX", &prefix);
    };
    let mut seed = bot(dir.path());
    store(&mut seed);
    assert_eq!(on_fixture(&mut seed, &["seed"]).await.0, Some(0));
    let mut run = bot(dir.path());
    store(&mut run);
    with_x(&mut run, &x);
    let mut child = run
        .env("POLL_INTERVAL_MS", "200")
        .args(["run", "--source"])
        .arg(fixture_page())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The log, read as it is written: the store is wiped only once the run has seen its marker
    // (after its first cycle), however slowly a loaded machine starts it; a fixed sleep could
    // wipe it before, and test a store that was never initialised instead.
    let (first_cycle, seen) = tokio::sync::oneshot::channel();
    let log = tokio::spawn({
        let stderr = child.stderr.take().unwrap();
        async move {
            use tokio::io::AsyncBufReadExt;
            let (mut lines, mut all, mut first_cycle) = (
                tokio::io::BufReader::new(stderr).lines(),
                String::new(),
                Some(first_cycle),
            );
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("cycle done") {
                    if let Some(tx) = first_cycle.take() {
                        let _ = tx.send(());
                    }
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        }
    });
    tokio::time::timeout(Duration::from_secs(20), seen)
        .await
        .expect("the run never finished a cycle")
        .unwrap();
    // The store loses everything, as a Redis restarted without persistence does.
    let mut conn = raw_redis().await;
    for key in crate::helpers::keys(&prefix).await {
        let _: () = redis::cmd("DEL").arg(key).query_async(&mut conn).await.unwrap();
    }
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("run idled on a wiped store")
        .unwrap();
    let stderr = log.await.unwrap();
    assert_eq!(status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("stopped: this bot may not post; exiting reason=the store lost its data"),
        "{stderr}"
    );
    assert!(
        crate::helpers::keys(&prefix).await.is_empty(),
        "nothing was claimed again"
    );
}

/// The store takes the claim, then stops answering while the post is out (writes paused for
/// longer than the store's response time-out): the post went out, its outcome could not be
/// recorded. The backfill says so and exits 1 ("a store that did not answer"), not 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_whose_post_outcome_the_store_did_not_take_exits_1() {
    let redis = crate::helpers::OwnRedis::start();
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(serde_json::json!({"data": {"id": "1", "text": "t"}}))
                .set_delay(Duration::from_secs(2)),
        )
        .mount(&x)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    let child = cmd
        .env("REDIS_URL", redis.url())
        .env("MAX_POSTS_PER_CYCLE", "1")
        .args(["backfill", "--init-store", "--source"])
        .arg(fixture_page())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the claim is written (X is then holding the post for 2 s), writes pause for 8 s.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let started = Instant::now();
    loop {
        let keys: Vec<String> = redis::cmd("KEYS").arg("*match:*").query_async(&mut conn).await.unwrap();
        if !keys.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no claim was written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(8000)
        .arg("WRITE")
        .query_async(&mut conn)
        .await
        .unwrap();
    let o = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the backfill never ended")
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("could not record the post's outcome: the store did not answer"),
        "{stderr}"
    );
    assert_eq!(x.received_requests().await.unwrap().len(), 1);
}
