//! Posting: the [`Post`] (text with its weighted length), the X client, and what a failed post
//! proves about whether the tweet exists ([`PostError::verdict`]); the other sinks (Mastodon,
//! Bluesky, Discord, Telegram) behind [`Sink`], each with its length rule and the same verdicts
//! ([`SinkError::verdict`]).

pub mod bluesky;
pub mod discord;
pub mod mastodon;
mod pace;
mod sink;
pub mod telegram;
mod x;

pub use bluesky::BlueskyClient;
pub use discord::DiscordClient;
pub use mastodon::MastodonClient;
pub use pace::{NotUntil, PostPace, RateGate, RateLimits, DEFAULT_429_BACKOFF};
pub use sink::{
    is_loopback, ClientError, LengthRule, Receipt, Refusal, Sink, SinkError, SinkKind, DISCORD_LENGTH,
    MASTODON_DEFAULT, MASTODON_DEFAULT_MAX_CHARACTERS, MASTODON_DEFAULT_URL_CHARACTERS, TELEGRAM_LENGTH,
};
pub use telegram::TelegramClient;
pub use x::{Found, XClient, XCredentials, RECONCILE_MAX_POSTS};

use unicode_normalization::UnicodeNormalization;

/// The most bytes read of a platform's answer to a post or a read. Their documented answers are
/// a few KiB; a larger one is cut off here (and then fails to parse, which the sink reads as an
/// unknown outcome), so a misbehaving server cannot make the bot hold gigabytes.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The body of `response`, at most [`MAX_ANSWER_BYTES`] of it.
///
/// # Errors
/// The HTTP client's error when the body cannot be read (the connection dropped, the time
/// ran out).
pub(crate) async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_ANSWER_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ANSWER_BYTES {
            break;
        }
    }
    Ok(body)
}

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

/// A post ready to send: NFC-normalised text within X's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    text: String,
    weighted_length: usize,
}

/// A text longer than [`MAX_WEIGHTED_LENGTH`] weighted characters.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("post is {weighted_length} weighted characters, over X's limit of {MAX_WEIGHTED_LENGTH}")]
pub struct TooLong {
    /// The text's weighted length.
    pub weighted_length: usize,
}

impl Post {
    /// Makes a post of `text` (NFC-normalised).
    ///
    /// # Errors
    /// [`TooLong`] when the text is over [`MAX_WEIGHTED_LENGTH`] weighted characters, or empty
    /// (reported as length 0: X refuses empty posts).
    pub fn new(text: &str) -> Result<Post, TooLong> {
        let text: String = text.nfc().collect();
        let weighted_length = weighted_length(&text);
        if weighted_length > MAX_WEIGHTED_LENGTH || text.trim().is_empty() {
            return Err(TooLong { weighted_length });
        }
        Ok(Post { text, weighted_length })
    }

    /// The exact text that is sent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Weighted length by X's rules (see [`weighted_length`]).
    pub fn weighted_length(&self) -> usize {
        self.weighted_length
    }
}

/// What X returned for a created post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostReceipt {
    /// The tweet's id.
    pub tweet_id: String,
    /// The text as X stored it.
    pub text: String,
    /// X's rate-limit headers on the answer, when it sent any.
    pub limits: Option<RateLimits>,
}

/// What a failure proves about the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing was created: the request never reached X, or X refused it (400, 401, 402,
    /// 403 other than duplicate, 429). The claim may be released for a later attempt.
    NotPosted,
    /// X says the same text was posted before (403 duplicate content): treat as posted.
    AlreadyPosted,
    /// The request may have created the tweet (timeout after sending, reset, 5xx, unreadable
    /// success): keep the claim; never retry automatically.
    Unknown,
}

/// How a [`PostError::NoAnswer`] or [`SinkError::NoAnswer`] names the setting that cut the
/// request off: every sink's client is built with `POST_TIMEOUT_SECS` as the bound on a whole
/// request (posts, and the reads of reconciliation and the length rule).
fn within_post_timeout(timed_out: bool) -> &'static str {
    if timed_out {
        " within POST_TIMEOUT_SECS (the bound on one request: raise it if the platform is often this slow)"
    } else {
        ""
    }
}

/// A post that did not return a receipt.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The connection to X was never made (refused, DNS, TLS, connect timeout): the request
    /// never left.
    #[error("could not connect to X at {url}: {source}")]
    Connect {
        /// The endpoint.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The request left and no complete answer came back (timeout, reset).
    #[error("no answer from X at {url}{}: {source}", within_post_timeout(*timed_out))]
    NoAnswer {
        /// The endpoint.
        url: String,
        /// Whether the bound on the whole request (`POST_TIMEOUT_SECS`) cut it off.
        timed_out: bool,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// X answered with a non-success status.
    #[error("X answered {status}: {detail}")]
    Refused {
        /// HTTP status code.
        status: u16,
        /// X's error title/detail, or the start of the body.
        detail: String,
        /// X's rate-limit headers on the answer, when it sent any (a 429 says when to retry).
        limits: Option<RateLimits>,
    },
    /// X answered success but the body was not the documented `{"data":{"id",…}}`.
    #[error("X answered {status} with an unreadable body: {detail}")]
    BadReceipt {
        /// HTTP status code.
        status: u16,
        /// Why the body could not be read.
        detail: String,
    },
}

impl PostError {
    /// What this failure proves about whether the tweet exists.
    ///
    /// Sources: X API v2 error documentation (<https://docs.x.com/x-api/fundamentals/response-codes-and-errors>);
    /// a 403 whose detail says "duplicate content" means an identical post already exists.
    pub fn verdict(&self) -> Verdict {
        match self {
            PostError::Connect { .. } => Verdict::NotPosted,
            PostError::NoAnswer { .. } | PostError::BadReceipt { .. } => Verdict::Unknown,
            PostError::Refused {
                status: 403, detail, ..
            } if detail.to_ascii_lowercase().contains("duplicate") => Verdict::AlreadyPosted,
            PostError::Refused {
                status: 400 | 401 | 402 | 403 | 429,
                ..
            } => Verdict::NotPosted,
            PostError::Refused { .. } => Verdict::Unknown,
        }
    }

    /// True only when the request provably never created a tweet.
    pub fn proves_not_posted(&self) -> bool {
        self.verdict() == Verdict::NotPosted
    }

    /// True for X's 429: the post was refused for pace, not for what it says. The claim is
    /// released without counting an attempt, and the match is posted after the reset.
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, PostError::Refused { status: 429, .. })
    }

    /// True when no further post can succeed in this process until an operator acts: bad
    /// credentials (401), credits depleted (402), a permission refusal (403 other than duplicate).
    pub fn halts_posting(&self) -> bool {
        matches!(self, PostError::Refused { status: 401 | 402, .. })
            || (matches!(self, PostError::Refused { status: 403, .. }) && self.verdict() != Verdict::AlreadyPosted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_post_over_280_is_refused_with_its_length() {
        assert_eq!(Post::new(&"a".repeat(281)), Err(TooLong { weighted_length: 281 }));
        assert_eq!(Post::new(&"a".repeat(280)).map(|p| p.weighted_length()), Ok(280));
    }

    fn refused(status: u16, detail: &str) -> PostError {
        PostError::Refused {
            status,
            detail: detail.into(),
            limits: None,
        }
    }

    #[test]
    fn each_refusal_has_the_verdict_its_status_proves() {
        for s in [400, 401, 402, 403, 429] {
            assert_eq!(refused(s, "x").verdict(), Verdict::NotPosted, "{s}");
        }
        assert_eq!(
            refused(403, "You are not allowed to create a Tweet with duplicate content.").verdict(),
            Verdict::AlreadyPosted
        );
        for s in [500, 502, 503, 504, 404, 409] {
            assert_eq!(refused(s, "x").verdict(), Verdict::Unknown, "{s}");
        }
        assert!(refused(401, "").halts_posting());
        assert!(refused(402, "").halts_posting());
        assert!(!refused(429, "").halts_posting());
        assert!(!refused(403, "duplicate content").halts_posting());
    }
}
