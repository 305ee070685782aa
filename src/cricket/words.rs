//! The words of a text as the format and state rules read them: runs of letters and digits,
//! found without copying the text (every description, series, team name and status line of
//! every page is read this way).

/// The alphanumeric words of `text`, as written: compared with `eq_ignore_ascii_case`, so
/// that no word is copied (this runs for every match of every page, and for its status line).
/// The same words as `text.split(|c: char| !c.is_alphanumeric())` without the empty ones, read
/// byte by byte where the text is ASCII, as it nearly always is.
pub(crate) fn words(text: &str) -> Words<'_> {
    Words {
        text,
        at: 0,
        ascii: text.is_ascii(),
    }
}

/// `u8::is_ascii_alphanumeric` as a table: one load per byte instead of three range checks
/// (every word of every description, series, team name and status line is found this way).
#[allow(clippy::cast_possible_truncation, reason = "byte < 256")]
const ALPHANUMERIC: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_alphanumeric();
        byte += 1;
    }
    table
};

/// The iterator of [`words`].
pub(crate) struct Words<'a> {
    text: &'a str,
    /// Where the rest of the text starts: an index, so that finding a word re-slices nothing
    /// but the word itself.
    at: usize,
    /// Checked once: then every byte is a character.
    ascii: bool,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.ascii {
            let bytes = self.text.as_bytes();
            let alphanumeric = |at: &usize| bytes.get(*at).is_some_and(|&b| ALPHANUMERIC[usize::from(b)]);
            let mut at = self.at;
            while at < bytes.len() && !alphanumeric(&at) {
                at += 1;
            }
            let start = at;
            while alphanumeric(&at) {
                at += 1;
            }
            self.at = at;
            return self.text.get(start..at).filter(|word| !word.is_empty());
        }
        let text = self.text.get(self.at..).unwrap_or_default();
        let mut chars = text.char_indices().skip_while(|(_, c)| !c.is_alphanumeric());
        let start = chars.next().map_or(text.len(), |(i, _)| i);
        let end = chars.find(|(_, c)| !c.is_alphanumeric()).map_or(text.len(), |(i, _)| i);
        self.at += end;
        text.get(start..end).filter(|word| !word.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_alphanumeric_runs_as_a_char_split_gives_them() {
        for text in [
            "",
            "  ",
            "2nd T20I, Group A",
            "Match 12 (T20)",
            "Sri Lanka A Women",
            "Côte d'Ivoire v Ålesund – 1st Test",
            "日本 v 한국, ODI",
            "a\u{200B}b\u{0301}c ½ ²",
            "--x--",
        ] {
            let want: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            assert_eq!(words(text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn words_agree_with_a_char_split_on_any_text(text in "\\PC{0,40}") {
            let want: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), want);
        }
    }
}
