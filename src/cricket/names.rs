//! How team names and match descriptions are read for a match's key: the normalisation that
//! makes "Nepal" and "Nepal Men", "USA" and "United States of America", "Curacao" and
//! "Curaçao", "2nd T20I" and "2nd T20I (D/N)" one side or one match; and which team names are
//! placeholders, not teams ("TBC", "B1", "Winner SF1").
//!
//! The names sites use for one side are a shipped table, `src/cricket/teams.txt`.

use std::collections::HashMap;
use std::sync::LazyLock;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The shipped table of team names (see the file's header).
const TEAMS: &str = include_str!("teams.txt");

/// Every name of the table, normalised, to its side's slug (the line's first name, normalised).
static SIDES: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    let mut sides = HashMap::new();
    for line in TEAMS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut names = line.split('|').map(|n| {
            let mut w = words(n.trim());
            // As team_slug reads a name: "The Netherlands" is "Netherlands".
            drop_leading_the(&mut w);
            w
        });
        let Some(first) = names.next() else { continue };
        let slug = first.join("-");
        sides.insert(slug.clone(), slug.clone());
        for other in names {
            sides.insert(other.join("-"), slug.clone());
        }
    }
    sides
});

/// Lower-cases `s` and keeps runs of letters and digits, joined by single `-`: the previous
/// release's reading of every name, kept for its keys ([`super::MatchKey::legacy_for_match`]).
pub(crate) fn plain_slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The words of `s` as a key reads them: HTML entities decoded (`&amp;`), compatibility
/// forms and accents folded (NFKD without combining marks: NFC and NFD spellings agree),
/// lower-cased, `&` read as "and", split on anything that is not a letter or digit.
pub(super) fn words(s: &str) -> Vec<String> {
    // ASCII without `&` (nearly every name and description a site lists) has no entity to
    // decode and is its own NFKD, with no combining mark: lower-casing is all the folding it
    // needs. The Unicode passes were most of a key's cost (docs/benchmarks.md, 4b).
    let folded = if s.is_ascii() && !s.contains('&') {
        s.to_ascii_lowercase()
    } else {
        folded_unicode(s)
    };
    let mut out = Vec::new();
    for raw in folded.split(|c: char| !(c.is_alphanumeric() || c == '+')) {
        for (i, part) in raw.split('+').enumerate() {
            if i > 0 {
                out.push("and".to_string());
            }
            if !part.is_empty() {
                out.push(part.to_string());
            }
        }
    }
    out
}

/// `s` folded as [`words`] reads any text: entities decoded, NFKD without combining marks,
/// lower-cased, `&` as `+`.
fn folded_unicode(s: &str) -> String {
    html_escape::decode_html_entities(s)
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '&' { '+' } else { c })
        .collect()
}

/// Qualifiers after a side's name that make it another side ("India Women", "India U19",
/// "India A"), as word sequences, and how the key writes each.
const SIDE_QUALIFIERS: &[(&[&str], &str)] = &[
    (&["women", "s"], "women"),
    (&["womens"], "women"),
    (&["women"], "women"),
    (&["w"], "women"),
    (&["under", "19"], "u19"),
    (&["u", "19"], "u19"),
    (&["u19"], "u19"),
    (&["under", "19s"], "u19"),
    (&["a"], "a"),
];

/// Qualifiers that do not change the side ("Nepal Men", "Nepal Men's").
const SAME_SIDE: &[&[&str]] = &[&["men", "s"], &["mens"], &["men"]];

/// A team's name as its key reads it: [`words`], a leading "The" and a trailing "Men" dropped,
/// qualifiers ("Women", "U19", "A") kept apart, and the rest mapped through the shipped table
/// of the names sites use for one side (`src/cricket/teams.txt`).
pub(crate) fn team_slug(name: &str) -> String {
    let (base, qualifiers) = side(name);
    let base = base.join("-");
    let mut slug = SIDES.get(&base).cloned().unwrap_or(base);
    for q in qualifiers {
        slug.push('-');
        slug.push_str(q);
    }
    slug
}

/// A team's name as [`team_slug`] reads it, before the table: its base words ("The" and a
/// trailing "Men" dropped) and its qualifiers, in order ("women", "u19", "a").
fn side(name: &str) -> (Vec<String>, Vec<&'static str>) {
    let mut w = words(name);
    drop_leading_the(&mut w);
    if let Some(same) = SAME_SIDE
        .iter()
        .find(|same| w.len() > same.len() && ends_with(&w, same))
    {
        w.truncate(w.len() - same.len());
    }
    let mut qualifiers: Vec<&'static str> = Vec::new();
    while let Some((q, written)) = SIDE_QUALIFIERS
        .iter()
        .find(|(q, _)| w.len() > q.len() && ends_with(&w, q))
    {
        w.truncate(w.len() - q.len());
        qualifiers.insert(0, written);
    }
    drop_leading_the(&mut w);
    (w, qualifiers)
}

/// "The Netherlands" is "Netherlands"; "The" alone stays.
fn drop_leading_the(w: &mut Vec<String>) {
    if w.len() > 1 && w[0] == "the" {
        w.remove(0);
    }
}

/// True when the words `w` end with the words `tail`.
fn ends_with(w: &[String], tail: &[&str]) -> bool {
    w.len() >= tail.len() && w[w.len() - tail.len()..].iter().zip(tail).all(|(a, b)| a == b)
}

/// Word sequences of a description that say how or when a match is played, not which match it
/// is: "2nd T20I (D/N)" is the 2nd T20I, "Final, Reserve Day" the final.
const NOT_WHICH_MATCH: &[&[&str]] = &[
    &["day", "night"],
    &["d", "n"],
    &["reserve", "day"],
    &["day", "and", "night"],
    &["pink", "ball"],
];

/// A description as its key reads it: brackets and what they hold dropped ("(D/N)", "(Group
/// A)"); of the comma-separated parts, the one that numbers the match ("Super Six, Match 10" →
/// "Match 10"), else the first ("42nd Match, Super Eights, Group 2" → "42nd Match"); day/night
/// and reserve-day words dropped; "Super Eights" read as "Super 8"; and a trailing number made
/// an ordinal in front ("Match 12" = "12th Match", "Semi Final 1" = "1st Semi-Final").
pub(crate) fn description_slug(desc: &str) -> String {
    let unbracketed = drop_brackets(&html_escape::decode_html_entities(desc));
    let parts: Vec<&str> = unbracketed.split(',').collect();
    let own = parts
        .iter()
        .find(|p| numbers_a_match(&words(p)))
        .or(parts.first())
        .copied()
        .unwrap_or("");
    let mut w = words(own);
    for seq in NOT_WHICH_MATCH {
        while let Some(at) = find_seq(&w, seq) {
            w.drain(at..at + seq.len());
        }
    }
    for word in &mut w {
        match word.as_str() {
            "eights" | "eight" => *word = "8".into(),
            "sixes" | "six" => *word = "6".into(),
            "semifinal" => *word = "semi-final".into(),
            _ => {}
        }
    }
    ordinal_first(w, Groups::Apart)
}

/// The previous release's reading of a description: cut at its first comma, slugged, with
/// the trailing number made an ordinal.
pub(crate) fn legacy_description_slug(desc: &str) -> String {
    let own = desc.split(',').next().unwrap_or(desc);
    ordinal_first(
        plain_slug(own)
            .split('-')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect(),
        Groups::AsMatches,
    )
}

/// True for words like "12th match" / "match 12".
fn numbers_a_match(w: &[String]) -> bool {
    w.windows(2).any(|pair| {
        (pair[1] == "match" && (is_ordinal(&pair[0]) || is_number(&pair[0])))
            || (pair[0] == "match" && is_number(&pair[1]))
    })
}

fn find_seq(w: &[String], seq: &[&str]) -> Option<usize> {
    if seq.is_empty() || w.len() < seq.len() {
        return None;
    }
    (0..=w.len() - seq.len()).find(|&i| w[i..i + seq.len()].iter().zip(seq).all(|(a, b)| a == b))
}

fn drop_brackets(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// How [`ordinal_first`] reads a trailing number after "group" or "super".
#[derive(Clone, Copy, PartialEq, Eq)]
enum Groups {
    /// As the group's or round's own number ("super 8 group 2" stays as it is).
    Apart,
    /// As the match's ordinal, as the previous release did ("2nd-super-8-group"): kept for its
    /// keys.
    AsMatches,
}

/// Joins `words` with `-`, moving a trailing number to the front as an ordinal when no word is
/// an ordinal already ("match 12" → "12th-match"); see [`Groups`] for a group's number.
fn ordinal_first(mut words: Vec<String>, groups: Groups) -> String {
    let has_ordinal = words.iter().any(|w| is_ordinal(w));
    let names_a_group = groups == Groups::Apart
        && words.len() > 1
        && matches!(words[words.len() - 2].as_str(), "group" | "grp" | "pool" | "super");
    match words.last() {
        Some(last) if !has_ordinal && !names_a_group && words.len() > 1 && is_number(last) => {
            let n = ordinal(last);
            words.pop();
            format!("{n}-{}", words.join("-"))
        }
        _ => words.join("-"),
    }
}

fn is_number(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())
}

fn is_ordinal(w: &str) -> bool {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    is_number(digits) && matches!(&w[digits.len()..], "st" | "nd" | "rd" | "th")
}

/// The ordinal of the number `n` ("42" → "42nd"); 0 for no number.
pub(super) fn ordinal(n: &str) -> String {
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

/// Words that, anywhere in a team's name, mean the side is not known yet: "Winner SF1",
/// "Winner of Qualifier 1", "Loser of Eliminator", "Runner-up Group B", "1st Place Group A".
const PLACEHOLDER_WORDS: &[&str] = &[
    "winner", "winners", "loser", "losers", "runner", "runners", "tbc", "tba", "tbd",
];

/// Whole names (after [`words`]) that mean the side is not known yet.
const PLACEHOLDER_NAMES: &[&[&str]] = &[
    &["to", "be", "confirmed"],
    &["to", "be", "announced"],
    &["to", "be", "decided"],
    &["to", "be", "determined"],
    &["unknown"],
    &["qualifier"],
    &["eliminator"],
    &["semi", "final"],
    &["semi", "finalist"],
    &["finalist"],
];

/// True when `name` is not a team yet: empty, "TBC"/"TBA"/"TBD" (alone or leading), a slot
/// code ("A1", "B2", "D2", "SF1", "Q2": at most three letters then at most two digits), a name
/// with winner/loser/runner-up in it ("Winner SF1", "Winner of Qualifier 1", "Loser of …",
/// "Group A Runner-up"), a place in a table ("1st Place Group A", "Top of Group 1", "Group A
/// 2nd"), or a stage standing for its winner ("Qualifier 2", "Semi-final 1", "Eliminator").
pub(crate) fn is_placeholder_name(name: &str) -> bool {
    let w = words(name);
    if w.is_empty() {
        return true;
    }
    if w.iter().any(|x| PLACEHOLDER_WORDS.contains(&x.as_str())) {
        return true;
    }
    // A name made only of a slot code, or of a stage and its number.
    let without_numbers: Vec<&str> = w
        .iter()
        .map(String::as_str)
        .filter(|x| !is_number(x) && !is_ordinal(x))
        .collect();
    if PLACEHOLDER_NAMES.iter().any(|p| without_numbers == *p) {
        return true;
    }
    if w.len() == 1 && is_slot_code(&w[0]) {
        return true;
    }
    // "1st Place Group A", "Top of Group 1", "Group A 2nd", "Group 1 Top".
    let has_group = w.iter().any(|x| x == "group" || x == "pool");
    let has_rank = w.iter().any(|x| is_ordinal(x) || x == "place" || x == "top");
    has_group && has_rank
}

/// "A1", "D2", "SF1", "QF4", "Q2", "X1": one to three letters, then one or two digits.
fn is_slot_code(w: &str) -> bool {
    let letters = w.chars().take_while(char::is_ascii_alphabetic).count();
    let digits = &w[letters..];
    (1..=3).contains(&letters) && (1..=2).contains(&digits.len()) && is_number(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_side_has_one_slug_whatever_the_spelling() {
        for (a, b) in [
            ("Nepal", "Nepal Men"),
            ("Nepal", "Nepal Men's"),
            ("United States", "USA"),
            ("United States", "United States of America"),
            ("USA Women", "United States Women"),
            ("Netherlands", "The Netherlands"),
            ("Curacao", "Curaçao"),
            ("Cura\u{e7}ao", "Curac\u{327}ao"),
            ("Trinidad &amp; Tobago", "Trinidad and Tobago"),
            ("Trinidad & Tobago", "Trinidad and Tobago"),
            ("United Arab Emirates", "UAE"),
            ("Papua New Guinea", "PNG"),
            ("Hong Kong, China", "Hong Kong"),
            ("Türkiye", "Turkey"),
            ("India W", "India Women"),
            ("INDIA", "india"),
        ] {
            assert_eq!(team_slug(a), team_slug(b), "{a} / {b}");
        }
        assert_eq!(team_slug("United States of America"), "united-states");
    }

    #[test]
    fn other_sides_stay_apart() {
        for (a, b) in [
            ("India", "India Women"),
            ("India", "India A"),
            ("India", "India U19"),
            ("India Women", "India A Women"),
            ("South Africa", "South Australia"),
            ("Netherlands", "Netherlands Women"),
            ("Nepal", "Nepal Women"),
        ] {
            assert_ne!(team_slug(a), team_slug(b), "{a} / {b}");
        }
    }

    #[test]
    fn every_team_of_the_fixtures_is_in_the_table() {
        // The team names the parsers read from every saved page (tests/it/snapshots).
        let snapshots = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/snapshots"))
            .expect("the snapshots folder");
        let mut missing = Vec::new();
        let mut seen = 0;
        for entry in snapshots {
            let text = std::fs::read_to_string(entry.expect("an entry").path()).expect("a snapshot");
            for line in text.lines() {
                let Some(name) = line.trim().strip_prefix("\"name\": \"") else {
                    continue;
                };
                let name = name.trim_end_matches(',').trim_end_matches('"');
                seen += 1;
                if is_placeholder_name(name) {
                    continue;
                }
                if !SIDES.contains_key(&side(name).0.join("-")) {
                    missing.push(name.to_string());
                }
            }
        }
        assert!(seen > 100, "read {seen} team names");
        assert_eq!(missing, Vec::<String>::new(), "add these to src/cricket/teams.txt");
    }

    #[test]
    fn descriptions_keep_which_match_and_drop_how_it_is_played() {
        for (a, b) in [
            ("2nd T20I", "2nd T20I (D/N)"),
            ("2nd T20I", "2nd T20I, Day/Night"),
            ("36th Match, Group A", "36th Match (Group A)"),
            ("Final", "Final (Reserve Day)"),
            ("Final", "Final, Reserve Day"),
            ("Match 12", "12th Match"),
            ("Semi Final 1", "1st Semi-Final"),
            ("42nd Match, Super Eights, Group 2", "42nd Match"),
            ("Super Six, Match 10", "10th Match"),
            ("1st Test", "1st Test (Pink Ball)"),
        ] {
            assert_eq!(description_slug(a), description_slug(b), "{a} / {b}");
        }
        for (a, b) in [
            ("1st T20I", "2nd T20I"),
            ("Super Six, Match 10", "Super Six, Match 3"),
            ("Qualifier 1", "Qualifier 2"),
            ("Semi Final 1", "Semi Final 2"),
        ] {
            assert_ne!(description_slug(a), description_slug(b), "{a} / {b}");
        }
        assert_eq!(
            description_slug("Super 8 Group 2"),
            description_slug("Super Eights Group 2")
        );
        // A group's number is not a match number.
        assert_eq!(description_slug("Super 8 Group 2"), "super-8-group-2");
        assert_eq!(description_slug("Group 3"), "group-3");
    }

    #[test]
    fn placeholders_are_not_teams() {
        for p in [
            "",
            "TBC",
            "tba",
            "TBD",
            "To be confirmed",
            "To Be Decided",
            "TBC 1",
            "A1",
            "B2",
            "D2",
            "SF1",
            "Q2",
            "Winner SF1",
            "Winner SF2",
            "Winner of Qualifier 1",
            "Loser of Qualifier 1",
            "Loser of Eliminator",
            "1st Place Group A",
            "Group A Winner",
            "Runner-up Group B",
            "Group B Runners-up",
            "Top of Group 1",
            "Qualifier 2",
            "Semi-final 1",
            "Eliminator winner",
            "Group A 2nd",
        ] {
            assert!(is_placeholder_name(p), "{p:?} is a placeholder");
        }
        for t in [
            "India",
            "Nepal Men",
            "USA",
            "UAE",
            "PNG",
            "Kings XI Punjab",
            "India A",
            "India U19",
            "Sri Lanka A Women",
            "Trinidad & Tobago",
            "Chilaw Marians Cricket Club",
            "Leinster Lightning",
            "Knights",
            "Titans",
            "The Blaze Women",
            "Western Australia",
            "Warriors",
            "Winnipeg Hawks",
        ] {
            assert!(!is_placeholder_name(t), "{t:?} is a team");
        }
    }

    proptest::proptest! {
        /// The ASCII shortcut of [`words`] folds every ASCII text as the Unicode passes do
        /// (`+` included), so that no key changes with it.
        #[test]
        fn ascii_text_folds_as_the_unicode_passes_fold_it(s in "[ -%'-~]{0,40}") {
            // Printable ASCII but `&` (0x26), which may open an entity.
            proptest::prop_assert_eq!(s.to_ascii_lowercase(), folded_unicode(&s));
        }
    }
}
