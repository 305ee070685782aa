//! Posting: the [`Sink`] of a channel (X, Mastodon, Bluesky, Discord, Telegram), the one way a
//! post leaves the process, and what every sink shares.
//!
//! # Layout
//! Leaves first; each file imports only files above it in this list, and none imports `sink.rs`:
//! - `kind.rs`: [`SinkKind`], the kinds of sink and their names.
//! - `pace.rs`: [`PostPace`] (the local pace) and [`RateGate`] (a platform's own limits).
//! - `error.rs`: [`SinkError`], [`Refusal`] and the one [`Verdict`] a failure proves;
//!   [`ClientError`].
//! - `card.rs`: [`Post`], a post as it leaves (its text and its match's [`Card`]).
//! - `receipt.rs`: [`Receipt`], what a created post returns.
//! - `urls.rs`: where a text's links are, and the short label a link is shown by
//!   ([`link_label`]).
//! - `length.rs`: [`LengthRule`], each sink's limit and what it counts.
//! - `dedupe.rs`: the (match, channel) digest the server-side dedupe keys come from.
//! - `http.rs`: the HTTP client, sending and reading an answer, endpoints whose URL is a secret.
//! - `x.rs`, `mastodon.rs`, `bluesky.rs`, `discord.rs`, `telegram.rs`: one client per platform,
//!   its wire format and its table of what each refusal proves (crate-private: posts go
//!   through the sink).
//! - `sink.rs`: [`Sink`], on top: which client a channel posts through.

pub mod bluesky;
mod card;
mod dedupe;
pub mod discord;
mod error;
mod http;
mod kind;
mod length;
pub mod mastodon;
mod pace;
mod receipt;
mod sink;
pub mod telegram;
mod urls;
mod x;

pub use card::{Card, Post};
pub use error::{ClientError, Refusal, SinkError, Verdict};
pub use http::{is_loopback, MAX_ANSWER_BYTES};
pub use kind::SinkKind;
pub use length::{
    weighted_length, LengthRule, DISCORD_LENGTH, MASTODON_DEFAULT, MASTODON_DEFAULT_MAX_CHARACTERS,
    MASTODON_DEFAULT_URL_CHARACTERS, MAX_WEIGHTED_LENGTH, TELEGRAM_LENGTH,
};
pub use pace::{NotUntil, PostPace, RateGate, RateLimits, DEFAULT_429_BACKOFF};
pub use receipt::Receipt;
pub(crate) use sink::Client;
pub use sink::{card_fields, Sink};
pub use urls::{labelled, link_label, Labelled, LabelledLink, LABEL_PATH_CHARS};
pub use x::XCredentials;
pub(crate) use x::{Found, XClient};
