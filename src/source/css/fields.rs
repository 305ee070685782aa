//! Field reading: one card's raw values to one [`Match`]: the cuts, the checks that make a card
//! not a match (no id, a team missing, template text, a link to another site), the format and
//! the state.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use url::Url;

use super::compile::{Plan, STATE_CLASS};
use super::schema::{Field, Profile, StateRule, Step};
use crate::cricket::{Format, FormatClues, Level, Match, MatchState, Team, Text, Venue};
use crate::source::dropped::Unnamed;

/// The most characters of a page's value quoted in a debug line.
const MAX_LOGGED_VALUE_CHARS: usize = 80;

/// One card to one match, or why the card is not one (what it lacks). A card with an id whose
/// team name is empty is also noted in `unnamed`.
pub(super) fn read_card(
    profile: &Profile,
    plan: &Plan,
    values: &[Option<String>],
    unnamed: &mut Unnamed,
) -> Result<Match, &'static str> {
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
    if is_template(&name1) || is_template(&name2) {
        return Err("a team name is a template placeholder");
    }
    if name1.is_empty() || name2.is_empty() {
        unnamed.note(&id, [Some(name1.as_str()), Some(name2.as_str())]);
        return Err("a team name is empty");
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
    let format = Format::classify(&FormatClues {
        word: word.as_deref(),
        level: Level::Unknown,
        description: description.as_deref(),
        series: series.as_deref(),
        teams: [&name1, &name2],
        date: start_time.map(|t| t.date_naive()),
    });
    let status = optional("fields.status", &f.status);

    Ok(Match {
        site: profile.site,
        source_id: id.into(),
        teams: [
            Team {
                name: name1.into(),
                short_name: optional("fields.team1_short", &f.team1_short).map(Text::from),
            },
            Team {
                name: name2.into(),
                short_name: optional("fields.team2_short", &f.team2_short).map(Text::from),
            },
        ],
        series: series.map(Text::from),
        description: description.map(Text::from),
        format,
        venue: optional("fields.venue", &f.venue).map(|ground| Venue {
            ground: ground.into(),
            city: None,
        }),
        start_time,
        state: read_state(&profile.state, raw(STATE_CLASS), raw("state")).with_status(status.as_deref()),
        status: status.map(Text::from),
        url,
        // A profile names no result field: its status line is not taken for a result.
        ending: None,
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

    #[test]
    fn template_text_detection_ignores_ng_inside_words() {
        assert!(is_template("{{match.team1}}"));
        assert!(is_template("ng-bind"));
        assert!(is_template("x data-ng-if"));
        assert!(!is_template("Hong-Kong"));
        assert!(!is_template("Long-Off XI"));
    }
}
