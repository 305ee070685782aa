//! [`MatchKey`]: the cross-source identity of a match, derived from the match itself so that
//! two sources (or two tabs of one page, or one listing before and after an edit) that list the
//! same match produce the same key. The identities a claim records (the key among them) are
//! `super::identity`'s.

use super::names::{description_slug, team_slug};
use super::Match;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most bytes a key may have; longer inputs are cut at a character boundary. Keeps Redis keys
/// and SQLite rows small even when a page carries a hostile 10 KB team name.
const MAX_KEY_BYTES: usize = 200;

/// The identity of a match for claims: `<start date UTC>_<team>-v-<team>_<description>`, for
/// example `2026-07-17_bangladesh-v-zimbabwe_2nd-t20i`.
///
/// Team names are normalised (HTML entities decoded, accents and case folded, `&` read as
/// "and", a leading "The" and a trailing "Men" dropped, and the names sites use for one side
/// mapped to one: see `src/cricket/names.rs`) and sorted, so the order in which a page lists
/// the sides does not matter. The description keeps its own part: qualifiers in brackets or
/// after a comma (D/N, Reserve Day, the group) are dropped. When a page gives no start time the
/// key falls back to the page's own id (`cricbuzz-158062`), which is stable for that source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MatchKey(String);

impl MatchKey {
    /// Derives the key of `m`; see the type's documentation for the rule.
    pub fn for_match(m: &Match) -> MatchKey {
        match m.start_time {
            Some(start) => Self::dated(m, start, Derivation::Tolerant),
            None => Self::fallback(m),
        }
    }

    /// The key the previous release derived for `m` (team names only lower-cased and slugged,
    /// description cut at its first comma), so that a store written by it still protects its
    /// matches: a claim is looked up under this key too when it differs.
    pub fn legacy_for_match(m: &Match) -> MatchKey {
        match m.start_time {
            Some(start) => Self::dated(m, start, Derivation::Legacy),
            None => Self::fallback(m),
        }
    }

    fn fallback(m: &Match) -> MatchKey {
        MatchKey(cap(format!("{}-{}", m.site, super::names::plain_slug(&m.source_id))))
    }

    fn dated(m: &Match, start: DateTime<Utc>, how: Derivation) -> MatchKey {
        let (a, b, what) = match how {
            Derivation::Tolerant => (
                team_slug(&m.teams[0].name),
                team_slug(&m.teams[1].name),
                m.description.as_deref().map(description_slug).filter(|s| !s.is_empty()),
            ),
            Derivation::Legacy => (
                super::names::plain_slug(&m.teams[0].name),
                super::names::plain_slug(&m.teams[1].name),
                m.description
                    .as_deref()
                    .map(super::names::legacy_description_slug)
                    .filter(|s| !s.is_empty()),
            ),
        };
        let mut teams = [a, b];
        teams.sort();
        let what = what.unwrap_or_else(|| super::names::plain_slug(m.format.label()));
        let mut key = String::with_capacity(10 + 1 + teams[0].len() + 3 + teams[1].len() + 1 + what.len());
        push_date(&mut key, start.date_naive());
        for part in ["_", &teams[0], "-v-", &teams[1], "_", &what] {
            key.push_str(part);
        }
        MatchKey(cap(key))
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

    /// The fixture this key names, `<date>_<teams>`: its text up to its second `_` (or all of
    /// it when it has one `_` only); `None` for a key without a date (the `<site>-<id>`
    /// fallback). See [`fixture_of`].
    pub fn fixture(&self) -> Option<&str> {
        fixture_of(&self.0)
    }

    /// The key a match is stored under when another match of the same fixture holds this one
    /// (a double-header whose listings derive one key): this key, `_`, and the listing's own
    /// id `source` (`espncricinfo:1415755`) as a slug, at most 64 bytes of it
    /// (`2024-06-19_a-v-b_t20i_espncricinfo-1415755`). Its fixture is this key's unless this
    /// key is so long that it had to be cut (hostile names).
    pub fn beside(&self, source: &str) -> MatchKey {
        let mut id = super::names::plain_slug(source);
        crate::text::cut_to_bytes(&mut id, 64);
        let mut base = self.0.clone();
        crate::text::cut_to_bytes(&mut base, MAX_KEY_BYTES - 1 - id.len());
        MatchKey(format!("{base}_{id}"))
    }

    /// The same key with its start date moved by `days` (`None` for a key without a date, the
    /// `<site>-<id>` fallback).
    pub(super) fn shifted(&self, days: i64) -> Option<MatchKey> {
        let (date, rest) = self.0.split_once('_')?;
        let moved = parse_date(date)?.checked_add_signed(chrono::Duration::days(days))?;
        let mut key = String::with_capacity(self.0.len() + 1);
        push_date(&mut key, moved);
        key.push('_');
        key.push_str(rest);
        Some(MatchKey(key))
    }

    /// What differs between this key and `other`, for people: `start 2026-07-17 → 2026-07-16;
    /// description 2nd-t20i → 2nd-t20i-d-n`. Empty when they are equal.
    pub fn changes_to(&self, other: &MatchKey) -> String {
        let parts = |k: &MatchKey| -> [String; 3] {
            let mut it = k.0.splitn(3, '_');
            match (it.next(), it.next(), it.next()) {
                (Some(d), Some(t), Some(w)) => [d.into(), t.into(), w.into()],
                _ => [String::new(), k.0.clone(), String::new()],
            }
        };
        let (a, b) = (parts(self), parts(other));
        ["start", "teams", "description"]
            .iter()
            .zip(a.iter().zip(&b))
            .filter(|(_, (x, y))| x != y)
            .map(|(what, (x, y))| {
                let show = |s: &str| {
                    if s.is_empty() {
                        "(none)".to_string()
                    } else {
                        s.to_string()
                    }
                };
                format!("{what} {} → {}", show(x), show(y))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl fmt::Display for MatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy)]
enum Derivation {
    Tolerant,
    Legacy,
}

/// The fixture a match key's text names: its `YYYY-MM-DD` date, `_`, and its teams (up to the
/// next `_`, or the end); `None` when it does not start with such a date. A store may hand
/// back any text as a key: the Redis script (`src/claim/lua/claim_match.lua`) reads a key's
/// fixture by this same pattern.
pub(crate) fn fixture_of(key: &str) -> Option<&str> {
    let b = key.as_bytes();
    let dated = b.len() > 10
        && b[10] == b'_'
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !dated {
        return None;
    }
    let teams = key[11..].find('_').map_or(key.len(), |at| 11 + at);
    Some(&key[..teams])
}

/// Writes `date` as a key does, `YYYY-MM-DD` (chrono's `%Y-%m-%d`), onto `out`: digit by digit
/// for the years 0 to 9999, where chrono's formatter (which reads its format string each
/// time) was a tenth of a sighting's cost (docs/benchmarks.md, 4b); chrono's own text for any
/// other year.
fn push_date(out: &mut String, date: NaiveDate) {
    let year = date.year();
    let Ok(y @ 0..=9999) = u32::try_from(year) else {
        // Signed and wider years, exactly as chrono writes them.
        out.push_str(&date.format("%Y-%m-%d").to_string());
        return;
    };
    let digit = |n: u32| char::from(b'0' + u8::try_from(n % 10).unwrap_or(0));
    for d in [y / 1000, y / 100, y / 10, y] {
        out.push(digit(d));
    }
    out.push('-');
    out.push(digit(date.month() / 10));
    out.push(digit(date.month()));
    out.push('-');
    out.push(digit(date.day() / 10));
    out.push(digit(date.day()));
}

/// Reads a key's date, `YYYY-MM-DD`, as chrono's `%Y-%m-%d` does: digit by digit when it is
/// written as [`push_date`] writes it, else by chrono.
fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    let plain = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !plain {
        return NaiveDate::parse_from_str(text, "%Y-%m-%d").ok();
    }
    let n = |from: usize, to: usize| b[from..to].iter().fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'));
    NaiveDate::from_ymd_opt(i32::try_from(n(0, 4)).ok()?, n(5, 7), n(8, 10))
}

fn cap(mut s: String) -> String {
    crate::text::cut_to_bytes(&mut s, MAX_KEY_BYTES);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{sample_match as m, Site};

    #[test]
    fn a_keys_date_is_written_and_read_as_chrono_writes_and_reads_it() {
        let mut day = NaiveDate::from_ymd_opt(-2, 12, 25).unwrap();
        let days = (0..800).map(|_| {
            day = day.succ_opt().unwrap();
            day
        });
        let edges = [(0, 1, 1), (1999, 12, 31), (2024, 2, 29), (9999, 12, 31), (10_000, 1, 1)];
        let edges = edges.map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap());
        for date in days
            .chain(edges)
            .chain((0..3000).map(|i| edges[1] + chrono::Duration::days(i * 9)))
        {
            let mut ours = String::new();
            push_date(&mut ours, date);
            assert_eq!(ours, date.format("%Y-%m-%d").to_string());
            assert_eq!(parse_date(&ours), Some(date), "{ours}");
        }
        for text in [
            "2026-7-17",
            "2026-02-30",
            "2026-13-01",
            "20260717",
            "2026-07-1x",
            "+10000-01-01",
            "",
        ] {
            assert_eq!(
                parse_date(text),
                NaiveDate::parse_from_str(text, "%Y-%m-%d").ok(),
                "{text}"
            );
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
            Some("2nd  T20I (D/N)"),
        );
        assert_eq!(MatchKey::for_match(&a), MatchKey::for_match(&b));
        let c = m(
            Site::Cricketdata,
            "x",
            "Nepal Men",
            "United States of America",
            Some("Match 12"),
        );
        let d = m(Site::Cricbuzz, "y", "USA", "Nepal", Some("12th Match, Group A"));
        assert_eq!(MatchKey::for_match(&c), MatchKey::for_match(&d));
    }

    #[test]
    fn keys_of_the_previous_release_are_kept_for_upgrades() {
        let x = m(
            Site::Cricbuzz,
            "1",
            "Nepal Men",
            "United States",
            Some("36th Match, Group A"),
        );
        assert_eq!(
            MatchKey::legacy_for_match(&x).as_str(),
            "2026-07-17_nepal-men-v-united-states_36th-match"
        );
        assert_eq!(
            MatchKey::for_match(&x).as_str(),
            "2026-07-17_nepal-v-united-states_36th-match"
        );
        let ids = crate::cricket::Identities::of(&x);
        assert!(ids.other_keys.contains(&MatchKey::legacy_for_match(&x)));
    }

    #[test]
    fn a_match_without_start_time_falls_back_to_the_page_id() {
        let mut x = m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", None);
        x.start_time = None;
        assert_eq!(MatchKey::for_match(&x).as_str(), "cricbuzz-158062");
    }

    #[test]
    fn what_changed_between_two_keys_is_said_in_words() {
        let a = MatchKey::parse("2026-07-17_a-v-b_2nd-t20i").unwrap();
        let b = MatchKey::parse("2026-07-16_a-v-b_2nd-t20i").unwrap();
        assert_eq!(a.changes_to(&b), "start 2026-07-17 → 2026-07-16");
        assert_eq!(a.changes_to(&a), "");
        let c = MatchKey::parse("cricbuzz-1").unwrap();
        assert_eq!(
            c.changes_to(&a),
            "start (none) → 2026-07-17; teams cricbuzz-1 → a-v-b; description (none) → 2nd-t20i"
        );
    }

    #[test]
    fn a_key_names_its_fixture_and_a_key_beside_it_the_same() {
        let k = MatchKey::parse("2024-06-19_south-africa-v-united-states_super-8-group-2").unwrap();
        assert_eq!(k.fixture(), Some("2024-06-19_south-africa-v-united-states"));
        let beside = k.beside("cricbuzz:87780");
        assert_eq!(
            beside.as_str(),
            "2024-06-19_south-africa-v-united-states_super-8-group-2_cricbuzz-87780"
        );
        assert_eq!(beside.fixture(), k.fixture());
        // A key of the most bytes gives room to the id: the key beside it is another.
        let long = MatchKey::parse(&format!("2024-06-19_{}", "a".repeat(MAX_KEY_BYTES - 11))).unwrap();
        let beside = long.beside("cricbuzz:1");
        assert_eq!(beside.as_str().len(), MAX_KEY_BYTES);
        assert!(beside.as_str().ends_with("a_cricbuzz-1"), "{beside}");
        assert_eq!(fixture_of("2024-06-19_a-v-b"), Some("2024-06-19_a-v-b"));
        for none in [
            "cricbuzz-158062",
            "2024-6-19_a-v-b_x",
            "2024-06-19",
            "2024-06-19-a_b",
            "x2024-06-19_a",
        ] {
            assert_eq!(fixture_of(none), None, "{none}");
        }
    }

    #[test]
    fn hostile_names_give_a_bounded_key_without_spaces() {
        let long = "ü ".repeat(10_000);
        let k = MatchKey::for_match(&m(Site::Cricbuzz, "1", &long, "B\nC\u{0}", Some("x y")));
        assert!(k.as_str().len() <= MAX_KEY_BYTES);
        assert!(MatchKey::parse(k.as_str()).is_some());
    }
}
