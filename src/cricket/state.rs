//! The one rule that reconciles a source's state word with its status line, shared by every
//! parser so that the same facts give the same [`MatchState`] whichever site they came from.
//!
//! Sources disagree with themselves: Cricbuzz's `state` says "Complete" for a match whose status
//! reads "No result"; CricketData's `matchStarted` is `true` while its status says "Match not
//! started"; some listings carry no state word at all. The status line is the more specific
//! evidence, so it settles those cases:
//!
//! | the status says                                   | state                                      |
//! | ------------------------------------------------- | ------------------------------------------ |
//! | abandoned, no result, cancelled, called off        | abandoned, whatever the state word says    |
//! | "won by", "match drawn", "match tied", "beat"…     | complete (unless abandoned): never live    |
//! | "match not started", "starts at", "yet to begin"   | upcoming, when the state word said live or nothing |
//! | a toss, "need N runs", "lead by", "stumps"…        | live, only when the state word said nothing |
//! | anything else, or no status                        | the state word's state                     |
//!
//! A match whose state cannot be known stays [`MatchState::Other`] (shown as `other`, and
//! meaning "unknown"): it is never announced as live.

use super::MatchState;

impl MatchState {
    /// The state once the status line's evidence is weighed, by the table in the module
    /// documentation. Every parser calls this with its own reading of the state word.
    pub fn with_status(self, status: Option<&str>) -> MatchState {
        let Some(status) = status else {
            return self;
        };
        // By the table below only an abandonment changes these two: an abandoned match stays
        // abandoned whatever the line says, and a finished one becomes abandoned on that
        // evidence alone. Asking just that question spares weighing every phrase of the line,
        // and most listings of an answer are finished.
        match self {
            MatchState::Abandoned => return self,
            MatchState::Complete if proves_abandonment(status) => return MatchState::Abandoned,
            MatchState::Complete => return self,
            _ => {}
        }
        self.settled_by(state_from_status(status))
    }

    /// The table of [`MatchState::with_status`]: this state word once a status line proved
    /// `evidence` (`None`: it proved nothing).
    fn settled_by(self, evidence: Option<MatchState>) -> MatchState {
        let Some(evidence) = evidence else {
            return self;
        };
        match (evidence, self) {
            (MatchState::Abandoned, _) => MatchState::Abandoned,
            (MatchState::Complete, MatchState::Abandoned) => MatchState::Abandoned,
            (MatchState::Complete, _) => MatchState::Complete,
            (MatchState::Upcoming, MatchState::Live | MatchState::Other) => MatchState::Upcoming,
            (MatchState::Live, MatchState::Other) => MatchState::Live,
            (_, said) => said,
        }
    }
}

/// What a status line alone proves, or `None` when it proves nothing.
///
/// One pass over the line's words, each looked at with the word before it (every phrase is one
/// or two words), strongest evidence kept: abandoned, then complete, then upcoming, then live.
/// No copy of the line is made: this runs for every match of every page.
pub fn state_from_status(status: &str) -> Option<MatchState> {
    // Every upcoming listing of Cricbuzz's API reads "Match starts at Jun 21, 17:30 GMT" (61 of
    // the 61 on its upcoming page): that opening is known to be upcoming evidence, so only the
    // rest is weighed, from the opening's last word on.
    if let Some(rest) = status
        .get(..STARTS_AT.len())
        .filter(|head| head.eq_ignore_ascii_case(STARTS_AT))
        .and_then(|_| status.get(STARTS_AT.len()..))
    {
        return weigh_from(rest, may_be_evidence, Some(MatchState::Upcoming), "at");
    }
    weigh(status, may_be_evidence)
}

/// A status opening whose words weigh as upcoming and say nothing else (no "won"), ending at a
/// word boundary.
const STARTS_AT: &str = "match starts at ";

/// False for a word that is no phrase's last word, so that [`evidence`] need not look at it:
/// every phrase ends in a word starting with one of these letters ("abandoned", "by", "result",
/// "toss"…); "Jun", "GMT", "won", "runs" and numbers do not.
fn may_be_evidence(word: &str) -> bool {
    matches!(
        word.as_bytes().first().map(u8::to_ascii_lowercase),
        Some(b'a' | b'b' | b'c' | b'd' | b'i' | b'n' | b'o' | b'r' | b's' | b't')
    )
}

/// The strongest evidence among the words `consider` lets through.
fn weigh(status: &str, consider: impl Fn(&str) -> bool) -> Option<MatchState> {
    weigh_from(status, consider, None, "")
}

/// [`weigh`] of the text that follows an opening already weighed: `strongest` is what the
/// opening proved and `prev` its last word (the opening has no "won").
fn weigh_from<'a>(
    status: &'a str,
    consider: impl Fn(&str) -> bool,
    mut strongest: Option<MatchState>,
    mut prev: &'a str,
) -> Option<MatchState> {
    let mut saw_won = false;
    for word in super::words::words(status) {
        let found = if consider(word) {
            evidence(prev, word, saw_won)
        } else {
            None
        };
        if found.is_some_and(|f| strongest.is_none_or(|s| rank(f) > rank(s))) {
            strongest = found;
        }
        saw_won |= word.eq_ignore_ascii_case("won");
        prev = word;
    }
    strongest
}

/// True when the line holds an abandonment phrase ("abandoned", "cancelled", "no result",
/// "called off"): the same answer as [`state_from_status`] giving [`MatchState::Abandoned`], the
/// strongest evidence, so any one phrase settles it.
fn proves_abandonment(status: &str) -> bool {
    // Every such phrase ends in a word holding "abandon", "cancel", "result" or "off" in some
    // mix of cases (words compare ignoring ASCII case): a line holding none of them, nearly
    // every line, is answered without splitting it into words.
    let bytes = status.as_bytes();
    let holds = |at: usize, part: &[u8]| {
        bytes
            .get(at..at + part.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(part))
    };
    // `| 0x20` lower-cases an ASCII letter; only 'A' and 'a' give b'a', and so on.
    let may = (0..bytes.len()).any(|at| match bytes.get(at).map(|b| b | 0x20) {
        Some(b'a') => holds(at, b"abandon"),
        Some(b'c') => holds(at, b"cancel"),
        Some(b'r') => holds(at, b"result"),
        Some(b'o') => holds(at, b"off"),
        _ => false,
    });
    may && {
        let mut prev = "";
        super::words::words(status).any(|word| {
            let found = is_abandonment(prev, word);
            prev = word;
            found
        })
    }
}

/// `word`, read after `prev`, ends an abandonment phrase.
fn is_abandonment(prev: &str, word: &str) -> bool {
    let is = |w: &str, wanted: &str| w.eq_ignore_ascii_case(wanted);
    word.get(..7).is_some_and(|head| is(head, "abandon"))
        || is(word, "cancelled")
        || is(word, "canceled")
        || (is(prev, "no") && is(word, "result"))
        || (is(prev, "called") && is(word, "off"))
}

/// How strong a piece of evidence is: an abandonment outranks a result, which outranks "not
/// started", which outranks signs of play.
fn rank(state: MatchState) -> u8 {
    match state {
        MatchState::Abandoned => 4,
        MatchState::Complete => 3,
        MatchState::Upcoming => 2,
        MatchState::Live => 1,
        MatchState::Other => 0,
    }
}

/// The evidence of `word` read after `prev` ("won" + "by"); `saw_won`: "won" came earlier
/// ("won the Super Over").
fn evidence(prev: &str, word: &str, saw_won: bool) -> Option<MatchState> {
    let is = |w: &str, wanted: &str| w.eq_ignore_ascii_case(wanted);
    let any = |w: &str, wanted: &[&str]| wanted.iter().any(|x| is(w, x));
    if is_abandonment(prev, word) {
        Some(MatchState::Abandoned)
    } else if (any(prev, &["won", "wins", "win"]) && is(word, "by"))
        || (is(prev, "match") && any(word, &["drawn", "tied"]))
        || is(word, "beat")
        || (is(prev, "boundary") && is(word, "count"))
        || (saw_won && is(prev, "super") && is(word, "over"))
    {
        Some(MatchState::Complete)
    } else if (is(prev, "not") && is(word, "started"))
        || (is(prev, "to") && is(word, "begin"))
        || (is(prev, "starts") && any(word, &["at", "in"]))
        || (is(prev, "match") && is(word, "starts"))
    {
        Some(MatchState::Upcoming)
    } else if (any(prev, &["opt", "opted", "elected", "chose"]) && is(word, "to"))
        || (is(prev, "the") && is(word, "toss"))
        || any(word, &["need", "needs", "stumps"])
        || (any(prev, &["lead", "trail"]) && is(word, "by"))
        || (is(prev, "innings") && is(word, "break"))
    {
        Some(MatchState::Live)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MatchState::*;

    proptest::proptest! {
        /// The first-letter filter never hides evidence: same answer as looking at every word.
        #[test]
        fn skipping_words_by_first_letter_changes_no_answer(
            status in "((no|No|result|RESULT|called|off|won|wins|win|by|match|Match|drawn|tied|beat|boundary|count|super|over|not|started|to|begin|starts|at|in|opt|opted|elected|chose|the|toss|need|needs|stumps|lead|trail|innings|break|abandoned|Abandonment|cancelled|canceled|Jun|16|x|é)[ ,:-]{1,2}){0,8}"
        ) {
            proptest::prop_assert_eq!(state_from_status(&status), weigh(&status, |_| true));
        }

        #[test]
        fn the_known_opening_weighs_as_reading_it_word_by_word(
            status in "(Match|MATCH|match|Matchs|Match-)[ ]?(starts|STARTS|start)[ ]?(at|AT|in)[ ,:-]?(( |,|:|-)(no|result|won|by|beat|abandoned|cancelled|not|started|toss|needs|Jun|16|08|30|GMT|x|é)){0,6}"
        ) {
            proptest::prop_assert_eq!(state_from_status(&status), weigh(&status, |_| true));
        }

        #[test]
        fn skipping_words_changes_no_answer_on_any_text(status in "\\PC{0,60}") {
            proptest::prop_assert_eq!(state_from_status(&status), weigh(&status, |_| true));
        }

        /// Asking a finished or abandoned match only about abandonment settles it as weighing
        /// the whole line does, for every state word.
        #[test]
        fn the_abandonment_question_settles_as_the_whole_line_does(
            status in "((no|No|NO|result|Result|called|Called|off|OFF|won|by|abandoned|Abandonment|abandon|abando|ABANDONED|cancelled|Canceled|cancel|cancels|resulted|offer|scoff|not|started|stumps|x|é)[ ,:.-]{1,2}){0,8}|\\PC{0,40}"
        ) {
            for state in [Upcoming, Live, Complete, Abandoned, Other] {
                proptest::prop_assert_eq!(
                    state.with_status(Some(&status)),
                    state.settled_by(state_from_status(&status)),
                    "{}", state
                );
            }
            proptest::prop_assert_eq!(
                proves_abandonment(&status),
                state_from_status(&status) == Some(Abandoned)
            );
        }
    }

    #[test]
    fn the_status_line_settles_what_the_state_word_gets_wrong() {
        // Cricbuzz: "Complete" with no result; CricketData: started, yet "Match not started".
        assert_eq!(Complete.with_status(Some("No result due to rain")), Abandoned);
        assert_eq!(Complete.with_status(Some("Match abandoned due to rain")), Abandoned);
        assert_eq!(Live.with_status(Some("Match not started")), Upcoming);
        assert_eq!(Live.with_status(Some("India won by 7 wkts")), Complete);
        assert_eq!(Upcoming.with_status(Some("Match drawn")), Complete);
        assert_eq!(Other.with_status(Some("Slovenia opt to bat")), Live);
        assert_eq!(Other.with_status(Some("Match starts at Jun 16, 08:30 GMT")), Upcoming);
    }

    #[test]
    fn a_status_that_proves_nothing_keeps_the_state_word() {
        assert_eq!(
            Live.with_status(Some("Day 2: Stumps - Bangladesh lead by 156 runs")),
            Live
        );
        assert_eq!(Upcoming.with_status(Some("Pakistan won the toss")), Upcoming);
        assert_eq!(Other.with_status(Some("Rain delay")), Other);
        assert_eq!(Other.with_status(None), Other);
        assert_eq!(Complete.with_status(Some("Australia opt to bowl")), Complete);
    }

    #[test]
    fn phrases_are_whole_words_read_in_any_case_and_the_strongest_wins() {
        assert_eq!(state_from_status("IND Women won by 17 runs"), Some(Complete));
        assert_eq!(state_from_status("No result (abandoned with a toss)"), Some(Abandoned));
        assert_eq!(state_from_status("Match yet to begin"), Some(Upcoming));
        assert_eq!(state_from_status("NW Warriors chose to bat."), Some(Live));
        assert_eq!(state_from_status("WORCS need 194 runs"), Some(Live));
        assert_eq!(state_from_status("Titans won the Super Over"), Some(Complete));
        assert_eq!(state_from_status("Super Over in progress"), None);
        // "won by" after a toss line: the result is the stronger evidence.
        assert_eq!(
            state_from_status("Pakistan won the toss; India won by 3 runs"),
            Some(Complete)
        );
        // Not whole words: nothing.
        assert_eq!(state_from_status("Wonby Park"), None);
        assert_eq!(state_from_status(""), None);
    }
}
