//! The held cycle with two sites configured beside the held cycle with one (issue 31: "the held
//! cycle's cost stays within 10 % of today's"), measured side by side in one process on one
//! Redis: the two rows' cycles alternate (one-site first in even cycles, two-site first in odd
//! ones), so a shared machine's load falls on both alike.
//!
//! N matches, each between its own two sides, from the real Cricbuzz page's first announceable
//! listing. Each cycle first builds its sightings from the listings (`Sightings`, as
//! `App::read_sources` does with the pages read), timed apart; then the held cycle as
//! `examples/claims.rs`'s `cycle_held` times it: one batch look-up (`Announcer::holders_of`),
//! then `announce` of each sighting, found held.
//! - `held_1site`: the matches as one site lists them (Cricbuzz's wording, "Super 8 Group 2"),
//!   claimed beforehand from those listings;
//! - `held_2sites`: the same matches listed by two sites, the second in its own wording ("42nd
//!   Match, Super Eights, Group 2", ESPNcricinfo's: another match key), merged into one
//!   sighting each by the same-match rule. Its claims were won by a process reading the second
//!   site only, under that site's keys: the two-site process's first held cycle finds each
//!   through the other site's listing (the claim step's cross-site look-up) and learns where it
//!   is; its later cycles read there, in the one batch;
//! - `held_2sites_first`: that first held cycle, once per repeat (not in `held_2sites`);
//! - `sightings_1site`, `sightings_2sites`: building the cycle's sightings from N listings, or
//!   from 2N (two sites), merged by the same-match rule.
//!
//! Usage: `cargo run --release --example sites -- REDIS_URL [MATCHES] [REPEATS] [HELD_CYCLES]`.
//! Prints one JSON object on stdout: per row, ms per 1,000 matches (the median over every held
//! cycle of every repeat) and every measurement; `ratio_2sites_to_1site`, the median of the
//! per-cycle ratios of side-by-side held cycles (the ratio of the medians beside it), and
//! `sightings_ratio`, the same for the sightings. Keys are left for the caller's Redis to drop
//! (`bench/run.sh` starts one of its own).

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    unreachable_pub
)]

#[path = "support/mock_x.rs"]
mod mock_x;

use cricket_announcer::announcer::{Announcer, ClaimPolicy, Memory, Mode, Outcome};
use cricket_announcer::claim::{ClaimStore, RedisClaims};
use cricket_announcer::cricket::{Links, Match, Sighting, Sightings, Site};
use cricket_announcer::post::{PostPace, Sink};
use cricket_announcer::source::SourceKind;
use cricket_announcer::template::Template;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(86_400);
/// Held cycles per repeat, unless the fourth argument says otherwise.
const HELD_CYCLES: usize = 10;

fn main() {
    mock_x::run_beside(bench);
}

/// A side's name for match `i`: letters only, so no name reads as a slot code ("B1").
fn side(i: usize, end: &str) -> String {
    let mut name = String::from("Side ");
    let mut n = i;
    loop {
        name.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            break;
        }
    }
    format!("{name} {end}")
}

/// One held cycle of `announcer` over the listings `page` (moved in, as a parse hands them
/// over): its sightings built (`Sightings`), then the held cycle as `examples/claims.rs`'s
/// `cycle_held` times it: one batch look-up, each sighting announced and found held.
/// Milliseconds of (the sightings, the held cycle).
async fn held_cycle(announcer: &Announcer, memory: &mut Memory, links: &Links, page: Vec<Match>) -> (f64, f64) {
    let t = Instant::now();
    let mut seen = Sightings::linking(links.clone());
    for m in page {
        seen.add(m);
    }
    let sightings = seen.into_vec();
    let built = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let refs: Vec<&Sighting> = sightings.iter().collect();
    let holders = announcer.holders_of(memory, &refs).await.unwrap();
    for (s, holder) in sightings.iter().zip(holders) {
        let outcome = announcer.announce(memory, s, holder).await.unwrap();
        assert!(matches!(outcome, Outcome::Skipped { .. }), "{outcome:?}");
    }
    (built, t.elapsed().as_secs_f64() * 1e3)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn bench(mock: mock_x::MockX) {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .expect("usage: sites REDIS_URL [MATCHES] [REPEATS] [HELD_CYCLES]");
    let n: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(1000);
    let repeats: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(5);
    let held_cycles: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(HELD_CYCLES);
    let root = env!("CARGO_MANIFEST_DIR");
    let page = std::fs::read_to_string(format!("{root}/fixtures/cricbuzz/live-scores_2026-07-17.html")).unwrap();
    let template_path = std::path::PathBuf::from(format!("{root}/templates/announce.txt"));
    let base = SourceKind::Cricbuzz
        .parse(&page)
        .unwrap()
        .into_iter()
        .find(|m| cricket_announcer::filter::Filter::default().check(m).is_ok())
        .unwrap();
    // Site one's listings (Cricbuzz's wording), and site two's of the same matches (its own
    // ids, wording and pages).
    let one: Vec<Match> = (0..n)
        .map(|i| {
            let mut m = base.clone();
            m.teams[0].name = side(i, "North").into();
            m.teams[1].name = side(i, "South").into();
            m.description = Some("Super 8 Group 2".into());
            m.source_id = format!("{}{i}", m.source_id).into();
            m
        })
        .collect();
    let two: Vec<Match> = one
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            m.site = Site::Espncricinfo;
            m.source_id = format!("{}", 1_512_000 + i).into();
            m.description = Some("42nd Match, Super Eights, Group 2".into());
            m.url = format!("https://www.espncricinfo.com/series/x-1/match-{i}")
                .parse()
                .unwrap();
            m
        })
        .collect();
    let both: Vec<Match> = one.iter().chain(&two).cloned().collect();
    let links = Links::default();

    let x = Sink::x(
        &mock.base,
        mock_x::credentials(),
        Duration::from_secs(5),
        Duration::from_secs(1),
    )
    .unwrap();
    let pace = Arc::new(PostPace::new(NonZeroU32::MAX, NonZeroU32::MAX));
    let policy = ClaimPolicy::new(TTL, 3, Duration::from_secs(30));
    let run = format!("bench:sites:{}:", uuid::Uuid::new_v4().simple());
    let announcer = |store: ClaimStore| {
        Announcer::new(
            store,
            Template::load(&template_path).unwrap(),
            None,
            Mode::live(x.clone(), pace.clone()),
            policy,
        )
    };

    // Held cycles of each row, sightings of each row, first held cycles of the two-site
    // process, and the per-cycle ratios (two sites ÷ one) of held cycles and of sightings.
    let (mut single, mut double, mut firsts, mut ratios) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut built_1, mut built_2, mut built_ratios) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..repeats {
        let store = |tag: &str| {
            let prefix = format!("{run}{tag}:{r}:");
            let url = url.clone();
            async move { ClaimStore::Redis(RedisClaims::connect(&url, &prefix, "bench").await.unwrap()) }
        };
        // Claims won beforehand: site one's by the one-site process's own listings; the
        // two-site process's by a process that read site two only.
        let (store_1, store_2) = (store("one").await, store("two").await);
        for (store, page) in [(&store_1, &one), (&store_2, &two)] {
            for m in page {
                let s = Sighting::new(m.clone());
                store
                    .claim_match(&s.ids, &s.m.claim_title(), TTL, Duration::from_secs(60), false)
                    .await
                    .unwrap();
            }
        }
        let (a1, a2) = (announcer(store_1), announcer(store_2));
        let (mut m1, mut m2) = (Memory::default(), Memory::default());
        // Each process's first held cycle: it refreshes TTLs (due on a first look-up), and the
        // two-site one finds its claims through the other site's listings.
        held_cycle(&a1, &mut m1, &links, one.clone()).await;
        firsts.push(held_cycle(&a2, &mut m2, &links, both.clone()).await.1);
        for c in 0..held_cycles {
            let (p1, p2) = (one.clone(), both.clone());
            let (t1, t2) = if c % 2 == 0 {
                let t1 = held_cycle(&a1, &mut m1, &links, p1).await;
                (t1, held_cycle(&a2, &mut m2, &links, p2).await)
            } else {
                let t2 = held_cycle(&a2, &mut m2, &links, p2).await;
                (held_cycle(&a1, &mut m1, &links, p1).await, t2)
            };
            single.push(t1.1);
            double.push(t2.1);
            ratios.push(t2.1 / t1.1);
            built_1.push(t1.0);
            built_2.push(t2.0);
            built_ratios.push(t2.0 / t1.0);
        }
    }
    let per_1000 = |ms: f64| ms * 1000.0 / n as f64;
    let row = |t: &Vec<f64>| {
        serde_json::json!({
            "ms_per_1000": per_1000(median(t.clone())),
            "ms_each": t.iter().map(|ms| (per_1000(*ms) * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
        })
    };
    println!(
        "{}",
        serde_json::json!({
            "matches": n,
            "repeats": repeats,
            "held_cycles": held_cycles,
            "rows": {
                "held_1site": row(&single),
                "held_2sites": row(&double),
                "held_2sites_first": row(&firsts),
                "sightings_1site": row(&built_1),
                "sightings_2sites": row(&built_2),
            },
            "ratio_2sites_to_1site": median(ratios.clone()),
            "ratio_of_medians": median(double.clone()) / median(single.clone()),
            "ratios_each": ratios.iter().map(|r| (r * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
            "sightings_ratio": median(built_ratios.clone()),
            "sightings_ratios_each": built_ratios.iter().map(|r| (r * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
        })
    );
}
