//! Scraped text is untrusted: this module makes it safe to put in a post.
//!
//! A team or series name must never mention an account, start a hashtag or cashtag we did not
//! choose, smuggle in control or bidirectional-override characters, or blow up a post's length.

/// The most characters kept from one scraped field (a hostile page may send 10 KB names).
pub const MAX_FIELD_CHARS: usize = 120;

/// Makes one scraped field safe for a post:
/// - decodes HTML entities (`&amp;` → `&`);
/// - removes control, zero-width and bidirectional-control characters;
/// - collapses runs of whitespace to one space and trims;
/// - replaces `@` with `﹫` (U+FE6B) so no account is mentioned, and a leading `#`/`$` of a word
///   with `﹟`/`﹩` so no hashtag or cashtag is created (twitter-text recognises only `@＠`,
///   `#＃` and `$` as sigils);
/// - cuts the result to [`MAX_FIELD_CHARS`] characters, ending with `…` when cut.
pub fn clean(raw: &str) -> String {
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

/// Zero-width and bidirectional formatting characters: invisible, and able to reorder or hide
/// text (Unicode TR9 explicit formatting; U+200B–U+200F, U+202A–U+202E, U+2060–U+2069, U+FEFF).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}')
}

#[cfg(test)]
mod tests {
    use super::clean;

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
    fn entities_controls_bidi_and_whitespace_are_cleaned() {
        assert_eq!(clean("  A &amp; B\u{202E}\u{200B}\n\t C\u{0007} "), "A & B C");
    }

    #[test]
    fn a_ten_kilobyte_name_is_cut() {
        let s = clean(&"x".repeat(10_000));
        assert_eq!(s.chars().count(), super::MAX_FIELD_CHARS + 1);
        assert!(s.ends_with('…'));
    }
}
