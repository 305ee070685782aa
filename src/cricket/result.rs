//! A finished match's result, read from what its page says and never guessed: the page's result
//! line ("India won by 7 runs", "Match tied (India won the Super Over)", "No result"), the side
//! its own result field names as the winner where it has one, and each side's final score.
//!
//! A parser that can tell a result fills the match's [`Ending`]; [`MatchResult::read`] turns it
//! into the result a post says: the outcome, the winner and margin, the method. A line this
//! module cannot read, a winner it cannot tie to one of the two sides, or two pieces of evidence
//! that disagree (the line names one side, the page's winner field the other) give no result:
//! nothing is posted rather than a wrong result.
//!
//! The line's shapes, as the sources print them (Cricbuzz, ESPNcricinfo, CricketData):
//!
//! | line                                                          | result                         |
//! | ------------------------------------------------------------- | ------------------------------ |
//! | `X won by 7 runs`, `X won by 1 run`                           | X won, by 7 runs               |
//! | `X won by 6 wkts`, `X won by 8 wickets (with 61 balls remaining)` | X won, by 6 wickets        |
//! | `X won by an innings and 12 runs`                             | X won, by an innings and 12 runs |
//! | `X won by 41 runs (DLS method)`, `(D/L method)`, `(DLS Target 81)` | X won, by 41 runs, DLS    |
//! | `X beat Y by 7 runs`                                          | X won, by 7 runs               |
//! | `Match tied (X won the Super Over)`, `X won the one-over eliminator` | X won, Super Over       |
//! | `Match tied`                                                  | tied                           |
//! | `Match drawn`                                                 | drawn                          |
//! | `No result`, `No result (abandoned with a toss)`              | no result                      |
//! | `Match abandoned without a ball bowled`, `Match cancelled`    | abandoned                      |
//! | `X won` (a short line)                                        | X won, margin not given        |
//!
//! The winner is tied to a side by its full name, its short name, or words that each begin
//! one word of the side's name in order ("Titans" is Gujarat Titans, "West Aust" Western
//! Australia, "IND Women" India Women); only one side may fit.

use super::{Match, MatchState, Team, Text};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a page says of a finished match, where its source says it: filled by the parsers that
/// can tell a result (not by the ESPNcricinfo RSS feed, whose lines are scores only, nor by a
/// CSS profile without a `result` field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ending {
    /// The page's result line ("India won by 7 runs", "Match drawn").
    pub line: Text,
    /// Each side's innings, in the match's team order, as far as the page gives them (empty
    /// when it gives none).
    pub scores: [Vec<Innings>; 2],
    /// The side (0 or 1, in team order) the page's own result field names as the winner, where
    /// it has one (ESPNcricinfo's `winnerTeamId`).
    pub winner: Option<usize>,
    /// When the match ended, or the latest it can have ended, as far as the page shows
    /// (Cricbuzz's `endDate`; the end of ESPNcricinfo's `endDate` day); `None` when the page
    /// says nothing of it (then [`MatchResult::ended_by`] reckons from the start).
    pub ended_by: Option<DateTime<Utc>>,
}

/// One innings of one side, as the page prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Innings {
    /// Runs scored.
    pub runs: u32,
    /// Wickets down; `None` when the page prints the runs alone (all out, in ESPNcricinfo's and
    /// the scorecard's way).
    pub wickets: Option<u8>,
    /// Overs faced as the page prints them ("19.4"), when it does.
    pub overs: Option<Text>,
    /// Declared closed.
    pub declared: bool,
}

impl Innings {
    /// Reads a score as the pages print it: `176/6`, `274`, `245/8d`, `190/4 d`.
    pub fn parse(raw: &str) -> Option<Innings> {
        let raw = raw.trim();
        let (raw, declared) = match raw.strip_suffix('d').or_else(|| raw.strip_suffix("dec")) {
            Some(rest) => (rest.trim_end(), true),
            None => (raw, false),
        };
        let (runs, wickets) = match raw.split_once('/') {
            Some((runs, wickets)) => (runs.trim(), Some(wickets.trim().parse::<u8>().ok()?)),
            None => (raw, None),
        };
        Some(Innings {
            runs: runs.parse().ok()?,
            wickets,
            overs: None,
            declared,
        })
    }
}

impl fmt::Display for Innings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wickets {
            Some(w) if w < 10 => write!(f, "{}/{w}", self.runs)?,
            _ => write!(f, "{}", self.runs)?,
        }
        if self.declared {
            f.write_str("d")?;
        }
        if let Some(overs) = &self.overs {
            write!(f, " ({} ov)", whole_overs(overs))?;
        }
        Ok(())
    }
}

/// Overs as cricket writes them: an over is six balls, so "9.6" (as the Cricbuzz API and
/// ESPNcricinfo print a completed tenth over) is "10", and "19.0" is "19"; "19.4" and any
/// text that is not overs-and-balls stay as printed.
fn whole_overs(raw: &str) -> std::borrow::Cow<'_, str> {
    let whole = |o: &str| o.parse::<u32>().ok();
    match raw.split_once('.') {
        Some((o, "6")) => whole(o)
            .and_then(|o| o.checked_add(1))
            .map_or(raw.into(), |o| o.to_string().into()),
        Some((o, "0")) if whole(o).is_some() => o.into(),
        _ => raw.into(),
    }
}

/// How a finished match ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// One side won.
    Won {
        /// The winner: 0 or 1, in the match's team order.
        winner: usize,
        /// By how much, when the line says.
        margin: Option<Margin>,
    },
    /// The scores finished level and nothing broke the tie.
    Tied,
    /// A drawn first-class match.
    Drawn,
    /// Play started (or a toss was made) but no result was reached.
    NoResult,
    /// Abandoned or cancelled.
    Abandoned,
}

impl Outcome {
    /// How templates name it: `won`, `tied`, `drawn`, `no result`, `abandoned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Won { .. } => "won",
            Outcome::Tied => "tied",
            Outcome::Drawn => "drawn",
            Outcome::NoResult => "no result",
            Outcome::Abandoned => "abandoned",
        }
    }
}

/// A winning margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Margin {
    /// By runs (batting first).
    Runs(u32),
    /// By wickets (chasing).
    Wickets(u32),
    /// By an innings and runs.
    InningsAndRuns(u32),
}

impl fmt::Display for Margin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        match *self {
            Margin::Runs(n) => write!(f, "{n} run{}", plural(n)),
            Margin::Wickets(n) => write!(f, "{n} wicket{}", plural(n)),
            Margin::InningsAndRuns(n) => write!(f, "an innings and {n} run{}", plural(n)),
        }
    }
}

/// How a result was decided, when not by the plain scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Duckworth-Lewis-Stern (and its earlier Duckworth-Lewis form).
    Dls,
    /// The VJD method.
    Vjd,
    /// A Super Over (or one-over eliminator) after a tie.
    SuperOver,
    /// A bowl-out after a tie.
    BowlOut,
    /// The boundary count after a tie.
    BoundaryCount,
}

impl Method {
    /// As posts print it: `DLS`, `VJD`, `Super Over`, `bowl-out`, `boundary count`.
    pub fn label(self) -> &'static str {
        match self {
            Method::Dls => "DLS",
            Method::Vjd => "VJD",
            Method::SuperOver => "Super Over",
            Method::BowlOut => "bowl-out",
            Method::BoundaryCount => "boundary count",
        }
    }
}

/// A finished match's result, as its page proves it (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchResult {
    /// How it ended.
    pub outcome: Outcome,
    /// How it was decided, when not by the plain scores.
    pub method: Option<Method>,
    /// The page's line, as it said it.
    pub line: Text,
    /// Each side's innings, in team order, as the page gives them; both empty when the page
    /// gives none, or when they contradict the line (a side said to have won by runs that did
    /// not make that many more, or by wickets with another number down): the line is the
    /// result's evidence, and a score on the wrong side would be worse than none.
    pub scores: [Vec<Innings>; 2],
    /// When the match ended, or the latest it can have (see [`MatchResult::ended_by`]).
    ended_by: Option<DateTime<Utc>>,
}

/// Why a finished match has no result to post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoResultRead {
    /// The match is not finished (state neither complete nor abandoned).
    NotFinished,
    /// Its source cannot tell a result (no [`Ending`]).
    NoEvidence,
    /// The line is none of the shapes this module reads.
    UnreadLine,
    /// The line names a winner that is neither side, or both.
    UnknownWinner,
    /// The line and the page's winner field disagree.
    Conflict,
}

impl NoResultRead {
    /// A short phrase for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            NoResultRead::NotFinished => "not finished",
            NoResultRead::NoEvidence => "its source tells no result",
            NoResultRead::UnreadLine => "the result line is not one this bot reads",
            NoResultRead::UnknownWinner => "the result line's winner is neither side",
            NoResultRead::Conflict => "the result line and the page's winner field disagree",
        }
    }
}

impl MatchResult {
    /// The result of `m`, from its [`Ending`].
    ///
    /// # Errors
    /// [`NoResultRead`]: why there is none (not finished, no evidence, an unread line, a winner
    /// that is neither side, or evidence that disagrees).
    pub fn read(m: &Match) -> Result<MatchResult, NoResultRead> {
        if !matches!(m.state, MatchState::Complete | MatchState::Abandoned) {
            return Err(NoResultRead::NotFinished);
        }
        let ending = m.ending.as_deref().ok_or(NoResultRead::NoEvidence)?;
        let said = read_line(&ending.line).ok_or(NoResultRead::UnreadLine)?;
        let outcome = match said.outcome {
            Said::Won { winner, margin } => {
                let named = side_named(&m.teams, winner);
                let winner = match (named, ending.winner) {
                    (Some(a), Some(b)) if a != b => return Err(NoResultRead::Conflict),
                    (Some(side), _) | (None, Some(side)) => side,
                    (None, None) => return Err(NoResultRead::UnknownWinner),
                };
                Outcome::Won { winner, margin }
            }
            other => {
                if ending.winner.is_some() {
                    return Err(NoResultRead::Conflict);
                }
                match other {
                    Said::Tied => Outcome::Tied,
                    Said::Drawn => Outcome::Drawn,
                    Said::NoResult => Outcome::NoResult,
                    Said::Abandoned | Said::Won { .. } => Outcome::Abandoned,
                }
            }
        };
        let scores = if scores_agree(outcome, said.method, &ending.scores) {
            ending.scores.clone()
        } else {
            tracing::debug!(match_key = %m.identity(), line = %ending.line, "the page's scores contradict its result line; the result is posted without them");
            [Vec::new(), Vec::new()]
        };
        Ok(MatchResult {
            outcome,
            method: said.method,
            line: ending.line.clone(),
            scores,
            ended_by: ending.ended_by.or_else(|| latest_end(m)),
        })
    }

    /// The winner and the loser, in that order, when one side won.
    pub fn sides<'m>(&self, m: &'m Match) -> Option<(&'m Team, &'m Team)> {
        match self.outcome {
            Outcome::Won { winner, .. } => Some((&m.teams[winner], &m.teams[1 - winner])),
            _ => None,
        }
    }

    /// When the match ended, or the latest it can have ended, as far as its page shows: the
    /// page's own end, else its start plus the longest the format lasts (five days for a Test,
    /// four for other first-class matches, one for the rest); `None` when the page gives
    /// neither. A result is posted only within `RESULT_MAX_AGE` of this.
    pub fn ended_by(&self) -> Option<DateTime<Utc>> {
        self.ended_by
    }
}

/// Whether `scores` bear out `outcome` where they can: a win by runs or wickets, by the plain
/// scores (no method), in a match of one innings a side.
fn scores_agree(outcome: Outcome, method: Option<Method>, scores: &[Vec<Innings>; 2]) -> bool {
    let Outcome::Won {
        winner,
        margin: Some(margin),
    } = outcome
    else {
        return true;
    };
    let ([won], [lost]) = (scores[winner].as_slice(), scores[1 - winner].as_slice()) else {
        return true;
    };
    if method.is_some() {
        return true;
    }
    match margin {
        Margin::Runs(n) => won.runs.checked_sub(lost.runs) == Some(n),
        Margin::Wickets(n) => won.runs > lost.runs && won.wickets.map(u32::from) == 10u32.checked_sub(n),
        Margin::InningsAndRuns(_) => true,
    }
}

/// The latest a match that started at its page's start time can have ended.
fn latest_end(m: &Match) -> Option<DateTime<Utc>> {
    use super::Format;
    let days = match m.format {
        Format::Test => 5,
        Format::FirstClass => 4,
        _ => 1,
    };
    m.start_time.map(|start| start + chrono::TimeDelta::days(days))
}

/// What a line says, before the winner is tied to a side.
struct Reading<'a> {
    outcome: Said<'a>,
    method: Option<Method>,
}

enum Said<'a> {
    Won { winner: &'a str, margin: Option<Margin> },
    Tied,
    Drawn,
    NoResult,
    Abandoned,
}

/// Reads a result line (see the module documentation); `None` for any other line.
fn read_line(line: &str) -> Option<Reading<'_>> {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    let method = method_of(&lower);
    let starts = |p: &str| lower.starts_with(p);
    let outcome = if starts("no result") {
        Said::NoResult
    } else if starts("match abandoned")
        || starts("abandoned")
        || starts("match cancelled")
        || starts("match canceled")
        || starts("cancelled")
        || lower.contains("called off")
    {
        Said::Abandoned
    } else if starts("match drawn") || lower == "drawn" || lower == "draw" {
        Said::Drawn
    } else if starts("match tied") || lower == "tied" {
        // "Match tied (India won the Super Over)": the tie was broken.
        match lower.find('(').zip(lower.rfind(')')) {
            Some((open, close)) if open < close => {
                let inner = &line[open + 1..close];
                match won_tie_breaker(inner) {
                    Some(winner) => Said::Won { winner, margin: None },
                    None => Said::Tied,
                }
            }
            _ => Said::Tied,
        }
    } else if let Some(at) = lower.find(" won by ") {
        let winner = &line[..at];
        let margin = margin_of(&lower[at + " won by ".len()..])?;
        Said::Won {
            winner,
            margin: Some(margin),
        }
    } else if let Some(at) = lower.find(" beat ") {
        let winner = &line[..at];
        let rest = &lower[at + " beat ".len()..];
        let margin = match rest.find(" by ") {
            Some(by) => Some(margin_of(&rest[by + " by ".len()..])?),
            None => None,
        };
        Said::Won { winner, margin }
    } else if let Some(winner) = won_tie_breaker(line) {
        Said::Won { winner, margin: None }
    } else if let Some(winner) = line.strip_suffix(" won").or_else(|| line.strip_suffix(" won.")) {
        Said::Won { winner, margin: None }
    } else {
        return None;
    };
    if let Said::Won { winner, .. } = &outcome {
        if winner.trim().is_empty() {
            return None;
        }
    }
    Some(Reading { outcome, method })
}

/// `X won the Super Over`, `X won the one-over eliminator`, `X won on boundary count`, `X won
/// the bowl-out`: the winner's words.
fn won_tie_breaker(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    [
        " won the super over",
        " won the one-over eliminator",
        " won the eliminator",
        " won on boundary count",
        " won on the boundary count",
        " won the bowl-out",
        " won the bowl out",
        " won the bowlout",
        " won on bowl-out",
    ]
    .iter()
    .find_map(|phrase| lower.find(phrase).map(|at| text[..at].trim()))
    .filter(|w| !w.is_empty())
}

/// The margin at the start of `rest` (lower case, after "won by"): `7 runs`, `1 run`, `6 wkts`,
/// `8 wickets (with …)`, `an innings and 12 runs`.
fn margin_of(rest: &str) -> Option<Margin> {
    let words: Vec<&str> = rest
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| w.parse::<u32>().ok();
    let runs = |w: &str| matches!(w, "run" | "runs");
    match words.as_slice() {
        ["an" | "1", "innings" | "inns", "and", n, r, ..] if runs(r) => number(n).map(Margin::InningsAndRuns),
        ["innings" | "inns", "and", n, r, ..] if runs(r) => number(n).map(Margin::InningsAndRuns),
        [n, r, ..] if runs(r) => number(n).map(Margin::Runs),
        [n, w, ..] if matches!(*w, "wkt" | "wkts" | "wicket" | "wickets") => number(n).map(Margin::Wickets),
        _ => None,
    }
}

/// The method a (lower-case) line names, if any.
fn method_of(lower: &str) -> Option<Method> {
    if lower.contains("dls") || lower.contains("d/l") || lower.contains("duckworth") {
        Some(Method::Dls)
    } else if lower.contains("vjd") {
        Some(Method::Vjd)
    } else if lower.contains("super over") || lower.contains("eliminator") {
        Some(Method::SuperOver)
    } else if lower.contains("bowl-out") || lower.contains("bowl out") || lower.contains("bowlout") {
        Some(Method::BowlOut)
    } else if lower.contains("boundary count") {
        Some(Method::BoundaryCount)
    } else {
        None
    }
}

/// The side `named` names (see the module documentation), when exactly one fits.
fn side_named(teams: &[Team; 2], named: &str) -> Option<usize> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || c == '.' || c == ',')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let wanted = words(named);
    if wanted.is_empty() {
        return None;
    }
    // The full name or the short name, exactly.
    let exact: Vec<usize> = (0..2)
        .filter(|&i| {
            let t = &teams[i];
            words(&t.name) == wanted || t.short_name.as_deref().is_some_and(|s| words(s) == wanted)
        })
        .collect();
    if let [side] = exact.as_slice() {
        return Some(*side);
    }
    if exact.len() > 1 {
        return None;
    }
    // Words that each begin a word of the name, in order and next to each other.
    let fits = |name: &str| {
        let name = words(name);
        (0..name.len()).any(|start| {
            name.len() - start >= wanted.len()
                && wanted
                    .iter()
                    .zip(&name[start..])
                    .all(|(w, n)| n.starts_with(w.as_str()))
        })
    };
    let partial: Vec<usize> = (0..2).filter(|&i| fits(&teams[i].name)).collect();
    match partial.as_slice() {
        [side] => Some(*side),
        _ => None,
    }
}

/// A side's innings as one score line: `150 & 190/4`.
pub fn score_line(innings: &[Innings]) -> String {
    innings.iter().map(ToString::to_string).collect::<Vec<_>>().join(" & ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overs_of_six_balls_are_a_whole_over() {
        let innings = |overs: &str| Innings {
            runs: 122,
            wickets: Some(5),
            overs: Some(overs.into()),
            declared: false,
        };
        assert_eq!(innings("9.6").to_string(), "122/5 (10 ov)");
        assert_eq!(innings("19.0").to_string(), "122/5 (19 ov)");
        assert_eq!(innings("19.4").to_string(), "122/5 (19.4 ov)");
        assert_eq!(innings("20").to_string(), "122/5 (20 ov)");
        assert_eq!(innings("x.6").to_string(), "122/5 (x.6 ov)");
    }

    fn team(name: &str, short: &str) -> Team {
        Team {
            name: name.into(),
            short_name: (!short.is_empty()).then(|| short.into()),
        }
    }

    fn sample() -> Match {
        crate::cricket::sample_match(crate::cricket::Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None)
    }

    fn read(teams: [Team; 2], line: &str, winner: Option<usize>) -> Result<MatchResult, NoResultRead> {
        let mut m = sample();
        m.teams = teams;
        m.state = MatchState::Complete;
        m.ending = Some(Box::new(Ending {
            line: line.into(),
            scores: [Vec::new(), Vec::new()],
            winner,
            ended_by: None,
        }));
        MatchResult::read(&m)
    }

    fn ipl() -> [Team; 2] {
        [team("Gujarat Titans", "GT"), team("Royal Challengers Bangalore", "RCB")]
    }

    #[test]
    fn each_shape_of_line_reads_as_its_result() {
        let won = |w, margin| Outcome::Won { winner: w, margin };
        let cases: &[(&str, Outcome, Option<Method>)] = &[
            ("Titans won by 7 runs", won(0, Some(Margin::Runs(7))), None),
            ("RCB won by 1 run", won(1, Some(Margin::Runs(1))), None),
            ("GT won by 6 wkts", won(0, Some(Margin::Wickets(6))), None),
            (
                "Royal Challengers Bangalore won by 8 wickets (with 8 balls remaining)",
                won(1, Some(Margin::Wickets(8))),
                None,
            ),
            (
                "Titans won by an innings and 12 runs",
                won(0, Some(Margin::InningsAndRuns(12))),
                None,
            ),
            (
                "RCB won by 41 runs (DLS method)",
                won(1, Some(Margin::Runs(41))),
                Some(Method::Dls),
            ),
            (
                "RCB won by 4 wickets (D/L method)",
                won(1, Some(Margin::Wickets(4))),
                Some(Method::Dls),
            ),
            (
                "Titans won by 11 runs - 2nd inns reduced to 8 overs due to rain (DLS Target 81)",
                won(0, Some(Margin::Runs(11))),
                Some(Method::Dls),
            ),
            ("Titans beat RCB by 9 runs", won(0, Some(Margin::Runs(9))), None),
            (
                "Match tied (RCB won the Super Over)",
                won(1, None),
                Some(Method::SuperOver),
            ),
            (
                "Titans won the one-over eliminator",
                won(0, None),
                Some(Method::SuperOver),
            ),
            (
                "Match tied (Titans won on boundary count)",
                won(0, None),
                Some(Method::BoundaryCount),
            ),
            ("Match tied", Outcome::Tied, None),
            ("Match drawn", Outcome::Drawn, None),
            ("No result", Outcome::NoResult, None),
            ("No result due to rain", Outcome::NoResult, None),
            ("No result (abandoned with a toss)", Outcome::NoResult, None),
            ("Match abandoned without a ball bowled", Outcome::Abandoned, None),
            ("Match cancelled", Outcome::Abandoned, None),
            ("GT won", won(0, None), None),
        ];
        for (line, outcome, method) in cases {
            let r = read(ipl(), line, None).unwrap_or_else(|e| panic!("{line}: {e:?}"));
            assert_eq!((r.outcome, r.method), (*outcome, *method), "{line}");
            assert_eq!(r.line, *line);
        }
    }

    #[test]
    fn a_winner_is_tied_to_a_side_by_name_short_name_or_the_beginnings_of_its_words() {
        let wa = [team("Victoria", "VIC"), team("Western Australia", "WA")];
        assert_eq!(side_named(&wa, "West Aust"), Some(1));
        assert_eq!(side_named(&wa, "WA"), Some(1));
        let women = [team("India Women", "IND-W"), team("Australia Women", "AUS-W")];
        assert_eq!(side_named(&women, "IND Women"), Some(0));
        assert_eq!(side_named(&women, "Australia Women"), Some(1));
        // "Women" alone fits both: no side.
        assert_eq!(side_named(&women, "Women"), None);
        let ipl = [team("Mumbai Indians", "MI"), team("Lucknow Super Giants", "LSG")];
        assert_eq!(side_named(&ipl, "Mumbai"), Some(0));
        assert_eq!(side_named(&ipl, "Super Giants"), Some(1));
        assert_eq!(side_named(&ipl, "Kings"), None);
        // The full name decides before the beginnings of words do.
        let two = [team("India", "IND"), team("India Women", "IND-W")];
        assert_eq!(side_named(&two, "India"), Some(0));
    }

    #[test]
    fn evidence_that_disagrees_or_cannot_be_read_gives_no_result() {
        assert_eq!(
            read(ipl(), "Titans won by 7 runs", Some(1)),
            Err(NoResultRead::Conflict)
        );
        assert_eq!(read(ipl(), "Match drawn", Some(0)), Err(NoResultRead::Conflict));
        assert_eq!(
            read(ipl(), "Kings won by 7 runs", None),
            Err(NoResultRead::UnknownWinner)
        );
        // The page's own winner field ties a winner the line names unreadably.
        assert_eq!(
            read(ipl(), "Gujarat T. won by 7 runs", Some(0)).map(|r| r.outcome),
            Ok(Outcome::Won {
                winner: 0,
                margin: Some(Margin::Runs(7))
            })
        );
        assert_eq!(read(ipl(), "Stumps: day 3", None), Err(NoResultRead::UnreadLine));
        assert_eq!(read(ipl(), "Titans won by a lot", None), Err(NoResultRead::UnreadLine));
        let mut m = sample();
        assert_eq!(MatchResult::read(&m), Err(NoResultRead::NotFinished));
        m.state = MatchState::Complete;
        assert_eq!(MatchResult::read(&m), Err(NoResultRead::NoEvidence));
    }

    #[test]
    fn scores_that_contradict_the_line_are_left_out_and_the_line_decides() {
        let i = |s| Innings::parse(s).unwrap();
        let mut m = sample();
        m.state = MatchState::Complete;
        let mut ending = Ending {
            line: "Bangladesh won by 6 wkts".into(),
            // As cricapi once printed a match: the innings under the wrong sides' names.
            scores: [vec![i("141/4")], vec![i("140")]],
            winner: None,
            ended_by: None,
        };
        m.ending = Some(Box::new(ending.clone()));
        let r = MatchResult::read(&m).unwrap();
        assert_eq!(
            r.outcome,
            Outcome::Won {
                winner: 1,
                margin: Some(Margin::Wickets(6))
            }
        );
        assert_eq!(r.scores, [Vec::new(), Vec::new()]);
        ending.scores = [vec![i("140")], vec![i("141/4")]];
        m.ending = Some(Box::new(ending.clone()));
        assert_eq!(MatchResult::read(&m).unwrap().scores, ending.scores);
        ending.line = "Zimbabwe won by 6 runs".into();
        ending.scores = [vec![i("146/8")], vec![i("140")]];
        m.ending = Some(Box::new(ending.clone()));
        assert_eq!(MatchResult::read(&m).unwrap().scores, ending.scores);
        ending.scores = [vec![i("147/8")], vec![i("140")]];
        m.ending = Some(Box::new(ending));
        assert_eq!(MatchResult::read(&m).unwrap().scores, [Vec::new(), Vec::new()]);
    }

    #[test]
    fn scores_read_and_print_as_the_pages_do() {
        let i = |s| Innings::parse(s).unwrap();
        assert_eq!(i("176/6").to_string(), "176/6");
        assert_eq!(i("274").to_string(), "274");
        assert_eq!(i("245/8d").to_string(), "245/8d");
        assert_eq!(Innings::parse("x/1"), None);
        assert_eq!(score_line(&[i("150"), i("190/4")]), "150 & 190/4");
        assert_eq!(Margin::Runs(1).to_string(), "1 run");
        assert_eq!(Margin::Wickets(6).to_string(), "6 wickets");
        assert_eq!(Margin::InningsAndRuns(12).to_string(), "an innings and 12 runs");
    }

    #[test]
    fn a_match_without_its_pages_end_ended_by_the_latest_its_format_allows() {
        let mut m = sample();
        m.state = MatchState::Complete;
        m.ending = Some(Box::new(Ending {
            line: "Zimbabwe won by 7 runs".into(),
            scores: [Vec::new(), Vec::new()],
            winner: None,
            ended_by: None,
        }));
        let start = m.start_time.unwrap();
        assert_eq!(
            MatchResult::read(&m).unwrap().ended_by(),
            Some(start + chrono::TimeDelta::days(1))
        );
        m.format = crate::cricket::Format::Test;
        assert_eq!(
            MatchResult::read(&m).unwrap().ended_by(),
            Some(start + chrono::TimeDelta::days(5))
        );
    }
}
