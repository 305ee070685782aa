//! The domain nouns: a [`Match`] as a score page describes it, the [`MatchKey`] that
//! identifies the match itself (not any one page's id) for claims, the [`Identity`]s a claim
//! records for it, the [`Facts`] that tell it from another match of the same two sides (its
//! description read into [`Described`]), and a cycle's [`Sighting`]s of it, linked by the
//! operator's preference of sites ([`Links`]).
//!
//! It also owns the one definition of formats and states every parser follows: [`format`](mod@format) (the
//! table of formats and the rule that tells a Test from a first-class match, an ODI from List A,
//! a T20I from a T20, by the ICC members' status in `members.rs`) and [`state`] (how a status
//! line settles a state word). Nothing here does I/O; parsers in [`crate::source`] build these
//! values from page text.

mod description;
pub mod facts;
pub mod format;
mod identity;
mod key;
pub mod link;
mod members;
mod names;
pub mod result;
mod sighting;
pub mod state;
mod words;

pub use description::{Described, Group, Stage};
pub use facts::{Conflict, Facts, FormatClass, Start};
pub use format::{Format, FormatClues, Level};
pub use identity::{Identities, Identity, Lookup};
pub use key::MatchKey;
pub use link::{LinkError, Links};
pub use result::{score_line, Ending, Innings, Margin, MatchResult, Method, NoResultRead, Outcome as ResultOutcome};
pub use sighting::{Sighting, Sightings};
pub use state::state_from_status;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use url::Url;

/// The text of a match's fields (ids, team names, series, description, venue, status): a string
/// kept inside the value itself, with no allocation, when it is at most 24 bytes long (most team
/// names, short names, descriptions and cities), and on the heap like a `String` when longer.
///
/// A parse builds about ten of these a match, and allocating each one was a large part of the
/// JSON sources' time (issue 20). It dereferences to `str`, compares with `&str` and `String`,
/// and is built from either with `.into()`; it serialises as a plain JSON string. It is
/// [`compact_str::CompactString`] (<https://docs.rs/compact_str>).
pub type Text = compact_str::CompactString;

/// The site (or feed) a match was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Site {
    /// www.cricbuzz.com pages (the 2026 Next.js layout).
    Cricbuzz,
    /// www.espncricinfo.com pages and feeds.
    Espncricinfo,
    /// CricketData.org (cricapi) JSON API.
    Cricketdata,
    /// Any other site, read through an operator's CSS-selector profile.
    Web,
}

impl Site {
    /// The site's name as used in logs, config and claim aliases (`cricbuzz`, `espncricinfo`).
    pub fn as_str(self) -> &'static str {
        match self {
            Site::Cricbuzz => "cricbuzz",
            Site::Espncricinfo => "espncricinfo",
            Site::Cricketdata => "cricketdata",
            Site::Web => "web",
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One side of a match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Team {
    /// Full name as the page prints it ("Zimbabwe", "Chennai Super Kings").
    pub name: Text,
    /// Abbreviation as the page prints it ("ZIM", "CSK"), when the page gives one.
    pub short_name: Option<Text>,
}

impl Team {
    /// True when the page does not yet know this team: "TBC"/"TBA"/"TBD", a slot code ("B1",
    /// "D2", "SF1"), a winner or loser of another match ("Winner SF1", "Loser of Qualifier 1"),
    /// a place in a table ("1st Place Group A"), or a stage standing for its winner
    /// ("Qualifier 2"); the rules are in `src/cricket/names.rs`.
    ///
    /// Such matches are never claimed or announced: a post saying "TBC v TBC" would be useless,
    /// and the claim would block the real announcement once the teams are known.
    pub fn is_placeholder(&self) -> bool {
        names::is_placeholder_name(&self.name)
    }
}

/// Where the match is in its life, as the page reports it and its status line confirms
/// ([`MatchState::with_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchState {
    /// Scheduled, not started (Cricbuzz "Preview"/"Upcoming", ESPNcricinfo "PRE").
    Upcoming,
    /// In progress, including breaks (toss, innings break, stumps, rain delay).
    Live,
    /// Finished with a result (Cricbuzz "Complete", ESPNcricinfo "POST").
    Complete,
    /// Abandoned, cancelled or no result.
    Abandoned,
    /// Unknown: the source did not say, said something the parser does not read, or cannot
    /// know (an RSS title whose scores fit both a live and a finished match). Named `other` in
    /// `STATES` and templates (`unknown` is accepted there too); never announced as live.
    Other,
}

impl MatchState {
    /// Whether a match in this state is announced by default: upcoming and live matches are,
    /// finished, abandoned and unknown ones are not.
    pub fn is_announceable(self) -> bool {
        matches!(self, MatchState::Upcoming | MatchState::Live)
    }

    /// Lower-case name used in logs and templates: `upcoming`, `live`, `complete`, `abandoned`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchState::Upcoming => "upcoming",
            MatchState::Live => "live",
            MatchState::Complete => "complete",
            MatchState::Abandoned => "abandoned",
            MatchState::Other => "other",
        }
    }
}

impl fmt::Display for MatchState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The ground a match is played at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Venue {
    /// Ground name ("Queens Sports Club").
    pub ground: Text,
    /// Town or city, when the page gives it ("Bulawayo").
    pub city: Option<Text>,
}

impl fmt::Display for Venue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.city {
            Some(city) if !city.is_empty() && *city != self.ground => {
                write!(f, "{}, {}", self.ground, city)
            }
            _ => f.write_str(&self.ground),
        }
    }
}

/// A match as one source describes it. Parsers fill what the page says and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    /// The site the match was read from.
    pub site: Site,
    /// The site's own id for the match (Cricbuzz `matchId`, ESPNcricinfo `objectId`).
    pub source_id: Text,
    /// The two sides, in the page's order (home or first-listed side first).
    pub teams: [Team; 2],
    /// Series or tournament name ("Bangladesh tour of Zimbabwe, 2026").
    pub series: Option<Text>,
    /// The match's place in its series ("2nd T20I", "Final", "Match 12").
    pub description: Option<Text>,
    /// The form of the game.
    pub format: Format,
    /// Where it is played.
    pub venue: Option<Venue>,
    /// Scheduled start, in UTC.
    pub start_time: Option<DateTime<Utc>>,
    /// Where the match is in its life.
    pub state: MatchState,
    /// The page's one-line status ("Match starts at Jul 17, 10:30 GMT", "IND won by 7 runs").
    pub status: Option<Text>,
    /// The match's own page on the source site (absolute URL).
    pub url: Url,
    /// What the page says of the match's end (result line, final scores, winner, end time),
    /// filled only for a finished match and only by a source that can tell a result (see
    /// [`Ending`]); boxed, as most listings have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Box<Ending>>,
}

impl Match {
    /// "Zimbabwe v Bangladesh": the two full team names, in the page's order.
    pub fn title(&self) -> String {
        format!("{} v {}", self.teams[0].name, self.teams[1].name)
    }

    /// True when either side is a placeholder ("TBC"); see [`Team::is_placeholder`].
    pub fn has_placeholder_team(&self) -> bool {
        self.teams.iter().any(Team::is_placeholder)
    }

    /// The identity under which this match's own page knows it: `site:source_id`
    /// (`cricbuzz:158062`; see [`Identity`]).
    pub fn identity(&self) -> Identity {
        Identity::source(self.site, &self.source_id)
    }
}

impl Match {
    /// The match in words as a claim records it for operators: "Zimbabwe v Bangladesh, 2nd
    /// T20I" (the title, then the description when there is one).
    pub fn claim_title(&self) -> String {
        match self.description.as_deref() {
            Some(d) if !d.is_empty() => format!("{}, {d}", self.title()),
            _ => self.title(),
        }
    }
}

/// A T20I listing as the unit tests of this module build it: `a` v `b` on 2026-07-17 10:30
/// UTC, with the site's id `id` and the description `desc`.
#[cfg(test)]
pub(crate) fn sample_match(site: Site, id: &str, a: &str, b: &str, desc: Option<&str>) -> Match {
    use chrono::TimeZone;
    let team = |name: &str| Team {
        name: name.into(),
        short_name: None,
    };
    Match {
        site,
        source_id: id.into(),
        teams: [team(a), team(b)],
        series: None,
        description: desc.map(Into::into),
        format: Format::T20i,
        venue: None,
        start_time: chrono::Utc.with_ymd_and_hms(2026, 7, 17, 10, 30, 0).single(),
        state: MatchState::Upcoming,
        status: None,
        url: "https://example.com/m".parse().expect("a URL"),
        ending: None,
    }
}
