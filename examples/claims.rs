//! Claim path: Redis commands and socket reads per sighting, and the time for 1,000 sightings,
//! through the code the bot runs. Against a dedicated Redis (`bench/run.sh` starts one on a free
//! port), counted from `INFO commandstats` / `INFO stats` deltas (the two `INFO` calls are
//! subtracted). `total_reads_processed` counts the server's socket reads: one per round trip for
//! a lone command; a large pipeline may take several reads.
//!
//! Rows:
//! - `cycle_new`: what `App::cycle` does with new matches: one batch look-up
//!   (`Announcer::holders_of`) for all sightings, then `Announcer::announce` for each
//!   (claim, post to a loopback X stand-in, record `posted`);
//! - `cycle_held`: the same matches seen again, as nearly every later cycle sees them: the batch
//!   look-up (one `MGET`) answers them all; nothing else is sent. `HELD_CYCLES` cycles per
//!   repeat, the median over all of them;
//! - `cycle_held_first`: the first of those held cycles in each repeat, the only one that parses
//!   every record (`Announcer::holders_of` remembers the records it read and parses only those that
//!   changed);
//! - `cycle_held_refresh`: the held matches looked up by a second process on the same store, whose
//!   refresh of every held claim's TTL is due (its first look-up; later each key once per TTL /
//!   `REFRESHES_PER_TTL`, a slice per cycle): the `MGET`, then one `EXPIRE` per key and identity
//!   in pipelines of 1,000;
//! - `cycle_held_20ch`: 20 channels × 500 matches, all held (issue 21): the cycle's one batch
//!   look-up across every channel (`holders_of_all`, one `MGET`), then `Announcer::announce` of
//!   each (match, channel); per 1,000 (match, channel) sightings;
//!
//! Usage: `cargo run --release --example claims -- REDIS_URL [SIGHTINGS] [REPEATS] [HELD_CYCLES]`.
//! Prints one JSON object on stdout (times in milliseconds, medians over REPEATS; `ms_each`
//! lists every measurement). Many held cycles in one repeat (`… 1000 1 500`) make a steady-state
//! loop for a profiler.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    unreachable_pub
)]

#[path = "support/mock_x.rs"]
mod mock_x;

use cricket_announcer::announcer::{holders_of_all, Announcer, ClaimPolicy, LookUp, Memory, Mode, Outcome};
use cricket_announcer::claim::{ClaimStore, RedisClaims};
use cricket_announcer::cricket::{Match, Sighting};
use cricket_announcer::post::{PostPace, Sink};
use cricket_announcer::source::SourceKind;
use cricket_announcer::template::Template;
use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(86_400);
/// How many held cycles each repeat measures, unless the fourth argument says otherwise.
const HELD_CYCLES: usize = 5;
/// Channels, and matches per channel, of the `cycle_held_20ch` row (issue 21's target).
const CHANNELS: usize = 20;
const CHANNEL_MATCHES: usize = 500;

/// Server counters: calls per command, and socket reads.
async fn counters(conn: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, u64> {
    let text: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some((name, rest)) = line.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) {
            let calls = rest.split(',').find_map(|f| f.strip_prefix("calls=")).unwrap();
            out.insert(name.to_string(), calls.parse().unwrap());
        }
    }
    let text: String = redis::cmd("INFO").arg("stats").query_async(conn).await.unwrap();
    let reads = text
        .lines()
        .find_map(|l| l.strip_prefix("total_reads_processed:"))
        .unwrap();
    out.insert("(socket reads)".into(), reads.trim().parse().unwrap());
    out
}

/// Per-sighting deltas between two counter snapshots, without the snapshots' own INFO calls.
fn per_sighting(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>, n: usize) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let mut commands = 0u64;
    for (name, &a) in after {
        let mut d = a - before.get(name).copied().unwrap_or(0);
        if name == "info" {
            d = d.saturating_sub(2);
        }
        if name == "(socket reads)" {
            d = d.saturating_sub(2);
        } else {
            commands += d;
        }
        if d > 0 {
            out.insert(name.clone(), (d as f64 / n as f64).into());
        }
    }
    out.insert("(commands)".into(), (commands as f64 / n as f64).into());
    out.into()
}

/// One batch look-up of `refs` on every channel, each with its own memory.
fn lookups<'a>(channels: &'a [Announcer], memories: &'a mut [Memory], refs: &'a [&'a Sighting]) -> Vec<LookUp<'a>> {
    channels
        .iter()
        .zip(memories.iter_mut())
        .map(|(announcer, memory)| LookUp {
            announcer,
            memory,
            sightings: refs,
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    mock_x::run_beside(bench);
}

async fn bench(mock: mock_x::MockX) {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .expect("usage: claims REDIS_URL [SIGHTINGS] [REPEATS] [HELD_CYCLES]");
    let n: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(1000);
    let repeats: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(5);
    let held_cycles: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(HELD_CYCLES);
    let root = env!("CARGO_MANIFEST_DIR");
    let page = std::fs::read_to_string(format!("{root}/fixtures/cricbuzz/live-scores_2026-07-17.html")).unwrap();
    let template_path = std::path::PathBuf::from(format!("{root}/templates/announce.txt"));
    // N distinct matches: one real match from the page, each with its own description (so its
    // own key), as a busy season would list them.
    let base = SourceKind::Cricbuzz
        .parse(&page)
        .unwrap()
        .into_iter()
        .find(|m| cricket_announcer::filter::Filter::default().check(m).is_ok())
        .unwrap();
    let matches: Vec<Match> = (0..n)
        .map(|i| {
            let mut m = base.clone();
            m.description = Some(format!("Match {i}").into());
            m.source_id = format!("{}{i}", m.source_id).into();
            m
        })
        .collect();
    let sightings: Vec<Sighting> = matches.iter().cloned().map(Sighting::new).collect();
    let sighting_refs: Vec<&Sighting> = sightings.iter().collect();

    let mut info = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let x = Sink::x(
        &mock.base,
        mock_x::credentials(),
        Duration::from_secs(5),
        Duration::from_secs(1),
    )
    .unwrap();
    let pace = Arc::new(PostPace::new(NonZeroU32::MAX, NonZeroU32::MAX));
    let policy = ClaimPolicy::new(TTL, 3, Duration::from_secs(30));
    let run = format!("bench:claims:{}:", uuid::Uuid::new_v4().simple());

    let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut counts: BTreeMap<&str, serde_json::Value> = BTreeMap::new();
    // Sightings per measurement, where a row's differ from `n`.
    let mut row_n: BTreeMap<&str, usize> = BTreeMap::new();
    for r in 0..repeats {
        let store = |tag: &'static str| {
            let prefix = format!("{run}{tag}:{r}:");
            let url = url.clone();
            async move { ClaimStore::Redis(RedisClaims::connect(&url, &prefix, "bench").await.unwrap()) }
        };

        // The bot's own path, as `App::cycle` runs it (without reading sources and the marker
        // refresh, once per cycle): one batch look-up for every sighting, then the announcement
        // of each match the batch did not find held. New matches, then the same ones held.
        let announcer = Announcer::new(
            store("cycle").await,
            Template::load(&template_path).unwrap(),
            None,
            Mode::live(x.clone(), pace.clone()),
            policy,
        );
        // A second process on the same store: it has refreshed nothing yet, so its first look-up
        // is the refreshing one.
        let restarted = Announcer::new(
            announcer.store().clone(),
            Template::load(&template_path).unwrap(),
            None,
            Mode::live(x.clone(), pace.clone()),
            policy,
        );
        // Each process's memory, kept from one of its cycles to the next as the cycle keeps it.
        let (mut memory, mut restarted_memory) = (Memory::default(), Memory::default());
        // `cycle_held` runs HELD_CYCLES times, as a match listed for days is seen.
        let held = std::iter::repeat_n(("cycle_held", false), held_cycles);
        for (row, expect_posted) in [("cycle_new", true)]
            .into_iter()
            .chain(held)
            .chain([("cycle_held_refresh", false)])
        {
            let (announcer, memory) = if row == "cycle_held_refresh" {
                (&restarted, &mut restarted_memory)
            } else {
                (&announcer, &mut memory)
            };
            let before = counters(&mut info).await;
            let t = Instant::now();
            let holders = announcer.holders_of(memory, &sighting_refs).await.unwrap();
            for (s, holder) in sightings.iter().zip(holders) {
                let outcome = announcer.announce(memory, s, holder).await.unwrap();
                assert_eq!(matches!(outcome, Outcome::Posted(_)), expect_posted, "{outcome:?}");
            }
            times.entry(row).or_default().push(t.elapsed().as_secs_f64() * 1e3);
            counts.insert(row, per_sighting(&before, &counters(&mut info).await, n));
        }

        // Channels: one claim per (match, channel), every one held; the cycle reads them all in
        // one batch, then each (match, channel) is skipped from that answer.
        let base = store("channels").await;
        let per = sightings.len().min(CHANNEL_MATCHES);
        let refs: Vec<&Sighting> = sightings[..per].iter().collect();
        let channels: Vec<Announcer> = (0..CHANNELS)
            .map(|c| {
                Announcer::new(
                    base.for_channel(&format!("c{c}")),
                    Template::load(&template_path).unwrap(),
                    None,
                    Mode::live(x.clone(), pace.clone()),
                    policy,
                )
                .on_channel(&format!("c{c}"))
            })
            .collect();
        for a in &channels {
            for s in &refs {
                a.store()
                    .claim_match(&s.ids, &s.m.claim_title(), TTL, Duration::from_secs(60), false)
                    .await
                    .unwrap();
            }
        }
        let mut memories: Vec<Memory> = channels.iter().map(|_| Memory::default()).collect();
        // The first look-up refreshes every TTL (due at start); the held cycles after it read.
        holders_of_all(&mut lookups(&channels, &mut memories, &refs))
            .await
            .unwrap();
        for _ in 0..held_cycles {
            let before = counters(&mut info).await;
            let t = Instant::now();
            let found = holders_of_all(&mut lookups(&channels, &mut memories, &refs))
                .await
                .unwrap();
            for ((a, memory), holders) in channels.iter().zip(memories.iter_mut()).zip(found) {
                for (s, holder) in refs.iter().zip(holders) {
                    let outcome = a.announce(memory, s, holder).await.unwrap();
                    assert!(matches!(outcome, Outcome::Skipped { .. }), "{outcome:?}");
                }
            }
            times
                .entry("cycle_held_20ch")
                .or_default()
                .push(t.elapsed().as_secs_f64() * 1e3);
            counts.insert(
                "cycle_held_20ch",
                per_sighting(&before, &counters(&mut info).await, CHANNELS * per),
            );
            row_n.insert("cycle_held_20ch", CHANNELS * per);
        }
    }
    // The first held cycle of each repeat on its own: it reads every record for the first time
    // (the later ones find most records unchanged and do not parse them again).
    let firsts: Vec<f64> = times["cycle_held"]
        .iter()
        .step_by(held_cycles.max(1))
        .copied()
        .collect();
    times.insert("cycle_held_first", firsts);
    counts.insert("cycle_held_first", counts["cycle_held"].clone());
    let rows: serde_json::Map<String, serde_json::Value> = times
        .into_iter()
        .map(|(row, t)| {
            let n = row_n.get(row).copied().unwrap_or(n);
            (
                row.to_string(),
                serde_json::json!({
                    "ms_per_1000": median(t.clone()) * 1000.0 / n as f64,
                    // Every measurement, in the order taken, for how the time moves within a repeat.
                    "ms_each": t.iter().map(|ms| (ms * 1000.0 / n as f64 * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
                    "per_sighting": counts[row],
                }),
            )
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({ "sightings": n, "repeats": repeats, "rows": rows })
    );
}
