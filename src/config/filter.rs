//! The filter section: which matches are announced, by team, series, format and state. Formats
//! and states are closed sets, read by clap, so a typo is refused rather than matching nothing.

use super::value::{list, EnumList};
use super::{ConfigError, Problem};
use crate::cricket::MatchState;
use crate::filter::{Filter, FormatSetting};

/// The filter's settings, as given.
#[derive(clap::Args, Clone)]
pub struct FilterSettings {
    /// Announce only matches with a team containing one of these (comma-separated).
    #[arg(long, env = "TEAMS", default_value = "", hide_default_value = true, global = true)]
    pub teams: String,
    /// Never announce matches with a team containing one of these (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_TEAMS",
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_teams: String,
    /// Announce only matches whose series contains one of these (comma-separated).
    #[arg(long, env = "SERIES", default_value = "", hide_default_value = true, global = true)]
    pub series: String,
    /// Never announce matches whose series contains one of these (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_SERIES",
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_series: String,
    /// Announce only these formats (comma-separated).
    #[arg(
        long,
        env = "FORMATS",
        value_parser = EnumList::<FormatSetting>::parser(),
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub formats: EnumList<FormatSetting>,
    /// Never announce these formats (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_FORMATS",
        value_parser = EnumList::<FormatSetting>::parser(),
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_formats: EnumList<FormatSetting>,
    /// States to announce (comma-separated).
    #[arg(
        long,
        env = "STATES",
        value_parser = EnumList::<StateSetting>::parser(),
        default_value = "upcoming,live",
        global = true
    )]
    pub states: EnumList<StateSetting>,
}

impl FilterSettings {
    /// The filter.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when no state is given: nothing would ever be announced.
    pub fn validate(&self) -> Result<Filter, ConfigError> {
        if self.states.0.is_empty() {
            return Err(ConfigError::invalid("STATES", "", Problem::NoStates));
        }
        let labels = |formats: &EnumList<FormatSetting>| formats.0.iter().map(|f| f.label().to_string()).collect();
        Ok(Filter {
            teams: list(&self.teams),
            exclude_teams: list(&self.exclude_teams),
            series: list(&self.series),
            exclude_series: list(&self.exclude_series),
            formats: labels(&self.formats),
            exclude_formats: labels(&self.exclude_formats),
            states: self.states.0.iter().map(|st| st.state()).collect(),
        })
    }
}

/// A match state, as `STATES` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StateSetting {
    /// Not started.
    Upcoming,
    /// In play.
    Live,
    /// Finished with a result.
    Complete,
    /// Abandoned or called off.
    Abandoned,
    /// A state the page does not prove (also accepted as `unknown`).
    #[value(alias = "unknown")]
    Other,
}

impl StateSetting {
    /// The match state it names.
    pub fn state(self) -> MatchState {
        match self {
            StateSetting::Upcoming => MatchState::Upcoming,
            StateSetting::Live => MatchState::Live,
            StateSetting::Complete => MatchState::Complete,
            StateSetting::Abandoned => MatchState::Abandoned,
            StateSetting::Other => MatchState::Other,
        }
    }
}
