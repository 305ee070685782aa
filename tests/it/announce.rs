//! The per-match protocol against a real store and a mock X API on loopback.

use crate::helpers::{
    self, capture_logs, claim_key, live_announcer, live_announcer_with, store, unique_prefix, x_accepts, zim_v_ban,
    Expect, Kind, DAY,
};
use cricket_announcer::announcer::{Announcer, ClaimPolicy, DryRun, Memory, Mode, Outcome, REFRESHES_PER_TTL};
use cricket_announcer::claim::{ClaimState, Holder, OperatorRelease, Transition};
use cricket_announcer::clock::Clock;
use cricket_announcer::cricket::{MatchKey, Sighting};
use std::time::Duration;
use tracing::instrument::WithSubscriber;
use wiremock::matchers::{body_json, header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ZIM_V_BAN_TEXT: &str = "Coming up: Zimbabwe v Bangladesh, 2nd T20I
Bangladesh tour of Zimbabwe, 2026
📍 Queens Sports Club, Bulawayo
🕒 Fri 17 Jul, 10:30 UTC
https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026";

async fn ten_concurrent_announcements_post_once(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let m = zim_v_ban();
    let (logs, buffer) = capture_logs();
    let mut tasks = Vec::new();
    for i in 0..10 {
        // Each replica has its own store connection, as separate processes would.
        let s = store(kind, &prefix, &format!("replica-{i}"), &dir.path().join("claims.db")).await;
        let announcer = live_announcer(s, &x);
        let m = m.clone();
        tasks.push(tokio::spawn(
            async move {
                announcer
                    .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
                    .await
                    .unwrap()
            }
            .with_subscriber(logs.clone()),
        ));
    }
    let mut posted = Vec::new();
    let mut holders = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Outcome::Posted(r) => posted.push(r),
            Outcome::Skipped { holder } => holders.push(holder),
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(posted.len(), 1, "exactly one post");
    assert_eq!(posted[0].id, "1800000000000000001");
    assert_eq!(holders.len(), 9);
    let check = store(kind, &prefix, "checker", &dir.path().join("claims.db")).await;
    let record = check.peek(&MatchKey::for_match(&m)).await.unwrap().unwrap();
    assert_eq!(record.state, ClaimState::Posted);
    assert_eq!(record.post_id.as_deref(), Some("1800000000000000001"));
    assert!(
        holders.iter().all(|h| *h.owner == *record.owner),
        "every skip names the winner"
    );
    let log = buffer.text();
    let skips: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("skipped: match already claimed"))
        .collect();
    assert_eq!(skips.len(), 9, "nine skip lines:\n{log}");
    for line in skips {
        assert!(line.contains(&format!("owner={}", record.owner)), "{line}");
        assert!(
            line.contains("state=") && line.contains("since=") && line.contains("age_secs="),
            "{line}"
        );
        // Written like the other fields, not quoted as a Rust string.
        assert!(
            line.contains("state=claimed") || line.contains("state=posted"),
            "{line}"
        );
        assert!(
            line.contains("match_key=2026-07-17_bangladesh-v-zimbabwe_2nd-t20i"),
            "{line}"
        );
    }
    x.verify().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_announcements_on_redis_post_exactly_once() {
    ten_concurrent_announcements_post_once(Kind::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_announcements_on_the_embedded_store_post_exactly_once() {
    ten_concurrent_announcements_post_once(Kind::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_announcements_on_postgres_post_exactly_once() {
    ten_concurrent_announcements_post_once(Kind::Postgres).await;
}

#[tokio::test]
async fn the_post_sent_to_x_is_the_exact_rendered_text_signed_with_oauth1() {
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .and(header_exists("authorization"))
        .and(body_json(serde_json::json!({ "text": ZIM_V_BAN_TEXT })))
        .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"data": {"id": "7", "text": "t"}})))
        .expect(1)
        .mount(&x)
        .await;
    let prefix = unique_prefix();
    let s = store(Kind::Redis, &prefix, "solo", std::path::Path::new("")).await;
    let outcome = live_announcer(s, &x)
        .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Posted(ref r) if r.id == "7"), "{outcome:?}");
    let requests = x.received_requests().await.unwrap();
    let auth = requests[0]
        .headers
        .get("authorization")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(auth.starts_with("OAuth "), "{auth}");
    for part in [
        "oauth_consumer_key=\"test-consumer-key\"",
        "oauth_token=\"test-access-token\"",
        "oauth_signature_method=\"HMAC-SHA1\"",
        "oauth_signature=",
    ] {
        assert!(auth.contains(part), "missing {part} in {auth}");
    }
    assert!(!auth.contains("test-consumer-secret") && !auth.contains("test-access-secret"));
}

#[tokio::test]
async fn a_dry_run_prints_the_exact_post_and_writes_no_claim() {
    let prefix = unique_prefix();
    let s = store(Kind::Redis, &prefix, "dry", std::path::Path::new("")).await;
    let out = helpers::Buffer::default();
    let mode = Mode::DryRun(DryRun {
        out: out.output(),
        json: false,
        shorten: false,
        sink: cricket_announcer::post::SinkKind::X,
        channel: None,
    });
    let announcer = Announcer::new(s, helpers::template(), None, mode, helpers::policy());
    let outcome = announcer
        .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
        .await
        .unwrap();
    let Outcome::WouldPost(post) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(post.text(), ZIM_V_BAN_TEXT);
    assert_eq!(post.length(), 157);
    assert_eq!(
        out.text(),
        format!("--- 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i (cricbuzz:158062; weighted length 157/280)\n{ZIM_V_BAN_TEXT}\n\n")
    );
    assert!(helpers::keys(&prefix).await.is_empty(), "dry run wrote to Redis");
}

#[tokio::test]
async fn after_a_429_nothing_is_claimed_until_the_reset_and_then_the_match_is_posted_once() {
    let x = MockServer::start().await;
    // Far enough ahead that the real clock never reaches it while the test runs.
    let reset = chrono::Utc::now().timestamp() + 600;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("x-rate-limit-remaining", "0")
                .insert_header("x-rate-limit-reset", reset.to_string().as_str())
                .set_body_json(serde_json::json!({"title": "Too Many Requests"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&x)
        .await;
    x_accepts(&x, 1).await;
    let prefix = unique_prefix();
    let s = store(Kind::Redis, &prefix, "solo", std::path::Path::new("")).await;
    let announcer = live_announcer(s.clone(), &x);
    let m = zim_v_ban();
    assert!(matches!(
        announcer
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap(),
        Outcome::PostFailed { claim_kept: false, .. }
    ));
    let deferred = announcer
        .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
        .await
        .unwrap();
    assert!(
        matches!(deferred, Outcome::Deferred { until: Some(t), .. } if t.timestamp() == reset),
        "{deferred:?}"
    );
    assert!(
        helpers::keys(&format!("{prefix}match:")).await.is_empty(),
        "nothing claimed while the limit is exhausted"
    );
    // Time is moved, not waited for: the same announcer (its sink's gate shared) with a clock
    // just before the reset, then just past it.
    let at = |secs: i64| {
        let clock = Clock::system().ahead(chrono::TimeDelta::seconds(
            reset - chrono::Utc::now().timestamp() + secs,
        ));
        announcer.clone().with_clock(clock)
    };
    assert!(matches!(
        at(-2)
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap(),
        Outcome::Deferred { .. }
    ));
    let posted = Some(
        at(1)
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap(),
    );
    assert!(matches!(posted, Some(Outcome::Posted(_))), "{posted:?}");
    assert_eq!(
        s.attempts(&MatchKey::for_match(&m)).await.unwrap(),
        0,
        "a 429 is not an attempt"
    );
    assert_eq!(x.received_requests().await.unwrap().len(), 2, "one refused, one posted");
}

#[tokio::test]
async fn a_post_too_long_for_any_cut_is_an_error_naming_the_template_and_the_match_and_is_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    std::fs::write(
        &path,
        format!("{} {{{{ title }}}} {{{{ link }}}}", "Cricket! ".repeat(40)),
    )
    .unwrap();
    let template = cricket_announcer::template::Template::load(&path).unwrap();
    let x = MockServer::start().await;
    let prefix = unique_prefix();
    let s = store(Kind::Redis, &prefix, "solo", std::path::Path::new("")).await;
    let client = cricket_announcer::post::Sink::x(
        &url::Url::parse(&x.uri()).unwrap(),
        helpers::credentials(),
        Duration::from_secs(2),
        Duration::from_secs(1),
    )
    .unwrap();
    let pace = std::sync::Arc::new(cricket_announcer::post::PostPace::new(
        std::num::NonZeroU32::new(9).unwrap(),
        std::num::NonZeroU32::new(99).unwrap(),
    ));
    let announcer = Announcer::new(s, template, None, Mode::live(client, pace), helpers::policy());
    let e = announcer
        .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
        .await
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("long.txt") && msg.contains("Zimbabwe v Bangladesh") && msg.contains("cricbuzz:158062"),
        "{msg}"
    );
    assert!(helpers::keys(&prefix).await.is_empty(), "nothing claimed");
    assert_eq!(x.received_requests().await.unwrap().len(), 0);
}

/// The cycle's batch look-up refreshes held claims' TTLs when due, and only reads in between:
/// every key on the first look-up, a newly listed key alone at once, and each key once per
/// TTL / [`REFRESHES_PER_TTL`]. Observed through the TTL itself: the claims are given a long
/// TTL by hand, so a look-up that refreshes one brings it down to the announcer's short policy
/// TTL, and one that only reads leaves it long. Time is the announcer's own clock, moved.
async fn held_claims_are_refreshed_on_the_first_look_up_on_a_new_key_and_once_per_ttl_share(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let s = store(kind, &prefix, "holder", &dir.path().join("claims.db")).await;
    let policy_ttl = Duration::from_secs(8);
    let every = policy_ttl / REFRESHES_PER_TTL;
    let long = Duration::from_secs(1_000);
    let clock = Clock::manual(chrono::Utc::now());
    let announcer = live_announcer_with(s.clone(), &x, ClaimPolicy::new(policy_ttl, 3, Duration::from_secs(5)))
        .with_clock(clock.clone());
    // Two matches of a saved page, looked up as the cycle does: by their sightings.
    let (sa, sb) = two_sightings();
    let (a, b) = (sa.ids.key.clone(), sb.ids.key.clone());
    for k in [&a, &b] {
        let _ = claim_key(&s, k, "A v B", long, long).await.won();
    }
    let refreshed = |ttl: Option<Duration>| ttl.is_some_and(|t| t <= policy_ttl);
    // What this process remembers from one look-up to the next, as the cycle keeps it.
    let mut memory = Memory::default();
    // Both matches looked up in one batch, as the cycle does: both held?
    async fn both_held(announcer: &Announcer, memory: &mut Memory, sa: &Sighting, sb: &Sighting) -> bool {
        announcer
            .holders_of(memory, &[sa, sb])
            .await
            .unwrap()
            .iter()
            .all(Option::is_some)
    }

    // This process has refreshed nothing yet: the first look-up refreshes.
    let held = announcer.holders_of(&mut memory, &[&sa]).await.unwrap();
    assert!(held[0].as_ref().is_some_and(|c| c.state == ClaimState::Claimed));
    assert!(refreshed(s.ttl(&a).await.unwrap()), "first look-up refreshes");

    // Right after, the same key: read only.
    assert!(s.refresh(&a, long).await.unwrap());
    assert!(announcer.holders_of(&mut memory, &[&sa]).await.unwrap()[0].is_some());
    assert!(!refreshed(s.ttl(&a).await.unwrap()), "not due yet: read only");

    // A key the last look-up did not read is refreshed at once, and alone.
    assert!(both_held(&announcer, &mut memory, &sa, &sb).await);
    assert!(refreshed(s.ttl(&b).await.unwrap()), "the newly listed key");
    assert!(!refreshed(s.ttl(&a).await.unwrap()), "the others only read");

    // Once the share of the TTL has passed, each is due again.
    assert!(s.refresh(&b, long).await.unwrap());
    clock.advance(chrono::TimeDelta::from_std(every).unwrap());
    assert!(both_held(&announcer, &mut memory, &sa, &sb).await);
    for k in [&a, &b] {
        assert!(
            refreshed(s.ttl(k).await.unwrap()),
            "{k}: due after TTL / {REFRESHES_PER_TTL}"
        );
    }
}

#[tokio::test]
async fn held_claims_on_redis_are_refreshed_when_due_and_only_read_in_between() {
    held_claims_are_refreshed_on_the_first_look_up_on_a_new_key_and_once_per_ttl_share(Kind::Redis).await;
}

#[tokio::test]
async fn held_claims_on_the_embedded_store_are_refreshed_when_due_and_only_read_in_between() {
    held_claims_are_refreshed_on_the_first_look_up_on_a_new_key_and_once_per_ttl_share(Kind::Embedded).await;
}

/// Whatever another process writes between two of the cycle's batch look-ups (a state change, a
/// release, a new claim by someone else, a new claim by the same owner) is what the next look-up
/// answers: the holder of the record as stored now.
async fn each_look_up_answers_the_record_as_stored_now_whatever_it_answered_before(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let path = dir.path().join("claims.db");
    let other = store(kind, &prefix, "other", &path).await;
    let third = store(kind, &prefix, "third", &path).await;
    let announcer = live_announcer_with(
        store(kind, &prefix, "us", &path).await,
        &x,
        ClaimPolicy::new(Duration::from_secs(3_600), 3, Duration::from_secs(5)),
    );
    let (sk, su) = two_sightings();
    let (k, unchanged) = (sk.ids.key.clone(), su.ids.key.clone());
    let seen = |found: &[Option<Holder>]| {
        found
            .iter()
            .map(|c| c.as_ref().map(|c| (c.owner.to_string(), c.state)))
            .collect::<Vec<_>>()
    };
    let token = claim_key(&other, &k, "A v B", DAY, DAY).await.won();
    let _ = claim_key(&other, &unchanged, "C v D", DAY, DAY).await.won();
    let held = |owner: &str, state| Some((owner.to_string(), state));

    let mut memory = Memory::default();
    let first = announcer.holders_of(&mut memory, &[&sk, &su]).await.unwrap();
    same_as_stored(&other, &[&k, &unchanged], &first).await;
    assert_eq!(
        seen(&first),
        [held("other", ClaimState::Claimed), held("other", ClaimState::Claimed)]
    );

    other
        .transition(
            &token,
            &Transition::Posted {
                post_id: Some("42".into()),
                detail: None,
            },
        )
        .await
        .unwrap();
    let second = announcer.holders_of(&mut memory, &[&sk, &su]).await.unwrap();
    same_as_stored(&other, &[&k, &unchanged], &second).await;
    assert_eq!(
        seen(&second),
        [held("other", ClaimState::Posted), held("other", ClaimState::Claimed)]
    );

    // Released by an operator, then claimed by a third process: free, then the new holder.
    assert!(matches!(
        other.operator_release(&k, true, Duration::ZERO).await.unwrap(),
        OperatorRelease::Released(_)
    ));
    assert_eq!(
        seen(&announcer.holders_of(&mut memory, &[&sk, &su]).await.unwrap()),
        [None, held("other", ClaimState::Claimed)]
    );
    let _ = claim_key(&third, &k, "A v B", DAY, DAY).await.won();
    let fourth = announcer.holders_of(&mut memory, &[&sk, &su]).await.unwrap();
    assert_eq!(
        seen(&fourth),
        [held("third", ClaimState::Claimed), held("other", ClaimState::Claimed)]
    );
    same_as_stored(&third, &[&k, &unchanged], &fourth).await;

    // Released and claimed again by the same owner: owner, state and tweet are as before, the
    // record (token, times) is not, and the look-up answers the new one.
    assert!(matches!(
        third.operator_release(&k, true, Duration::ZERO).await.unwrap(),
        OperatorRelease::Released(_)
    ));
    let _ = claim_key(&third, &k, "A v B", DAY, DAY).await.won();
    let fifth = announcer.holders_of(&mut memory, &[&sk, &su]).await.unwrap();
    assert_eq!(seen(&fifth), seen(&fourth));
    assert_ne!(fifth[0], fourth[0], "a new claim, not the one read before");
    same_as_stored(&third, &[&k, &unchanged], &fifth).await;
}

/// Two different matches of the saved Cricbuzz page, as sightings.
fn two_sightings() -> (Sighting, Sighting) {
    let mut matches = crate::helpers::cricbuzz_matches().into_iter();
    let (first, second) = (matches.next().unwrap(), matches.next().unwrap());
    (Sighting::new(first), Sighting::new(second))
}

/// Each holder found is the holder of the record the store holds now (peeked separately).
async fn same_as_stored(store: &cricket_announcer::claim::ClaimStore, keys: &[&MatchKey], found: &[Option<Holder>]) {
    for (k, f) in keys.iter().zip(found) {
        assert_eq!(
            f.as_ref(),
            store.peek(k).await.unwrap().as_ref().map(Holder::from).as_ref(),
            "{k}"
        );
    }
}

#[tokio::test]
async fn each_look_up_on_redis_answers_the_record_as_stored_now() {
    each_look_up_answers_the_record_as_stored_now_whatever_it_answered_before(Kind::Redis).await;
}

#[tokio::test]
async fn each_look_up_on_the_embedded_store_answers_the_record_as_stored_now() {
    each_look_up_answers_the_record_as_stored_now_whatever_it_answered_before(Kind::Embedded).await;
}

#[tokio::test]
async fn each_look_up_on_postgres_answers_the_record_as_stored_now() {
    each_look_up_answers_the_record_as_stored_now_whatever_it_answered_before(Kind::Postgres).await;
}
