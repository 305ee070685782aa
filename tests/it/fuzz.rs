//! Robustness of every parser: real fixtures, randomly damaged (ranges cut, duplicated,
//! replaced with arbitrary text, structural characters flipped), and arbitrary text, must give
//! matches or an error, never a panic, and every match they do give must be sane (non-empty
//! team names, no control characters, an http(s) link).
//!
//! The number of cases per parser is `PROPTEST_CASES` (default 64 here, so CI stays fast);
//! `bench/fuzz.sh` runs each parser for ten minutes with a huge case count.

use crate::helpers::fixture;
use cricket_announcer::cricket::Match;
use cricket_announcer::source::SourceKind;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Damage {
    Cut { at: f64, len: usize },
    Duplicate { at: f64, len: usize },
    Insert { at: f64, text: String },
    Flip { at: f64, to: char },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0.0..1.0f64, 1usize..4096).prop_map(|(at, len)| Damage::Cut { at, len }),
        (0.0..1.0f64, 1usize..4096).prop_map(|(at, len)| Damage::Duplicate { at, len }),
        (0.0..1.0f64, ".{0,64}").prop_map(|(at, text)| Damage::Insert { at, text }),
        (
            0.0..1.0f64,
            prop::sample::select(vec![
                '{', '}', '[', ']', '"', '\\', '<', '>', ',', ':', '\0', '\u{202e}'
            ])
        )
            .prop_map(|(at, to)| Damage::Flip { at, to }),
    ]
}

fn boundary(s: &str, at: f64) -> usize {
    let mut i = ((s.len() as f64) * at) as usize;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i.min(s.len())
}

fn end(s: &str, from: usize, len: usize) -> usize {
    let mut j = (from + len).min(s.len());
    while j < s.len() && !s.is_char_boundary(j) {
        j += 1;
    }
    j
}

fn apply(page: &str, damages: &[Damage]) -> String {
    let mut s = page.to_string();
    for d in damages {
        match d {
            Damage::Cut { at, len } => {
                let i = boundary(&s, *at);
                let j = end(&s, i, *len);
                s.replace_range(i..j, "");
            }
            Damage::Duplicate { at, len } => {
                let i = boundary(&s, *at);
                let j = end(&s, i, *len);
                let copy = s[i..j].to_string();
                s.insert_str(j, &copy);
            }
            Damage::Insert { at, text } => {
                let i = boundary(&s, *at);
                s.insert_str(i, text);
            }
            Damage::Flip { at, to } => {
                let i = boundary(&s, *at);
                let j = end(&s, i, 1);
                s.replace_range(i..j, &to.to_string());
            }
        }
    }
    s
}

fn sane(matches: &[Match]) -> Result<(), String> {
    for m in matches {
        for t in &m.teams {
            if t.name.trim().is_empty() || t.name.chars().any(char::is_control) {
                return Err(format!("bad team name {:?} in {}", t.name, m.identity()));
            }
        }
        if !matches!(m.url.scheme(), "http" | "https") {
            return Err(format!("bad url {} in {}", m.url, m.identity()));
        }
        if m.source_id.is_empty() {
            return Err("empty source id".into());
        }
    }
    Ok(())
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

macro_rules! fuzz_parser {
    ($name:ident, $kind:expr, $file:expr) => {
        proptest! {
            #![proptest_config(config())]
            #[test]
            fn $name(damages in prop::collection::vec(damage(), 1..8)) {
                let kind: SourceKind = $kind;
                let page = apply(&fixture($file), &damages);
                if let Ok(ms) = kind.parse(&page) {
                    prop_assert_eq!(sane(&ms), Ok(()));
                }
            }
        }
    };
}

fuzz_parser!(
    damaged_cricbuzz_pages_never_panic,
    SourceKind::Cricbuzz,
    "cricbuzz/live-scores_2026-07-17.html"
);
fuzz_parser!(
    damaged_cricbuzz_json_never_panics,
    SourceKind::CricbuzzJson,
    "cricbuzz/matches-v1-upcoming_2024-06-16.json"
);
fuzz_parser!(
    damaged_espncricinfo_pages_never_panic,
    SourceKind::Espncricinfo,
    "espncricinfo/match-page_1478914_2026-02-21_rendered.html"
);
fuzz_parser!(
    damaged_espn_rss_never_panics,
    SourceKind::EspnRss,
    "espncricinfo/rss-livescores_2019-01-31.xml"
);
fuzz_parser!(
    damaged_cricketdata_never_panics,
    SourceKind::Cricketdata,
    "cricketdata/current-matches_2026-05-18.json"
);
fuzz_parser!(
    damaged_css_profile_pages_never_panic,
    SourceKind::css("cricbuzz-2018").unwrap(),
    "cricbuzz/old-layout_match-page_20082_2018-04-23.html"
);

proptest! {
    #![proptest_config(config())]
    #[test]
    fn arbitrary_text_never_panics_any_parser(page in ".{0,2000}") {
        for kind in [SourceKind::Cricbuzz, SourceKind::CricbuzzJson, SourceKind::Espncricinfo, SourceKind::EspnRss, SourceKind::Cricketdata] {
            if let Ok(ms) = kind.parse(&page) {
                prop_assert_eq!(sane(&ms), Ok(()));
            }
        }
    }
}
