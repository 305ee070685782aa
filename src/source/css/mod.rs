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
//!   ([`MatchState::with_status`](crate::cricket::MatchState::with_status): "No result" is abandoned, "won by" complete).
//! - Format: the word is the `format` field when it yields text; else the description's format
//!   word ("Test", "ODI", "T20I"/"IT20", "T20"); else `default_format`; the word then goes
//!   through the project's one table ([`Format::classify`](crate::cricket::Format::classify): an A team's "Test" is first-class,
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
//!
//! # Layout
//!
//! The folder owns reading operator profiles and applying them to pages; it calls only
//! [`crate::cricket`] (the [`Match`] it builds, the format and state rules), [`crate::text`]
//! (cleaning scraped text) and [`ParseError`], never the fetcher or the store.
//!
//! - `schema.rs`: the TOML [`Profile`], its checks and [`ProfileError`] (no selectors);
//! - `compile.rs`: the selectors compiled once for lol_html, and which element and attribute
//!   each field reads;
//! - `scan.rs`: the one streaming pass over a page, collecting each card's raw values;
//! - `fields.rs`: one card's raw values to one [`Match`] (cuts, state, format, link checks);
//! - this file: [`load_profile`], [`CompiledProfile`] and [`parse`], which put the others
//!   together (a profile is checked by `schema.rs` and compiled by `compile.rs`; neither file
//!   imports the other).

mod compile;
mod fields;
mod scan;
mod schema;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::fmt;

use crate::cricket::Match;
use crate::source::dropped::Unnamed;
use crate::source::ParseError;

use compile::{compile, Plan};
pub use schema::{Field, Fields, Profile, ProfileError, StateRule, Step, TimeField};

/// Operator profiles shipped with the bot, usable as `css:<name>` without a file.
pub const BUILTIN_PROFILES: &[(&str, &str)] = &[
    ("cricbuzz-2018", include_str!("../../../profiles/cricbuzz-2018.toml")),
    (
        "espncricinfo-2020",
        include_str!("../../../profiles/espncricinfo-2020.toml"),
    ),
];

/// Why the profile of a `css:PROFILE` source cannot be used. Each names the profile as the
/// operator wrote it and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not a built-in profile's name, and no file that can be read at that path.
    #[error(
        "cannot read CSS profile {profile:?}: {error} (built-in profiles: {}); name a built-in \
         profile or the path of a TOML profile file",
        builtin_names()
    )]
    Unreadable {
        /// The name or path, as written after `css:`.
        profile: String,
        /// Why the file could not be read.
        #[source]
        error: std::io::Error,
    },
    /// The profile was read but is not valid; the message names the key or selector to fix.
    #[error("CSS profile {profile:?}: {error}; fix it as the module doc of src/source/css/mod.rs describes")]
    Invalid {
        /// The name or path, as written after `css:`.
        profile: String,
        /// What is wrong with it.
        #[source]
        error: ProfileError,
    },
}

/// "cricbuzz-2018, espncricinfo-2020".
fn builtin_names() -> String {
    BUILTIN_PROFILES
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl CompiledProfile {
    /// The profile named `profile` in a `css:PROFILE` source: a built-in profile's name
    /// ([`BUILTIN_PROFILES`]), else the path of a TOML file, read, checked and compiled.
    ///
    /// # Errors
    ///
    /// [`LoadError::Unreadable`] when it is neither a built-in name nor a readable file,
    /// [`LoadError::Invalid`] when the profile is not valid (as [`load_profile`]).
    pub fn named(profile: &str) -> Result<CompiledProfile, LoadError> {
        let text = match BUILTIN_PROFILES.iter().find(|(name, _)| *name == profile) {
            Some((_, text)) => std::borrow::Cow::Borrowed(*text),
            None => std::fs::read_to_string(profile)
                .map_err(|error| LoadError::Unreadable {
                    profile: profile.to_string(),
                    error,
                })?
                .into(),
        };
        CompiledProfile::from_toml(&text).map_err(|error| LoadError::Invalid {
            profile: profile.to_string(),
            error,
        })
    }
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
    let profile: Profile = toml::from_str(toml_text).map_err(|e| schema::toml_error(toml_text, &e))?;
    validate(&profile)?;
    Ok(profile)
}

/// Checks `profile` ([`schema`]'s checks) and compiles its selectors ([`compile`]): a profile
/// naming no site or an invalid `base_url` is refused before its selectors are looked at, one
/// with a selector that does not compile before its other fields are.
fn validate(profile: &Profile) -> Result<Plan, ProfileError> {
    schema::check_identity(profile)?;
    let plan = compile(profile).map_err(|e| ProfileError::BadSelector {
        field: e.field.to_string(),
        selector: e.selector,
        reason: e.reason,
    })?;
    schema::check_fields(profile)?;
    Ok(plan)
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
        CompiledProfile::new(toml::from_str(toml_text).map_err(|e| schema::toml_error(toml_text, &e))?)
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
    let cards = scan::scan(plan, page).map_err(|e| ParseError::LayoutNotRecognised {
        what: format!("profile {}: the page could not be read: {e}", profile.name),
    })?;
    if cards.is_empty() {
        return Err(ParseError::LayoutNotRecognised {
            what: format!("profile {}: selector `{}` matched nothing", profile.name, profile.card),
        });
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut unnamed = Unnamed::default();
    for (card, values) in cards.iter().enumerate() {
        match fields::read_card(profile, plan, values, &mut unnamed) {
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
    unnamed.report(profile.site, &out);
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
