//! What a match's description says about WHICH match it is, read into facts ([`Described`]):
//! its number in the tournament ("42nd Match", "Match 42"), its stage (final, semi-final 2,
//! qualifier 1, eliminator, play-off for 3rd place, …), its round (Super 8, Super Six,
//! Super 12), its group ("Group 2", "Group A", "Pool B") and its place in a series ("2nd
//! T20I", "3rd Test"). Words that say how or when it is played (day/night, reserve day, pink
//! ball, brackets) say nothing of which match it is and are passed over.
//!
//! Sites word one match differently ("Super 8 Group 2" on Cricbuzz's API, "42nd Match, Super
//! Eights, Group 2" on ESPNcricinfo, "Super 8, Match 42" in CricketData's naming); what they
//! state of it does not differ. A number belongs to the word it follows or precedes: a
//! group's number is never a match number, nor is a round's. Pure: text in, facts out.

use super::names::words;

/// What a description states about which match it is. Each field is `None` when the
/// description does not say; two descriptions of one match never state different values
/// (see [`super::Facts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Described {
    /// The match's number in its tournament: 42 for "42nd Match", "Match 42", "Match No. 42".
    pub number: Option<u16>,
    /// A knockout or play-off stage: "Final", "2nd Semi-Final", "Qualifier 1".
    pub stage: Option<Stage>,
    /// The stage's own number: 2 for "Semi-Final 2", 1 for "Qualifier 1", the place played
    /// for (3) for "3rd Place Play-off".
    pub stage_number: Option<u16>,
    /// The round, by its number of sides: 8 for "Super 8" or "Super Eights", 6 for "Super
    /// Six", 12 for "Super 12", 4 for "Super Four".
    pub round: Option<u16>,
    /// The group or pool: "Group 2", "Group A", "Pool B".
    pub group: Option<Group>,
    /// The match's place in a series: 2 for "2nd T20I", 3 for "3rd Test", 1 for "1st
    /// unofficial ODI".
    pub position: Option<u16>,
}

/// A knockout or play-off stage of a tournament.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The final ("Final", "Grand Final").
    Final,
    /// A semi-final.
    SemiFinal,
    /// A quarter-final.
    QuarterFinal,
    /// A qualifier of a play-off ("Qualifier 1" of the IPL's).
    Qualifier,
    /// An eliminator.
    Eliminator,
    /// The Big Bash's "Knockout".
    Knockout,
    /// The Big Bash's "Challenger".
    Challenger,
    /// A play-off for a place ("3rd Place Play-off"; the place is the stage number).
    PlayOff,
}

impl Stage {
    /// The stage's word as stores keep it: `final`, `sf`, `qf`, `q`, `el`, `ko`, `ch`, `po`.
    pub fn code(self) -> &'static str {
        match self {
            Stage::Final => "final",
            Stage::SemiFinal => "sf",
            Stage::QuarterFinal => "qf",
            Stage::Qualifier => "q",
            Stage::Eliminator => "el",
            Stage::Knockout => "ko",
            Stage::Challenger => "ch",
            Stage::PlayOff => "po",
        }
    }

    /// The stage a [`Stage::code`] names.
    pub fn from_code(code: &str) -> Option<Stage> {
        Some(match code {
            "final" => Stage::Final,
            "sf" => Stage::SemiFinal,
            "qf" => Stage::QuarterFinal,
            "q" => Stage::Qualifier,
            "el" => Stage::Eliminator,
            "ko" => Stage::Knockout,
            "ch" => Stage::Challenger,
            "po" => Stage::PlayOff,
            _ => return None,
        })
    }

    /// The stage in words, for people: "final", "semi-final", "play-off".
    pub fn name(self) -> &'static str {
        match self {
            Stage::Final => "final",
            Stage::SemiFinal => "semi-final",
            Stage::QuarterFinal => "quarter-final",
            Stage::Qualifier => "qualifier",
            Stage::Eliminator => "eliminator",
            Stage::Knockout => "knockout",
            Stage::Challenger => "challenger",
            Stage::PlayOff => "play-off",
        }
    }
}

/// A group or pool: a letter ("Group A") or a number ("Group 2").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// "Group A": the letter, lower case.
    Letter(char),
    /// "Group 2".
    Number(u16),
}

impl Group {
    /// Reads a group as stores keep it and [`std::fmt::Display`] writes it: `a`, `2`.
    pub fn parse(text: &str) -> Option<Group> {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_lowercase() => Some(Group::Letter(c)),
            _ => number(text).map(Group::Number),
        }
    }
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Group::Letter(c) => write!(f, "{c}"),
            Group::Number(n) => write!(f, "{n}"),
        }
    }
}

/// Words naming a series' kind of match after its position ("2nd T20I", "3rd Test").
const SERIES_WORDS: &[&str] = &[
    "test", "tests", "odi", "odis", "t20i", "t20is", "it20", "t20", "t20s", "twenty20", "youdi",
];

/// Words that may stand between a position and its series word ("1st unofficial Test",
/// "2nd Youth ODI", "1st Women's ODI").
const BETWEEN_POSITION_AND_KIND: &[&str] = &["unofficial", "youth", "women", "womens", "s", "one", "day"];

impl Described {
    /// Reads `description` into the facts it states; see the module documentation. Text that
    /// states nothing of which match it is ("Day/Night", "", a hostile string) gives no facts.
    pub fn read(description: &str) -> Described {
        let w = words(description);
        let mut out = Described::default();
        let mut i = 0;
        while i < w.len() {
            i += out.read_at(&w, i).max(1);
        }
        out
    }

    /// Reads what starts at word `i` of `w` into `self` (the first statement of each fact
    /// counts); returns how many words it took (0: none).
    fn read_at(&mut self, w: &[String], i: usize) -> usize {
        let at = |k: usize| w.get(i + k).map(String::as_str);
        let word = w[i].as_str();
        // "Super 8", "Super Eights", "Super Six", "Super 12".
        if word == "super" {
            if let Some(n) = at(1).and_then(round_size) {
                set(&mut self.round, n);
                return 2;
            }
            return 1;
        }
        // "Group 2", "Group A", "Pool B", "Grp C".
        if matches!(word, "group" | "grp" | "pool") {
            if let Some(g) = at(1).and_then(group_name) {
                if self.group.is_none() {
                    self.group = Some(g);
                }
                return 2;
            }
            return 1;
        }
        // "Match 42", "Match No 42", "Match Number 42".
        if word == "match" {
            let skip = usize::from(matches!(at(1), Some("no" | "number")));
            if let Some(n) = at(1 + skip).and_then(number) {
                set(&mut self.number, n);
                return 2 + skip;
            }
            return 1;
        }
        if let Some((stage, took, inline)) = stage_at(w, i) {
            if self.stage.is_none() {
                self.stage = Some(stage);
            }
            // "Semi-Final 2", "Qualifier 1", "Eliminator 2": the stage's number after it (or
            // in its word: "SF1"); "Play-off for 3rd place": the place after it.
            let mut used = took;
            if let Some(n) = inline {
                set(&mut self.stage_number, n);
            } else if let Some(n) = at(took).and_then(number) {
                set(&mut self.stage_number, n);
                used += 1;
            } else if stage == Stage::PlayOff {
                if let (Some("for"), Some(place), Some("place")) = (at(took), at(took + 1), at(took + 2)) {
                    if let Some(n) = ordinal(place) {
                        set(&mut self.stage_number, n);
                        used += 3;
                    }
                }
            }
            return used;
        }
        // An ordinal: "42nd Match", "2nd T20I", "1st Semi-Final", "3rd Place Play-off".
        if let Some(n) = ordinal(word) {
            match at(1) {
                Some("match") => {
                    set(&mut self.number, n);
                    return 2;
                }
                Some("place") => {
                    // "3rd Place Play-off": the place a play-off is for.
                    if let Some((Stage::PlayOff, took, _)) = stage_at(w, i + 2) {
                        set(&mut self.stage_number, n);
                        if self.stage.is_none() {
                            self.stage = Some(Stage::PlayOff);
                        }
                        return 2 + took;
                    }
                    return 2;
                }
                _ => {}
            }
            if let Some((stage, took, _)) = stage_at(w, i + 1) {
                if self.stage.is_none() {
                    self.stage = Some(stage);
                }
                set(&mut self.stage_number, n);
                return 1 + took;
            }
            // "2nd T20I", "1st unofficial ODI", "2nd Youth Test".
            let between = w[i + 1..]
                .iter()
                .take_while(|x| BETWEEN_POSITION_AND_KIND.contains(&x.as_str()))
                .count();
            if at(1 + between).is_some_and(|x| SERIES_WORDS.contains(&x))
                || (between > 0 && at(between) == Some("day") && at(between - 1) == Some("one"))
            {
                set(&mut self.position, n);
                return 2 + between;
            }
        }
        0
    }

    /// True when the description states nothing of which match it is.
    pub fn is_empty(&self) -> bool {
        *self == Described::default()
    }
}

/// Sets `field` to `value` unless the description stated it already (the first statement
/// counts: "Match 5, 6th over" is match 5).
fn set(field: &mut Option<u16>, value: u16) {
    if field.is_none() {
        *field = Some(value);
    }
}

/// The stage whose words start at `w[i]`, how many words it takes, and the number written in
/// its word ("SF1").
fn stage_at(w: &[String], i: usize) -> Option<(Stage, usize, Option<u16>)> {
    let at = |k: usize| w.get(i + k).map(String::as_str);
    let (stage, took) = match (at(0)?, at(1)) {
        ("semi" | "semis", Some("final" | "finals")) => (Stage::SemiFinal, 2),
        ("semifinal" | "semifinals" | "sf", _) => (Stage::SemiFinal, 1),
        ("quarter", Some("final" | "finals")) => (Stage::QuarterFinal, 2),
        ("quarterfinal" | "quarterfinals" | "qf", _) => (Stage::QuarterFinal, 1),
        ("grand", Some("final")) => (Stage::Final, 2),
        ("final", _) => (Stage::Final, 1),
        ("qualifier", _) => (Stage::Qualifier, 1),
        ("eliminator", _) => (Stage::Eliminator, 1),
        ("knockout", _) => (Stage::Knockout, 1),
        ("challenger", _) => (Stage::Challenger, 1),
        ("play", Some("off" | "offs")) => (Stage::PlayOff, 2),
        ("playoff" | "playoffs", _) => (Stage::PlayOff, 1),
        (code, _) => {
            // "SF1", "QF3": the stage and its number in one word.
            let (stage, rest) = if let Some(rest) = code.strip_prefix("sf") {
                (Stage::SemiFinal, rest)
            } else {
                (Stage::QuarterFinal, code.strip_prefix("qf")?)
            };
            return Some((stage, 1, Some(number(rest)?)));
        }
    };
    Some((stage, took, None))
}

/// The number of sides a round is named for: "8", "eight", "eights", "8s", "six", "sixes",
/// "12", "twelve", "four".
fn round_size(word: &str) -> Option<u16> {
    Some(match word {
        "four" | "fours" | "4" | "4s" => 4,
        "six" | "sixes" | "6" | "6s" => 6,
        "eight" | "eights" | "8" | "8s" => 8,
        "ten" | "10" | "10s" => 10,
        "twelve" | "twelves" | "12" | "12s" => 12,
        _ => return None,
    })
}

/// A group's name: one letter ("a") or a number ("2").
fn group_name(word: &str) -> Option<Group> {
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => Some(Group::Letter(c.to_ascii_lowercase())),
        _ => number(word).map(Group::Number),
    }
}

/// A number of at most four digits (a match, group or stage number; longer is no such
/// number).
fn number(word: &str) -> Option<u16> {
    if word.is_empty() || word.len() > 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok()
}

/// An ordinal: "1st", "42nd", "3rd", "11th", or "first" … "tenth".
fn ordinal(word: &str) -> Option<u16> {
    const WORDS: [&str; 10] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    ];
    if let Some(at) = WORDS.iter().position(|w| *w == word) {
        return u16::try_from(at + 1).ok();
    }
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if matches!(suffix, "st" | "nd" | "rd" | "th") {
        number(digits)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn facts(
        n: Option<u16>,
        stage: Option<(Stage, Option<u16>)>,
        round: Option<u16>,
        group: Option<Group>,
        position: Option<u16>,
    ) -> Described {
        Described {
            number: n,
            stage: stage.map(|s| s.0),
            stage_number: stage.and_then(|s| s.1),
            round,
            group,
            position,
        }
    }

    #[test]
    fn the_sites_wordings_of_one_super_eight_game_state_the_same_facts() {
        let want = facts(Some(42), None, Some(8), Some(Group::Number(2)), None);
        // ESPNcricinfo's page, CricketData's naming ("Super Six, Match 10" in the fixture).
        for d in [
            "42nd Match, Super Eights, Group 2",
            "Super 8, Group 2, Match 42",
            "Match 42 (Super 8 Group 2)",
        ] {
            assert_eq!(Described::read(d), want, "{d}");
        }
        // Cricbuzz's API: no match number; its group's number is no match number.
        assert_eq!(
            Described::read("Super 8 Group 2"),
            facts(None, None, Some(8), Some(Group::Number(2)), None)
        );
        assert_eq!(
            Described::read("Super Six, Match 10"),
            facts(Some(10), None, Some(6), None, None)
        );
    }

    #[test]
    fn stages_and_their_numbers() {
        let stage = |s, n| facts(None, Some((s, n)), None, None, None);
        for (d, want) in [
            ("Final", stage(Stage::Final, None)),
            ("Final (Reserve Day)", stage(Stage::Final, None)),
            ("Grand Final", stage(Stage::Final, None)),
            ("1st Semi-Final", stage(Stage::SemiFinal, Some(1))),
            ("Semi Final 2", stage(Stage::SemiFinal, Some(2))),
            ("2nd Semifinal (D/N)", stage(Stage::SemiFinal, Some(2))),
            ("SF1", stage(Stage::SemiFinal, Some(1))),
            ("Semi-Final", stage(Stage::SemiFinal, None)),
            ("3rd Quarter-Final", stage(Stage::QuarterFinal, Some(3))),
            ("Qualifier 1", stage(Stage::Qualifier, Some(1))),
            ("Eliminator", stage(Stage::Eliminator, None)),
            ("Eliminator 2", stage(Stage::Eliminator, Some(2))),
            ("Knockout", stage(Stage::Knockout, None)),
            ("3rd Place Play-off", stage(Stage::PlayOff, Some(3))),
            ("Play-off for 5th place", stage(Stage::PlayOff, Some(5))),
            ("Third Place Playoff", stage(Stage::PlayOff, Some(3))),
        ] {
            assert_eq!(Described::read(d), want, "{d}");
        }
        assert_eq!(
            Described::read("71st Match, Final"),
            facts(Some(71), Some((Stage::Final, None)), None, None, None)
        );
    }

    #[test]
    fn series_positions_and_what_is_passed_over() {
        let at = |n| facts(None, None, None, None, Some(n));
        for (d, want) in [
            ("2nd T20I", at(2)),
            ("2nd T20I (D/N)", at(2)),
            ("3rd Test, Day/Night", at(3)),
            ("1st unofficial ODI", at(1)),
            ("2nd Youth ODI", at(2)),
            ("1st One-Day", at(1)),
            ("4th Test (Pink Ball)", at(4)),
        ] {
            assert_eq!(Described::read(d), want, "{d}");
        }
        for nothing in [
            "",
            "T20I",
            "Day/Night",
            "Reserve Day",
            "Group Stage",
            "Super Over",
            "12345 Match",
            "Match 12345",
        ] {
            assert_eq!(Described::read(nothing), Described::default(), "{nothing}");
        }
        assert_eq!(
            Described::read("36th Match, Group A"),
            facts(Some(36), None, None, Some(Group::Letter('a')), None)
        );
        assert_eq!(
            Described::read("Match 12 (Pool B)"),
            facts(Some(12), None, None, Some(Group::Letter('b')), None)
        );
    }

    fn ordinal_of(n: u16) -> String {
        crate::cricket::names::ordinal(&n.to_string())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// However the parts of a tournament match's description are worded, ordered, cased or
        /// dressed with day/night and reserve-day words, they state the same facts.
        #[test]
        fn a_match_worded_any_way_states_the_same_facts(
            n in 1u16..200,
            round in prop::sample::select(vec![(8u16, "Super Eights"), (8, "Super 8"), (6, "Super Six"), (6, "Super Sixes"), (12, "Super 12")]),
            group in prop_oneof![(1u16..5).prop_map(Group::Number), prop::sample::select(vec!['a', 'b', 'c', 'd']).prop_map(Group::Letter)],
            match_first in any::<bool>(),
            spelled in any::<bool>(),
            upper in any::<bool>(),
            extra in prop::sample::select(vec!["", " (D/N)", ", Reserve Day", ", Day/Night"]),
        ) {
            let number = if spelled { format!("Match {n}") } else { format!("{} Match", ordinal_of(n)) };
            let group_text = match group { Group::Number(g) => format!("Group {g}"), Group::Letter(c) => format!("Group {}", c.to_ascii_uppercase()) };
            let parts = if match_first {
                format!("{number}, {}, {group_text}{extra}", round.1)
            } else {
                format!("{}, {group_text}, {number}{extra}", round.1)
            };
            let text = if upper { parts.to_uppercase() } else { parts };
            prop_assert_eq!(Described::read(&text), facts(Some(n), None, Some(round.0), Some(group), None), "{}", text);
        }

        /// A group's number is never a match number, wherever it stands.
        #[test]
        fn a_group_number_is_never_a_match_number(g in 1u16..100, round in prop::sample::select(vec!["Super 8 ", "Super Eights, ", ""])) {
            let d = Described::read(&format!("{round}Group {g}"));
            prop_assert_eq!(d.number, None);
            prop_assert_eq!(d.group, Some(Group::Number(g)));
        }

        /// No text panics, and a hostile one states nothing it does not say.
        #[test]
        fn any_text_reads_without_panic(text in ".{0,200}") {
            let _ = Described::read(&text);
        }
    }
}
