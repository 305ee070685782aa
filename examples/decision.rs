//! Decision latency: from a score page's bytes in hand to the POST leaving for X, per match.
//!
//! Each iteration takes the saved Cricbuzz live-scores page, parses it, dedupes by match key
//! and filters (as `App::cycle` does), looks the announceable matches up in one batch (as the
//! cycle does), then announces each: claim in Redis
//! (a fresh key prefix, so every match is new), render, post to a loopback X stand-in that
//! answers 201 at once (`support/mock_x.rs`), record `posted`. The stand-in notes when each
//! request arrives. Two numbers per match:
//! - page → POST: from holding the page bytes to that match's POST arriving (later matches on
//!   the page include the earlier ones' posts, as in a real cycle);
//! - announce → POST: from starting that match's announcement to its POST arriving.
//!
//! Usage: `cargo run --release --example decision -- REDIS_URL [ITERATIONS]`. Prints one JSON
//! object (microseconds) on stdout for `bench/run.sh`.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    unreachable_pub
)]

#[path = "support/mock_x.rs"]
mod mock_x;

use cricket_announcer::announcer::{Announcer, ClaimPolicy, Memory, Mode, Outcome};
use cricket_announcer::claim::{ClaimStore, RedisClaims};
use cricket_announcer::cricket::{Sighting, Sightings};
use cricket_announcer::filter::Filter;
use cricket_announcer::post::{PostPace, Sink};
use cricket_announcer::source::SourceKind;
use cricket_announcer::template::Template;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

const WARM_UP: usize = 20;

fn main() {
    mock_x::run_beside(bench);
}

async fn bench(mut mock: mock_x::MockX) {
    let mut args = std::env::args().skip(1);
    let redis_url = args.next().expect("usage: decision REDIS_URL [ITERATIONS]");
    let iterations: usize = args.next().map(|n| n.parse().expect("ITERATIONS")).unwrap_or(300);
    let root = env!("CARGO_MANIFEST_DIR");
    let page = std::fs::read_to_string(format!("{root}/fixtures/cricbuzz/live-scores_2026-07-17.html")).unwrap();
    let template_path = std::path::PathBuf::from(format!("{root}/templates/announce.txt"));
    let x = Sink::x(
        &mock.base,
        mock_x::credentials(),
        Duration::from_secs(5),
        Duration::from_secs(1),
    )
    .unwrap();
    // The local pace would stop a benchmark after 5 posts; it is a sleep, not work, so lift it.
    let pace = Arc::new(PostPace::new(NonZeroU32::MAX, NonZeroU32::MAX));
    let policy = ClaimPolicy::new(Duration::from_secs(86_400), 3, Duration::from_secs(30));
    let filter = Filter::default();
    let run = format!("bench:decision:{}:", uuid::Uuid::new_v4().simple());

    let (mut page_to_post, mut announce_to_post, mut first_post) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARM_UP + iterations {
        // Connecting is set-up, not decision: a fresh prefix makes every match new again.
        let store = ClaimStore::Redis(
            RedisClaims::connect(&redis_url, &format!("{run}{i}:"), "bench")
                .await
                .unwrap(),
        );
        let template = Template::load(&template_path).unwrap();
        let announcer = Announcer::new(store, template, None, Mode::live(x.clone(), pace.clone()), policy);

        let t0 = Instant::now();
        let found = SourceKind::Cricbuzz.parse(&page).unwrap();
        let mut seen = Sightings::default();
        for m in found {
            seen.add(m);
        }
        let mut sightings: Vec<Sighting> = seen.into_vec();
        sightings.retain(|s| filter.check(&s.m).is_ok());
        // The cycle's one batch look-up of every announceable match (all new here).
        let mut memory = Memory::default();
        let holders = announcer
            .holders_of(&mut memory, &sightings.iter().collect::<Vec<_>>())
            .await
            .unwrap();
        let mut first = true;
        for (s, holder) in sightings.iter().zip(holders) {
            let start = Instant::now();
            let outcome = announcer.announce(&mut memory, s, holder).await.unwrap();
            assert!(matches!(outcome, Outcome::Posted(_)), "{outcome:?}");
            let arrived = mock.arrivals.recv().await.unwrap();
            if i >= WARM_UP {
                page_to_post.push(arrived - t0);
                announce_to_post.push(arrived - start);
                if first {
                    first_post.push(arrived - t0);
                }
            }
            first = false;
        }
    }
    let report = serde_json::json!({
        "page": "cricbuzz/live-scores_2026-07-17.html",
        "iterations": iterations,
        "posts": page_to_post.len(),
        "page_to_post_us": summary(&mut page_to_post),
        "first_post_us": summary(&mut first_post),
        "announce_to_post_us": summary(&mut announce_to_post),
    });
    println!("{report}");
}

/// p50, p99 and max in microseconds (nearest-rank percentiles).
fn summary(v: &mut [Duration]) -> serde_json::Value {
    v.sort();
    let pct = |p: f64| {
        let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
        v[rank.min(v.len()) - 1].as_secs_f64() * 1e6
    };
    serde_json::json!({ "n": v.len(), "p50": pct(50.0), "p99": pct(99.0), "max": pct(100.0) })
}
