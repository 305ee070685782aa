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
//! | "won by", "match drawn", "match tied"…             | complete (unless abandoned): never live    |
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
        let Some(evidence) = status.and_then(state_from_status) else {
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
pub fn state_from_status(status: &str) -> Option<MatchState> {
    let s = status.to_lowercase();
    let has = |phrases: &[&str]| phrases.iter().any(|p| s.contains(p));
    if has(&["abandon", "no result", "cancelled", "canceled", "called off"]) {
        Some(MatchState::Abandoned)
    } else if has(&[
        "won by",
        "wins by",
        "win by",
        "match drawn",
        "match tied",
        "won the super over",
        "won on boundary count",
        "beat ",
    ]) {
        Some(MatchState::Complete)
    } else if has(&[
        "match not started",
        "not started yet",
        "yet to begin",
        "starts at",
        "match starts",
        "starts in",
    ]) {
        Some(MatchState::Upcoming)
    } else if has(&[
        "opt to",
        "elected to",
        "chose to",
        "won the toss",
        " need ",
        " needs ",
        "lead by",
        "trail by",
        "stumps",
        "innings break",
    ]) {
        Some(MatchState::Live)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MatchState::*;

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
}
