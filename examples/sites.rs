//! The held cycle with two sites configured beside the held cycle with one (issue 31: "the held
//! cycle's cost stays within 10 % of today's"), measured side by side in one process on one
//! Redis: the rows' cycles take turns (each cycle starts with the next row), so a shared
//! machine's load falls on every row alike.
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
//!   sighting each by the same-match rule; claimed beforehand from those merged sightings (both
//!   sites configured from the start);
//! - `held_2sites_other`: the same two sites' listings, but the claims were won by a process
//!   reading the second site only, under that site's keys: the first held cycle finds each
//!   through the other site's listing (the claim step's cross-site look-up) and learns where it
//!   is; the later cycles read there, in the one batch;
//! - `held_2sites_other_first`: that first held cycle, once per repeat (not in the row above);
//! - `sightings_1site`, `sightings_2sites`: building the cycle's sightings from N listings, or
//!   from 2N (two sites) merged by the same-match rule.
//!
//! Usage: `cargo run --release --example sites -- REDIS_URL [MATCHES] [REPEATS] [HELD_CYCLES]
//! [ROW]`. Prints one JSON object on stdout: per row, ms per 1,000 matches (the median over
//! every held cycle of every repeat) and every measurement; with every row run,
//! `ratio_2sites_to_1site` and `ratio_2sites_other_to_1site`, the medians of the per-cycle
//! ratios of side-by-side held cycles (the rows take turns going first), and `sightings_ratio`,
//! the same for the sightings. `ROW` (`1site`, `2sites`, `2sites_other`) runs that row alone,
//! for an instruction count under callgrind. Keys are left for the caller's Redis to drop
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
    let sightings = sightings_of(links, page);
    let built = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let refs: Vec<&Sighting> = sightings.iter().collect();
    let holders = announcer.holders_of(memory, &refs).await.unwrap();
    for (s, holder) in sightings.iter().zip(holders) {
        let outcome = announcer.announce(memory, s, holder).await.unwrap();
        assert!(matches!(outcome, Outcome::Skipped { .. }), "{outcome:?}");
    }
    let held = t.elapsed().as_secs_f64() * 1e3;
    drop(refs);
    done_with(sightings);
    (built, held)
}

/// The listings of `page` as a parse hands them over: a copy made by the harness, standing for
/// the pages read, so no part of the cycle (not timed, and left out of the instruction counts:
/// `--toggle-collect=sites::listings`).
#[inline(never)]
fn listings(page: &[Match]) -> Vec<Match> {
    page.to_vec()
}

/// Drops a cycle's sightings once the held cycle is over: their share of the cycle with their
/// building (`sightings_of`), not the held cycle's (left out of its instruction count:
/// `--toggle-collect=sites::done_with`).
#[inline(never)]
fn done_with(sightings: Vec<Sighting>) {
    drop(sightings);
}

/// A row: which listings a process reads, and whose claims it finds.
#[derive(Debug, Clone, Copy)]
enum Row {
    /// One site's listings; claims won from them.
    One,
    /// Two sites' listings; claims won from the same two sites' sightings (both configured
    /// from the start: the claim is under the key the process reads).
    Two,
    /// Two sites' listings; claims won by a process reading the second site only (under its
    /// keys): found across sites once, then read where they are.
    TwoOther,
}

impl Row {
    fn name(self) -> &'static str {
        match self {
            Row::One => "1site",
            Row::Two => "2sites",
            Row::TwoOther => "2sites_other",
        }
    }

    fn named(name: &str) -> Row {
        [Row::One, Row::Two, Row::TwoOther]
            .into_iter()
            .find(|r| r.name() == name)
            .expect("ROW: 1site, 2sites or 2sites_other")
    }
}

/// The sightings a cycle makes of `page`.
fn sightings_of(links: &Links, page: Vec<Match>) -> Vec<Sighting> {
    let mut seen = Sightings::linking(links.clone());
    for m in page {
        seen.add(m);
    }
    seen.into_vec()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn bench(mock: mock_x::MockX) {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .expect("usage: sites REDIS_URL [MATCHES] [REPEATS] [HELD_CYCLES] [ROW]");
    let n: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(1000);
    let repeats: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(5);
    let held_cycles: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(HELD_CYCLES);
    // One row alone (`1site`, `2sites`, `2sites_other`), for an instruction count.
    let only: Option<String> = args.next();
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

    // The rows run, in the order of the first cycle; each later cycle starts one further on.
    let rows: Vec<Row> = match only.as_deref() {
        None => vec![Row::One, Row::Two, Row::TwoOther],
        Some(name) => vec![Row::named(name)],
    };
    // Per row: its held cycles' and its sightings' times; per cycle, each row's (held, built).
    let mut held: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    let mut built: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    let mut firsts: Vec<f64> = Vec::new();
    for r in 0..repeats {
        let mut runs = Vec::new();
        for row in &rows {
            let store = ClaimStore::Redis(
                RedisClaims::connect(&url, &format!("{run}{}:{r}:", row.name()), "bench")
                    .await
                    .unwrap(),
            );
            // The claims, won beforehand: from the row's own sightings, or (TwoOther) by a
            // process that read the second site only, under that site's keys.
            let claimed: Vec<Sighting> = match row {
                Row::One => sightings_of(&links, one.clone()),
                Row::Two => sightings_of(&links, both.clone()),
                Row::TwoOther => sightings_of(&links, two.clone()),
            };
            for s in &claimed {
                store
                    .claim_match(&s.ids, &s.m.claim_title(), TTL, Duration::from_secs(60), false)
                    .await
                    .unwrap();
            }
            let page = if matches!(row, Row::One) { &one } else { &both };
            let (a, mut memory) = (announcer(store), Memory::default());
            // The first held cycle: it refreshes TTLs (due on a first look-up); TwoOther's
            // finds each claim through the other site's listing (timed: `…_first`).
            let first = held_cycle(&a, &mut memory, &links, page.clone()).await.1;
            if matches!(row, Row::TwoOther) {
                firsts.push(first);
            }
            runs.push((a, memory, page));
        }
        for c in 0..held_cycles {
            for k in 0..runs.len() {
                let i = (c + k) % runs.len();
                let (a, memory, page) = &mut runs[i];
                let (b, h) = held_cycle(a, memory, &links, listings(page)).await;
                built[i].push(b);
                held[i].push(h);
            }
        }
    }
    let per_1000 = |ms: f64| ms * 1000.0 / n as f64;
    let row = |t: &Vec<f64>| {
        serde_json::json!({
            "ms_per_1000": per_1000(median(t.clone())),
            "ms_each": t.iter().map(|ms| (per_1000(*ms) * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
        })
    };
    let mut out = serde_json::Map::new();
    for (i, r) in rows.iter().enumerate() {
        out.insert(format!("held_{}", r.name()), row(&held[i]));
    }
    if !firsts.is_empty() {
        out.insert("held_2sites_other_first".into(), row(&firsts));
    }
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| !matches!(r, Row::TwoOther)) {
        out.insert(format!("sightings_{}", r.name()), row(&built[i]));
    }
    // Per-cycle ratios of side-by-side cycles (row ÷ one site), when every row ran.
    let ratios = |of: &[Vec<f64>], i: usize| -> Vec<f64> { of[i].iter().zip(&of[0]).map(|(x, one)| x / one).collect() };
    let rounded = |v: &[f64]| v.iter().map(|r| (r * 1000.0).round() / 1000.0).collect::<Vec<_>>();
    let mut summary = serde_json::json!({
        "matches": n,
        "repeats": repeats,
        "held_cycles": held_cycles,
        "rows": out,
    });
    if rows.len() == 3 {
        let (two, other, sights) = (ratios(&held, 1), ratios(&held, 2), ratios(&built, 1));
        summary["ratio_2sites_to_1site"] = median(two.clone()).into();
        summary["ratio_2sites_other_to_1site"] = median(other.clone()).into();
        summary["ratio_of_medians"] = (median(held[1].clone()) / median(held[0].clone())).into();
        summary["ratios_each"] = rounded(&two).into();
        summary["ratios_other_each"] = rounded(&other).into();
        summary["sightings_ratio"] = median(sights.clone()).into();
        summary["sightings_ratios_each"] = rounded(&sights).into();
    }
    println!("{summary}");
}
