//! ESPNcricinfo's matches as ESPN's scoreboard "events": the shape of its 2019–2021 score pages,
//! where each match is an object with an `id`, two `competitors` (`displayName`,
//! `abbreviation`, `homeAway`), a `title` ("1st Test"), an `eventType` ("Test", "ODI", "T20"),
//! a `status` ("pre", "in", "post") with a `fullStatus.summary` line, a `date` and a `location`,
//! inside a league (`{"name": "Bangladesh tour of Pakistan 2019/20", "events": […]}`). The same
//! objects fill the score strip of the 2018–2020 match pages
//! (`fixtures/espncricinfo/old-layout_match-page_1213062_2020-02-07.html`, 26 events).
//!
//! This file maps one such object to a [`Match`]; `espncricinfo.rs` finds them in the page.

use crate::cricket::{Ending, Format, FormatClues, Innings, Level, Match, MatchState, Site, Team, Text, Venue};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use url::Url;

/// The most digits of an ESPNcricinfo match id (they are 6 to 7 today; the bound keeps junk out).
const MAX_ID_DIGITS: usize = 12;

/// One event object, read leniently: a field of another type reads as absent.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEvent {
    #[serde(deserialize_with = "id")]
    id: String,
    competitors: Vec<RawCompetitor>,
    #[serde(default, deserialize_with = "lenient")]
    title: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    event_type: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    date: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    time_valid: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    status: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    full_status: Option<RawFullStatus>,
    #[serde(default, deserialize_with = "lenient")]
    location: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    group: Option<RawGroup>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCompetitor {
    #[serde(default, deserialize_with = "lenient")]
    display_name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    abbreviation: Option<String>,
    /// "335 & 158/7 (74 ov, target 290)", "" before the side bats.
    #[serde(default, deserialize_with = "lenient")]
    score: Option<String>,
    /// Whether the scoreboard names this side the match's winner.
    #[serde(default, deserialize_with = "lenient")]
    winner: Option<bool>,
}

#[derive(Deserialize)]
struct RawFullStatus {
    #[serde(default, deserialize_with = "lenient")]
    summary: Option<String>,
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    kind: Option<RawStatusType>,
}

#[derive(Deserialize)]
struct RawStatusType {
    #[serde(default, deserialize_with = "lenient")]
    state: Option<String>,
}

#[derive(Deserialize)]
struct RawGroup {
    #[serde(default, deserialize_with = "lenient")]
    abbreviation: Option<String>,
}

/// Reads a field as `T`, or `None` when it is null or of another type.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// An id written as a string of digits or as a number.
fn id<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let id = match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Number(n) if n.is_u64() => n.to_string(),
        _ => String::new(),
    };
    let ok = !id.is_empty() && id.len() <= MAX_ID_DIGITS && id.bytes().all(|b| b.is_ascii_digit());
    if ok {
        Ok(id)
    } else {
        Err(serde::de::Error::custom("not an ESPNcricinfo match id"))
    }
}

/// One event object (`value`) in the league named `league`, as a [`Match`]; `None` when it is
/// not one, or its competitors have no names (`Err` of the names as read, for the caller to
/// report: see [`super::dropped`]).
pub(super) fn to_match(value: serde_json::Value, league: Option<&str>) -> Option<Result<Match, (String, [String; 2])>> {
    let raw: RawEvent = serde_json::from_value(value).ok()?;
    let [first, second] = raw.competitors.as_slice() else {
        return None;
    };
    let team = |c: &RawCompetitor| Team {
        name: c
            .display_name
            .as_deref()
            .and_then(crate::text::plain)
            .unwrap_or_default()
            .into(),
        short_name: c.abbreviation.as_deref().and_then(crate::text::plain).map(Text::from),
    };
    let teams = [team(first), team(second)];
    if teams.iter().any(|t| t.name.is_empty()) {
        return Some(Err((raw.id, teams.map(|t| t.name.to_string()))));
    }
    let series = league.and_then(crate::text::plain).or_else(|| {
        raw.group
            .and_then(|g| g.abbreviation)
            .as_deref()
            .and_then(crate::text::plain)
    });
    let description = raw.title.as_deref().and_then(crate::text::plain);
    let start_time = (raw.time_valid != Some(false))
        .then_some(raw.date.as_deref())
        .flatten()
        .and_then(|d| DateTime::parse_from_rfc3339(d.trim()).ok())
        .map(|t| t.with_timezone(&Utc));
    let word = raw.event_type.as_deref().and_then(crate::text::plain);
    let format = Format::classify(&FormatClues {
        word: word.as_deref(),
        level: Level::Unknown,
        description: description.as_deref(),
        series: series.as_deref(),
        teams: [&teams[0].name, &teams[1].name],
        date: start_time.map(|t| t.date_naive()),
    });
    let full = raw.full_status.as_ref();
    let status = full.and_then(|f| f.summary.as_deref()).and_then(crate::text::plain);
    let state_word = full
        .and_then(|f| f.kind.as_ref())
        .and_then(|k| k.state.as_deref())
        .or(raw.status.as_deref());
    let state = match state_word.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("pre") => MatchState::Upcoming,
        Some("in") => MatchState::Live,
        Some("post") => MatchState::Complete,
        _ => MatchState::Other,
    }
    .with_status(status.as_deref());
    // The match page by id, as the RSS feed's items name it: the event's own `link` is the
    // 2020 site's address, and another host than ESPNcricinfo's is never followed.
    let ending = match (state, &status) {
        (MatchState::Complete | MatchState::Abandoned, Some(line)) => Some(Box::new(Ending {
            line: line.as_str().into(),
            scores: [side_innings(first), side_innings(second)],
            winner: raw.competitors.iter().position(|c| c.winner == Some(true)),
            ended_by: None,
        })),
        _ => None,
    };
    let mut url = Url::parse("https://www.espncricinfo.com/").ok()?;
    url.set_path(&format!("/ci/engine/match/{}.html", raw.id));
    Some(Ok(Match {
        site: Site::Espncricinfo,
        source_id: raw.id.into(),
        teams,
        series: series.map(Text::from),
        description: description.map(Text::from),
        format,
        venue: raw
            .location
            .as_deref()
            .and_then(crate::text::plain)
            .map(|ground| Venue {
                ground: ground.into(),
                city: None,
            }),
        start_time,
        state,
        status: status.map(Text::from),
        url,
        ending,
    }))
}

/// A competitor's innings as the scoreboard prints them: `335 & 158/7 (74 ov, target 290)`,
/// `242 & 51/0 (14 ov) (f/o)`; the overs in brackets belong to the last innings.
fn side_innings(c: &RawCompetitor) -> Vec<Innings> {
    let Some(score) = c.score.as_deref() else {
        return Vec::new();
    };
    score
        .split('&')
        .filter_map(|part| {
            let (runs, notes) = part.split_once('(').unwrap_or((part, ""));
            let mut innings = Innings::parse(runs)?;
            let overs = notes.split([' ', ',', ')']).next().unwrap_or_default();
            let overs = overs.split('/').next().unwrap_or_default();
            if !overs.is_empty() && overs.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                innings.overs = Some(overs.into());
            }
            Some(innings)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::result::{Margin, Outcome};
    use crate::cricket::MatchResult;

    /// The 2018–2020 match page whose score strip holds 26 scoreboard events (21 finished).
    const OLD_LAYOUT: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/espncricinfo/old-layout_match-page_1213062_2020-02-07.html"
    ));

    /// Every event object of the page's score strip (`espn.scoreboard`'s `data: {"sports": …}`),
    /// with its league's name.
    fn events() -> Vec<(serde_json::Value, Option<String>)> {
        let at = OLD_LAYOUT.find("data: {\"sports\"").unwrap() + "data: ".len();
        let state: serde_json::Value = serde_json::Deserializer::from_str(&OLD_LAYOUT[at..])
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        fn walk(v: &serde_json::Value, out: &mut Vec<(serde_json::Value, Option<String>)>) {
            match v {
                serde_json::Value::Object(map) => {
                    if let Some(serde_json::Value::Array(events)) = map.get("events") {
                        let league = map.get("name").and_then(|n| n.as_str()).map(str::to_string);
                        for e in events.iter().filter(|e| e.get("competitors").is_some()) {
                            out.push((e.clone(), league.clone()));
                        }
                    }
                    map.values().for_each(|v| walk(v, out));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(&state, &mut out);
        out
    }

    #[test]
    fn a_finished_event_gives_its_summary_line_scores_and_winner_flag_as_its_ending() {
        let matches: Vec<Match> = events()
            .into_iter()
            .filter_map(|(e, league)| to_match(e, league.as_deref())?.ok())
            .collect();
        let finished: Vec<&Match> = matches.iter().filter(|m| m.state == MatchState::Complete).collect();
        // Counted in the page with a separate script: 21 events with state "post".
        assert_eq!(finished.len(), 21);
        assert!(matches
            .iter()
            .filter(|m| m.state != MatchState::Complete)
            .all(|m| m.ending.is_none()));
        let results: Vec<MatchResult> = finished.iter().map(|m| MatchResult::read(m).unwrap()).collect();
        assert_eq!(results.iter().filter(|r| r.outcome == Outcome::Drawn).count(), 6);
        // The 15 wins: each the side the scoreboard flags as the winner.
        let flagged: Vec<Option<usize>> = finished.iter().map(|m| m.ending.as_ref().unwrap().winner).collect();
        let won: Vec<Option<usize>> = results
            .iter()
            .map(|r| match r.outcome {
                Outcome::Won { winner, .. } => Some(winner),
                _ => None,
            })
            .collect();
        assert_eq!(won.iter().flatten().count(), 15);
        assert_eq!(won, flagged);
        // "J + K won by 329 runs": the line's short name fits no side; the winner flag does.
        let jk = finished
            .iter()
            .position(|m| m.teams[1].name == "Jammu & Kashmir")
            .unwrap();
        assert_eq!(
            results[jk].outcome,
            Outcome::Won {
                winner: 1,
                margin: Some(Margin::Runs(329))
            }
        );
        // "Saurashtra 335 & 158/7 (74 ov, target 290)" against "Mumbai 262 & 362/7d".
        let sau = finished.iter().position(|m| m.teams[0].name == "Saurashtra").unwrap();
        let scores = &finished[sau].ending.as_ref().unwrap().scores;
        assert_eq!(crate::cricket::result::score_line(&scores[0]), "335 & 158/7 (74 ov)");
        assert_eq!(crate::cricket::result::score_line(&scores[1]), "262 & 362/7d");
    }
}
