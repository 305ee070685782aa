//! Reconciliation at a sports desk's scale (issue 36): what reading the claims to settle costs,
//! by a scan of every channel's keys (what `reconcile` did up to this release, kept as
//! `ClaimStore::list`, one per channel) beside the index of unsettled claims (one pass for
//! every channel), on one Redis; and the cycle's batch read of every claim, as `MGET`s of at
//! most `READ_SLICE` keys, beside one `MGET` of them all (what the batch read sent before).
//!
//! Writes `MATCHES` × `CHANNELS` settled claims (records as `seed` leaves them, written in
//! pipelined `SET`s, not through the claim step: only their number matters here), `UNSETTLED`
//! claims per channel through the claim step (each made `unknown`, so the index holds them),
//! and `FOREIGN` keys that are not the bot's, under a fresh key prefix; then measures each read
//! `ROUNDS` times and keeps the fastest, with the Redis commands it sent (`INFO
//! commandstats`), and the longest single command (`SLOWLOG`, from 200 µs). Removes what it
//! wrote.
//!
//! Usage: `cargo build --release --example reconcile`, then
//! `target/release/examples/reconcile REDIS_URL MATCHES CHANNELS [UNSETTLED] [FOREIGN] [ROUNDS]`
//! against a Redis of its own (`bench/reconcile.sh` starts one): it resets the server's
//! statistics and slow log. Prints one JSON object.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    unreachable_pub
)]

use cricket_announcer::claim::{
    BatchRead, Checked, ClaimStore, LastRecords, MarkerOrigin, MatchClaim, RedisClaims, Transition,
};
use cricket_announcer::cricket::{Identities, Identity, MatchKey};
use std::time::{Duration, Instant};

const DAY: Duration = Duration::from_secs(86_400);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).expect("REDIS_URL").clone();
    let arg = |i: usize, default: usize| args.get(i).map_or(default, |a| a.parse().unwrap());
    let (matches, channels, unsettled, foreign, rounds) = (arg(2, 5_000), arg(3, 20), arg(4, 5), arg(5, 0), arg(6, 3));
    let prefix = format!("bench:{}:", uuid::Uuid::new_v4().simple());
    let client = redis::Client::open(url.as_str()).unwrap();
    // Generous: one MGET of every key is measured too, and a loaded machine is slow.
    let patient = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(120)));
    let mut raw = client
        .get_multiplexed_async_connection_with_config(&patient)
        .await
        .unwrap();
    let base = ClaimStore::Redis(RedisClaims::connect(&url, &prefix, "bench:1").await.unwrap());
    base.initialise(MarkerOrigin::Seed, DAY).await.unwrap();
    let names: Vec<String> = (0..channels).map(|c| format!("c{c}")).collect();
    let stores: Vec<ClaimStore> = names.iter().map(|n| base.for_channel(n)).collect();
    let keys: Vec<MatchKey> = (0..matches)
        .map(|i| MatchKey::parse(&format!("2026-07-17_team-{i}-v-other-{i}")).unwrap())
        .collect();

    // The settled claims, as seeded records.
    let record = r#"{"state":"seeded","owner":"bench:0","token":"t","claimed_at":"2026-07-17T10:00:00Z","updated_at":"2026-07-17T10:00:00Z","title":"Team v Other","aliases":["site:1"]}"#;
    for name in &names {
        for chunk in keys.chunks(5_000) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("SET")
                    .arg(format!("{prefix}ch:{name}:match:{key}"))
                    .arg(record)
                    .arg("EX")
                    .arg(DAY.as_secs())
                    .ignore();
            }
            let () = pipe.query_async(&mut raw).await.unwrap();
        }
    }
    // The unsettled ones, through the claim step.
    for store in &stores {
        for u in 0..unsettled {
            let key = MatchKey::parse(&format!("2026-07-18_unsettled-{u}-v-x")).unwrap();
            let ids = Identities::known_by(key.clone(), vec![Identity::of_key(&key)]);
            let MatchClaim::Won(token) = store.claim_match(&ids, "U v X", DAY, DAY, false).await.unwrap() else {
                panic!("won")
            };
            let unknown = Transition::Unknown { reason: "bench".into() };
            assert!(matches!(
                store.transition(&token, &unknown).await.unwrap(),
                Checked::Applied(_)
            ));
        }
    }
    let foreign_prefix = format!("{prefix}-foreign:");
    for chunk in (0..foreign).collect::<Vec<_>>().chunks(5_000) {
        let mut pipe = redis::pipe();
        for i in chunk {
            pipe.cmd("SET").arg(format!("{foreign_prefix}{i}")).arg("x").ignore();
        }
        let () = pipe.query_async(&mut raw).await.unwrap();
    }
    let dbsize: u64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    let now = base.now().await.unwrap() + chrono::Duration::seconds(1);
    let refs: Vec<&ClaimStore> = stores.iter().collect();

    // The one-time fill of the index (a deployment of an earlier release): one scan.
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}store:unsettled"))
        .query_async(&mut raw)
        .await
        .unwrap();
    let (url_ref, prefix_ref, stores_ref, refs_ref, base_ref) = (&url, &prefix, &stores, &refs, &base);
    let fill = measure(&mut raw, 1, move || async move {
        let fresh = ClaimStore::Redis(RedisClaims::connect(url_ref, prefix_ref, "bench:2").await.unwrap());
        let filled = fresh.index_unsettled().await.unwrap();
        assert_eq!(filled, Some(channels * unsettled));
    })
    .await;

    let scan = measure(&mut raw, rounds, move || async move {
        let mut found = 0;
        for store in stores_ref {
            found += store
                .list()
                .await
                .unwrap()
                .iter()
                .filter(|l| l.claim.due().is_some())
                .count();
        }
        assert_eq!(found, channels * unsettled);
    })
    .await;
    let index = measure(&mut raw, rounds, move || async move {
        let found = base_ref.unsettled_across(refs_ref, now).await.unwrap();
        assert_eq!(found.iter().map(Vec::len).sum::<usize>(), channels * unsettled);
    })
    .await;

    // The held cycle's batch read of every claim: in slices, beside one MGET of all.
    let key_refs: Vec<&MatchKey> = keys.iter().collect();
    let key_refs = &key_refs;
    let sliced = measure(&mut raw, rounds, move || async move {
        let mut lasts: Vec<LastRecords> = (0..channels).map(|_| LastRecords::default()).collect();
        let mut reads: Vec<BatchRead<'_>> = stores_ref
            .iter()
            .zip(lasts.iter_mut())
            .map(|(store, last)| BatchRead {
                store,
                keys: key_refs.clone(),
                renew: Vec::new(),
                touch: Vec::new(),
                refresh: None,
                last,
            })
            .collect();
        let held = ClaimStore::holders_across(&mut reads).await.unwrap();
        assert!(held.iter().flatten().all(Option::is_some));
    })
    .await;
    let all_names: Vec<String> = names
        .iter()
        .flat_map(|n| keys.iter().map(move |k| format!("{prefix_ref}ch:{n}:match:{k}")))
        .collect();
    let (client_ref, names_ref) = (&client, &all_names);
    let single = measure(&mut raw, rounds, move || async move {
        let patient = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(120)));
        let mut conn = client_ref
            .get_multiplexed_async_connection_with_config(&patient)
            .await
            .unwrap();
        let values: Vec<Option<Vec<u8>>> = redis::cmd("MGET").arg(names_ref).query_async(&mut conn).await.unwrap();
        assert!(values.iter().all(Option::is_some));
    })
    .await;

    // Clean up: every key under the prefix, the foreign ones included.
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}*"))
            .arg("COUNT")
            .arg(10_000)
            .query_async(&mut raw)
            .await
            .unwrap();
        if !batch.is_empty() {
            let _: () = redis::cmd("UNLINK").arg(&batch).query_async(&mut raw).await.unwrap();
        }
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "matches": matches,
            "channels": channels,
            "claims": matches * channels,
            "unsettled": channels * unsettled,
            "foreign_keys": foreign,
            "dbsize": dbsize,
            "fill_once": fill,
            "reconcile_read_by_scan": scan,
            "reconcile_read_by_index": index,
            "batch_read_sliced": sliced,
            "batch_read_one_mget": single,
        })
    );
}

/// The commands `SLOWLOG` keeps: those of at least this many µs (a shorter longest command is
/// reported as 0).
const SLOW_US: u64 = 200;

/// Runs `f` `rounds` times: the fastest round's wall time (ms), the Redis commands it sent
/// (calls per command, and the server's mean µs per call, from `INFO commandstats`) and the
/// longest single command (µs, from `SLOWLOG`; 0 when none took [`SLOW_US`]).
async fn measure<F, Fut>(raw: &mut redis::aio::MultiplexedConnection, rounds: usize, mut f: F) -> serde_json::Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("slowlog-log-slower-than")
        .arg(SLOW_US)
        .query_async(raw)
        .await
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("slowlog-max-len")
        .arg(100_000)
        .query_async(raw)
        .await
        .unwrap();
    let mut best = f64::MAX;
    let mut commands = serde_json::Map::new();
    let mut per_call = serde_json::Map::new();
    let mut longest = (0u64, String::new());
    for _ in 0..rounds.max(1) {
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(raw).await.unwrap();
        let _: () = redis::cmd("SLOWLOG").arg("RESET").query_async(raw).await.unwrap();
        let started = Instant::now();
        f().await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let stats: String = redis::cmd("INFO").arg("commandstats").query_async(raw).await.unwrap();
        let log: Vec<(u64, u64, u64, Vec<String>)> = redis::cmd("SLOWLOG")
            .arg("GET")
            .arg(-1)
            .query_async::<Vec<redis::Value>>(raw)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|entry| {
                let redis::Value::Array(fields) = entry else {
                    return None;
                };
                let number = |i: usize| match fields.get(i) {
                    Some(redis::Value::Int(n)) => u64::try_from(*n).ok(),
                    _ => None,
                };
                let args = match fields.get(3) {
                    Some(redis::Value::Array(args)) => args
                        .iter()
                        .take(1)
                        .map(|a| match a {
                            redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                            other => format!("{other:?}"),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                Some((number(0)?, number(1)?, number(2)?, args))
            })
            .collect();
        if ms < best {
            best = ms;
            // `cmdstat_<name>:calls=…,usec=…,usec_per_call=…,…`; the measurement's own commands
            // are not the read's.
            let read: Vec<(String, u64, f64)> = stats
                .lines()
                .filter_map(|l| l.strip_prefix("cmdstat_"))
                .filter_map(|l| {
                    let (name, rest) = l.split_once(":calls=")?;
                    let calls: u64 = rest.split(',').next()?.parse().ok()?;
                    let mean: f64 = rest.split("usec_per_call=").nth(1)?.split(',').next()?.parse().ok()?;
                    let own = ["config", "slowlog", "info"]
                        .iter()
                        .any(|c| name.split('|').next() == Some(*c));
                    (!own).then(|| (name.to_string(), calls, mean))
                })
                .collect();
            commands = read.iter().map(|(n, calls, _)| (n.clone(), (*calls).into())).collect();
            per_call = read.iter().map(|(n, _, mean)| (n.clone(), (*mean).into())).collect();
            longest = log
                .iter()
                .filter(|(_, _, _, args)| {
                    let name = args.first().map(|c| c.to_ascii_lowercase()).unwrap_or_default();
                    !["slowlog", "config", "info"].contains(&name.as_str())
                })
                .map(|(_, _, us, args)| (*us, args.first().cloned().unwrap_or_default()))
                .max()
                .unwrap_or_default();
        }
    }
    serde_json::json!({
        "ms": (best * 10.0).round() / 10.0,
        "commands": commands,
        "usec_per_call": per_call,
        "longest_command_us": longest.0,
        "longest_command": longest.1,
    })
}
