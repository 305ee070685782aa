//! The Discord sink: a channel's webhook, executed with `?wait=true` so the answer is the created
//! message (200) rather than an empty 204, with the match's embed (title linked to the match
//! page, series, venue and start fields, a colour per format) and mentions disabled so scraped
//! text cannot ping anyone; and the table of what each refusal proves. The webhook URL is the credential: it is
//! held as a secret and never printed (errors name it with its token redacted).
//!
//! Documentation: <https://discord.com/developers/docs/resources/webhook#execute-webhook>,
//! <https://discord.com/developers/docs/topics/rate-limits>,
//! <https://discord.com/developers/docs/topics/opcodes-and-status-codes#http>.

use super::card::{Card, Post};
use super::error::{ClientError, Refusal, SinkError};
use super::http::{self, SecretEndpoint};
use super::kind::SinkKind;
use super::length::DISCORD_LENGTH;
use super::pace::{RateGate, RateLimits};
use super::receipt::Receipt;
use crate::claim::ClaimToken;
use crate::cricket::Format;
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::time::Duration;
use url::Url;

const SINK: SinkKind = SinkKind::Discord;

/// Discord's JSON error code for a webhook that no longer exists.
///
/// Documentation: <https://discord.com/developers/docs/topics/opcodes-and-status-codes#json-json-error-codes>
const UNKNOWN_WEBHOOK: u64 = 10_015;

/// Executes one Discord webhook.
#[derive(Debug, Clone)]
pub(crate) struct DiscordClient {
    /// The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`) with `wait=true`
    /// added: it is the credential, shown with its token redacted.
    webhook: SecretEndpoint,
}

#[derive(Deserialize)]
struct Message {
    id: String,
}

impl DiscordClient {
    /// A client for the webhook at `webhook` (the full URL Discord shows, with its token).
    ///
    /// # Errors
    /// [`ClientError::Refused`] (without the URL, which is a secret) when `webhook` is not a
    /// webhook URL's shape ([`check_webhook_url`]), or [`ClientError::Http`] when the HTTP
    /// client cannot be built.
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the webhook URL is a secret: taking it leaves no copy with the caller"
    )]
    pub(crate) fn new(
        webhook: SecretString,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<DiscordClient, ClientError> {
        let refused = |why: &str| {
            ClientError::Refused(format!(
                "the Discord webhook URL is not https://discord.com/api/webhooks/ID/TOKEN: {why}"
            ))
        };
        check_webhook_url(webhook.expose_secret()).map_err(refused)?;
        let mut url = Url::parse(webhook.expose_secret().trim()).map_err(|_| refused("it is not a URL"))?;
        let shown = redacted(&url);
        url.query_pairs_mut().append_pair("wait", "true");
        Ok(DiscordClient {
            webhook: SecretEndpoint::new(url.to_string(), shown, timeout, connect_timeout)?,
        })
    }

    /// The webhook's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        self.webhook.gate()
    }

    /// The webhook URL with its token redacted (`https://discord.com/api/webhooks/123/[REDACTED]`).
    #[cfg(test)]
    fn shown(&self) -> &str {
        self.webhook.shown()
    }

    /// Sends `post` for the match `claim` won: its text as the message's `content`, the match's
    /// [`embed`] when the post has its card, `allowed_mentions.parse` empty (no `@everyone`,
    /// role or user ping from scraped text) and `?wait=true`. A webhook has no server-side
    /// dedupe (`sinks.md`): the won claim is the only guard, so the client takes it as the proof
    /// and names its match in the log.
    ///
    /// Documentation: <https://discord.com/developers/docs/resources/message#allowed-mentions-object>
    ///
    /// # Errors
    /// [`SinkError::TooLong`] before sending (over 2,000); otherwise the answer classified by
    /// [`classify`].
    pub(crate) async fn post(&self, post: Post<'_>, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        DISCORD_LENGTH.check(SINK, post.text)?;
        tracing::debug!(match_key = %claim.key(), "sending the post to the Discord webhook");
        let mut body = serde_json::json!({
            "content": post.text,
            "allowed_mentions": { "parse": [] },
        });
        if let Some(card) = post.card {
            body["embeds"] = serde_json::json!([embed(card)]);
        }
        let answer = self.webhook.post_json(SINK, &body).await?;
        let limits = limits(&answer.headers, &answer.body);
        self.webhook.observe(answer.status, limits.as_ref());
        if !(200..300).contains(&answer.status) {
            let (code, detail) = error_detail(&answer.body);
            return Err(SinkError::Refused {
                sink: SINK,
                status: answer.status,
                detail,
                refusal: classify(answer.status, code),
                limits,
            });
        }
        let message: Message = answer.json(SINK)?;
        Ok(Receipt {
            sink: SINK,
            id: message.id,
            url: None,
            dedupe_key: None,
            limits,
            cid: None,
        })
    }
}

/// The most characters of an embed's title.
///
/// Documentation: <https://discord.com/developers/docs/resources/message#embed-object-embed-limits>
const EMBED_TITLE_CHARS: usize = 256;

/// The embed of a match: its title (`Zimbabwe v Bangladesh, 2nd T20I`, at most 256 characters)
/// linked to the match page, the series as its description, fields for the venue and the start
/// (`<t:UNIX:F>`, which each reader's Discord shows in their own zone and language), and the
/// colour of its format ([`format_colour`]). Fields the match lacks are left out. Every value is
/// cleaned text of at most 120 characters, well within Discord's limits (description 4,096,
/// field value 1,024, 6,000 in all).
///
/// Documentation: <https://discord.com/developers/docs/resources/message#embed-object>,
/// <https://discord.com/developers/docs/reference#message-formatting-timestamp-styles>
pub fn embed(card: &Card) -> serde_json::Value {
    let title = if card.title.chars().count() > EMBED_TITLE_CHARS {
        let kept: String = card.title.chars().take(EMBED_TITLE_CHARS - 1).collect();
        format!("{kept}…")
    } else {
        card.title.clone()
    };
    let mut fields = Vec::new();
    if !card.venue.is_empty() {
        fields.push(serde_json::json!({ "name": "Venue", "value": card.venue, "inline": true }));
    }
    if let Some(start) = card.start {
        let value = format!("<t:{}:F>", start.timestamp());
        fields.push(serde_json::json!({ "name": "Start", "value": value, "inline": true }));
    }
    let mut embed = serde_json::json!({
        "title": title,
        "url": card.page.as_str(),
        "color": format_colour(&card.format),
    });
    if !card.series.is_empty() {
        embed["description"] = serde_json::json!(card.series);
    }
    if !fields.is_empty() {
        embed["fields"] = serde_json::Value::Array(fields);
    }
    embed
}

/// The colour (`0xRRGGBB`) of a match's embed, by format: the red of the red ball for Tests
/// (darker for other first-class cricket), the blue of one-day kits for ODIs (darker for List
/// A), purple for T20Is, orange for other T20s, teal for The Hundred, grey otherwise. Our own
/// palette: Discord only shows the colour as the embed's left edge.
pub fn format_colour(format: &Format) -> u32 {
    match format {
        Format::Test => 0xC0_39_2B,
        Format::FirstClass => 0x92_2B_21,
        Format::Odi => 0x2E_86_C1,
        Format::ListA => 0x1B_4F_72,
        Format::T20i => 0x8E_44_AD,
        Format::T20 => 0xD3_54_00,
        Format::Hundred => 0x17_A5_89,
        Format::Other(_) => 0x7F_8C_8D,
    }
}

/// The hosts a webhook URL may name (and their subdomains): Discord's, as it shows webhook URLs
/// (`https://discord.com/api/webhooks/ID/TOKEN`; `discordapp.com` in URLs made before 2020).
const DISCORD_HOSTS: [&str; 2] = ["discord.com", "discordapp.com"];

/// Checks that `raw` has the shape of a webhook URL as Discord shows it (Server Settings →
/// Integrations → Webhooks → Copy Webhook URL): `https://discord.com/api/webhooks/{id}/{token}`,
/// optionally with an API version (`/api/v10/webhooks/…`); the id is a number (a snowflake),
/// the token letters, digits, `-` and `_`. Plain `http://` only to this machine (tests). The
/// host is not checked: `discordapp.com`, `canary.discord.com` and `ptb.discord.com` serve the
/// same API.
///
/// Documentation: <https://discord.com/developers/docs/resources/webhook#execute-webhook>
///
/// # Errors
/// What is wrong, without the value (it is the credential).
pub fn check_webhook_url(raw: &str) -> Result<(), &'static str> {
    const PATH: &str = "its path is not /api/webhooks/ID/TOKEN (ID a number, TOKEN letters, digits, - and _)";
    let url = Url::parse(raw.trim()).map_err(|_| "it is not a URL")?;
    match url.scheme() {
        "https" => {}
        "http" if http::is_loopback(&url) => {}
        _ => return Err("it is not an https:// URL"),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("it holds a user name or password");
    }
    // The URL is the credential: a look-alike host (`discord.com.evil.example`) would be
    // handed every post. Discord's own hosts (`discord.com`, the legacy `discordapp.com`, and
    // their `canary.`/`ptb.` clients) or this machine (a local stand-in).
    let discord = |h: &str| {
        let h = h.to_ascii_lowercase();
        DISCORD_HOSTS
            .iter()
            .any(|d| h == *d || h.strip_suffix(d).is_some_and(|sub| sub.ends_with('.')))
    };
    if !http::is_loopback(&url) && !url.host_str().is_some_and(discord) {
        return Err("its host is not discord.com (or discordapp.com)");
    }
    let segments: Vec<&str> = url.path_segments().map(Iterator::collect).unwrap_or_default();
    let is_version = |v: &str| {
        v.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let rest = match segments.as_slice() {
        ["api", "webhooks", rest @ ..] => rest,
        ["api", v, "webhooks", rest @ ..] if is_version(v) => rest,
        _ => return Err(PATH),
    };
    match rest {
        [id, token]
            if !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            Ok(())
        }
        _ => Err(PATH),
    }
}

/// `url` with its last path segment (the webhook token) and any query replaced.
fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    let segments: Vec<String> = url
        .path_segments()
        .map(|s| s.map(str::to_string).collect())
        .unwrap_or_default();
    let kept = segments.len().saturating_sub(1);
    let mut path: String = segments.iter().take(kept).map(|s| format!("/{s}")).collect();
    path.push_str("/[REDACTED]");
    shown.set_path(&path);
    shown.to_string()
}

/// What a Discord refusal with HTTP `status` and JSON error `code` proves.
///
/// Sources: <https://discord.com/developers/docs/topics/opcodes-and-status-codes#http> (400 the
/// request was improperly formatted, e.g. content over 2,000: code 50035; 401 invalid token:
/// 50027; 403 missing permissions; 404 with code 10015 "Unknown Webhook": it was deleted; 429
/// rate limited; 502 gateway unavailable), <https://discord.com/developers/docs/topics/rate-limits>.
pub fn classify(status: u16, code: Option<u64>) -> Refusal {
    match (status, code) {
        (400, _) => Refusal::Rejected,
        // The webhook's token is refused, the channel refuses it, or it no longer exists:
        // nothing later posts through this webhook until an operator replaces it.
        (401 | 403, _) | (404, Some(UNKNOWN_WEBHOOK)) => Refusal::Halt,
        (429, _) => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

/// The webhook's limits: `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds, with a
/// fraction), `X-RateLimit-Reset-After` (seconds); on a 429 also `Retry-After` and the body's
/// `retry_after` (seconds). The reset is the latest of them.
///
/// Documentation: <https://discord.com/developers/docs/topics/rate-limits#header-format>
pub fn limits(headers: &HeaderMap, body: &[u8]) -> Option<RateLimits> {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let seconds = |raw: Option<&str>| raw.and_then(|r| r.parse::<f64>().ok()).and_then(http::after_secs);
    let reset = [
        http::header(headers, "x-ratelimit-reset").and_then(http::epoch_instant),
        seconds(http::header(headers, "x-ratelimit-reset-after")),
        seconds(http::header(headers, "retry-after")),
        value
            .get("retry_after")
            .and_then(serde_json::Value::as_f64)
            .and_then(http::after_secs),
    ]
    .into_iter()
    .flatten()
    .max();
    http::some_limits(RateLimits {
        remaining: http::header_count(headers, "x-ratelimit-remaining"),
        reset,
        ..RateLimits::default()
    })
}

/// Discord's JSON error `code` and `message`, else the start of the body.
fn error_detail(body: &[u8]) -> (Option<u64>, String) {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let code = value.get("code").and_then(serde_json::Value::as_u64);
    let detail = match (code, value.get("message").and_then(|v| v.as_str())) {
        (Some(c), Some(m)) => http::preview(format!("{m} (code {c})").as_bytes()),
        (None, Some(m)) => http::preview(m.as_bytes()),
        _ => http::preview(body),
    };
    (code, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_shows() {
        let c = DiscordClient::new(
            "https://discord.com/api/webhooks/123/tok-secret?thread_id=9".into(),
            Duration::from_secs(1),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(c.shown(), "https://discord.com/api/webhooks/123/[REDACTED]");
        assert!(!format!("{c:?}").contains("tok-secret"));
    }

    #[test]
    fn a_url_that_is_no_webhook_is_refused_without_echoing_it() {
        let err = DiscordClient::new(
            "not a url tok-secret".into(),
            Duration::from_secs(1),
            Duration::from_secs(1),
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("tok-secret"), "{err}");
    }

    #[test]
    fn only_a_webhook_urls_shape_passes_and_no_refusal_shows_the_value() {
        for good in [
            "https://discord.com/api/webhooks/1180000000000000000/tok-Secret_9",
            "https://discordapp.com/api/v10/webhooks/1/t?thread_id=9",
            "https://canary.discord.com/api/webhooks/1/t",
            "https://PTB.Discord.com/api/webhooks/1/t",
            "http://127.0.0.1:8080/api/webhooks/1/t",
            "http://localhost/api/webhooks/1/t",
        ] {
            assert_eq!(check_webhook_url(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("tok-secret", "it is not a URL"),
            (
                "http://discord.com/api/webhooks/1/tok-secret",
                "it is not an https:// URL",
            ),
            ("https://discord.com/channels/1/tok-secret", "its path is not"),
            ("https://discord.com/api/webhooks/1", "its path is not"),
            ("https://discord.com/api/webhooks/x1/tok-secret", "its path is not"),
            ("https://discord.com/api/webhooks/1/tok-secret/slack", "its path is not"),
            ("https://discord.com/api/webhooks/1/tok%2Fsecret", "its path is not"),
            ("https://hooks.slack.com/services/T0/B0/tok-secret", "its host is not"),
            ("https://evil.example/api/webhooks/1/tok-secret", "its host is not"),
            (
                "https://discord.com.evil.example/api/webhooks/1/tok-secret",
                "its host is not",
            ),
            ("https://notdiscord.com/api/webhooks/1/tok-secret", "its host is not"),
            (
                "https://u:tok-secret@discord.com/api/webhooks/1/t",
                "it holds a user name or password",
            ),
        ] {
            let said = check_webhook_url(bad).unwrap_err();
            assert!(said.starts_with(why), "{bad}: {said}");
            assert!(!said.contains("secret"), "{said}");
        }
    }

    #[test]
    fn each_documented_refusal_has_its_class() {
        assert_eq!(classify(400, Some(50_035)), Refusal::Rejected);
        assert_eq!(classify(401, Some(50_027)), Refusal::Halt);
        assert_eq!(classify(403, None), Refusal::Halt);
        assert_eq!(classify(404, Some(10_015)), Refusal::Halt);
        assert_eq!(classify(404, None), Refusal::Unknown);
        assert_eq!(classify(429, None), Refusal::RateLimited);
        assert_eq!(classify(502, None), Refusal::Unknown);
    }
}
