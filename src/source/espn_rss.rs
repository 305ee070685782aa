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
//! The XML is read as a stream of events with `quick-xml`; nothing is built but the matches. A
//! DTD is refused outright, so entity-expansion bombs never expand, and only the five predefined
//! entities and character references are resolved. quick-xml leaves much of XML's
//! well-formedness to its caller (characters, names, attributes, what may stand outside the
//! root, the declaration's place); [`parse`] checks those itself.

use crate::cricket::{Format, Match, MatchState, Site, Team};
use crate::source::dropped::Unnamed;
use crate::source::ParseError;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::collections::HashSet;
use std::sync::LazyLock;
use url::Url;

/// ESPNcricinfo's current host over HTTPS; match pages are `/ci/engine/match/<id>.html` on it
/// (the feed's own `http://www.cricinfo.com/…` redirects there).
static MATCH_HOST: LazyLock<Option<Url>> = LazyLock::new(|| Url::parse("https://www.espncricinfo.com/").ok());

/// ESPNcricinfo ids are 6 to 7 digits today; the bound only keeps junk out.
const MAX_ID_DIGITS: usize = 12;

/// Deepest element nesting accepted. The live-scores feed nests four deep
/// (`rss > channel > item > title`); anything far deeper is not the feed, and refusing it keeps
/// the element stack small whatever the input.
const MAX_DEPTH: usize = 64;

/// Reads every match in an ESPNcricinfo live-scores RSS feed.
///
/// Returns one [`Match`] per match id (site [`Site::Espncricinfo`]), in feed order; a later item
/// with an id already read is dropped. The `source_id` is the number in the item's `guid`, which
/// must be exactly a cricinfo.com or espncricinfo.com URL ending `/match/<digits>.html`: an item
/// whose `guid` is anything else (missing, junk, junk around a URL) is skipped rather than guessed
/// at. The URL is `https://www.espncricinfo.com/ci/engine/match/<id>.html`. The two team names are
/// the title's two sides around " v ", with scores, `&`, `*` and declarations removed; an item
/// whose title does not split into two named sides is skipped. Only an item's first `guid` and
/// first `title` count, and of each only the text (and CDATA) directly inside it.
///
/// The feed has no state field; the state is read from the scores in the title, by
/// `state_from_scores`: no score is [`MatchState::Upcoming`]; scores that prove the match is
/// over are [`MatchState::Complete`]; scores that fit a finished match as well as one in progress
/// are [`MatchState::Other`] (unknown, never announced as live); any other score is
/// [`MatchState::Live`]. When there is a score, the cleaned title is kept as the status; the format is [`Format::Other`] with an empty word, and
/// series, description, venue and start time are `None`: the feed does not say.
///
/// # Errors
///
/// - [`ParseError::Empty`] when the text is empty or only whitespace;
/// - [`ParseError::LayoutNotRecognised`] when it is not well-formed XML (including any XML with a
///   DTD, an unknown entity, or elements nested deeper than 64) or has no `rss > channel`.
///   Namespaces are the one thing not checked: a prefix is not looked up in its `xmlns`
///   declarations (`<atom:link>` without `xmlns:atom` is read, where a namespace-aware parser
///   would refuse it), and elements are matched by their local name;
/// - [`ParseError::NoMatches`] when the channel has no item with a match id in its `guid` and a
///   "Team v Team" title.
pub fn parse(page: &str) -> Result<Vec<Match>, ParseError> {
    if page.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let feed = read_feed(page).map_err(|what| ParseError::LayoutNotRecognised { what })?;
    let mut seen = HashSet::new();
    let mut unnamed = Unnamed::default();
    let matches: Vec<Match> = feed
        .items
        .iter()
        .filter_map(|item| read_item(item, &mut unnamed))
        .filter(|m| seen.insert(m.source_id.clone()))
        .collect();
    unnamed.report(Site::Espncricinfo, &matches);
    if matches.is_empty() {
        return Err(ParseError::NoMatches {
            what: format!(
                "{} `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title",
                feed.items.len()
            ),
        });
    }
    Ok(matches)
}

/// The parts of the feed a match is read from.
#[derive(Debug, Default)]
struct Feed {
    items: Vec<Item>,
}

/// One `rss > channel > item`: the text directly inside its first `guid` and first `title`
/// (`None`: no such element).
#[derive(Debug, Default)]
struct Item {
    guid: Option<String>,
    title: Option<String>,
}

/// Which item field the text being read belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Guid,
    Title,
}

/// Reads the feed's items in one pass over the XML events, checking well-formedness as it goes
/// (see [`parse`]'s errors for what is checked).
///
/// # Errors
/// What is wrong, as the `what` of [`ParseError::LayoutNotRecognised`].
fn read_feed(page: &str) -> Result<Feed, String> {
    const NOT_FEED: &str = "expected the ESPNcricinfo live-scores RSS feed";
    let malformed = |e: &dyn std::fmt::Display| format!("not well-formed XML ({e}); {NOT_FEED}");
    // quick-xml does not check characters: a control character (other than tab and line
    // breaks) or U+FFFE/U+FFFF anywhere makes the text something other than XML.
    // (Bytes first: only a C0 control or the lead byte of U+FFFE/U+FFFF can start one.)
    // Folded without stopping early, so the compiler checks many bytes at once (SIMD).
    let suspect = page.bytes().fold(false, |found, b| {
        found | ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r')) | (b == 0xEF)
    });
    if suspect {
        if let Some(c) = page.chars().find(|&c| !is_xml_char(c)) {
            return Err(malformed(&format!("the character {c:?}, which XML does not allow")));
        }
    }
    let mut reader = Reader::from_str(page);
    // Closing tags must match their opening ones (quick-xml's default, stated because the
    // well-formedness checks below rely on it).
    reader.config_mut().check_end_names = true;
    // A comment may not hold `--` (quick-xml only checks this when asked).
    reader.config_mut().check_comments = true;

    let mut feed = Feed::default();
    // Depth of open elements: 1 = the root, 2 = a child of the root (the channel), 3 = an item,
    // 4 = an item's field.
    let mut depth = 0usize;
    let mut root_done = false;
    let mut saw_channel = false;
    let mut in_channel = false;
    let mut in_item = false;
    let mut slot: Option<Slot> = None;
    // Whether any event came before the current one: an XML declaration must come first.
    let mut first = true;
    loop {
        let event = reader.read_event().map_err(|e| malformed(&e))?;
        let at_start = std::mem::replace(&mut first, false);
        match event {
            Event::Start(e) => {
                if root_done {
                    return Err(malformed(&"content after the root element"));
                }
                check_tag(&e).map_err(|e| malformed(&e))?;
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("XML elements nested deeper than {MAX_DEPTH}; {NOT_FEED}"));
                }
                let name = e.local_name();
                match depth {
                    1 if name.as_ref() != "rss" => return Err(no_channel()),
                    2 if name.as_ref() == "channel" && !saw_channel => {
                        saw_channel = true;
                        in_channel = true;
                    }
                    3 if in_channel && name.as_ref() == "item" => {
                        in_item = true;
                        feed.items.push(Item::default());
                    }
                    4 if in_item => slot = open_field(&mut feed, name.as_ref().as_bytes()),
                    _ => {}
                }
            }
            Event::Empty(e) => {
                if root_done {
                    return Err(malformed(&"content after the root element"));
                }
                check_tag(&e).map_err(|e| malformed(&e))?;
                match depth {
                    0 => return Err(no_channel()),
                    // `<channel/>`: the first channel, and an empty one (so a later channel is
                    // not read, as for `<channel></channel>`).
                    1 if e.local_name().as_ref() == "channel" => saw_channel = true,
                    2 if in_channel && e.local_name().as_ref() == "item" => feed.items.push(Item::default()),
                    // `<title/>`: present, and empty (so a later `title` is not read).
                    3 if in_item => {
                        open_field(&mut feed, e.local_name().as_ref().as_bytes());
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                match depth {
                    1 => root_done = true,
                    2 => in_channel = false,
                    3 => in_item = false,
                    4 => slot = None,
                    _ => {}
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                // Outside the root only XML's white space (not, say, a form feed) may stand.
                if depth == 0 && !t.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
                    return Err(malformed(&"text outside the root element"));
                }
                // A single-byte search: building a substring searcher for every text event of
                // the feed cost more than the event's own reading.
                if memchr::memchr_iter(b'>', t.as_bytes())
                    .any(|i| i >= 2 && t.as_bytes().get(i - 2..i) == Some(b"]]".as_slice()))
                {
                    return Err(malformed(&"`]]>` in text"));
                }
                if let Some(field) = field_text(&mut feed, slot, depth) {
                    field.push_str(&t);
                }
            }
            Event::CData(t) => {
                // CDATA is text: it has no place outside the root either.
                if depth == 0 {
                    return Err(malformed(&"text outside the root element"));
                }
                if let Some(field) = field_text(&mut feed, slot, depth) {
                    field.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                // A reference is text too: `&amp;` after `</rss>` is content after the root.
                if depth == 0 {
                    return Err(malformed(&"text outside the root element"));
                }
                let resolved = resolve_reference(&r).ok_or_else(|| malformed(&"an unknown entity reference"))?;
                if !is_xml_char(resolved) {
                    return Err(malformed(&"a character reference to a character XML does not allow"));
                }
                if let Some(field) = field_text(&mut feed, slot, depth) {
                    field.push(resolved);
                }
            }
            Event::DocType(_) => return Err(malformed(&"a DTD, which is refused")),
            // The XML declaration, `<?xml …?>`, only at the very start, and with its version.
            Event::Decl(d) => {
                if !at_start {
                    return Err(malformed(&"an XML declaration after the start"));
                }
                if !is_xml_declaration(d.as_bytes()) {
                    return Err(malformed(&"an XML declaration that is not `<?xml version=\"1.x\" …?>`"));
                }
            }
            // A processing instruction's target is a name, and not `xml` in any case (reserved
            // for the declaration; quick-xml hands `<?XML …?>` and `<? xml …?>` over as PIs).
            Event::PI(pi) => {
                let target = pi.target();
                if !is_xml_name(target.as_bytes()) || target.eq_ignore_ascii_case("xml") {
                    return Err(malformed(&"a processing instruction without a valid target"));
                }
            }
            Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if depth != 0 || !root_done {
        return Err(malformed(&"the text ends before the root element is closed"));
    }
    if !saw_channel {
        return Err(no_channel());
    }
    Ok(feed)
}

/// Whether `decl`, the inside of `<?xml …?>` as quick-xml hands it over (from `xml` on), is an
/// XML declaration (<https://www.w3.org/TR/xml/#NT-XMLDecl>): `version="1.x"`, then optionally
/// `encoding="…"` and `standalone="yes|no"`, in that order, each after white space. quick-xml
/// checks none of it.
fn is_xml_declaration(decl: &[u8]) -> bool {
    let Some(mut rest) = std::str::from_utf8(decl).ok().and_then(|d| d.strip_prefix("xml")) else {
        return false;
    };
    let space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut names: &[&str] = &["version", "encoding", "standalone"];
    let mut version = false;
    loop {
        let trimmed = rest.trim_start_matches(space);
        if trimmed.is_empty() {
            return version;
        }
        // Each pseudo-attribute follows white space; a later one never comes before an earlier one.
        let Some(i) = names.iter().position(|n| trimmed.starts_with(n)) else {
            return false;
        };
        let (Some(&name), Some(later)) = (names.get(i), names.get(i + 1..)) else {
            return false;
        };
        if trimmed.len() == rest.len() || (!version && name != "version") {
            return false;
        }
        names = later;
        version = true;
        let value = trimmed[name.len()..].trim_start_matches(space);
        let Some(value) = value.strip_prefix('=').map(|v| v.trim_start_matches(space)) else {
            return false;
        };
        let Some(quote) = value.chars().next().filter(|&q| q == '"' || q == '\'') else {
            return false;
        };
        let Some((value, tail)) = value[1..].split_once(quote) else {
            return false;
        };
        let ok = match name {
            "version" => value
                .strip_prefix("1.")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
            "encoding" => {
                let mut b = value.bytes();
                b.next().is_some_and(|c| c.is_ascii_alphabetic())
                    && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
            }
            _ => matches!(value, "yes" | "no"),
        };
        if !ok {
            return false;
        }
        rest = tail;
    }
}

/// XML 1.0's `Char` production (<https://www.w3.org/TR/xml/#charsets>); a Rust `char` is never
/// a surrogate, so only C0 controls other than tab, LF and CR, and U+FFFE/U+FFFF fall outside.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Checks what quick-xml leaves unchecked in a start or empty-element tag: the element's and
/// each attribute's name are XML names, attributes are `name="value"` with no name repeated,
/// and each value holds no `<` and only references that resolve (predefined entities or
/// character references to XML characters).
fn check_tag(tag: &BytesStart<'_>) -> Result<(), String> {
    if !is_xml_name(tag.name().as_ref().as_bytes()) {
        return Err("an element name that is not an XML name".to_string());
    }
    // With checks on (the default), the iterator reports repeated names and values that are
    // missing or unquoted.
    for attribute in tag.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        if !is_xml_name(attribute.key.as_ref().as_bytes()) {
            return Err("an attribute name that is not an XML name".to_string());
        }
        if attribute.value.contains('<') {
            return Err("`<` in an attribute value".to_string());
        }
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        if !value.chars().all(is_xml_char) {
            return Err("a character reference to a character XML does not allow".to_string());
        }
    }
    Ok(())
}

/// XML 1.0's `Name` production (<https://www.w3.org/TR/xml/#NT-Name>), for UTF-8 bytes.
fn is_xml_name(name: &[u8]) -> bool {
    // Every name in a real feed is ASCII: checked byte by byte, without decoding.
    if name.is_ascii() {
        let start = |b: &u8| b.is_ascii_alphabetic() || matches!(b, b':' | b'_');
        let rest = |b: &u8| start(b) || b.is_ascii_digit() || matches!(b, b'-' | b'.');
        return name.first().is_some_and(start) && name.iter().skip(1).all(rest);
    }
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    let start = |c: char| {
        matches!(c, ':' | 'A'..='Z' | '_' | 'a'..='z' | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}'
            | '\u{F8}'..='\u{2FF}' | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
            | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
            | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
    };
    let rest = |c: char| {
        start(c) || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
    };
    let mut chars = name.chars();
    chars.next().is_some_and(start) && chars.all(rest)
}

fn no_channel() -> String {
    "no `rss > channel` element (ESPNcricinfo live-scores RSS)".to_string()
}

/// Marks the current item's field `name` as being read, when it is the first `guid` or `title`.
fn open_field(feed: &mut Feed, name: &[u8]) -> Option<Slot> {
    let item = feed.items.last_mut()?;
    let (slot, value) = match name {
        b"guid" => (Slot::Guid, &mut item.guid),
        b"title" => (Slot::Title, &mut item.title),
        _ => return None,
    };
    // A second `guid` or `title` in one item is not read: the first one names the match.
    if value.is_some() {
        return None;
    }
    *value = Some(String::new());
    Some(slot)
}

/// The text being read for the current item's `slot`, if any: only text directly inside the
/// field (at `depth` 4), not inside an element within it.
fn field_text(feed: &mut Feed, slot: Option<Slot>, depth: usize) -> Option<&mut String> {
    if depth != 4 {
        return None;
    }
    let item = feed.items.last_mut()?;
    match slot? {
        Slot::Guid => item.guid.as_mut(),
        Slot::Title => item.title.as_mut(),
    }
}

/// The character an entity or character reference stands for: `&#38;`, `&#x26;`, or one of
/// XML's five predefined entities (<https://www.w3.org/TR/xml/#sec-predefined-ent>); `None` for
/// anything else, which in a document without a DTD is not well-formed.
fn resolve_reference(r: &BytesRef<'_>) -> Option<char> {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return Some(c);
    }
    quick_xml::escape::resolve_predefined_entity(r)?.chars().next()
}

/// One `item`, or `None` when its `guid` has no match id or its title no two teams (one with
/// an id and a side left without a name, "192/2 * v Sri Lanka", is noted in `unnamed`).
fn read_item(item: &Item, unnamed: &mut Unnamed) -> Option<Match> {
    let id = match_id(item.guid.as_deref()?)?;
    let mut url = MATCH_HOST.clone()?;
    url.set_path(&format!("/ci/engine/match/{id}.html"));
    let title = clean_text(item.title.as_deref()?)?;
    let (first, second) = split_once_exact(&title, " v ")?;
    let side1 = team_and_score(first);
    let side2 = team_and_score(second);
    if side1.name.is_none() || side2.name.is_none() {
        unnamed.note(&id, [side1.name.as_deref(), side2.name.as_deref()]);
        return None;
    }
    let scored = !side1.innings.is_empty() || !side2.innings.is_empty();
    let state = state_from_scores(&side1, &side2);
    Some(Match {
        site: Site::Espncricinfo,
        source_id: id.into(),
        teams: [side1.name?, side2.name?].map(|name| Team {
            name: name.into(),
            short_name: None,
        }),
        series: None,
        description: None,
        format: Format::Other(String::new()),
        venue: None,
        start_time: None,
        state,
        status: scored.then(|| title.into()),
        url,
        // A title's scores fit a finished match as well as one in play, and name no winner:
        // the feed tells no result.
        ending: None,
    })
}

/// The id in a `guid` that is exactly `http(s)://…cricinfo.com/…/match/<digits>.html`.
///
/// Only the whole, trimmed `guid` counts. A web editor once pasted link markup in front of the
/// URLs (the 2015 damaged fixture); such a `guid` is no longer the item's identity, so it is not
/// mined for a number that happens to look like one.
fn match_id(guid: &str) -> Option<String> {
    let guid = guid.trim();
    plain_match_id(guid)
        .map(str::to_string)
        .or_else(|| parsed_match_id(guid))
}

/// The feed's own guids, `http://www.cricinfo.com/ci/engine/match/<id>.html`, read without a
/// URL parser: one of the site's usual hosts, then a path of letters, digits, `/`, `-`, `_` and
/// `.` with no dot segment, no query, no fragment, no port, no user. What this accepts, the URL
/// parser reads the same way (nothing in it is normalised); anything else goes to
/// [`parsed_match_id`], so this only saves the parse on the common case.
fn plain_match_id(guid: &str) -> Option<&str> {
    const HOSTS: [&str; 5] = [
        "www.cricinfo.com",
        "static.cricinfo.com",
        "cricinfo.com",
        "www.espncricinfo.com",
        "espncricinfo.com",
    ];
    let rest = guid.strip_prefix("https://").or_else(|| guid.strip_prefix("http://"))?;
    let (host, path) = rest.split_at(rest.find('/')?);
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.');
    if !HOSTS.contains(&host) || !path.bytes().all(plain) || path.contains("/.") {
        return None;
    }
    let (dir, file) = path.rsplit_once('/')?;
    let id = file.strip_suffix(".html")?;
    (dir.rsplit('/').next() == Some("match") && is_match_id(id)).then_some(id)
}

/// [`match_id`] for any other guid, through the URL parser (other hosts, encodings, ports…).
fn parsed_match_id(guid: &str) -> Option<String> {
    let url = Url::parse(guid).ok()?;
    let host = url.host_str()?;
    let ours = ["cricinfo.com", "espncricinfo.com"]
        .iter()
        .any(|d| host == *d || host.strip_suffix(d).is_some_and(|sub| sub.ends_with('.')));
    if !matches!(url.scheme(), "http" | "https") || !ours {
        return None;
    }
    let mut segments = url.path_segments()?.rev();
    let id = segments.next()?.strip_suffix(".html")?;
    (segments.next() == Some("match") && is_match_id(id)).then(|| id.to_string())
}

/// An ESPNcricinfo match id as a guid's file name holds it: 1 to [`MAX_ID_DIGITS`] digits.
fn is_match_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_DIGITS && id.bytes().all(|b| b.is_ascii_digit())
}

/// Both halves of `text` around its only occurrence of `sep`; `None` when it occurs not exactly
/// once, since a second " v " would leave the split between the teams a guess.
fn split_once_exact<'t>(text: &'t str, sep: &str) -> Option<(&'t str, &'t str)> {
    let (a, b) = text.split_once(sep)?;
    (!b.contains(sep)).then_some((a, b))
}

/// One side of a title as the feed prints it: "Dolphins 192/2 & 310/10 *".
#[derive(Debug, PartialEq, Eq)]
struct Side {
    /// The team ("Dolphins"), `None` when nothing but scores was left.
    name: Option<String>,
    /// Its innings, in the order printed (the feed does not say which came first).
    innings: Vec<Innings>,
    /// The `*` marker: this side is batting, or batted last.
    batting: bool,
}

/// One innings score: "310/10" (all out), "523/7", "310/9d" (declared), "291" (wickets not
/// printed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Innings {
    runs: u32,
    all_out: bool,
    /// Declared: the score carries a `d`, `dec` or `decl`.
    declared: bool,
}

impl Innings {
    /// Over, all out or declared: the batting side will not add to it.
    fn closed(self) -> bool {
        self.all_out || self.declared
    }
}

/// One side of the title, "Dolphins 192/2 & 310/10 *", as the team name ("Dolphins"), its
/// innings and its batting marker. Only trailing score tokens are removed, so "Trinidad &
/// Tobago" keeps its `&`; the flip side is that a team whose name ends in a bare number would
/// lose it.
fn team_and_score(side: &str) -> Side {
    let mut rest = side.trim_end();
    let mut innings = Vec::new();
    let mut batting = false;
    while !rest.is_empty() {
        let (head, last) = rest.rsplit_once(char::is_whitespace).unwrap_or(("", rest));
        if let Some(score) = score(last) {
            batting |= last.ends_with('*');
            innings.push(score);
        } else if last == "*" {
            batting = true;
        } else if !matches!(last, "&" | "(f/o)" | "f/o") {
            break;
        }
        rest = head.trim_end();
    }
    innings.reverse();
    // Words single-spaced, then a batting marker stuck to the name ("Australia*") removed.
    let mut name = String::with_capacity(rest.len());
    for word in rest.split_whitespace() {
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(word);
    }
    batting |= name.ends_with('*');
    let kept = name.trim_end_matches('*').trim_end().len();
    name.truncate(kept);
    Side {
        name: (!name.is_empty()).then_some(name),
        innings,
        batting,
    }
}

/// The state the two sides' scores prove. The `*` marks the side batting, or the side that
/// batted last. A closed innings is all out ("/10") or declared ("d"); the feeds of 2019 and
/// 2020 print no declaration marker (Cape Cobras' "523/7" of 2019-01-31 was declared), so there
/// a declared innings reads as open. Nor do they say which of a side's two innings came first
/// (2020-02-07: "Bihar 227/4 & 291/10 *" was chasing in the fourth innings, "Maharashtra 543/5
/// & 40 *" printed its fourth innings last). In order:
///
/// 1. no innings on either side: [`MatchState::Upcoming`];
/// 2. proved over, [`MatchState::Complete`]:
///    - the four-innings rule: both sides have batted twice, and the fourth innings is closed,
///      whatever the earlier ones were. The side batting last played it; as either of its two
///      printed innings may be that one, both must read closed (its earlier innings was closed
///      anyway: "Kent 301/8d & 250/10 v Surrey 140/3d & 300/10 *" is over), or it has passed
///      the other side's total (the target was reached);
///    - an innings defeat: a side with both innings closed is behind the other's single one;
/// 3. maybe over, [`MatchState::Other`] (unknown): the side batting last is all out, or ahead
///    of the other's total, and the other side has batted. "New Zealand 93/2 * v India 92/10" is
///    a finished one-day match, or a first-class match with a first-innings lead; the title
///    cannot tell, and such a match is never announced as live;
/// 4. anything else, or no `*` on exactly one side: [`MatchState::Live`].
fn state_from_scores(a: &Side, b: &Side) -> MatchState {
    if a.innings.is_empty() && b.innings.is_empty() {
        return MatchState::Upcoming;
    }
    let (last, other) = match (a.batting, b.batting) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        _ => return MatchState::Live,
    };
    let total = |s: &Side| s.innings.iter().map(|i| i.runs).sum::<u32>();
    let all_out = |s: &Side| !s.innings.is_empty() && s.innings.iter().all(|i| i.all_out);
    let closed = |s: &Side| !s.innings.is_empty() && s.innings.iter().all(|i| i.closed());
    let fourth_innings_done =
        last.innings.len() == 2 && other.innings.len() == 2 && (closed(last) || total(last) > total(other));
    let innings_defeat = [(last, other), (other, last)]
        .iter()
        .any(|(x, y)| x.innings.len() == 2 && closed(x) && y.innings.len() == 1 && total(x) < total(y));
    if fourth_innings_done || innings_defeat {
        MatchState::Complete
    } else if !other.innings.is_empty() && (all_out(last) || total(last) > total(other)) {
        MatchState::Other
    } else {
        MatchState::Live
    }
}

/// "192", "192/2", "310/9d", "310/9dec", "45/2*": runs, optional wickets, optional declaration.
fn score(word: &str) -> Option<Innings> {
    let word = word.strip_suffix('*').unwrap_or(word);
    let undeclared = ["decl", "dec", "d"].iter().find_map(|d| word.strip_suffix(d));
    let declared = undeclared.is_some();
    let word = undeclared.unwrap_or(word);
    let number = |s: &str| {
        (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    match word.split_once('/') {
        Some((runs, wickets)) => Some(Innings {
            runs: number(runs)?,
            all_out: number(wickets)? >= 10,
            declared,
        }),
        None => Some(Innings {
            runs: number(word)?,
            all_out: false,
            declared,
        }),
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
    /// Two states were then set by hand from the scores (`state_from_scores`): "New Zealand
    /// 93/2 * v India 92/10" and "Pakistan Women 89/10 * v West Indies Women 160/2" fit a
    /// finished one-day match and a first-class match in progress alike, so they are unknown.
    #[rustfmt::skip]
    const ROWS: &[(&str, &str, &str, MatchState)] = {
        use MatchState::*;
        &[
        ("1157657", "Dolphins", "Cape Cobras", Live),
        ("1157658", "Lions", "Warriors", Live),
        ("1157659", "Titans", "Knights", Upcoming),
        ("1153694", "New Zealand", "India", Other),
        ("1169342", "India A", "England Lions", Live),
        ("1166110", "Chilaw Marians Cricket Club", "Colombo Cricket Club", Live),
        ("1166109", "Nondescripts Cricket Club", "Sinhalese Sports Club", Live),
        ("1166112", "Sri Lanka Army Sports Club", "Saracens Sports Club", Live),
        ("1166111", "Tamil Union Cricket and Athletic Club", "Colts Cricket Club", Live),
        ("1172469", "Pakistan Women", "West Indies Women", Other),
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
                    name: (*team1).into(),
                    short_name: None
                },
                "{id}"
            );
            assert_eq!(
                m.teams[1],
                Team {
                    name: (*team2).into(),
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
        let inn = |runs, all_out| Innings {
            runs,
            all_out,
            declared: false,
        };
        let dec = |runs| Innings {
            runs,
            all_out: false,
            declared: true,
        };
        for (side, name, innings, batting) in [
            ("Australia 192/2 *", Some("Australia"), vec![inn(192, false)], true),
            (
                "Australia 310/9d & 120/4 *",
                Some("Australia"),
                vec![dec(310), inn(120, false)],
                true,
            ),
            (
                "India 120 & 45/2",
                Some("India"),
                vec![inn(120, false), inn(45, false)],
                false,
            ),
            ("India 400/7dec", Some("India"), vec![dec(400)], false),
            (
                "England 210/10 & 150/3 (f/o)",
                Some("England"),
                vec![inn(210, true), inn(150, false)],
                false,
            ),
            (
                "Colts Cricket Club 291 *",
                Some("Colts Cricket Club"),
                vec![inn(291, false)],
                true,
            ),
            ("Australia*", Some("Australia"), vec![], true),
            ("Trinidad & Tobago", Some("Trinidad & Tobago"), vec![], false),
            (
                "Trinidad & Tobago 250/8 *",
                Some("Trinidad & Tobago"),
                vec![inn(250, false)],
                true,
            ),
            ("Sri Lanka", Some("Sri Lanka"), vec![], false),
            ("192/2 *", None, vec![inn(192, false)], true),
            ("", None, vec![], false),
        ] {
            let want = Side {
                name: name.map(String::from),
                innings,
                batting,
            };
            assert_eq!(team_and_score(side), want, "{side}");
        }
    }

    #[test]
    fn scores_prove_a_match_over_only_when_no_format_could_continue_it() {
        use MatchState::*;
        let state = |title: &str| {
            let (a, b) = title.split_once(" v ").expect("two sides");
            state_from_scores(&team_and_score(a), &team_and_score(b))
        };
        // Real items of the 2019-01-31 feed.
        assert_eq!(state("Titans v Knights"), Upcoming);
        assert_eq!(state("Dolphins 192/2 & 310/10 * v Cape Cobras 523/7"), Live);
        assert_eq!(state("Lions 292/9 & 440/10 v Warriors 40/2 & 403/10 *"), Live);
        assert_eq!(state("India A 121/10 v England Lions 94/7 *"), Live);
        assert_eq!(
            state("Chilaw Marians Cricket Club 186/10 * v Colombo Cricket Club"),
            Live
        );
        assert_eq!(state("New Zealand 93/2 * v India 92/10"), Other);
        assert_eq!(state("Pakistan Women 89/10 * v West Indies Women 160/2"), Other);
        // Proved over: the fourth innings bowled out or the target passed, an innings defeat.
        assert_eq!(state("Lions 292/9 & 440/10 v Warriors 331/10 & 403/10 *"), Complete);
        assert_eq!(state("Lions 292/9 & 440/10 v Warriors 333/4 & 403/10 *"), Complete);
        assert_eq!(state("Dolphins 192/10 & 310/10 * v Cape Cobras 523/7"), Complete);
        // A side batting again, behind: still on.
        assert_eq!(state("Dolphins 192/2 & 310/10 * v Cape Cobras 523/7"), Live);
        // No marker, or both: nothing to reason from.
        assert_eq!(state("A 100/10 v B 101/1"), Live);
    }

    #[test]
    fn a_closed_fourth_innings_ends_a_first_class_match_whatever_the_earlier_innings_were() {
        use MatchState::*;
        let state = |title: &str| {
            let (a, b) = title.split_once(" v ").expect("two sides");
            state_from_scores(&team_and_score(a), &team_and_score(b))
        };
        // Issue 35's item: Surrey's first innings was declared, its fourth all out, 111 short.
        assert_eq!(state("Kent 301/8d & 250/10 v Surrey 140/3d & 300/10 *"), Complete);
        // Printed the other way round, as the feed often does: the same match.
        assert_eq!(state("Kent 250/10 & 301/8d v Surrey 300/10 & 140/3d *"), Complete);
        // A fourth innings declared (no chase left to make) closes it too.
        assert_eq!(state("Kent 301/8d & 250/10 v Surrey 140/10 & 200/6d *"), Complete);
        // One of the batting side's innings still open: that may be the fourth, in progress
        // (Bihar 227/4 & 291/10 * was chasing on 2020-02-07).
        assert_eq!(state("Kent 301/8d & 250/10 v Surrey 140/3 & 300/10 *"), Live);
        assert_eq!(state("Kent 301/8d & 250/10 v Surrey 140/3d & 120/4 *"), Live);
        // An innings defeat with a declared innings on the winning side.
        assert_eq!(state("Kent 501/6d v Surrey 140/10 & 200/10 *"), Complete);
    }

    /// The feed of 2020-02-07 (`fixtures/espncricinfo/rss-livescores_2020-02-07.xml`), read off
    /// by hand; each finished game's result checked against ESPNcricinfo's own score strip of
    /// that day (`old-layout_match-page_1213062_2020-02-07.html`). The feed names no result, so
    /// only scores that prove the end make a game complete: Bihar (227/4 chasing 224), Bengal
    /// (320/8 chasing 320) and Maharashtra (40/0 chasing 40) won by passing the target. The
    /// drawn games (Delhi v Gujarat, Saurashtra v Mumbai, Jharkhand v Chhattisgarh, Railways v
    /// Himachal Pradesh, Vidarbha v Kerala) stopped with wickets in hand, which the title
    /// cannot tell from play going on. A side batting last and ahead of the other's total
    /// (Karnataka over Madhya Pradesh, North West over South Western Districts) is unknown by
    /// the third rule of `state_from_scores`, never live.
    #[rustfmt::skip]
    const ROWS_2020: &[(&str, &str, &str, MatchState)] = {
        use MatchState::*;
        &[
        ("1203580", "Jharkhand", "Chhattisgarh", Live),
        ("1203588", "Arunachal Pradesh", "Bihar", Complete),
        ("1203571", "Delhi", "Gujarat", Live),
        ("1203573", "Rajasthan", "Bengal", Complete),
        ("1203574", "Vidarbha", "Kerala", Live),
        ("1203575", "Karnataka", "Madhya Pradesh", Other),
        ("1203576", "Railways", "Himachal Pradesh", Live),
        ("1203577", "Saurashtra", "Mumbai", Live),
        ("1203581", "Maharashtra", "Odisha", Complete),
        ("1194448", "South Western Districts", "North West", Other),
        ("1210986", "Guyana", "Jamaica", Live),
        ("1210988", "Windward Islands", "Trinidad & Tobago", Live),
        ("1211040", "New Zealand A", "India A", Live),
        ("1183546", "England Women", "India Women", Other),
        ("1214903", "East Zone (Bangladesh)", "South Zone (Bangladesh)", Live),
        ("1214904", "Central Zone (Bangladesh)", "North Zone (Bangladesh)", Live),
        ("1214595", "Kandy Customs Cricket Club", "Sri Lanka Navy Sports Club", Other),
        ("1214596", "Sri Lanka Air Force Sports Club", "Galle Cricket Club", Other),
        ("1214597", "Sri Lanka Ports Authority Cricket Club", "Kurunegala Youth Cricket Club", Live),
        ("1214526", "Burgher Recreation Club", "Colombo Cricket Club", Live),
        ("1214527", "Colts Cricket Club", "Sri Lanka Army Sports Club", Live),
        ("1214528", "Sinhalese Sports Club", "Negombo Cricket Club", Live),
        ("1214530", "Nondescripts Cricket Club", "Lankan Cricket Club", Live),
        ("1214529", "Tamil Union Cricket and Athletic Club", "Chilaw Marians Cricket Club", Live),
        ("1213062", "Pakistan", "Bangladesh", Live),
        ("1204720", "Australia Under-19s", "West Indies Under-19s", Live),
        ("1185311", "South Africa", "England", Upcoming),
        ("1194083", "Cape Cobras", "Lions", Upcoming),
        ("1194084", "Knights", "Warriors", Upcoming),
        ("1194085", "Titans", "Dolphins", Live),
        ("1214765", "Oman Women", "Germany Women", Upcoming),
        ("1187683", "New Zealand", "India", Upcoming),
        ]
    };

    #[test]
    fn every_item_of_the_2020_feed_gets_the_state_its_scores_prove() {
        let feed = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/espncricinfo/rss-livescores_2020-02-07.xml"
        ));
        let matches = parse(feed).expect("feed parses");
        let got: Vec<(&str, &str, &str, MatchState)> = matches
            .iter()
            .map(|m| {
                (
                    m.source_id.as_str(),
                    m.teams[0].name.as_str(),
                    m.teams[1].name.as_str(),
                    m.state,
                )
            })
            .collect();
        assert_eq!(got, ROWS_2020);
    }

    #[test]
    fn the_issues_four_innings_item_is_complete_in_a_feed() {
        // An item as the feed writes one (the 2020 feed's markup), with issue 35's title.
        let feed = r#"<?xml version="1.0" encoding="UTF-8" ?>
<rss version="2.0">
<channel>
<title>Cricinfo Live Scores</title>
<item>
<title>Kent 301/8d &amp;  250/10  v Surrey 140/3d &amp;  300/10 *</title>
<link>http://www.cricinfo.com/ci/engine/match/1300001.html?CMP=OTC-RSS </link>
<description>Kent 301/8d &amp;  250/10  v Surrey 140/3d &amp;  300/10 *</description>
 <guid>http://www.cricinfo.com/ci/engine/match/1300001.html</guid> </item>
</channel>
</rss>
"#;
        let matches = parse(feed).expect("parses");
        assert_eq!(matches.len(), 1);
        assert_eq!(matches[0].title(), "Kent v Surrey");
        assert_eq!(matches[0].state, MatchState::Complete);
        assert!(!matches[0].state.is_announceable());
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
    fn the_plain_reading_of_a_guid_agrees_with_the_url_parser_wherever_it_answers() {
        let guids = [
            "http://www.cricinfo.com/ci/engine/match/1157657.html",
            "https://static.cricinfo.com/ci/engine/current/match/754941.html",
            "http://espncricinfo.com/match/1.html",
            "http://www.cricinfo.com/ci/engine/match/1157657.html?CMP=OTC-RSS",
            "http://www.cricinfo.com/ci/engine/match/../match/7.html",
            "http://www.cricinfo.com/ci/engine/match/./7.html",
            "http://www.cricinfo.com/ci/engine/%6Datch/7.html",
            "http://www.cricinfo.com:80/ci/engine/match/7.html",
            "http://evil.com@www.cricinfo.com/ci/engine/match/7.html",
            "http://www.cricinfo.com@evil.com/ci/engine/match/7.html",
            "http://WWW.CRICINFO.COM/ci/engine/match/7.html",
            "http://www.cricinfo.com\\ci\\engine\\match\\7.html",
            "http://www.cricinfo.com/ci/engine/match/7.html#x",
            "http://www.cricinfo.com/ci/engine/match//7.html",
            "http://www.cricinfo.com//match/7.html",
            "http://www.cricinfo.com/ci/engine/match/1157\n657.html",
            "http://www.cricinfo.com/match/0000000000001.html",
            "http://www.cricinfo.com/match/.html",
            "http://www.cricinfo.com",
            "http://www.cricinfo.com/",
        ];
        for guid in guids {
            if let Some(id) = plain_match_id(guid) {
                assert_eq!(parsed_match_id(guid).as_deref(), Some(id), "{guid}");
            }
            assert_eq!(
                match_id(guid),
                parsed_match_id(guid),
                "{guid}: the two readings together answer as the parser alone"
            );
        }
        assert_eq!(
            plain_match_id(guids[0]),
            Some("1157657"),
            "the feed's own form takes the plain path"
        );
    }

    proptest::proptest! {
        #[test]
        fn match_ids_read_plainly_are_the_ids_the_url_parser_reads(
            guid in "https?://(www\\.|static\\.|WWW\\.)?(espn)?cricinfo\\.com(:80)?(/[a-z0-9._%?#@-]{0,6}){0,4}/(match|m\\.tch|%6datch)/[0-9]{0,14}\\.html"
        ) {
            if let Some(id) = plain_match_id(&guid) {
                let parsed = parsed_match_id(&guid);
                proptest::prop_assert_eq!(parsed.as_deref(), Some(id));
            }
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
    fn only_the_text_directly_inside_an_items_first_title_and_guid_counts() {
        let feed = r#"<rss><channel>
            <item><title>Kent <b>(W)</b>v Essex</title><guid>http://www.cricinfo.com/ci/engine/match/7.html</guid><guid>http://www.cricinfo.com/ci/engine/match/8.html</guid></item>
            <item><title>Kent &#x26; Co v Essex&#42;</title><title>X v Y</title><guid><!-- c -->http://www.cricinfo.com/ci/engine/match/9.html</guid></item>
            <item><title/><guid>http://www.cricinfo.com/ci/engine/match/10.html</guid></item>
            <item/>
        </channel></rss>"#;
        let matches = parse(feed).expect("parses");
        let got: Vec<_> = matches.iter().map(|m| (m.source_id.as_str(), m.title())).collect();
        assert_eq!(
            got,
            [
                ("7", "Kent v Essex".to_string()),
                ("9", "Kent & Co v Essex".to_string())
            ]
        );
        assert_eq!(
            parse("<rss><channel><item/><item><title/></item></channel></rss>"),
            Err(ParseError::NoMatches {
                what: "2 `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title".into()
            })
        );
    }

    #[test]
    fn xml_that_is_not_well_formed_is_not_recognised_and_says_why() {
        let item = "<item><title>A v B</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item>";
        for (page, why) in [
            (format!("<rss><channel>{item}</channel></rss><rss/>"), "after the root"),
            (format!("<rss><channel>{item}</channel></rss>text"), "outside the root"),
            (format!("<rss><channel>{item}</rss></channel>"), "not well-formed"),
            (
                format!("<rss><channel>{item}</channel>"),
                "ends before the root element is closed",
            ),
            (
                "<rss><channel><item><title>A&nbsp;v B</title></item></channel></rss>".to_string(),
                "unknown entity",
            ),
            (
                format!("<rss><channel>{}{item}</channel></rss>", "<x>".repeat(70)),
                "nested deeper than 64",
            ),
        ] {
            match parse(&page) {
                Err(ParseError::LayoutNotRecognised { what }) => assert!(what.contains(why), "{page}: {what}"),
                other => panic!("{page}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_empty_first_channel_is_the_channel_and_lists_no_match() {
        // `<channel/>` is a channel as much as `<channel></channel>`: the feed is recognised,
        // has no item, and a second channel after it is not read.
        let item = "<item><title>A v B</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item>";
        let none = Err(ParseError::NoMatches {
            what: "0 `item`(s) in the channel, none with a `…/match/<id>.html` URL as its `guid` and a \"Team v Team\" title".into(),
        });
        assert_eq!(parse("<rss><channel/></rss>"), none);
        assert_eq!(parse(&format!("<rss><channel/><channel>{item}</channel></rss>")), none);
        assert_eq!(
            parse(&format!("<rss><channel></channel><channel>{item}</channel></rss>")),
            none
        );
    }

    #[test]
    fn only_white_space_comments_and_processing_instructions_stand_outside_the_root() {
        let feed = "<rss><channel><item><title>A v B</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item></channel></rss>";
        assert!(parse(&format!("<?xml version=\"1.0\"?>\n<!-- a -->{feed}\r\n\t<?pi x?>")).is_ok());
        for outside in ["<![CDATA[x]]>", "&amp;", "&#65;", "\u{c}", "\u{a0}"] {
            for page in [format!("{outside}{feed}"), format!("{feed}{outside}")] {
                // (The form feed is refused sooner, as a character XML does not allow at all.)
                assert!(
                    matches!(parse(&page), Err(ParseError::LayoutNotRecognised { .. })),
                    "{page}: {:?}",
                    parse(&page)
                );
            }
        }
    }

    #[test]
    fn xml_breaking_the_finer_well_formedness_rules_is_not_recognised() {
        let item = "<item><title>A v B</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item>";
        let titled = |title: &str| {
            format!("<rss><channel><item><title>{title}</title><guid>http://www.cricinfo.com/ci/engine/match/1.html</guid></item></channel></rss>")
        };
        let pages = [
            // attributes: repeated, unquoted, without a value, `<` or an unknown entity inside
            format!("<rss a='1' a='2'><channel>{item}</channel></rss>"),
            format!("<rss version=2.0><channel>{item}</channel></rss>"),
            format!("<rss a><channel>{item}</channel></rss>"),
            format!("<rss a='<'><channel>{item}</channel></rss>"),
            format!("<rss a='&nbsp;'><channel>{item}</channel></rss>"),
            format!("<rss a='&#1;'><channel>{item}</channel></rss>"),
            // names
            format!("<rss><channel><1x/>{item}</channel></rss>"),
            format!("<rss><channel><x y/>{item}</channel></rss>"),
            // characters, written or referenced, that XML does not allow
            titled("A\u{1} v B"),
            titled("A\0 v B"),
            titled("A\u{fffe} v B"),
            titled("A&#1; v B"),
            titled("A&#xFFFF; v B"),
            // `]]>` in text, `--` in a comment
            titled("A ]]> v B"),
            format!("<rss><channel><!-- a -- b -->{item}</channel></rss>"),
            // the XML declaration anywhere but at the very start, or without its version
            format!(" <?xml version='1.0'?><rss><channel>{item}</channel></rss>"),
            format!("<!-- c --><?xml version='1.0'?><rss><channel>{item}</channel></rss>"),
            format!("<rss><channel><?xml version='1.0'?>{item}</channel></rss>"),
            format!("<?xml garbage?><rss><channel>{item}</channel></rss>"),
            format!("<?xml?><rss><channel>{item}</channel></rss>"),
            format!("<?xml version=\"1<!DOCTYPE x>.0\"?><rss><channel>{item}</channel></rss>"),
            format!("<?xml version=\"1.0\"8\" ?><rss><channel>{item}</channel></rss>"),
            format!("<?xml encoding='UTF-8' version='1.0'?><rss><channel>{item}</channel></rss>"),
            format!("<?xml version='1.0'encoding='UTF-8'?><rss><channel>{item}</channel></rss>"),
            format!("<?xml version='1.0' standalone='maybe'?><rss><channel>{item}</channel></rss>"),
            format!("<?xml?><rss><channel>{item}</channel></rss>"),
            format!("<?\txml version='1.0'?><rss><channel>{item}</channel></rss>"),
            format!("<?<x>xml version='1.0'?><rss><channel>{item}</channel></rss>"),
            format!("<rss><channel><?XML x?>{item}</channel></rss>"),
        ];
        for page in pages {
            assert!(
                matches!(parse(&page), Err(ParseError::LayoutNotRecognised { .. })),
                "{page}: {:?}",
                parse(&page)
            );
        }
        // What stays allowed: references in attributes and text, a BOM before the declaration,
        // names with `-`, `.`, `:` and non-ASCII letters, `]]` and `&gt;` side by side.
        for page in [
            format!("\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\" ?><rss version=\"2.0\" a='&amp;&#x26;&quot;'><channel>{item}</channel></rss>"),
            format!("<?xml version = '1.1' encoding='ISO-8859-1' standalone=\"yes\"\n?><?xml-stylesheet href='a.xsl'?><rss><channel>{item}</channel></rss>"),
            format!("<rss xmlns:atom='http://www.w3.org/2005/Atom'><channel><atom:link href='x'/><é.x-y/>{item}</channel></rss>"),
            titled("A ]]&gt; v B"),
        ] {
            assert!(parse(&page).is_ok(), "{page}: {:?}", parse(&page));
        }
    }

    #[test]
    fn xml_names_are_checked_by_the_production_in_ascii_and_beyond() {
        for name in ["rss", "a:b", "_x", "x-1.2", "Item", ":", "é", "名前", "aé-1"] {
            assert!(is_xml_name(name.as_bytes()), "{name}");
        }
        for name in ["", "1x", "-x", ".x", "a b", "a/b", "a\u{D7}", "\u{300}x", "a=b"] {
            assert!(!is_xml_name(name.as_bytes()), "{name}");
        }
        assert!(!is_xml_name(b"\xff"), "not UTF-8");
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
