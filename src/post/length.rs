//! How long a post may be on each sink ([`LengthRule`]): what the platform counts, its limit,
//! and the text as the platform takes it.

use super::error::SinkError;
use super::kind::SinkKind;
use super::urls::{labelled, url_spans};
use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// X's limit on a post, in weighted characters.
///
/// Documentation: <https://docs.x.com/resources/fundamentals/counting-characters>
pub const MAX_WEIGHTED_LENGTH: usize = 280;

/// Weighted length of `text` by X's counting rules (twitter-text configuration v3): text is
/// NFC-normalised, most Latin characters count 1, CJK and emoji count 2, every URL counts 23
/// whatever its length.
pub fn weighted_length(text: &str) -> usize {
    let nfc: String = text.nfc().collect();
    let parsed = twitter_text::parse(&nfc, twitter_text_config::config_v3(), true);
    usize::try_from(parsed.weighted_length).unwrap_or(usize::MAX)
}

/// The length rule of a sink: what it counts and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthRule {
    /// X: twitter-text weighted length (URLs 23, CJK and emoji 2) of the NFC-normalised text,
    /// at most [`MAX_WEIGHTED_LENGTH`].
    ///
    /// Documentation: <https://docs.x.com/resources/fundamentals/counting-characters>
    XWeighted,
    /// Mastodon: grapheme clusters, each `http(s)://` URL counting `characters_reserved_per_url`
    /// whatever its length, at most `max_characters` (both read from the instance by the
    /// Mastodon sink's `prepare`). Mastodon counts a remote mention `@user@domain` as `@user`
    /// only; this rule counts it whole, which can only over-count.
    ///
    /// Documentation: <https://docs.joinmastodon.org/entities/Instance/#statuses> and
    /// `StatusLengthValidator` (mastodon/mastodon, `app/validators/status_length_validator.rb`).
    Mastodon {
        /// `configuration.statuses.max_characters` (500 unless the instance changed it).
        max_characters: usize,
        /// `configuration.statuses.characters_reserved_per_url` (23).
        characters_reserved_per_url: usize,
    },
    /// Bluesky: at most 300 grapheme clusters and 3,000 UTF-8 bytes (`app.bsky.feed.post`
    /// `text`: `maxGraphemes: 300`, `maxLength: 3000`).
    ///
    /// Documentation: <https://docs.bsky.app/docs/advanced-guides/post-richtext> and the
    /// lexicon <https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json>
    Bluesky,
    /// Discord (2,000) and Telegram (4,096): counted in UTF-16 code units. Telegram counts
    /// text and entity offsets in UTF-16 units; Discord documents "characters", and UTF-16
    /// units are never fewer than characters, so a post that passes is never too long there.
    ///
    /// Documentation: <https://discord.com/developers/docs/resources/webhook#execute-webhook>,
    /// <https://core.telegram.org/bots/api#sendmessage>, <https://core.telegram.org/api/entities#entity-length>
    Utf16 {
        /// The most UTF-16 code units.
        max: usize,
    },
}

/// Mastodon's `max_characters` when the instance does not say.
///
/// Documentation: <https://docs.joinmastodon.org/entities/Instance/#statuses>
pub const MASTODON_DEFAULT_MAX_CHARACTERS: usize = 500;

/// Mastodon's `characters_reserved_per_url` when the instance does not say.
///
/// Documentation: <https://docs.joinmastodon.org/entities/Instance/#statuses>
pub const MASTODON_DEFAULT_URL_CHARACTERS: usize = 23;

/// Mastodon's limits when the instance does not say: 500 characters, URLs 23.
pub const MASTODON_DEFAULT: LengthRule = LengthRule::Mastodon {
    max_characters: MASTODON_DEFAULT_MAX_CHARACTERS,
    characters_reserved_per_url: MASTODON_DEFAULT_URL_CHARACTERS,
};

/// Discord's limit on a message's `content`: 2,000 characters.
///
/// Documentation: <https://discord.com/developers/docs/resources/webhook#execute-webhook>
pub const DISCORD_LENGTH: LengthRule = LengthRule::Utf16 { max: 2_000 };

/// Telegram's limit on `sendMessage` `text`: 4,096 characters after entity parsing.
///
/// Documentation: <https://core.telegram.org/bots/api#sendmessage>
pub const TELEGRAM_LENGTH: LengthRule = LengthRule::Utf16 { max: 4_096 };

/// Bluesky's byte limit on a post's text, next to its 300 graphemes.
const BLUESKY_MAX_BYTES: usize = 3_000;

/// Bluesky's grapheme limit on a post's text.
const BLUESKY_MAX_GRAPHEMES: usize = 300;

impl LengthRule {
    /// The rule of `kind` without asking its server: Mastodon's default (500, URLs 23), the
    /// fixed rules of the others. What a dry run fits posts to.
    pub fn default_for(kind: SinkKind) -> LengthRule {
        match kind {
            SinkKind::X => LengthRule::XWeighted,
            SinkKind::Mastodon => MASTODON_DEFAULT,
            SinkKind::Bluesky => LengthRule::Bluesky,
            SinkKind::Discord => DISCORD_LENGTH,
            SinkKind::Telegram => TELEGRAM_LENGTH,
        }
    }

    /// What the rule counts, for messages.
    pub fn unit(&self) -> &'static str {
        match self {
            LengthRule::XWeighted => "weighted characters",
            LengthRule::Mastodon { .. } => "characters (URLs counted as reserved)",
            LengthRule::Bluesky => "graphemes",
            LengthRule::Utf16 { .. } => "UTF-16 code units",
        }
    }

    /// The rule's limit, in [`LengthRule::unit`]s.
    pub fn max(&self) -> usize {
        match self {
            LengthRule::XWeighted => MAX_WEIGHTED_LENGTH,
            LengthRule::Mastodon { max_characters, .. } => *max_characters,
            LengthRule::Bluesky => BLUESKY_MAX_GRAPHEMES,
            LengthRule::Utf16 { max } => *max,
        }
    }

    /// Whether the rule counts X's *weighted* length, which output calls so (`weighted length
    /// 157/280`, `"weighted_length"`), where the other rules' is a length in their unit.
    pub fn is_weighted(&self) -> bool {
        *self == LengthRule::XWeighted
    }

    /// `length` as output shows it against the limit: `weighted length 157/280`, `length
    /// 120/500 graphemes`.
    pub fn describe(&self, length: usize) -> String {
        if self.is_weighted() {
            format!("weighted length {length}/{}", self.max())
        } else {
            format!("length {length}/{} {}", self.max(), self.unit())
        }
    }

    /// `text` as the platform takes and counts it: NFC-normalised for X (twitter-text counts
    /// the normalised text, and the X client has always sent it so), unchanged for the others.
    pub fn normalise<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self {
            LengthRule::XWeighted => Cow::Owned(text.nfc().collect()),
            _ => Cow::Borrowed(text),
        }
    }

    /// `text` as a reader of the sink sees it: on Bluesky each link shown by its label
    /// ([`crate::post::link_label`]; the full link is behind it), elsewhere `text` itself.
    pub fn shown<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self {
            LengthRule::Bluesky => Cow::Owned(labelled(text).text),
            _ => Cow::Borrowed(text),
        }
    }

    /// The length of `text` as the rule counts it (on Bluesky, of the text as shown, each link
    /// by its label).
    pub fn length(&self, text: &str) -> usize {
        match self {
            LengthRule::XWeighted => weighted_length(text),
            LengthRule::Mastodon {
                characters_reserved_per_url,
                ..
            } => {
                let mut length = 0;
                let mut rest = 0;
                for (start, end) in url_spans(text) {
                    // Spans are in order, on char boundaries (see `url_spans`); `get` keeps a
                    // mistake from panicking.
                    let before = text.get(rest..start).unwrap_or_default();
                    length += before.graphemes(true).count() + characters_reserved_per_url;
                    rest = end;
                }
                length + text.get(rest..).unwrap_or_default().graphemes(true).count()
            }
            // Bluesky shows each link by its label (see `urls::labelled`): the label's
            // graphemes are what the post spends.
            LengthRule::Bluesky => labelled(text).text.graphemes(true).count(),
            LengthRule::Utf16 { .. } => text.encode_utf16().count(),
        }
    }

    /// The shape [`crate::template::Template::render_for`] takes: `text` as the post (as the
    /// platform takes it, see [`LengthRule::normalise`]) when it is within the rule, else its
    /// length (0 when empty; over Bluesky's 3,000 bytes, the byte count). Build its `SinkLimit`
    /// from the sink's name, [`LengthRule::max`] and [`LengthRule::unit`].
    ///
    /// # Errors
    /// The text's length when it does not fit.
    pub fn fit(&self, text: &str) -> Result<String, usize> {
        let text = self.normalise(text);
        match self.check(SinkKind::X, &text) {
            Ok(_) => Ok(text.into_owned()),
            Err(SinkError::TooLong { length, .. }) => Err(length),
            Err(_) => Err(self.length(&text)),
        }
    }

    /// The length of `text` when it is within the rule.
    ///
    /// # Errors
    /// [`SinkError::TooLong`] (for `sink`) when it is over, or empty (length 0: every sink
    /// refuses an empty post). Bluesky's 3,000-byte cap is reported in bytes.
    pub fn check(&self, sink: SinkKind, text: &str) -> Result<usize, SinkError> {
        let length = self.length(text);
        if text.trim().is_empty() {
            return Err(SinkError::TooLong {
                sink,
                length: 0,
                max: self.max(),
                unit: self.unit(),
            });
        }
        if length > self.max() {
            return Err(SinkError::TooLong {
                sink,
                length,
                max: self.max(),
                unit: self.unit(),
            });
        }
        let bytes = match self {
            LengthRule::Bluesky => labelled(text).text.len(),
            _ => text.len(),
        };
        if *self == LengthRule::Bluesky && bytes > BLUESKY_MAX_BYTES {
            return Err(SinkError::TooLong {
                sink,
                length: bytes,
                max: BLUESKY_MAX_BYTES,
                unit: "UTF-8 bytes",
            });
        }
        Ok(length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::post::Verdict;

    #[test]
    fn a_url_counts_23_whatever_its_length() {
        let long = format!("See https://example.com/{}", "a".repeat(200));
        assert_eq!(weighted_length(&long), 4 + 23);
    }

    #[test]
    fn cjk_and_emoji_count_two() {
        assert_eq!(weighted_length("日本"), 4);
        assert_eq!(weighted_length("🏏"), 2);
    }

    #[test]
    fn x_takes_the_nfc_text_and_counts_it_weighted() {
        // "e" and a combining acute accent: one character once normalised.
        let decomposed = "Caf\u{65}\u{301}";
        assert_eq!(LengthRule::XWeighted.fit(decomposed), Ok("Caf\u{e9}".to_string()));
        assert_eq!(MASTODON_DEFAULT.fit(decomposed), Ok(decomposed.to_string()));
        assert_eq!(LengthRule::XWeighted.describe(157), "weighted length 157/280");
        assert_eq!(LengthRule::Bluesky.describe(12), "length 12/300 graphemes");
    }

    #[test]
    fn mastodon_counts_graphemes_and_each_url_as_23() {
        let rule = MASTODON_DEFAULT;
        let url = format!("https://www.cricbuzz.com/live-cricket-scores/{}", "9".repeat(120));
        // "Coming up: " is 11, the family emoji one grapheme, " " 1, the URL 23.
        assert_eq!(rule.length(&format!("Coming up: 👨‍👩‍👧 {url}")), 11 + 1 + 1 + 23);
        assert_eq!(rule.length("no link here"), 12);
        // Two URLs, each 23.
        assert_eq!(rule.length("https://a.com/1 and https://b.org/2"), 23 + 5 + 23);
    }

    #[test]
    fn each_rule_has_its_limit_and_refuses_one_more() {
        let cases = [
            (LengthRule::XWeighted, 280, SinkKind::X),
            (MASTODON_DEFAULT, 500, SinkKind::Mastodon),
            (LengthRule::Bluesky, 300, SinkKind::Bluesky),
            (DISCORD_LENGTH, 2_000, SinkKind::Discord),
            (TELEGRAM_LENGTH, 4_096, SinkKind::Telegram),
        ];
        for (rule, max, sink) in cases {
            assert_eq!(rule, LengthRule::default_for(sink));
            assert_eq!(rule.check(sink, &"a".repeat(max)).ok(), Some(max), "{sink}");
            let err = rule.check(sink, &"a".repeat(max + 1)).unwrap_err();
            assert!(
                matches!(err, SinkError::TooLong { length, max: m, .. } if length == max + 1 && m == max),
                "{sink}: {err}"
            );
            assert_eq!(err.verdict(), Verdict::NotPosted);
        }
        assert!(matches!(
            LengthRule::Bluesky.check(SinkKind::Bluesky, "  "),
            Err(SinkError::TooLong { length: 0, .. })
        ));
    }

    #[test]
    fn bluesky_counts_graphemes_and_caps_bytes() {
        // A flag is one grapheme of 8 bytes: 300 of them are 300 graphemes but 2,400 bytes.
        let flags = "🇿🇼".repeat(300);
        assert_eq!(LengthRule::Bluesky.check(SinkKind::Bluesky, &flags).ok(), Some(300));
        // 300 graphemes of 11 bytes each (family emoji with ZWJ... e + 5 combining marks).
        let heavy = "e\u{301}\u{302}\u{303}\u{304}\u{305}".repeat(300);
        let err = LengthRule::Bluesky.check(SinkKind::Bluesky, &heavy).unwrap_err();
        assert!(
            matches!(
                err,
                SinkError::TooLong {
                    length: 3_300,
                    max: 3_000,
                    unit: "UTF-8 bytes",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn utf16_rules_count_astral_characters_twice() {
        assert_eq!(DISCORD_LENGTH.length("🏏a"), 3);
        assert_eq!(TELEGRAM_LENGTH.length("日本"), 2);
    }

    #[test]
    fn text_that_panics_twitter_texts_default_parser_is_measured() {
        // The default (Nom) backend of twitter-text 0.3.1 panics on this input.
        assert_eq!(url_spans(":𐒰A@"), vec![]);
        assert_eq!(MASTODON_DEFAULT.length(":𐒰A@ https://a.com/x"), 4 + 1 + 23);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn any_text_is_measured_without_panicking_and_urls_are_exact_slices(text in "\\PC{0,200}( https?://[a-z]{1,8}\\.com/\\PC{0,20})?\\PC{0,40}") {
            for rule in [MASTODON_DEFAULT, LengthRule::Bluesky, DISCORD_LENGTH, TELEGRAM_LENGTH] {
                let _ = rule.check(SinkKind::Discord, &text);
            }
            let mut last = 0;
            for (start, end) in url_spans(&text) {
                proptest::prop_assert!(last <= start && start < end && text.get(start..end).is_some());
                last = end;
            }
        }
    }
}
