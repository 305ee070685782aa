//! Telling what a page that no parser read actually is, so that the error says what to do
//! instead of quoting a JSON or XML parser's complaint about byte 1.
//!
//! Only consulted once a page has been refused (or its kind could not be detected): the normal
//! path never pays for it. Each finding is one plain sentence naming the form of the page and
//! the fix, in the order checked: UTF-16 without a byte-order mark, a known binary format (PDF,
//! ZIP or Office document, gzip, image), other binary data, JSON wrapped in JavaScript, an Atom
//! feed.

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
    if let Some(wrapper) = javascript_wrapper(head) {
        return Some(format!(
            "the page is JSON wrapped in JavaScript (`{wrapper} {{…}}`), not JSON; save only the JSON \
             value, from its first `{{` to its last `}}`, or point the source at the API's own URL"
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

/// The JavaScript that wraps a JSON value ("export const data =", "window.__DATA__ =",
/// "module.exports ="), when the page starts with one followed by `{` or `[`.
fn javascript_wrapper(head: &str) -> Option<String> {
    let text = head.trim_start();
    let (statement, rest) = text.split_once('=')?;
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
    let fits = match words.as_slice() {
        ["export", "const" | "let" | "var", name] | ["const" | "let" | "var", name] => ident(name),
        ["export", "default"] => true,
        [target] => {
            ident(target)
                && (target.starts_with("window.") || *target == "module.exports" || target.starts_with("self."))
        }
        _ => false,
    };
    fits.then(|| format!("{} =", words.join(" ")))
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
        let js = unsupported("export const data = {\"typeMatches\": []};").unwrap();
        assert!(
            js.contains("JSON wrapped in JavaScript (`export const data = {…}`)"),
            "{js}"
        );
        assert!(unsupported("window.__DATA__ = [1]")
            .unwrap()
            .contains("`window.__DATA__ = {…}`"));
        let atom = "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>x</title></feed>";
        assert!(unsupported(atom).unwrap().contains("Atom feed"));
    }
}
