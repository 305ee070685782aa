//! Fault tests: every way a post or the store can fail, each asserting the posts made, the
//! exact final claim record and what the log says. Real Redis (including one the test owns and
//! stops), real SQLite, a mock X API on loopback.

use crate::helpers::{
    self, capture_logs, credentials, live_announcer, store, unique_prefix, zim_v_ban, Kind, OwnRedis,
};
use cricket_announcer::announcer::{AnnounceError, Announcer, Memory, Mode, Outcome};
use cricket_announcer::claim::{ClaimState, ClaimStore};
use cricket_announcer::cricket::{MatchKey, Sighting};
use cricket_announcer::post::{PostPace, Sink, Verdict};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tracing::instrument::WithSubscriber;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// What one announcement against a failing X left behind.
struct Observed {
    outcome: Outcome,
    posts: usize,
    state: Option<ClaimState>,
    detail: Option<String>,
    attempts: u32,
    halted: bool,
    log: String,
}

async fn x_answering(template: ResponseTemplate) -> MockServer {
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(template)
        .mount(&x)
        .await;
    x
}

fn error_json(status: u16, title: &str, detail: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(serde_json::json!({"title": title, "detail": detail, "status": status}))
}

async fn announce_once(kind: Kind, x: &MockServer) -> Observed {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let s = store(kind, &prefix, "solo", &dir.path().join("c.db")).await;
    let announcer = live_announcer(s.clone(), x);
    observe(&announcer, &s, x).await
}

async fn observe(announcer: &Announcer, s: &ClaimStore, x: &MockServer) -> Observed {
    let m = zim_v_ban();
    let (logs, buffer) = capture_logs();
    let outcome = announcer
        .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
        .with_subscriber(logs)
        .await
        .unwrap();
    let key = MatchKey::for_match(&m);
    let record = s.peek(&key).await.unwrap();
    Observed {
        halted: outcome.halts().is_some(),
        outcome,
        posts: x.received_requests().await.map(|r| r.len()).unwrap_or(0),
        state: record.as_ref().map(|c| c.state),
        detail: record.and_then(|c| c.detail),
        attempts: s.attempts(&key).await.unwrap(),
        log: buffer.text(),
    }
}

fn failed(o: &Observed) -> (bool, Verdict) {
    match &o.outcome {
        Outcome::PostFailed {
            claim_kept, verdict, ..
        } => (*claim_kept, *verdict),
        other => panic!("expected a failed post, got {other:?}"),
    }
}

crate::helpers::store_matrix!(
    x_201_records_posted_with_the_tweet_id,
    x_400_releases_the_claim_and_counts_one_attempt,
    x_401_releases_the_claim_and_stops_posting,
    x_402_credits_depleted_releases_the_claim_and_stops_posting,
    x_403_duplicate_content_records_posted_without_an_id,
    x_403_other_releases_the_claim_and_stops_posting,
    x_429_releases_the_claim_without_counting_an_attempt,
    x_500_keeps_the_claim_as_unknown,
    x_503_keeps_the_claim_as_unknown,
    x_creating_the_tweet_then_answering_504_keeps_the_claim_as_unknown,
    x_accepting_the_connection_and_never_answering_keeps_the_claim_as_unknown,
    a_refused_connection_releases_the_claim_without_counting_an_attempt,
    three_provable_failures_in_a_row_give_up_with_a_failed_record,
);

async fn x_201_records_posted_with_the_tweet_id(kind: Kind) {
    let x =
        x_answering(ResponseTemplate::new(201).set_body_json(serde_json::json!({"data": {"id": "1799", "text": "t"}})))
            .await;
    let o = announce_once(kind, &x).await;
    assert!(matches!(o.outcome, Outcome::Posted(ref r) if r.id == "1799"));
    assert_eq!(
        (o.posts, o.state, o.attempts, o.halted),
        (1, Some(ClaimState::Posted), 0, false)
    );
    assert!(o.log.contains("posted tweet_id=1799"), "{}", o.log);
}

async fn x_400_releases_the_claim_and_counts_one_attempt(kind: Kind) {
    let o = announce_once(
        kind,
        &x_answering(error_json(400, "Invalid Request", "text is invalid")).await,
    )
    .await;
    assert_eq!(failed(&o), (false, Verdict::NotPosted));
    assert_eq!((o.posts, o.state, o.attempts, o.halted), (1, None, 1, false));
    assert!(o.log.contains("claim released for a later cycle"), "{}", o.log);
}

async fn x_401_releases_the_claim_and_stops_posting(kind: Kind) {
    let o = announce_once(
        kind,
        &x_answering(error_json(401, "Unauthorized", "Unauthorized")).await,
    )
    .await;
    assert_eq!(failed(&o), (false, Verdict::NotPosted));
    // A refused credential says nothing of this match: no attempt is counted against it.
    assert_eq!((o.posts, o.state, o.attempts, o.halted), (1, None, 0, true));
    assert!(o.log.contains("posting stops for this process"), "{}", o.log);
}

async fn x_402_credits_depleted_releases_the_claim_and_stops_posting(kind: Kind) {
    let o = announce_once(
        kind,
        &x_answering(error_json(
            402,
            "CreditsDepleted",
            "Your enrolled account does not have any credits",
        ))
        .await,
    )
    .await;
    assert_eq!(failed(&o), (false, Verdict::NotPosted));
    // A refused credential says nothing of this match: no attempt is counted against it.
    assert_eq!((o.posts, o.state, o.attempts, o.halted), (1, None, 0, true));
}

async fn x_403_duplicate_content_records_posted_without_an_id(kind: Kind) {
    let x = x_answering(error_json(
        403,
        "Forbidden",
        "You are not allowed to create a Tweet with duplicate content.",
    ))
    .await;
    let o = announce_once(kind, &x).await;
    // Counted as posted (the summary's `posted`, exit 0): the platform says it is there.
    assert!(
        matches!(&o.outcome, Outcome::AlreadyPosted { id: None, error } if error.verdict() == Verdict::AlreadyPosted),
        "{:?}",
        o.outcome
    );
    assert_eq!((o.posts, o.state, o.halted), (1, Some(ClaimState::Posted), false));
    assert!(o.detail.unwrap().contains("duplicate content"));
    assert!(o.log.contains("X says this was posted before"), "{}", o.log);
}

async fn x_403_other_releases_the_claim_and_stops_posting(kind: Kind) {
    let x = x_answering(error_json(
        403,
        "Forbidden",
        "You are not permitted to perform this action.",
    ))
    .await;
    let o = announce_once(kind, &x).await;
    assert_eq!(failed(&o), (false, Verdict::NotPosted));
    // A refused credential says nothing of this match: no attempt is counted against it.
    assert_eq!((o.posts, o.state, o.attempts, o.halted), (1, None, 0, true));
}

async fn x_429_releases_the_claim_without_counting_an_attempt(kind: Kind) {
    let reset = chrono::Utc::now().timestamp() + 900;
    let x = x_answering(
        error_json(429, "Too Many Requests", "Too Many Requests")
            .insert_header("x-rate-limit-remaining", "0")
            .insert_header("x-rate-limit-reset", reset.to_string().as_str()),
    )
    .await;
    let o = announce_once(kind, &x).await;
    assert_eq!(failed(&o), (false, Verdict::NotPosted));
    assert_eq!((o.posts, o.state, o.attempts, o.halted), (1, None, 0, false));
    assert!(o.log.contains("X answered 429"), "{}", o.log);
}

async fn x_500_keeps_the_claim_as_unknown(kind: Kind) {
    let o = announce_once(kind, &x_answering(error_json(500, "Internal Error", "oops")).await).await;
    assert_eq!(failed(&o), (true, Verdict::Unknown));
    assert_eq!((o.posts, o.state), (1, Some(ClaimState::Unknown)));
    assert_eq!(o.detail.as_deref(), Some("X answered 500: oops"));
    assert!(
        o.log.contains("post outcome unknown; keeping the claim, not retrying"),
        "{}",
        o.log
    );
}

async fn x_503_keeps_the_claim_as_unknown(kind: Kind) {
    let o = announce_once(
        kind,
        &x_answering(error_json(503, "Service Unavailable", "over capacity")).await,
    )
    .await;
    assert_eq!(failed(&o), (true, Verdict::Unknown));
    assert_eq!(
        (o.posts, o.state, o.attempts, o.halted),
        (1, Some(ClaimState::Unknown), 0, false)
    );
    assert_eq!(o.detail.as_deref(), Some("X answered 503: over capacity"));
}

async fn x_creating_the_tweet_then_answering_504_keeps_the_claim_as_unknown(kind: Kind) {
    // A gateway timeout says nothing about whether the tweet behind it was created.
    let o = announce_once(
        kind,
        &x_answering(ResponseTemplate::new(504).set_body_string("<html>Gateway Time-out</html>")).await,
    )
    .await;
    assert_eq!(failed(&o), (true, Verdict::Unknown));
    assert_eq!((o.posts, o.state), (1, Some(ClaimState::Unknown)));
    assert_eq!(
        o.detail.as_deref(),
        Some("X answered 504: <html>Gateway Time-out</html>")
    );
}

async fn x_accepting_the_connection_and_never_answering_keeps_the_claim_as_unknown(kind: Kind) {
    let x = x_answering(ResponseTemplate::new(201).set_delay(Duration::from_secs(30))).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let s = store(kind, &prefix, "solo", &dir.path().join("c.db")).await;
    let client = Sink::x(
        &url::Url::parse(&x.uri()).unwrap(),
        credentials(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    )
    .unwrap();
    let pace = Arc::new(PostPace::new(
        NonZeroU32::new(100).unwrap(),
        NonZeroU32::new(1000).unwrap(),
    ));
    let announcer = Announcer::new(
        s.clone(),
        helpers::template(),
        None,
        Mode::live(client, pace),
        helpers::policy(),
    );
    let o = observe(&announcer, &s, &x).await;
    assert_eq!(failed(&o), (true, Verdict::Unknown));
    assert_eq!((o.posts, o.state), (1, Some(ClaimState::Unknown)));
    let detail = o.detail.unwrap();
    assert!(
        detail.starts_with(&format!(
            "no answer from X at {}/2/tweets within POST_TIMEOUT_SECS",
            x.uri()
        )),
        "{detail}"
    );
}

async fn a_refused_connection_releases_the_claim_without_counting_an_attempt(kind: Kind) {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let s = store(kind, &prefix, "solo", &dir.path().join("c.db")).await;
    let base = url::Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let client = Sink::x(&base, credentials(), Duration::from_secs(2), Duration::from_secs(1)).unwrap();
    let pace = Arc::new(PostPace::new(
        NonZeroU32::new(100).unwrap(),
        NonZeroU32::new(1000).unwrap(),
    ));
    let announcer = Announcer::new(
        s.clone(),
        helpers::template(),
        None,
        Mode::live(client, pace),
        helpers::policy(),
    );
    let m = zim_v_ban();
    // More cycles than MAX_POST_ATTEMPTS (3): an unreachable platform says nothing about the
    // post, so no attempt is counted and the match is never given up as `failed`.
    for _ in 0..4 {
        let outcome = announcer
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap();
        assert!(
            matches!(
                outcome,
                Outcome::PostFailed {
                    claim_kept: false,
                    verdict: Verdict::NotPosted,
                    ..
                }
            ),
            "{outcome:?}"
        );
        assert_eq!(s.peek(&MatchKey::for_match(&m)).await.unwrap(), None);
        assert_eq!(s.attempts(&MatchKey::for_match(&m)).await.unwrap(), 0);
    }
}

async fn three_provable_failures_in_a_row_give_up_with_a_failed_record(kind: Kind) {
    let x = x_answering(error_json(400, "Invalid Request", "bad text")).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let s = store(kind, &prefix, "solo", &dir.path().join("c.db")).await;
    let announcer = live_announcer(s.clone(), &x);
    let m = zim_v_ban();
    let key = MatchKey::for_match(&m);
    for expected_kept in [false, false, true] {
        let outcome = announcer
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap();
        assert!(
            matches!(outcome, Outcome::PostFailed { claim_kept, .. } if claim_kept == expected_kept),
            "{outcome:?}"
        );
    }
    let record = s.peek(&key).await.unwrap().unwrap();
    assert_eq!((record.state, record.attempts), (ClaimState::Failed, Some(3)));
    assert_eq!(
        record.detail.as_deref(),
        Some("gave up after 3 attempts: X answered 400: bad text")
    );
    // A failed match is never tried again.
    assert!(matches!(
        announcer
            .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
            .await
            .unwrap(),
        Outcome::Skipped { .. }
    ));
    assert_eq!(x.received_requests().await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_before_the_claim_posts_nothing_then_resumes_by_itself() {
    let mut redis = OwnRedis::start();
    let x = MockServer::start().await;
    helpers::x_accepts(&x, 1).await;
    let s = ClaimStore::Redis(
        cricket_announcer::claim::RedisClaims::connect(&redis.url(), &unique_prefix(), "solo")
            .await
            .unwrap(),
    );
    let announcer = live_announcer(s.clone(), &x);
    redis.stop();
    let (logs, buffer) = capture_logs();
    let down = announcer
        .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
        .with_subscriber(logs)
        .await;
    assert!(
        matches!(down, Err(AnnounceError::Store { .. })),
        "a store error, never 'claimed': {down:?}"
    );
    assert_eq!(
        x.received_requests().await.unwrap().len(),
        0,
        "nothing posted while the store is down"
    );
    let _ = buffer;
    redis.restart();
    // The connection manager reconnects by itself; the first command after the restart may
    // still see the old broken connection.
    let mut outcome = None;
    for _ in 0..60 {
        match announcer
            .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
            .await
        {
            Ok(o) => {
                outcome = Some(o);
                break;
            }
            Err(AnnounceError::Store { .. }) => tokio::time::sleep(Duration::from_millis(250)).await,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(matches!(outcome, Some(Outcome::Posted(_))), "{outcome:?}");
    x.verify().await;
    let record = s.peek(&MatchKey::for_match(&zim_v_ban())).await.unwrap().unwrap();
    assert_eq!(record.state, ClaimState::Posted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_with_persistence_keeps_claims_and_never_posts_twice() {
    let mut redis = OwnRedis::start();
    let x = MockServer::start().await;
    helpers::x_accepts(&x, 1).await;
    let prefix = unique_prefix();
    let s = ClaimStore::Redis(
        cricket_announcer::claim::RedisClaims::connect(&redis.url(), &prefix, "solo")
            .await
            .unwrap(),
    );
    let announcer = live_announcer(s.clone(), &x);
    assert!(matches!(
        announcer
            .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
            .await
            .unwrap(),
        Outcome::Posted(_)
    ));
    redis.stop();
    redis.restart();
    let mut outcome = None;
    // Up to 15 s: the client reconnects with backoff, and a command sent on the dead
    // connection waits out its response timeout (5 s) first; a loaded CI machine needs the room.
    for _ in 0..60 {
        if let Ok(o) = announcer
            .announce(&mut Memory::default(), &Sighting::new(zim_v_ban()), None)
            .await
        {
            outcome = Some(o);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        matches!(outcome, Some(Outcome::Skipped { ref holder }) if holder.state == ClaimState::Posted),
        "{outcome:?}"
    );
    x.verify().await;
    let _ = Path::new("");
}

mod lifecycle {
    //! The store's life: first start, seeding, losing its data.
    use crate::helpers::{self, keys, raw_redis, redis_url, unique_prefix, OwnRedis};
    use cricket_announcer::app::App;
    use cricket_announcer::claim::{ClaimState, OperatorRelease};
    use cricket_announcer::cricket::MatchKey;
    use std::collections::HashMap;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;
    use wiremock::MockServer;

    async fn app(prefix: &str, x: &MockServer) -> App {
        helpers::live_app(&redis_url(), prefix, x).await
    }

    /// `(socket reads, calls per command)` the server counted since the last call, less the
    /// `INFO` calls themselves. On a Redis of the test's own, every read is the bot's: one per
    /// round trip (a small pipeline arrives in one read).
    async fn server_counts(conn: &mut redis::aio::MultiplexedConnection) -> (u64, HashMap<String, u64>) {
        let stats: String = redis::cmd("INFO").arg("stats").query_async(conn).await.unwrap();
        let commands: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
        redis::cmd("CONFIG").arg("RESETSTAT").exec_async(conn).await.unwrap();
        let reads = stats
            .lines()
            .find_map(|l| l.strip_prefix("total_reads_processed:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap();
        let calls = crate::helpers::command_stats_of(&commands)
            .into_iter()
            .filter(|(name, _)| !matches!(name.as_str(), "info" | "config"))
            .collect();
        // RESETSTAT's read came before its reset; `INFO stats` counted its own read.
        (reads - 1, calls)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cycle_of_held_matches_costs_one_batch_and_a_new_match_one_claim() {
        let redis = OwnRedis::start();
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 4).await;
        let prefix = unique_prefix();
        let bot = helpers::live_app(&redis.url(), &prefix, &x).await;
        assert!(bot.init_store().await.unwrap());
        let mut conn = redis::Client::open(redis.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        server_counts(&mut conn).await;

        // Four new matches: the marker refresh, one batch look-up (a read, then the refresh of
        // the TTLs a process's first look-up makes: two round trips), then per match the store's
        // time for the claim (a script running `TIME` on the prefix's node: one clock for
        // every replica), one claim (the claim script, `EVALSHA`: the marker, every identity,
        // then our record and one pointer per identity), the store's time for the record, and
        // one record of the post (the compare-and-set script). This server has seen neither the
        // claim nor the record script yet: the first `EVALSHA` of each answers NOSCRIPT and the
        // client sends `SCRIPT LOAD` and the `EVALSHA` again, once per script, process and
        // server. Redis counts the `GET`, `SET` and `TIME` a script runs inside it as calls too.
        let first = bot.cycle(&CancellationToken::new()).await;
        assert_eq!((first.posted, first.skipped), (4, 0));
        let (reads, calls) = server_counts(&mut conn).await;
        assert_eq!(reads, 1 + 2 + 4 * 4 + 2 * 2, "{calls:?}");
        // Per match: the record, its page id's pointer (its key needs none: the record is
        // stored under it) and its fixture's list, then the post.
        assert_eq!(calls.get("set"), Some(&(4 * 3 + 4)), "{calls:?}");
        assert_eq!(calls.get("time"), Some(&(4 * 2)), "{calls:?}");
        assert_eq!(calls.get("evalsha"), Some(&(4 * 4 + 2)), "{calls:?}");
        assert_eq!(calls.get("script|load"), Some(&2), "{calls:?}");

        // All four now held: the marker refresh and one read of them all (`MGET`: the first
        // cycle's look-up refreshed the TTLs of the matches it saw, and the claims set theirs,
        // so none is due a refresh yet), no claim attempted.
        let second = bot.cycle(&CancellationToken::new()).await;
        assert_eq!((second.posted, second.skipped), (0, 4));
        let (reads, calls) = server_counts(&mut conn).await;
        assert_eq!(reads, 2, "{calls:?}");
        assert_eq!(calls.get("mget"), Some(&1), "{calls:?}");
        assert_eq!(calls.get("getex"), None, "{calls:?}");
        assert_eq!(calls.get("expire"), Some(&1), "{calls:?}");
        assert_eq!(calls.get("set"), None, "{calls:?}");
        assert_eq!(calls.get("get"), None, "{calls:?}");

        // A new process has refreshed nothing yet: its first look-up reads as any other (one
        // `MGET`), then sets the TTL of every match's claim, page id and fixture list, whose
        // TTLs follow its claim's (one pipeline of `EXPIRE`s, a round trip of its own).
        let restarted = helpers::live_app(&redis.url(), &prefix, &x).await;
        // Its connecting is not part of the cycle.
        server_counts(&mut conn).await;
        let third = restarted.cycle(&CancellationToken::new()).await;
        assert_eq!((third.posted, third.skipped), (0, 4));
        let (reads, calls) = server_counts(&mut conn).await;
        assert_eq!(reads, 3, "{calls:?}");
        assert_eq!(calls.get("getex"), None, "{calls:?}");
        // The marker, and each match's claim, page id and fixture list.
        assert_eq!(calls.get("expire"), Some(&(1 + 4 * 3)), "{calls:?}");
        assert_eq!(calls.get("mget"), Some(&1), "{calls:?}");
        assert_eq!(calls.get("set"), None, "{calls:?}");
        x.verify().await;
    }

    /// A claim key that holds a hash (written by something else) is a match held by someone
    /// else: it must not fail the look-up or the claim for every other match of the cycle.
    #[tokio::test]
    async fn a_claim_key_holding_another_redis_type_is_held_and_the_other_matches_are_announced() {
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 3).await;
        let prefix = unique_prefix();
        let bot = app(&prefix, &x).await;
        assert!(bot.init_store().await.unwrap());
        let foreign = "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i";
        let mut conn = raw_redis().await;
        let _: () = redis::cmd("HSET")
            .arg(format!("{prefix}match:{foreign}"))
            .arg("a")
            .arg("b")
            .query_async(&mut conn)
            .await
            .unwrap();
        // Each cycle's look-up reads with MGET, which answers nil for a hash (the first cycle's
        // refresh is EXPIRE, which takes a key of any type), and the claim then finds the key
        // taken.
        for (cycle, posted) in [(1, 3), (2, 0)] {
            let summary = bot.cycle(&CancellationToken::new()).await;
            assert_eq!(
                (summary.posted, summary.skipped, summary.store_errors, summary.refused),
                (posted, 4 - posted, 0, None),
                "cycle {cycle}"
            );
        }
        x.verify().await;
        // The operator sees it among the claims; it is never deleted by the bot.
        let store = bot.announcer().store();
        let listed = store.list().await.unwrap();
        let row = listed.iter().find(|c| c.key.as_str() == foreign).unwrap();
        assert_eq!(
            (row.claim.state, row.claim.owner.as_str()),
            (ClaimState::Unknown, "(unreadable record)")
        );
        let key = MatchKey::parse(foreign).unwrap();
        assert!(matches!(
            store
                .operator_release(&key, true, Duration::from_secs(60))
                .await
                .unwrap(),
            OperatorRelease::NotARecord(_)
        ));
    }

    #[tokio::test]
    async fn a_never_initialised_store_refuses_to_post_and_says_what_to_do() {
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 0).await;
        let prefix = unique_prefix();
        let summary = app(&prefix, &x).await.cycle(&CancellationToken::new()).await;
        assert_eq!(summary.posted, 0);
        // The page's matches are counted as a dry run of the same page counts them
        // (`cli::a_dry_run_writes_nothing_and_…`): 9 seen, 5 not announceable.
        assert_eq!((summary.matches_seen, summary.not_announceable), (9, 5));
        let why = summary.refused.unwrap();
        assert!(
            why.contains("never initialised") && why.contains("cricket-announcer seed") && why.contains("--init-store"),
            "{why}"
        );
        x.verify().await;
    }

    #[tokio::test]
    async fn seeding_records_current_matches_without_posting_and_later_cycles_post_nothing_twice() {
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 0).await;
        let prefix = unique_prefix();
        let bot = app(&prefix, &x).await;
        let seeded = bot.seed(None).await.unwrap();
        assert_eq!(
            (seeded.seeded, seeded.not_announceable),
            (8, 1),
            "every match with known teams, TBC excluded"
        );
        let summary = bot.cycle(&CancellationToken::new()).await;
        assert_eq!((summary.posted, summary.skipped, summary.refused), (0, 4, None));
        x.verify().await;
    }

    #[tokio::test]
    async fn two_processes_initialising_at_once_write_one_marker() {
        let x = MockServer::start().await;
        let prefix = unique_prefix();
        let (a, b) = (app(&prefix, &x).await, app(&prefix, &x).await);
        let (ra, rb) = tokio::join!(a.init_store(), b.init_store());
        assert_eq!([ra.unwrap(), rb.unwrap()].iter().filter(|w| **w).count(), 1);
    }

    #[tokio::test]
    async fn a_store_flushed_between_two_cycles_stops_posting_until_reseeded() {
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 4).await;
        let prefix = unique_prefix();
        let bot = app(&prefix, &x).await;
        assert!(bot.init_store().await.unwrap());
        let first = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(first.posted, 4);
        // Redis restarted without persistence: every key of this bot is gone.
        let mut conn = raw_redis().await;
        for k in keys(&prefix).await {
            let _: () = redis::cmd("DEL").arg(&k).query_async(&mut conn).await.unwrap();
        }
        let second = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(second.posted, 0, "nothing is announced twice");
        assert!(second.refused.unwrap().contains("lost its data"));
        let reseeded = bot.seed(None).await.unwrap();
        assert_eq!(reseeded.seeded, 8);
        let third = bot.cycle(&CancellationToken::new()).await;
        assert_eq!((third.posted, third.skipped, third.refused), (0, 4, None));
        x.verify().await;
    }
}
