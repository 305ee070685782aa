//! The one rule that says whether two listings of the same two teams are one match
//! ([`Facts::conflict`]), and the facts it compares ([`Facts`]: the start, the format class,
//! and what the description states, [`Described`]), with the text form stores keep them in.
//!
//! # The rule
//! Two listings are ONE match when they name the same two sides (the fixture identity: the
//! teams as the key reads them, women's, A, U19, Legends, Lions and Masters sides kept apart),
//! and none of these facts conflict:
//! - **Format class**: multi-day (Test, first-class), one-day (ODI, List A), 20-over (T20I,
//!   T20), 100-ball. Sites disagree on T20I or T20 for an associate match; never on the class.
//! - **What the descriptions state** ([`Described`]): the match number, the stage and its
//!   number, the round, the group, the series position. A fact stated on both sides must be
//!   equal (42nd vs 43rd, final vs semi-final, group 1 vs group 2 conflict); a fact stated on
//!   one side only is no conflict ("Super 8 Group 2" and "42nd Match, Super Eights, Group 2").
//! - **The start**, within a tolerance:
//!   - both timed: at most [`CLOSE`] (2 hours) apart. Sites list one match at one scheduled
//!     time, or a little apart (the toss time, a delayed start, an hour of daylight saving);
//!     two matches of one pair of sides on one day start at least 2½ hours apart (a T20
//!     lasts 3 h or more, The Hundred 2½ h), so a same-day double-header stays two matches.
//!   - one side dated only (CricketData writes `dateTimeGMT` at 00:00:00 for a match whose
//!     time it does not know): the timed start falls on that date as the venue's clock reads
//!     it, for any venue between UTC−5 ([`WEST`]: the Americas) and UTC+13 ([`EAST`]: New
//!     Zealand's summer, Samoa), i.e. from 13 h before the date's UTC midnight to 5 h after
//!     its end. No time zone of a venue is known, so every one cricket is played in counts.
//!   - both dated only: the same date.
//!   - When both listings NAME the match alike (the same match number, the same series
//!     position, or the same knockout stage), each window widens by a day ([`DAY`]): a match
//!     keeps its name when it moves to its reserve day or across midnight, and no two matches
//!     of one pair of sides share one.
//!   - A listing without any start is no fixture at all: it is compared by its site's id only.
//!
//! The rule errs toward one match: two listings whose facts cannot tell them apart are one
//! (a lost announcement, never a duplicate). Within one site, the site's own ids decide
//! before this rule is asked (see `Sightings` and the claim rule).

use super::description::{Described, Group, Stage};
use super::{Format, Match, Site};
use chrono::{DateTime, NaiveDate, NaiveTime, Timelike, Utc};
use std::fmt;

/// Two timed starts of one match are at most this far apart, in seconds (2 hours).
pub const CLOSE: i64 = 2 * 3600;
/// One day in seconds: the widening of every window when both listings name the match alike.
pub const DAY: i64 = 86_400;
/// A date-only start's day begins this much before its UTC midnight, in seconds (13 hours:
/// a venue at UTC+13).
pub const EAST: i64 = 13 * 3600;
/// A date-only start's day ends this much after the next UTC midnight, in seconds (5 hours:
/// a venue at UTC−5).
pub const WEST: i64 = 5 * 3600;

/// When a listing says a match starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Start {
    /// At this instant (UTC, to the second).
    At(DateTime<Utc>),
    /// On this date, at a time the site does not give.
    On(NaiveDate),
}

impl Start {
    /// The start `m` gives: its start time, except a CricketData start at exactly 00:00:00
    /// UTC, which is the date alone (cricapi writes midnight when it has no time: the
    /// fixture's Malaysia Women v Indonesia Women); `None` without a start time.
    pub fn of(m: &Match) -> Option<Start> {
        let t = m.start_time?;
        if m.site == Site::Cricketdata && t.time() == NaiveTime::MIN {
            return Some(Start::On(t.date_naive()));
        }
        Some(Start::At(t.with_nanosecond(0).unwrap_or(t)))
    }

    /// The UTC date this start is listed under (a key's and a fixture identity's date).
    pub fn date(self) -> NaiveDate {
        match self {
            Start::At(t) => t.date_naive(),
            Start::On(d) => d,
        }
    }

    /// Seconds since the Unix epoch: of the instant, or of the date's UTC midnight.
    fn seconds(self) -> i64 {
        match self {
            Start::At(t) => t.timestamp(),
            Start::On(d) => d.and_time(NaiveTime::MIN).and_utc().timestamp(),
        }
    }

    /// True when two starts of listings that name the match alike (`alike`) or not can be
    /// one match's; see the module documentation.
    fn agrees(self, other: Start, alike: bool) -> bool {
        let wide = if alike { DAY } else { 0 };
        match (self, other) {
            (Start::At(a), Start::At(b)) => (a.timestamp() - b.timestamp()).abs() <= CLOSE + wide,
            (Start::On(d), Start::At(t)) | (Start::At(t), Start::On(d)) => {
                let (day, t) = (Start::On(d).seconds(), t.timestamp());
                t >= day - EAST - wide && t < day + DAY + WEST + wide
            }
            (Start::On(a), Start::On(b)) => (Start::On(a).seconds() - Start::On(b).seconds()).abs() <= wide,
        }
    }
}

/// The family of a format, as every site agrees on it (sites disagree on T20I or T20 for an
/// associate match, on ODI or List A for an A-team's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatClass {
    /// Test and first-class matches.
    MultiDay,
    /// ODIs and List A matches.
    OneDay,
    /// T20Is and T20s.
    Twenty,
    /// The Hundred.
    Hundred,
}

impl FormatClass {
    /// The class of `format`; `None` for a format the table does not know ([`Format::Other`]).
    pub fn of(format: &Format) -> Option<FormatClass> {
        Some(match format {
            Format::Test | Format::FirstClass => FormatClass::MultiDay,
            Format::Odi | Format::ListA => FormatClass::OneDay,
            Format::T20i | Format::T20 => FormatClass::Twenty,
            Format::Hundred => FormatClass::Hundred,
            Format::Other(_) => return None,
        })
    }

    fn code(self) -> &'static str {
        match self {
            FormatClass::MultiDay => "m",
            FormatClass::OneDay => "o",
            FormatClass::Twenty => "t",
            FormatClass::Hundred => "h",
        }
    }

    fn from_code(code: &str) -> Option<FormatClass> {
        Some(match code {
            "m" => FormatClass::MultiDay,
            "o" => FormatClass::OneDay,
            "t" => FormatClass::Twenty,
            "h" => FormatClass::Hundred,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            FormatClass::MultiDay => "multi-day",
            FormatClass::OneDay => "one-day",
            FormatClass::Twenty => "20-over",
            FormatClass::Hundred => "100-ball",
        }
    }
}

/// What one listing (or several listings of one match, merged) says that tells its match
/// from another of the same two sides: compared by [`Facts::conflict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Facts {
    /// When it starts.
    pub start: Option<Start>,
    /// Its format class.
    pub class: Option<FormatClass>,
    /// What its description states.
    pub described: Described,
}

/// The first fact on which two listings disagree, for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// The starts are too far apart.
    Start,
    /// The format classes differ.
    Class,
    /// The match numbers differ.
    Number,
    /// The stages differ.
    Stage,
    /// The stages' numbers differ.
    StageNumber,
    /// The rounds differ.
    Round,
    /// The groups differ.
    Group,
    /// The series positions differ.
    Position,
}

impl Facts {
    /// What the listing `m` says: its start ([`Start::of`]), its format's class and its
    /// description's facts.
    pub fn of(m: &Match) -> Facts {
        Facts {
            start: Start::of(m),
            class: FormatClass::of(&m.format),
            described: m.description.as_deref().map(Described::read).unwrap_or_default(),
        }
    }

    /// The first fact on which these listings disagree, or `None` when they can be one match
    /// (see the module documentation for the rule, its tolerances and why).
    pub fn conflict(&self, other: &Facts) -> Option<Conflict> {
        fn differ<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            matches!((a, b), (Some(a), Some(b)) if a != b)
        }
        let (a, b) = (&self.described, &other.described);
        let checks = [
            (differ(self.class, other.class), Conflict::Class),
            (differ(a.number, b.number), Conflict::Number),
            (differ(a.stage, b.stage), Conflict::Stage),
            (differ(a.stage_number, b.stage_number), Conflict::StageNumber),
            (differ(a.round, b.round), Conflict::Round),
            (differ(a.group, b.group), Conflict::Group),
            (differ(a.position, b.position), Conflict::Position),
        ];
        if let Some((_, c)) = checks.iter().find(|(d, _)| *d) {
            return Some(*c);
        }
        match (self.start, other.start) {
            (Some(x), Some(y)) if !x.agrees(y, self.named_alike(other)) => Some(Conflict::Start),
            _ => None,
        }
    }

    /// True when no fact conflicts: the listings can be one match.
    pub fn agrees(&self, other: &Facts) -> bool {
        self.conflict(other).is_none()
    }

    /// [`Facts::agrees`] for facts as stores keep them ([`Facts::to_stored`]).
    pub fn stored_agree(a: &str, b: &str) -> bool {
        Facts::from_stored(a).agrees(&Facts::from_stored(b))
    }

    /// [`Facts::merged`] for facts as stores keep them: the text of `a` with every fact `b`
    /// states and `a` does not.
    pub fn stored_merged(a: &str, b: &str) -> String {
        Facts::from_stored(a).merged(&Facts::from_stored(b)).to_stored()
    }

    /// True when both listings name the match alike: the same match number, the same series
    /// position, or the same knockout stage.
    fn named_alike(&self, other: &Facts) -> bool {
        let (a, b) = (&self.described, &other.described);
        let same = |x: Option<u16>, y: Option<u16>| x.is_some() && x == y;
        same(a.number, b.number) || same(a.position, b.position) || (a.stage.is_some() && a.stage == b.stage)
    }

    /// These facts with every fact `other` states and these do not (listings of one match
    /// merged: the start is the timed one when one is dated only).
    pub fn merged(mut self, other: &Facts) -> Facts {
        fn fill<T: Copy>(field: &mut Option<T>, other: Option<T>) {
            if field.is_none() {
                *field = other;
            }
        }
        if matches!(
            (self.start, other.start),
            (None | Some(Start::On(_)), Some(Start::At(_)))
        ) {
            self.start = other.start;
        }
        fill(&mut self.start, other.start);
        fill(&mut self.class, other.class);
        let (a, b) = (&mut self.described, &other.described);
        fill(&mut a.number, b.number);
        fill(&mut a.stage, b.stage);
        fill(&mut a.stage_number, b.stage_number);
        fill(&mut a.round, b.round);
        fill(&mut a.group, b.group);
        fill(&mut a.position, b.position);
        self
    }

    /// The text stores keep: `field=value` pairs joined by `;`, in a fixed order: `t` (start,
    /// Unix seconds) or `d` (date-only start, Unix seconds of its UTC midnight), `f` (class:
    /// `m`, `o`, `t`, `h`), `n` (match number), `s` (stage, [`Stage::code`]), `sn` (stage
    /// number), `r` (round), `g` (group: a letter or a number), `p` (series position). The
    /// Redis script (`src/claim/lua/claim_match.lua`) reads and compares the same text.
    pub fn to_stored(&self) -> String {
        let mut parts: Vec<String> = Vec::with_capacity(8);
        match self.start {
            Some(s @ Start::At(_)) => parts.push(format!("t={}", s.seconds())),
            Some(s @ Start::On(_)) => parts.push(format!("d={}", s.seconds())),
            None => {}
        }
        if let Some(c) = self.class {
            parts.push(format!("f={}", c.code()));
        }
        let d = &self.described;
        if let Some(n) = d.number {
            parts.push(format!("n={n}"));
        }
        if let Some(s) = d.stage {
            parts.push(format!("s={}", s.code()));
        }
        if let Some(n) = d.stage_number {
            parts.push(format!("sn={n}"));
        }
        if let Some(r) = d.round {
            parts.push(format!("r={r}"));
        }
        if let Some(g) = d.group {
            parts.push(format!("g={g}"));
        }
        if let Some(p) = d.position {
            parts.push(format!("p={p}"));
        }
        parts.join(";")
    }

    /// Reads the text [`Facts::to_stored`] writes. A field this release does not know, or a
    /// value it cannot read, is passed over (stated by no side, so never a conflict).
    pub fn from_stored(text: &str) -> Facts {
        let mut f = Facts::default();
        for pair in text.split(';') {
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let n = || value.parse::<u16>().ok();
            let secs = || value.parse::<i64>().ok().and_then(|s| DateTime::from_timestamp(s, 0));
            let d = &mut f.described;
            match name {
                "t" => f.start = secs().map(Start::At).or(f.start),
                "d" => f.start = secs().map(|t| Start::On(t.date_naive())).or(f.start),
                "f" => f.class = FormatClass::from_code(value),
                "n" => d.number = n(),
                "s" => d.stage = Stage::from_code(value),
                "sn" => d.stage_number = n(),
                "r" => d.round = n(),
                "g" => d.group = Group::parse(value),
                "p" => d.position = n(),
                _ => {}
            }
        }
        f
    }
}

/// The facts in words, for logs and `claims show`: "starts 2024-06-19 14:30 UTC, 20-over,
/// match 42, Super 8, group 2".
impl fmt::Display for Facts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        match self.start {
            Some(Start::At(t)) => parts.push(format!("starts {}", t.format("%Y-%m-%d %H:%M UTC"))),
            Some(Start::On(d)) => parts.push(format!("on {d} (no time)")),
            None => parts.push("no start".into()),
        }
        if let Some(c) = self.class {
            parts.push(c.name().into());
        }
        let d = &self.described;
        if let Some(n) = d.number {
            parts.push(format!("match {n}"));
        }
        if let Some(s) = d.stage {
            match d.stage_number {
                Some(n) => parts.push(format!("{} {n}", s.name())),
                None => parts.push(s.name().into()),
            }
        }
        if let Some(r) = d.round {
            parts.push(format!("Super {r}"));
        }
        if let Some(g) = d.group {
            // A group's letter as sites print it ("group D"); stores keep it lower case.
            parts.push(match g {
                Group::Letter(c) => format!("group {}", c.to_ascii_uppercase()),
                Group::Number(n) => format!("group {n}"),
            });
        }
        if let Some(p) = d.position {
            parts.push(format!("no. {p} of its series"));
        }
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::sample_match;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn at(h: u32, m: u32) -> Option<Start> {
        Utc.with_ymd_and_hms(2024, 6, 19, h, m, 0).single().map(Start::At)
    }

    fn listed(start: Option<Start>, desc: &str) -> Facts {
        Facts {
            start,
            class: Some(FormatClass::Twenty),
            described: Described::read(desc),
        }
    }

    #[test]
    fn one_match_described_three_ways_is_one_match() {
        let cricbuzz = listed(at(14, 30), "Super 8 Group 2");
        let espn = listed(at(14, 30), "42nd Match, Super Eights, Group 2");
        let cricketdata = listed(at(14, 0), "Super 8, Match 42");
        for (a, b) in [(&cricbuzz, &espn), (&espn, &cricketdata), (&cricbuzz, &cricketdata)] {
            assert_eq!(a.conflict(b), None, "{a} / {b}");
        }
    }

    #[test]
    fn each_conflicting_fact_keeps_two_matches_apart() {
        let base = listed(at(14, 30), "42nd Match, Super Eights, Group 2");
        for (other, conflict) in [
            (listed(at(14, 30), "43rd Match"), Conflict::Number),
            (listed(at(14, 30), "Group 1"), Conflict::Group),
            (listed(at(14, 30), "Super Six"), Conflict::Round),
            (listed(at(19, 0), "Super 8"), Conflict::Start),
            (
                Facts {
                    class: Some(FormatClass::OneDay),
                    ..listed(at(14, 30), "")
                },
                Conflict::Class,
            ),
        ] {
            assert_eq!(base.conflict(&other), Some(conflict), "{other}");
        }
        assert_eq!(
            listed(at(14, 30), "Final").conflict(&listed(at(14, 30), "2nd Semi-Final")),
            Some(Conflict::Stage)
        );
        assert_eq!(
            listed(at(14, 30), "Semi-Final 1").conflict(&listed(at(14, 30), "2nd Semi-Final")),
            Some(Conflict::StageNumber)
        );
        assert_eq!(
            listed(at(14, 30), "1st T20I").conflict(&listed(at(14, 30), "2nd T20I")),
            Some(Conflict::Position)
        );
    }

    #[test]
    fn double_headers_and_consecutive_days_stay_apart_a_reserve_day_does_not() {
        // Same sides, same day, no descriptions: 10:00 and 14:00.
        assert_eq!(
            listed(at(10, 0), "").conflict(&listed(at(14, 0), "")),
            Some(Conflict::Start)
        );
        assert_eq!(listed(at(10, 0), "").conflict(&listed(at(12, 0), "")), None);
        // Consecutive days, with and without descriptions.
        let next_day = |h| Utc.with_ymd_and_hms(2024, 6, 20, h, 0, 0).single().map(Start::At);
        assert_eq!(
            listed(at(10, 0), "").conflict(&listed(next_day(10), "")),
            Some(Conflict::Start)
        );
        assert_eq!(
            listed(at(10, 0), "1st T20I").conflict(&listed(next_day(10), "2nd T20I")),
            Some(Conflict::Position)
        );
        // The final on its reserve day: named alike, a day later.
        assert_eq!(
            listed(at(10, 0), "Final").conflict(&listed(next_day(10), "Final (Reserve Day)")),
            None
        );
        assert_eq!(
            listed(at(10, 0), "Match 42").conflict(&listed(next_day(11), "42nd Match")),
            None
        );
    }

    #[test]
    fn a_date_only_start_agrees_with_a_time_on_that_date_somewhere_cricket_is_played() {
        let date = Some(Start::On(NaiveDate::from_ymd_opt(2024, 6, 19).unwrap()));
        // 14:30 UTC on the date; 04:00 UTC the next day (evening in the Caribbean); 12:00
        // UTC the day before (morning in New Zealand).
        for t in [
            at(14, 30),
            Utc.with_ymd_and_hms(2024, 6, 20, 4, 0, 0).single().map(Start::At),
            Utc.with_ymd_and_hms(2024, 6, 18, 12, 0, 0).single().map(Start::At),
        ] {
            assert_eq!(listed(date, "").conflict(&listed(t, "")), None, "{t:?}");
        }
        for t in [
            Utc.with_ymd_and_hms(2024, 6, 20, 6, 0, 0).single().map(Start::At),
            Utc.with_ymd_and_hms(2024, 6, 18, 10, 0, 0).single().map(Start::At),
        ] {
            assert_eq!(
                listed(t, "").conflict(&listed(date, "")),
                Some(Conflict::Start),
                "{t:?}"
            );
        }
        let next = Some(Start::On(NaiveDate::from_ymd_opt(2024, 6, 20).unwrap()));
        assert_eq!(listed(date, "").conflict(&listed(next, "")), Some(Conflict::Start));
        assert_eq!(listed(date, "Final").conflict(&listed(next, "Final")), None);
    }

    #[test]
    fn cricketdata_midnight_is_a_date_and_other_sites_midnight_a_time() {
        let mut m = sample_match(
            Site::Cricketdata,
            "x",
            "Malaysia Women",
            "Indonesia Women",
            Some("2nd T20I"),
        );
        m.start_time = Utc.with_ymd_and_hms(2026, 5, 17, 0, 0, 0).single();
        assert_eq!(
            Start::of(&m),
            Some(Start::On(NaiveDate::from_ymd_opt(2026, 5, 17).unwrap()))
        );
        m.site = Site::Cricbuzz;
        assert_eq!(Start::of(&m), m.start_time.map(Start::At));
    }

    #[test]
    fn the_stored_text_reads_back_as_written() {
        let f = listed(at(14, 30), "42nd Match, Super Eights, Group 2");
        assert_eq!(f.to_stored(), "t=1718807400;f=t;n=42;r=8;g=2");
        assert_eq!(Facts::from_stored(&f.to_stored()), f);
        let g = Facts {
            start: Some(Start::On(NaiveDate::from_ymd_opt(2024, 6, 19).unwrap())),
            class: None,
            described: Described::read("3rd Place Play-off, Group A, 2nd ODI"),
        };
        assert_eq!(g.to_stored(), "d=1718755200;s=po;sn=3;g=a;p=2");
        assert_eq!(Facts::from_stored(&g.to_stored()), g);
        // Unknown fields and unreadable values are passed over.
        assert_eq!(Facts::from_stored("x=1;n=zz;t=;g=ab"), Facts::default());
        assert_eq!(
            f.to_string(),
            "starts 2024-06-19 14:30 UTC, 20-over, match 42, Super 8, group 2"
        );
    }

    fn any_facts() -> impl Strategy<Value = Facts> {
        let small = || prop::option::of(1u16..4);
        (
            prop::option::of(prop_oneof![
                (0i64..4 * 86_400).prop_map(|s| Start::At(DateTime::from_timestamp(1_718_000_000 + s, 0).unwrap())),
                (0u64..4).prop_map(|d| Start::On(NaiveDate::from_ymd_opt(2024, 6, 10).unwrap() + chrono::Days::new(d))),
            ]),
            prop::option::of(prop::sample::select(vec![FormatClass::Twenty, FormatClass::OneDay])),
            (
                small(),
                prop::option::of(prop::sample::select(vec![Stage::Final, Stage::SemiFinal])),
                small(),
                small(),
                small(),
                small(),
            ),
        )
            .prop_map(
                |(start, class, (number, stage, stage_number, round, group, position))| Facts {
                    start,
                    class,
                    described: Described {
                        number,
                        stage,
                        stage_number,
                        round,
                        group: group.map(Group::Number),
                        position,
                    },
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The rule is symmetric, a listing is its own match, stated facts are kept in the
        /// stored text, and merging two listings that agree keeps every fact of each.
        #[test]
        fn the_rule_is_symmetric_and_the_stored_text_exact(a in any_facts(), b in any_facts()) {
            prop_assert_eq!(a.agrees(&b), b.agrees(&a));
            prop_assert!(a.agrees(&a));
            prop_assert_eq!(Facts::from_stored(&a.to_stored()), a);
            if a.agrees(&b) {
                let m = a.merged(&b);
                prop_assert!(m.described.number.is_some() == (a.described.number.is_some() || b.described.number.is_some()));
                prop_assert_eq!(m.class, a.class.or(b.class));
            }
        }

        /// A listing that states nothing but its start agrees with every listing of that start.
        #[test]
        fn a_listing_stating_nothing_conflicts_with_nothing_at_its_start(a in any_facts()) {
            let bare = Facts { start: a.start, ..Facts::default() };
            prop_assert_eq!(bare.conflict(&a), None);
        }
    }
}
