//! Listings a parser drops because a side has no name. A page that lists a match without its
//! teams is broken in a way an operator should hear of (the match will never be announced),
//! but a page is read every poll: each such listing is logged at `warn` once per process, by
//! its site and id, not once per poll.

use crate::cricket::{Match, Site, Text};
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

/// The listings of one page dropped because a side has no name, kept until the page is read:
/// a match listed more than once (a Cricbuzz or ESPNcricinfo page lists a match in several
/// places) is only reported when no listing of it could be read.
#[derive(Debug, Default)]
pub(crate) struct Unnamed {
    listings: Vec<(Text, [bool; 2])>,
}

impl Unnamed {
    /// Notes that the listing `id` was dropped; `sides`: the two names as read (`None` or empty
    /// for a missing one).
    pub(crate) fn note(&mut self, id: &str, sides: [Option<&str>; 2]) {
        self.listings
            .push((Text::from(cut(id)), sides.map(|s| s.is_none_or(str::is_empty))));
    }

    /// Reports, once per process each ([`for_empty_team_name`]), the noted listings of `site`
    /// whose match the page did not list readably elsewhere (`matches`).
    pub(crate) fn report(self, site: Site, matches: &[Match]) {
        for (id, missing) in self.listings {
            if !matches.iter().any(|m| m.source_id == id) {
                let side = |missing: bool| (!missing).then_some("named");
                for_empty_team_name(site, &id, missing.map(side));
            }
        }
    }
}

/// How many listings are remembered; past it the memory starts afresh (a listing may then be
/// logged once more), so a hostile page of endless ids cannot grow it.
const REMEMBERED: usize = 4096;

/// The most bytes of an id written in the log line (ids are short; a hostile one is cut).
const MAX_ID_BYTES: usize = 64;

static REPORTED: LazyLock<Mutex<HashSet<(Site, String)>>> = LazyLock::new(Mutex::default);

/// Logs, at `warn` and once per process for each `site` and `id`, that the listing was dropped
/// because a side has no name (`sides`: the two names as read, `None` or empty for a missing
/// one). Returns whether it logged now.
pub(crate) fn for_empty_team_name(site: Site, id: &str, sides: [Option<&str>; 2]) -> bool {
    let id = cut(id);
    let fresh = {
        let mut reported = REPORTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if reported.len() >= REMEMBERED {
            reported.clear();
        }
        reported.insert((site, id.to_string()))
    };
    if fresh {
        let missing = match sides.map(|s| s.is_none_or(str::is_empty)) {
            [true, true] => "both sides",
            [true, false] => "the first side",
            _ => "the second side",
        };
        tracing::warn!(
            site = %site,
            id = %id.escape_debug(),
            missing,
            "listing dropped: a team name is empty; the page lists the match without its teams, so it is not announced"
        );
    }
    fresh
}

/// `id` cut to at most [`MAX_ID_BYTES`] at a character boundary.
fn cut(id: &str) -> &str {
    let mut end = id.len().min(MAX_ID_BYTES);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceKind;

    #[test]
    fn a_listing_dropped_for_an_empty_team_name_is_logged_at_warn_once_by_every_parser() {
        let rss = r#"<rss><channel>
            <item><title>192/2 * v Sri Lanka</title><guid>http://www.cricinfo.com/ci/engine/match/990001.html</guid></item>
            <item><title>Kent v Essex</title><guid>http://www.cricinfo.com/ci/engine/match/990002.html</guid></item>
            </channel></rss>"#;
        let cricketdata = r#"{"status":"success","data":[
            {"id":"dropped-cd-1","teams":["","Nepal"],"matchStarted":false},
            {"id":"dropped-cd-2","teams":["Oman","Nepal"],"matchStarted":false}]}"#;
        // 990004 is listed twice, once without names: read from the other listing, not logged.
        let cricbuzz = r#"{"typeMatches":[{"matchType":"International","seriesMatches":[{"seriesAdWrapper":{"matches":[
            {"matchInfo":{"matchId":990003,"team1":{"teamName":""},"team2":{"teamName":"B"}}},
            {"matchInfo":{"matchId":990004,"team1":{"teamName":" "},"team2":{}}},
            {"matchInfo":{"matchId":990004,"team1":{"teamName":"C"},"team2":{"teamName":"D"}}}]}}]}]}"#;
        let team = |name: &str| format!(r#"{{"team":{{"longName":"{name}"}}}}"#);
        let espn_match = |id: u32, a: &str, b: &str| {
            format!(
                r#"{{"objectId":{id},"slug":"a-v-b","state":"PRE","series":{{"objectId":1,"slug":"cup"}},"teams":[{},{}]}}"#,
                team(a),
                team(b)
            )
        };
        let espn = format!(
            r#"<script id="__NEXT_DATA__" type="application/json">{{"props":{{"matches":[{},{}]}}}}</script>"#,
            espn_match(990005, "", "India"),
            espn_match(990006, "India", "Nepal")
        );
        let pages = [
            (SourceKind::EspnRss, rss.to_string(), "990001"),
            (SourceKind::Cricketdata, cricketdata.to_string(), "dropped-cd-1"),
            (SourceKind::CricbuzzJson, cricbuzz.to_string(), "990003"),
            (SourceKind::Espncricinfo, espn, "990005"),
        ];
        let ((), logs) = crate::source::log_capture::logged("warn", || {
            for _ in 0..2 {
                for (kind, page, _) in &pages {
                    assert_eq!(kind.parse(page).map(|m| m.len()), Ok(1), "{kind}");
                }
            }
        });
        let lines: Vec<&str> = logs.lines().collect();
        assert_eq!(lines.len(), pages.len(), "{logs}");
        for ((_, _, id), line) in pages.iter().zip(&lines) {
            assert!(
                line.contains("WARN") && line.contains("listing dropped: a team name is empty") && line.contains(id),
                "{id}: {line}"
            );
        }
        assert!(
            lines[0].contains("missing=\"the first side\"") || lines[0].contains("missing=the first side"),
            "{}",
            lines[0]
        );
        assert!(!logs.contains("990004"), "{logs}");
    }

    #[test]
    fn each_listing_is_reported_once_and_hostile_ids_are_cut() {
        let id = "dropped-test-1";
        assert!(for_empty_team_name(Site::Web, id, [None, Some("B")]));
        assert!(!for_empty_team_name(Site::Web, id, [None, Some("B")]));
        // Another site's listing with the same id is another listing.
        assert!(for_empty_team_name(Site::Cricketdata, id, [Some(""), Some("")]));
        assert_eq!(cut(&"é".repeat(40)).len(), 64);
        assert_eq!(cut("short"), "short");
    }
}
