//! The claims a reconciliation reads (issue 36): found through the index the claim step keeps,
//! on every store, never by walking the keyspace; records written before the index still
//! found; and batch reads in slices, so no one command holds Redis long.

use crate::helpers::{id, unique_prefix, Kind, OwnRedis, DAY};
use cricket_announcer::claim::{
    BatchRead, Checked, ClaimStore, ClaimToken, LastRecords, MarkerOrigin, MatchClaim, RedisClaims, Transition,
    READ_ROUND, READ_SLICE,
};
use cricket_announcer::cricket::{Identities, Identity, MatchKey};
use std::time::Duration;

/// The identities of the match `key`, seen as `site:<n>`.
fn match_ids(key: &str, n: usize) -> Identities {
    let key = MatchKey::parse(key).unwrap();
    Identities::known_by(key.clone(), vec![id(&format!("site:{n}")), Identity::of_key(&key)])
}

/// Wins the match `key` on `store`, its owner giving up after `gives_up_after`.
async fn won(store: &ClaimStore, key: &str, n: usize, gives_up_after: Duration) -> ClaimToken {
    match store
        .claim_match(&match_ids(key, n), "A v B", DAY, gives_up_after, false)
        .await
        .unwrap()
    {
        MatchClaim::Won(token) => token,
        other => panic!("{key} is won, not {other:?}"),
    }
}

/// The match keys of `found`, in order.
fn keys_of(found: &[(MatchKey, cricket_announcer::claim::Claim)]) -> Vec<String> {
    found.iter().map(|(k, _)| k.to_string()).collect()
}

/// Claims in every state on two channels and the base: one pass finds, for each, its `unknown`
/// claims and those `claimed` past their owner's deadline, and nothing else: not a claim in
/// flight, not one posted or released.
async fn reconciliation_finds_unknown_and_stuck_claims_through_the_index(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let base = crate::helpers::store(kind, &prefix, "worker-a", &dir.path().join("claims.db")).await;
    let (x, mastodon) = (base.for_channel("x"), base.for_channel("mastodon"));
    let second = Duration::from_secs(1);

    let unknown = won(&x, "2026-07-17_a-v-b", 1, DAY).await;
    let timed_out = Transition::Unknown {
        reason: "no answer".into(),
    };
    assert!(matches!(
        x.transition(&unknown, &timed_out).await.unwrap(),
        Checked::Applied(_)
    ));
    let _stuck = won(&x, "2026-07-17_c-v-d", 2, second).await;
    let _in_flight = won(&x, "2026-07-17_e-v-f", 3, DAY).await;
    let posted = won(&x, "2026-07-17_g-v-h", 4, second).await;
    let done = Transition::Posted {
        post_id: Some("1".into()),
        detail: None,
    };
    assert!(matches!(
        x.transition(&posted, &done).await.unwrap(),
        Checked::Applied(_)
    ));
    let released = won(&x, "2026-07-17_i-v-j", 5, second).await;
    assert!(matches!(x.release(&released).await.unwrap(), Checked::Applied(_)));
    let _other = won(&mastodon, "2026-07-17_c-v-d", 6, second).await;
    let _base = won(&base, "2026-07-17_k-v-l", 7, second).await;

    // Read as the store's clock will read a little later: the short deadlines have passed.
    let later = base.now().await.unwrap() + chrono::Duration::seconds(5);
    let found = base.unsettled_across(&[&x, &mastodon, &base], later).await.unwrap();
    assert_eq!(
        found.iter().map(|f| keys_of(f)).collect::<Vec<_>>(),
        [
            vec!["2026-07-17_a-v-b", "2026-07-17_c-v-d"],
            vec!["2026-07-17_c-v-d"],
            vec!["2026-07-17_k-v-l"],
        ]
    );
    // Each as its record says: the unknown one with the post's state, the stuck one claimed.
    assert_eq!(
        found[0].iter().map(|(_, c)| c.state.to_string()).collect::<Vec<_>>(),
        ["unknown", "claimed"]
    );
    // One channel's own look-up finds its own alone.
    assert_eq!(keys_of(&mastodon.unsettled(later).await.unwrap()), ["2026-07-17_c-v-d"]);
    // Now, before the short deadlines: only the unknown one is due.
    let now = base.now().await.unwrap() - chrono::Duration::seconds(5);
    assert!(keys_of(&x.unsettled(now).await.unwrap()).is_empty());

    if kind == Kind::Redis {
        // The index holds what is unsettled, in flight included (due at its deadline), and
        // neither the posted nor the released claim.
        let mut conn = crate::helpers::raw_redis().await;
        let members: Vec<String> = redis::cmd("ZRANGE")
            .arg(format!("{prefix}store:unsettled"))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .unwrap();
        let mut members: Vec<String> = members
            .into_iter()
            .map(|m| m.strip_prefix(prefix.as_str()).unwrap().to_string())
            .collect();
        members.sort();
        assert_eq!(
            members,
            [
                "ch:mastodon:match:2026-07-17_c-v-d",
                "ch:x:match:2026-07-17_a-v-b",
                "ch:x:match:2026-07-17_c-v-d",
                "ch:x:match:2026-07-17_e-v-f",
                "match:2026-07-17_k-v-l",
            ]
        );
    }
    if kind == Kind::Postgres {
        // Read through the partial index of the unsettled rows, whatever the ledger holds.
        let client = crate::helpers::raw_postgres(&crate::helpers::schema_for(&prefix)).await;
        let plan: Vec<String> = client
            .simple_query(&format!(
                "SET enable_seqscan = off; EXPLAIN SELECT record FROM claims WHERE state IN ('claimed', 'unknown') \
                 AND expires_at > now() AND starts_with(prefix, '{}')",
                &*prefix
            ))
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect();
        assert!(plan.iter().any(|l| l.contains("claims_unsettled")), "{plan:?}");
    }
    crate::helpers::cleanup(kind, &prefix).await;
}

crate::helpers::store_matrix!(reconciliation_finds_unknown_and_stuck_claims_through_the_index);

/// A claim that expired leaves its member in Redis' index; the reconciliation that reads it
/// takes it out, and leaves a claim written anew under the same key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_claim_leaves_the_index_when_read_and_a_new_one_stays() {
    let prefix = unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let base = crate::helpers::store(Kind::Redis, &prefix, "worker-a", &dir.path().join("x.db")).await;
    let _gone = won(&base, "2026-07-17_a-v-b", 1, Duration::from_secs(1)).await;
    let _kept = won(&base, "2026-07-17_c-v-d", 2, Duration::from_secs(1)).await;
    let key = MatchKey::parse("2026-07-17_a-v-b").unwrap();
    crate::helpers::lapse(Kind::Redis, &prefix, dir.path(), &key).await;
    let later = base.now().await.unwrap() + chrono::Duration::seconds(5);
    assert_eq!(keys_of(&base.unsettled(later).await.unwrap()), ["2026-07-17_c-v-d"]);
    let mut conn = crate::helpers::raw_redis().await;
    let score: Option<f64> = redis::cmd("ZSCORE")
        .arg(format!("{prefix}store:unsettled"))
        .arg(format!("{prefix}match:2026-07-17_a-v-b"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(score, None, "the expired claim left the index");
    // Claimed again: in the index again, and found once due.
    let _again = won(&base, "2026-07-17_a-v-b", 1, Duration::from_secs(1)).await;
    assert_eq!(
        keys_of(&base.unsettled(later).await.unwrap()),
        ["2026-07-17_a-v-b", "2026-07-17_c-v-d"]
    );
}

/// `INFO commandstats`' count of calls of `command` (lower case) since the last reset.
async fn calls(conn: &mut redis::aio::MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
    crate::helpers::command_stats_of(&info)
        .get(command)
        .copied()
        .unwrap_or(0)
}

/// A Redis holding 50,000 keys that are not the bot's, and claims written by an earlier release
/// (no member in the index): the first reconciliation of the deployment fills the index with
/// one scan of the deployment's keys and finds them; every later one finds what is unsettled
/// without any `SCAN`, claims won since included. A store that lost its data (no first-start
/// marker) gets nothing written: it is filled again once seeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_first_reconciliation_none_scans_and_claims_of_an_earlier_release_are_found() {
    let server = OwnRedis::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    for chunk in 0..50 {
        let mut pipe = redis::pipe();
        for i in 0..1_000 {
            pipe.cmd("SET").arg(format!("other:app:{chunk}:{i}")).arg("x").ignore();
        }
        let () = pipe.query_async(&mut conn).await.unwrap();
    }
    let base = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-a").await.unwrap());
    base.initialise(MarkerOrigin::Seed, DAY).await.unwrap();
    let x = base.for_channel("x");
    let stuck = won(&x, "2026-07-17_a-v-b", 1, Duration::from_secs(1)).await;
    let _in_flight = won(&x, "2026-07-17_c-v-d", 2, DAY).await;
    // As an earlier release left them: records, no index.
    let _: () = redis::cmd("DEL")
        .arg("bot:store:unsettled")
        .query_async(&mut conn)
        .await
        .unwrap();
    let later = base.now().await.unwrap() + chrono::Duration::seconds(5);

    // Without the deployment's first-start marker (a store that lost its data), the index is
    // filled but not marked: nothing is written to a wiped store.
    let _: () = redis::cmd("RENAME")
        .arg("bot:store:initialised")
        .arg("elsewhere")
        .query_async(&mut conn)
        .await
        .unwrap();
    let wiped = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-c").await.unwrap());
    let found = wiped.unsettled_across(&[&wiped.for_channel("x")], later).await.unwrap();
    assert_eq!(keys_of(&found[0]), ["2026-07-17_a-v-b"]);
    let marked: bool = redis::cmd("EXISTS")
        .arg("bot:store:initialised")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!marked, "no marker written to a wiped store");
    let _: () = redis::cmd("RENAME")
        .arg("elsewhere")
        .arg("bot:store:initialised")
        .query_async(&mut conn)
        .await
        .unwrap();

    // A process of this release reconciles first: one scan fills the index.
    let first = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-b").await.unwrap());
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    let found = first.unsettled_across(&[&first.for_channel("x")], later).await.unwrap();
    assert_eq!(keys_of(&found[0]), ["2026-07-17_a-v-b"]);
    assert!(
        calls(&mut conn, "scan").await > 0,
        "the first reconciliation fills the index"
    );
    let marker = base.marker().await.unwrap().unwrap();
    assert!(marker.unsettled_indexed, "{marker:?}");
    assert_eq!(marker.how, MarkerOrigin::Seed, "the marker otherwise as it was");
    let ttl: i64 = redis::cmd("TTL")
        .arg("bot:store:initialised")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(ttl > 0, "the marker keeps its TTL");

    // Every later one, in this process or another, reads the index alone.
    let _unknown = {
        let token = won(&x, "2026-07-17_e-v-f", 3, DAY).await;
        let timed_out = Transition::Unknown {
            reason: "no answer".into(),
        };
        assert!(matches!(
            x.transition(&token, &timed_out).await.unwrap(),
            Checked::Applied(_)
        ));
        token
    };
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    for reader in [&first, &base] {
        let found = reader
            .unsettled_across(&[&reader.for_channel("x")], later)
            .await
            .unwrap();
        assert_eq!(keys_of(&found[0]), ["2026-07-17_a-v-b", "2026-07-17_e-v-f"]);
    }
    assert_eq!(
        calls(&mut conn, "scan").await,
        0,
        "no SCAN after the first reconciliation"
    );
    assert_eq!(calls(&mut conn, "keys").await, 0);
    // Settled, it leaves the index: the next reads it no more.
    let posted = Transition::Posted {
        post_id: Some("1".into()),
        detail: None,
    };
    let read = x
        .peek(&MatchKey::parse("2026-07-17_a-v-b").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        x.settle(stuck.key(), &read, &posted).await.unwrap(),
        Checked::Applied(_)
    ));
    let found = base.unsettled_across(&[&x], later).await.unwrap();
    assert_eq!(keys_of(&found[0]), ["2026-07-17_e-v-f"]);
}

/// A fresh deployment: the process that starts it finds no marker, fills the index (nothing
/// to add) and then writes the marker, which says the index is filled; so no later start or
/// reconciliation scans for claims of an earlier release it never had (a new user saw `claims
/// reconcile` right after `backfill --init-store` log "indexed the unsettled claims written
/// before this release").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_deployments_marker_says_its_index_is_filled_so_nothing_scans_after() {
    let server = OwnRedis::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let starter = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-a").await.unwrap());
    assert_eq!(
        starter.index_unsettled().await.unwrap(),
        None,
        "no marker: filled, not marked"
    );
    let (marker, wrote) = starter.initialise(MarkerOrigin::InitStore, DAY).await.unwrap();
    assert!(wrote && marker.unsettled_indexed, "{marker:?}");
    // A channel's own marker is not the deployment's: it never says so.
    let (channel_marker, _) = starter
        .for_channel("x")
        .initialise(MarkerOrigin::InitStore, DAY)
        .await
        .unwrap();
    assert!(!channel_marker.unsettled_indexed, "{channel_marker:?}");
    let x = starter.for_channel("x");
    let _in_flight = won(&x, "2026-07-17_a-v-b", 1, Duration::from_secs(1)).await;
    let later = starter.now().await.unwrap() + chrono::Duration::seconds(5);

    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    let next = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-b").await.unwrap());
    assert_eq!(next.index_unsettled().await.unwrap(), None);
    let found = next.unsettled_across(&[&next.for_channel("x")], later).await.unwrap();
    assert_eq!(keys_of(&found[0]), ["2026-07-17_a-v-b"]);
    assert_eq!(calls(&mut conn, "scan").await, 0, "no SCAN on a fresh deployment");

    // A process that did not fill the index first (its marker may be older than claims it
    // cannot know of) writes a marker that does not say so.
    let _: () = redis::cmd("DEL")
        .arg("bot:store:initialised")
        .query_async(&mut conn)
        .await
        .unwrap();
    let unfilled = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-c").await.unwrap());
    let (marker, wrote) = unfilled.initialise(MarkerOrigin::Seed, DAY).await.unwrap();
    assert!(wrote && !marker.unsettled_indexed, "{marker:?}");
}

/// Every `MGET` of the last `SLOWLOG` entries (the server logs every command), as the number of
/// keys it named. A logged command keeps 32 arguments, the last of them saying how many more
/// there were.
async fn mget_sizes(conn: &mut redis::aio::MultiplexedConnection) -> Vec<usize> {
    let entries: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .query_async(conn)
        .await
        .unwrap();
    let mut sizes = Vec::new();
    for entry in entries {
        let redis::Value::Array(fields) = entry else { continue };
        let Some(redis::Value::Array(args)) = fields.get(3) else {
            continue;
        };
        let args: Vec<String> = args
            .iter()
            .map(|a| match a {
                redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        if !args.first().is_some_and(|c| c.eq_ignore_ascii_case("mget")) {
            continue;
        }
        let more = args
            .last()
            .and_then(|l| l.strip_prefix("... ("))
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok());
        sizes.push(match more {
            Some(more) => args.len() - 2 + more,
            None => args.len() - 1,
        });
    }
    sizes.sort_unstable();
    sizes
}

/// A batch look-up of 2,500 keys (the cycle's, one channel; then two channels' together) reads
/// what one read of each key reads, in `MGET`s of at most [`READ_SLICE`] keys each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_reads_go_in_slices_and_read_what_one_read_of_each_key_reads() {
    let server = OwnRedis::start_with(&["--slowlog-log-slower-than", "0", "--slowlog-max-len", "1000"]);
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let base = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-a").await.unwrap());
    let (x, mastodon) = (base.for_channel("x"), base.for_channel("mastodon"));
    let keys: Vec<MatchKey> = (0..2_500)
        .map(|i| MatchKey::parse(&format!("2026-07-17_team-{i}-v-other")).unwrap())
        .collect();
    // Every third match claimed on x, every fifth on mastodon, as records.
    let mut pipe = redis::pipe();
    for (i, key) in keys.iter().enumerate() {
        let record = format!(
            r#"{{"state":"posted","owner":"host:{i}","token":"t{i}","claimed_at":"2026-07-17T10:00:00Z","updated_at":"2026-07-17T10:00:00Z"}}"#
        );
        if i % 3 == 0 {
            pipe.cmd("SET")
                .arg(format!("bot:ch:x:match:{key}"))
                .arg(&record)
                .ignore();
        }
        if i % 5 == 0 {
            pipe.cmd("SET")
                .arg(format!("bot:ch:mastodon:match:{key}"))
                .arg(&record)
                .ignore();
        }
    }
    let () = pipe.query_async(&mut conn).await.unwrap();
    let refs: Vec<&MatchKey> = keys.iter().collect();
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query_async(&mut conn).await.unwrap();

    let holders = x
        .holders_touching(&refs, &[], None, &mut LastRecords::default())
        .await
        .unwrap();
    assert_eq!(mget_sizes(&mut conn).await, [500, READ_SLICE, READ_SLICE]);
    assert_eq!(holders.len(), keys.len());
    for (i, (key, holder)) in keys.iter().zip(&holders).enumerate().step_by(97) {
        let one = x.peek(key).await.unwrap();
        assert_eq!(holder.is_some(), one.is_some(), "{key}");
        assert_eq!(holder.is_some(), i % 3 == 0, "{key}");
        if let (Some(holder), Some(one)) = (holder, one) {
            assert_eq!(&*holder.owner, one.owner.as_str(), "{key}");
        }
    }

    let _: () = redis::cmd("SLOWLOG").arg("RESET").query_async(&mut conn).await.unwrap();
    let (mut last_x, mut last_m) = (LastRecords::default(), LastRecords::default());
    let mut reads = [
        BatchRead {
            store: &x,
            keys: refs.clone(),
            renew: Vec::new(),
            touch: Vec::new(),
            refresh: None,
            last: &mut last_x,
        },
        BatchRead {
            store: &mastodon,
            keys: refs.clone(),
            renew: Vec::new(),
            touch: Vec::new(),
            refresh: None,
            last: &mut last_m,
        },
    ];
    let across = ClaimStore::holders_across(&mut reads).await.unwrap();
    assert_eq!(mget_sizes(&mut conn).await, [READ_SLICE; 5]);
    assert_eq!(across[0], holders);
    let held: Vec<bool> = across[1].iter().map(Option::is_some).collect();
    assert_eq!(held, (0..2_500).map(|i| i % 5 == 0).collect::<Vec<_>>());
}

/// A read across channels of more keys than one round trip asks for ([`READ_ROUND`]): three
/// channels of 20,000 keys each (the round's end falls inside the third channel's keys) read
/// what each channel's own read reads, every holder at its place and with its channel's owner,
/// and a second read (every record unchanged, reused from the first) reads the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_across_channels_longer_than_a_round_reads_each_key_at_its_place() {
    const PER_CHANNEL: usize = 20_000;
    const { assert!(3 * PER_CHANNEL > READ_ROUND && 2 * PER_CHANNEL < READ_ROUND) };
    let server = OwnRedis::start();
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let base = ClaimStore::Redis(RedisClaims::connect(&server.url(), "bot:", "worker-a").await.unwrap());
    let names = ["x", "mastodon", "bluesky"];
    let stores: Vec<ClaimStore> = names.iter().map(|n| base.for_channel(n)).collect();
    let keys: Vec<MatchKey> = (0..PER_CHANNEL)
        .map(|i| MatchKey::parse(&format!("2026-07-17_team-{i}-v-other")).unwrap())
        .collect();
    // Channel c holds every (c + 2)th match, owned by `host:c`.
    let mut pipe = redis::pipe();
    for (c, name) in names.iter().enumerate() {
        for (i, key) in keys.iter().enumerate().filter(|(i, _)| i % (c + 2) == 0) {
            pipe.cmd("SET")
                .arg(format!("bot:ch:{name}:match:{key}"))
                .arg(format!(
                    r#"{{"state":"posted","owner":"host:{c}","token":"t{i}","claimed_at":"2026-07-17T10:00:00Z","updated_at":"2026-07-17T10:00:00Z"}}"#
                ))
                .ignore();
        }
    }
    let () = pipe.query_async(&mut conn).await.unwrap();
    let refs: Vec<&MatchKey> = keys.iter().collect();
    let mut lasts: Vec<LastRecords> = names.iter().map(|_| LastRecords::default()).collect();
    let mut first = Vec::new();
    for round in 0..2 {
        let mut reads: Vec<BatchRead<'_>> = stores
            .iter()
            .zip(lasts.iter_mut())
            .map(|(store, last)| BatchRead {
                store,
                keys: refs.clone(),
                renew: Vec::new(),
                touch: Vec::new(),
                refresh: None,
                last,
            })
            .collect();
        let across = ClaimStore::holders_across(&mut reads).await.unwrap();
        assert_eq!(across.len(), 3);
        for (c, holders) in across.iter().enumerate() {
            assert_eq!(holders.len(), PER_CHANNEL);
            for (i, holder) in holders.iter().enumerate() {
                match holder {
                    Some(h) => {
                        assert_eq!(i % (c + 2), 0, "channel {c}, key {i}");
                        assert_eq!(&*h.owner, format!("host:{c}"), "channel {c}, key {i}");
                    }
                    None => assert_ne!(i % (c + 2), 0, "channel {c}, key {i}"),
                }
            }
        }
        if round == 0 {
            let own = stores[2]
                .holders_touching(&refs, &[], None, &mut LastRecords::default())
                .await
                .unwrap();
            assert_eq!(across[2], own);
            first = across;
        } else {
            assert_eq!(across, first);
        }
    }
    let held: Vec<usize> = lasts.iter().map(LastRecords::len).collect();
    assert_eq!(held, [10_000, 6_667, 5_000]);
}
