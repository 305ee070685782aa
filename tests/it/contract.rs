//! The contract every parser keeps (issue 20): the same facts come out the same way whichever
//! source they were read from. Abandoned is abandoned everywhere, a finished match is never
//! live, and formats follow the one table of `cricket::format` (a Sheffield Shield "TEST" is
//! first-class, an A-team "ODI" List A).
//!
//! The first tests run every parser over every real fixture and judge each match by its own
//! status line and teams, with rules written here independently of the parsers. The last one
//! gives each parser the same facts in its own shape (built from a real fixture object, values
//! replaced) and checks they all answer alike.

use crate::helpers::fixture;
use chrono::Datelike;
use cricket_announcer::cricket::{Format, Match, MatchState};
use cricket_announcer::source::SourceKind;
use serde_json::json;

/// Every fixture with the kind that reads it.
const FIXTURES: &[(&str, &str)] = &[
    ("cricbuzz", "cricbuzz/live-scores_2026-07-17.html"),
    ("cricbuzz-json", "cricbuzz/matches-v1-live_2024-06-16.json"),
    ("cricbuzz-json", "cricbuzz/matches-v1-upcoming_2024-06-16.json"),
    (
        "css:cricbuzz-2018",
        "cricbuzz/old-layout_match-page_20082_2018-04-23.html",
    ),
    (
        "css:cricbuzz-2018",
        "cricbuzz/old-layout_match-page_20082_2018-04-23_unrendered-template.html",
    ),
    ("cricketdata", "cricketdata/current-matches_2026-05-18.json"),
    (
        "espncricinfo",
        "espncricinfo/series-match-results_ipl-2022_2022-07-27.html",
    ),
    (
        "espncricinfo",
        "espncricinfo/match-page_1478914_2026-02-21_rendered.html",
    ),
    (
        "css:espncricinfo-2020",
        "espncricinfo/old-layout_match-page_1213062_2020-02-07.html",
    ),
    ("espn-rss", "espncricinfo/rss-livescores_2019-01-31.xml"),
    ("espn-rss", "espncricinfo/rss-livescores_2020-02-07.xml"),
];

fn every_fixture_match() -> Vec<(&'static str, Match)> {
    let mut all = Vec::new();
    for (kind, file) in FIXTURES {
        let kind: SourceKind = kind.parse().expect("kind");
        let matches = kind.parse(&fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        all.extend(matches.into_iter().map(|m| (*file, m)));
    }
    all
}

fn status(m: &Match) -> String {
    m.status.as_deref().unwrap_or_default().to_lowercase()
}

/// Judged here, not by the parsers' rule: a status naming no result, abandonment or
/// cancellation.
fn says_abandoned(m: &Match) -> bool {
    let s = status(m);
    ["no result", "abandon", "cancel"].iter().any(|w| s.contains(w))
}

/// A status naming a result.
fn says_finished(m: &Match) -> bool {
    let s = status(m);
    ["won by", "match drawn", "match tied"].iter().any(|w| s.contains(w))
}

#[test]
fn abandoned_is_abandoned_in_every_source() {
    let all = every_fixture_match();
    let abandoned: Vec<(&str, &str)> = all
        .iter()
        .filter(|(_, m)| says_abandoned(m))
        .map(|(file, m)| (*file, m.source_id.as_str()))
        .collect();
    // The fixtures' no-result matches, one per site that has any.
    assert_eq!(
        abandoned,
        [
            (
                "cricketdata/current-matches_2026-05-18.json",
                "78702027-ac80-4814-be92-fdb5b7d89e4e"
            ),
            ("espncricinfo/match-page_1478914_2026-02-21_rendered.html", "1512759"),
        ]
    );
    for (file, m) in &all {
        assert_eq!(
            m.state == MatchState::Abandoned,
            says_abandoned(m),
            "{file} {}: {:?} with status {:?}",
            m.source_id,
            m.state,
            m.status
        );
    }
}

#[test]
fn a_finished_match_is_never_live_in_any_source() {
    let all = every_fixture_match();
    let mut finished = 0;
    for (file, m) in &all {
        if says_finished(m) {
            finished += 1;
            assert_eq!(m.state, MatchState::Complete, "{file} {}: {:?}", m.source_id, m.status);
        }
    }
    // 4 Cricbuzz JSON, 23 CricketData, 70 ESPNcricinfo, and the rest of the pages.
    assert!(finished >= 100, "only {finished} finished matches checked");
    // The RSS feed has no status words, only scores: these two titles fit a finished one-day
    // match (New Zealand passed India's all-out 92; Pakistan Women were all out chasing) as
    // well as a first-class match in progress, so they are unknown, never live.
    for id in ["1153694", "1172469"] {
        let (_, m) = all
            .iter()
            .find(|(file, m)| file.ends_with(".xml") && m.source_id == id)
            .expect("RSS item present");
        assert_eq!(m.state, MatchState::Other, "{id}: {:?}", m.status);
    }
    // And no source calls a match live whose status says it has not started.
    for (file, m) in &all {
        if status(m).contains("not started") || status(m).contains("yet to begin") {
            assert_eq!(m.state, MatchState::Upcoming, "{file} {}", m.source_id);
        }
    }
}

/// Judged here: an A team or a youth side.
fn second_tier(name: &str) -> bool {
    let n = name.to_lowercase();
    n.ends_with(" a") || n.ends_with(" a women") || n.contains("u19") || n.contains("under-19") || n == "england lions"
}

#[test]
fn formats_follow_one_table_in_every_source() {
    let all = every_fixture_match();
    let mut checked = 0;
    let mut members = 0;
    for (file, m) in &all {
        let international = matches!(m.format, Format::Test | Format::Odi | Format::T20i);
        if m.teams.iter().any(|t| second_tier(&t.name)) {
            checked += 1;
            assert!(
                !international,
                "{file} {}: {} is {:?}",
                m.source_id,
                m.title(),
                m.format
            );
        }
        let series = m.series.as_deref().unwrap_or_default();
        let domestic = [
            "County Championship",
            "One-Day Cup",
            "Indian Premier League",
            "T20 Blast",
            "Inter-Provincial",
        ];
        if domestic.iter().any(|d| series.contains(d)) {
            checked += 1;
            assert!(
                matches!(m.format, Format::FirstClass | Format::ListA | Format::T20),
                "{file} {}: {series} is {:?}",
                m.source_id,
                m.format
            );
        }
        let description = m.description.as_deref().unwrap_or_default();
        if description.contains("T20I") && !m.teams.iter().any(|t| second_tier(&t.name)) {
            checked += 1;
            assert_eq!(m.format, Format::T20i, "{file} {}: {description}", m.source_id);
        }
        // Issue 35: every T20 between two ICC members' national sides of one gender since
        // 2019 is a T20I, whatever the page calls it or files it under.
        let twenty = matches!(m.format, Format::T20 | Format::T20i);
        let since_2019 = m.start_time.is_some_and(|t| t.year() >= 2019);
        if twenty && since_2019 {
            if let [Some(a), Some(b)] = m.teams.each_ref().map(|t| member_side(&t.name)) {
                if a == b {
                    checked += 1;
                    members += 1;
                    assert_eq!(m.format, Format::T20i, "{file} {}: {}", m.source_id, m.title());
                }
            }
        }
        // And a county, a franchise or an A side is never in a Test, ODI or T20I.
        if m.teams
            .iter()
            .any(|t| NOT_NATIONAL.contains(&t.name.as_str()) || second_tier(&t.name))
        {
            checked += 1;
            assert!(
                !international,
                "{file} {}: {} is {:?}",
                m.source_id,
                m.title(),
                m.format
            );
        }
    }
    assert!(checked >= 80, "only {checked} formats checked");
    // The fixtures' members' T20s: 16 CricketData qualifier games and 2 Cricbuzz women's
    // games that no source calls T20Is, and the pages' named T20Is.
    assert!(members >= 60, "only {members} members' T20s checked");
}

/// Judged here, from the ICC's member list: the members whose national sides the fixtures
/// name. `Some(true)` for a women's side, `Some(false)` for a men's, `None` for any other name.
fn member_side(name: &str) -> Option<bool> {
    const MEMBERS: &[&str] = &[
        "Afghanistan",
        "Australia",
        "Austria",
        "Bangladesh",
        "China",
        "Cook Islands",
        "Croatia",
        "Cyprus",
        "Czech Republic",
        "Denmark",
        "England",
        "Estonia",
        "Fiji",
        "France",
        "Germany",
        "Gibraltar",
        "Guernsey",
        "Hong Kong",
        "India",
        "Indonesia",
        "Ireland",
        "Israel",
        "Japan",
        "Jersey",
        "Malaysia",
        "Malta",
        "Namibia",
        "Nepal",
        "Netherlands",
        "New Zealand",
        "Oman",
        "Pakistan",
        "Papua New Guinea",
        "Philippines",
        "Romania",
        "Samoa",
        "Scotland",
        "Slovenia",
        "South Africa",
        "South Korea",
        "Sri Lanka",
        "Sweden",
        "Switzerland",
        "Turkey",
        "United Arab Emirates",
        "United States",
        "Vanuatu",
        "West Indies",
        "Zimbabwe",
    ];
    let (base, women) = match name.strip_suffix(" Women") {
        Some(base) => (base, true),
        None => (name, false),
    };
    MEMBERS.contains(&base).then_some(women)
}

/// Judged here: sides of the fixtures that are counties, franchises, states or clubs.
const NOT_NATIONAL: &[&str] = &[
    "Surrey",
    "Sussex",
    "Kent",
    "Essex",
    "Durham",
    "Yorkshire",
    "Lancashire",
    "Washington Freedom",
    "San Francisco Unicorns",
    "Surrey Women",
    "The Blaze Women",
    "Hampshire Women",
    "Durham Women",
    "Jaffna Kings",
    "Galle Marvels",
    "Victoria",
    "Western Australia",
    "Tasmania",
    "New South Wales",
    "Queensland",
    "South Australia",
    "Mumbai Indians",
    "Chennai Super Kings",
];

/// The facts of the issue (a no-result match reported "Complete", a Sheffield Shield match
/// called "TEST", an A-team one-dayer called "ODI", a match flagged started whose status says
/// it has not) given to each parser in its own shape: each real fixture's first match object,
/// with its values replaced.
#[test]
fn the_same_facts_come_out_the_same_from_every_parser() {
    struct Facts {
        teams: [&'static str; 2],
        description: &'static str,
        series: &'static str,
        word: &'static str,
        /// Cricbuzz's group: "International", "Domestic", "Women".
        group: &'static str,
        /// ESPNcricinfo's `internationalClassId`: removed (as on a match page's side lists),
        /// null (domestic), or a class.
        espn_class: Option<Option<u64>>,
        status: &'static str,
        state: (&'static str, &'static str, bool),
        want: (MatchState, Format),
    }
    let cases = [
        Facts {
            teams: ["Victoria", "Queensland"],
            description: "7th Match",
            series: "Sheffield Shield 2025-26",
            word: "TEST",
            group: "Domestic",
            espn_class: Some(None),
            status: "Day 2: Stumps - Victoria lead by 56 runs",
            state: ("In Progress", "LIVE", true),
            want: (MatchState::Live, Format::FirstClass),
        },
        Facts {
            teams: ["Sri Lanka A Women", "New Zealand A Women"],
            description: "2nd Unofficial ODI",
            series: "New Zealand A Women tour of Sri Lanka, 2026",
            word: "ODI",
            group: "International",
            espn_class: None,
            status: "No result due to rain",
            state: ("Complete", "POST", true),
            want: (MatchState::Abandoned, Format::ListA),
        },
        Facts {
            teams: ["India U19", "Australia U19"],
            description: "1st Youth Test",
            series: "Australia U19 tour of India, 2026",
            word: "TEST",
            group: "International",
            espn_class: None,
            status: "Match not started",
            state: ("In Progress", "PRE", true),
            want: (MatchState::Upcoming, Format::FirstClass),
        },
        // Issue 35: formats from the teams' status. A women's ICC qualifier game, which Cricbuzz
        // files under "Women" and no source calls a T20I: two members' women's sides, so a T20I.
        Facts {
            teams: ["Croatia Women", "Gibraltar Women"],
            description: "5th Match",
            series: "Women Central Europe Cup, 2024",
            word: "T20",
            group: "Women",
            espn_class: None,
            status: "Match starts at Jun 16, 08:00 GMT",
            state: ("Preview", "PRE", false),
            want: (MatchState::Upcoming, Format::T20i),
        },
        // Two full members' men's sides in a T20 a source files as domestic: a T20I.
        Facts {
            teams: ["Zimbabwe", "Bangladesh"],
            description: "1st Match",
            series: "Zimbabwe Tri-Series, 2026",
            word: "T20",
            group: "Domestic",
            espn_class: Some(None),
            status: "Bangladesh won by 7 wkts",
            state: ("Complete", "POST", true),
            want: (MatchState::Complete, Format::T20i),
        },
        // A touring side's four-day warm-up against a county, listed under the tour as a Test
        // (ESPNcricinfo's class 1): first-class.
        Facts {
            teams: ["Sussex", "India"],
            description: "Tour Match",
            series: "India tour of England, 2026",
            word: "TEST",
            group: "International",
            espn_class: Some(Some(1)),
            status: "Day 1: Stumps - India lead by 12 runs",
            state: ("In Progress", "LIVE", true),
            want: (MatchState::Live, Format::FirstClass),
        },
        // An A side's T20 against a national side, filed as international: a T20.
        Facts {
            teams: ["India A", "Afghanistan"],
            description: "2nd T20",
            series: "Afghanistan tour of India, 2026",
            word: "T20",
            group: "International",
            espn_class: Some(Some(3)),
            status: "Match not started",
            state: ("Preview", "PRE", false),
            want: (MatchState::Upcoming, Format::T20),
        },
    ];
    for f in &cases {
        let mut got = Vec::new();

        // Cricbuzz's API: the real live answer, its first matchInfo rewritten.
        let mut answer: serde_json::Value =
            serde_json::from_str(&fixture("cricbuzz/matches-v1-live_2024-06-16.json")).unwrap();
        let group = &mut answer["typeMatches"][0];
        group["matchType"] = json!(f.group);
        let info = &mut group["seriesMatches"][0]["seriesAdWrapper"]["matches"][0]["matchInfo"];
        info["team1"]["teamName"] = json!(f.teams[0]);
        info["team2"]["teamName"] = json!(f.teams[1]);
        info["matchDesc"] = json!(f.description);
        info["seriesName"] = json!(f.series);
        info["matchFormat"] = json!(f.word);
        info["state"] = json!(f.state.0);
        info["status"] = json!(f.status);
        let id = info["matchId"].to_string();
        got.push((
            "cricbuzz-json",
            pick(SourceKind::CricbuzzJson, &answer.to_string(), &id),
        ));

        // CricketData: the real answer, its first item rewritten (no field says domestic).
        let mut answer: serde_json::Value =
            serde_json::from_str(&fixture("cricketdata/current-matches_2026-05-18.json")).unwrap();
        let item = &mut answer["data"][0];
        item["teams"] = json!(f.teams);
        item["name"] = json!(format!(
            "{} vs {}, {}, {}",
            f.teams[0], f.teams[1], f.description, f.series
        ));
        item["matchType"] = json!(f.word.to_lowercase());
        item["status"] = json!(f.status);
        item["matchStarted"] = json!(f.state.2);
        item["matchEnded"] = json!(f.state.1 == "POST");
        let id = item["id"].as_str().unwrap().to_string();
        got.push(("cricketdata", pick(SourceKind::Cricketdata, &answer.to_string(), &id)));

        // ESPNcricinfo: the real Next.js data of the match page, its own match rewritten
        // (class ids removed, as on the match page's side lists).
        let page = fixture("espncricinfo/match-page_1478914_2026-02-21_rendered.html");
        let start = page.find("<script id=\"__NEXT_DATA__\"").unwrap();
        let body = start + page[start..].find('>').unwrap() + 1;
        let end = body + page[body..].find("</script>").unwrap();
        let mut data: serde_json::Value = serde_json::from_str(&page[body..end]).unwrap();
        let id = first_match_id(&data).expect("a match object");
        // Every copy of the match (the strip, the page's own data) carries the same facts.
        rewrite_match_objects(&mut data, id, &|m| {
            let object = m.as_object_mut().unwrap();
            for key in ["internationalClassId", "generalClassId", "resultStatus"] {
                object.remove(key);
            }
            if let Some(class) = f.espn_class {
                object.insert("internationalClassId".into(), json!(class));
            }
            m["teams"][0]["team"]["longName"] = json!(f.teams[0]);
            m["teams"][1]["team"]["longName"] = json!(f.teams[1]);
            m["title"] = json!(f.description);
            m["series"]["longName"] = json!(f.series);
            m["format"] = json!(f.word);
            m["state"] = json!(f.state.1);
            m["statusText"] = json!(f.status);
            m["status"] = json!("");
        });
        let id = id.to_string();
        let page = format!("{}{}{}", &page[..body], data, &page[end..]);
        got.push(("espncricinfo", pick(SourceKind::Espncricinfo, &page, &id)));

        for (kind, m) in &got {
            assert_eq!(
                (m.state, m.format.clone()),
                f.want,
                "{kind}: {:?} {}",
                f.teams,
                f.status
            );
        }
    }
}

fn pick(kind: SourceKind, page: &str, id: &str) -> Match {
    let id = id.trim_matches('"');
    kind.parse(page)
        .expect("parses")
        .into_iter()
        .find(|m| m.source_id == id)
        .unwrap_or_else(|| panic!("{kind}: no match {id}"))
}

fn is_match_object(v: &serde_json::Value) -> bool {
    v.get("objectId").is_some_and(serde_json::Value::is_u64)
        && v.get("teams").and_then(|t| t.as_array()).is_some_and(|t| t.len() == 2)
        && v.get("state").is_some_and(serde_json::Value::is_string)
}

/// The `objectId` of some object with an `objectId`, two `teams` and a `state`.
fn first_match_id(v: &serde_json::Value) -> Option<u64> {
    if is_match_object(v) {
        return v["objectId"].as_u64();
    }
    match v {
        serde_json::Value::Object(map) => map.values().find_map(first_match_id),
        serde_json::Value::Array(items) => items.iter().find_map(first_match_id),
        _ => None,
    }
}

/// Applies `edit` to every match object with this `objectId`.
fn rewrite_match_objects(v: &mut serde_json::Value, id: u64, edit: &dyn Fn(&mut serde_json::Value)) {
    if is_match_object(v) && v["objectId"].as_u64() == Some(id) {
        edit(v);
        return;
    }
    match v {
        serde_json::Value::Object(map) => map.values_mut().for_each(|c| rewrite_match_objects(c, id, edit)),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|c| rewrite_match_objects(c, id, edit)),
        _ => {}
    }
}
