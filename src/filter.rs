//! Which matches are announced: include/exclude lists by team, series and format, and the
//! states to announce. A match whose teams are not known yet ("TBC") is never announced.

use crate::cricket::{Match, MatchState};

/// A filter's settings by name: the command line's and `.env`'s (`--teams`, `TEAMS`…) and a
/// channel's in the channels file (`teams = […]`) are the same settings, named alike.
pub const FIELDS: &[&str] = &[
    "teams",
    "exclude_teams",
    "series",
    "exclude_series",
    "formats",
    "exclude_formats",
    "states",
];

/// The announcement filter. Text rules match case-insensitively as substrings (a team rule
/// "india" matches "India Women"); format rules match the format's label exactly ("T20I").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// When non-empty, only matches with a team (name or short name) containing one of these.
    pub teams: Vec<String>,
    /// Matches with a team containing one of these are not announced.
    pub exclude_teams: Vec<String>,
    /// When non-empty, only matches whose series contains one of these.
    pub series: Vec<String>,
    /// Matches whose series contains one of these are not announced.
    pub exclude_series: Vec<String>,
    /// When non-empty, only these formats.
    pub formats: Vec<String>,
    /// These formats are not announced.
    pub exclude_formats: Vec<String>,
    /// The states announced (default: upcoming and live).
    pub states: Vec<MatchState>,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            teams: Vec::new(),
            exclude_teams: Vec::new(),
            series: Vec::new(),
            exclude_series: Vec::new(),
            formats: Vec::new(),
            exclude_formats: Vec::new(),
            states: vec![MatchState::Upcoming, MatchState::Live],
        }
    }
}

fn contains_any(hay: &str, needles: &[String]) -> bool {
    let hay = hay.to_lowercase();
    needles.iter().any(|n| !n.is_empty() && hay.contains(&n.to_lowercase()))
}

impl Filter {
    /// `Ok(())` when `m` is announced, else the reason it is not (for logs and summaries).
    ///
    /// # Errors
    /// The rule that rejected the match, as a short phrase.
    pub fn check(&self, m: &Match) -> Result<(), &'static str> {
        if m.has_placeholder_team() {
            return Err("teams not known yet");
        }
        if !self.states.contains(&m.state) {
            return Err("state not announced");
        }
        self.check_any_state(m)
    }

    /// [`Filter::check`] but for the states: whether a match's result is posted (a result is of
    /// a finished match, whatever the states announced).
    ///
    /// # Errors
    /// The rule that rejected the match, as a short phrase.
    pub fn check_any_state(&self, m: &Match) -> Result<(), &'static str> {
        if m.has_placeholder_team() {
            return Err("teams not known yet");
        }
        let team_hit = |list: &[String]| {
            m.teams
                .iter()
                .any(|t| contains_any(&t.name, list) || t.short_name.as_deref().is_some_and(|s| contains_any(s, list)))
        };
        if !self.teams.is_empty() && !team_hit(&self.teams) {
            return Err("team not included");
        }
        if team_hit(&self.exclude_teams) {
            return Err("team excluded");
        }
        let series = m.series.as_deref().unwrap_or("");
        if !self.series.is_empty() && !contains_any(series, &self.series) {
            return Err("series not included");
        }
        if contains_any(series, &self.exclude_series) {
            return Err("series excluded");
        }
        let format = m.format.label();
        let same = |list: &[String]| list.iter().any(|f| f.eq_ignore_ascii_case(format));
        if !self.formats.is_empty() && !same(&self.formats) {
            return Err("format not included");
        }
        if same(&self.exclude_formats) {
            return Err("format excluded");
        }
        Ok(())
    }
}

/// Parses a state name as configured (`upcoming`, `live`, `complete`, `abandoned`, `other`).
/// `unknown` is another name for `other`: the state of a match whose source cannot know it.
pub fn parse_state(raw: &str) -> Option<MatchState> {
    Some(match raw.trim().to_ascii_lowercase().as_str() {
        "upcoming" => MatchState::Upcoming,
        "live" => MatchState::Live,
        "complete" => MatchState::Complete,
        "abandoned" => MatchState::Abandoned,
        "other" | "unknown" => MatchState::Other,
        _ => return None,
    })
}

/// A match format, as `FORMATS` and `EXCLUDE_FORMATS` name it: one of the named formats of
/// [`crate::cricket::format`], never a page's own word. Its names, words and label all come
/// from that module's one table.
pub type FormatSetting = crate::cricket::Format;

/// The named formats, in the table's order, for [`clap::ValueEnum::value_variants`].
static SETTINGS: std::sync::LazyLock<Vec<FormatSetting>> =
    std::sync::LazyLock::new(|| FormatSetting::named_formats().collect());

impl clap::ValueEnum for FormatSetting {
    fn value_variants<'a>() -> &'a [Self] {
        &SETTINGS
    }

    /// Any word of the table, in any case, `_` or space for `-` ("T20I", "List A", "first
    /// class"); a page's own word ([`FormatSetting::Other`]) is never a setting.
    fn from_str(input: &str, _ignore_case: bool) -> Result<Self, String> {
        FormatSetting::named_word(input).ok_or_else(|| format!("invalid format {input:?}"))
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, others, about) = self.setting()?;
        Some(
            clap::builder::PossibleValue::new(name)
                .aliases(others.iter().copied())
                .help(about),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{Format, Site, Team};

    fn m(a: &str, b: &str, series: &str, format: Format, state: MatchState) -> Match {
        Match {
            site: Site::Cricbuzz,
            source_id: "1".into(),
            teams: [
                Team {
                    name: a.into(),
                    short_name: Some("AAA".into()),
                },
                Team {
                    name: b.into(),
                    short_name: None,
                },
            ],
            series: Some(series.into()),
            description: None,
            format,
            venue: None,
            start_time: None,
            state,
            status: None,
            url: "https://x.test/1".parse().unwrap(),
            ending: None,
        }
    }

    #[test]
    fn by_default_only_upcoming_and_live_matches_with_known_teams_pass() {
        let f = Filter::default();
        assert_eq!(
            f.check(&m("India", "England", "S", Format::Test, MatchState::Upcoming)),
            Ok(())
        );
        assert_eq!(
            f.check(&m("India", "England", "S", Format::Test, MatchState::Live)),
            Ok(())
        );
        assert_eq!(
            f.check(&m("India", "England", "S", Format::Test, MatchState::Complete)),
            Err("state not announced")
        );
        assert_eq!(
            f.check(&m("India", "England", "S", Format::Test, MatchState::Abandoned)),
            Err("state not announced")
        );
        assert_eq!(
            f.check(&m("TBC", "TBC", "S", Format::Test, MatchState::Upcoming)),
            Err("teams not known yet")
        );
    }

    #[test]
    fn include_and_exclude_rules_apply_to_teams_series_and_formats() {
        let f = Filter {
            teams: vec!["india".into()],
            exclude_series: vec!["Legends".into()],
            exclude_formats: vec!["t20".into()],
            ..Filter::default()
        };
        assert_eq!(
            f.check(&m(
                "India Women",
                "Australia Women",
                "Tour",
                Format::Odi,
                MatchState::Live
            )),
            Ok(())
        );
        assert_eq!(
            f.check(&m("Pakistan", "England", "Tour", Format::Odi, MatchState::Live)),
            Err("team not included")
        );
        assert_eq!(
            f.check(&m("India", "England", "World Legends", Format::Odi, MatchState::Live)),
            Err("series excluded")
        );
        assert_eq!(
            f.check(&m("India", "England", "IPL", Format::T20, MatchState::Live)),
            Err("format excluded")
        );
        let by_short = Filter {
            teams: vec!["aaa".into()],
            ..Filter::default()
        };
        assert_eq!(
            by_short.check(&m("X", "Y", "S", Format::Test, MatchState::Live)),
            Ok(())
        );
    }
}
