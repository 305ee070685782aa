//! Results read from the real saved pages, each checked against what the page itself says
//! elsewhere than in its result line: ESPNcricinfo's `winnerTeamId` and `resultStatus`, and on
//! every page each side's runs and wickets (a side that batted first and won by runs made that
//! many more; a side that won by wickets lost that many fewer than ten). The evidence is read
//! here from the page's raw JSON, by code of the test's own, not by the parsers under test.

use crate::helpers::fixture;
use cricket_announcer::cricket::result::{Margin, Method, Outcome};
use cricket_announcer::cricket::{Match, MatchResult, MatchState};
use cricket_announcer::source::SourceKind;
use serde_json::Value;
use std::collections::HashMap;

/// What a page says of one finished match, outside its result line.
#[derive(Debug)]
struct Evidence {
    /// The two sides' names, in the page's order.
    teams: [String; 2],
    /// The result line (only to say which kind of margin, and whether DLS, a line states).
    line: String,
    /// Each side's innings as (runs, wickets lost), in the page's team order.
    scores: [Vec<(u32, u32)>; 2],
    /// The winner by the page's own result field, when it has one.
    winner: Option<usize>,
    /// ESPNcricinfo's `resultStatus`: 1 a result, 5 no result.
    result_status: Option<i64>,
}

/// Every object of `json` (depth first) for which `pick` says yes.
fn objects<'a>(json: &'a Value, pick: &dyn Fn(&serde_json::Map<String, Value>) -> bool, out: &mut Vec<&'a Value>) {
    match json {
        Value::Object(map) => {
            if pick(map) {
                out.push(json);
            }
            map.values().for_each(|v| objects(v, pick, out));
        }
        Value::Array(items) => items.iter().for_each(|v| objects(v, pick, out)),
        _ => {}
    }
}

fn number(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// `176/6` → (176, 6); `274` → (274, 10): a score printed without wickets is all out.
fn printed(score: &str) -> Vec<(u32, u32)> {
    score
        .split('&')
        .map(|i| {
            let i = i.trim().trim_end_matches('d').trim();
            match i.split_once('/') {
                Some((r, w)) => (r.parse().unwrap(), w.parse().unwrap()),
                None => (i.parse().unwrap(), 10),
            }
        })
        .collect()
}

/// Cricbuzz's `matchScore` side: `{"inngs1": {"runs": 238, "wickets": 6}}`.
fn cricbuzz_side(side: &Value) -> Vec<(u32, u32)> {
    ["inngs1", "inngs2"]
        .iter()
        .filter_map(|k| side.get(*k))
        .map(|i| {
            (
                number(&i["runs"]).unwrap(),
                i.get("wickets").and_then(number).unwrap_or(0),
            )
        })
        .collect()
}

/// Cricbuzz's listings (`{"matchInfo": …, "matchScore": …}`), finished ones, by match id.
fn cricbuzz_evidence(listings: &[&Value]) -> HashMap<String, Evidence> {
    let mut out = HashMap::new();
    for listing in listings {
        let info = &listing["matchInfo"];
        if !matches!(info["state"].as_str(), Some("Complete")) {
            continue;
        }
        let score = &listing["matchScore"];
        out.entry(info["matchId"].to_string()).or_insert_with(|| Evidence {
            teams: [
                info["team1"]["teamName"].as_str().unwrap().to_string(),
                info["team2"]["teamName"].as_str().unwrap().to_string(),
            ],
            line: info["status"].as_str().unwrap().to_string(),
            scores: [cricbuzz_side(&score["team1Score"]), cricbuzz_side(&score["team2Score"])],
            winner: None,
            result_status: None,
        });
    }
    out
}

/// The Cricbuzz web page's payload: the JSON strings pushed with `self.__next_f.push([1, "…"])`,
/// joined, and every listing object in it.
fn cricbuzz_page(page: &str) -> HashMap<String, Evidence> {
    let mut payload = String::new();
    let opening = "self.__next_f.push([1,";
    let mut rest = page;
    while let Some(at) = rest.find(opening) {
        rest = &rest[at + opening.len()..];
        let chunk: String = serde_json::Deserializer::from_str(rest)
            .into_iter::<String>()
            .next()
            .unwrap()
            .unwrap();
        payload.push_str(&chunk);
    }
    let mut listings = Vec::new();
    // A listing is `{"matchInfo": …, "matchScore": …}`, on its own or inside `{"match": …}`.
    let key = "{\"matchInfo\":";
    let mut from = 0;
    while let Some(at) = payload[from..].find(key) {
        let start = from + at;
        let listing: Value = serde_json::Deserializer::from_str(&payload[start..])
            .into_iter::<Value>()
            .next()
            .unwrap()
            .unwrap();
        listings.push(listing);
        from = start + key.len();
    }
    let refs: Vec<&Value> = listings.iter().collect();
    cricbuzz_evidence(&refs)
}

fn cricbuzz_api(page: &str) -> HashMap<String, Evidence> {
    let json: Value = serde_json::from_str(page).unwrap();
    let mut listings = Vec::new();
    objects(&json, &|m| m.contains_key("matchInfo"), &mut listings);
    cricbuzz_evidence(&listings)
}

/// CricketData's `data[]`: the score entries name their side before ` Inning 1`, or (a quirk of
/// cricapi's) both sides, for the side that batted second.
fn cricketdata(page: &str) -> HashMap<String, Evidence> {
    let json: Value = serde_json::from_str(page).unwrap();
    let mut out = HashMap::new();
    for item in json["data"].as_array().unwrap() {
        if item["matchEnded"] != Value::Bool(true) {
            continue;
        }
        let teams = [
            item["teams"][0].as_str().unwrap().to_string(),
            item["teams"][1].as_str().unwrap().to_string(),
        ];
        let mut scores: [Vec<(u32, u32)>; 2] = [Vec::new(), Vec::new()];
        let entries = item["score"].as_array().unwrap();
        let side_of = |inning: &str| {
            let named = inning.split(" Inning").next().unwrap();
            teams.iter().position(|t| t.eq_ignore_ascii_case(named))
        };
        let alone: Vec<usize> = entries
            .iter()
            .filter_map(|e| side_of(e["inning"].as_str().unwrap()))
            .collect();
        for e in entries {
            let side = side_of(e["inning"].as_str().unwrap()).unwrap_or_else(|| 1 - alone[0]);
            scores[side].push((number(&e["r"]).unwrap(), number(&e["w"]).unwrap()));
        }
        out.insert(
            item["id"].as_str().unwrap().to_string(),
            Evidence {
                teams,
                line: item["status"].as_str().unwrap().to_string(),
                scores,
                winner: None,
                result_status: None,
            },
        );
    }
    out
}

/// ESPNcricinfo's match objects in `__NEXT_DATA__`: `winnerTeamId`, `resultStatus`, and each
/// side's printed `score`.
fn espncricinfo(page: &str) -> HashMap<String, Evidence> {
    let start = page.find("<script id=\"__NEXT_DATA__\"").unwrap();
    let start = start + page[start..].find('>').unwrap() + 1;
    let end = start + page[start..].find("</script>").unwrap();
    let json: Value = serde_json::from_str(&page[start..end]).unwrap();
    let mut found = Vec::new();
    objects(
        &json,
        &|m| m.contains_key("statusText") && m.contains_key("teams") && m.contains_key("objectId"),
        &mut found,
    );
    let mut out = HashMap::new();
    for m in found {
        if m["state"] != "POST" {
            continue;
        }
        let sides = m["teams"].as_array().unwrap();
        let winner = m["winnerTeamId"]
            .as_u64()
            .map(|id| sides.iter().position(|s| s["team"]["id"].as_u64() == Some(id)).unwrap());
        out.entry(m["objectId"].to_string()).or_insert_with(|| Evidence {
            teams: [0, 1].map(|i| sides[i]["team"]["longName"].as_str().unwrap().to_string()),
            line: m["statusText"].as_str().unwrap().to_string(),
            scores: [0, 1].map(|i| sides[i]["score"].as_str().map(printed).unwrap_or_default()),
            winner,
            result_status: m["resultStatus"].as_i64(),
        });
    }
    out
}

/// Reads a page's evidence by finished match id.
type ReadEvidence = fn(&str) -> HashMap<String, Evidence>;

/// Checks `result` (read by the bot from `m`) against `evidence`; returns what was checked.
fn check(m: &Match, result: &MatchResult, e: &Evidence) -> &'static str {
    let line = e.line.to_lowercase();
    let dls = line.contains("dls") || line.contains("d/l");
    assert_eq!(
        result.method == Some(Method::Dls),
        dls,
        "{}: DLS as the line says",
        e.line
    );
    assert_eq!(
        [m.teams[0].name.as_str(), m.teams[1].name.as_str()],
        [e.teams[0].as_str(), e.teams[1].as_str()],
        "the bot's team order is the page's"
    );
    let Outcome::Won { winner, margin } = result.outcome else {
        assert_eq!(e.winner, None, "{}: the page names no winner", e.line);
        if let Some(status) = e.result_status {
            assert_eq!(status == 5, result.outcome == Outcome::NoResult, "{}", e.line);
        }
        return "no winner";
    };
    let one_innings_each = e.scores.iter().all(|s| s.len() == 1);
    // The page's scores against its own line: a side that won by runs made that many more, by
    // wickets lost ten less that many. Where they disagree the page contradicts itself, and the
    // bot posts the line's result without the scores.
    if one_innings_each && !dls {
        let agree = |side: usize| {
            let (won, lost) = (e.scores[side][0], e.scores[1 - side][0]);
            match margin {
                Some(Margin::Runs(n)) => won.0.checked_sub(lost.0) == Some(n),
                Some(Margin::Wickets(n)) => won.0 > lost.0 && 10 - won.1 == n,
                _ => true,
            }
        };
        if !agree(winner) {
            let named = e.teams.iter().position(|t| e.line.starts_with(t.as_str()));
            assert_eq!(Some(winner), named, "{}: the side the line names", e.line);
            assert!(agree(1 - winner), "{}: the scores fit the other side", e.line);
            assert!(result.scores.iter().all(Vec::is_empty), "{}: no scores posted", e.line);
            return "winner; the page's scores contradict its line and are left out";
        }
        assert_eq!(
            result
                .scores
                .clone()
                .map(|s| s.iter().map(|i| i.runs).collect::<Vec<_>>()),
            e.scores.clone().map(|s| s.iter().map(|i| i.0).collect::<Vec<_>>()),
            "{}: the scores posted are the page's",
            e.line
        );
    }
    // Whom the page's own fields say won: its winner field, else the side with more runs in a
    // match of one innings each (DLS can reverse that, so DLS wins are only checked by field).
    let by_page = e.winner.or_else(|| {
        if !one_innings_each || dls {
            return None;
        }
        let (a, b) = (e.scores[0][0].0, e.scores[1][0].0);
        (a != b).then_some(usize::from(b > a))
    });
    let Some(by_page) = by_page else {
        // A DLS win on a page with no winner field: only the line names the winner, by a
        // side's full name.
        let named = e.teams.iter().position(|t| e.line.starts_with(t.as_str()));
        assert_eq!(Some(winner), named, "{}: the side the line names", e.line);
        return "winner (named in full by the line)";
    };
    assert_eq!(winner, by_page, "{}: the winner the page's fields give", e.line);
    if !one_innings_each || dls {
        return "winner";
    }
    let (won, lost) = (e.scores[winner][0], e.scores[1 - winner][0]);
    match margin {
        Some(Margin::Runs(n)) => assert_eq!(n, won.0 - lost.0, "{}: runs margin", e.line),
        Some(Margin::Wickets(n)) => assert_eq!(n, 10 - won.1, "{}: wickets margin", e.line),
        other => panic!("{}: {other:?}", e.line),
    }
    "winner and margin"
}

#[test]
fn every_finished_match_on_the_saved_pages_gives_the_winner_margin_and_method_its_page_states() {
    let pages: [(SourceKind, &str, ReadEvidence); 5] = [
        (
            SourceKind::Cricbuzz,
            "cricbuzz/live-scores_2026-07-17.html",
            cricbuzz_page,
        ),
        (
            SourceKind::CricbuzzJson,
            "cricbuzz/matches-v1-live_2024-06-16.json",
            cricbuzz_api,
        ),
        (
            SourceKind::Cricketdata,
            "cricketdata/current-matches_2026-05-18.json",
            cricketdata,
        ),
        (
            SourceKind::Espncricinfo,
            "espncricinfo/match-page_1478914_2026-02-21_rendered.html",
            espncricinfo,
        ),
        (
            SourceKind::Espncricinfo,
            "espncricinfo/series-match-results_ipl-2022_2022-07-27.html",
            espncricinfo,
        ),
    ];
    let mut checked: HashMap<&str, usize> = HashMap::new();
    let mut total = 0;
    for (kind, file, evidence) in pages {
        let page = fixture(file);
        let evidence = evidence(&page);
        let finished: Vec<Match> = kind
            .parse(&page)
            .unwrap()
            .into_iter()
            .filter(|m| matches!(m.state, MatchState::Complete | MatchState::Abandoned))
            .collect();
        assert_eq!(
            finished.len(),
            evidence.len(),
            "{file}: every finished match the page lists"
        );
        for m in &finished {
            let e = &evidence[m.source_id.as_str()];
            let result = MatchResult::read(m).unwrap_or_else(|why| panic!("{file}: {}: {why:?}", e.line));
            *checked.entry(check(m, &result, e)).or_default() += 1;
            total += 1;
        }
    }
    assert!(total > 100, "{total} finished matches");
    eprintln!("{total} finished matches checked: {checked:?}");
    // Nearly all are checked down to the margin; DLS and two-innings results by the winner.
    assert!(checked["winner and margin"] >= 95, "{checked:?}");
}

#[test]
fn a_source_that_cannot_tell_a_result_gives_none() {
    let page = fixture("espncricinfo/rss-livescores_2019-01-31.xml");
    for m in SourceKind::EspnRss.parse(&page).unwrap() {
        assert!(m.ending.is_none(), "{:?}", m.status);
        assert!(MatchResult::read(&m).is_err());
    }
}
