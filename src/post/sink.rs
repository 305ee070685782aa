//! The sink: one per channel, the only way a post leaves the process. [`Sink`] hides which
//! platform's client is behind it; each client owns its wire format and its table of refusals,
//! and returns the same [`Receipt`] and [`SinkError`].

use super::bluesky::{self, BlueskyClient};
use super::card::{Card, Post};
use super::discord::{self, DiscordClient};
use super::error::{ClientError, SinkError};
use super::kind::SinkKind;
use super::length::{LengthRule, DISCORD_LENGTH, TELEGRAM_LENGTH};
use super::mastodon::{self, MastodonClient, Visibility};
use super::pace::RateGate;
use super::receipt::Receipt;
use super::telegram::{self, ChatId, TelegramClient};
use super::x::{XClient, XCredentials};
use crate::claim::ClaimToken;
use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};
use secrecy::SecretString;
use std::time::Duration;
use url::Url;

/// A sink, ready to post: one per channel. Built by [`Sink::x`], [`Sink::mastodon`],
/// [`Sink::bluesky`], [`Sink::discord`] or [`Sink::telegram`]; every one posts with
/// [`Sink::post`], within its [`Sink::length_rule`], and fails with a [`SinkError`] whose
/// [`SinkError::verdict`] says what the failure proves. Cheap to clone: clones share the HTTP
/// client, the rate-limit gate and (Bluesky) the session.
#[derive(Debug, Clone)]
pub struct Sink {
    client: Client,
}

/// The platform client behind a [`Sink`], for what only one platform can do (X's search of
/// the account's posts, in `claims reconcile`).
#[derive(Debug, Clone)]
pub(crate) enum Client {
    /// X API v2.
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
    /// X API v2 at `base` (`https://api.x.com`), posting as the account of `credentials`.
    /// `timeout` bounds a whole request (past it the outcome is unknown), `connect_timeout` the
    /// connection.
    ///
    /// # Errors
    /// [`ClientError`] naming `X_API_BASE_URL` when it cannot take the path `/2/tweets`, or
    /// when the HTTP client cannot be built.
    pub fn x(
        base: &Url,
        credentials: XCredentials,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Sink, ClientError> {
        XClient::new(base, credentials, timeout, connect_timeout).map(|c| Sink { client: Client::X(c) })
    }

    /// The Mastodon account of `token` on `instance` (`https://mastodon.social`), posting for
    /// `channel` (half of every `Idempotency-Key`) with `visibility` and `language` when set.
    /// Starts with Mastodon's default length rule: [`Sink::prepare`] reads the instance's.
    ///
    /// # Errors
    /// [`ClientError`] naming the instance URL when it cannot take the API path, or when the
    /// HTTP client cannot be built.
    pub fn mastodon(
        instance: &Url,
        token: SecretString,
        channel: &str,
        visibility: Option<Visibility>,
        language: Option<String>,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Sink, ClientError> {
        let client = MastodonClient::new(instance, token, channel, timeout, connect_timeout)?;
        Ok(Sink {
            client: Client::Mastodon(client.with_visibility(visibility).with_language(language)),
        })
    }

    /// The Bluesky account `identifier` (handle or DID) logging in with `app_password` at
    /// `service` (`https://bsky.social`, or the account's PDS), posting for `channel` (half of
    /// every record key), tagged with `language` when set.
    ///
    /// # Errors
    /// [`ClientError`] naming the service URL when it cannot take the XRPC paths, or when the
    /// HTTP client cannot be built.
    pub fn bluesky(
        service: &Url,
        identifier: &str,
        app_password: SecretString,
        channel: &str,
        language: Option<String>,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Sink, ClientError> {
        let client = BlueskyClient::new(service, identifier, app_password, channel, timeout, connect_timeout)?;
        Ok(Sink {
            client: Client::Bluesky(client.with_language(language)),
        })
    }

    /// The Discord webhook at `webhook` (the full URL Discord shows, with its token).
    ///
    /// # Errors
    /// [`ClientError::Refused`] (without the URL, which is a secret) when `webhook` is not a
    /// webhook URL's shape, or [`ClientError::Http`] when the HTTP client cannot be built.
    pub fn discord(webhook: SecretString, timeout: Duration, connect_timeout: Duration) -> Result<Sink, ClientError> {
        DiscordClient::new(webhook, timeout, connect_timeout).map(|c| Sink {
            client: Client::Discord(c),
        })
    }

    /// The Telegram bot of `token` at `api` (`https://api.telegram.org`), sending to `chat_id`.
    ///
    /// # Errors
    /// [`ClientError`] (never showing the token) when the token is not a bot token's shape,
    /// when `api` cannot take the method path, or when the HTTP client cannot be built.
    pub fn telegram(
        api: &Url,
        token: &SecretString,
        chat_id: ChatId,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Sink, ClientError> {
        TelegramClient::new(api, token, chat_id, timeout, connect_timeout).map(|c| Sink {
            client: Client::Telegram(c),
        })
    }

    /// The platform client behind this sink.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// Which kind of sink this is.
    pub fn kind(&self) -> SinkKind {
        match &self.client {
            Client::X(_) => SinkKind::X,
            Client::Mastodon(_) => SinkKind::Mastodon,
            Client::Bluesky(_) => SinkKind::Bluesky,
            Client::Discord(_) => SinkKind::Discord,
            Client::Telegram(_) => SinkKind::Telegram,
        }
    }

    /// The server-side dedupe key a post of the match `key` claimed at `claimed_at` carries on
    /// this sink: Mastodon's `Idempotency-Key` (from the match and the channel), Bluesky's record
    /// key (a TID of the claim's time, see [`bluesky::record_key`]); `None` where the platform
    /// has none. Every replica and every repeat derives the same key from the same claim, so it
    /// is recorded in the claim before the post, for `claims reconcile`; the post derives the
    /// same key from its claim.
    pub fn dedupe_key(&self, key: &MatchKey, claimed_at: DateTime<Utc>) -> Option<String> {
        match &self.client {
            Client::Mastodon(c) => Some(mastodon::idempotency_key(key, c.channel())),
            Client::Bluesky(c) => Some(bluesky::record_key(key, c.channel(), claimed_at)),
            Client::X(_) | Client::Discord(_) | Client::Telegram(_) => None,
        }
    }

    /// This sink, posting `event`'s posts (see [`crate::event`]): the same client, account and
    /// rate-limit gate, with server-side dedupe keys of the event's own (Mastodon's
    /// `Idempotency-Key` and Bluesky's record key derived from `<channel>/<event>`), so a
    /// result is never taken for its match's announcement. The announcement's keys are the
    /// channel's, as before events.
    #[must_use]
    pub fn for_event(&self, event: crate::event::Event) -> Sink {
        if event.namespace().is_none() {
            return self.clone();
        }
        let client = match &self.client {
            Client::Mastodon(c) => Client::Mastodon(c.with_dedupe_channel(format!("{}/{event}", c.channel()))),
            Client::Bluesky(c) => Client::Bluesky(c.with_dedupe_channel(format!("{}/{event}", c.channel()))),
            other => other.clone(),
        };
        Sink { client }
    }

    /// The sink's length rule (Mastodon's as last loaded from its instance).
    pub fn length_rule(&self) -> LengthRule {
        match &self.client {
            Client::X(_) => LengthRule::XWeighted,
            Client::Mastodon(c) => c.length_rule(),
            Client::Bluesky(_) => LengthRule::Bluesky,
            Client::Discord(_) => DISCORD_LENGTH,
            Client::Telegram(_) => TELEGRAM_LENGTH,
        }
    }

    /// Reads what the sink needs from its server before the first post: Mastodon's length rule
    /// from its instance (`GET /api/v2/instance`); nothing for the others. Call once when the
    /// channel starts.
    ///
    /// # Errors
    /// [`SinkError`] when the instance cannot be read; the sink keeps Mastodon's default rule
    /// (500, URLs 23), so a caller may log it and go on.
    pub async fn prepare(&mut self) -> Result<(), SinkError> {
        match &mut self.client {
            Client::Mastodon(c) => c.load_length_rule().await.map(|_| ()),
            Client::X(_) | Client::Bluesky(_) | Client::Discord(_) | Client::Telegram(_) => Ok(()),
        }
    }

    /// The sink's rate-limit gate as of its last answer (shared by clones). Check
    /// [`RateGate::closed_until`] before claiming a match for this channel.
    pub fn gate(&self) -> &RateGate {
        match &self.client {
            Client::X(c) => c.gate(),
            Client::Mastodon(c) => c.gate(),
            Client::Bluesky(c) => c.gate(),
            Client::Discord(c) => c.gate(),
            Client::Telegram(c) => c.gate(),
        }
    }

    /// Posts `post` (its text, and its match's card when it has one: Bluesky's link card,
    /// Discord's embed, Telegram's link preview; a `&str` is a post without a card) on this sink
    /// for the match `claim` won: only the claim's winner posts, and what a post derives from
    /// its match (the Mastodon `Idempotency-Key`, the Bluesky record key) is derived from the
    /// claim and the channel the sink was built for.
    ///
    /// # Errors
    /// [`SinkError`]: [`SinkError::TooLong`] before anything is sent when the text breaks
    /// [`Sink::length_rule`]; otherwise what the platform answered, classified by
    /// [`SinkError::verdict`], [`SinkError::halts_channel`] and [`SinkError::is_rate_limited`].
    pub async fn post<'a>(&self, post: impl Into<Post<'a>>, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        let post = post.into();
        match &self.client {
            Client::X(c) => c.post(post.text, claim).await,
            Client::Mastodon(c) => c.post(post.text, claim).await,
            Client::Bluesky(c) => c.post(post, claim).await,
            Client::Discord(c) => c.post(post, claim).await,
            Client::Telegram(c) => c.post(post, claim).await,
        }
    }
}

/// The fields a sink of `kind` adds to a post's request for the match of `card`, as it sends
/// them: Bluesky's `embed` ([`bluesky::external_embed`]), Discord's `embeds`
/// ([`discord::embed`]), Telegram's `link_preview_options` (the match page); `None` for X and
/// Mastodon, which send the text alone. What a dry run shows beside the text.
pub fn card_fields(kind: SinkKind, card: &Card) -> Option<serde_json::Value> {
    match kind {
        SinkKind::Bluesky => Some(serde_json::json!({ "embed": bluesky::external_embed(card) })),
        SinkKind::Discord => Some(serde_json::json!({ "embeds": [discord::embed(card)] })),
        SinkKind::Telegram => Some(serde_json::json!({ "link_preview_options": telegram::preview(card) })),
        SinkKind::X | SinkKind::Mastodon => None,
    }
}
