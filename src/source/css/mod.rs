//! Operator-described pages: a TOML [`Profile`] of CSS selectors turns any listing page into
//! [`Match`]es, without code.
//!
//! A profile names one element per match (the *card*) and, for each match field, where inside
//! the card its text lives and how to cut the wanted part out of that text. [`load_profile`]
//! reads and checks a profile (every selector is compiled up front, so a typo or a selector the
//! matcher cannot do fails at start-up, not on the first fetch); [`CompiledProfile`] keeps the
//! compiled selectors beside it and applies it to pages; [`parse`] does both in one call. All are
//! pure: no I/O.
//!
//! # Schema
//!
//! ```toml
//! name = "cricbuzz-2018"                  # used in logs and error messages
//! site = "cricbuzz"                       # cricbuzz | espncricinfo | cricketdata | web
//! base_url = "https://www.cricbuzz.com"   # relative links are resolved against it
//! card = "nav.cb-mat-mnu > a.cb-mat-mnu-itm"   # one element per match
//! default_format = "T20"                  # optional; see "Format" below
//!
//! [fields]
//! # Every field is { selector?, attr?, extract? }:
//! #   selector  CSS (see "Selectors" below) picking a descendant of the card; absent = the card
//! #   attr      attribute to read; absent = the element's text content
//! #   extract   literal-string cuts applied in order to the cleaned text:
//! #             { after = "s" }       the part after the first "s"
//! #             { after_last = "s" }  the part after the last "s"
//! #             { before = "s" }      the part before the first "s"
//! #             { before_last = "s" } the part before the last "s"
//! #             a cut whose string is absent makes the field absent.
//! id = { attr = "href", extract = [{ after = "/live-cricket-scores/" }, { before = "/" }] }
//! # Teams: either team1 + team2, or title + teams_separator (split at the first separator).
//! title = { attr = "title", extract = [{ before = "," }] }
//! teams_separator = " v "
//! team1_short = { extract = [{ before = " vs " }] }        # optional abbreviations
//! team2_short = { extract = [{ after = " vs " }, { before_last = " - " }] }
//! series = { selector = ".series" }                       # optional
//! description = { attr = "title", extract = [{ after = "," }, { before_last = " - " }] }
//! status = { attr = "title", extract = [{ after_last = " - " }] }
//! venue = { selector = ".venue" }                         # optional, the ground as printed
//! format = { selector = ".format" }                       # optional, read by Format::parse
//! start_time = { selector = "time", attr = "datetime", time_format = "%Y-%m-%dT%H:%M%z" }
//! link = { attr = "href" }                                # required
//!
//! [state]                       # optional; without it every match is `default`
//! attr = "title"                # same selector / attr / extract keys as a field
//! extract = [{ after_last = " - " }]
//! default = "other"             # upcoming | live | complete | abandoned | other
//! from_class = { "cscore--live" = "live" }   # a class of the state element -> state
//! [state.from_text]             # words of the state text -> state
//! preview = "upcoming"
//! stumps = "live"
//! won = "complete"
//! "no result" = "abandoned"
//! ```
//!
//! Unknown keys are errors, so a misspelt key (`selecter`) is reported instead of ignored.
//!
//! # What `parse` does with a card
//!
//! - Text (text content or attribute) is cleaned before the cuts: HTML entities decoded (again,
//!   since pages double-encode), control and invisible formatting characters removed,
//!   whitespace collapsed to single spaces, trimmed. Write cut strings single-spaced.
//! - A card is skipped when it lacks an id, either team name, or a link that resolves (against
//!   `base_url`) to an http(s) URL, or when its id or a team name holds template text
//!   (`{{`, `}}`, `{%`, `%}`, or a word starting `ng-`): an unrendered AngularJS page must not
//!   become a tweet about "{{match.team1}}". Optional fields holding template text are dropped.
//! - Matches are deduplicated by id, keeping the first card.
//! - State: a class of the state element found in `from_class` (when several are, the
//!   alphabetically first key wins), else the `from_text` entry matching the state text (exact,
//!   case-insensitive, else the longest key whose words appear as consecutive words of the
//!   text), else `default`; then the status line settles it like every source's
//!   ([`MatchState::with_status`]: "No result" is abandoned, "won by" complete).
//! - Format: the word is the `format` field when it yields text; else the description's format
//!   word ("Test", "ODI", "T20I"/"IT20", "T20"); else `default_format`; the word then goes
//!   through the project's one table ([`Format::classify`]: an A team's "Test" is first-class,
//!   a "T20" is a T20I when the description or series says so); no word at all is
//!   `Format::Other("")` (unknown, printed as nothing).
//! - `start_time` is parsed with its chrono `time_format`; a format without an offset is read
//!   as UTC; text that does not parse leaves the time unset rather than dropping the match.
//!
//! # Selectors
//!
//! Pages are read in one streaming pass by Cloudflare's `lol_html` (no document tree is built),
//! so selectors are limited to what it can match while reading forward:
//!
//! - type (`li`), universal (`*`), `#id`, `.class`, attributes (`[data-id]`, `[a=v]`, `[a~=v]`,
//!   `[a|=v]`, `[a^=v]`, `[a$=v]`, `[a*=v]`), `:nth-child(an+b)`, `:first-child`,
//!   `:nth-of-type(an+b)`, `:first-of-type`, `:not(…)` of those;
//! - the descendant (`a b`) and child (`a > b`) combinators, and lists (`a, b`).
//!
//! Not supported, and refused at load with [`ProfileError::BadSelector`]: sibling combinators
//! (`+`, `~`), `:last-child`, `:only-child` and the other "look-ahead" pseudo-classes, `:has()`,
//! `:is()`, `:where()`, `:scope`, `:root`, pseudo-elements and namespaces.
//!
//! # How a card is read
//!
//! - A field's selector is matched against the whole page (its ancestors may be outside the
//!   card); the field reads the first matching element inside the card, in page order. The card
//!   itself never counts as its own field element.
//! - Text content is all text inside the element, nested elements included (script text too,
//!   comments not), concatenated. Attribute values and text are decoded as an HTML parser
//!   decodes them (one level of entities, by the HTML rules for text and for attributes) before
//!   the cleaning above.
//! - Nested cards: an element matching `card` inside another card is a card of its own, and
//!   what lies inside it is only its own: the enclosing card takes no field, element or text
//!   from it (fields after it are read as usual). So a card missing a field never borrows one
//!   from a card nested in it.
//! - A void card (`<img>`, `<input>`…) has attributes only: fields with a selector or reading
//!   text are absent.
//! - Sloppy HTML is read as written, without the repairs a browser's tree builder makes, except
//!   that an unclosed card ends where the next card starts (so unclosed `<li>`/`<tr>` cards read
//!   as a browser reads them). Two consequences: an unclosed field element (`<p>`, `<li>`, `<td>`
//!   without its end tag) runs on to its parent's end tag, so its text includes what follows it;
//!   and `>` sees the nesting as written (after an unclosed `<li>`, the next `<li>` is its child,
//!   so `ul > li` misses it where `li` alone does not).
//! - At most 1,024 cards may be open at once, nested or unclosed: a page with more is not
//!   recognised (see [`parse`]), which keeps one pass linear in the page whatever it holds.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

use chrono::format::{Item, StrftimeItems};
use chrono::{DateTime, NaiveDateTime, Utc};
use lol_html::html_content::{Element, EndTag, TextChunk, TextType};
use lol_html::{ElementContentHandlers, HtmlRewriter, Selector, Settings};
use serde::Deserialize;
use url::Url;

use crate::cricket::{Format, FormatClues, Level, Match, MatchState, Site, Team, Venue};
use crate::source::ParseError;

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
    /// A format word ("Test", "ODI", "T20I"), read by [`Format::parse`].
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
    /// word, bad URL…); the message names the key.
    #[error("profile is not valid: {0}")]
    Toml(#[from] toml::de::Error),
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

/// Reads a profile from TOML and checks it: every selector compiles, the teams are described one
/// way, cut strings are non-empty, `base_url` is http(s), and `time_format` is a valid chrono
/// format.
///
/// # Errors
///
/// [`ProfileError::Toml`] when the text is not TOML or misses/misnames a key,
/// [`ProfileError::BadSelector`] naming the field and selector that do not compile,
/// [`ProfileError::Invalid`] for the other checks above.
pub fn load_profile(toml_text: &str) -> Result<Profile, ProfileError> {
    let profile: Profile = toml::from_str(toml_text)?;
    validate(&profile)?;
    Ok(profile)
}

fn invalid(what: impl Into<String>) -> ProfileError {
    ProfileError::Invalid { what: what.into() }
}

/// Checks `profile` and returns its compiled selectors.
fn validate(profile: &Profile) -> Result<Plan, ProfileError> {
    if profile.name.trim().is_empty() {
        return Err(invalid("`name` is empty"));
    }
    if !matches!(profile.base_url.scheme(), "http" | "https") {
        return Err(invalid(format!("`base_url` {} is not http(s)", profile.base_url)));
    }
    let plan = compile(profile).map_err(|e| ProfileError::BadSelector {
        field: e.field.to_string(),
        selector: e.selector,
        reason: e.reason,
    })?;
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
    Ok(plan)
}

/// Every optional [`Field`] of a profile with its dotted name, for validation and compilation.
fn named_fields(f: &Fields) -> Vec<(&'static str, &Field)> {
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

/// A selector that did not compile, and where it was.
struct SelectorFailure {
    field: &'static str,
    selector: String,
    reason: String,
}

/// A checked profile with its selectors compiled, ready for any number of pages: what
/// [`SourceKind::Css`](crate::source::SourceKind::Css) holds, so a page costs one streaming pass
/// and no selector parsing.
#[derive(Clone)]
pub struct CompiledProfile {
    profile: Profile,
    plan: Plan,
}

impl CompiledProfile {
    /// Checks `profile` as [`load_profile`] does and compiles its selectors.
    ///
    /// # Errors
    ///
    /// [`ProfileError::BadSelector`] or [`ProfileError::Invalid`], as [`load_profile`].
    pub fn new(profile: Profile) -> Result<CompiledProfile, ProfileError> {
        let plan = validate(&profile)?;
        Ok(CompiledProfile { profile, plan })
    }

    /// Reads a profile from TOML, checks it and compiles it (one pass over the selectors).
    ///
    /// # Errors
    ///
    /// As [`load_profile`].
    pub fn from_toml(toml_text: &str) -> Result<CompiledProfile, ProfileError> {
        CompiledProfile::new(toml::from_str(toml_text)?)
    }

    /// The profile as read.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Applies the profile to `page`: [`parse`] without compiling the selectors again.
    ///
    /// # Errors
    ///
    /// As [`parse`].
    pub fn parse(&self, page: &str) -> Result<Vec<Match>, ParseError> {
        extract(&self.profile, &self.plan, page)
    }
}

impl PartialEq for CompiledProfile {
    fn eq(&self, other: &Self) -> bool {
        // The plan is a function of the profile, and lol_html selectors have no equality.
        self.profile == other.profile
    }
}

impl Eq for CompiledProfile {}

impl fmt::Debug for CompiledProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A failed source's log line shows its kind through this: the profile's name says which
        // profile it is (its text is in its file); the whole profile and its compiled selectors
        // were a kilobyte and a half of noise after the error's own message.
        f.debug_tuple("CompiledProfile").field(&self.profile.name).finish()
    }
}

/// What a profile's selectors may use, appended to a refused selector's reason.
const SUPPORTED: &str = "(profiles support type, `*`, `#id`, `.class`, `[attr]` selectors, `:nth-child()`, \
                         `:first-child`, `:nth-of-type()`, `:first-of-type`, `:not()`, and the descendant \
                         and `>` combinators; see the README's source kinds)";

/// The most cards open at once (nested in one another, or unclosed and so stacked) before a
/// page is refused. lol_html scans every end-tag handler still waiting before the one an end tag
/// fires, and each open card holds one (plus one per field it is reading text from), so without
/// a bound a hostile page of nested or unclosed cards costs time quadratic in its size (an 8 MiB
/// page of 64,000 unclosed cards took seconds). Listings hold far fewer, closed or not.
const MAX_OPEN_CARDS: usize = 1024;

/// Index of one raw value among a card's values.
type Slot = usize;

/// The name under which the state element's `class` attribute is kept (for `from_class`).
const STATE_CLASS: &str = "state.class";

/// What is read from one element: attributes and/or its text content, each into a slot.
/// Fields reading the same thing share a slot, so it is read once.
#[derive(Debug, Clone, Default)]
struct Reads {
    /// (attribute name, slot).
    attrs: Vec<(String, Slot)>,
    /// Where the text content goes, when some field reads it.
    text: Option<Slot>,
}

impl Reads {
    fn is_empty(&self) -> bool {
        self.attrs.is_empty() && self.text.is_none()
    }

    /// The slot for `attr` (`None` = the text content), allocating one from `slots` if new.
    fn slot(&mut self, attr: Option<&str>, slots: &mut usize) -> Slot {
        let existing = match attr {
            Some(a) => self.attrs.iter().find(|(name, _)| name == a).map(|(_, s)| *s),
            None => self.text,
        };
        if let Some(slot) = existing {
            return slot;
        }
        let slot = *slots;
        *slots += 1;
        match attr {
            Some(a) => self.attrs.push((a.to_string(), slot)),
            None => self.text = Some(slot),
        }
        slot
    }

    /// Stores the attributes of `el` (an absent attribute stays `None`) and starts its text empty.
    fn start(&self, el: &Element<'_, '_>, values: &mut [Option<String>]) {
        for (name, slot) in &self.attrs {
            if let (Some(raw), Some(value)) = (el.get_attribute(name), values.get_mut(*slot)) {
                // lol_html hands attribute values over as written.
                *value = Some(decode_attr(&raw));
            }
        }
        if let Some(value) = self.text.and_then(|s| values.get_mut(s)) {
            *value = Some(String::new());
        }
    }
}

/// One field selector, shared by every field that names the same selector text.
#[derive(Debug, Clone)]
struct Target {
    /// The selector as written in the profile.
    source: String,
    selector: Selector,
    reads: Reads,
}

/// The profile's selectors compiled for lol_html, and where each field's raw value lands.
#[derive(Debug, Clone)]
struct Plan {
    card: Selector,
    /// Read from the card element itself (fields without a selector).
    card_reads: Reads,
    targets: Vec<Target>,
    /// Number of slots per card.
    slots: usize,
    /// Slot of each field read, by dotted name ("fields.team1", "state", [`STATE_CLASS`]).
    fields: HashMap<&'static str, Slot>,
}

fn compile_one(field: &'static str, selector: &str) -> Result<Selector, SelectorFailure> {
    // An empty selector would otherwise surface as a confusing CSS parser message.
    if selector.trim().is_empty() {
        return Err(SelectorFailure {
            field,
            selector: selector.to_string(),
            reason: "empty selector".to_string(),
        });
    }
    // lol_html refuses what its streaming matcher cannot do (sibling combinators,
    // `:last-child`, `:has()`…), so an unsupported selector fails here, not on a page. Its
    // message does not always say which part it refused, so the supported subset follows.
    selector.parse::<Selector>().map_err(|e| SelectorFailure {
        field,
        selector: selector.to_string(),
        reason: format!("{e} {SUPPORTED}"),
    })
}

fn compile(profile: &Profile) -> Result<Plan, SelectorFailure> {
    let mut plan = Plan {
        card: compile_one("card", &profile.card)?,
        card_reads: Reads::default(),
        targets: Vec::new(),
        slots: 0,
        fields: HashMap::new(),
    };
    // (name, selector, attribute, whether a value is read at all)
    let mut wanted: Vec<(&'static str, Option<&str>, Option<&str>, bool)> = named_fields(&profile.fields)
        .into_iter()
        .map(|(n, f)| (n, f.selector.as_deref(), f.attr.as_deref(), true))
        .collect();
    if let Some(t) = &profile.fields.start_time {
        wanted.push(("fields.start_time", t.selector.as_deref(), t.attr.as_deref(), true));
    }
    // The state selector is always checked, but its element's text is read only when words map
    // to states, and its class only when classes do.
    let state = &profile.state;
    let selector = state.selector.as_deref();
    wanted.push(("state", selector, state.attr.as_deref(), !state.from_text.is_empty()));
    wanted.push((STATE_CLASS, selector, Some("class"), !state.from_class.is_empty()));
    for (name, selector, attr, read) in wanted {
        let reads = match selector {
            None => &mut plan.card_reads,
            Some(source) => {
                let i = match plan.targets.iter().position(|t| t.source == source) {
                    Some(i) => i,
                    None => {
                        let selector = compile_one(name, source)?;
                        plan.targets.push(Target {
                            source: source.to_string(),
                            selector,
                            reads: Reads::default(),
                        });
                        plan.targets.len() - 1
                    }
                };
                let Some(target) = plan.targets.get_mut(i) else {
                    continue;
                };
                &mut target.reads
            }
        };
        if read {
            let slot = reads.slot(attr, &mut plan.slots);
            plan.fields.insert(name, slot);
        }
    }
    Ok(plan)
}

/// Applies `profile` to `page` and returns its matches, deduplicated by id, in page order.
///
/// This compiles the profile's selectors on every call; a bot reading pages repeatedly holds a
/// [`CompiledProfile`] instead.
///
/// # Errors
///
/// - [`ParseError::Empty`] when the page is empty or only whitespace;
/// - [`ParseError::LayoutNotRecognised`] when `card` matches nothing (the page is not the layout
///   the profile describes), when more than 1,024 cards are open at once (nested in one another
///   or left unclosed), or when a hand-built profile holds a selector that does not compile;
/// - [`ParseError::NoMatches`] when cards exist but none yields an id, two teams and an http(s)
///   link (e.g. an unrendered template page).
pub fn parse(profile: &Profile, page: &str) -> Result<Vec<Match>, ParseError> {
    if page.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let plan = compile(profile).map_err(|e| ParseError::LayoutNotRecognised {
        what: format!(
            "profile {}: field `{}` has an invalid selector `{}`: {}",
            profile.name, e.field, e.selector, e.reason
        ),
    })?;
    extract(profile, &plan, page)
}

fn extract(profile: &Profile, plan: &Plan, page: &str) -> Result<Vec<Match>, ParseError> {
    if page.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let cards = scan(plan, page).map_err(|e| ParseError::LayoutNotRecognised {
        what: format!("profile {}: the page could not be read: {e}", profile.name),
    })?;
    if cards.is_empty() {
        return Err(ParseError::LayoutNotRecognised {
            what: format!("profile {}: selector `{}` matched nothing", profile.name, profile.card),
        });
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (card, values) in cards.iter().enumerate() {
        match read_card(profile, plan, values) {
            Ok(m) => {
                if seen.insert(m.source_id.clone()) {
                    out.push(m);
                }
            }
            // Debug, not warn: pages often carry cards that are not matches (ads, headers);
            // an operator writing a profile turns this on to see why a card was passed over.
            Err(reason) => tracing::debug!(profile = %profile.name, card, reason, "card skipped"),
        }
    }
    if out.is_empty() {
        return Err(ParseError::NoMatches {
            what: format!(
                "profile {}: selector `{}` matched {} element(s), none with an id, two team names and an \
                 http(s) link",
                profile.name,
                profile.card,
                cards.len()
            ),
        });
    }
    Ok(out)
}

/// One card's raw values while the page streams past.
struct CardScan {
    /// Per slot: the attribute (one level of entities decoded) or the text content so far.
    values: Vec<Option<String>>,
    /// Per target: its first element in this card has been seen; later ones do not count.
    taken: Vec<bool>,
    /// Per target: that first element is still open, so text inside it is its text content.
    capturing: Vec<bool>,
}

/// What the handlers share while one page streams through lol_html.
#[derive(Default)]
struct Scan {
    /// Every card in page order (start tags).
    cards: Vec<CardScan>,
    /// Cards whose element is open, innermost last. Elements and text go to the innermost card
    /// only, so a nested card's content never fills its enclosing card's fields.
    open: Vec<usize>,
    /// Byte offset of the latest card's start tag: an element that is itself a card is no field
    /// of an enclosing card (nor of itself).
    last_card_start: Option<usize>,
    /// Raw text of the current text node, one buffer per text handler (targets by index, then
    /// the card's): entities are decoded per complete node, as an entity can straddle chunks.
    pending: Vec<String>,
}

impl Scan {
    /// Adds one text chunk to `slot` of the innermost open card when that card is reading text
    /// from `target`'s element (`None`: from the card itself).
    fn text(&mut self, buffer: usize, target: Option<usize>, slot: Slot, chunk: &TextChunk<'_>) {
        let Scan {
            cards, open, pending, ..
        } = self;
        let Some(card) = open.last().and_then(|&c| cards.get_mut(c)) else {
            return;
        };
        if let Some(t) = target {
            if card.capturing.get(t) != Some(&true) {
                return;
            }
        }
        let (Some(Some(value)), Some(pending)) = (card.values.get_mut(slot), pending.get_mut(buffer)) else {
            return;
        };
        let last = chunk.last_in_text_node();
        if pending.is_empty() && last {
            value.push_str(&decode_text(chunk.as_str(), chunk.text_type()));
            return;
        }
        pending.push_str(chunk.as_str());
        if last {
            value.push_str(&decode_text(pending, chunk.text_type()));
            pending.clear();
        }
    }
}

/// One text node as an HTML parser gives it: entities decoded in ordinary text and RCDATA
/// (`<title>`, `<textarea>`), script, style and other raw text taken as written; U+0000 dropped
/// from ordinary text (the tree builder ignores it) and replaced by U+FFFD elsewhere.
fn decode_text(raw: &str, kind: TextType) -> Cow<'_, str> {
    match kind {
        TextType::Data => htmlize::unescape(replace_nul(raw, "")),
        TextType::RCData => htmlize::unescape(replace_nul(raw, "\u{FFFD}")),
        _ => replace_nul(raw, "\u{FFFD}"),
    }
}

/// One attribute value as an HTML parser gives it: U+0000 replaced, entities decoded with the
/// attribute rules (`&amp` without `;` before a letter or `=` stays as written).
fn decode_attr(raw: &str) -> String {
    htmlize::unescape_attribute(replace_nul(raw, "\u{FFFD}")).into_owned()
}

/// `raw` with every U+0000 replaced by `with`; lol_html passes it through as written.
fn replace_nul<'a>(raw: &'a str, with: &str) -> Cow<'a, str> {
    if raw.contains('\0') {
        Cow::Owned(raw.replace('\0', with))
    } else {
        Cow::Borrowed(raw)
    }
}

type ScanError = Box<dyn std::error::Error + Send + Sync>;

/// Streams `page` through lol_html with the plan's selectors and returns each card's slot
/// values, cards in page order. No tree is built: handlers fire on the card and target start
/// tags, on text inside elements whose text a field reads, and on those elements' end tags.
fn scan(plan: &Plan, page: &str) -> Result<Vec<Vec<Option<String>>>, ScanError> {
    let n = plan.targets.len();
    let shared = Rc::new(RefCell::new(Scan {
        pending: vec![String::new(); n + 1],
        ..Scan::default()
    }));
    let state = &shared;
    let mut handlers = Vec::with_capacity(n + 1);

    // The card handler goes first: lol_html runs an element's handlers in this order, and the
    // target handlers must know whether the element is itself a card.
    let mut card = ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
        let mut s = state.try_borrow_mut()?;
        if s.open.len() >= MAX_OPEN_CARDS {
            return Err(format!("more than {MAX_OPEN_CARDS} cards open at once (nested or unclosed)").into());
        }
        let mut values = vec![None; plan.slots];
        plan.card_reads.start(el, &mut values);
        let idx = s.cards.len();
        s.cards.push(CardScan {
            values,
            taken: vec![false; n],
            capturing: vec![false; n],
        });
        s.last_card_start = Some(el.source_location().bytes().start);
        // A void element (`<img>`) has no end tag and no content: it is a card of attributes.
        if let Some(end) = el.end_tag_handlers() {
            s.open.push(idx);
            let state = Rc::clone(state);
            end.push(Box::new(move |_: &mut EndTag<'_>| {
                let mut s = state.try_borrow_mut()?;
                if let Some(at) = s.open.iter().rposition(|&c| c == idx) {
                    s.open.remove(at);
                }
                Ok(())
            }));
        }
        Ok(())
    });
    if let Some(slot) = plan.card_reads.text {
        card = card.text(move |chunk: &mut TextChunk<'_>| {
            state.try_borrow_mut()?.text(n, None, slot, chunk);
            Ok(())
        });
    }
    handlers.push((Cow::Borrowed(&plan.card), card));

    for (t, target) in plan.targets.iter().enumerate() {
        if target.reads.is_empty() {
            continue;
        }
        let mut h = ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
            let mut s = state.try_borrow_mut()?;
            if s.last_card_start == Some(el.source_location().bytes().start) {
                return Ok(());
            }
            let Some(c) = s.open.last().copied() else {
                return Ok(());
            };
            let Some(card) = s.cards.get_mut(c) else {
                return Ok(());
            };
            match card.taken.get_mut(t) {
                Some(taken) if !*taken => *taken = true,
                _ => return Ok(()),
            }
            target.reads.start(el, &mut card.values);
            if target.reads.text.is_none() {
                return Ok(());
            }
            if let (Some(end), Some(capturing)) = (el.end_tag_handlers(), card.capturing.get_mut(t)) {
                *capturing = true;
                let state = Rc::clone(state);
                end.push(Box::new(move |_: &mut EndTag<'_>| {
                    let mut s = state.try_borrow_mut()?;
                    if let Some(capturing) = s.cards.get_mut(c).and_then(|card| card.capturing.get_mut(t)) {
                        *capturing = false;
                    }
                    Ok(())
                }));
            }
            Ok(())
        });
        if let Some(slot) = target.reads.text {
            h = h.text(move |chunk: &mut TextChunk<'_>| {
                state.try_borrow_mut()?.text(t, Some(t), slot, chunk);
                Ok(())
            });
        }
        handlers.push((Cow::Borrowed(&target.selector), h));
    }

    let settings = Settings {
        element_content_handlers: handlers,
        // Strict mode stops at markup lol_html cannot place without a tree (rare `<select>`
        // and foreign-content cases); a best guess beats refusing a scraped page.
        strict: false,
        ..Settings::new()
    };
    // The rewritten page is not wanted: lol_html is used as a parser only.
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(page.as_bytes())?;
    rewriter.end()?;
    let cards = std::mem::take(&mut shared.try_borrow_mut()?.cards);
    Ok(cards.into_iter().map(|card| card.values).collect())
}

/// The most characters of a page's value quoted in a debug line.
const MAX_LOGGED_VALUE_CHARS: usize = 80;

/// One card to one match, or why the card is not one (what it lacks).
fn read_card(profile: &Profile, plan: &Plan, values: &[Option<String>]) -> Result<Match, &'static str> {
    let f = &profile.fields;
    let raw = |name: &str| {
        plan.fields
            .get(name)
            .and_then(|&slot| values.get(slot))
            .and_then(Option::as_deref)
    };
    let text = |name: &str, field: &Field| read(raw(name), &field.extract);
    let optional = |name: &str, field: &Option<Field>| {
        field
            .as_ref()
            .and_then(|field| text(name, field))
            .filter(|t| !is_template(t))
    };

    let id = text("fields.id", &f.id)
        .filter(|t| !is_template(t))
        .ok_or("no id (fields.id empty, missing or a template placeholder)")?;
    let (name1, name2) = match (&f.team1, &f.team2, &f.title, &f.teams_separator) {
        (Some(t1), Some(t2), _, _) => (
            text("fields.team1", t1).ok_or("no fields.team1")?,
            text("fields.team2", t2).ok_or("no fields.team2")?,
        ),
        (_, _, Some(title), Some(sep)) => {
            let title = text("fields.title", title).ok_or("no fields.title")?;
            let (a, b) = title
                .split_once(sep.as_str())
                .ok_or("fields.title lacks fields.teams_separator")?;
            (a.trim().to_string(), b.trim().to_string())
        }
        _ => return Err("the profile names neither team1 and team2 nor title and teams_separator"),
    };
    if name1.is_empty() || name2.is_empty() || is_template(&name1) || is_template(&name2) {
        return Err("a team name is empty or a template placeholder");
    }
    let href = text("fields.link", &f.link).ok_or("no fields.link")?;
    let url = profile.base_url.join(&href).map_err(|_| "fields.link is not a URL")?;
    if !matches!(url.scheme(), "http" | "https") || is_template(url.as_str()) {
        return Err("fields.link is not an http(s) link");
    }
    if !same_site(&url, &profile.base_url) {
        return Err("fields.link leads to another site than base_url");
    }

    let description = optional("fields.description", &f.description);
    let series = optional("fields.series", &f.series);
    // The word: the format field, else the description's own format word, else the profile's
    // default; then the project's one table (A teams, youth sides) like every other source.
    let word = optional("fields.format", &f.format)
        .or_else(|| {
            description
                .as_deref()
                .and_then(infer_format)
                .map(|f| f.label().to_string())
        })
        .or_else(|| profile.default_format.clone());
    let format = Format::classify(&FormatClues {
        word: word.as_deref(),
        level: Level::Unknown,
        description: description.as_deref(),
        series: series.as_deref(),
        teams: [&name1, &name2],
    });
    let status = optional("fields.status", &f.status);
    let start_time = f.start_time.as_ref().and_then(|t| {
        let raw = read(raw("fields.start_time"), &t.extract)?;
        let time = parse_time(&raw, &t.time_format);
        if time.is_none() {
            // The match is still announced, without a start time: say why it has none.
            // The value is the page's text: quoted (escaped) and cut, never written raw.
            let value: String = raw.chars().take(MAX_LOGGED_VALUE_CHARS).collect();
            tracing::debug!(profile = %profile.name, value = ?value, time_format = %t.time_format, "fields.start_time does not match its time_format; left unset");
        }
        time
    });

    Ok(Match {
        site: profile.site,
        source_id: id,
        teams: [
            Team {
                name: name1,
                short_name: optional("fields.team1_short", &f.team1_short),
            },
            Team {
                name: name2,
                short_name: optional("fields.team2_short", &f.team2_short),
            },
        ],
        series,
        description,
        format,
        venue: optional("fields.venue", &f.venue).map(|ground| Venue { ground, city: None }),
        start_time,
        state: read_state(&profile.state, raw(STATE_CLASS), raw("state")).with_status(status.as_deref()),
        status,
        url,
    })
}

/// Cleans and cuts one raw value; `None` when the element or attribute was missing, a cut
/// string is absent, or the result is empty.
fn read(raw: Option<&str>, steps: &[Step]) -> Option<String> {
    let cleaned = clean(raw?);
    let cut = apply_steps(&cleaned, steps)?.trim().to_string();
    (!cut.is_empty()).then_some(cut)
}

fn apply_steps<'a>(text: &'a str, steps: &[Step]) -> Option<&'a str> {
    steps.iter().try_fold(text, |t, step| match step {
        Step::After(s) => t.split_once(s.as_str()).map(|(_, rest)| rest),
        Step::AfterLast(s) => t.rsplit_once(s.as_str()).map(|(_, rest)| rest),
        Step::Before(s) => t.split_once(s.as_str()).map(|(head, _)| head),
        Step::BeforeLast(s) => t.rsplit_once(s.as_str()).map(|(head, _)| head),
    })
}

/// Decodes entities, drops control and invisible characters, collapses whitespace, trims.
fn clean(raw: &str) -> String {
    // The scan already decoded one level of entities, as an HTML parser does; pages that
    // double-encode ("&amp;amp;") still show entities, so `plain` decodes once more.
    crate::text::plain(raw).unwrap_or_default()
}

/// True when `url` is on `base`'s host or one of its subdomains (`m.cricbuzz.com` for
/// `www.cricbuzz.com` counts: both are under `cricbuzz.com`). A scraped page must not be able to
/// point the posted link at another site.
fn same_site(url: &Url, base: &Url) -> bool {
    let (Some(host), Some(base_host)) = (url.host_str(), base.host_str()) else {
        return false;
    };
    let site = base_host.strip_prefix("www.").unwrap_or(base_host);
    host == base_host || host == site || host.ends_with(&format!(".{site}"))
}

/// True for text left by an unrendered client-side template: `{{ }}`/`{% %}` markers, or an
/// AngularJS directive (a word starting `ng-`; "Hong-Kong" does not count).
fn is_template(text: &str) -> bool {
    if ["{{", "}}", "{%", "%}"].iter().any(|m| text.contains(m)) {
        return true;
    }
    text.match_indices("ng-").any(|(i, _)| {
        text.get(..i)
            .and_then(|head| head.chars().next_back())
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The format named by a description's words: "1st Test" → Test, "3rd ODI" → ODI, "2nd T20I" →
/// T20I, "Match 12 (T20)" → T20. Only unambiguous format words count; "22nd Match" says nothing.
fn infer_format(description: &str) -> Option<Format> {
    words(description).iter().find_map(|w| match w.as_str() {
        "test" => Some(Format::Test),
        "odi" => Some(Format::Odi),
        "t20i" | "it20" => Some(Format::T20i),
        "t20" => Some(Format::T20),
        _ => None,
    })
}

/// The state from the state element's `class` attribute (`classes`) and text (`text`), both
/// raw as read.
fn read_state(rule: &StateRule, classes: Option<&str>, text: Option<&str>) -> MatchState {
    if let Some(classes) = classes {
        // Several mapped classes: the alphabetically first wins (the map is sorted), so the
        // order of classes on the page does not matter.
        let found = rule
            .from_class
            .iter()
            .find(|(class, _)| classes.split_ascii_whitespace().any(|c| c == class.as_str()));
        if let Some((_, state)) = found {
            return *state;
        }
    }
    if rule.from_text.is_empty() {
        return rule.default;
    }
    let Some(text) = read(text, &rule.extract) else {
        return rule.default;
    };
    state_from_text(&text, &rule.from_text).unwrap_or(rule.default)
}

/// Exact (case-insensitive) key first; else the longest key whose words occur consecutively in
/// the text, so "no result" beats "result" and "GLAM Won" finds "won".
fn state_from_text(text: &str, table: &BTreeMap<String, MatchState>) -> Option<MatchState> {
    let lower = text.to_lowercase();
    if let Some((_, s)) = table.iter().find(|(k, _)| k.trim().to_lowercase() == lower) {
        return Some(*s);
    }
    let text_words = words(text);
    table
        .iter()
        .filter_map(|(k, s)| {
            let key_words = words(k);
            let found = !key_words.is_empty() && text_words.windows(key_words.len()).any(|w| w == key_words.as_slice());
            found.then_some((key_words.len(), *s))
        })
        // max_by_key keeps the last maximum; iterate reversed so ties go to the first key.
        .rev()
        .max_by_key(|(len, _)| *len)
        .map(|(_, s)| s)
}

fn parse_time(raw: &str, time_format: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_str(raw, time_format) {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(raw, time_format)
        .ok()
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_to_another_site_is_never_taken_from_a_profile_page() {
        let base = Url::parse("https://www.cricbuzz.com").unwrap();
        let ok = |u: &str| same_site(&Url::parse(u).unwrap(), &base);
        assert!(ok("https://www.cricbuzz.com/live-cricket-scores/1/x"));
        assert!(ok("https://m.cricbuzz.com/live-cricket-scores/1/x"));
        assert!(!ok("https://evil.com/live-cricket-scores/20082/x"));
        assert!(!ok("https://cricbuzz.com.evil.com/x"));
        assert!(!ok("https://notcricbuzz.com/x"));
    }

    const CRICBUZZ_PROFILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/cricbuzz-2018.toml"));
    const ESPN_PROFILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/espncricinfo-2020.toml"));
    const CRICBUZZ_2018: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/cricbuzz/old-layout_match-page_20082_2018-04-23.html"
    ));
    const CRICBUZZ_2018_TEMPLATE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/cricbuzz/old-layout_match-page_20082_2018-04-23_unrendered-template.html"
    ));
    const ESPN_2020: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/espncricinfo/old-layout_match-page_1213062_2020-02-07.html"
    ));

    fn cricbuzz() -> Profile {
        load_profile(CRICBUZZ_PROFILE).unwrap()
    }

    fn espn() -> Profile {
        load_profile(ESPN_PROFILE).unwrap()
    }

    /// (id, team1, team1 short, team2, team2 short, description, status, state, url)
    type Expected = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        MatchState,
        &'static str,
    );

    fn assert_cricbuzz(matches: &[Match], expected: &[Expected]) {
        assert_eq!(matches.len(), expected.len(), "{matches:#?}");
        for (m, e) in matches.iter().zip(expected) {
            let (id, t1, s1, t2, s2, desc, status, state, url) = *e;
            assert_eq!(m.site, Site::Cricbuzz);
            assert_eq!(m.source_id, id);
            assert_eq!(m.teams[0].name, t1, "{id}");
            // "" stands for none: the dropdown's cards carry no abbreviation.
            assert_eq!(
                m.teams[0].short_name.as_deref(),
                Some(s1).filter(|s| !s.is_empty()),
                "{id}"
            );
            assert_eq!(m.teams[1].name, t2, "{id}");
            assert_eq!(
                m.teams[1].short_name.as_deref(),
                Some(s2).filter(|s| !s.is_empty()),
                "{id}"
            );
            assert_eq!(m.description.as_deref(), Some(desc), "{id}");
            assert_eq!(m.status.as_deref(), Some(status), "{id}");
            assert_eq!(m.state, state, "{id}");
            assert_eq!(m.url.as_str(), url, "{id}");
            assert_eq!(m.series, None, "{id}");
            assert_eq!(m.venue, None, "{id}");
            assert_eq!(m.start_time, None, "{id}");
            // No description in the ticker names a format ("22nd Match", "County Div 2").
            assert_eq!(m.format, Format::Other(String::new()), "{id}");
        }
    }

    // Read off the five ticker <a> elements of the fixture (title, href and text attributes).
    const CRICBUZZ_TAIL: [Expected; 4] = [
        (
            "20083",
            "Mumbai Indians",
            "MI",
            "Sunrisers Hyderabad",
            "SRH",
            "23rd Match",
            "Preview",
            MatchState::Upcoming,
            "https://www.cricbuzz.com/live-cricket-scores/20083/mi-vs-srh-23rd-match-indian-premier-league-2018",
        ),
        (
            "20155",
            "Dambulla",
            "DAMBULLA",
            "Colombo",
            "COLOMBO",
            "5th Match",
            "Stumps",
            MatchState::Live,
            "https://www.cricbuzz.com/live-cricket-scores/20155/dambulla-vs-colombo-5th-match-super-four-provincial-tournament-2018",
        ),
        (
            "20156",
            "Galle",
            "GALLE",
            "Kandy",
            "KANDY",
            "6th Match",
            "Stumps",
            MatchState::Live,
            "https://www.cricbuzz.com/live-cricket-scores/20156/galle-vs-kandy-6th-match-super-four-provincial-tournament-2018",
        ),
        (
            "19465",
            "Gloucestershire",
            "GLOUCS",
            "Glamorgan",
            "GLAM",
            "County Div 2",
            "GLAM Won",
            MatchState::Complete,
            "https://www.cricbuzz.com/live-cricket-scores/19465/gloucs-vs-glam-county-div-2-county-championship-division-two-2018",
        ),
    ];

    /// The dropdown's matches that the ticker does not list, in page order: read off its
    /// `li.cb-lst-mtch div.cb-mtch-all > a` elements (title and href), with no abbreviations.
    const CRICBUZZ_DROPDOWN: [Expected; 7] = {
        use MatchState::Complete;
        const fn row(
            id: &'static str,
            t1: &'static str,
            t2: &'static str,
            desc: &'static str,
            status: &'static str,
            url: &'static str,
        ) -> Expected {
            (id, t1, "", t2, "", desc, status, Complete, url)
        }
        [
            row("19464", "Derbyshire", "Middlesex", "County Div 2", "DERBY Won", "https://www.cricbuzz.com/live-cricket-scores/19464/derby-vs-mdx-county-div-2-county-championship-division-two-2018"),
            row("19466", "Leicestershire", "Sussex", "County Div 2", "Match drawn", "https://www.cricbuzz.com/live-cricket-scores/19466/leic-vs-sus-county-div-2-county-championship-division-two-2018"),
            row("19463", "Northamptonshire", "Warwickshire", "County Div 2", "WARKS Won", "https://www.cricbuzz.com/live-cricket-scores/19463/nor-vs-warks-county-div-2-county-championship-division-two-2018"),
            row("19409", "Surrey", "Hampshire", "County Div 1", "SUR Won", "https://www.cricbuzz.com/live-cricket-scores/19409/sur-vs-ham-county-div-1-county-championship-division-one-2018"),
            row("19410", "Yorkshire", "Nottinghamshire", "County Div 1", "YORKS Won", "https://www.cricbuzz.com/live-cricket-scores/19410/yorks-vs-notts-county-div-1-county-championship-division-one-2018"),
            row("19407", "Essex", "Lancashire", "County Div 1", "ESS Won", "https://www.cricbuzz.com/live-cricket-scores/19407/ess-vs-lancs-county-div-1-county-championship-division-one-2018"),
            row("19408", "Somerset", "Worcestershire", "County Div 1", "SOM Won", "https://www.cricbuzz.com/live-cricket-scores/19408/som-vs-worcs-county-div-1-county-championship-division-one-2018"),
        ]
    };

    const DD_KXIP_URL: &str =
        "https://www.cricbuzz.com/live-cricket-scores/20082/dd-vs-kxip-22nd-match-indian-premier-league-2018";

    #[test]
    fn the_cricbuzz_2018_profile_reads_the_five_ticker_matches_then_the_seven_only_in_the_dropdown() {
        let matches = parse(&cricbuzz(), CRICBUZZ_2018).unwrap();
        let mut expected = vec![(
            "20082",
            "Delhi Daredevils",
            "DD",
            "Kings XI Punjab",
            "KXIP",
            "22nd Match",
            "Live",
            MatchState::Live,
            DD_KXIP_URL,
        )];
        expected.extend(CRICBUZZ_TAIL);
        expected.extend(CRICBUZZ_DROPDOWN);
        assert_cricbuzz(&matches, &expected);
    }

    #[test]
    fn the_unrendered_template_copy_yields_the_same_twelve_matches_with_dd_v_kxip_complete_and_no_template_text() {
        // This copy's ticker and dropdown list are server-rendered; only Angular widgets beside
        // them hold `{{ }}` markup. The ticker there reports DD v KXIP as finished ("KXIP Won").
        let matches = parse(&cricbuzz(), CRICBUZZ_2018_TEMPLATE).unwrap();
        let mut expected = vec![(
            "20082",
            "Delhi Daredevils",
            "DD",
            "Kings XI Punjab",
            "KXIP",
            "22nd Match",
            "KXIP Won",
            MatchState::Complete,
            DD_KXIP_URL,
        )];
        expected.extend(CRICBUZZ_TAIL);
        expected.extend(CRICBUZZ_DROPDOWN);
        assert_cricbuzz(&matches, &expected);
        for m in &matches {
            let all = format!(
                "{} {} {:?} {:?} {}",
                m.source_id,
                m.title(),
                m.description,
                m.status,
                m.url
            );
            assert!(
                !all.contains("{{") && !all.contains("}}") && !all.contains("ng-"),
                "{all}"
            );
        }
    }

    #[test]
    fn the_espncricinfo_2020_profile_reads_one_match_from_the_twice_rendered_header() {
        let matches = parse(&espn(), ESPN_2020).unwrap();
        assert_eq!(matches.len(), 1, "{matches:#?}");
        let m = &matches[0];
        assert_eq!(m.site, Site::Espncricinfo);
        assert_eq!(m.source_id, "1213062");
        assert_eq!(m.teams[0].name, "Bangladesh");
        assert_eq!(m.teams[0].short_name.as_deref(), Some("BDESH"));
        assert_eq!(m.teams[1].name, "Pakistan");
        assert_eq!(m.teams[1].short_name.as_deref(), Some("PAK"));
        assert_eq!(m.description.as_deref(), Some("1st Test"));
        assert_eq!(m.series.as_deref(), Some("Bangladesh tour of Pakistan"));
        assert_eq!(
            m.venue,
            Some(Venue {
                ground: "Rawalpindi".to_string(),
                city: None
            })
        );
        assert_eq!(m.format, Format::Test);
        assert_eq!(m.state, MatchState::Live);
        assert_eq!(
            m.status.as_deref(),
            Some("Day 1: Pakistan won the toss and elected to field")
        );
        assert_eq!(m.start_time, None);
        assert_eq!(
            m.url.as_str(),
            "https://www.espncricinfo.com/series/19430/game/1213062/pakistan-vs-bangladesh-1st-test-bangladesh-in-pakistan-2019-20"
        );
    }

    fn ticker(items: &str) -> String {
        format!("<html><body><nav class=\"cb-mat-mnu\">{items}</nav></body></html>")
    }

    #[test]
    fn a_truly_unrendered_angular_ticker_yields_no_matches() {
        let page = ticker(
            r#"<a class="cb-mat-mnu-itm" title="{{m.team1}} v {{m.team2}},{{m.desc}} - {{m.state}}"
                  href="/live-cricket-scores/{{m.id}}/x">{{m.t1}} vs {{m.t2}} - {{m.state}}</a>
               <a class="cb-mat-mnu-itm" ng-bind="m.title" title="ng-bind v ng-if,1st Match - Live"
                  href="/live-cricket-scores/1/x">x</a>
               <a class="cb-mat-mnu-itm" title=" v ,1st Match - Live" href="/live-cricket-scores/2/x">x</a>"#,
        );
        let err = parse(&cricbuzz(), &page).unwrap_err();
        assert!(matches!(err, ParseError::NoMatches { .. }), "{err:?}");
    }

    #[test]
    fn template_cards_are_skipped_but_rendered_neighbours_are_kept() {
        let page = ticker(
            r#"<a class="cb-mat-mnu-itm" title="{{a}} v {{b}},1st Test - Live" href="/live-cricket-scores/{{id}}/x">x</a>
               <a class="cb-mat-mnu-itm" title="Hong Kong v Oman,1st T20I - Preview" href="/live-cricket-scores/7/hk-vs-oman">HK vs OMAN - Preview</a>"#,
        );
        let matches = parse(&cricbuzz(), &page).unwrap();
        assert_eq!(matches.len(), 1);
        assert_eq!(matches[0].source_id, "7");
        assert_eq!(matches[0].title(), "Hong Kong v Oman");
        assert_eq!(matches[0].format, Format::T20i);
        assert_eq!(matches[0].state, MatchState::Upcoming);
    }

    #[test]
    fn a_page_where_the_card_selector_matches_nothing_is_not_recognised() {
        let err = parse(&cricbuzz(), "<html><body><p>hello</p></body></html>").unwrap_err();
        assert_eq!(
            err,
            ParseError::LayoutNotRecognised {
                what: "profile cricbuzz-2018: selector `nav.cb-mat-mnu > a.cb-mat-mnu-itm, li.cb-lst-mtch div.cb-mtch-all > a` matched nothing".to_string()
            }
        );
        // Each profile is the wrong layout for the other's fixture.
        assert!(matches!(
            parse(&espn(), CRICBUZZ_2018),
            Err(ParseError::LayoutNotRecognised { .. })
        ));
        assert!(matches!(
            parse(&cricbuzz(), ESPN_2020),
            Err(ParseError::LayoutNotRecognised { .. })
        ));
    }

    #[test]
    fn an_empty_or_blank_page_is_empty() {
        assert_eq!(parse(&cricbuzz(), ""), Err(ParseError::Empty));
        assert_eq!(parse(&cricbuzz(), " \n\t "), Err(ParseError::Empty));
    }

    #[test]
    fn a_bad_selector_is_reported_with_its_field_and_text() {
        let text = ESPN_PROFILE.replace(".cscore_item--away .cscore_name--long", "li[[oops");
        let err = load_profile(&text).unwrap_err();
        match &err {
            ProfileError::BadSelector { field, selector, .. } => {
                assert_eq!(field, "fields.team2");
                assert_eq!(selector, "li[[oops");
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("fields.team2") && msg.contains("li[[oops"), "{msg}");

        let bad_card = CRICBUZZ_PROFILE.replace(
            "card = \"nav.cb-mat-mnu > a.cb-mat-mnu-itm, li.cb-lst-mtch div.cb-mtch-all > a\"",
            "card = \"a >\"",
        );
        let err = load_profile(&bad_card).unwrap_err();
        assert!(
            matches!(&err, ProfileError::BadSelector { field, selector, .. } if field == "card" && selector == "a >"),
            "{err:?}"
        );
    }

    #[test]
    fn a_profile_without_card_is_refused_naming_card() {
        let text = CRICBUZZ_PROFILE.replace(
            "card = \"nav.cb-mat-mnu > a.cb-mat-mnu-itm, li.cb-lst-mtch div.cb-mtch-all > a\"",
            "",
        );
        let err = load_profile(&text).unwrap_err();
        assert!(matches!(err, ProfileError::Toml(_)), "{err:?}");
        assert!(err.to_string().contains("card"), "{err}");
    }

    #[test]
    fn misspelt_keys_unknown_states_and_inconsistent_teams_are_refused() {
        let typo = CRICBUZZ_PROFILE.replace("link = { attr", "link = { atr");
        assert!(load_profile(&typo).unwrap_err().to_string().contains("atr"));

        let state = CRICBUZZ_PROFILE.replace("stumps = \"live\"", "stumps = \"sleeping\"");
        assert!(matches!(load_profile(&state), Err(ProfileError::Toml(_))));

        let both = ESPN_PROFILE.replace("[fields]", "[fields]\ntitle = { }\nteams_separator = \" v \"");
        assert!(matches!(load_profile(&both), Err(ProfileError::Invalid { .. })));

        let no_sep = CRICBUZZ_PROFILE.replace("teams_separator = \" v \"", "");
        assert!(matches!(load_profile(&no_sep), Err(ProfileError::Invalid { .. })));

        let empty_cut = CRICBUZZ_PROFILE.replace("{ before = \",\" }]", "{ before = \"\" }]");
        let err = load_profile(&empty_cut).unwrap_err();
        assert!(err.to_string().contains("fields.title"), "{err}");

        let ftp = CRICBUZZ_PROFILE.replace("https://www.cricbuzz.com", "ftp://www.cricbuzz.com");
        assert!(matches!(load_profile(&ftp), Err(ProfileError::Invalid { .. })));
    }

    #[test]
    fn hostile_entities_and_control_characters_are_cleaned() {
        let page = ticker(
            "<a class=\"cb-mat-mnu-itm\" title=\"Trinidad &amp;amp; Tobago\u{0007}\u{202E} v  \n\t\
             Ba\u{200B}rbados,1st&nbsp;&nbsp;Match - Live\" href=\"/live-cricket-scores/42/x\">T&amp;T vs \
             BAR\u{0000}B - Live</a>",
        );
        let matches = parse(&cricbuzz(), &page).unwrap();
        assert_eq!(matches.len(), 1);
        let m = &matches[0];
        assert_eq!(m.teams[0].name, "Trinidad & Tobago");
        assert_eq!(m.teams[1].name, "Barbados");
        assert_eq!(m.teams[0].short_name.as_deref(), Some("T&T"));
        assert_eq!(m.teams[1].short_name.as_deref(), Some("BARB"));
        assert_eq!(m.description.as_deref(), Some("1st Match"));
        assert_eq!(m.state, MatchState::Live);
    }

    #[test]
    fn cards_without_an_id_two_teams_or_an_http_link_are_skipped_and_ids_are_deduplicated() {
        let page = ticker(
            r#"<a class="cb-mat-mnu-itm" title="A v B,1st ODI - Live" href="/elsewhere/1/x">no id</a>
               <a class="cb-mat-mnu-itm" title="Only One Team,1st ODI - Live" href="/live-cricket-scores/2/x">one</a>
               <a class="cb-mat-mnu-itm" title="A v B,1st ODI - Live" href="javascript:alert(1)//live-cricket-scores/3/x">js</a>
               <a class="cb-mat-mnu-itm" title="India v England,1st ODI - Live" href="/live-cricket-scores/4/first">a</a>
               <a class="cb-mat-mnu-itm" title="India v England,1st ODI - Stumps" href="/live-cricket-scores/4/second">b</a>
               <a class="cb-mat-mnu-itm" title="Kent v Essex,Match 3 - Live" href="https://other.example/live-cricket-scores/5/y">c</a>
               <a class="cb-mat-mnu-itm" title="Kent v Essex,Match 3 - Match abandoned" href="https://m.cricbuzz.com/live-cricket-scores/6/y">d</a>"#,
        );
        let matches = parse(&cricbuzz(), &page).unwrap();
        let ids: Vec<_> = matches.iter().map(|m| m.source_id.as_str()).collect();
        // Card 5 links to another site: a page must not pick where our post points.
        assert_eq!(ids, ["4", "6"]);
        assert_eq!(
            matches[0].url.as_str(),
            "https://www.cricbuzz.com/live-cricket-scores/4/first"
        );
        assert_eq!(matches[0].format, Format::Odi);
        assert_eq!(
            matches[1].url.as_str(),
            "https://m.cricbuzz.com/live-cricket-scores/6/y"
        );
        assert_eq!(matches[1].state, MatchState::Abandoned);
        // Short names come from the item text, which these items do not shape as "X vs Y - S".
        assert_eq!(matches[0].teams[0].short_name, None);
    }

    #[test]
    fn state_words_prefer_an_exact_key_then_the_longest_phrase() {
        let table: BTreeMap<String, MatchState> = [
            ("result", MatchState::Complete),
            ("no result", MatchState::Abandoned),
            ("won", MatchState::Complete),
            ("live", MatchState::Live),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(state_from_text("No Result", &table), Some(MatchState::Abandoned));
        assert_eq!(
            state_from_text("Match ends: no result", &table),
            Some(MatchState::Abandoned)
        );
        assert_eq!(state_from_text("GLAM Won", &table), Some(MatchState::Complete));
        assert_eq!(state_from_text("LIVE", &table), Some(MatchState::Live));
        assert_eq!(state_from_text("Delivery", &table), None);
    }

    /// A club's fixtures page profile: every optional field, a start time with its format, a
    /// default format and states from classes.
    fn club_profile() -> Profile {
        load_profile(
            r#"
            name = "club"
            site = "web"
            base_url = "https://club.example/fixtures/"
            card = "li.game"
            default_format = "T20"
            [fields]
            id = { attr = "data-id" }
            team1 = { selector = ".home" }
            team2 = { selector = ".away" }
            series = { selector = ".comp" }
            description = { selector = ".round" }
            format = { selector = ".fmt" }
            start_time = { selector = "time", attr = "datetime", time_format = "%Y-%m-%d %H:%M" }
            link = { selector = "a", attr = "href" }
            [state]
            from_class = { "is-live" = "live", "is-done" = "complete" }
            "#,
        )
        .expect("the club profile loads")
    }

    #[test]
    fn a_generic_profile_reads_start_time_format_and_default_format() {
        let profile = club_profile();
        let page = r#"<ul>
            <li class="game is-live" data-id="g1"><span class="home">Reds</span><span class="away">Blues</span>
              <span class="comp">Summer League</span><span class="round">Round 1</span><span class="fmt">one-day</span>
              <time datetime="2024-06-01 13:30"></time><a href="g1.html">card</a></li>
            <li class="game" data-id="g2"><span class="home">Greens</span><span class="away">Golds</span>
              <span class="round">Final</span><time datetime="soon"></time><a href="/g2">card</a></li>
            </ul>"#;
        let matches = parse(&profile, page).unwrap();
        assert_eq!(matches.len(), 2);
        let (a, b) = (&matches[0], &matches[1]);
        assert_eq!(a.site, Site::Web);
        assert_eq!(a.format, Format::ListA);
        assert_eq!(a.state, MatchState::Live);
        assert_eq!(a.series.as_deref(), Some("Summer League"));
        assert_eq!(
            a.start_time,
            Some(
                DateTime::parse_from_rfc3339("2024-06-01T13:30:00Z")
                    .unwrap()
                    .with_timezone(&Utc)
            )
        );
        assert_eq!(a.url.as_str(), "https://club.example/fixtures/g1.html");
        assert_eq!(a.teams[0].short_name, None);
        assert_eq!(b.format, Format::T20);
        assert_eq!(b.state, MatchState::Other);
        assert_eq!(b.start_time, None);
        assert_eq!(b.url.as_str(), "https://club.example/g2");
    }

    #[test]
    fn a_card_passed_over_and_an_unreadable_start_time_are_logged_with_why() {
        let profile = club_profile();
        let page = r#"<ul>
            <li class="game" data-id="g1"><span class="home">Reds</span><span class="away">Blues</span>
              <time datetime="at tea"></time><a href="g1.html">card</a></li>
            <li class="game"><span class="home">Greens</span><span class="away">Golds</span><a href="g2">x</a></li>
            <li class="game" data-id="g3"><span class="home">Greys</span><a href="g3">x</a></li>
            <li class="game" data-id="g4"><span class="home">A</span><span class="away">B</span><a href="https://elsewhere.example/g4">x</a></li>
            </ul>"#;
        let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = std::sync::Arc::clone(&logs);
        let subscriber = crate::telemetry::subscriber("debug", move || LogSink(std::sync::Arc::clone(&sink)), false);
        let matches = tracing::subscriber::with_default(subscriber, || parse(&profile, page)).expect("one match");
        assert_eq!(matches.len(), 1);
        assert_eq!((matches[0].source_id.as_str(), matches[0].start_time), ("g1", None));
        let logs = String::from_utf8(logs.lock().expect("logs").clone()).expect("utf-8");
        let lines: Vec<&str> = logs.lines().collect();
        assert_eq!(lines.len(), 4, "{logs}");
        assert!(
            lines[0].contains("fields.start_time does not match its time_format")
                && lines[0].contains(r#"value="at tea""#)
                && lines[0].contains("time_format=%Y-%m-%d %H:%M"),
            "{logs}"
        );
        for (line, (card, reason)) in lines[1..].iter().zip([
            (1, "no id"),
            (2, "no fields.team2"),
            (3, "fields.link leads to another site than base_url"),
        ]) {
            assert!(
                line.contains("card skipped")
                    && line.contains("profile=club")
                    && line.contains(&format!("card={card} "))
                    && line.contains(reason),
                "{logs}"
            );
        }
    }

    struct LogSink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for LogSink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_bad_time_format_is_refused_at_load() {
        let text = ESPN_PROFILE.replace(
            "link = { selector",
            "start_time = { attr = \"x\", time_format = \"%Q\" }\nlink = { selector",
        );
        let err = load_profile(&text).unwrap_err();
        assert!(err.to_string().contains("time_format"), "{err}");
    }

    #[test]
    fn template_text_detection_ignores_ng_inside_words() {
        assert!(is_template("{{match.team1}}"));
        assert!(is_template("ng-bind"));
        assert!(is_template("x data-ng-if"));
        assert!(!is_template("Hong-Kong"));
        assert!(!is_template("Long-Off XI"));
    }

    fn prefixes(text: &str, step: usize) -> impl Iterator<Item = &str> {
        (0..text.len())
            .step_by(step)
            .filter(move |&i| text.is_char_boundary(i))
            .map(move |i| &text[..i])
    }

    #[test]
    fn truncated_fixtures_and_garbage_never_panic() {
        let (cb, es) = (cricbuzz(), espn());
        for prefix in prefixes(CRICBUZZ_2018, 997).chain(prefixes(CRICBUZZ_2018_TEMPLATE, 1499)) {
            let _ = parse(&cb, prefix);
        }
        for prefix in prefixes(ESPN_2020, 4999) {
            let _ = parse(&es, prefix);
        }
        let garbage = [
            "\u{0}\u{1}\u{2}",
            "<<<>>>",
            "<nav class=\"cb-mat-mnu\"><a class=\"cb-mat-mnu-itm\" title=\" v ,",
            "<nav class=\"cb-mat-mnu\"><a class=\"cb-mat-mnu-itm\" href=\"http://[::1\" title=\"A v B,C - D\">",
            "<div class=\"gameHeader\"><a class=\"game\" href=\"/game/\">",
            "&#x0;&#xFFFFFF;&#99999999999;",
        ];
        for g in garbage {
            let _ = parse(&cb, g);
            let _ = parse(&es, g);
        }
    }

    #[test]
    fn a_hand_built_profile_with_a_bad_selector_fails_parse_without_panicking() {
        let mut p = cricbuzz();
        p.card = "[[".to_string();
        assert!(matches!(
            parse(&p, CRICBUZZ_2018),
            Err(ParseError::LayoutNotRecognised { .. })
        ));
    }

    /// A generic listing: one `li.game` per match, fields in spans, the link in an `<a>`.
    const CLUB_PROFILE: &str = r#"
        name = "club"
        site = "web"
        base_url = "https://club.example/"
        card = "li.game"
        [fields]
        id = { attr = "data-id" }
        team1 = { selector = ".home" }
        team2 = { selector = ".away" }
        series = { selector = ".comp" }
        status = { selector = ".note", attr = "title" }
        link = { selector = "a", attr = "href" }
        "#;

    fn club() -> CompiledProfile {
        CompiledProfile::from_toml(CLUB_PROFILE).unwrap()
    }

    fn game(id: &str, inner: &str) -> String {
        format!(
            r#"<li class="game" data-id="{id}"><span class="home">Home {id}</span><span class="away">Away {id}</span>{inner}<a href="/m/{id}">go</a></li>"#
        )
    }

    #[test]
    fn text_content_joins_nested_elements_and_decodes_entities_once_before_cleaning() {
        let page = r#"<ul><li class="game" data-id="1">
            <span class="home">Trinidad <b>&amp;amp;</b>
              <i>Tob<u>ago</u></i></span>
            <span class="away">St Kitts &amp Nevis</span>
            <span class="comp">Caribbean <!-- not text --><script>var x = "&lt;";</script> League</span>
            <a href="/m/1">go</a></li></ul>"#;
        let m = &club().parse(page).unwrap()[0];
        // Text nodes are concatenated across nested elements, as scraper's `.text()` did.
        assert_eq!(m.teams[0].name, "Trinidad & Tobago");
        // `&amp` without `;` is still an entity in text, as an HTML parser reads it.
        assert_eq!(m.teams[1].name, "St Kitts & Nevis");
        // Script text is text content, taken as written (no entity decoding there); comments
        // are not text. The cleaning then decodes "&lt;" once more, as for any field.
        assert_eq!(m.series.as_deref(), Some("Caribbean var x = \"<\"; League"));
    }

    #[test]
    fn attributes_are_decoded_once_with_the_attribute_rules_then_cleaned() {
        let page = r#"<ul><li class="game" data-id="a&amp;amp;b"><span class="home">A</span><span class="away">B</span>
            <span class="note" title="Rain &amp;amp; bad light &#x2014; &quot;stumps&quot;"></span>
            <a href="/m/1?a=1&copy=2&amp;c=3&lang">go</a></li></ul>"#;
        let m = &club().parse(page).unwrap()[0];
        assert_eq!(m.source_id, "a&b");
        assert_eq!(m.status.as_deref(), Some("Rain & bad light \u{2014} \"stumps\""));
        // In an attribute, `&copy` before `=` is not an entity (it would be in text); `&amp;`
        // is, and `&lang` (an entity only with its `;`) is not.
        assert_eq!(m.url.as_str(), "https://club.example/m/1?a=1&copy=2&c=3&lang");
    }

    #[test]
    fn a_field_reads_the_first_matching_descendant_of_its_own_card() {
        let page = format!(
            r#"<span class="comp">Outside any card</span>
            <ul>
              <li class="game" data-id="1"><span class="home">First <span class="home">inner</span></span>
                <span class="home">Second</span><span class="away">B</span><a href="/m/1">go</a><a href="/m/other">no</a></li>
              {}
            </ul>
            <span class="comp">After the cards</span>"#,
            game("2", r#"<span class="comp">Cup 2</span>"#)
        );
        let matches = club().parse(&page).unwrap();
        assert_eq!(matches.len(), 2);
        let (a, b) = (&matches[0], &matches[1]);
        // The first `.home`, with its nested `.home` as part of its text; the second is ignored.
        assert_eq!(a.teams[0].name, "First inner");
        assert_eq!(a.url.as_str(), "https://club.example/m/1");
        // Elements before, after or in another card are not this card's.
        assert_eq!(a.series, None);
        assert_eq!(b.series.as_deref(), Some("Cup 2"));
    }

    #[test]
    fn a_field_selector_is_matched_against_the_whole_page_but_only_descendants_count() {
        // `section .comp`: the section is outside the card, the `.comp` inside it.
        let text = CLUB_PROFILE.replace(r#"selector = ".comp""#, r#"selector = "section .comp""#);
        let profile = CompiledProfile::from_toml(&text).unwrap();
        let page = format!(
            r#"<section><ul>{}</ul></section><ul>{}</ul>"#,
            game("1", r#"<span class="comp">League</span>"#),
            game("2", r#"<span class="comp">Not in a section</span>"#)
        );
        let matches = profile.parse(&page).unwrap();
        assert_eq!(matches[0].series.as_deref(), Some("League"));
        assert_eq!(matches[1].series, None);
        // The card itself is not its own descendant: `li` does not read the card.
        let own = CLUB_PROFILE.replace(r#"selector = ".comp""#, r#"selector = "li""#);
        let profile = CompiledProfile::from_toml(&own).unwrap();
        let matches = profile.parse(&format!("<ul>{}</ul>", game("1", ""))).unwrap();
        assert_eq!(matches[0].series, None);
    }

    #[test]
    fn a_nested_card_keeps_its_fields_and_the_enclosing_card_never_reads_inside_it() {
        let page = format!(
            r#"<ul><li class="game" data-id="outer"><span class="home">Outer A</span>
                 <ul>{}</ul>
                 <span class="away">Outer B</span><a href="/m/outer">go</a></li>
               <li class="game" data-id="lacking"><span class="home">Lone</span><ul>{}</ul></li></ul>"#,
            game("inner", r#"<span class="comp">Inner Cup</span>"#),
            game("inner2", "")
        );
        let matches = club().parse(&page).unwrap();
        let ids: Vec<_> = matches.iter().map(|m| m.source_id.as_str()).collect();
        // Page order of the cards' start tags; "lacking" has no away team outside its nested
        // card, so it is skipped rather than given "Away inner2".
        assert_eq!(ids, ["outer", "inner", "inner2"]);
        let (outer, inner) = (&matches[0], &matches[1]);
        assert_eq!(outer.teams[1].name, "Outer B");
        assert_eq!(outer.url.as_str(), "https://club.example/m/outer");
        assert_eq!(outer.series, None);
        assert_eq!(inner.teams[0].name, "Home inner");
        assert_eq!(inner.series.as_deref(), Some("Inner Cup"));
        assert_eq!(inner.url.as_str(), "https://club.example/m/inner");
    }

    #[test]
    fn void_and_self_closing_cards() {
        // A void card has attributes only; a self-closing `<div/>` is not void in HTML, so it
        // holds what follows up to its parent's end, as a browser reads it.
        let profile = CompiledProfile::from_toml(
            r#"
            name = "tiles"
            site = "web"
            base_url = "https://club.example/"
            card = "img.game, div.game"
            [fields]
            id = { attr = "data-id" }
            team1 = { attr = "data-home" }
            team2 = { attr = "data-away" }
            series = { selector = ".comp" }
            status = { }
            link = { attr = "data-href" }
            "#,
        )
        .unwrap();
        let page = r#"<main><section>
              <img class="game" data-id="1" data-home="A" data-away="B" data-href="/m/1">
              <span class="comp">not the image's</span>
              <img class="game" data-id="2" data-home="C" data-away="D" data-href="/m/2"/>
            </section><section>
              <div class="game" data-id="3" data-home="E" data-away="F" data-href="/m/3"/>
              <span class="comp">Cup</span>
            </section></main>"#;
        let matches = profile.parse(page).unwrap();
        let ids: Vec<_> = matches.iter().map(|m| m.source_id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3"]);
        assert_eq!(matches[0].series, None);
        assert_eq!(matches[0].status, None);
        assert_eq!(matches[1].teams[1].name, "D");
        assert_eq!(matches[2].series.as_deref(), Some("Cup"));
        assert_eq!(matches[2].status.as_deref(), Some("Cup"));
    }

    #[test]
    fn unclosed_list_items_are_separate_cards_that_do_not_borrow_each_others_fields() {
        let page = r#"<ul>
            <li class="game" data-id="1"><span class="home">A</span><span class="away">B</span><a href="/m/1">go</a>
            <li class="game" data-id="2"><span class="home">C</span><span class="away">D</span>
                <span class="comp">Cup</span><a href="/m/2">go</a>
            </ul>
            <p>Unclosed paragraph <span class="comp">stray</span>"#;
        let matches = club().parse(page).unwrap();
        assert_eq!(matches.len(), 2);
        assert_eq!(matches[0].series, None);
        assert_eq!(matches[0].url.as_str(), "https://club.example/m/1");
        assert_eq!(matches[1].teams[0].name, "C");
        assert_eq!(matches[1].series.as_deref(), Some("Cup"));
        // An unclosed card at the end of the page runs to the end of the page.
        let page = format!("<ul>{}<li class=\"game\" data-id=\"9\"><span class=\"home\">X</span><span class=\"away\">Y</span><a href=\"/m/9\">", game("1", ""));
        let ids: Vec<_> = club().parse(&page).unwrap().into_iter().map(|m| m.source_id).collect();
        assert_eq!(ids, ["1", "9"]);
    }

    #[test]
    fn more_cards_open_at_once_than_the_bound_are_refused_and_fewer_are_read() {
        // Each open card leaves lol_html an end-tag handler to scan past at every end tag, so
        // 64,000 unclosed or nested cards made one pass quadratic (seconds for an 8 MiB page).
        let card = |i: usize| {
            format!(
                r#"<li class="game" data-id="{i}"><span class="home">A</span><span class="away">B</span><a href="/m/{i}">go</a>"#
            )
        };
        let unclosed = |n: usize| format!("<ul>{}</ul>", (0..n).map(card).collect::<String>());
        assert_eq!(club().parse(&unclosed(MAX_OPEN_CARDS)).unwrap().len(), MAX_OPEN_CARDS);
        for page in [
            unclosed(MAX_OPEN_CARDS + 1),
            format!(
                "{}{}",
                (0..100_000).map(card).collect::<String>(),
                "</li>".repeat(100_000)
            ),
        ] {
            match club().parse(&page) {
                Err(ParseError::LayoutNotRecognised { what }) => assert!(what.contains("open at once"), "{what}"),
                other => panic!("{other:?}"),
            }
        }
        // Closed cards one after another are never open together: any number is read.
        let closed: String = (0..20_000).map(|i| game(&i.to_string(), "")).collect();
        assert_eq!(club().parse(&format!("<ul>{closed}</ul>")).unwrap().len(), 20_000);
    }

    #[test]
    fn an_unclosed_paragraph_field_runs_to_its_parents_end_tag() {
        // lol_html does not apply the tree builder's implied end tags: a browser would end the
        // first <p> at the second; here its text content runs on to the card's `</li>`.
        let text = CLUB_PROFILE
            .replace(r#"selector = ".home""#, r#"selector = "p.home""#)
            .replace(r#"selector = ".away""#, r#"selector = "p.away""#);
        let profile = CompiledProfile::from_toml(&text).unwrap();
        let page =
            r#"<ul><li class="game" data-id="1"><p class="home">A<p class="away">B<a href="/m/1"></a></li></ul>"#;
        let m = &profile.parse(page).unwrap()[0];
        assert_eq!(m.teams[0].name, "AB");
        assert_eq!(m.teams[1].name, "B");
    }

    #[test]
    fn selectors_the_streaming_matcher_cannot_do_are_refused_at_load_naming_the_field() {
        for (field, bad) in [
            ("fields.team2", ".home + .away"),
            ("fields.team2", ".home ~ .away"),
            ("fields.team2", "span:last-child"),
            ("fields.team2", "li:has(.away)"),
            ("fields.team2", ":scope > .away"),
        ] {
            let text = CLUB_PROFILE.replace(r#"selector = ".away""#, &format!("selector = \"{bad}\""));
            match load_profile(&text) {
                Err(ProfileError::BadSelector {
                    field: f,
                    selector,
                    reason,
                }) => {
                    assert_eq!((f.as_str(), selector.as_str()), (field, bad), "{reason}");
                    assert!(
                        reason.ends_with(SUPPORTED),
                        "the reason says what is supported: {reason}"
                    );
                }
                other => panic!("{bad}: {other:?}"),
            }
            assert!(CompiledProfile::from_toml(&text).is_err(), "{bad}");
        }
        let card = CLUB_PROFILE.replace(r#"card = "li.game""#, r#"card = "h2 + li.game""#);
        assert!(matches!(
            load_profile(&card),
            Err(ProfileError::BadSelector { field, .. }) if field == "card"
        ));
        // What it can do: descendant and child combinators, lists, attributes, :nth-child, :not.
        let fine = CLUB_PROFILE.replace(
            r#"selector = ".away""#,
            r#"selector = "ul > li span[class~=away]:not(.home):nth-child(2), .visitors""#,
        );
        let profile = CompiledProfile::from_toml(&fine).unwrap();
        let m = &profile.parse(&format!("<ul>{}</ul>", game("1", ""))).unwrap()[0];
        assert_eq!(m.teams[1].name, "Away 1");
    }

    #[test]
    fn state_classes_and_text_come_from_the_state_element() {
        let text = format!(
            "{CLUB_PROFILE}\n[state]\nselector = \".badge\"\nextract = [{{ after = \":\" }}]\n\
             from_class = {{ \"is-live\" = \"live\", \"a-done\" = \"complete\" }}\n\
             [state.from_text]\nstumps = \"live\"\nwon = \"complete\"\n"
        );
        let profile = CompiledProfile::from_toml(&text).unwrap();
        let page = format!(
            "<ul>{}{}{}</ul>",
            game("1", r#"<b class="badge is-live a-done">Day 1: Stumps</b>"#),
            game(
                "2",
                r#"<b class="badge">Result: <i>India won</i></b><b class="badge is-live">x</b>"#
            ),
            game("3", ""),
        );
        let states: Vec<_> = profile.parse(&page).unwrap().iter().map(|m| m.state).collect();
        // Two mapped classes: the alphabetically first ("a-done") wins, as before.
        assert_eq!(states, [MatchState::Complete, MatchState::Complete, MatchState::Other]);
    }

    #[test]
    fn the_compiled_profile_and_the_one_shot_parse_agree() {
        let compiled = CompiledProfile::from_toml(CRICBUZZ_PROFILE).unwrap();
        assert_eq!(compiled.profile(), &cricbuzz());
        assert_eq!(compiled.parse(CRICBUZZ_2018), parse(&cricbuzz(), CRICBUZZ_2018));
        assert_eq!(compiled.parse(""), Err(ParseError::Empty));
        assert_eq!(compiled, CompiledProfile::new(cricbuzz()).unwrap());
        assert!(format!("{compiled:?}").contains("cricbuzz-2018"));
    }
}
