//! The store contract, run against Redis, the embedded store and PostgreSQL alike; then what
//! only the PostgreSQL ledger promises (one row per match, history kept, reconnects).

use crate::helpers::{
    self, claim_key, id, keys, raw_postgres, raw_redis, schema_for, store, unique_prefix, Expect, Holders, Kind, DAY,
};
use cricket_announcer::claim::{
    Checked, ClaimError, ClaimState, ClaimStore, Holder, LastRecords, MarkerOrigin, MatchClaim, OperatorRelease,
    PostgresClaims, Transition,
};
use cricket_announcer::clock::Clock;
use cricket_announcer::cricket::{Identities, Identity, MatchKey};
use std::sync::Arc;
use std::time::Duration;

/// A fresh pair of stores (two owners) on one backend, plus what keeps it alive.
struct Pair {
    a: ClaimStore,
    b: ClaimStore,
    prefix: helpers::Prefix,
    _dir: tempfile::TempDir,
}

async fn pair(kind: Kind) -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.db");
    let prefix = unique_prefix();
    Pair {
        a: store(kind, &prefix, "worker-a", &file).await,
        b: store(kind, &prefix, "worker-b", &file).await,
        prefix,
        _dir: dir,
    }
}

/// The transition recording a post as post `post_id`.
fn posted(post_id: &str) -> Transition {
    Transition::Posted {
        post_id: Some(post_id.into()),
        detail: None,
    }
}

fn key(s: &str) -> MatchKey {
    MatchKey::parse(s).unwrap()
}

crate::helpers::store_matrix!(
    the_first_claim_wins_and_the_loser_sees_holder_since_and_state,
    a_transition_with_our_token_changes_the_state_and_keeps_the_ttl,
    a_wrong_token_can_neither_overwrite_nor_release_anothers_claim,
    a_released_claim_can_be_won_again,
    refreshing_extends_the_ttl_without_touching_the_record,
    peeking_writes_nothing,
    ten_concurrent_claims_on_separate_connections_have_one_winner,
    list_shows_every_claim_with_its_state,
    a_claim_left_claimed_past_the_post_timeout_is_stuck_and_only_then_released_by_an_operator,
    initialising_is_a_claim_and_a_lost_marker_is_detected,
    looking_up_holders_in_a_batch_reads_each_and_refreshes_only_held_ones_when_asked,
    a_look_up_since_the_last_one_reads_what_changed_as_a_fresh_look_up_does,
    a_claim_holds_its_match_through_every_identity_and_records_new_ones,
    ten_concurrent_claims_of_ten_versions_of_one_listing_have_one_winner,
    a_claim_that_requires_the_marker_takes_nothing_without_it,
    each_channel_claims_a_match_once_and_a_claim_on_one_never_holds_another,
    a_record_of_an_earlier_release_reads_its_tweet_id_as_the_post_id_and_keeps_it_when_written_again,
);

/// Writes `record` at the claim key of `match_key` as an earlier release did, bypassing the
/// store's code: Redis `SET … EX`, a row of the SQLite file, a row of the PostgreSQL ledger
/// with its columns read from the record (the previous release's `tweet_id` included).
async fn put_as_written_before(kind: Kind, prefix: &str, file: &std::path::Path, match_key: &str, record: &str) {
    let key = format!("{prefix}match:{match_key}");
    match kind {
        Kind::Redis => {
            let _: () = redis::cmd("SET")
                .arg(&key)
                .arg(record)
                .arg("EX")
                .arg(600)
                .query_async(&mut raw_redis().await)
                .await
                .unwrap();
        }
        Kind::Embedded => {
            let db = rusqlite::Connection::open(file).unwrap();
            let expires_at = chrono::Utc::now().timestamp() + 600;
            db.execute(
                "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![key, record, expires_at],
            )
            .unwrap();
        }
        Kind::Postgres => {
            raw_postgres(&schema_for(prefix))
                .await
                .execute(
                    "INSERT INTO claims (prefix, match_key, state, owner, token, title, attempts, claimed_at,
                                         updated_at, tweet_id, detail, record, expires_at)
                     SELECT $1, $2, r->>'state', r->>'owner', r->>'token', r->>'title', (r->>'attempts')::integer,
                            (r->>'claimed_at')::timestamptz, (r->>'updated_at')::timestamptz, r->>'tweet_id',
                            r->>'detail', r, now() + interval '600 seconds'
                     FROM (SELECT $3::text::jsonb AS r) AS v",
                    &[&prefix, &match_key, &record],
                )
                .await
                .unwrap();
        }
    }
}

/// The post's id of a record written before it was named for every platform (`tweet_id`) is
/// read as its `post_id` by every reader, kept when the record is written again (now as
/// `post_id`), and PostgreSQL's column goes on holding it.
async fn a_record_of_an_earlier_release_reads_its_tweet_id_as_the_post_id_and_keeps_it_when_written_again(kind: Kind) {
    let p = pair(kind).await;
    let file = p._dir.path().join("claims.db");
    let old = serde_json::json!({
        "state": "posted", "owner": "old-bot:1", "token": "5f1c0a4e-0000-4000-8000-000000000001",
        "claimed_at": "2026-07-16T10:00:00Z", "updated_at": "2026-07-16T10:00:01Z",
        "title": "A v B, 2nd", "aliases": ["site:1", "key:2026-07-17_a-v-b_2nd"],
        "tweet_id": "1800000000000000009"
    })
    .to_string();
    put_as_written_before(kind, &p.prefix, &file, "2026-07-17_a-v-b_2nd", &old).await;
    let k = key("2026-07-17_a-v-b_2nd");
    let read = p.a.peek(&k).await.unwrap().expect("the old record");
    assert_eq!(
        (read.state, read.owner.as_str(), read.post_id.as_deref()),
        (ClaimState::Posted, "old-bot:1", Some("1800000000000000009"))
    );
    let listed = p.a.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].claim.post_id.as_deref(), Some("1800000000000000009"));
    // The batch look-up reads it as posted, and a sighting of the match is held by it.
    let found = p.a.holders(&[&k], None).await.unwrap();
    assert_eq!(states_and_owners(&found), vec![Some((ClaimState::Posted, "old-bot:1"))]);
    assert_eq!(
        claim_key(&p.b, &k, "A v B", DAY, DAY).await.held().post_id.as_deref(),
        Some("1800000000000000009")
    );
    // Written again (a reconciler's check): the id is kept, now under its new name.
    let checked = Transition::Checked {
        found: "not among the 3 posts".into(),
    };
    assert!(matches!(
        p.a.settle(&k, &read, &checked).await.unwrap(),
        Checked::Applied(_)
    ));
    let again = p.a.peek(&k).await.unwrap().unwrap();
    assert_eq!(again.post_id.as_deref(), Some("1800000000000000009"));
    let raw = match kind {
        Kind::Redis => redis::cmd("GET")
            .arg(format!("{}match:{k}", *p.prefix))
            .query_async::<String>(&mut raw_redis().await)
            .await
            .unwrap(),
        Kind::Embedded => rusqlite::Connection::open(&file)
            .unwrap()
            .query_row(
                "SELECT record FROM claims WHERE key = ?1",
                [format!("{}match:{k}", *p.prefix)],
                |r| r.get(0),
            )
            .unwrap(),
        Kind::Postgres => {
            let row = raw_postgres(&schema_for(&p.prefix))
                .await
                .query_one(
                    "SELECT record::text, tweet_id FROM claims WHERE match_key = $1",
                    &[&k.as_str()],
                )
                .await
                .unwrap();
            assert_eq!(
                row.get::<_, Option<String>>(1).as_deref(),
                Some("1800000000000000009"),
                "the ledger's column still holds the post's id"
            );
            row.get(0)
        }
    };
    let stored: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(
        (stored["post_id"].as_str(), stored.get("tweet_id")),
        (Some("1800000000000000009"), None),
        "{raw}"
    );
    helpers::cleanup(kind, &p.prefix).await;
}

/// The identities of one listing version: the page's id `source`, the key `k`, and the key a
/// day either side (as `Identities::of` gives them for a dated match).
fn version(source: &str, k: &str) -> Identities {
    let (date, rest) = k.split_once('_').expect("a dated key");
    let date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").expect("a date");
    let day = |d: i64| key(&format!("{}_{rest}", date + chrono::Duration::days(d)));
    Identities {
        key: key(k),
        ids: vec![id(source), Identity::of_key(&key(k))],
        other_keys: vec![day(-1), day(1)],
        facts: None,
        rivals: Vec::new(),
    }
}

async fn a_claim_holds_its_match_through_every_identity_and_records_new_ones(kind: Kind) {
    let p = pair(kind).await;
    let first = version("site:1", "2026-07-17_a-v-b_2nd");
    let MatchClaim::Won(token) = p.a.claim_match(&first, "A v B", DAY, DAY, false).await.unwrap() else {
        panic!("the first claim wins")
    };
    p.a.transition(&token, &posted("9")).await.unwrap();
    // Same page id, every other word changed: held through the page's id.
    let renamed = version("site:1", "2026-07-20_c-v-d_final");
    match p.b.claim_match(&renamed, "C v D", DAY, DAY, false).await.unwrap() {
        MatchClaim::Held { key: k, claim, via, .. } => {
            assert_eq!((k.as_str(), via.as_str()), ("2026-07-17_a-v-b_2nd", "site:1"));
            assert_eq!((claim.state, claim.owner.as_str()), (ClaimState::Posted, "worker-a"));
            assert_eq!(
                claim.aliases,
                ["site:1", "key:2026-07-17_a-v-b_2nd", "key:2026-07-20_c-v-d_final"],
                "the new key is recorded in the record"
            );
        }
        other => panic!("held, not {other:?}"),
    }
    // Another site, no shared id, the start a day later: held through the key a day before,
    // and through the renamed key recorded just now.
    let other_site = version("other:7", "2026-07-18_a-v-b_2nd");
    let MatchClaim::Held { via, .. } = p.b.claim_match(&other_site, "A v B", DAY, DAY, false).await.unwrap() else {
        panic!("held through the key a day before")
    };
    assert_eq!(via, "key:2026-07-17_a-v-b_2nd");
    let by_key = version("x:0", "2026-07-21_c-v-d_final");
    let MatchClaim::Held { key: k, via, .. } = p.a.claim_match(&by_key, "C v D", DAY, DAY, false).await.unwrap() else {
        panic!("held through a recorded key")
    };
    assert_eq!(
        (k.as_str(), via.as_str()),
        ("2026-07-17_a-v-b_2nd", "key:2026-07-20_c-v-d_final")
    );
    let (k, claim) = p.a.peek_identity(&id("other:7")).await.unwrap().expect("recorded");
    assert_eq!((k.as_str(), claim.state), ("2026-07-17_a-v-b_2nd", ClaimState::Posted));
    // The record's state was never overwritten by those additions.
    assert_eq!(
        p.a.peek(&key("2026-07-17_a-v-b_2nd"))
            .await
            .unwrap()
            .unwrap()
            .post_id
            .as_deref(),
        Some("9")
    );
    // A released claim's identities point at nothing: the next sighting wins anew.
    assert!(matches!(
        p.a.operator_release(&key("2026-07-17_a-v-b_2nd"), true, DAY)
            .await
            .unwrap(),
        OperatorRelease::Released(_)
    ));
    assert!(matches!(
        p.b.claim_match(&renamed, "C v D", DAY, DAY, false).await.unwrap(),
        MatchClaim::Won(_)
    ));
    helpers::cleanup(kind, &p.prefix).await;
}

/// Ten stores of `kind` on one prefix (one SQLite file), each its own connection as a
/// separate process would have: the stores, their prefix and what keeps the file alive.
async fn ten_stores(kind: Kind) -> (Vec<ClaimStore>, helpers::Prefix, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.db");
    let prefix = unique_prefix();
    let mut stores = Vec::new();
    for i in 0..10 {
        stores.push(store(kind, &prefix, &format!("worker-{i}"), &file).await);
    }
    (stores, prefix, dir)
}

async fn ten_concurrent_claims_of_ten_versions_of_one_listing_have_one_winner(kind: Kind) {
    let (stores, prefix, _dir) = ten_stores(kind).await;
    // Every store connected first, then all ten claims released at one instant.
    let start = Arc::new(tokio::sync::Barrier::new(10));
    let mut tasks = Vec::new();
    for (i, s) in stores.into_iter().enumerate() {
        // Ten versions of one listing: the page's id in common, keys all different.
        let ids = version("site:42", &format!("2026-07-{:02}_a-v-b_v{i}", 10 + i));
        let start = Arc::clone(&start);
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            s.claim_match(&ids, "A v B", DAY, DAY, false).await.unwrap()
        }));
    }
    let (mut won, mut held) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            MatchClaim::Won(_) => won += 1,
            MatchClaim::Held { via, .. } => {
                assert_eq!(via, "site:42");
                held += 1;
            }
            MatchClaim::NoMarker => panic!("no marker was asked for"),
        }
    }
    assert_eq!((won, held), (1, 9));
    helpers::cleanup(kind, &prefix).await;
}

async fn a_claim_that_requires_the_marker_takes_nothing_without_it(kind: Kind) {
    let p = pair(kind).await;
    let ids = version("site:1", "2026-07-17_a-v-b_2nd");
    assert!(matches!(
        p.a.claim_match(&ids, "A v B", DAY, DAY, true).await.unwrap(),
        MatchClaim::NoMarker
    ));
    assert!(p.a.list().await.unwrap().is_empty(), "nothing claimed");
    assert_eq!(p.a.peek_identity(&id("site:1")).await.unwrap(), None);
    p.a.initialise(MarkerOrigin::Seed, DAY).await.unwrap();
    assert!(matches!(
        p.a.claim_match(&ids, "A v B", DAY, DAY, true).await.unwrap(),
        MatchClaim::Won(_)
    ));
    helpers::cleanup(kind, &p.prefix).await;
}

/// Claims per channel: one per (match, channel), race-free per channel, each channel with its
/// own first-start marker, and nothing of one channel visible to another or to the base store.
async fn each_channel_claims_a_match_once_and_a_claim_on_one_never_holds_another(kind: Kind) {
    let p = pair(kind).await;
    let ids = version("site:1", "2026-07-17_a-v-b_2nd");
    let (mastodon_a, mastodon_b, x) = (
        p.a.for_channel("mastodon"),
        p.b.for_channel("mastodon"),
        p.b.for_channel("x"),
    );
    mastodon_a.initialise(MarkerOrigin::Seed, DAY).await.unwrap();
    assert!(x.marker().await.unwrap().is_none(), "a channel's marker is its own");
    assert!(p.a.marker().await.unwrap().is_none());
    // Ten claims of one match on one channel at once: one winner.
    let racers: Vec<_> = (0..10)
        .map(|i| {
            let s = if i % 2 == 0 {
                mastodon_a.clone()
            } else {
                mastodon_b.clone()
            };
            let ids = ids.clone();
            tokio::spawn(async move { s.claim_match(&ids, "A v B", DAY, DAY, true).await.unwrap() })
        })
        .collect();
    let mut won = 0;
    for r in racers {
        if matches!(r.await.unwrap(), MatchClaim::Won(_)) {
            won += 1;
        }
    }
    assert_eq!(won, 1);
    // Another channel, and the base store, see the match free.
    assert!(matches!(
        x.claim_match(&ids, "A v B", DAY, DAY, false).await.unwrap(),
        MatchClaim::Won(_)
    ));
    assert!(p.a.find(&ids).await.unwrap().is_none());
    assert_eq!(p.a.list().await.unwrap().len(), 0);
    assert_eq!(mastodon_b.list().await.unwrap().len(), 1);
    assert_eq!(x.list().await.unwrap().len(), 1);
    assert_eq!(
        mastodon_b
            .peek_identity(&id("site:1"))
            .await
            .unwrap()
            .map(|(k, c)| (k, c.owner))
            .unwrap()
            .0,
        key("2026-07-17_a-v-b_2nd")
    );
    // The base prefix's clean-up removes every channel's keys (and the schema) with it.
    helpers::cleanup(kind, &p.prefix).await;
}

/// Each holder of a look-up as (state, owner), `None` where no claim is held.
fn states_and_owners(found: &[Option<Holder>]) -> Vec<Option<(ClaimState, &str)>> {
    found.iter().map(|h| h.as_ref().map(|h| (h.state, &*h.owner))).collect()
}

/// Remembering the last look-up's records must never show a holder the store no longer has:
/// after each change, `holders_since` answers exactly what a fresh `holders` answers.
async fn a_look_up_since_the_last_one_reads_what_changed_as_a_fresh_look_up_does(kind: Kind) {
    let p = pair(kind).await;
    let (moving, replaced, free) = (key("k-posted"), key("k-replaced"), key("k-free"));
    let keys = [&moving, &replaced, &free];
    let posting = claim_key(&p.a, &moving, "A v B", DAY, DAY).await.won();
    let leaving = claim_key(&p.a, &replaced, "C v D", DAY, DAY).await.won();
    let mut last = LastRecords::default();
    let first = p.b.holders_since(&keys, None, &mut last).await.unwrap();
    assert_eq!(first, p.b.holders(&keys, None).await.unwrap());
    assert_eq!(last.len(), 2);
    // Read again unchanged: the same answer.
    assert_eq!(p.b.holders_since(&keys, None, &mut last).await.unwrap(), first);

    // One record moves on (posted), the other is released and won by another owner.
    let posted_change = posted("42");
    assert!(matches!(
        p.a.transition(&posting, &posted_change).await.unwrap(),
        Checked::Applied(_)
    ));
    assert!(matches!(p.a.release(&leaving).await.unwrap(), Checked::Applied(_)));
    let _ = claim_key(&p.b, &replaced, "C v D", DAY, DAY).await.won();
    let after = p.b.holders_since(&keys, None, &mut last).await.unwrap();
    assert_eq!(after, p.b.holders(&keys, None).await.unwrap());
    assert_eq!(
        states_and_owners(&after),
        vec![
            Some((ClaimState::Posted, "worker-a")),
            Some((ClaimState::Claimed, "worker-b")),
            None
        ]
    );
    // Only this look-up's records are kept: what the next one can reuse.
    assert_eq!(last.len(), 2);
    // The same keys in another order (a listing that changed): each record is compared with
    // the one read at its place, which differs, so it is parsed again, never taken for another.
    let reordered = [&free, &replaced, &moving];
    let shuffled = p.b.holders_since(&reordered, None, &mut last).await.unwrap();
    assert_eq!(shuffled, p.b.holders(&reordered, None).await.unwrap());
    assert_eq!(
        states_and_owners(&shuffled),
        vec![
            None,
            Some((ClaimState::Claimed, "worker-b")),
            Some((ClaimState::Posted, "worker-a"))
        ]
    );
    // Look-up after look-up of other keys, the memory never grows past one look-up's records.
    let mut bounded = LastRecords::default();
    let mut largest = 0;
    for round in 0..80 {
        let change = posted(&format!("{round}"));
        let t = claim_key(&p.a, &key(&format!("k-round-{round}")), "E v F", DAY, DAY)
            .await
            .won();
        assert!(matches!(
            p.a.transition(&t, &change).await.unwrap(),
            Checked::Applied(_)
        ));
        let round_key = key(&format!("k-round-{round}"));
        let found = p.b.holders_since(&[&round_key], None, &mut bounded).await.unwrap();
        assert_eq!(found, p.b.holders(&[&round_key], None).await.unwrap());
        largest = largest.max(bounded.len());
    }
    assert_eq!(largest, 1);
}

async fn a_claim_left_claimed_past_the_post_timeout_is_stuck_and_only_then_released_by_an_operator(kind: Kind) {
    let p = pair(kind).await;
    let (stuck, healthy) = (key("stuck-1"), key("posted-1"));
    // The record carries its owner's deadline (the post timeout it claimed with), and that,
    // not the reader's bound, makes it stuck: the same second for both here.
    let stuck_after = Duration::from_secs(1);
    let _dead_worker = claim_key(&p.a, &stuck, "A v B", DAY, stuck_after).await.won();
    let t = claim_key(&p.a, &healthy, "C v D", DAY, stuck_after).await.won();
    p.a.transition(&t, &posted("9")).await.unwrap();
    let fresh = p.b.list().await.unwrap();
    assert!(fresh
        .iter()
        .all(|l| l.claim.display_state(chrono::Utc::now(), stuck_after).as_str() != "stuck"));
    assert!(matches!(
        p.b.operator_release(&stuck, false, stuck_after).await.unwrap(),
        OperatorRelease::Refused(_)
    ));
    // Two seconds later: time is moved, not waited for. The store's clock judges (a replica's
    // clock ahead changes nothing, tests/it/skew.rs), so the test's own clock stands in for it.
    let later = p.b.with_clock(Clock::manual(
        chrono::Utc::now() + chrono::TimeDelta::milliseconds(2_100),
    ));
    let now = later.clock().now();
    let states: Vec<_> = later
        .list()
        .await
        .unwrap()
        .iter()
        .map(|l| (l.key.to_string(), l.claim.display_state(now, stuck_after).as_str()))
        .collect();
    assert_eq!(
        states,
        vec![("posted-1".to_string(), "posted"), ("stuck-1".to_string(), "stuck")]
    );
    assert!(matches!(
        later.operator_release(&stuck, false, stuck_after).await.unwrap(),
        OperatorRelease::Released(_)
    ));
    assert_eq!(later.peek(&stuck).await.unwrap(), None);
    assert!(
        matches!(later.operator_release(&healthy, false, stuck_after).await.unwrap(), OperatorRelease::Refused(ref c) if c.state == ClaimState::Posted)
    );
    assert!(matches!(
        later.operator_release(&healthy, true, stuck_after).await.unwrap(),
        OperatorRelease::Released(_)
    ));
    assert!(matches!(
        later.operator_release(&healthy, true, stuck_after).await.unwrap(),
        OperatorRelease::Absent
    ));
}

async fn initialising_is_a_claim_and_a_lost_marker_is_detected(kind: Kind) {
    let p = pair(kind).await;
    assert_eq!(p.a.marker().await.unwrap(), None);
    assert!(
        !p.a.refresh_marker(DAY).await.unwrap(),
        "no marker to refresh on a new store"
    );
    let (ra, rb) = tokio::join!(
        p.a.initialise(MarkerOrigin::Seed, DAY),
        p.b.initialise(MarkerOrigin::Seed, DAY)
    );
    let (ma, wa) = ra.unwrap();
    let (mb, wb) = rb.unwrap();
    assert!(wa ^ wb, "exactly one initialiser wins");
    assert_eq!(ma, mb, "both see the winner's marker");
    assert!(p.b.refresh_marker(DAY).await.unwrap());
    if kind == Kind::Redis {
        let mut conn = raw_redis().await;
        let _: () = redis::cmd("DEL")
            .arg(format!("{}store:initialised", p.prefix))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(!p.a.refresh_marker(DAY).await.unwrap(), "a lost marker is seen");
    }
}

async fn the_first_claim_wins_and_the_loser_sees_holder_since_and_state(kind: Kind) {
    let p = pair(kind).await;
    let k = key("2026-07-17_bangladesh-v-zimbabwe_2nd-t20i");
    let token = claim_key(&p.a, &k, "Zimbabwe v Bangladesh", DAY, DAY).await.won();
    assert_eq!(token.claim().owner, "worker-a");
    let holder = claim_key(&p.b, &k, "Zimbabwe v Bangladesh", DAY, DAY).await.held();
    assert_eq!(holder.owner, "worker-a");
    assert_eq!(holder.state, ClaimState::Claimed);
    assert_eq!(holder.claimed_at, token.claim().claimed_at);
    assert_eq!(holder.title.as_deref(), Some("Zimbabwe v Bangladesh"));
    let ttl = p.a.ttl(&k).await.unwrap().unwrap();
    assert!(ttl > DAY - Duration::from_secs(5) && ttl <= DAY, "ttl {ttl:?}");
}

async fn a_transition_with_our_token_changes_the_state_and_keeps_the_ttl(kind: Kind) {
    let p = pair(kind).await;
    let k = key("k1");
    let token = claim_key(&p.a, &k, "A v B", DAY, DAY).await.won();
    let change = posted("42");
    let Checked::Applied(after) = p.a.transition(&token, &change).await.unwrap() else {
        panic!("must apply")
    };
    assert_eq!(after.state, ClaimState::Posted);
    let seen = p.b.peek(&k).await.unwrap().unwrap();
    assert_eq!(
        (seen.state, seen.post_id.as_deref(), seen.owner.as_str()),
        (ClaimState::Posted, Some("42"), "worker-a")
    );
    let ttl = p.b.ttl(&k).await.unwrap().unwrap();
    assert!(ttl > DAY - Duration::from_secs(5) && ttl <= DAY, "ttl kept: {ttl:?}");
}

async fn a_wrong_token_can_neither_overwrite_nor_release_anothers_claim(kind: Kind) {
    let p = pair(kind).await;
    let k = key("k2");
    let stale = claim_key(&p.a, &k, "A v B", Duration::from_secs(1), DAY).await.won();
    // Its TTL runs out (moved, not waited for).
    helpers::lapse(kind, &p.prefix, &p._dir.path().join("claims.db"), &k).await;
    let _fresh = claim_key(&p.b, &k, "A v B", DAY, DAY).await.won();
    let change = Transition::Unknown { reason: "late".into() };
    let Checked::NotOurs(other) = p.a.transition(&stale, &change).await.unwrap() else {
        panic!("must refuse")
    };
    assert_eq!(other.owner, "worker-b");
    let Checked::NotOurs(_) = p.a.release(&stale).await.unwrap() else {
        panic!("must refuse")
    };
    let now = p.b.peek(&k).await.unwrap().unwrap();
    assert_eq!((now.owner.as_str(), now.state), ("worker-b", ClaimState::Claimed));
}

async fn a_released_claim_can_be_won_again(kind: Kind) {
    let p = pair(kind).await;
    let k = key("k3");
    let token = claim_key(&p.a, &k, "A v B", DAY, DAY).await.won();
    assert!(matches!(p.a.release(&token).await.unwrap(), Checked::Applied(_)));
    assert_eq!(p.a.peek(&k).await.unwrap(), None);
    assert!(matches!(p.a.release(&token).await.unwrap(), Checked::Gone));
    let _ = claim_key(&p.b, &k, "A v B", DAY, DAY).await.won();
}

async fn refreshing_extends_the_ttl_without_touching_the_record(kind: Kind) {
    let p = pair(kind).await;
    let k = key("k4");
    let _t = claim_key(&p.a, &k, "A v B", Duration::from_secs(100), DAY).await.won();
    let before = p.a.peek(&k).await.unwrap().unwrap();
    assert!(p.b.refresh(&k, DAY).await.unwrap());
    let ttl = p.a.ttl(&k).await.unwrap().unwrap();
    assert!(ttl > Duration::from_secs(100), "refreshed: {ttl:?}");
    assert_eq!(p.a.peek(&k).await.unwrap().unwrap(), before);
    assert!(!p.b.refresh(&key("absent"), DAY).await.unwrap());
}

async fn looking_up_holders_in_a_batch_reads_each_and_refreshes_only_held_ones_when_asked(kind: Kind) {
    let p = pair(kind).await;
    let (held, free) = (key("k-held"), key("k-free"));
    let _t = claim_key(&p.a, &held, "A v B", Duration::from_secs(100), DAY)
        .await
        .won();
    let record = p.a.peek(&held).await.unwrap().unwrap();
    assert!(p.b.holders(&[], Some(DAY)).await.unwrap().is_empty());

    // Without a refresh: the records as they are, nothing written.
    let found = p.b.holders(&[&free, &held, &free], None).await.unwrap();
    assert_eq!(found, vec![None, Some(Holder::from(&record)), None]);
    assert!(p.a.ttl(&held).await.unwrap().unwrap() <= Duration::from_secs(100));
    assert_eq!(p.a.peek(&free).await.unwrap(), None);

    // With one: the held claim's TTL is set again, its record untouched; a free key stays free.
    let found = p.b.holders(&[&held, &free], Some(DAY)).await.unwrap();
    assert_eq!(found, vec![Some(Holder::from(&record)), None]);
    let ttl = p.a.ttl(&held).await.unwrap().unwrap();
    assert!(ttl > Duration::from_secs(100), "refreshed: {ttl:?}");
    assert_eq!(p.a.peek(&held).await.unwrap().unwrap(), record);
    assert_eq!(p.a.peek(&free).await.unwrap(), None);
    assert_eq!(p.a.list().await.unwrap().len(), 1);
}

async fn peeking_writes_nothing(kind: Kind) {
    let p = pair(kind).await;
    let k = key("k5");
    assert_eq!(p.a.peek(&k).await.unwrap(), None);
    assert!(p.a.list().await.unwrap().is_empty());
    if kind == Kind::Redis {
        assert!(keys(&p.prefix).await.is_empty());
    }
    if kind == Kind::Postgres {
        let db = raw_postgres(&schema_for(&p.prefix)).await;
        let rows: i64 = db
            .query_one(
                "SELECT (SELECT count(*) FROM claims) + (SELECT count(*) FROM store_keys)",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(rows, 0);
    }
}

async fn ten_concurrent_claims_on_separate_connections_have_one_winner(kind: Kind) {
    let (stores, prefix, _dir) = ten_stores(kind).await;
    let k = key("k6");
    let tasks: Vec<_> = stores
        .into_iter()
        .map(|s| {
            let k = k.clone();
            tokio::spawn(async move { claim_key(&s, &k, "A v B", DAY, DAY).await })
        })
        .collect();
    let mut winners = Vec::new();
    let mut holders = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            MatchClaim::Won(token) => winners.push(token.claim().owner.clone()),
            MatchClaim::Held { claim, .. } => holders.push(claim.owner),
            MatchClaim::NoMarker => panic!("no marker was asked for"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner");
    assert_eq!(holders.len(), 9);
    assert!(holders.iter().all(|h| *h == winners[0]), "every loser names the winner");
    helpers::cleanup(kind, &prefix).await;
}

async fn list_shows_every_claim_with_its_state(kind: Kind) {
    let p = pair(kind).await;
    let t1 = claim_key(&p.a, &key("m-1"), "A v B", DAY, DAY).await.won();
    let _t2 = claim_key(&p.b, &key("m-2"), "C v D", DAY, DAY).await.won();
    p.a.transition(
        &t1,
        &Transition::Unknown {
            reason: "timeout".into(),
        },
    )
    .await
    .unwrap();
    let listed = p.a.list().await.unwrap();
    let summary: Vec<_> = listed
        .iter()
        .map(|l| (l.key.as_str(), l.claim.state, l.claim.owner.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("m-1", ClaimState::Unknown, "worker-a"),
            ("m-2", ClaimState::Claimed, "worker-b")
        ]
    );
    assert!(listed
        .iter()
        .all(|l| l.ttl.is_some_and(|t| t <= DAY && t > Duration::ZERO)));
}

#[tokio::test]
async fn a_foreign_value_at_a_claim_key_reads_as_held_never_as_free() {
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}match:legacy"))
        .arg("1")
        .arg("EX")
        .arg(600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let s = store(Kind::Redis, &prefix, "worker-a", std::path::Path::new("")).await;
    let c = claim_key(&s, &key("legacy"), "A v B", DAY, DAY).await.held();
    assert_eq!(c.state, ClaimState::Unknown);
    assert_eq!(c.owner, "(unreadable record)");
    let _ = helpers::root();
}

/// A value that is not even text (not UTF-8) at one claim key reads as an unreadable holder:
/// it neither reads as free nor fails the batch look-up for every other match of the cycle,
/// nor the operator's commands.
#[tokio::test]
async fn a_binary_value_at_a_claim_key_reads_as_held_and_the_batch_still_answers() {
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}match:binary"))
        .arg(&b"\xff\xfe\x00claim"[..])
        .arg("EX")
        .arg(600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let s = store(Kind::Redis, &prefix, "worker-a", std::path::Path::new("")).await;
    let _t = claim_key(&s, &key("normal"), "A v B", DAY, DAY).await.won();
    let (binary, normal, free) = (key("binary"), key("normal"), key("free"));
    let found = s.holders(&[&binary, &normal, &free], None).await.unwrap();
    assert_eq!(
        states_and_owners(&found),
        vec![
            Some((ClaimState::Unknown, "(unreadable record)")),
            Some((ClaimState::Claimed, "worker-a")),
            None
        ]
    );
    // The operator's commands read it too, as the unreadable record it is: shown, listed
    // with the others, and never deleted, even with force (there is no token to compare).
    let shown = s.peek(&binary).await.unwrap().unwrap();
    assert_eq!(
        (shown.state, shown.owner.as_str()),
        (ClaimState::Unknown, "(unreadable record)")
    );
    assert_eq!(s.list().await.unwrap().len(), 2);
    let stuck_after = Duration::from_secs(60);
    assert!(matches!(
        s.operator_release(&binary, true, stuck_after).await.unwrap(),
        OperatorRelease::NotARecord(_)
    ));
    assert!(s.peek(&binary).await.unwrap().is_some(), "left in place");
    // So is a foreign value that is text.
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}match:text"))
        .arg("just a string")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(matches!(
        s.operator_release(&key("text"), false, stuck_after).await.unwrap(),
        OperatorRelease::NotARecord(_)
    ));
}

/// Rows of `claims` for `match_key` in the test's schema: (id, state, owner).
async fn ledger_rows(prefix: &str, match_key: &str) -> Vec<(i64, String, String)> {
    let db = raw_postgres(&schema_for(prefix)).await;
    db.query(
        "SELECT id, state, owner FROM claims WHERE match_key = $1 ORDER BY id",
        &[&match_key],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2)))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sessions_claiming_at_the_same_instant_leave_one_row_and_two_losers_told_the_holder() {
    let prefix = unique_prefix();
    let mut stores = Vec::new();
    for i in 0..3 {
        stores.push(
            store(
                Kind::Postgres,
                &prefix,
                &format!("session-{i}"),
                std::path::Path::new(""),
            )
            .await,
        );
    }
    let start = Arc::new(tokio::sync::Barrier::new(3));
    let tasks: Vec<_> = stores
        .into_iter()
        .map(|s| {
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                claim_key(&s, &key("same-instant"), "A v B", DAY, DAY).await
            })
        })
        .collect();
    let (mut winners, mut holders) = (Vec::new(), Vec::new());
    for t in tasks {
        match t.await.unwrap() {
            MatchClaim::Won(token) => winners.push(token.claim().owner.clone()),
            MatchClaim::Held { claim, .. } => holders.push((claim.owner, claim.state)),
            MatchClaim::NoMarker => panic!("no marker was asked for"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner");
    let winner = winners[0].clone();
    assert_eq!(
        holders,
        vec![
            (winner.clone(), ClaimState::Claimed),
            (winner.clone(), ClaimState::Claimed)
        ]
    );
    let rows = ledger_rows(&prefix, "same-instant").await;
    assert_eq!(
        rows.iter()
            .map(|(_, s, o)| (s.as_str(), o.as_str()))
            .collect::<Vec<_>>(),
        vec![("claimed", winner.as_str())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_claim_stays_in_the_ledger_marked_released_with_its_history() {
    let prefix = unique_prefix();
    let a = store(Kind::Postgres, &prefix, "worker-a", std::path::Path::new("")).await;
    let b = store(Kind::Postgres, &prefix, "worker-b", std::path::Path::new("")).await;
    let k = key("kept");
    let token = claim_key(&a, &k, "A v B", DAY, DAY).await.won();
    assert!(matches!(a.release(&token).await.unwrap(), Checked::Applied(_)));
    assert_eq!(a.peek(&k).await.unwrap(), None);
    assert_eq!(a.ttl(&k).await.unwrap(), None);
    let released = ledger_rows(&prefix, "kept").await;
    assert_eq!(released.len(), 1, "the row is kept");
    assert_eq!(
        (released[0].1.as_str(), released[0].2.as_str()),
        ("released", "worker-a")
    );

    let again = claim_key(&b, &k, "A v B", DAY, DAY).await.won();
    b.transition(&again, &posted("99")).await.unwrap();
    let reclaimed = ledger_rows(&prefix, "kept").await;
    assert_eq!(
        reclaimed,
        vec![(released[0].0, "posted".to_string(), "worker-b".to_string())],
        "still one row per match, reused"
    );
    let db = raw_postgres(&schema_for(&prefix)).await;
    let events: Vec<(String, String, Option<String>)> = db
        .query(
            "SELECT state, owner, tweet_id FROM claim_events WHERE match_key = 'kept' ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        events,
        vec![
            ("claimed".to_string(), "worker-a".to_string(), None),
            ("released".to_string(), "worker-a".to_string(), None),
            ("claimed".to_string(), "worker-b".to_string(), None),
            ("posted".to_string(), "worker-b".to_string(), Some("99".to_string())),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_claim_reclaimed_by_a_later_sighting_is_logged_as_expired() {
    let prefix = unique_prefix();
    let a = store(Kind::Postgres, &prefix, "worker-a", std::path::Path::new("")).await;
    let b = store(Kind::Postgres, &prefix, "worker-b", std::path::Path::new("")).await;
    let k = key("lapsed");
    let _ = claim_key(&a, &k, "A v B", Duration::from_secs(1), DAY).await.won();
    helpers::lapse(Kind::Postgres, &prefix, std::path::Path::new(""), &k).await;
    let _ = claim_key(&b, &k, "A v B", DAY, DAY).await.won();
    let db = raw_postgres(&schema_for(&prefix)).await;
    let events: Vec<(String, String)> = db
        .query("SELECT state, owner FROM claim_events ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let expected = [
        ("claimed", "worker-a"),
        ("expired", "worker-a"),
        ("claimed", "worker-b"),
    ];
    assert_eq!(events, expected.map(|(s, o)| (s.to_string(), o.to_string())).to_vec());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_dies_after_claiming_leaves_a_committed_claim_listed_as_stuck() {
    let prefix = unique_prefix();
    let dying = store(Kind::Postgres, &prefix, "worker-dies", std::path::Path::new("")).await;
    let gives_up_after = Duration::from_secs(30);
    let _ = claim_key(&dying, &key("orphan"), "A v B", DAY, gives_up_after)
        .await
        .won();
    // The process ends between claim and post: its token and connections are gone.
    drop(dying);
    let operator = store(Kind::Postgres, &prefix, "operator", std::path::Path::new("")).await;
    let listed = operator.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    let later = chrono::Utc::now() + chrono::Duration::seconds(60);
    assert_eq!(
        (
            listed[0].key.as_str(),
            listed[0].claim.owner.as_str(),
            listed[0].claim.display_state(later, gives_up_after).as_str()
        ),
        ("orphan", "worker-dies", "stuck")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_survive_the_server_dropping_every_connection() {
    let prefix = unique_prefix();
    let schema = schema_for(&prefix);
    let a = store(Kind::Postgres, &prefix, "worker-a", std::path::Path::new("")).await;
    let b = store(Kind::Postgres, &prefix, "worker-b", std::path::Path::new("")).await;
    let k = key("reconnect");
    let token = claim_key(&a, &k, "A v B", DAY, DAY).await.won();
    let admin = raw_postgres(&schema).await;
    let killed: i64 = admin
        .query_one(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
             WHERE application_name = $1 AND pid <> pg_backend_pid()",
            &[&schema],
        )
        .await
        .unwrap()
        .get(0);
    assert!(killed >= 2, "both stores had a connection to drop: {killed}");
    let seen = a.peek(&k).await.unwrap().unwrap();
    assert_eq!((seen.owner.as_str(), seen.state), ("worker-a", ClaimState::Claimed));
    let holder = claim_key(&b, &k, "A v B", DAY, DAY).await.held();
    assert_eq!(holder.owner, "worker-a");
    let change = posted("7");
    assert!(matches!(
        a.transition(&token, &change).await.unwrap(),
        Checked::Applied(_)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_on_an_empty_schema_migrate_it_once() {
    let prefix = unique_prefix();
    let schema = schema_for(&prefix);
    helpers::ensure_schema(&schema).await;
    let url = helpers::schema_url(&schema);
    let (r1, r2, r3) = tokio::join!(
        PostgresClaims::connect(&url, &prefix, "r1"),
        PostgresClaims::connect(&url, &prefix, "r2"),
        PostgresClaims::connect(&url, &prefix, "r3"),
    );
    let errors: Vec<String> = [r1, r2, r3]
        .into_iter()
        .filter_map(|r| r.err().map(|e| e.to_string()))
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    let db = raw_postgres(&schema).await;
    let versions: Vec<i32> = db
        .query("SELECT version FROM refinery_schema_history ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, vec![1]);
}

#[tokio::test]
async fn an_unreachable_database_is_a_store_error_naming_the_step_never_a_claim() {
    let e = PostgresClaims::connect("postgres://postgres@127.0.0.1:1/test", "p:", "w")
        .await
        .err()
        .expect("nothing listens on port 1");
    assert!(matches!(e, ClaimError::Postgres { op: "connect", .. }), "{e}");
}
