//! Scraped text is untrusted: this module makes it safe to put in a post.
//!
//! A team or series name must never mention an account, start a hashtag or cashtag we did not
//! choose, smuggle in control or bidirectional-override characters, or blow up a post's length.

/// The most characters kept from one scraped field (a hostile page may send 10 KB names).
pub const MAX_FIELD_CHARS: usize = 120;

/// Cuts `s` to at most `max_bytes` bytes, at a character boundary (never inside a character);
/// true when it cut. For bounds in bytes (a stored key, a quoted value in an error), where
/// [`MAX_FIELD_CHARS`] counts characters.
pub fn cut_to_bytes(s: &mut String, max_bytes: usize) -> bool {
    if s.len() <= max_bytes {
        return false;
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    true
}

/// The most bytes of one text read from a store or a page that any output shows: a table cell
/// (even with `--wide`), a JSON string, an error, a log field. 1 KiB holds every owner, title,
/// detail and identity the bot writes, and an X or Mastodon post; longer text (a hostile
/// record's 8 MiB owner, a Telegram post of 4,096 characters) is cut there and says its full
/// length ([`bounded`]).
pub const MAX_SHOWN_BYTES: usize = 1024;

/// `raw` as any output may show it, whatever its length: itself when at most
/// [`MAX_SHOWN_BYTES`]; else its first [`MAX_SHOWN_BYTES`] bytes (cut at a character boundary)
/// followed by `… (N bytes in all)`. The one bound for text from a store or a page, in tables,
/// JSON, errors and logs alike; [`shown`] also escapes it for a terminal.
pub fn bounded(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.len() <= MAX_SHOWN_BYTES {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut end = MAX_SHOWN_BYTES;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes in all)", &raw[..end], raw.len()))
}

/// `raw` as a terminal or a text log line may show it: [`bounded`], then [`escaped`].
pub fn shown(raw: &str) -> std::borrow::Cow<'_, str> {
    match bounded(raw) {
        std::borrow::Cow::Borrowed(b) => escaped(b),
        std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(escaped(&o).into_owned()),
    }
}

/// Makes one scraped field safe for a post:
/// - decodes HTML entities (`&amp;` → `&`);
/// - removes control, zero-width and bidirectional-control characters;
/// - collapses runs of whitespace to one space and trims;
/// - replaces `@` with `﹫` (U+FE6B) so no account is mentioned, and a leading `#`/`$` of a word
///   with `﹟`/`﹩` so no hashtag or cashtag is created (twitter-text recognises only `@＠`,
///   `#＃` and `$` as sigils);
/// - cuts the result to [`MAX_FIELD_CHARS`] characters, ending with `…` when cut;
/// - neutralises links (see [`neutralise_links`]): only the template's own link may be one.
pub fn clean(raw: &str) -> String {
    neutralise_links(&clean_chars(raw))
}

/// The dot put in place of `.` inside scraped text that X would turn into a link: U+2024 ONE DOT
/// LEADER, which looks like a full stop but is not a domain separator for twitter-text.
pub const LINK_DOT: char = '\u{2024}';

/// The colon put in place of `:` in such text: U+A789 MODIFIER LETTER COLON.
pub const LINK_COLON: char = '\u{A789}';

/// Makes text that twitter-text would extract as a URL (`https://evil.example`,
/// `www.evil.example`, or a bare `evil.com`) inert, by replacing its dots with [`LINK_DOT`]
/// and its colons with [`LINK_COLON`]. A scraped name must never become a second link: it
/// would weigh 23 characters and point readers somewhere we did not choose. Text without a URL
/// is returned unchanged.
///
/// URL recognition is twitter-text's own extractor, the same rules X applies
/// (<https://github.com/twitter/twitter-text>).
pub fn neutralise_links(text: &str) -> String {
    let extractor = twitter_text::extractor::Extractor::new();
    let mut out = text.to_string();
    // Each pass removes every URL found; a replacement cannot create a new one, but a bounded
    // loop costs nothing and guards against extractor surprises.
    for _ in 0..4 {
        let urls = extractor.extract_urls(&out);
        if urls.is_empty() {
            break;
        }
        for url in urls {
            let inert: String = url
                .chars()
                .map(|c| match c {
                    '.' => LINK_DOT,
                    ':' => LINK_COLON,
                    other => other,
                })
                .collect();
            out = out.replace(&url, &inert);
        }
    }
    out
}

/// One scraped field as plain text, the form every parser stores: HTML entities decoded once,
/// whitespace and control characters collapsed to single spaces, zero-width and bidirectional
/// formatting characters removed (they can hide or reorder text), trimmed. `None` when nothing
/// is left. Mentions and links are left alone here: [`clean`] makes them safe when posting.
pub fn plain(raw: &str) -> Option<String> {
    plain_cow(raw).map(std::borrow::Cow::into_owned)
}

/// [`plain`] without a copy when `raw` is already plain text (most scraped fields are): for
/// parsers that only look at a field, or cut it into parts, before keeping any of it.
pub fn plain_cow(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    if is_plain_already(raw) {
        return Some(std::borrow::Cow::Borrowed(raw));
    }
    plain_decoded(raw).map(std::borrow::Cow::Owned)
}

fn plain_decoded(raw: &str) -> Option<String> {
    let decoded = html_escape::decode_html_entities(raw);
    let mut out = String::with_capacity(decoded.len());
    let mut pending_space = false;
    for c in decoded.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = true;
            continue;
        }
        if is_invisible(c) {
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    (!out.is_empty()).then_some(out)
}

/// `text.trim()`, without looking at characters when the text starts and ends with a printable
/// ASCII byte (nearly every field): then there is nothing to trim, and `str::trim` would still
/// decode a character at each end to ask Unicode whether it is whitespace.
pub(crate) fn trim(text: &str) -> &str {
    match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// True when [`plain`] would return `raw` unchanged: printable ASCII without `&` (so no
/// entity), single spaces only between words. Most scraped fields are; they skip the decoding.
fn is_plain_already(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first == b' ' || last == b' ' {
        return false;
    }
    // Eight bytes at a time (this runs for every field of every match, and nearly every field
    // passes): bit 7 of each byte flags a byte that is not printable or is `&`, or a space.
    let mut chunks = bytes.chunks_exact(8);
    let mut bad = 0u64;
    // The space flag of the previous chunk's last byte, moved to bit 7 of byte 0.
    let mut space_before = 0u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let spaces = bytes_equal(x, b' ');
        // A space whose next byte (8 bits up) or previous byte is a space.
        bad |= not_plain_bytes(x) | (spaces & ((spaces >> 8) | space_before));
        space_before = spaces >> 56;
    }
    let mut prev_space = space_before != 0;
    let mut ok = bad == 0;
    for &b in chunks.remainder() {
        ok &= (b.wrapping_sub(b' ') <= b'~' - b' ') & (b != b'&') & !(prev_space & (b == b' '));
        prev_space = b == b' ';
    }
    ok
}

/// Bit 7 of every byte.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// Bits 0–6 of every byte.
const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;
/// Bit 0 of every byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// Bit 7 of each byte of `x` that equals `b`, exactly: no carry crosses a byte.
fn bytes_equal(x: u64, b: u8) -> u64 {
    let t = x ^ (ONES * u64::from(b));
    !(((t & LOW_SEVEN) + LOW_SEVEN) | t) & HIGH_BITS
}

/// Bit 7 of each byte of `x` outside `' '..='~'`, or equal to `&`.
fn not_plain_bytes(x: u64) -> u64 {
    let low = x & LOW_SEVEN;
    let not_ascii = x & HIGH_BITS;
    // (b & 0x7f) + 0x60 reaches bit 7 exactly when b & 0x7f >= 0x20.
    let control = !(low + ONES * 0x60) & HIGH_BITS;
    // (b & 0x7f) + 1 reaches bit 7 exactly when b & 0x7f is 0x7f (DEL).
    let delete = (low + ONES) & HIGH_BITS;
    not_ascii | control | delete | bytes_equal(x, b'&')
}

fn clean_chars(raw: &str) -> String {
    let decoded = html_escape::decode_html_entities(raw);
    let mut out = String::with_capacity(decoded.len().min(MAX_FIELD_CHARS * 4));
    let mut pending_space = false;
    let mut count = 0usize;
    for c in decoded.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_invisible(c) {
            continue;
        }
        if count >= MAX_FIELD_CHARS {
            out.push('…');
            return out;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        let word_start = out.is_empty() || out.ends_with(' ') || out.ends_with(['(', '[', '/', '-']);
        let safe = match c {
            '@' | '＠' => '﹫',
            '#' | '＃' if word_start => '﹟',
            '$' if word_start => '﹩',
            other => other,
        };
        out.push(safe);
        count += 1;
    }
    out
}

/// `raw` as it may be written to a terminal or a text log line: every control, zero-width and
/// bidirectional formatting character shown as its escape (`\n`, `\u{1b}`, `\u{202e}`), so text
/// read from a store or a page (an owner name, a title, an error detail) can neither forge a
/// log line nor drive the terminal. Printable text is returned unchanged, without a copy.
pub fn escaped(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.chars().any(|c| c.is_control() || is_invisible(c)) {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len() + 8);
    for c in raw.chars() {
        if c.is_control() || is_invisible(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Zero-width and bidirectional formatting characters: invisible, and able to reorder or hide
/// text (Unicode TR9 explicit formatting; U+200B–U+200F, U+202A–U+202E, U+2060–U+2069, U+FEFF).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}')
}

#[cfg(test)]
mod tests {
    use super::{clean, escaped, is_plain_already, neutralise_links, plain, plain_decoded, LINK_COLON, LINK_DOT};
    use proptest::prelude::*;

    /// [`is_plain_already`] as it was, byte by byte.
    fn is_plain_by_bytes(raw: &str) -> bool {
        let bytes = raw.as_bytes();
        let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
            return false;
        };
        let printable = bytes.iter().all(|&b| (b' '..=b'~').contains(&b) && b != b'&');
        let double_space = bytes.windows(2).any(|w| w == b"  ");
        first != b' ' && last != b' ' && printable && !double_space
    }

    proptest! {
        #[test]
        fn the_quick_trim_is_str_trim(text in "[ a~\t\u{1f}\u{a0}\u{3000}é]{0,6}") {
            prop_assert_eq!(super::trim(&text), text.trim());
        }

        #[test]
        fn the_plain_check_eight_bytes_at_a_time_agrees_with_byte_by_byte(
            raw in "[ a&~\t\u{1f}\u{7f}\u{80}é]{0,40}|[ -~]{0,40}|[a-z ]{0,40}"
        ) {
            prop_assert_eq!(is_plain_already(&raw), is_plain_by_bytes(&raw));
        }
    }

    proptest! {
        /// The shortcut for text that needs no work changes nothing: same answer as decoding.
        #[test]
        fn the_plain_ascii_shortcut_agrees_with_full_decoding(raw in "[ -~\t\u{A0}\u{200B}]{0,24}") {
            prop_assert_eq!(plain(&raw), plain_decoded(&raw));
        }
    }

    #[test]
    fn plain_text_decodes_collapses_and_drops_invisible_characters() {
        assert_eq!(
            plain("  Sri&nbsp;Lanka\u{0}\t&amp; \u{202E}Co\u{200B}  ").as_deref(),
            Some("Sri Lanka & Co")
        );
        assert_eq!(plain(" \u{200B}\n "), None);
        assert_eq!(
            plain("@user #tag").as_deref(),
            Some("@user #tag"),
            "posting makes these safe, not parsing"
        );
    }
    use twitter_text::extractor::Extractor;

    fn urls(s: &str) -> Vec<String> {
        Extractor::new().extract_urls(s)
    }

    fn mentions(s: &str) -> Vec<String> {
        Extractor::new().extract_mentioned_screennames(s)
    }

    #[test]
    fn a_url_in_a_team_name_is_no_longer_a_link_for_twitter_text() {
        for hostile in [
            "Lions https://evil.com/phish XI",
            "HTTP://EVIL.COM",
            "www.evil.com Strikers",
            "visit evil.com now",
            "t.co/abc",
            "Kings (http://xn--80ak6aa92e.com)",
        ] {
            assert!(
                !urls(hostile).is_empty(),
                "precondition: {hostile} is a link before cleaning"
            );
            let cleaned = clean(hostile);
            assert_eq!(urls(&cleaned), Vec::<String>::new(), "{hostile} → {cleaned}");
        }
        assert_eq!(
            clean("Lions https://evil.com/phish XI"),
            format!("Lions https{LINK_COLON}//evil{LINK_DOT}com/phish XI")
        );
    }

    #[test]
    fn text_without_a_url_keeps_its_dots_and_colons() {
        assert_eq!(
            neutralise_links("St. Kitts v U.S.A., 2nd T20I: 10:30"),
            "St. Kitts v U.S.A., 2nd T20I: 10:30"
        );
        assert_eq!(
            clean("Dr. D.Y. Patil Sports Academy, Mumbai"),
            "Dr. D.Y. Patil Sports Academy, Mumbai"
        );
    }

    #[test]
    fn no_hostile_mention_survives_cleaning() {
        for hostile in ["@elonmusk", "＠elonmusk", ".@jack XI", "(@XDevelopers)"] {
            assert!(
                !mentions(hostile).is_empty(),
                "precondition: {hostile} mentions someone"
            );
            assert_eq!(mentions(&clean(hostile)), Vec::<String>::new(), "{hostile}");
        }
    }

    #[test]
    fn right_to_left_marks_and_overrides_are_removed() {
        assert_eq!(
            clean("\u{200F}India\u{200E} v \u{202E}nātsikaP\u{202C}\u{2067}x\u{2069}"),
            "India v nātsikaPx"
        );
    }

    #[test]
    fn emoji_and_cjk_names_pass_through_unchanged() {
        assert_eq!(clean("🏏 日本 v 香港 🇯🇵"), "🏏 日本 v 香港 🇯🇵");
    }

    #[test]
    fn template_syntax_in_a_name_stays_plain_text() {
        assert_eq!(
            clean("{{ link }} {% if x %}XI{% endif %}"),
            "{{ link }} {% if x %}XI{% endif %}"
        );
    }

    #[test]
    fn a_ten_kilobyte_name_of_emoji_or_links_is_cut_and_inert() {
        let s = clean(&"🏏".repeat(10_000));
        assert_eq!(s.chars().count(), super::MAX_FIELD_CHARS + 1);
        let s = clean(&"https://evil.com/ ".repeat(600));
        assert_eq!(urls(&s), Vec::<String>::new());
        assert!(s.chars().count() <= super::MAX_FIELD_CHARS + 1);
    }

    #[test]
    fn a_mention_in_a_team_name_is_neutralised() {
        assert_eq!(clean("@elonmusk XI"), "﹫elonmusk XI");
        assert_eq!(clean("Team＠x"), "Team﹫x");
    }

    #[test]
    fn hashtags_and_cashtags_we_did_not_choose_are_neutralised() {
        assert_eq!(clean("#Winners $TSLA Club"), "﹟Winners ﹩TSLA Club");
        assert_eq!(clean("C# 2$"), "C# 2$");
    }

    #[test]
    fn escaped_text_shows_control_and_bidi_characters_as_escapes() {
        assert_eq!(escaped("bot-a"), "bot-a");
        assert_eq!(
            escaped("a\nINFO forged\u{1b}[2J\u{202e}x"),
            "a\\nINFO forged\\u{1b}[2J\\u{202e}x"
        );
        assert!(matches!(escaped("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn entities_controls_bidi_and_whitespace_are_cleaned() {
        assert_eq!(clean("  A &amp; B\u{202E}\u{200B}\n\t C\u{0007} "), "A & B C");
    }

    #[test]
    fn text_over_the_shown_bound_is_cut_at_a_character_and_says_its_length() {
        use super::{bounded, shown, MAX_SHOWN_BYTES};
        let short = "host-1:42";
        assert!(matches!(bounded(short), std::borrow::Cow::Borrowed(s) if s == short));
        let exact = "a".repeat(MAX_SHOWN_BYTES);
        assert_eq!(bounded(&exact), exact.as_str());
        let huge = "O".repeat(8 * 1024 * 1024);
        assert_eq!(
            bounded(&huge),
            format!("{}… (8388608 bytes in all)", "O".repeat(MAX_SHOWN_BYTES))
        );
        // A 3-byte character across the bound is kept out whole, never split.
        let wide = format!("{}€€", "a".repeat(MAX_SHOWN_BYTES - 1));
        assert_eq!(
            bounded(&wide),
            format!("{}… (1029 bytes in all)", "a".repeat(MAX_SHOWN_BYTES - 1))
        );
        // Escaped after the cut: a control character stays an escape, the bound still holds.
        let controls = "\u{1b}".repeat(4096);
        let escaped = shown(&controls);
        assert!(escaped.starts_with("\\u{1b}\\u{1b}"), "{escaped:.20}");
        assert!(escaped.ends_with("… (4096 bytes in all)"));
        assert!(escaped.len() < 7 * MAX_SHOWN_BYTES);
    }

    #[test]
    fn a_ten_kilobyte_name_is_cut() {
        let s = clean(&"x".repeat(10_000));
        assert_eq!(s.chars().count(), super::MAX_FIELD_CHARS + 1);
        assert!(s.ends_with('…'));
    }
}
