//! The one rule that turns what a source says about a match's form of game into a [`Format`],
//! shared by every parser so that the same match gets the same label whichever site it came from
//! (and `FORMATS=Test` means the same thing for every source).
//!
//! # The table
//!
//! | the source says                 | full international | domestic, or a second-tier side¹ |
//! | ------------------------------- | ------------------ | -------------------------------- |
//! | multi-day ("Test", "TEST", "4-Day") | Test           | First-class                      |
//! | one-day, 50 overs ("ODI")       | ODI                | List A                           |
//! | twenty overs ("T20", "T20I")    | T20I               | T20                              |
//! | 100 balls                       | The Hundred        | The Hundred                      |
//!
//! ¹ A second-tier side is an A team ("India A", "Sri Lanka A Women", "England Lions", "Pakistan
//! Shaheens"), a youth side ("India U19", "Under-19s"), an "XI" or "Emerging" side, or any match
//! the description or series calls "Unofficial" or "Youth" ("2nd Unofficial ODI", "1st Youth
//! Test"). ESPNcricinfo, the site that publishes the classes, rates these matches first-class or
//! List A, not Test or ODI, so every source does.
//!
//! Women's matches follow the same table: a women's Test, ODI or T20I between national sides is
//! international (ESPNcricinfo classes 8, 9, 10), a women's A-team or domestic match is not.
//!
//! Which column applies:
//! - the source says the match is international ([`Level::International`]: Cricbuzz's
//!   `matchType` "International", an ESPNcricinfo `internationalClassId`) → international,
//!   unless a side is second-tier;
//! - the source says it is domestic ([`Level::Domestic`]: Cricbuzz "Domestic" or "League", an
//!   ESPNcricinfo `internationalClassId` of null) → domestic;
//! - the source does not say ([`Level::Unknown`]: CricketData, CSS profiles, Cricbuzz's "Women"
//!   group): second-tier sides → domestic; otherwise a "Test" is a Test only between two ICC
//!   full members (Test status belongs to no one else: "Victoria v Queensland" is
//!   first-class), an "ODI" stays what it says (ODI status also covers some associates, and
//!   changes), and a "T20" is international only when the description or series says "T20I"
//!   ("2nd T20I", "T20I Tri-Series").
//!
//! When the source gives no format word, the description's words decide ("3rd ODI" → ODI, then
//! the table); with none of those either the format is `Format::Other("")`: the source did not
//! say, and nothing is guessed.

use super::Format;
use std::cell::RefCell;

/// What a source says about whether a match is an international.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The source marks it international (between full national sides, or an ICC event).
    International,
    /// The source marks it domestic (a league, a first-class competition, a franchise game).
    Domestic,
    /// The source does not say.
    Unknown,
}

/// Everything a source knows that bears on the format. Borrowed: parsers fill it from the page.
#[derive(Debug, Clone, Copy)]
pub struct FormatClues<'a> {
    /// The source's own format word ("TEST", "odi", "T20"), when it gives one.
    pub word: Option<&'a str>,
    /// Whether the source marks the match international.
    pub level: Level,
    /// The match's place in its series ("2nd T20I", "1st Youth Test").
    pub description: Option<&'a str>,
    /// The series name ("T20I Tri-Series In Japan, 2026").
    pub series: Option<&'a str>,
    /// The two sides' names, as the page prints them.
    pub teams: [&'a str; 2],
}

impl Format {
    /// The format of a match from what its source says, by the table in the module
    /// documentation. Every parser calls this, so the same facts give the same format.
    pub fn classify(clues: &FormatClues<'_>) -> Format {
        Format::classify_in(clues, &SeriesMemo::default())
    }

    /// [`Format::classify`] for one of many matches of a page: `memo` remembers what the last
    /// series name said, so the matches of one series read their shared name once.
    pub(crate) fn classify_in(clues: &FormatClues<'_>, memo: &SeriesMemo) -> Format {
        // The description and the series are each read once, for every question the table
        // asks of them (this runs for every match of every page).
        let description = clues.description.map(Said::of).unwrap_or_default();
        let series = clues.series.map(|s| memo.said(s)).unwrap_or_default();
        let said = match clues.word.map(crate::text::trim).filter(|w| !w.is_empty()) {
            Some(word) => Format::parse(word),
            None => match description.format() {
                Some(format) => format,
                None => return Format::Other(String::new()),
            },
        };
        let second_tier =
            clues.teams.iter().any(|t| is_second_tier_side(t)) || description.second_tier || series.second_tier;
        let international = !second_tier
            && match clues.level {
                Level::International => true,
                Level::Domestic => false,
                Level::Unknown => match said {
                    Format::T20 => description.t20i() || series.t20i(),
                    // Test status belongs to matches between ICC full members, and to no other.
                    Format::Test => clues.teams.iter().all(|t| is_full_member(t)),
                    _ => true,
                },
            };
        match (said, international) {
            (Format::Test, false) => Format::FirstClass,
            (Format::Odi, false) => Format::ListA,
            (Format::T20i, false) => Format::T20,
            (Format::T20, true) => Format::T20i,
            (format, _) => format,
        }
    }
}

/// What the last series name read on a page said ([`Format::classify_in`]). A page lists a few
/// series with many matches each (the Cricbuzz upcoming answer: 61 matches), and a series name
/// says the same for each of its matches; the answer is kept with a copy of the name, compared
/// byte for byte, so a different name is always read afresh. One per page, never shared
/// between threads.
#[derive(Debug, Default)]
pub(crate) struct SeriesMemo {
    /// The last name and what it said; the `String` keeps its capacity across names.
    last: RefCell<Option<(String, Said)>>,
}

impl SeriesMemo {
    /// What `series` says: remembered when it is the last name asked, read otherwise.
    fn said(&self, series: &str) -> Said {
        let Ok(mut last) = self.last.try_borrow_mut() else {
            // Not reachable (nothing here re-enters); reading afresh is always right.
            return Said::of(series);
        };
        match &mut *last {
            Some((name, said)) if name == series => *said,
            Some((name, said)) => {
                name.clear();
                name.push_str(series);
                *said = Said::of(series);
                *said
            }
            None => {
                let said = Said::of(series);
                *last = Some((series.to_string(), said));
                said
            }
        }
    }
}

/// What a description or series name says, read in one pass over its words: the same answers
/// as `format_word_in`, `says_second_tier` and "names a T20I" asked one at a time (a test
/// compares them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Said {
    /// The most specific format word: 4 "T20I"/"IT20", 3 "ODI", 2 "Test", 1 "T20", 0 none.
    rank: u8,
    /// "Unofficial", "Youth", "U19", "Under-19"…: below full international level.
    second_tier: bool,
}

impl Said {
    fn of(text: &str) -> Said {
        let mut said = Said::default();
        let mut prev = "";
        for word in words(text) {
            // Every word the table looks for starts with one of these bytes; the rest are passed
            // over after a look at their first byte.
            match word.as_bytes().first().map(u8::to_ascii_lowercase) {
                Some(b't' | b'i' | b'o') => said.rank = said.rank.max(format_rank(word)),
                Some(b'u' | b'y') => {
                    said.second_tier |= is(word, "unofficial") || is(word, "youth") || is_age_group(word);
                }
                Some(b'0'..=b'9') => said.second_tier |= is(prev, "under") && is_age(word),
                _ => {}
            }
            prev = word;
        }
        said
    }

    fn format(self) -> Option<Format> {
        match self.rank {
            4 => Some(Format::T20i),
            3 => Some(Format::Odi),
            2 => Some(Format::Test),
            1 => Some(Format::T20),
            _ => None,
        }
    }

    fn t20i(self) -> bool {
        self.rank == 4
    }
}

/// Ranked: T20I over ODI over Test over T20, as "T20I" is the most specific word.
fn format_rank(w: &str) -> u8 {
    if is(w, "t20i") || is(w, "it20") {
        4
    } else if is(w, "odi") {
        3
    } else if is(w, "test") {
        2
    } else if is(w, "t20") {
        1
    } else {
        0
    }
}

/// The twelve ICC full members, the only sides that play Tests
/// (<https://www.icc-cricket.com/about/members>).
const FULL_MEMBERS: [&str; 12] = [
    "afghanistan",
    "australia",
    "bangladesh",
    "england",
    "india",
    "ireland",
    "new zealand",
    "pakistan",
    "south africa",
    "sri lanka",
    "west indies",
    "zimbabwe",
];

/// "India", "England Women": a full member's national side (men's or women's).
fn is_full_member(name: &str) -> bool {
    let name = name.trim().to_lowercase();
    let nation = name.strip_suffix(" women").unwrap_or(&name);
    FULL_MEMBERS.contains(&nation)
}

/// The alphanumeric words of `text`, as written: compared with `eq_ignore_ascii_case`, so
/// that no word is copied (this runs for every match of every page, and for its status line).
/// The same words as `text.split(|c: char| !c.is_alphanumeric())` without the empty ones, read
/// byte by byte where the text is ASCII, as it nearly always is.
pub(crate) fn words(text: &str) -> Words<'_> {
    Words {
        text,
        at: 0,
        ascii: text.is_ascii(),
    }
}

/// `u8::is_ascii_alphanumeric` as a table: one load per byte instead of three range checks
/// (every word of every description, series, team name and status line is found this way).
const ALPHANUMERIC: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_alphanumeric();
        byte += 1;
    }
    table
};

/// The iterator of [`words`].
pub(crate) struct Words<'a> {
    text: &'a str,
    /// Where the rest of the text starts: an index, so that finding a word re-slices nothing
    /// but the word itself.
    at: usize,
    /// Checked once: then every byte is a character.
    ascii: bool,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.ascii {
            let bytes = self.text.as_bytes();
            let alphanumeric = |at: &usize| bytes.get(*at).is_some_and(|&b| ALPHANUMERIC[usize::from(b)]);
            let mut at = self.at;
            while at < bytes.len() && !alphanumeric(&at) {
                at += 1;
            }
            let start = at;
            while alphanumeric(&at) {
                at += 1;
            }
            self.at = at;
            return self.text.get(start..at).filter(|word| !word.is_empty());
        }
        let text = self.text.get(self.at..).unwrap_or_default();
        let mut chars = text.char_indices().skip_while(|(_, c)| !c.is_alphanumeric());
        let start = chars.next().map_or(text.len(), |(i, _)| i);
        let end = chars.find(|(_, c)| !c.is_alphanumeric()).map_or(text.len(), |(i, _)| i);
        self.at += end;
        text.get(start..end).filter(|word| !word.is_empty())
    }
}

fn is(word: &str, wanted: &str) -> bool {
    word.eq_ignore_ascii_case(wanted)
}

/// "India A", "Sri Lanka A Women", "India U19", "Australia Under-19s", "Prime Minister's XI",
/// "India Emerging", "England Lions", "Pakistan Shaheens". One pass over the name's words.
fn is_second_tier_side(name: &str) -> bool {
    second_tier_side(name, may_mark_second_tier)
}

/// False for a word that cannot make a side second-tier whatever came before it: every such
/// word ("XI", "Emerging", "Shaheens", "Youth", "Academy", "U19", "Under19s", the "19" of
/// "Under 19", the "Lions" of "England Lions") starts with one of these.
fn may_mark_second_tier(word: &str) -> bool {
    matches!(
        word.as_bytes().first().map(u8::to_ascii_lowercase),
        Some(b'x' | b'e' | b's' | b'y' | b'a' | b'u' | b'l' | b'0'..=b'9')
    )
}

/// [`is_second_tier_side`], looking only at the words `consider` lets through for the words
/// that mark a side (all of them are counted for the "A" rule).
fn second_tier_side(name: &str, consider: impl Fn(&str) -> bool) -> bool {
    let (mut prev, mut last, mut before_last) = ("", "", "");
    let mut count = 0usize;
    for word in words(name) {
        if consider(word)
            && (is_second_tier_word(word)
                || (is(prev, "under") && is_age(word))
                || (is(prev, "england") && is(word, "lions")))
        {
            return true;
        }
        before_last = last;
        last = word;
        prev = word;
        count += 1;
    }
    // "Sri Lanka A Women": the A is the word before "Women".
    let (a, words_before_a) = if is(last, "women") || is(last, "w") {
        (before_last, count.saturating_sub(2))
    } else {
        (last, count.saturating_sub(1))
    };
    is(a, "a") && words_before_a >= 1
}

fn is_second_tier_word(word: &str) -> bool {
    ["xi", "emerging", "shaheens", "youth", "academy"]
        .iter()
        .any(|w| is(word, w))
        || is_age_group(word)
}

/// "u19", "U23", "under19s".
fn is_age_group(word: &str) -> bool {
    let lower_prefix = |p: &str| word.get(..p.len()).is_some_and(|head| is(head, p));
    let rest = if lower_prefix("under") {
        word.get(5..)
    } else if lower_prefix("u") {
        word.get(1..)
    } else {
        None
    };
    rest.is_some_and(is_age)
}

/// "19", "19s", "23".
fn is_age(text: &str) -> bool {
    let digits = text.strip_suffix(['s', 'S']).unwrap_or(text);
    (1..=2).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format a description names, asked on its own ([`Said::of`] reads it with the rest).
    fn format_word_in(description: &str) -> Option<Format> {
        let rank = words(description).map(format_rank).max().unwrap_or(0);
        Said {
            rank,
            second_tier: false,
        }
        .format()
    }

    /// "2nd Unofficial ODI", "1st Youth Test", "Under-19 World Cup", asked on its own.
    fn says_second_tier(text: &str) -> bool {
        let mut prev = "";
        for word in words(text) {
            if is(word, "unofficial") || is(word, "youth") || is_age_group(word) || (is(prev, "under") && is_age(word))
            {
                return true;
            }
            prev = word;
        }
        false
    }

    fn says_t20i(text: &str) -> bool {
        words(text).any(|w| is(w, "t20i") || is(w, "it20"))
    }

    /// [`Format::parse`] through a lower-cased copy, as it was written first: the same table,
    /// reached by the obvious normalisation instead of the stack buffer's.
    fn parse_by_copy(raw: &str) -> Format {
        let t = raw.trim();
        Format::named(&t.to_ascii_lowercase().replace(['_', ' '], "-")).unwrap_or_else(|| Format::Other(t.to_string()))
    }

    proptest::proptest! {
        #[test]
        fn parsing_a_word_on_the_stack_agrees_with_a_lower_cased_copy(
            raw in "[ ]?(Twenty20[_ -]International|ONE DAY_international|first_class|The Hundred|100-ball|T20Is|List A|ODI|fc|x{20,30}|[a-zA-Z0-9_ é-]{0,26})[ ]?"
        ) {
            proptest::prop_assert_eq!(Format::parse(&raw), parse_by_copy(&raw));
        }
    }

    proptest::proptest! {
        #[test]
        fn skipping_words_by_first_letter_never_changes_a_side(
            name in "((India|Sri|Lanka|A|a|Women|W|XI|Emerging|Shaheens|Youth|Academy|U19|under19s|Under|19|19s|England|Lions|x|é)[ -]?){0,5}"
        ) {
            proptest::prop_assert_eq!(is_second_tier_side(&name), second_tier_side(&name, |_| true));
        }

        #[test]
        fn one_pass_over_a_text_answers_as_each_question_asked_alone(
            text in "((T20I|it20|ODI|test|T20|t20s|Unofficial|YOUTH|u19|U-19|Under|under-19s|19s|19|Ünder|Test|odi|x|é)[ ,-]?){0,6}"
        ) {
            let said = Said::of(&text);
            proptest::prop_assert_eq!(said.format(), format_word_in(&text));
            proptest::prop_assert_eq!(said.second_tier, says_second_tier(&text));
            proptest::prop_assert_eq!(said.t20i(), says_t20i(&text));
        }

        #[test]
        fn a_remembered_series_classifies_as_reading_it_afresh(
            clues in proptest::collection::vec((
                proptest::option::of("(t20|TEST|odi|T20I)"),
                proptest::option::of("(2nd T20I|1st Youth Test|5th Match|Final)"),
                proptest::option::of("(T20I Tri-Series|Under 19 Cup|Cup, 2026|ODI Series|Unofficial Test|x)"),
                "(India|Sri Lanka A|Fiji|England Lions|Pakistan)",
                0usize..3,
            ), 0..12)
        ) {
            let memo = SeriesMemo::default();
            for (word, description, series, team, level) in &clues {
                let clues = FormatClues {
                    word: word.as_deref(),
                    level: [Level::International, Level::Domestic, Level::Unknown][*level],
                    description: description.as_deref(),
                    series: series.as_deref(),
                    teams: [team, "Bangladesh"],
                };
                proptest::prop_assert_eq!(Format::classify_in(&clues, &memo), Format::classify(&clues));
            }
        }

        #[test]
        fn one_pass_agrees_on_any_text(text in "\\PC{0,40}") {
            let said = Said::of(&text);
            proptest::prop_assert_eq!(said.format(), format_word_in(&text));
            proptest::prop_assert_eq!(said.second_tier, says_second_tier(&text));
            proptest::prop_assert_eq!(said.t20i(), says_t20i(&text));
        }
    }

    #[test]
    fn words_are_the_alphanumeric_runs_as_a_char_split_gives_them() {
        for text in [
            "",
            "  ",
            "2nd T20I, Group A",
            "Match 12 (T20)",
            "Sri Lanka A Women",
            "Côte d'Ivoire v Ålesund – 1st Test",
            "日本 v 한국, ODI",
            "a\u{200B}b\u{0301}c ½ ²",
            "--x--",
        ] {
            let want: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            assert_eq!(words(text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn words_agree_with_a_char_split_on_any_text(text in "\\PC{0,40}") {
            let want: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), want);
        }
    }

    fn classify(word: Option<&str>, level: Level, description: &str, teams: [&str; 2]) -> Format {
        Format::classify(&FormatClues {
            word,
            level,
            description: Some(description),
            series: None,
            teams,
        })
    }

    #[test]
    fn the_table_gives_each_level_its_own_column() {
        use Format::*;
        use Level::*;
        let teams = ["India", "Australia"];
        #[rustfmt::skip]
        let cases = [
            (Some("TEST"), International, Test), (Some("TEST"), Domestic, FirstClass), (Some("TEST"), Unknown, Test),
            (Some("ODI"), International, Odi), (Some("ODI"), Domestic, ListA), (Some("odi"), Unknown, Odi),
            (Some("T20"), International, T20i), (Some("T20"), Domestic, T20), (Some("t20"), Unknown, T20),
            (Some("T20I"), Domestic, T20), (Some("first-class"), Domestic, FirstClass),
        ];
        for (word, level, want) in cases {
            assert_eq!(classify(word, level, "1st Match", teams), want, "{word:?} {level:?}");
        }
    }

    #[test]
    fn domestic_first_class_and_a_team_one_dayers_are_never_tests_or_odis() {
        use Format::*;
        // Sheffield Shield, CSA 4-Day and Irani Cup matches: Cricbuzz's "Domestic" group, "TEST".
        assert_eq!(
            classify(Some("TEST"), Level::Domestic, "7th Match", ["Victoria", "Queensland"]),
            FirstClass
        );
        assert_eq!(
            classify(Some("TEST"), Level::Domestic, "Final", ["Rest of India", "Mumbai"]),
            FirstClass
        );
        // A source that does not say domestic: Test status belongs to full members only.
        assert_eq!(
            classify(Some("test"), Level::Unknown, "Final", ["Titans", "Lions"]),
            FirstClass
        );
        assert_eq!(
            classify(Some("test"), Level::Unknown, "2nd Test", ["Bangladesh", "Pakistan"]),
            Test
        );
        assert_eq!(
            classify(
                Some("test"),
                Level::Unknown,
                "Only Test",
                ["England Women", "India Women"]
            ),
            Test
        );
        // Youth Tests and A-team one-dayers, even in an "International" group.
        assert_eq!(
            classify(
                Some("TEST"),
                Level::International,
                "1st Youth Test",
                ["India U19", "Australia U19"]
            ),
            FirstClass
        );
        assert_eq!(
            classify(
                Some("ODI"),
                Level::International,
                "2nd unofficial ODI",
                ["India A", "South Africa A"]
            ),
            ListA
        );
        assert_eq!(
            classify(
                None,
                Level::Unknown,
                "2nd Unofficial ODI",
                ["Sri Lanka A Women", "New Zealand A Women"]
            ),
            ListA
        );
        assert_eq!(
            classify(
                Some("T20"),
                Level::International,
                "1st T20",
                ["England Lions", "Pakistan Shaheens"]
            ),
            T20
        );
        assert_eq!(
            classify(
                Some("TEST"),
                Level::Unknown,
                "Tour Match",
                ["Prime Minister's XI", "Pakistan"]
            ),
            FirstClass
        );
        assert_eq!(
            classify(
                Some("ODI"),
                Level::Unknown,
                "Final",
                ["Australia Under-19s", "India Under-19s"]
            ),
            ListA
        );
    }

    #[test]
    fn womens_internationals_are_internationals() {
        assert_eq!(
            classify(
                Some("ODI"),
                Level::Unknown,
                "1st ODI",
                ["India Women", "South Africa Women"]
            ),
            Format::Odi
        );
        assert_eq!(
            classify(
                Some("T20"),
                Level::Unknown,
                "1st T20I",
                ["Cyprus Women", "Estonia Women"]
            ),
            Format::T20i
        );
        assert_eq!(
            classify(
                Some("T20"),
                Level::Unknown,
                "5th Match",
                ["Croatia Women", "Gibraltar Women"]
            ),
            Format::T20
        );
    }

    #[test]
    fn without_a_word_the_description_decides_and_without_one_nothing_is_guessed() {
        assert_eq!(classify(None, Level::Unknown, "2nd T20I", ["A", "B"]), Format::T20i);
        assert_eq!(
            classify(None, Level::Domestic, "1st Test", ["X", "Y"]),
            Format::FirstClass
        );
        assert_eq!(
            classify(None, Level::Unknown, "22nd Match", ["A", "B"]),
            Format::Other(String::new())
        );
    }

    #[test]
    fn ordinary_names_are_not_second_tier() {
        for name in [
            "Afghanistan",
            "Lions",
            "Cape Cobras",
            "Papua New Guinea",
            "Sri Lanka",
            "Dolphins",
            "Titans",
        ] {
            assert!(!is_second_tier_side(name), "{name}");
        }
        for name in [
            "India A",
            "Sri Lanka A Women",
            "India U19",
            "Bangladesh Under-19",
            "England Lions",
            "Cricket Australia XI",
        ] {
            assert!(is_second_tier_side(name), "{name}");
        }
    }
}
