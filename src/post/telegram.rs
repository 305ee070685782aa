//! The Telegram sink: the Bot API's `sendMessage` to one chat (a numeric id or `@channelname`),
//! in HTML parse mode with every character of the text escaped (so scraped text cannot format or
//! inject links; the headline is made bold) and the link preview pointing at the match page; and
//! the table of what each refusal proves. The bot token is part of the URL (`/bot<token>/sendMessage`): it is
//! held as a secret and errors name the endpoint with it redacted.
//!
//! Documentation: <https://core.telegram.org/bots/api#making-requests>,
//! <https://core.telegram.org/bots/api#sendmessage>,
//! <https://core.telegram.org/bots/api#responseparameters>,
//! <https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this>.

use super::card::{Card, Post};
use super::error::{ClientError, Refusal, SinkError};
use super::http::{self, SecretEndpoint};
use super::kind::SinkKind;
use super::length::TELEGRAM_LENGTH;
use super::pace::{RateGate, RateLimits};
use super::receipt::Receipt;
use crate::claim::ClaimToken;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::time::Duration;
use url::Url;

const SINK: SinkKind = SinkKind::Telegram;

/// The production Bot API.
pub const DEFAULT_API_BASE: &str = "https://api.telegram.org";

/// Sends messages to one Telegram chat as one bot.
#[derive(Debug, Clone)]
pub(crate) struct TelegramClient {
    /// `{api}/bot{token}/sendMessage`: holds the token, shown with it redacted. Its gate is one
    /// view of the bot's limits per process.
    endpoint: SecretEndpoint,
    /// `chat_id`: an integer id, or `@channelname`.
    chat_id: ChatId,
}

/// A Telegram `chat_id`: an integer (groups and supergroups are negative) or `@channelusername`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatId {
    /// A numeric chat id.
    Id(i64),
    /// A public channel's username, with its `@`.
    Username(String),
}

impl ChatId {
    /// Reads a chat id as the channels file gives it.
    ///
    /// # Errors
    /// A message saying what a chat id looks like, when `raw` is neither an integer nor
    /// `@` followed by a username (letters, digits, underscores).
    pub fn parse(raw: &str) -> Result<ChatId, String> {
        let raw = raw.trim();
        if let Ok(id) = raw.parse::<i64>() {
            return Ok(ChatId::Id(id));
        }
        match raw.strip_prefix('@') {
            Some(name) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                Ok(ChatId::Username(raw.to_string()))
            }
            _ => Err(format!(
                "{raw:?} is not a Telegram chat id: use the chat's number (-1001234567890) or a public channel's @username"
            )),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            ChatId::Id(id) => serde_json::json!(id),
            ChatId::Username(name) => serde_json::json!(name),
        }
    }
}

/// Checks that `raw` has the shape of a bot token as @BotFather gives it: the bot's number, a
/// colon, then letters, digits, `-` and `_` (`123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11`). The
/// token goes into the request path (`/bot<token>/sendMessage`), so anything else (a `/`, `?`,
/// `#`, a space) would send the request somewhere else.
///
/// Documentation: <https://core.telegram.org/bots/api#authorizing-your-bot>
///
/// # Errors
/// What a token looks like, without the value (it is the credential).
pub fn check_bot_token(raw: &str) -> Result<(), &'static str> {
    match raw.split_once(':') {
        Some((id, secret))
            if !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && !secret.is_empty()
                && secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            Ok(())
        }
        _ => Err("a bot token is the bot's number, a colon, then only letters, digits, - and _ (123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11), as @BotFather gives it"),
    }
}

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    result: Option<SentMessage>,
    #[serde(default)]
    error_code: Option<u16>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Deserialize)]
struct SentMessage {
    message_id: i64,
}

#[derive(Deserialize, Default)]
struct Parameters {
    #[serde(default)]
    migrate_to_chat_id: Option<i64>,
    #[serde(default)]
    retry_after: Option<f64>,
}

impl TelegramClient {
    /// A client for the bot of `token` at `api` (normally [`DEFAULT_API_BASE`]), sending to
    /// `chat_id`.
    ///
    /// # Errors
    /// [`ClientError`] (never showing the token) when the token is not a bot token's shape
    /// ([`check_bot_token`]), when `api` cannot take the method path, or when the HTTP client
    /// cannot be built.
    pub(crate) fn new(
        api: &Url,
        token: &SecretString,
        chat_id: ChatId,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<TelegramClient, ClientError> {
        check_bot_token(token.expose_secret())
            .map_err(|why| ClientError::Refused(format!("the Telegram bot token is refused: {why}")))?;
        let shown = http::join(api, "bot[REDACTED]/sendMessage", "the Telegram API URL")?.to_string();
        let endpoint = http::join(
            api,
            &format!("bot{}/sendMessage", token.expose_secret()),
            "the Telegram API URL",
        )
        .map_err(|_| {
            ClientError::Refused(
                "the Telegram bot token cannot be part of a URL path (it has a character a URL cannot hold)".into(),
            )
        })?;
        Ok(TelegramClient {
            endpoint: SecretEndpoint::new(endpoint.to_string(), shown, timeout, connect_timeout)?,
            chat_id,
        })
    }

    /// The bot's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        self.endpoint.gate()
    }

    /// The endpoint with the token redacted.
    #[cfg(test)]
    fn shown(&self) -> &str {
        self.endpoint.shown()
    }

    /// Sends `post` to the chat for the match `claim` won, in HTML parse mode ([`html`]: every
    /// character of the text escaped, its first line bold), with the link preview pointing at
    /// the match page when the post has its card. The Bot API has no server-side dedupe
    /// (`sinks.md`): the won claim is the only guard, so the client takes it as the proof and
    /// names its match in the log.
    ///
    /// Documentation: <https://core.telegram.org/bots/api#html-style>,
    /// <https://core.telegram.org/bots/api#linkpreviewoptions>
    ///
    /// # Errors
    /// [`SinkError::TooLong`] before sending (over 4,096, counted on the text as shown: the
    /// Bot API counts it "after entities parsing"); otherwise the answer classified by
    /// [`classify`].
    pub(crate) async fn post(&self, post: Post<'_>, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        TELEGRAM_LENGTH.check(SINK, post.text)?;
        tracing::debug!(match_key = %claim.key(), "sending the post to the Telegram chat");
        let mut body = serde_json::json!({
            "chat_id": self.chat_id.json(),
            "text": html(post.text),
            "parse_mode": "HTML",
        });
        if let Some(card) = post.card {
            body["link_preview_options"] = preview(card);
        }
        // A result under its announcement: `reply_parameters`, sent even when the announcement
        // was deleted since (<https://core.telegram.org/bots/api#replyparameters>).
        if let Some(id) = claim
            .claim()
            .reply_to
            .as_ref()
            .and_then(|p| p.post_id.parse::<i64>().ok())
        {
            body["reply_parameters"] = serde_json::json!({ "message_id": id, "allow_sending_without_reply": true });
        }
        let answer = self.endpoint.post_json(SINK, &body).await?;
        let parsed: Option<Answer> = serde_json::from_slice(&answer.body).ok();
        let parameters = parsed.as_ref().and_then(|a| a.parameters.as_ref());
        let limits = parameters
            .and_then(|p| p.retry_after)
            .and_then(http::after_secs)
            .map(|reset| RateLimits {
                remaining: Some(0),
                reset: Some(reset),
                ..RateLimits::default()
            });
        self.endpoint.observe(answer.status, limits.as_ref());
        match parsed {
            Some(Answer {
                ok: true,
                result: Some(sent),
                ..
            }) if (200..300).contains(&answer.status) => Ok(Receipt {
                sink: SINK,
                id: sent.message_id.to_string(),
                url: None,
                dedupe_key: None,
                limits,
                cid: None,
            }),
            Some(Answer {
                ok: false,
                error_code,
                description,
                parameters,
                ..
            }) if !(200..300).contains(&answer.status) => {
                let status = error_code.unwrap_or(answer.status);
                let description = description.unwrap_or_default();
                let migrated = parameters.and_then(|p| p.migrate_to_chat_id);
                let mut detail = http::preview(description.as_bytes());
                if let Some(new_id) = migrated {
                    detail.push_str(&format!(
                        " (the group is now the supergroup {new_id}: set chat_id = \"{new_id}\")"
                    ));
                }
                Err(SinkError::Refused {
                    sink: SINK,
                    status,
                    refusal: classify(status, &description, migrated.is_some()),
                    detail,
                    limits,
                })
            }
            _ if (200..300).contains(&answer.status) => Err(SinkError::BadReceipt {
                sink: SINK,
                status: answer.status,
                detail: http::preview(&answer.body),
            }),
            // Not the Bot API's error shape (a proxy's page): proves nothing.
            _ => Err(SinkError::Refused {
                sink: SINK,
                status: answer.status,
                detail: http::preview(&answer.body),
                refusal: Refusal::Unknown,
                limits,
            }),
        }
    }
}

/// The `link_preview_options` of a match's post: the preview shows the match page, whatever
/// other link the text holds.
///
/// Documentation: <https://core.telegram.org/bots/api#linkpreviewoptions>
pub fn preview(card: &Card) -> serde_json::Value {
    serde_json::json!({ "url": card.page.as_str() })
}

/// `text` as a `sendMessage` in HTML parse mode takes it: every `<`, `>` and `&` escaped
/// (`&lt;`, `&gt;`, `&amp;`), so no scraped text (a team named `<b>&amp;</b>`) can make a tag,
/// an entity or a link; then the first line, the match's headline, made bold. Links stay plain
/// text, which Telegram makes links of.
///
/// Documentation: <https://core.telegram.org/bots/api#html-style> ("All `<`, `>` and `&`
/// symbols that are not a part of a tag or an HTML entity must be replaced with the
/// corresponding HTML entities")
pub fn html(text: &str) -> String {
    let escaped = html_escape::encode_text(text);
    match escaped.split_once('\n') {
        Some((head, rest)) if !head.trim().is_empty() => format!("<b>{head}</b>\n{rest}"),
        None if !escaped.trim().is_empty() => format!("<b>{escaped}</b>"),
        _ => escaped.into_owned(),
    }
}

/// What a Bot API refusal (`ok: false`) with `error_code`, `description` and whether it carried
/// `parameters.migrate_to_chat_id` proves.
///
/// Sources: <https://core.telegram.org/bots/api#making-requests> (an unsuccessful request has
/// `ok: false`, `error_code` and `description`, and may carry `parameters`),
/// <https://core.telegram.org/bots/api#responseparameters> (`migrate_to_chat_id`: the group
/// became a supergroup; `retry_after`: flood control), <https://core.telegram.org/api/errors>
/// (400 bad request, 401 unauthorized, 403 forbidden, 404 not found, 420/429 flood).
pub fn classify(error_code: u16, description: &str, migrated: bool) -> Refusal {
    let chat_gone = description.to_ascii_lowercase().contains("chat not found");
    match error_code {
        // The chat id no longer works (migrated group, unknown chat): every later post to it
        // fails the same way until an operator changes `chat_id`.
        400 if migrated || chat_gone => Refusal::Halt,
        // "message is too long", "text must be non-empty", …: refused before sending.
        400 => Refusal::Rejected,
        // The token is refused (401, and 404 for a token the API does not know), or the bot
        // was blocked, kicked or is not an admin of the channel (403).
        401 | 403 | 404 => Refusal::Halt,
        420 | 429 => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_only_in_the_secret_endpoint() {
        let c = TelegramClient::new(
            &Url::parse("https://api.telegram.org").unwrap(),
            &"123:tok-secret".into(),
            ChatId::parse("@cricket").unwrap(),
            Duration::from_secs(1),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(c.shown(), "https://api.telegram.org/bot[REDACTED]/sendMessage");
        assert!(!format!("{c:?}").contains("tok-secret"));
    }

    #[test]
    fn only_a_bot_tokens_shape_passes_and_the_path_cannot_be_changed() {
        assert_eq!(check_bot_token("123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"), Ok(()));
        for bad in [
            "123:tok/../../secret",
            "123:tok?secret",
            "123:tok#secret",
            "123:tok secret",
            "123:tok-secret\n",
            "abc:tok-secret",
            ":tok-secret",
            "123:",
            "tok-secret",
        ] {
            let said = check_bot_token(bad).unwrap_err();
            assert!(!said.contains("secret"), "{said}");
            let e = TelegramClient::new(
                &Url::parse("https://api.telegram.org").unwrap(),
                &bad.into(),
                ChatId::Id(1),
                Duration::from_secs(1),
                Duration::from_secs(1),
            )
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("the Telegram bot token is refused"), "{bad}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }

    #[test]
    fn chat_ids_are_numbers_or_usernames() {
        assert_eq!(ChatId::parse("-1001234567890"), Ok(ChatId::Id(-1_001_234_567_890)));
        assert_eq!(
            ChatId::parse("@cricket_live"),
            Ok(ChatId::Username("@cricket_live".into()))
        );
        assert!(ChatId::parse("cricket").is_err());
        assert!(ChatId::parse("@").is_err());
    }

    #[test]
    fn each_documented_refusal_has_its_class() {
        assert_eq!(
            classify(400, "Bad Request: message is too long", false),
            Refusal::Rejected
        );
        assert_eq!(classify(400, "Bad Request: chat not found", false), Refusal::Halt);
        assert_eq!(
            classify(400, "Bad Request: group chat was upgraded to a supergroup chat", true),
            Refusal::Halt
        );
        assert_eq!(classify(401, "Unauthorized", false), Refusal::Halt);
        assert_eq!(
            classify(403, "Forbidden: bot was kicked from the channel chat", false),
            Refusal::Halt
        );
        assert_eq!(
            classify(429, "Too Many Requests: retry after 34", false),
            Refusal::RateLimited
        );
        assert_eq!(classify(500, "Internal Server Error", false), Refusal::Unknown);
        assert_eq!(classify(502, "Bad Gateway", false), Refusal::Unknown);
    }
}
