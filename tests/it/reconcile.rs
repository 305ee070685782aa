//! `claims reconcile` against a stand-in for X on loopback that keeps what it is sent: a post
//! created and then timed out is found on the account's timeline and recorded `posted` with its
//! id; one that was never created stays `unknown`, with the time of the check; nothing is ever
//! posted twice.

use crate::cli::{bot, text, with_x};
use crate::helpers::{root, unique_prefix, Kind};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// The account's id on the stand-in.
const ACCOUNT: &str = "4242";

/// What the stand-in keeps: the posts it created (id, text as X stores it: links as t.co, `&`
/// escaped), and how many create requests it received.
#[derive(Default)]
struct Timeline {
    posts: Vec<(String, String, Vec<String>)>,
    creates: usize,
}

/// A stand-in for X: `POST /2/tweets` creates the post (when `create` says so for the n-th
/// request) and answers after `delay`; `GET /2/users/me` and `GET /2/users/:id/tweets` answer
/// as X documents, newest first, with each post's links expanded.
async fn x_keeping(delay: Duration, create: fn(usize) -> bool) -> (MockServer, Arc<Mutex<Timeline>>) {
    let server = MockServer::start().await;
    let timeline = Arc::new(Mutex::new(Timeline::default()));
    let kept = timeline.clone();
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(move |req: &Request| {
            let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
            let sent = body["text"].as_str().unwrap().to_string();
            let mut t = kept.lock().unwrap();
            t.creates += 1;
            let id = format!("18{:017}", t.creates);
            if create(t.creates) {
                // X rewrites every link to t.co and escapes `&`, `<`, `>` in `text`.
                let links: Vec<String> = sent
                    .split_whitespace()
                    .filter(|w| w.starts_with("http"))
                    .map(str::to_string)
                    .collect();
                let stored = sent
                    .split_whitespace()
                    .map(|w| {
                        if w.starts_with("http") {
                            "https://t.co/abc123"
                        } else {
                            w
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
                    .replace('&', "&amp;");
                t.posts.insert(0, (id.clone(), stored, links));
            }
            ResponseTemplate::new(201)
                .set_body_json(serde_json::json!({"data": {"id": id, "text": sent}}))
                .set_delay(delay)
        })
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/2/users/me"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"data": {"id": ACCOUNT, "name": "Cricket", "username": "cricket"}})),
        )
        .mount(&server)
        .await;
    let kept = timeline.clone();
    Mock::given(method("GET"))
        .and(path(format!("/2/users/{ACCOUNT}/tweets")))
        .respond_with(move |req: &Request| {
            let query: Vec<(String, String)> = req.url.query_pairs().into_owned().collect();
            assert!(query.iter().any(|(k, v)| k == "max_results" && v == "100"), "{query:?}");
            assert!(query.iter().any(|(k, _)| k == "start_time"), "{query:?}");
            let t = kept.lock().unwrap();
            let data: Vec<serde_json::Value> = t
                .posts
                .iter()
                .map(|(id, text, links)| {
                    let urls: Vec<serde_json::Value> = links
                        .iter()
                        .map(|l| serde_json::json!({"url": "https://t.co/abc123", "expanded_url": l}))
                        .collect();
                    serde_json::json!({"id": id, "text": text, "entities": {"urls": urls}})
                })
                .collect();
            if data.is_empty() {
                ResponseTemplate::new(200).set_body_json(serde_json::json!({"meta": {"result_count": 0}}))
            } else {
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"data": data, "meta": {"result_count": t.posts.len()}}))
            }
        })
        .mount(&server)
        .await;
    (server, timeline)
}

/// The bot with `REDIS_URL` and `prefix`, X at `x`, posts timing out after 1 s.
fn bot_on(dir: &std::path::Path, prefix: &str, x: &MockServer) -> tokio::process::Command {
    let mut cmd = bot(dir);
    with_x(&mut cmd, x);
    cmd.env("REDIS_URL", crate::helpers::redis_url())
        .env("KEY_PREFIX", prefix)
        .env("POST_TIMEOUT_SECS", "1")
        .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
        .env("MAX_POSTS_PER_CYCLE", "10");
    cmd
}

/// [`bot_on`] running `args`, to its end.
async fn run_on(dir: &std::path::Path, prefix: &str, x: &MockServer, args: &[&str]) -> std::process::Output {
    bot_on(dir, prefix, x).args(args).output().await.unwrap()
}

/// `claims list --json`: each claim's (state, tweet id, check).
async fn claims(dir: &std::path::Path, prefix: &str, x: &MockServer) -> Vec<serde_json::Value> {
    let o = run_on(dir, prefix, x, &["claims", "list", "--json"]).await;
    assert!(o.status.success(), "{:?}", text(&o));
    text(&o)
        .0
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["claim"].clone())
        .collect()
}

/// A first `backfill --init-store` whose posts all time out (exit 5): every claim `unknown`.
async fn backfill_timing_out(x: &MockServer) -> (tempfile::TempDir, crate::helpers::Prefix) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let o = run_on(dir.path(), &prefix, x, &["backfill", "--init-store"]).await;
    assert_eq!(o.status.code(), Some(5), "{:?}", text(&o));
    (dir, prefix)
}

fn states(claims: &[serde_json::Value]) -> Vec<&str> {
    let mut s: Vec<&str> = claims.iter().map(|c| c["state"].as_str().unwrap()).collect();
    s.sort();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_created_then_timed_out_are_found_and_recorded_posted_and_never_sent_again() {
    // Every post is created, and every answer comes after the bot gave up on it.
    let (x, timeline) = x_keeping(Duration::from_secs(3), |_| true).await;
    let (dir, prefix) = backfill_timing_out(&x).await;
    let before = claims(dir.path(), &prefix, &x).await;
    assert_eq!(states(&before), vec!["unknown"; 4]);
    assert!(before
        .iter()
        .all(|c| c["text"].as_str().is_some_and(|t| t.contains("cricbuzz.com"))));

    let o = run_on(dir.path(), &prefix, &x, &["claims", "reconcile"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(
        stdout.lines().filter(|l| l.contains("(unknown): posted: 18")).count(),
        4,
        "{stdout}"
    );

    let after = claims(dir.path(), &prefix, &x).await;
    assert_eq!(states(&after), vec!["posted"; 4], "before 4 unknown, after 0");
    let mut ids: Vec<&str> = after.iter().map(|c| c["post_id"].as_str().unwrap()).collect();
    ids.sort();
    let mut created: Vec<String> = timeline.lock().unwrap().posts.iter().map(|p| p.0.clone()).collect();
    created.sort();
    assert_eq!(ids, created, "each claim names the post made for it");
    assert!(after.iter().all(|c| c["detail"] == "found on X by claims reconcile"));

    // Reconciled, the matches are held: a later run posts nothing.
    let o = run_on(dir.path(), &prefix, &x, &["backfill"]).await;
    assert!(text(&o).0.contains("posted 0, skipped 4, failed 0"), "{:?}", text(&o));
    assert_eq!(timeline.lock().unwrap().creates, 4, "0 duplicates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_never_created_stays_unknown_with_the_time_and_result_of_the_check() {
    // The first two posts are created, the last two are lost; every answer times out.
    let (x, timeline) = x_keeping(Duration::from_secs(3), |n| n <= 2).await;
    let (dir, prefix) = backfill_timing_out(&x).await;
    let o = run_on(dir.path(), &prefix, &x, &["claims", "reconcile", "--json"]).await;
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let results: Vec<serde_json::Value> = text(&o).0.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |r: &str| results.iter().filter(|d| d["result"] == r).count();
    assert_eq!((count("posted"), count("not found")), (2, 2), "{results:?}");

    let after = claims(dir.path(), &prefix, &x).await;
    assert_eq!(states(&after), vec!["posted", "posted", "unknown", "unknown"]);
    for c in after.iter().filter(|c| c["state"] == "unknown") {
        assert!(c["checked_at"].as_str().is_some(), "{c}");
        assert!(
            c["check"]
                .as_str()
                .unwrap()
                .starts_with("not among the 2 posts on X since "),
            "{c}"
        );
    }
    // `claims list --state unknown` shows when each was checked and what was found.
    let o = run_on(
        dir.path(),
        &prefix,
        &x,
        &["claims", "list", "--state", "unknown", "--wide"],
    )
    .await;
    let (stdout, _) = text(&o);
    assert_eq!(stdout.matches("not among the 2 posts on X").count(), 2, "{stdout}");
    assert_eq!(timeline.lock().unwrap().creates, 4, "nothing was posted again");
}

#[tokio::test]
async fn reconcile_refuses_a_dry_run_and_an_unknown_channel() {
    let x = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    for (args, says) in [
        (vec!["--dry-run", "claims", "reconcile"], "it has no dry run"),
        (
            vec!["claims", "reconcile", "--channel", "mastodon"],
            "no channel \"mastodon\"",
        ),
    ] {
        let o = run_on(dir.path(), &prefix, &x, &args).await;
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reconciles_on_its_first_cycle() {
    let (x, timeline) = x_keeping(Duration::from_secs(3), |_| true).await;
    let (dir, prefix) = backfill_timing_out(&x).await;
    let o = run_on(dir.path(), &prefix, &x, &["run", "--cycles", "1"]).await;
    let (_, log) = text(&o);
    assert!(o.status.success(), "{log}");
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("reconciled: recorded as posted")
                && l.contains("how=found among the account's posts; nothing posted"))
            .count(),
        4,
        "{log}"
    );
    assert_eq!(states(&claims(dir.path(), &prefix, &x).await), vec!["posted"; 4]);
    assert_eq!(timeline.lock().unwrap().creates, 4);
}

crate::helpers::store_matrix!(only_one_reconciler_takes_a_claim_to_repeat_its_post);

/// Two reconcilers read the same `unknown` claim; one takes it to repeat its post (a new token,
/// a lease naming it), the other is refused and sees who has it; the claim's owner can no
/// longer record over it; the repeat's outcome, recorded, ends the lease.
async fn only_one_reconciler_takes_a_claim_to_repeat_its_post(kind: Kind) {
    use cricket_announcer::claim::{Adoption, Checked, ClaimState, MatchClaim, Transition, Window};
    use cricket_announcer::cricket::{Identities, Identity, MatchKey};
    const DAY: Duration = Duration::from_secs(86_400);
    let dir = tempfile::tempdir().unwrap();
    // The file `store_env` names, so the bot below reads the same embedded store.
    let file = dir.path().join("shared.db");
    let prefix = unique_prefix();
    let owner = crate::helpers::store(kind, &prefix, "worker-a", &file).await;
    let (one, two) = (
        crate::helpers::store(kind, &prefix, "reconciler-1", &file).await,
        crate::helpers::store(kind, &prefix, "reconciler-2", &file).await,
    );
    let key = MatchKey::parse("2026-07-17_a-v-b_2nd").unwrap();
    let ids = Identities::known_by(key.clone(), vec![crate::helpers::id("site:1"), Identity::of_key(&key)]);
    let MatchClaim::Won(token) = owner.claim_match(&ids, "A v B", DAY, DAY, false).await.unwrap() else {
        panic!("the first claim wins")
    };
    let timed_out = Transition::Unknown {
        reason: "no answer".into(),
    };
    assert!(matches!(
        owner.transition(&token, &timed_out).await.unwrap(),
        Checked::Applied(_)
    ));
    let read = one.peek(&key).await.unwrap().unwrap();
    assert_eq!((read.state, read.replay.as_ref()), (ClaimState::Unknown, None));

    let lease = Duration::from_secs(60);
    let Adoption::Adopted(taken) = one.adopt_for_replay(&key, &read, lease, Window::ANY).await.unwrap() else {
        panic!("the first reconciler takes it")
    };
    let replay = taken.claim().replay.clone().unwrap();
    assert_eq!(replay.by, "reconciler-1");
    assert!(replay.until > chrono::Utc::now() + chrono::Duration::seconds(50));
    // The second, with the record as it read it before: refused, and shown who has it.
    match two.adopt_for_replay(&key, &read, lease, Window::ANY).await.unwrap() {
        Adoption::Changed(now) => {
            assert_eq!(now.state, ClaimState::Unknown);
            assert_eq!(now.replay.map(|r| r.by).as_deref(), Some("reconciler-1"));
        }
        other => panic!("refused, not {other:?}"),
    }
    // An operator's listing says who repeats it, until when.
    let listed = bot(dir.path())
        .envs(crate::helpers::store_env(kind, &prefix, dir.path()).await)
        .env("KEY_PREFIX", &*prefix)
        .args(["claims", "list", "--wide"])
        .output()
        .await
        .unwrap();
    let row = text(&listed).0;
    assert!(
        row.contains(&format!(
            "being repeated by reconciler-1 until {}",
            replay.until.format("%Y-%m-%d %H:%M:%S")
        )),
        "{row}"
    );
    // The record as stored says the same to anyone who reads it.
    let stored = two.peek(&key).await.unwrap().unwrap();
    assert_eq!(stored.replay, Some(replay));
    assert_eq!(stored.owner, "worker-a", "the claim's owner is still named");
    // The owner's token is spent: it cannot record over the repeat.
    let posted = Transition::Posted {
        post_id: Some("9".into()),
        detail: None,
    };
    assert!(matches!(
        owner.transition(&token, &posted).await.unwrap(),
        Checked::NotOurs(_)
    ));
    // The repeat's outcome, recorded with the taken token, ends the lease.
    assert!(matches!(
        one.settle(&key, taken.claim(), &posted).await.unwrap(),
        Checked::Applied(_)
    ));
    let after = two.peek(&key).await.unwrap().unwrap();
    assert_eq!(
        (after.state, after.post_id.as_deref(), after.replay),
        (ClaimState::Posted, Some("9"), None)
    );
}
