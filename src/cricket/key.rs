//! [`MatchKey`]: the claim identity of a match, derived from the match itself so that two
//! sources (or two tabs of one page) that list the same match produce the same key.

use super::Match;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most bytes a key may have; longer inputs are cut at a character boundary. Keeps Redis keys
/// and SQLite rows small even when a page carries a hostile 10 KB team name.
const MAX_KEY_BYTES: usize = 200;

/// The identity of a match for claims: `<start date UTC>_<team>-v-<team>_<description>`, for
/// example `2026-07-17_bangladesh-v-zimbabwe_2nd-t20i`.
///
/// Team names are lower-cased, reduced to letters and digits joined by `-`, and sorted, so the
/// order in which a page lists the sides does not matter. When a page gives no start time the key
/// falls back to the page's own id (`cricbuzz-158062`), which is stable for that source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MatchKey(String);

impl MatchKey {
    /// Derives the key of `m`; see the type's documentation for the rule.
    pub fn for_match(m: &Match) -> MatchKey {
        let Some(start) = m.start_time else {
            return MatchKey(cap(format!("{}-{}", m.site, slug(&m.source_id))));
        };
        let mut teams = [slug(&m.teams[0].name), slug(&m.teams[1].name)];
        teams.sort();
        let what = m
            .description
            .as_deref()
            .map(description_slug)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| slug(m.format.label()));
        MatchKey(cap(format!(
            "{}_{}-v-{}_{}",
            start.format("%Y-%m-%d"),
            teams[0],
            teams[1],
            what
        )))
    }

    /// Accepts a key typed by an operator (`claims show KEY`). Returns `None` for an empty string
    /// or one containing whitespace or control characters, which no derived key ever has.
    pub fn parse(raw: &str) -> Option<MatchKey> {
        let raw = raw.trim();
        if raw.is_empty() || raw.len() > MAX_KEY_BYTES || raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        Some(MatchKey(raw.to_string()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lower-cases `s` and keeps runs of letters and digits, joined by single `-`.
fn slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The description's own part (before the first comma: "42nd Match, Super Eights, Group 2"
/// is the 42nd match), slugged, with a trailing number made an ordinal in front, so sources
/// writing "Match 12" and "12th Match", or "Semi Final 1" and "1st Semi-Final", agree.
fn description_slug(desc: &str) -> String {
    let own = desc.split(',').next().unwrap_or(desc);
    let s = slug(own);
    let mut words: Vec<&str> = s.split('-').filter(|w| !w.is_empty()).collect();
    let has_ordinal = words.iter().any(|w| is_ordinal(w));
    match words.last() {
        Some(last) if !has_ordinal && words.len() > 1 && last.chars().all(|c| c.is_ascii_digit()) => {
            let n = ordinal(last);
            words.pop();
            format!("{n}-{}", words.join("-"))
        }
        _ => s,
    }
}

fn is_ordinal(w: &str) -> bool {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && matches!(&w[digits.len()..], "st" | "nd" | "rd" | "th")
}

fn ordinal(n: &str) -> String {
    let v: u64 = n.parse().unwrap_or(0);
    let suffix = match (v % 10, v % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{v}{suffix}")
}

fn cap(mut s: String) -> String {
    if s.len() > MAX_KEY_BYTES {
        let mut end = MAX_KEY_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{Format, MatchState, Site, Team};
    use chrono::TimeZone;

    fn m(site: Site, id: &str, a: &str, b: &str, desc: Option<&str>) -> Match {
        Match {
            site,
            source_id: id.into(),
            teams: [
                Team {
                    name: a.into(),
                    short_name: None,
                },
                Team {
                    name: b.into(),
                    short_name: None,
                },
            ],
            series: None,
            description: desc.map(Into::into),
            format: Format::T20i,
            venue: None,
            start_time: Some(chrono::Utc.with_ymd_and_hms(2026, 7, 17, 10, 30, 0).unwrap()),
            state: MatchState::Upcoming,
            status: None,
            url: "https://example.com/m".parse().unwrap(),
        }
    }

    #[test]
    fn the_key_names_date_sorted_teams_and_description() {
        let k = MatchKey::for_match(&m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", Some("2nd T20I")));
        assert_eq!(k.as_str(), "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i");
    }

    #[test]
    fn the_same_match_from_two_sites_in_either_order_has_one_key() {
        let a = m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", Some("2nd T20I"));
        let b = m(
            Site::Espncricinfo,
            "1530000",
            "bangladesh",
            "ZIMBABWE",
            Some("2nd  T20I"),
        );
        assert_eq!(MatchKey::for_match(&a), MatchKey::for_match(&b));
    }

    #[test]
    fn descriptions_written_differently_by_two_sites_agree() {
        let key = |d: &str| {
            MatchKey::for_match(&m(Site::Cricbuzz, "1", "A", "B", Some(d)))
                .as_str()
                .to_string()
        };
        assert_eq!(key("Match 12"), key("12th Match"));
        assert_eq!(key("Semi Final 1"), key("1st Semi-Final"));
        assert_eq!(key("42nd Match, Super Eights, Group 2"), key("42nd Match"));
        assert_eq!(key("Match 11"), key("11th Match"));
        assert_eq!(key("Match 22"), key("22nd match"));
        assert_ne!(key("1st T20I"), key("2nd T20I"));
        assert!(key("2nd T20I").ends_with("_2nd-t20i"));
    }

    #[test]
    fn a_match_without_start_time_falls_back_to_the_page_id() {
        let mut x = m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", None);
        x.start_time = None;
        assert_eq!(MatchKey::for_match(&x).as_str(), "cricbuzz-158062");
    }

    #[test]
    fn hostile_names_give_a_bounded_key_without_spaces() {
        let long = "ü ".repeat(10_000);
        let k = MatchKey::for_match(&m(Site::Cricbuzz, "1", &long, "B\nC\u{0}", Some("x y")));
        assert!(k.as_str().len() <= MAX_KEY_BYTES);
        assert!(MatchKey::parse(k.as_str()).is_some());
    }
}
