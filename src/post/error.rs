//! What a failed post proves: the one error every sink's client returns ([`SinkError`]), the
//! classes a sink's table sorts a refusal into ([`Refusal`]), the one [`Verdict`] the announcer
//! acts on, and why a client cannot be made ([`ClientError`]).
//!
//! The contract, the same for every sink:
//! - [`Verdict::NotPosted`]: nothing was created (connection refused, a documented refusal
//!   before any write, a rate limit): the claim may be released.
//! - [`Verdict::Unknown`]: the post may exist (timeout after the request left, 5xx, an
//!   unreadable success): keep the claim, never retry automatically.
//! - [`Verdict::AlreadyPosted`]: the platform proves the post exists (X: a 403 "duplicate
//!   content"; Bluesky: a record at the key derived from this match and channel).
//! - [`SinkError::halts_channel`]: no later post *on this channel* can succeed until an operator
//!   acts (credentials refused, credits depleted, webhook deleted, bot removed from the chat);
//!   other channels go on.
//! - [`SinkError::is_rate_limited`]: refused for pace; [`SinkError::limits`] says until when.

use super::kind::SinkKind;
use super::pace::RateLimits;

/// What a failure proves about the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing was created: the request never left, or the platform refused it before any
    /// write. The claim may be released for a later attempt.
    NotPosted,
    /// The platform says the post exists already: treat as posted.
    AlreadyPosted,
    /// The request may have created the post (timeout after sending, reset, 5xx, unreadable
    /// success): keep the claim; never retry automatically.
    Unknown,
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
    /// (credentials, permissions, credits, a deleted webhook, a chat the bot left): nothing was
    /// created.
    Halt,
    /// Refused as a repeat of a post that exists (X's 403 "duplicate content"): the post is
    /// there, so it counts as posted.
    Duplicate,
    /// The platform answered an error that does not prove whether the post was created (5xx,
    /// an undocumented status): keep the claim.
    Unknown,
}

/// How errors name the sink: as the channels file does, except X, whose errors have always
/// said `X` (claims keep these messages as their `detail`, and operators search for them).
fn named(sink: SinkKind) -> &'static str {
    match sink {
        SinkKind::X => SinkKind::X.platform(),
        other => other.as_str(),
    }
}

/// How a [`SinkError::NoAnswer`] names the setting that cut the request off: every sink's
/// client is built with `POST_TIMEOUT_SECS` as the bound on a whole request (posts, and the
/// reads of reconciliation and the length rule).
fn within_post_timeout(timed_out: bool) -> &'static str {
    if timed_out {
        " within POST_TIMEOUT_SECS (the bound on one request: raise it if the platform is often this slow)"
    } else {
        ""
    }
}

/// A post that no sink accepted, or that was never sent (or a read of reconciliation or of a
/// length rule that failed).
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The text breaks the sink's length rule: it was not sent.
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
    #[error("could not connect to {} at {endpoint}: {source}", named(*sink))]
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
    #[error("no answer from {} at {endpoint}{}: {source}", named(*sink), within_post_timeout(*timed_out))]
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
    #[error("{} answered {status}: {detail}", named(*sink))]
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
    #[error("{} answered {status} with an unreadable body: {detail}", named(*sink))]
    BadReceipt {
        /// The sink.
        sink: SinkKind,
        /// HTTP status code (0: no request was made, see `detail`).
        status: u16,
        /// Why the body could not be read.
        detail: String,
    },
    /// The platform proves the post exists already (Bluesky: a record at this match's key).
    #[error("{} already holds this post ({id}): {detail}", named(*sink))]
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
    #[error("could not log in to {}: {detail}", named(*sink))]
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
                Refusal::Duplicate => Verdict::AlreadyPosted,
                Refusal::Unknown => Verdict::Unknown,
            },
            SinkError::AlreadyPosted { .. } => Verdict::AlreadyPosted,
        }
    }

    /// The id of the post the platform proved is there already (Bluesky's `at://` address of
    /// the record at this match's key), when the answer gave one.
    pub fn existing_post_id(&self) -> Option<&str> {
        match self {
            SinkError::AlreadyPosted { id, .. } => Some(id),
            _ => None,
        }
    }

    /// True only when the request provably never created a post.
    pub fn proves_not_posted(&self) -> bool {
        self.verdict() == Verdict::NotPosted
    }

    /// True when the platform was never reached (connection refused, DNS, TLS, connect
    /// timeout): nothing was sent, and nothing was said about this post, so no attempt is
    /// counted (an outage of a few cycles must not give every current match up as `failed`).
    pub fn never_reached(&self) -> bool {
        matches!(self, SinkError::Connect { .. })
    }

    /// True for a refusal for pace: release the claim without counting an attempt and post
    /// after [`SinkError::limits`]' reset.
    pub fn is_rate_limited(&self) -> bool {
        self.refusal() == Some(Refusal::RateLimited)
    }

    /// True when no later post on this channel can succeed until an operator acts; the other
    /// channels are not affected.
    pub fn halts_channel(&self) -> bool {
        self.refusal() == Some(Refusal::Halt)
    }

    /// The rate limits the failed answer carried, if any.
    pub fn limits(&self) -> Option<RateLimits> {
        match self {
            SinkError::Refused { limits, .. } | SinkError::Login { limits, .. } => *limits,
            _ => None,
        }
    }

    /// How the sink's table classified the answer, when the platform answered a refusal.
    fn refusal(&self) -> Option<Refusal> {
        match self {
            SinkError::Refused { refusal, .. } | SinkError::Login { refusal, .. } => Some(*refusal),
            _ => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sink: SinkKind, refusal: Refusal) -> SinkError {
        SinkError::Refused {
            sink,
            status: 400,
            detail: "x".into(),
            refusal,
            limits: None,
        }
    }

    #[test]
    fn each_refusal_class_has_one_verdict_and_one_consequence_on_every_sink() {
        for sink in SinkKind::ALL {
            let class = |r| {
                let e = refused(sink, r);
                (e.verdict(), e.halts_channel(), e.is_rate_limited())
            };
            assert_eq!(class(Refusal::Rejected), (Verdict::NotPosted, false, false));
            assert_eq!(class(Refusal::RateLimited), (Verdict::NotPosted, false, true));
            assert_eq!(class(Refusal::Halt), (Verdict::NotPosted, true, false));
            assert_eq!(class(Refusal::Duplicate), (Verdict::AlreadyPosted, false, false));
            assert_eq!(class(Refusal::Unknown), (Verdict::Unknown, false, false));
        }
    }

    #[test]
    fn errors_name_x_as_people_write_it_and_the_others_as_the_channels_file_does() {
        assert_eq!(refused(SinkKind::X, Refusal::Unknown).to_string(), "X answered 400: x");
        assert_eq!(
            refused(SinkKind::Telegram, Refusal::Unknown).to_string(),
            "telegram answered 400: x"
        );
    }
}
