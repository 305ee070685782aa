//! Links in a post's text: where they are ([`url_spans`]), and how a platform that shows a
//! link by a label (Bluesky, whose text would otherwise spend a third of its 300 graphemes on an
//! 80-character URL) writes them ([`link_label`], [`labelled`]).

/// Characters of a link's path (with its query and fragment) a label shows in full; a longer
/// one shows its first `LABEL_PATH_CHARS - 1` characters and `…`. The official Bluesky app's
/// rule (`toShortUrl` in bluesky-social/social-app, `src/lib/strings/url-helpers.ts`), which is
/// how people see links in every other post there.
pub const LABEL_PATH_CHARS: usize = 16;

/// The label a link is shown by: its host without `www.` (and its port, when it has one), then
/// its path, query and fragment, cut to [`LABEL_PATH_CHARS`] characters ending with `…`
/// (`https://www.cricbuzz.com/live-cricket-scores/158062` → `cricbuzz.com/live-cricket-s…`).
/// A bare host (`https://example.com/`) is just the host. Text that is not an absolute
/// `http(s)` URL is its own label.
pub fn link_label(link: &str) -> String {
    let Ok(url) = url::Url::parse(link) else {
        return link.to_string();
    };
    let Some(host) = url.host_str().filter(|_| matches!(url.scheme(), "http" | "https")) else {
        return link.to_string();
    };
    let host = host.strip_prefix("www.").unwrap_or(host);
    let host = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let mut path = match url.path() {
        "/" => String::new(),
        p => p.to_string(),
    };
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    if let Some(f) = url.fragment() {
        path.push('#');
        path.push_str(f);
    }
    if path.chars().count() > LABEL_PATH_CHARS {
        let kept: String = path.chars().take(LABEL_PATH_CHARS - 1).collect();
        return format!("{host}{kept}…");
    }
    format!("{host}{path}")
}

/// A text whose links are shown by their labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    /// The text with each link replaced by its [`link_label`].
    pub text: String,
    /// Each link, in text order: where its label is in [`Labelled::text`] (UTF-8 byte offsets,
    /// end exclusive) and the full link behind it.
    pub links: Vec<LabelledLink>,
}

/// One link of a [`Labelled`] text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelledLink {
    /// The label's first byte in the labelled text.
    pub start: usize,
    /// The byte after the label's last.
    pub end: usize,
    /// The full link the label stands for.
    pub uri: String,
}

/// `text` with every `http(s)` URL ([`url_spans`]) shown by its [`link_label`], and where each
/// label is: what a Bluesky post's text and link facets are made of.
pub fn labelled(text: &str) -> Labelled {
    let mut shown = String::with_capacity(text.len());
    let mut links = Vec::new();
    let mut rest = 0;
    for (start, end) in url_spans(text) {
        // Spans are in order and on character boundaries; `get` keeps a mistake from panicking.
        let (Some(before), Some(uri)) = (text.get(rest..start), text.get(start..end)) else {
            continue;
        };
        shown.push_str(before);
        let label = link_label(uri);
        let at = shown.len();
        shown.push_str(&label);
        links.push(LabelledLink {
            start: at,
            end: shown.len(),
            uri: uri.to_string(),
        });
        rest = end;
    }
    shown.push_str(text.get(rest..).unwrap_or_default());
    Labelled { text: shown, links }
}

/// The byte ranges (start, end exclusive) of the `http://`/`https://` URLs in `text`, in order,
/// found by twitter-text's extractor (the one Mastodon's length rule uses) without
/// protocol-less URLs, as Mastodon counts them.
///
/// The extractor runs its `External` backend (pest grammar, TLDs checked by table): the default
/// `Nom` backend of twitter-text 0.3.1 panics on some text (`":𐒰A@"` slices inside a 4-byte
/// character in `is_rt_prefix_before`), and a post is scraped text.
pub(crate) fn url_spans(text: &str) -> Vec<(usize, usize)> {
    use twitter_text::extractor::{Extract, Extractor, ParserBackend};
    let mut extractor = Extractor::with_parser_backend(ParserBackend::External);
    extractor.set_extract_url_without_protocol(false);
    let mut spans = Vec::new();
    let mut cursor = 0;
    for entity in extractor.extract_urls_with_indices(text) {
        let value = entity.get_value();
        // The entities come in text order; each value is a slice of the text, found from the
        // end of the previous one, so its byte range is exact whatever the indices' unit.
        if let Some(found) = text.get(cursor..).and_then(|rest| rest.find(value)) {
            let start = cursor + found;
            let end = start + value.len();
            spans.push((start, end));
            cursor = end;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_spans_are_byte_ranges_of_the_urls() {
        let text = "Zimbabwe 🇿🇼 v Bangladesh https://www.cricbuzz.com/x/158062 ✓";
        let spans = url_spans(text);
        assert_eq!(spans.len(), 1);
        let (s, e) = spans[0];
        assert_eq!(&text[s..e], "https://www.cricbuzz.com/x/158062");
        assert_eq!((s, e), (31, 64));
    }

    #[test]
    fn a_label_is_the_host_without_www_and_the_paths_start() {
        assert_eq!(
            link_label("https://www.cricbuzz.com/live-cricket-scores/158062"),
            "cricbuzz.com/live-cricket-s…"
        );
        assert_eq!(link_label("https://is.gd/AbC123"), "is.gd/AbC123");
        assert_eq!(link_label("https://example.com/"), "example.com");
        // Sixteen characters are shown whole; seventeen are cut to fifteen and `…`.
        assert_eq!(link_label("https://a.com/0123456789abcde"), "a.com/0123456789abcde");
        assert_eq!(link_label("https://a.com/0123456789abcdef"), "a.com/0123456789abcd…");
        assert_eq!(link_label("http://127.0.0.1:8080/m?id=1"), "127.0.0.1:8080/m?id=1");
        assert_eq!(link_label("not a link"), "not a link");
    }

    #[test]
    fn labels_replace_links_and_say_where_they_are_in_bytes() {
        let text = "🏏 Zimbabwe v Bangladesh\nhttps://www.cricbuzz.com/live-cricket-scores/158062 and https://is.gd/x";
        let l = labelled(text);
        assert_eq!(
            l.text,
            "🏏 Zimbabwe v Bangladesh\ncricbuzz.com/live-cricket-s… and is.gd/x"
        );
        assert_eq!(l.links.len(), 2);
        assert_eq!(
            &l.text[l.links[0].start..l.links[0].end],
            "cricbuzz.com/live-cricket-s…"
        );
        assert_eq!((l.links[0].start, l.links[0].end), (27, 57));
        assert_eq!(l.links[0].uri, "https://www.cricbuzz.com/live-cricket-scores/158062");
        assert_eq!(&l.text[l.links[1].start..l.links[1].end], "is.gd/x");
        assert_eq!(labelled("no links").text, "no links");
    }
}
