//! The parser for ESPNcricinfo's live-scores RSS feed (`static.cricinfo.com/rss/livescores.xml`):
//! feed text in, [`Match`]es out, no I/O.
//!
//! The feed is RSS 2.0, `rss > channel > item`, one item per current match, and says very little:
//! the `title` is the score line ("Australia 192/2 * v Sri Lanka"; `&` separates a side's two
//! innings, `*` marks the side batting, `d` a declaration) and the `guid` is the match page's URL,
//! `http://www.cricinfo.com/ci/engine/match/<id>.html`, whose number is ESPNcricinfo's match id
//! (`description` repeats the title; `link` is the guid plus a tracking query). There is no series,
//! description, format, venue, start time or state: the teams are read out of the title, and the
//! state is guessed from whether the title carries a score (see [`parse`]).
//!
//! The XML is read with `roxmltree`, which rejects DTDs, so entity-expansion bombs never expand.

use crate::cricket::{Format, Match, MatchState, Site, Team};
use crate::source::ParseError;
use roxmltree::{Document, Node};
use std::collections::HashSet;
use url::Url;

/// Match pages as the feed's `guid`s name them, on ESPNcricinfo's current host and over HTTPS
/// (the feed's own `http://www.cricinfo.com/…` redirects there).
const MATCH_URL_PREFIX: &str = "https://www.espncricinfo.com/ci/engine/match/";

/// ESPNcricinfo ids are 6 to 7 digits today; the bound only keeps junk out.
const MAX_ID_DIGITS: usize = 12;

/// Deepest element nesting handed to `roxmltree`. Its parser recurses once per level, so a feed
/// of thousands of nested tags would overflow the stack and abort the process; the live-scores
/// feed nests four deep (`rss > channel > item > title`).
const MAX_DEPTH: usize = 64;

/// Reads every match in an ESPNcricinfo live-scores RSS feed.
///
/// Returns one [`Match`] per match id (site [`Site::Espncricinfo`]), in feed order; a later item
/// with an id already read is dropped. The `source_id` is the number in the item's `guid`, which
/// must be exactly a cricinfo.com or espncricinfo.com URL ending `/match/<digits>.html`: an item
/// whose `guid` is anything else (missing, junk, junk around a URL) is skipped rather than guessed
/// at. The URL is `https://www.espncricinfo.com/ci/engine/match/<id>.html`. The two team names are
/// the title's two sides around " v ", with scores, `&`, `*` and declarations removed; an item
/// whose title does not split into two named sides is skipped.
///
/// The feed has no state. A title with a score means play has begun, so the match is
/// [`MatchState::Live`] (a finished match that is still listed also looks like this: the feed does
/// not say); a title without any score is [`MatchState::Upcoming`]. When there is a score, the
/// cleaned title is kept as the status; the format is [`Format::Other`] with an empty word, and
/// series, description, venue and start time are `None`: the feed does not say.
///
/// # Errors
///
/// - [`ParseError::Empty`] when the text is empty or only whitespace;
/// - [`ParseError::LayoutNotRecognised`] when it is not well-formed XML (including any XML with a
///   DTD) or has no `rss > channel`;
/// - [`ParseError::NoMatches`] when the channel has no item with a match id in its `guid` and a
///   "Team v Team" title.
pub fn parse(page: &str) -> Result<Vec<Match>, ParseError> {
    if page.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    if nesting_exceeds(page, MAX_DEPTH) {
        return Err(ParseError::LayoutNotRecognised {
            what: format!("XML elements nested deeper than {MAX_DEPTH}; not the ESPNcricinfo live-scores RSS feed"),
        });
    }
    let doc = Document::parse(page).map_err(|e| ParseError::LayoutNotRecognised {
        what: format!("not well-formed XML ({e}); expected the ESPNcricinfo live-scores RSS feed"),
    })?;
    let root = doc.root_element();
    let channel = (root.tag_name().name() == "rss")
        .then(|| child(root, "channel"))
        .flatten()
        .ok_or_else(|| ParseError::LayoutNotRecognised {
            what: "no `rss > channel` element (ESPNcricinfo live-scores RSS)".to_string(),
        })?;

    let items: Vec<Node> = channel
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "item")
        .collect();
    let mut seen = HashSet::new();
    let matches: Vec<Match> = items
        .iter()
        .filter_map(|&item| read_item(item))
        .filter(|m| seen.insert(m.source_id.clone()))
        .collect();
    if matches.is_empty() {
        return Err(ParseError::NoMatches {
            what: format!(
                "{} `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title",
                items.len()
            ),
        });
    }
    Ok(matches)
}

/// Whether elements in `page` nest deeper than `max`, found by a scan that skips comments, CDATA,
/// processing instructions, declarations and quoted attribute values, so that none of their `<`
/// or `>` count. Malformed or truncated text stops the scan; the XML parser then rejects it.
fn nesting_exceeds(page: &str, max: usize) -> bool {
    let mut depth = 0usize;
    let mut from = 0;
    while let Some(rest) = page.get(from..) {
        let Some(open) = rest.find('<') else { break };
        let Some(tag) = rest.get(open..) else { break };
        let skip_to = |end: &str| tag.find(end).map(|i| i + end.len());
        let consumed = if tag.starts_with("<!--") {
            skip_to("-->")
        } else if tag.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if tag.starts_with("<?") {
            skip_to("?>")
        } else if tag.starts_with("<!") {
            skip_to(">")
        } else if tag.starts_with("</") {
            depth = depth.saturating_sub(1);
            skip_to(">")
        } else {
            let end = tag_end(tag.as_bytes());
            if let Some(end) = end {
                if tag.as_bytes().get(end.wrapping_sub(1)) != Some(&b'/') {
                    depth += 1;
                    if depth > max {
                        return true;
                    }
                }
            }
            end.map(|end| end + 1)
        };
        let Some(consumed) = consumed else { break };
        from += open + consumed.max(1);
    }
    false
}

/// Index of the `>` closing the start tag at the beginning of `tag`, outside quoted values.
fn tag_end(tag: &[u8]) -> Option<usize> {
    let mut quote = None;
    for (i, &b) in tag.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return Some(i),
            (None, _) => {}
        }
    }
    None
}

/// The first child element of `node` named `name`.
fn child<'a, 'input>(node: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
    node.children().find(|n| n.is_element() && n.tag_name().name() == name)
}

/// One `item`, or `None` when its `guid` has no match id or its title no two teams.
fn read_item(item: Node) -> Option<Match> {
    let id = match_id(child(item, "guid")?.text()?)?;
    let url = Url::parse(&format!("{MATCH_URL_PREFIX}{id}.html")).ok()?;
    let title = clean_text(child(item, "title")?.text()?)?;
    let (first, second) = split_once_exact(&title, " v ")?;
    let (name1, scored1) = team_and_score(first);
    let (name2, scored2) = team_and_score(second);
    let live = scored1 || scored2;
    Some(Match {
        site: Site::Espncricinfo,
        source_id: id,
        teams: [name1?, name2?].map(|name| Team { name, short_name: None }),
        series: None,
        description: None,
        format: Format::Other(String::new()),
        venue: None,
        start_time: None,
        state: if live { MatchState::Live } else { MatchState::Upcoming },
        status: live.then_some(title),
        url,
    })
}

/// The id in a `guid` that is exactly `http(s)://…cricinfo.com/…/match/<digits>.html`.
///
/// Only the whole, trimmed `guid` counts. A web editor once pasted link markup in front of the
/// URLs (the 2015 damaged fixture); such a `guid` is no longer the item's identity, so it is not
/// mined for a number that happens to look like one.
fn match_id(guid: &str) -> Option<String> {
    let url = Url::parse(guid.trim()).ok()?;
    let host = url.host_str()?;
    let ours = ["cricinfo.com", "espncricinfo.com"]
        .iter()
        .any(|d| host == *d || host.strip_suffix(d).is_some_and(|sub| sub.ends_with('.')));
    if !matches!(url.scheme(), "http" | "https") || !ours {
        return None;
    }
    let mut segments = url.path_segments()?.rev();
    let id = segments.next()?.strip_suffix(".html")?;
    let digits = !id.is_empty() && id.len() <= MAX_ID_DIGITS && id.bytes().all(|b| b.is_ascii_digit());
    (segments.next() == Some("match") && digits).then(|| id.to_string())
}

/// Both halves of `text` around its only occurrence of `sep`; `None` when it occurs not exactly
/// once, since a second " v " would leave the split between the teams a guess.
fn split_once_exact<'t>(text: &'t str, sep: &str) -> Option<(&'t str, &'t str)> {
    let (a, b) = text.split_once(sep)?;
    (!b.contains(sep)).then_some((a, b))
}

/// One side of the title, "Dolphins 192/2 & 310/10 *", as the team name ("Dolphins") and whether
/// a score followed it. Only trailing score tokens are removed, so "Trinidad & Tobago" keeps its
/// `&`; the flip side is that a team whose name ends in a bare number would lose it.
fn team_and_score(side: &str) -> (Option<String>, bool) {
    let mut words: Vec<&str> = side.split_whitespace().collect();
    let mut scored = false;
    while let Some(&last) = words.last() {
        if is_score(last) {
            scored = true;
        } else if !matches!(last, "*" | "&" | "(f/o)" | "f/o") {
            break;
        }
        words.pop();
    }
    // A batting marker stuck to the name ("Australia*").
    let name = words.join(" ").trim_end_matches('*').trim_end().to_string();
    ((!name.is_empty()).then_some(name), scored)
}

/// "192", "192/2", "310/9d", "310/9dec", "45/2*": runs, optional wickets, optional declaration.
fn is_score(word: &str) -> bool {
    let word = word.strip_suffix('*').unwrap_or(word);
    let word = ["decl", "dec", "d"]
        .iter()
        .find_map(|d| word.strip_suffix(d))
        .unwrap_or(word);
    let number = |s: &str| !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
    match word.split_once('/') {
        Some((runs, wickets)) => number(runs) && number(wickets),
        None => number(word),
    }
}

use crate::text::plain as clean_text;

#[cfg(test)]
mod tests {
    use super::*;

    const FEED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/espncricinfo/rss-livescores_2019-01-31.xml"
    ));
    const DAMAGED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/espncricinfo/rss-livescores_2015-03-24_damaged.xml"
    ));

    /// Read off the feed with a separate Python script (`xml.etree`, the guid matched against
    /// `http://www\.cricinfo\.com/ci/engine/match/(\d+)\.html` in full, the title split at " v ",
    /// a trailing run of score / `*` / `&` tokens removed by regex, Live when the title has a digit).
    #[rustfmt::skip]
    const ROWS: &[(&str, &str, &str, MatchState)] = {
        use MatchState::*;
        &[
        ("1157657", "Dolphins", "Cape Cobras", Live),
        ("1157658", "Lions", "Warriors", Live),
        ("1157659", "Titans", "Knights", Upcoming),
        ("1153694", "New Zealand", "India", Live),
        ("1169342", "India A", "England Lions", Live),
        ("1166110", "Chilaw Marians Cricket Club", "Colombo Cricket Club", Live),
        ("1166109", "Nondescripts Cricket Club", "Sinhalese Sports Club", Live),
        ("1166112", "Sri Lanka Army Sports Club", "Saracens Sports Club", Live),
        ("1166111", "Tamil Union Cricket and Athletic Club", "Colts Cricket Club", Live),
        ("1172469", "Pakistan Women", "West Indies Women", Live),
        ("1157485", "Border", "Northern Cape", Live),
        ("1152557", "Hobart Hurricanes", "Adelaide Strikers", Live),
        ("1170457", "United Arab Emirates", "Nepal", Live),
        ("1158063", "West Indies", "England", Upcoming),
        ("1167381", "Guyana", "Trinidad & Tobago", Upcoming),
        ("1167382", "Barbados", "Windward Islands", Upcoming),
        ("1167380", "Jamaica", "Leeward Islands", Upcoming),
        ]
    };

    #[test]
    fn every_feed_item_is_read_with_its_id_teams_state_and_url() {
        let matches = parse(FEED).expect("feed parses");
        assert_eq!(matches.len(), 17);
        assert_eq!(matches.len(), ROWS.len());
        for (m, (id, team1, team2, state)) in matches.iter().zip(ROWS) {
            assert_eq!(m.site, Site::Espncricinfo, "{id}");
            assert_eq!(m.source_id, *id);
            assert_eq!(
                m.teams[0],
                Team {
                    name: team1.to_string(),
                    short_name: None
                },
                "{id}"
            );
            assert_eq!(
                m.teams[1],
                Team {
                    name: team2.to_string(),
                    short_name: None
                },
                "{id}"
            );
            assert_eq!(m.state, *state, "{id}");
            assert_eq!(
                m.url.as_str(),
                format!("https://www.espncricinfo.com/ci/engine/match/{id}.html")
            );
            assert_eq!(m.series, None, "{id}");
            assert_eq!(m.description, None, "{id}");
            assert_eq!(m.venue, None, "{id}");
            assert_eq!(m.start_time, None, "{id}");
            assert_eq!(m.format, Format::Other(String::new()), "{id}");
        }
    }

    #[test]
    fn the_feed_names_match_pages_by_the_same_id_on_the_old_host() {
        assert!(FEED.contains("<guid>http://www.cricinfo.com/ci/engine/match/1157657.html</guid>"));
    }

    #[test]
    fn a_scored_title_is_kept_as_the_status_with_entities_decoded_and_spaces_collapsed() {
        let matches = parse(FEED).expect("parses");
        assert_eq!(
            matches[0].status.as_deref(),
            Some("Dolphins 192/2 & 310/10 * v Cape Cobras 523/7")
        );
        assert_eq!(
            matches[1].status.as_deref(),
            Some("Lions 292/9 & 440/10 v Warriors 40/2 & 403/10 *")
        );
        assert_eq!(matches[2].status, None);
        let guyana = matches.iter().find(|m| m.source_id == "1167381").expect("present");
        assert_eq!(guyana.title(), "Guyana v Trinidad & Tobago");
        assert_eq!(guyana.status, None);
    }

    #[test]
    fn the_damaged_feed_yields_no_match_and_says_so() {
        // Each guid has editor markup before the URL, and each link is a page title, not a URL.
        assert_eq!(
            parse(DAMAGED),
            Err(ParseError::NoMatches {
                what: "3 `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title".into()
            })
        );
    }

    #[test]
    fn team_names_lose_scores_markers_and_declarations_only_at_the_end() {
        for (side, name, scored) in [
            ("Australia 192/2 *", Some("Australia"), true),
            ("Australia 310/9d & 120/4 *", Some("Australia"), true),
            ("India 120 & 45/2", Some("India"), true),
            ("India 400/7dec", Some("India"), true),
            ("England 210 & 150/3 (f/o)", Some("England"), true),
            ("Colts Cricket Club 291 *", Some("Colts Cricket Club"), true),
            ("Australia*", Some("Australia"), false),
            ("Trinidad & Tobago", Some("Trinidad & Tobago"), false),
            ("Trinidad & Tobago 250/8 *", Some("Trinidad & Tobago"), true),
            ("Sri Lanka", Some("Sri Lanka"), false),
            ("192/2 *", None, true),
            ("", None, false),
        ] {
            assert_eq!(team_and_score(side), (name.map(String::from), scored), "{side}");
        }
    }

    #[test]
    fn only_a_whole_cricinfo_match_url_in_guid_gives_an_id() {
        for (guid, want) in [
            ("http://www.cricinfo.com/ci/engine/match/1157657.html", Some("1157657")),
            (
                " https://www.espncricinfo.com/ci/engine/match/656491.html \n",
                Some("656491"),
            ),
            (
                "http://static.cricinfo.com/ci/engine/current/match/754941.html",
                Some("754941"),
            ),
            (
                r#"" id="qlink_a" class="qlink">http://www.cricinfo.com/ci/engine/match/754941.html"#,
                None,
            ),
            ("http://www.cricinfo.com/ci/engine/match/abc.html", None),
            ("http://www.cricinfo.com/ci/engine/match/.html", None),
            ("http://www.cricinfo.com/ci/engine/series/754941.html", None),
            ("http://evil.example/ci/engine/match/754941.html", None),
            ("http://notcricinfo.com/ci/engine/match/754941.html", None),
            ("ftp://www.cricinfo.com/ci/engine/match/754941.html", None),
            ("754941", None),
            ("", None),
        ] {
            assert_eq!(match_id(guid).as_deref(), want, "{guid}");
        }
    }

    #[test]
    fn items_without_an_id_or_two_named_teams_are_skipped_and_repeats_dropped() {
        let feed = r#"<rss version="2.0"><channel>
            <item><title>A v B</title></item>
            <item><title>A v B</title><guid>junk</guid></item>
            <item><title>A 12/1 *</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item>
            <item><title>A v B v C</title><guid>http://www.cricinfo.com/ci/engine/match/2.html</guid></item>
            <item><title>12/1 v B</title><guid>http://www.cricinfo.com/ci/engine/match/3.html</guid></item>
            <item><guid>http://www.cricinfo.com/ci/engine/match/4.html</guid></item>
            <item><title>Kent v Essex 5 *</title><guid>http://www.cricinfo.com/ci/engine/match/5.html</guid></item>
            <item><title>Other v Teams</title><guid>http://www.cricinfo.com/ci/engine/match/5.html</guid></item>
            <item><title><![CDATA[Sussex &amp; Co v Surrey]]></title><guid>http://www.cricinfo.com/ci/engine/match/6.html</guid></item>
        </channel></rss>"#;
        let matches = parse(feed).expect("parses");
        let got: Vec<_> = matches
            .iter()
            .map(|m| (m.source_id.as_str(), m.title(), m.state))
            .collect();
        assert_eq!(
            got,
            [
                ("5", "Kent v Essex".to_string(), MatchState::Live),
                ("6", "Sussex & Co v Surrey".to_string(), MatchState::Upcoming),
            ]
        );
    }

    #[test]
    fn control_characters_never_reach_team_names() {
        // `&amp;#x2066;` is a bidi isolate once the XML and then the HTML escaping are undone.
        let feed = "<rss><channel><item><title>Kent\u{202e} &amp;#x2066;\u{85} v  Essex\t</title>\
                    <guid>http://www.cricinfo.com/ci/engine/match/9.html</guid></item></channel></rss>";
        let matches = parse(feed).expect("parses");
        assert_eq!(matches[0].title(), "Kent v Essex");
    }

    #[test]
    fn nesting_is_measured_outside_comments_cdata_and_attribute_values() {
        assert!(!nesting_exceeds(FEED, 4));
        assert!(nesting_exceeds(FEED, 3));
        assert!(!nesting_exceeds(DAMAGED, 4));
        let tricky = "<a><!-- <b><b> --><![CDATA[<c><c>]]><?pi <d>?><e f='<g>' h=\"/>\"/><i/></a>";
        assert!(!nesting_exceeds(tricky, 1));
        assert!(nesting_exceeds("<a><b><c>", 2));
        assert!(!nesting_exceeds("<a></a><b></b><c/>", 1));
        for cut in ["<", "<!--", "<![CDATA[", "<?", "<a b='", "</"] {
            assert!(!nesting_exceeds(cut, 0), "{cut}");
        }
    }

    #[test]
    fn an_empty_feed_text_is_empty() {
        assert_eq!(parse(""), Err(ParseError::Empty));
        assert_eq!(parse(" \r\n "), Err(ParseError::Empty));
    }

    #[test]
    fn text_that_is_not_an_rss_channel_is_not_recognised() {
        for page in [
            "not xml at all",
            "<html><body><p>Live scores</body></html>",
            r#"{"items":[]}"#,
            "<rss version=\"2.0\"></rss>",
            "<feed><channel><item/></channel></feed>",
            "<rss><item><title>A v B</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item></rss>",
            // A DTD is refused outright, so entity bombs never expand.
            "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]><rss><channel><item><title>&b; v &b;</title></item></channel></rss>",
        ] {
            assert!(
                matches!(parse(page), Err(ParseError::LayoutNotRecognised { .. })),
                "{page}"
            );
        }
    }

    #[test]
    fn a_channel_without_usable_items_is_no_matches() {
        assert_eq!(
            parse("<rss><channel><title>Cricinfo Live Scores</title></channel></rss>"),
            Err(ParseError::NoMatches {
                what: "0 `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title".into()
            })
        );
    }

    #[test]
    fn truncated_feeds_and_garbage_never_panic() {
        for feed in [FEED, DAMAGED] {
            let end = feed.trim_end().len();
            for cut in 0..feed.len() {
                if let Some(prefix) = feed.get(..cut) {
                    let result = parse(prefix);
                    if cut < end {
                        // A prefix short of the closing `</rss>` is not well-formed XML.
                        assert!(result.is_err(), "prefix of {cut} bytes");
                    }
                }
            }
        }
        for garbage in [
            "\0",
            "\u{feff}",
            "<",
            "<rss",
            "<rss><channel><item><guid>http://www.cricinfo.com/ci/engine/match/99999999999999999999.html</guid></item>",
            "<rss><channel><item><title> v </title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item></channel></rss>",
            "<rss><channel><item><title>\u{1F3CF} 1/\u{1F3CF} v *</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item></channel></rss>",
            "]]>&&&<<<>>>",
        ] {
            let _ = parse(garbage);
        }
        let deep = format!(
            "<rss><channel>{}{}</channel></rss>",
            "<x>".repeat(100_000),
            "</x>".repeat(100_000)
        );
        assert!(matches!(parse(&deep), Err(ParseError::LayoutNotRecognised { .. })));
        let unclosed = format!("<rss><channel>{}", "<x a='>'>".repeat(100_000));
        assert!(matches!(parse(&unclosed), Err(ParseError::LayoutNotRecognised { .. })));
    }
}
