//! The profile schema: what an operator writes in TOML ([`Profile`] and its parts), and the
//! checks that turn a typo or an inconsistent profile into a [`ProfileError`] at load.

use std::collections::BTreeMap;

use chrono::format::{Item, StrftimeItems};
use serde::Deserialize;
use url::Url;

use crate::cricket::{MatchState, Site};

/// An operator's description of one page layout, as read from TOML by [`load_profile`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The profile's name ("cricbuzz-2018"), used in logs and error messages.
    pub name: String,
    /// The site the matches are attributed to; it decides claim aliases (`site:id`), so a
    /// profile for an old Cricbuzz layout shares ids with the Cricbuzz parser.
    pub site: Site,
    /// The site's root; relative links are resolved against it. Must be http(s).
    pub base_url: Url,
    /// CSS selector matching one element per match.
    pub card: String,
    /// Format word used when neither the `format` field nor the description says
    /// (e.g. "T20" for a site that lists only one league).
    #[serde(default)]
    pub default_format: Option<String>,
    /// Where each match field is found inside a card.
    pub fields: Fields,
    /// How the match state is read; absent = every match is [`MatchState::Other`].
    #[serde(default)]
    pub state: StateRule,
}

/// The per-card fields of a [`Profile`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    /// The site's id for the match. Required: cards without one are skipped.
    pub id: Field,
    /// First team's full name (with `team2`; exclusive with `title`).
    #[serde(default)]
    pub team1: Option<Field>,
    /// Second team's full name (with `team1`).
    #[serde(default)]
    pub team2: Option<Field>,
    /// Text holding both team names, split at `teams_separator` (exclusive with `team1`/`team2`).
    #[serde(default)]
    pub title: Option<Field>,
    /// Literal separator between the two names in `title` (" v ", " vs "); first occurrence.
    #[serde(default)]
    pub teams_separator: Option<String>,
    /// First team's abbreviation, when the page prints one.
    #[serde(default)]
    pub team1_short: Option<Field>,
    /// Second team's abbreviation, when the page prints one.
    #[serde(default)]
    pub team2_short: Option<Field>,
    /// Series or tournament name.
    #[serde(default)]
    pub series: Option<Field>,
    /// The match's place in its series ("22nd Match", "1st Test").
    #[serde(default)]
    pub description: Option<Field>,
    /// The page's one-line status.
    #[serde(default)]
    pub status: Option<Field>,
    /// The ground (or town) as the page prints it.
    #[serde(default)]
    pub venue: Option<Field>,
    /// A format word ("Test", "ODI", "T20I"), read by [`Format::parse`](crate::cricket::Format::parse).
    #[serde(default)]
    pub format: Option<Field>,
    /// Scheduled start time.
    #[serde(default)]
    pub start_time: Option<TimeField>,
    /// The match's page. Required: cards without an http(s) link are skipped.
    pub link: Field,
}

/// Where one text value lives in a card, and how to cut it out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// CSS selector relative to the card (its first matching descendant); absent = the card.
    #[serde(default)]
    pub selector: Option<String>,
    /// Attribute to read; absent = the element's text content.
    #[serde(default)]
    pub attr: Option<String>,
    /// Cuts applied in order to the cleaned text.
    #[serde(default)]
    pub extract: Vec<Step>,
}

/// One literal-string cut. A cut whose string does not occur makes the field absent, so a card
/// of an unexpected shape is skipped rather than read wrongly.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Keep the text after the first occurrence.
    After(String),
    /// Keep the text after the last occurrence.
    AfterLast(String),
    /// Keep the text before the first occurrence.
    Before(String),
    /// Keep the text before the last occurrence.
    BeforeLast(String),
}

/// A [`Field`] holding a date-time, with the chrono format to read it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeField {
    /// CSS selector relative to the card; absent = the card.
    #[serde(default)]
    pub selector: Option<String>,
    /// Attribute to read; absent = the element's text content.
    #[serde(default)]
    pub attr: Option<String>,
    /// Cuts applied in order to the cleaned text.
    #[serde(default)]
    pub extract: Vec<Step>,
    /// chrono `strftime` format, e.g. "%Y-%m-%dT%H:%M%z"; without an offset, UTC is assumed.
    pub time_format: String,
}

/// How a card's [`MatchState`] is read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateRule {
    /// CSS selector of the state element, relative to the card; absent = the card.
    #[serde(default)]
    pub selector: Option<String>,
    /// Attribute holding the state text; absent = the element's text content.
    #[serde(default)]
    pub attr: Option<String>,
    /// Cuts applied in order to the cleaned state text.
    #[serde(default)]
    pub extract: Vec<Step>,
    /// Class names of the state element mapped to states (checked first).
    #[serde(default)]
    pub from_class: BTreeMap<String, MatchState>,
    /// Page words mapped to states, matched case-insensitively against the state text.
    #[serde(default)]
    pub from_text: BTreeMap<String, MatchState>,
    /// The state when nothing matches.
    #[serde(default = "other_state")]
    pub default: MatchState,
}

impl Default for StateRule {
    fn default() -> Self {
        StateRule {
            selector: None,
            attr: None,
            extract: Vec::new(),
            from_class: BTreeMap::new(),
            from_text: BTreeMap::new(),
            default: MatchState::Other,
        }
    }
}

fn other_state() -> MatchState {
    MatchState::Other
}

/// Why a profile could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The text is not TOML, or does not fit the schema (missing `card`, unknown key, bad state
    /// word, bad URL…); the message names the key. Never the text itself: a profile path
    /// that names another file (a `.env`, a key file) must not have its lines printed.
    #[error("profile is not valid: {message}{}", place(.at))]
    Toml {
        /// The TOML reader's reason, without the quoted line it points at.
        message: String,
        /// Where (line, column; from 1), when the reader says.
        at: Option<(usize, usize)>,
    },
    /// A CSS selector does not compile.
    #[error("profile field `{field}`: selector `{selector}` is invalid: {reason}")]
    BadSelector {
        /// The field holding it ("card", "fields.team1", "state").
        field: String,
        /// The selector as written.
        selector: String,
        /// The CSS parser's complaint.
        reason: String,
    },
    /// The profile is well-formed TOML but inconsistent (both or neither team layouts, an empty
    /// cut string, a non-http base URL, a bad time format…).
    #[error("profile is not valid: {what}")]
    Invalid {
        /// What is wrong, naming the field.
        what: String,
    },
}

/// `error` reading `text`, said by its message and place only (see [`ProfileError::Toml`]).
pub(super) fn toml_error(text: &str, error: &toml::de::Error) -> ProfileError {
    let at = error.span().map(|span| {
        let before = text.get(..span.start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    });
    ProfileError::Toml {
        message: error.message().trim().to_string(),
        at,
    }
}

fn place(at: &Option<(usize, usize)>) -> String {
    at.map(|(line, column)| format!(" (line {line}, column {column})"))
        .unwrap_or_default()
}

fn invalid(what: impl Into<String>) -> ProfileError {
    ProfileError::Invalid { what: what.into() }
}

/// The checks of a profile that come before its selectors are compiled: a name, an http(s)
/// `base_url`.
pub(super) fn check_identity(profile: &Profile) -> Result<(), ProfileError> {
    if profile.name.trim().is_empty() {
        return Err(invalid("`name` is empty"));
    }
    if !matches!(profile.base_url.scheme(), "http" | "https") {
        return Err(invalid(format!("`base_url` {} is not http(s)", profile.base_url)));
    }
    Ok(())
}

/// The checks of a profile's fields (after its selectors compiled): the teams described one
/// way, cut strings non-empty, `time_format` a chrono format, `default_format` not empty.
pub(super) fn check_fields(profile: &Profile) -> Result<(), ProfileError> {
    let f = &profile.fields;
    match (&f.team1, &f.team2, &f.title) {
        (Some(_), Some(_), None) => {
            if f.teams_separator.is_some() {
                return Err(invalid("`fields.teams_separator` is only used with `fields.title`"));
            }
        }
        (None, None, Some(_)) => {
            if f.teams_separator.as_deref().is_none_or(str::is_empty) {
                return Err(invalid("`fields.title` needs a non-empty `fields.teams_separator`"));
            }
        }
        _ => {
            return Err(invalid(
                "teams must be given as `fields.team1` + `fields.team2`, or as `fields.title` + \
                 `fields.teams_separator` (not both, not neither)",
            ))
        }
    }
    for (name, steps) in steps_of(profile) {
        if steps.iter().any(|s| step_needle(s).is_empty()) {
            return Err(invalid(format!("`{name}.extract` has an empty cut string")));
        }
    }
    if let Some(t) = &f.start_time {
        let bad = t.time_format.trim().is_empty() || StrftimeItems::new(&t.time_format).any(|i| i == Item::Error);
        if bad {
            return Err(invalid(format!(
                "`fields.start_time.time_format` \"{}\" is not a chrono format",
                t.time_format
            )));
        }
    }
    if let Some(word) = &profile.default_format {
        if word.trim().is_empty() {
            return Err(invalid("`default_format` is empty"));
        }
    }
    Ok(())
}

/// Every optional [`Field`] of a profile with its dotted name, for validation and compilation.
pub(super) fn named_fields(f: &Fields) -> Vec<(&'static str, &Field)> {
    let optional = [
        ("fields.team1", &f.team1),
        ("fields.team2", &f.team2),
        ("fields.title", &f.title),
        ("fields.team1_short", &f.team1_short),
        ("fields.team2_short", &f.team2_short),
        ("fields.series", &f.series),
        ("fields.description", &f.description),
        ("fields.status", &f.status),
        ("fields.venue", &f.venue),
        ("fields.format", &f.format),
    ];
    let mut out = vec![("fields.id", &f.id), ("fields.link", &f.link)];
    out.extend(
        optional
            .into_iter()
            .filter_map(|(n, o)| o.as_ref().map(|field| (n, field))),
    );
    out
}

fn steps_of(profile: &Profile) -> Vec<(&'static str, &[Step])> {
    let mut out: Vec<(&'static str, &[Step])> = named_fields(&profile.fields)
        .into_iter()
        .map(|(n, f)| (n, f.extract.as_slice()))
        .collect();
    if let Some(t) = &profile.fields.start_time {
        out.push(("fields.start_time", &t.extract));
    }
    out.push(("state", &profile.state.extract));
    out
}

fn step_needle(step: &Step) -> &str {
    match step {
        Step::After(s) | Step::AfterLast(s) | Step::Before(s) | Step::BeforeLast(s) => s,
    }
}
