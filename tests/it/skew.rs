//! One clock for every replica (issue 35): a replica whose own clock is ten minutes off, ahead
//! or behind, neither takes a claim early nor repeats a Mastodon post outside its windows,
//! because every time a claim record carries is written by the store's clock and every
//! judgement of them is made by it (Redis `TIME` in the scripts, PostgreSQL
//! `clock_timestamp()`). A replica's clock is skewed by passing it a clock of its own
//! ([`Clock::ahead`], [`App::build_on`]); the embedded store, on one host, has only the host's
//! clock and is not run here.

use crate::helpers::{self, claim_key, raw_postgres, raw_redis, root, schema_for, unique_prefix, Buffer, Expect, Kind};
use chrono::TimeDelta;
use clap::Parser;
use cricket_announcer::app::App;
use cricket_announcer::claim::{Adoption, ClaimState, OperatorRelease, Window};
use cricket_announcer::cli::Cli;
use cricket_announcer::clock::Clock;
use cricket_announcer::config::{Config, Invocation, Needs};
use cricket_announcer::cricket::MatchKey;
use cricket_announcer::reconcile::Settled;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DAY: Duration = Duration::from_secs(86_400);

/// A replica's clock `minutes` off the real time.
fn skewed(minutes: i64) -> Clock {
    Clock::system().ahead(TimeDelta::minutes(minutes))
}

async fn a_claim_is_stuck_by_the_stores_clock_whatever_a_replicas_clock_reads(kind: Kind) {
    let prefix = unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.db");
    // The owner's clock runs ten minutes slow, the operator's ten minutes fast: by their own
    // clocks the owner's deadline (a minute after its claim) passed nine minutes ago.
    let owner = helpers::store(kind, &prefix, "owner", &file)
        .await
        .with_clock(skewed(-10));
    let operator = helpers::store(kind, &prefix, "operator", &file)
        .await
        .with_clock(skewed(10));
    let key = MatchKey::parse("2026-07-17_a-v-b").unwrap();
    let before = chrono::Utc::now();
    let _working = claim_key(&owner, &key, "A v B", DAY, Duration::from_secs(60))
        .await
        .won();
    let read = operator.peek(&key).await.unwrap().unwrap();
    // Written by the store's clock: now, not ten minutes ago.
    let drift = (read.claimed_at - before).num_seconds().abs();
    assert!(
        drift < 30,
        "claimed_at {} is {drift} s off the real time",
        read.claimed_at
    );
    assert_eq!(read.deadline, Some(read.claimed_at + TimeDelta::seconds(60)));
    // Neither an operator's release nor a reconciler takes it: it is not stuck yet.
    let now = operator.now().await.unwrap();
    assert_eq!(read.display_state(now, Duration::from_secs(60)).as_str(), "claimed");
    assert!(matches!(
        operator.operator_release(&key, false, Duration::from_secs(60)).await.unwrap(),
        OperatorRelease::Refused(ref c) if c.state == ClaimState::Claimed
    ));
    assert!(matches!(
        operator
            .adopt_for_replay(&key, &read, Duration::from_secs(60), Window::ANY)
            .await
            .unwrap(),
        Adoption::NotNow(ref c) if *c == read
    ));
    assert_eq!(
        owner.peek(&key).await.unwrap(),
        Some(read),
        "still the owner's, unchanged"
    );
    // And a slow clock does not keep a stuck claim from its release: one whose owner gave up
    // a second after its claim is released two seconds later by the slow replica.
    let gave_up = MatchKey::parse("2026-07-17_c-v-d").unwrap();
    let _dead = claim_key(&operator, &gave_up, "C v D", DAY, Duration::from_secs(1))
        .await
        .won();
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert!(matches!(
        owner
            .operator_release(&gave_up, false, Duration::from_secs(1))
            .await
            .unwrap(),
        OperatorRelease::Released(_)
    ));
    helpers::cleanup(kind, &prefix).await;
}

/// A Mastodon instance that keeps `Idempotency-Key`s as the real one does (mastodon#21840): a
/// key is stored once its status is saved (3 s for a key's first create, longer than the bot's
/// POST_TIMEOUT_SECS of 1), and a create under a stored key answers the status made for it.
/// [`Instance::forget`] is its hour passing: every key is dropped.
#[derive(Clone, Default)]
pub(crate) struct Instance {
    /// Per key: the status made for it and when the key is stored.
    keys: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    /// Every status made.
    made: Arc<Mutex<Vec<String>>>,
}

impl Instance {
    pub(crate) async fn start(&self) -> MockServer {
        let server = MockServer::start().await;
        let this = self.clone();
        Mock::given(method("POST"))
            .and(path("/api/v1/statuses"))
            .respond_with(move |req: &wiremock::Request| {
                let key = req
                    .headers
                    .get("idempotency-key")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                let mut keys = this.keys.lock().unwrap();
                let now = Instant::now();
                if let Some((id, _)) = keys.get(&key).filter(|(_, stored)| *stored <= now) {
                    return ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": id, "url": null}));
                }
                let mut made = this.made.lock().unwrap();
                let id = format!("11{:016}", made.len() + 1);
                made.push(id.clone());
                let save = Duration::from_secs(3);
                keys.entry(key).or_insert_with(|| (id.clone(), now + save));
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"id": id, "url": null}))
                    .set_delay(save)
            })
            .mount(&server)
            .await;
        server
    }

    fn forget(&self) {
        self.keys.lock().unwrap().clear();
    }

    pub(crate) fn made(&self) -> usize {
        self.made.lock().unwrap().len()
    }

    /// Whether every key it was sent is stored (its status saved): a repeat now answers it.
    pub(crate) fn saved(&self) -> bool {
        let now = Instant::now();
        self.keys.lock().unwrap().values().all(|(_, stored)| *stored <= now)
    }
}

/// An `App` as `backfill` builds it on a store of `kind` under `prefix`, its one channel
/// posting to the Mastodon at `instance`, one post a cycle, each timing out after 1 s, on the
/// replica's own `clock`.
pub(crate) async fn replica(kind: Kind, prefix: &str, dir: &Path, instance: &MockServer, clock: Clock) -> App {
    // The token's variable, named for this test alone (the test process shares one environment).
    let var = format!("T_MASTODON_{}", uuid::Uuid::new_v4().simple()).to_uppercase();
    std::env::set_var(&var, "mastodon-secret");
    let file = dir.join(format!("{var}.toml"));
    std::fs::write(
        &file,
        format!(
            "[[channel]]\nname = \"toots\"\nsink = \"mastodon\"\ninstance = \"{}\"\ntoken_env = \"{var}\"\n",
            instance.uri()
        ),
    )
    .unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let template = root().join("templates/announce.txt");
    let mut args: Vec<String> = vec!["cricket-announcer".into()];
    args.extend(
        helpers::store_env(kind, prefix, dir)
            .await
            .into_iter()
            .map(|(var, value)| match var {
                "REDIS_URL" => format!("--redis-url={value}"),
                _ => format!("--database-url={value}"),
            }),
    );
    for flag in [
        "--channels",
        file.to_str().unwrap(),
        "--source",
        page.to_str().unwrap(),
        "--key-prefix",
        prefix,
        "--template-path",
        template.to_str().unwrap(),
        "--post-timeout-secs",
        "1",
        "--max-posts-per-cycle",
        "1",
        "backfill",
    ] {
        args.push(flag.to_string());
    }
    let cli = Cli::try_parse_from(args).unwrap();
    let config = Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::Posting)).unwrap();
    App::build_on(&config, Buffer::default().output(), clock).await.unwrap()
}

/// Moves every time in the claim records under `prefix` `by` into the past, as if that long
/// had gone by (each record keeps its TTL).
pub(crate) async fn age_claims(kind: Kind, prefix: &str, by: TimeDelta) {
    let aged = |raw: &str| {
        let mut record: serde_json::Value = serde_json::from_str(raw).unwrap();
        for field in ["claimed_at", "updated_at", "deadline", "checked_at"] {
            if let Some(t) = record[field].as_str() {
                record[field] = (chrono::DateTime::parse_from_rfc3339(t).unwrap() - by)
                    .to_rfc3339()
                    .into();
            }
        }
        record.to_string()
    };
    let mut n = 0;
    match kind {
        Kind::Redis => {
            let mut redis = raw_redis().await;
            for key in helpers::keys(prefix).await.into_iter().filter(|k| k.contains("match:")) {
                let raw: String = redis::cmd("GET").arg(&key).query_async(&mut redis).await.unwrap();
                redis::cmd("SET")
                    .arg(&key)
                    .arg(aged(&raw))
                    .arg("KEEPTTL")
                    .exec_async(&mut redis)
                    .await
                    .unwrap();
                n += 1;
            }
        }
        _ => {
            let db = raw_postgres(&schema_for(prefix)).await;
            let rows = db
                .query(
                    "SELECT id, record::text FROM claims WHERE starts_with(prefix, $1) AND state <> 'released'",
                    &[&prefix],
                )
                .await
                .unwrap();
            for row in rows {
                let (id, raw): (i64, String) = (row.get(0), row.get(1));
                db.execute(
                    "UPDATE claims SET record = $2::text::jsonb WHERE id = $1",
                    &[&id, &aged(&raw)],
                )
                .await
                .unwrap();
                n += 1;
            }
        }
    }
    assert!(n > 0, "no claim to age under {prefix}");
}

async fn a_mastodon_post_is_repeated_only_inside_its_windows_by_the_stores_clock(kind: Kind) {
    let prefix = unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let mastodon = Instance::default();
    let server = mastodon.start().await;
    // The owner's clock runs ten minutes fast: by it, its claim is ten minutes younger than
    // it is, and Mastodon's hour would seem to last seventy minutes.
    let owner = replica(kind, &prefix, dir.path(), &server, skewed(10)).await;
    owner.init_store().await.unwrap();
    let (summary, _) = owner.backfill().await;
    assert_eq!((summary.posted, summary.failed), (0, 1), "{}", summary.line(false));
    assert_eq!(mastodon.made(), 1, "the create landed; its answer was lost");
    let claim = owner.store().for_channel("toots").list().await.unwrap().remove(0).claim;
    assert_eq!(claim.state, ClaimState::Unknown);
    let drift = (claim.claimed_at - chrono::Utc::now()).num_seconds().abs();
    assert!(
        drift < 30,
        "claimed_at {} is {drift} s off the real time",
        claim.claimed_at
    );

    // At once, a reconciler whose clock is twenty-five minutes fast: by its clock the post
    // settled long ago, but the instance is still saving it. Not repeated: it waits.
    let fast = replica(kind, &prefix, dir.path(), &server, skewed(25)).await;
    let decisions = fast.reconcile().await.unwrap();
    assert!(
        matches!(decisions.as_slice(), [d] if matches!(d.outcome, Settled::Waiting { .. })),
        "{decisions:?}"
    );
    assert_eq!(mastodon.made(), 1, "nothing repeated while the instance saves");

    // Sixty-two minutes later (the records' times moved back; the instance's hour is over and
    // its keys are gone), a reconciler whose clock is ten minutes slow: by its clock and the
    // owner's the claim is forty-two minutes old, inside the hour. By the store's it is not:
    // listed for the operator, not repeated.
    age_claims(kind, &prefix, TimeDelta::minutes(62)).await;
    mastodon.forget();
    let slow = replica(kind, &prefix, dir.path(), &server, skewed(-10)).await;
    let decisions = slow.reconcile().await.unwrap();
    assert!(
        matches!(decisions.as_slice(), [d] if matches!(&d.outcome, Settled::NotAsked { why } if why.contains("for an hour only"))),
        "{decisions:?}"
    );
    assert_eq!(mastodon.made(), 1, "one status, never a second");
    helpers::cleanup(kind, &prefix).await;
}

mod redis_store {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_claim_is_stuck_by_the_stores_clock_whatever_a_replicas_clock_reads() {
        super::a_claim_is_stuck_by_the_stores_clock_whatever_a_replicas_clock_reads(Kind::Redis).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_mastodon_post_is_repeated_only_inside_its_windows_by_the_stores_clock() {
        super::a_mastodon_post_is_repeated_only_inside_its_windows_by_the_stores_clock(Kind::Redis).await;
    }
}

mod postgres_store {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_claim_is_stuck_by_the_stores_clock_whatever_a_replicas_clock_reads() {
        super::a_claim_is_stuck_by_the_stores_clock_whatever_a_replicas_clock_reads(Kind::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_mastodon_post_is_repeated_only_inside_its_windows_by_the_stores_clock() {
        super::a_mastodon_post_is_repeated_only_inside_its_windows_by_the_stores_clock(Kind::Postgres).await;
    }
}
