//! Sinks: every place a channel can post to, behind one closed enum ([`Sink`]), with what a
//! failure proves ([`SinkError::verdict`]) and how long a post may be ([`LengthRule`]).
//!
//! Each sink's module owns its wire format and its table of refusals (a `classify` function whose
//! arms cite the platform's documentation); this module owns what they share: the receipt, the
//! error and its classification into the announcer's [`Verdict`]s, the length rules, and the HTTP
//! plumbing that tells "the request never left" from "it left and no answer came back".
//!
//! The contract, the same for every sink (and the one X's [`PostError`] already follows):
//! - [`Verdict::NotPosted`]: nothing was created (connection refused, a documented refusal
//!   before any write, a rate limit): the claim may be released.
//! - [`Verdict::Unknown`]: the post may exist (timeout after the request left, 5xx, an
//!   unreadable success): keep the claim, never retry automatically.
//! - [`Verdict::AlreadyPosted`]: the platform proves the post exists (Bluesky: a record at the
//!   key derived from this match and channel).
//! - [`SinkError::halts_channel`]: no later post *on this channel* can succeed until an operator
//!   acts (credentials refused, webhook deleted, bot removed from the chat); other channels go on.
//! - [`SinkError::is_rate_limited`]: refused for pace; [`SinkError::limits`] says until when.

use super::pace::{RateGate, RateLimits};
use super::{
    BlueskyClient, DiscordClient, MastodonClient, Post, PostError, TelegramClient, Verdict, XClient,
    MAX_WEIGHTED_LENGTH,
};
use crate::claim::ClaimToken;
use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use std::fmt;
use unicode_segmentation::UnicodeSegmentation;

/// The longest error detail kept from an answer, in bytes.
const MAX_DETAIL_BYTES: usize = 300;

/// The kinds of sink, as the channels file names them (`sink = "mastodon"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// X API v2 (`POST /2/tweets`).
    X,
    /// A Mastodon instance (`POST /api/v1/statuses`).
    Mastodon,
    /// Bluesky or any AT Protocol PDS (`com.atproto.repo.createRecord`).
    Bluesky,
    /// A Discord channel's webhook.
    Discord,
    /// A Telegram chat, through the Bot API (`sendMessage`).
    Telegram,
}

impl SinkKind {
    /// Every kind, in the order the channels file documents them.
    pub const ALL: [SinkKind; 5] = [
        SinkKind::X,
        SinkKind::Mastodon,
        SinkKind::Bluesky,
        SinkKind::Discord,
        SinkKind::Telegram,
    ];

    /// The name used in the channels file and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::X => "x",
            SinkKind::Mastodon => "mastodon",
            SinkKind::Bluesky => "bluesky",
            SinkKind::Discord => "discord",
            SinkKind::Telegram => "telegram",
        }
    }

    /// The kind named `raw` (exact, lower case), if any.
    pub fn parse(raw: &str) -> Option<SinkKind> {
        SinkKind::ALL.into_iter().find(|k| k.as_str() == raw)
    }
}

impl fmt::Display for SinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a sink returned for a created post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The sink that took the post.
    pub sink: SinkKind,
    /// The platform's id of the post: tweet id, Mastodon status id, Bluesky `at://` URI,
    /// Discord message id, Telegram message id.
    pub id: String,
    /// Where people see the post, when the platform says (Mastodon `url`).
    pub url: Option<String>,
    /// The server-side dedupe key that was sent (Mastodon `Idempotency-Key`, Bluesky record
    /// key), so the announcer can record it in the claim; `None` where the platform has none.
    pub dedupe_key: Option<String>,
    /// The rate-limit headers of the answer, when it carried any.
    pub limits: Option<RateLimits>,
}

/// How one sink's table classifies a refusal (see each sink's `classify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Refused before anything was written (validation, bad request): nothing was created; a
    /// later attempt may succeed, and it counts as an attempt.
    Rejected,
    /// Refused for pace (429): nothing was created; retry after the reset, no attempt counted.
    RateLimited,
    /// Refused in a way no later post on this channel can overcome until an operator acts
    /// (credentials, permissions, a deleted webhook, a chat the bot left): nothing was created.
    Halt,
    /// The platform answered an error that does not prove whether the post was created (5xx,
    /// an undocumented status): keep the claim.
    Unknown,
}

/// A post that no sink accepted, or that was never sent.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The text breaks the sink's [`LengthRule`]: it was not sent.
    #[error("post is {length} {unit} long, over {sink}'s limit of {max}")]
    TooLong {
        /// The sink whose rule it breaks.
        sink: SinkKind,
        /// The text's length in `unit`s (0 for an empty post, which every sink refuses).
        length: usize,
        /// The rule's limit.
        max: usize,
        /// What the rule counts ("graphemes", "UTF-16 code units", …).
        unit: &'static str,
    },
    /// The connection was never made (refused, DNS, TLS, connect timeout): nothing was sent.
    #[error("could not connect to {sink} at {endpoint}: {source}")]
    Connect {
        /// The sink.
        sink: SinkKind,
        /// The endpoint, with any secret in it (bot token, webhook token) redacted.
        endpoint: String,
        /// The HTTP client's error, without its URL (which may hold a secret).
        #[source]
        source: reqwest::Error,
    },
    /// The request left and no complete answer came back (timeout, reset).
    #[error("no answer from {sink} at {endpoint}{}: {source}", super::within_post_timeout(*timed_out))]
    NoAnswer {
        /// The sink.
        sink: SinkKind,
        /// The endpoint, secrets redacted.
        endpoint: String,
        /// Whether the bound on the whole request (`POST_TIMEOUT_SECS`) cut it off.
        timed_out: bool,
        /// The HTTP client's error, without its URL.
        #[source]
        source: reqwest::Error,
    },
    /// The platform answered with an error.
    #[error("{sink} answered {status}: {detail}")]
    Refused {
        /// The sink.
        sink: SinkKind,
        /// HTTP status code.
        status: u16,
        /// The platform's error name and message, or the start of the body.
        detail: String,
        /// What the sink's table says this refusal proves.
        refusal: Refusal,
        /// The rate-limit headers (or body fields) of the answer, when it carried any.
        limits: Option<RateLimits>,
    },
    /// The platform answered success but not with the documented body.
    #[error("{sink} answered {status} with an unreadable body: {detail}")]
    BadReceipt {
        /// The sink.
        sink: SinkKind,
        /// HTTP status code.
        status: u16,
        /// Why the body could not be read.
        detail: String,
    },
    /// The platform proves the post exists already (Bluesky: a record at this match's key).
    #[error("{sink} already holds this post ({id}): {detail}")]
    AlreadyPosted {
        /// The sink.
        sink: SinkKind,
        /// The existing post's id (Bluesky `at://` URI).
        id: String,
        /// What showed it (the failed create).
        detail: String,
    },
    /// Logging in failed (Bluesky's session), so no post was sent: always
    /// [`Verdict::NotPosted`]; `refusal` says whether the channel halts (credentials refused)
    /// or waits for a rate limit.
    #[error("could not log in to {sink}: {detail}")]
    Login {
        /// The sink.
        sink: SinkKind,
        /// HTTP status code, when the login was answered.
        status: Option<u16>,
        /// The platform's error, or the transport's.
        detail: String,
        /// What the answer says about later logins.
        refusal: Refusal,
        /// The rate-limit headers of the answer, when it carried any.
        limits: Option<RateLimits>,
    },
    /// X's own client failed; [`PostError::verdict`] classifies it.
    #[error(transparent)]
    X(#[from] PostError),
}

impl SinkError {
    /// The sink that failed.
    pub fn sink(&self) -> SinkKind {
        match self {
            SinkError::TooLong { sink, .. }
            | SinkError::Connect { sink, .. }
            | SinkError::NoAnswer { sink, .. }
            | SinkError::Refused { sink, .. }
            | SinkError::BadReceipt { sink, .. }
            | SinkError::AlreadyPosted { sink, .. }
            | SinkError::Login { sink, .. } => *sink,
            SinkError::X(_) => SinkKind::X,
        }
    }

    /// What this failure proves about whether the post exists (see the module doc).
    pub fn verdict(&self) -> Verdict {
        match self {
            // The post itself was never sent.
            SinkError::TooLong { .. } | SinkError::Connect { .. } | SinkError::Login { .. } => Verdict::NotPosted,
            SinkError::NoAnswer { .. } | SinkError::BadReceipt { .. } => Verdict::Unknown,
            SinkError::Refused { refusal, .. } => match refusal {
                Refusal::Rejected | Refusal::RateLimited | Refusal::Halt => Verdict::NotPosted,
                Refusal::Unknown => Verdict::Unknown,
            },
            SinkError::AlreadyPosted { .. } => Verdict::AlreadyPosted,
            SinkError::X(e) => e.verdict(),
        }
    }

    /// True only when the request provably never created a post.
    pub fn proves_not_posted(&self) -> bool {
        self.verdict() == Verdict::NotPosted
    }

    /// True for a refusal for pace: release the claim without counting an attempt and post
    /// after [`SinkError::limits`]' reset.
    pub fn is_rate_limited(&self) -> bool {
        match self {
            SinkError::Refused { refusal, .. } | SinkError::Login { refusal, .. } => *refusal == Refusal::RateLimited,
            SinkError::X(e) => e.is_rate_limited(),
            _ => false,
        }
    }

    /// True when no later post on this channel can succeed until an operator acts; the other
    /// channels are not affected.
    pub fn halts_channel(&self) -> bool {
        match self {
            SinkError::Refused { refusal, .. } | SinkError::Login { refusal, .. } => *refusal == Refusal::Halt,
            SinkError::X(e) => e.halts_posting(),
            _ => false,
        }
    }

    /// The rate limits the failed answer carried, if any.
    pub fn limits(&self) -> Option<RateLimits> {
        match self {
            SinkError::Refused { limits, .. } | SinkError::Login { limits, .. } => *limits,
            SinkError::X(PostError::Refused { limits, .. }) => *limits,
            _ => None,
        }
    }
}

/// The length rule of a sink: what it counts and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthRule {
    /// X: twitter-text weighted length (URLs 23, CJK and emoji 2), at most
    /// [`MAX_WEIGHTED_LENGTH`].
    ///
    /// Documentation: <https://docs.x.com/resources/fundamentals/counting-characters>
    XWeighted,
    /// Mastodon: grapheme clusters, each `http(s)://` URL counting `characters_reserved_per_url`
    /// whatever its length, at most `max_characters` (both read from the instance, see
    /// [`MastodonClient::load_length_rule`]). Mastodon counts a remote mention `@user@domain`
    /// as `@user` only; this rule counts it whole, which can only over-count.
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

    /// The length of `text` as the rule counts it.
    pub fn length(&self, text: &str) -> usize {
        match self {
            LengthRule::XWeighted => super::weighted_length(text),
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
            LengthRule::Bluesky => text.graphemes(true).count(),
            LengthRule::Utf16 { .. } => text.encode_utf16().count(),
        }
    }

    /// The shape [`crate::template::Template::render_for`] takes: `text` as the post when it is
    /// within the rule, else its length (0 when empty; over Bluesky's 3,000 bytes, the byte
    /// count). Build its `SinkLimit` from the sink's name, [`LengthRule::max`] and
    /// [`LengthRule::unit`].
    ///
    /// # Errors
    /// The text's length when it does not fit.
    pub fn fit(&self, text: &str) -> Result<String, usize> {
        match self.check(SinkKind::X, text) {
            Ok(_) => Ok(text.to_string()),
            Err(SinkError::TooLong { length, .. }) => Err(length),
            Err(_) => Err(self.length(text)),
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
        if *self == LengthRule::Bluesky && text.len() > BLUESKY_MAX_BYTES {
            return Err(SinkError::TooLong {
                sink,
                length: text.len(),
                max: BLUESKY_MAX_BYTES,
                unit: "UTF-8 bytes",
            });
        }
        Ok(length)
    }
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

/// A sink, ready to post: one per channel.
#[derive(Debug, Clone)]
pub enum Sink {
    /// X (today's client, unchanged).
    X(XClient),
    /// Mastodon.
    Mastodon(MastodonClient),
    /// Bluesky.
    Bluesky(BlueskyClient),
    /// Discord webhook.
    Discord(DiscordClient),
    /// Telegram Bot API.
    Telegram(TelegramClient),
}

impl Sink {
    /// Which kind of sink this is.
    pub fn kind(&self) -> SinkKind {
        match self {
            Sink::X(_) => SinkKind::X,
            Sink::Mastodon(_) => SinkKind::Mastodon,
            Sink::Bluesky(_) => SinkKind::Bluesky,
            Sink::Discord(_) => SinkKind::Discord,
            Sink::Telegram(_) => SinkKind::Telegram,
        }
    }

    /// The server-side dedupe key a post of the match `key` carries on this sink: Mastodon's
    /// `Idempotency-Key`, Bluesky's record key; `None` where the platform has none. The same
    /// for every replica (derived from the match and the channel), so it is recorded in the
    /// claim before the post, for `claims reconcile`.
    pub fn dedupe_key(&self, key: &MatchKey) -> Option<String> {
        match self {
            Sink::Mastodon(c) => Some(super::mastodon::idempotency_key(key, c.channel())),
            Sink::Bluesky(c) => Some(super::bluesky::record_key(key, c.channel())),
            Sink::X(_) | Sink::Discord(_) | Sink::Telegram(_) => None,
        }
    }

    /// The sink's length rule (Mastodon's as last loaded from its instance).
    pub fn length_rule(&self) -> LengthRule {
        match self {
            Sink::X(_) => LengthRule::XWeighted,
            Sink::Mastodon(c) => c.length_rule(),
            Sink::Bluesky(_) => LengthRule::Bluesky,
            Sink::Discord(_) => DISCORD_LENGTH,
            Sink::Telegram(_) => TELEGRAM_LENGTH,
        }
    }

    /// Reads what the sink needs from its server before the first post: Mastodon's length rule
    /// from its instance (see [`MastodonClient::load_length_rule`]); nothing for the others.
    /// Call once when the channel starts.
    ///
    /// # Errors
    /// [`SinkError`] when the instance cannot be read; the sink keeps Mastodon's default rule
    /// (500, URLs 23), so a caller may log it and go on.
    pub async fn prepare(&mut self) -> Result<(), SinkError> {
        match self {
            Sink::Mastodon(c) => c.load_length_rule().await.map(|_| ()),
            Sink::X(_) | Sink::Bluesky(_) | Sink::Discord(_) | Sink::Telegram(_) => Ok(()),
        }
    }

    /// The sink's rate-limit gate as of its last answer (shared by clones). Check
    /// [`RateGate::closed_until`] before claiming a match for this channel.
    pub fn gate(&self) -> &RateGate {
        match self {
            Sink::X(c) => c.gate(),
            Sink::Mastodon(c) => c.gate(),
            Sink::Bluesky(c) => c.gate(),
            Sink::Discord(c) => c.gate(),
            Sink::Telegram(c) => c.gate(),
        }
    }

    /// Posts `text` on this sink. Requires the [`ClaimToken`] of the match: only the claim's
    /// winner posts; the Mastodon `Idempotency-Key` and the Bluesky record key are derived from
    /// its match key and the channel the sink was built for.
    ///
    /// # Errors
    /// [`SinkError`]: [`SinkError::TooLong`] before anything is sent when the text breaks
    /// [`Sink::length_rule`]; otherwise what the platform answered, classified by
    /// [`SinkError::verdict`], [`SinkError::halts_channel`] and [`SinkError::is_rate_limited`].
    pub async fn post(&self, text: &str, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        match self {
            Sink::X(c) => {
                let post = Post::new(text).map_err(|e| SinkError::TooLong {
                    sink: SinkKind::X,
                    length: e.weighted_length,
                    max: MAX_WEIGHTED_LENGTH,
                    unit: LengthRule::XWeighted.unit(),
                })?;
                let r = c.post(&post, claim).await?;
                Ok(Receipt {
                    sink: SinkKind::X,
                    id: r.tweet_id,
                    url: None,
                    dedupe_key: None,
                    limits: r.limits,
                })
            }
            Sink::Mastodon(c) => c.post(text, claim.key()).await,
            Sink::Bluesky(c) => c.post(text, claim.key()).await,
            Sink::Discord(c) => c.post(text).await,
            Sink::Telegram(c) => c.post(text).await,
        }
    }
}

impl From<XClient> for Sink {
    fn from(x: XClient) -> Sink {
        Sink::X(x)
    }
}

impl SinkKind {
    /// The sink's length rule without asking its server: Mastodon's default (500, URLs 23),
    /// the fixed rules of the others. What a dry run fits posts to.
    pub fn default_length_rule(self) -> LengthRule {
        match self {
            SinkKind::X => LengthRule::XWeighted,
            SinkKind::Mastodon => MASTODON_DEFAULT,
            SinkKind::Bluesky => LengthRule::Bluesky,
            SinkKind::Discord => DISCORD_LENGTH,
            SinkKind::Telegram => TELEGRAM_LENGTH,
        }
    }
}

/// SHA-256 of the match key and the channel name, separated by a NUL (which neither holds), so
/// ("a", "bc") and ("ab", "c") differ. Stable across releases and machines: every replica
/// derives the same dedupe key for the same (match, channel).
pub(crate) fn match_channel_digest(key: &MatchKey, channel: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(key.as_str().as_bytes());
    h.update([0u8]);
    h.update(channel.as_bytes());
    h.finalize().into()
}

/// Why a sink's client cannot be made. No variant ever holds a secret: a credential of the
/// wrong shape is described, never shown.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A base URL setting that cannot take the API's path (`mailto:`, `data:`, not http(s)).
    #[error("{what} {base} cannot take the path /{path} (an http:// or https:// URL is needed)")]
    BadBase {
        /// The setting, in words: `the Mastodon instance URL`.
        what: &'static str,
        /// The base URL as given (never one that holds a secret).
        base: String,
        /// The path it was to take.
        path: String,
    },
    /// A credential or address of the wrong shape: what is wrong with it, never its value.
    #[error("{0}")]
    Refused(String),
    /// The HTTP client cannot be built (its TLS roots cannot be loaded).
    #[error("cannot build the HTTP client")]
    Http(#[source] reqwest::Error),
}

/// The HTTP client every sink uses: the bot's User-Agent, a bound on the whole request (past it
/// the outcome is unknown) and on connecting, and no redirects (a redirected POST could be sent
/// twice, or a secret sent elsewhere). One client per pair of bounds for the whole process,
/// shared by every channel: each client holds its own TLS roots and connection pool, which
/// twenty channels had twenty times (reqwest's `Client` is a handle, cheap to clone:
/// <https://docs.rs/reqwest/latest/reqwest/struct.Client.html>).
pub(crate) fn http_client(
    timeout: std::time::Duration,
    connect_timeout: std::time::Duration,
) -> Result<reqwest::Client, ClientError> {
    type Clients = Vec<((std::time::Duration, std::time::Duration), reqwest::Client)>;
    static CLIENTS: std::sync::OnceLock<std::sync::Mutex<Clients>> = std::sync::OnceLock::new();
    let mut clients = CLIENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, client)) = clients.iter().find(|(bounds, _)| *bounds == (timeout, connect_timeout)) {
        return Ok(client.clone());
    }
    let client = crate::http_client::builder()
        .user_agent(crate::USER_AGENT)
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(ClientError::Http)?;
    clients.push(((timeout, connect_timeout), client.clone()));
    Ok(client)
}

/// Whether `url` names this machine (`localhost`, `127.0.0.0/8`, `::1`): the one place a
/// request carrying a credential may go over plain `http://` (a local stand-in, a test server).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `base` joined with `path` as a subpath, whether or not `base` ends with a slash
/// (`https://host/prefix` + `api/v1/statuses` = `https://host/prefix/api/v1/statuses`).
///
/// # Errors
/// [`ClientError::BadBase`] naming `what` (the setting) when `base` cannot take a path
/// (`mailto:`, `data:`).
pub(crate) fn join(base: &url::Url, path: &str, what: &'static str) -> Result<url::Url, ClientError> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        let with_slash = format!("{}/", base.path());
        base.set_path(&with_slash);
    }
    // "./" keeps a first segment with a colon (`bot123:abc`) from reading as a URL scheme.
    base.join(&format!("./{path}"))
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ClientError::BadBase {
            what,
            base: base.to_string(),
            path: path.to_string(),
        })
}

/// One answer, read whole.
pub(crate) struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body read as `T`, the platform's documented answer.
    ///
    /// # Errors
    /// [`SinkError::BadReceipt`] (for `sink`) naming the status and the start of the body, when
    /// the body is not that.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self, sink: SinkKind) -> Result<T, SinkError> {
        serde_json::from_slice(&self.body).map_err(|e| SinkError::BadReceipt {
            sink,
            status: self.status,
            detail: format!("{e}: {}", preview(&self.body)),
        })
    }
}

/// An endpoint whose URL is the credential (a Discord webhook, a Telegram bot's method URL):
/// kept secret, named in errors and logs by `shown` (the URL with the credential redacted),
/// with the limits its answers report.
#[derive(Debug, Clone)]
pub(crate) struct SecretEndpoint {
    http: reqwest::Client,
    /// The URL, credential included.
    url: SecretString,
    /// The URL with the credential redacted.
    shown: String,
    /// Shared by clones: one view of the endpoint's limits per process.
    gate: RateGate,
}

impl SecretEndpoint {
    /// `url`, named `shown`, over the HTTP client of `timeout` and `connect_timeout`.
    ///
    /// # Errors
    /// [`ClientError::Http`] when the HTTP client cannot be built.
    pub(crate) fn new(
        url: String,
        shown: String,
        timeout: std::time::Duration,
        connect_timeout: std::time::Duration,
    ) -> Result<SecretEndpoint, ClientError> {
        Ok(SecretEndpoint {
            http: http_client(timeout, connect_timeout)?,
            url: url.into(),
            shown,
            gate: RateGate::new(),
        })
    }

    /// The endpoint's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        &self.gate
    }

    /// The URL with the credential redacted.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// POSTs `body` as JSON and reads the whole answer (see [`send`]).
    ///
    /// # Errors
    /// As [`send`].
    pub(crate) async fn post_json(&self, sink: SinkKind, body: &serde_json::Value) -> Result<Answer, SinkError> {
        send(sink, &self.shown, self.http.post(self.url.expose_secret()).json(body)).await
    }

    /// Records what an answer said of the endpoint's limits in its gate.
    pub(crate) fn observe(&self, status: u16, limits: Option<&RateLimits>) {
        observe(&self.gate, status, limits);
    }
}

/// Sends `request` and reads the whole answer. `endpoint` is how errors name the endpoint
/// (secrets redacted by the caller); reqwest's own errors lose their URL, which may hold one.
///
/// # Errors
/// [`SinkError::Connect`] when the request never left, [`SinkError::NoAnswer`] when it left
/// and the answer did not come back whole.
pub(crate) async fn send(
    sink: SinkKind,
    endpoint: &str,
    request: reqwest::RequestBuilder,
) -> Result<Answer, SinkError> {
    let response = match request.send().await {
        Ok(r) => r,
        Err(source) if source.is_connect() || source.is_builder() => {
            return Err(SinkError::Connect {
                sink,
                endpoint: endpoint.to_string(),
                source: source.without_url(),
            })
        }
        Err(source) => {
            return Err(SinkError::NoAnswer {
                sink,
                endpoint: endpoint.to_string(),
                timed_out: source.is_timeout(),
                source: source.without_url(),
            })
        }
    };
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = super::read_capped(response)
        .await
        .map_err(|source| SinkError::NoAnswer {
            sink,
            endpoint: endpoint.to_string(),
            timed_out: source.is_timeout(),
            source: source.without_url(),
        })?;
    Ok(Answer { status, headers, body })
}

/// Updates `gate` from one answer's limits.
pub(crate) fn observe(gate: &RateGate, status: u16, limits: Option<&RateLimits>) {
    gate.observe(status, limits, Utc::now());
}

/// A header as a trimmed string.
pub(crate) fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// A header as a count.
pub(crate) fn header_count(headers: &HeaderMap, name: &str) -> Option<u32> {
    let n: u64 = header(headers, name)?.parse().ok()?;
    Some(u32::try_from(n).unwrap_or(u32::MAX))
}

/// An instant given as Unix epoch seconds, possibly with a fraction (`1470173023.123`).
pub(crate) fn epoch_instant(raw: &str) -> Option<DateTime<Utc>> {
    let secs: f64 = raw.trim().parse().ok()?;
    if !secs.is_finite() || !(0.0..=1e11).contains(&secs) {
        return None;
    }
    DateTime::<Utc>::from_timestamp_millis((secs * 1000.0).round() as i64)
}

/// `now` plus `secs` seconds (a `retry_after`), when it is a sane number.
pub(crate) fn after_secs(secs: f64) -> Option<DateTime<Utc>> {
    if !secs.is_finite() || !(0.0..1e9).contains(&secs) {
        return None;
    }
    Some(Utc::now() + chrono::Duration::milliseconds((secs * 1000.0).ceil() as i64))
}

/// `Some` when any field is set.
pub(crate) fn some_limits(limits: RateLimits) -> Option<RateLimits> {
    (limits != RateLimits::default()).then_some(limits)
}

/// The start of a body or message, printable, at most [`MAX_DETAIL_BYTES`].
pub(crate) fn preview(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().filter(|c| !c.is_control()).collect();
    if crate::text::cut_to_bytes(&mut s, MAX_DETAIL_BYTES) {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
            (MASTODON_DEFAULT, 500, SinkKind::Mastodon),
            (LengthRule::Bluesky, 300, SinkKind::Bluesky),
            (DISCORD_LENGTH, 2_000, SinkKind::Discord),
            (TELEGRAM_LENGTH, 4_096, SinkKind::Telegram),
        ];
        for (rule, max, sink) in cases {
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
    fn url_spans_are_byte_ranges_of_the_urls() {
        let text = "Zimbabwe 🇿🇼 v Bangladesh https://www.cricbuzz.com/x/158062 ✓";
        let spans = url_spans(text);
        assert_eq!(spans.len(), 1);
        let (s, e) = spans[0];
        assert_eq!(&text[s..e], "https://www.cricbuzz.com/x/158062");
        assert_eq!((s, e), (31, 64));
    }

    #[test]
    fn the_digest_separates_match_from_channel() {
        let k = |s: &str| MatchKey::parse(s).unwrap();
        assert_ne!(match_channel_digest(&k("a"), "bc"), match_channel_digest(&k("ab"), "c"));
        assert_eq!(match_channel_digest(&k("a"), "b"), match_channel_digest(&k("a"), "b"));
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

    #[test]
    fn every_kind_parses_from_its_name() {
        for k in SinkKind::ALL {
            assert_eq!(SinkKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(SinkKind::parse("twitter"), None);
    }
}
