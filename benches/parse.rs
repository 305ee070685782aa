//! Extraction: the time to turn each saved page in `fixtures/` into matches, for every parser
//! (fetch excluded). `bench/run.sh` reads the medians from `target/criterion` and sets them beside
//! BeautifulSoup and selectolax reading the same pages (`bench/extract.py`).

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cricket_announcer::source::SourceKind;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// (bench id, fixture path, parser). Ids are what `bench/extract.py` names its rows.
fn cases() -> Vec<(&'static str, &'static str, SourceKind)> {
    let css = |p: &str| SourceKind::css(p).expect("built-in profile");
    vec![
        ("cricbuzz", "cricbuzz/live-scores_2026-07-17.html", SourceKind::Cricbuzz),
        (
            "cricbuzz-json-live",
            "cricbuzz/matches-v1-live_2024-06-16.json",
            SourceKind::CricbuzzJson,
        ),
        (
            "cricbuzz-json-upcoming",
            "cricbuzz/matches-v1-upcoming_2024-06-16.json",
            SourceKind::CricbuzzJson,
        ),
        (
            "espncricinfo-series",
            "espncricinfo/series-match-results_ipl-2022_2022-07-27.html",
            SourceKind::Espncricinfo,
        ),
        (
            "espncricinfo-match",
            "espncricinfo/match-page_1478914_2026-02-21_rendered.html",
            SourceKind::Espncricinfo,
        ),
        (
            "espn-rss",
            "espncricinfo/rss-livescores_2019-01-31.xml",
            SourceKind::EspnRss,
        ),
        (
            "cricketdata",
            "cricketdata/current-matches_2026-05-18.json",
            SourceKind::Cricketdata,
        ),
        (
            "css-cricbuzz-2018",
            "cricbuzz/old-layout_match-page_20082_2018-04-23.html",
            css("cricbuzz-2018"),
        ),
        (
            "css-espncricinfo-2020",
            "espncricinfo/old-layout_match-page_1213062_2020-02-07.html",
            css("espncricinfo-2020"),
        ),
    ]
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    // Short but statistically sane on two shared cores: 30 samples over ~2 s per page.
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (id, file, kind) in cases() {
        let path = format!("{}/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let found = kind.parse(&page).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(!found.is_empty(), "{id}: no match");
        group.throughput(Throughput::Bytes(page.len() as u64));
        group.bench_function(id, |b| {
            b.iter(|| black_box(kind.parse(black_box(&page))).map(|m| m.len()));
        });
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
