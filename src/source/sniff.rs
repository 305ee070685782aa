//! Telling what a page that no parser read actually is, so that the error says what to do
//! instead of quoting a JSON or XML parser's complaint about byte 1.
//!
//! Only consulted once a page has been refused (or its kind could not be detected): the normal
//! path never pays for it. Each finding is one plain sentence naming the form of the page and
//! the fix, in the order checked: UTF-16 without a byte-order mark, a known binary format (PDF,
//! ZIP or Office document, gzip, image), other binary data, a JavaScript value that is not JSON,
//! an Atom feed; and, once no kind or built-in profile reads a page, a copy of a known site saved
//! without its data ([`saved_without_data`]).
//!
//! It also finds JSON saved inside a JavaScript or TypeScript constant ([`javascript_json`]),
//! which [`super::SourceKind`] then reads as the JSON it is.

/// How many characters from the start of the page are looked at.
const SAMPLE_CHARS: usize = 2048;

/// One plain sentence saying what `page` is when it is a form no source kind reads, or `None`
/// when it looks like ordinary text (HTML, XML, JSON), whose parser's own error says more.
pub(crate) fn unsupported(page: &str) -> Option<String> {
    let head = page.trim_start_matches('\u{feff}');
    let sample: Vec<char> = head.chars().take(SAMPLE_CHARS).collect();
    if sample.is_empty() {
        return None;
    }
    if let Some(order) = utf16_without_bom(&sample) {
        return Some(format!(
            "the page is UTF-16 ({order}) text without a byte-order mark, so it reads as every other \
             character being zero; save it as UTF-8, or as UTF-16 with its byte-order mark (both are read)"
        ));
    }
    if let Some(kind) = known_binary(head) {
        return Some(format!(
            "the page is {kind}, which no source kind reads; point the source at the site's HTML \
             page, RSS feed or JSON answer itself"
        ));
    }
    let odd = sample
        .iter()
        .filter(|&&c| c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()))
        .count();
    if odd * 10 > sample.len() {
        return Some(format!(
            "the page is binary data, not text ({odd} of its first {} characters are control \
             characters or invalid UTF-8); point the source at the site's HTML page, RSS feed or \
             JSON answer itself",
            sample.len()
        ));
    }
    if let Some(Wrapped {
        statement,
        value: Err(why),
    }) = javascript_json(head)
    {
        return Some(format!(
            "the page is JavaScript (`{statement} …`) whose value is not JSON ({why}); to save it as \
             JSON, let a JavaScript engine print it: in a browser's developer console, enter \
             `copy(JSON.stringify(` followed by the value (from the `{{` or `[` after `=` to its \
             matching bracket) and `))`, then save what was copied to a file; or point the source at \
             the API's own URL"
        ));
    }
    if is_atom_feed(head) {
        return Some(
            "the page is an Atom feed, which no source kind reads (`espn-rss` reads ESPNcricinfo's \
             RSS 2.0 live-scores feed); use the site's RSS feed, HTML page or JSON answer"
                .to_string(),
        );
    }
    None
}

/// "little-endian" or "big-endian" when the sample reads like ASCII text encoded as UTF-16 and
/// decoded as UTF-8: a zero character at every other position (at least a third of the sample).
fn utf16_without_bom(sample: &[char]) -> Option<&'static str> {
    let zeros_at = |parity: usize| {
        sample
            .iter()
            .enumerate()
            .filter(|(i, c)| i % 2 == parity && **c == '\0')
            .count()
    };
    let (even, odd) = (zeros_at(0), zeros_at(1));
    let half = sample.len() / 2;
    if half >= 4 && odd * 3 >= half * 2 && even * 10 < half {
        Some("little-endian")
    } else if half >= 4 && even * 3 >= half * 2 && odd * 10 < half {
        Some("big-endian")
    } else {
        None
    }
}

/// The name of a binary format recognised by its first bytes (as decoded with U+FFFD for bytes
/// that are not UTF-8).
fn known_binary(head: &str) -> Option<&'static str> {
    const MAGIC: [(&str, &str); 7] = [
        ("%PDF-", "a PDF document"),
        (
            "PK\u{3}\u{4}",
            "a ZIP archive (or an Office document such as .xlsx or .docx)",
        ),
        (
            "\u{1f}\u{fffd}",
            "gzip-compressed data (save it decompressed, e.g. with gunzip)",
        ),
        ("\u{fffd}PNG", "a PNG image"),
        ("GIF8", "a GIF image"),
        ("\u{fffd}\u{fffd}\u{fffd}", "binary data (a JPEG image or similar)"),
        ("RIFF", "a RIFF file (WebP image, WAV audio or similar)"),
    ];
    MAGIC
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, name)| *name)
}

/// A value assigned by a JavaScript or TypeScript statement at the start of a page
/// (`export const data = {…};`, `const matches: Match[] = […]`, `window.__DATA__ = …`).
pub(crate) struct Wrapped<'a> {
    /// The statement, up to and with its `=` ("export const data =").
    pub(crate) statement: String,
    /// The value's JSON text (the first complete JSON value after the `=`, whatever code
    /// follows it), or why the value is not JSON.
    pub(crate) value: Result<&'a str, String>,
}

/// The value `page` assigns, when it starts with a JavaScript or TypeScript statement assigning
/// an object or an array; `None` for any other page (JSON, HTML, XML start with `{`, `[` or
/// `<`, and are answered at once).
pub(crate) fn javascript_json(page: &str) -> Option<Wrapped<'_>> {
    let text = page.trim_start_matches('\u{feff}').trim_start();
    if !text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') {
        return None;
    }
    let statement = javascript_wrapper(text)?;
    let value = text.split_once('=')?.1.trim_start();
    let mut values = serde_json::Deserializer::from_str(value).into_iter::<serde::de::IgnoredAny>();
    let value = match values.next() {
        Some(Ok(_)) => value.get(..values.byte_offset()).ok_or_else(|| "cut".to_string()),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("no value".to_string()),
    };
    Some(Wrapped { statement, value })
}

/// The JavaScript that wraps a JSON value ("export const data =", "window.__DATA__ =",
/// "module.exports ="), when the page starts with one followed by `{` or `[`.
fn javascript_wrapper(head: &str) -> Option<String> {
    let text = head.trim_start();
    // A statement is a line or so: looking further for its `=` is looking at something else.
    let (statement, rest) = text.get(..text.len().min(200)).unwrap_or(text).split_once('=')?;
    let rest = text.get(statement.len() + 1..).unwrap_or(rest);
    let value = rest.trim_start();
    if !(value.starts_with('{') || value.starts_with('[')) || statement.len() > 80 {
        return None;
    }
    let words: Vec<&str> = statement.split_whitespace().collect();
    let ident = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '<' | '>' | ','))
    };
    // A declared name, with a TypeScript type or not ("data", "live: Answer", "xs: Match[]").
    let declared = |rest: &[&str]| match rest.split_first() {
        Some((name, ty)) => {
            ident(name)
                && ty.iter().all(|w| {
                    w.chars().all(|c| {
                        c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '<' | '>' | ',' | '[' | ']' | '|')
                    })
                })
        }
        None => false,
    };
    let fits = match words.as_slice() {
        ["export", "const" | "let" | "var", rest @ ..] | ["const" | "let" | "var", rest @ ..] => declared(rest),
        ["export", "default"] => true,
        [target] => {
            ident(target)
                && (target.starts_with("window.") || *target == "module.exports" || target.starts_with("self."))
        }
        _ => false,
    };
    fits.then(|| format!("{} =", words.join(" ")))
}

/// One plain sentence for a page of a site a kind reads, saved without the data that kind reads
/// (a browser extension such as SingleFile drops a page's scripts, and with them Cricbuzz's
/// `self.__next_f.push` payload and ESPNcricinfo's `__NEXT_DATA__`): it names the site, the
/// kind and what to do. `None` when the page names no such site, or carries the data.
///
/// The page's address is read from SingleFile's header comment (`url: …`), a browser's `saved
/// from url=` mark, `<link rel="canonical">` or `<meta property="og:url">`, in that order.
pub(crate) fn saved_without_data(page: &str) -> Option<String> {
    let (address, saver) = saved_address(page)?;
    let url = url::Url::parse(address).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let on = |site: &str| host == site || host.ends_with(&format!(".{site}"));
    let (kind, data, marker) = if on("cricbuzz.com") {
        (
            "cricbuzz",
            "the match data of its `self.__next_f.push(…)` scripts",
            "self.__next_f.push",
        )
    } else if on("espncricinfo.com") || on("cricinfo.com") {
        (
            "espncricinfo",
            "the match data of its `<script id=\"__NEXT_DATA__\">`",
            "__NEXT_DATA__",
        )
    } else {
        return None;
    };
    if page.contains(marker) {
        return None;
    }
    let shown = super::redacted(&url);
    let by = saver.map_or_else(String::new, |s| format!(" by {s}"));
    Some(format!(
        "the page is a copy of {shown} saved{by} without the data its scripts carry: the `{kind}` kind \
         reads {data}, which this copy does not have. Point the source at {shown} itself, or save the \
         page again with its scripts (a browser's own \"Save Page As…\" as \"Web Page, HTML only\" keeps \
         them) and name it as {kind}=LOCATION"
    ))
}

/// `text` up to its first white space, quote or angle bracket; `None` when that is nothing.
fn until_space(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
        .unwrap_or(text.len());
    text.get(..end).filter(|u| !u.is_empty())
}

/// The address a saved page names, and the tool that saved it when it says.
fn saved_address(page: &str) -> Option<(&str, Option<&'static str>)> {
    let after = |needle: &str| page.find(needle).and_then(|at| page.get(at + needle.len()..));
    if let Some(rest) = after("Page saved with SingleFile") {
        let comment = rest.get(..rest.find("-->").unwrap_or(rest.len()))?;
        if let Some(url) = comment.find("url:").and_then(|at| comment.get(at + 4..)) {
            return until_space(url.trim_start()).map(|u| (u, Some("SingleFile")));
        }
    }
    if let Some(rest) = after("saved from url=(") {
        let url = rest.split_once(')').map(|(_, u)| u)?;
        return until_space(url).map(|u| (u, None));
    }
    for (tag, attribute) in [
        ("<link rel=\"canonical\"", "href=\""),
        ("<meta property=\"og:url\"", "content=\""),
    ] {
        if let Some(rest) = after(tag) {
            let tag_end = rest.find('>').unwrap_or(rest.len());
            let inside = rest.get(..tag_end)?;
            if let Some(value) = inside.find(attribute).and_then(|at| inside.get(at + attribute.len()..)) {
                return until_space(value).map(|u| (u, None));
            }
        }
    }
    None
}

fn is_atom_feed(head: &str) -> bool {
    let start: String = head.chars().take(SAMPLE_CHARS).collect();
    start.contains("<feed") && start.contains("http://www.w3.org/2005/Atom")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pages_are_left_to_their_parser() {
        for page in [
            "",
            "<html><body>hi</body></html>",
            "{\"a\": 1}",
            "<rss><channel/></rss>",
            "x = 1",
        ] {
            assert_eq!(unsupported(page), None, "{page}");
        }
    }

    #[test]
    fn each_unreadable_form_gets_its_own_sentence() {
        let utf16le: String = "{\"typeMatches\":[]}".chars().flat_map(|c| [c, '\0']).collect();
        assert!(unsupported(&utf16le).unwrap().contains("UTF-16 (little-endian)"));
        let utf16be: String = "<html><body>scores</body></html>"
            .chars()
            .flat_map(|c| ['\0', c])
            .collect();
        assert!(unsupported(&utf16be).unwrap().contains("UTF-16 (big-endian)"));
        assert!(unsupported("%PDF-1.7\n%\u{fffd}").unwrap().contains("a PDF document"));
        assert!(unsupported("\u{1f}\u{fffd}\u{8}\0\0").unwrap().contains("gzip"));
        let junk: String = (0..200u32).map(|i| char::from_u32(i % 32).unwrap_or('a')).collect();
        assert!(unsupported(&junk).unwrap().contains("binary data"));
        // JSON inside JavaScript is read (below); a JavaScript value that is not JSON is not.
        assert_eq!(unsupported("export const data = {\"typeMatches\": []};"), None);
        let js = unsupported("export const data = {typeMatches: []};").unwrap();
        assert!(
            js.starts_with("the page is JavaScript (`export const data = …`) whose value is not JSON (key must be a string at line 1 column 2)")
                && js.contains("`copy(JSON.stringify(`"),
            "{js}"
        );
        let atom = "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>x</title></feed>";
        assert!(unsupported(atom).unwrap().contains("Atom feed"));
    }

    #[test]
    fn json_in_a_javascript_or_typescript_constant_is_found_whatever_follows_it() {
        for (page, statement, json) in [
            (
                "export const data = {\"a\": [1, {\"b\": \"}\"}]};\n",
                "export const data =",
                "{\"a\": [1, {\"b\": \"}\"}]}",
            ),
            (
                "export const live: Answer = {\"x\": 1} as const;\nexport default live;\n",
                "export const live: Answer =",
                "{\"x\": 1}",
            ),
            (
                "const groups = [{\"seriesMatches\": []}];\nconsole.log(groups);",
                "const groups =",
                "[{\"seriesMatches\": []}]",
            ),
            ("\u{feff}  window.__DATA__ = [1, 2]\n", "window.__DATA__ =", "[1, 2]"),
            ("module.exports = {}", "module.exports =", "{}"),
        ] {
            let found = javascript_json(page).unwrap_or_else(|| panic!("{page}"));
            assert_eq!(found.statement, statement, "{page}");
            assert_eq!(found.value, Ok(json), "{page}");
        }
        let literal = javascript_json("export const data = {a: 1}").expect("a constant");
        assert!(literal.value.is_err());
        for page in ["{\"a\": 1}", "[1]", "<html>", "x = 1", "let a = b = {}", "hello world"] {
            assert!(javascript_json(page).is_none(), "{page}");
        }
    }

    #[test]
    fn a_saved_copy_without_its_data_names_its_site_and_kind() {
        let single_file = "<!DOCTYPE html> <html lang=\"en\"><!--\n Page saved with SingleFile \n url: https://www.cricbuzz.com/cricket-match/live-scores \n saved date: Fri Jul 17 2026\n--><head><title>Live Cricket Scores</title></head><body>…</body></html>";
        let what = saved_without_data(single_file).expect("names the site");
        assert!(
            what.starts_with("the page is a copy of https://www.cricbuzz.com/cricket-match/live-scores saved by SingleFile without the data its scripts carry: the `cricbuzz` kind reads the match data of its `self.__next_f.push(…)` scripts")
                && what.contains("name it as cricbuzz=LOCATION"),
            "{what}"
        );
        let canonical = "<html><head><link rel=\"canonical\" href=\"https://www.espncricinfo.com/live-cricket-score\"/></head></html>";
        let what = saved_without_data(canonical).expect("names the site");
        assert!(
            what.contains("copy of https://www.espncricinfo.com/live-cricket-score saved without")
                && what.contains("`espncricinfo` kind"),
            "{what}"
        );
        let marked = "<!-- saved from url=(0041)https://m.cricbuzz.com/live-cricket-scores -->\n<html></html>";
        assert!(saved_without_data(marked).is_some_and(|w| w.contains("https://m.cricbuzz.com/live-cricket-scores")));
        // With its data, or of another site: not this sentence.
        assert_eq!(
            saved_without_data(&format!("{canonical}<script id=\"__NEXT_DATA__\">{{}}</script>")),
            None
        );
        assert_eq!(
            saved_without_data("<link rel=\"canonical\" href=\"https://example.com/scores\">"),
            None
        );
        assert_eq!(
            saved_without_data("<link rel=\"canonical\" href=\"https://notcricbuzz.com/x\">"),
            None
        );
        assert_eq!(saved_without_data("<html>no address</html>"), None);
    }
}
