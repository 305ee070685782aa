//! The Mastodon sink: `POST /api/v1/statuses` with a bearer token (scope `write:statuses`) and
//! an `Idempotency-Key` derived from the match and the channel, the instance's length rule from
//! `GET /api/v2/instance`, and the table of what each refusal proves.
//!
//! Documentation: <https://docs.joinmastodon.org/methods/statuses/#create>,
//! <https://docs.joinmastodon.org/methods/instance/#v2>, <https://docs.joinmastodon.org/api/rate-limits/>.

use super::dedupe::match_channel_digest;
use super::error::{ClientError, Refusal, SinkError};
use super::http::{self, Answer};
use super::kind::SinkKind;
use super::length::{LengthRule, MASTODON_DEFAULT, MASTODON_DEFAULT_MAX_CHARACTERS, MASTODON_DEFAULT_URL_CHARACTERS};
use super::pace::{RateGate, RateLimits};
use super::receipt::Receipt;
use crate::claim::ClaimToken;
use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::time::Duration;
use url::Url;

const SINK: SinkKind = SinkKind::Mastodon;

/// Who sees a status (`visibility`).
///
/// Documentation: <https://docs.joinmastodon.org/methods/statuses/#form-data-parameters>
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Everyone, and in public timelines.
    Public,
    /// Everyone, but not in public timelines.
    Unlisted,
    /// Followers only.
    Private,
    /// Mentioned people only.
    Direct,
}

/// Posts statuses to one Mastodon account.
#[derive(Debug, Clone)]
pub(crate) struct MastodonClient {
    http: reqwest::Client,
    /// `GET /api/v2/instance`: the instance's limits.
    instance_info: Url,
    /// `POST /api/v1/statuses`.
    statuses: Url,
    /// The account's access token; `SecretString` keeps it out of `Debug`.
    token: SecretString,
    /// The channel this client posts for: half of every `Idempotency-Key`.
    channel: String,
    visibility: Option<Visibility>,
    language: Option<String>,
    /// The instance's limits (the default until [`MastodonClient::load_length_rule`]).
    rule: LengthRule,
    /// Shared by clones: one view of the account's limits per process.
    gate: RateGate,
}

#[derive(Deserialize)]
struct Status {
    id: String,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
struct Instance {
    configuration: Configuration,
}

#[derive(Deserialize)]
struct Configuration {
    statuses: StatusLimits,
}

#[derive(Deserialize)]
struct StatusLimits {
    max_characters: Option<usize>,
    characters_reserved_per_url: Option<usize>,
}

/// The `Idempotency-Key` of the post of `key` on `channel`: `cricket-announcer-` and the hex
/// SHA-256 of (match key, channel).
///
/// Mastodon keeps a key for one hour per account and answers a repeat within that hour with
/// the original status (same id) instead of a second one. The key is derived from the match
/// and the channel, not from the claim's random token, so it is the same for every replica and
/// for a later claim of the same match (after an operator released an `unknown` one): a retry
/// inside the hour of the first create's save is answered with that status. Not before the
/// save ends: Mastodon stores the key only then (mastodon#21840), which is why
/// `claims reconcile` waits [`crate::reconcile::MASTODON_SETTLE`] after a send.
///
/// Documentation: <https://docs.joinmastodon.org/methods/statuses/#headers> ("Idempotency-Key:
/// Provide this header with any arbitrary string to prevent duplicate submissions of the same
/// status. Consider using a hash or UUID generated client-side. Idempotency keys are stored for
/// up to 1 hour.")
pub fn idempotency_key(key: &MatchKey, channel: &str) -> String {
    let digest = match_channel_digest(key, channel);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("cricket-announcer-{hex}")
}

impl MastodonClient {
    /// The channel this client posts for.
    /// This client, deriving its dedupe keys from `channel` instead (an event's namespace of
    /// the channel, see [`super::Sink::for_event`]).
    pub(crate) fn with_dedupe_channel(&self, channel: String) -> Self {
        let mut c = self.clone();
        c.channel = channel;
        c
    }

    pub(crate) fn channel(&self) -> &str {
        &self.channel
    }

    /// A client for the account of `token` on `instance` (`https://mastodon.social`), posting
    /// for `channel`. `timeout` bounds a whole request; past it the outcome is unknown.
    ///
    /// # Errors
    /// [`ClientError`] naming the instance URL when it cannot take the API path, or when the
    /// HTTP client cannot be built.
    pub(crate) fn new(
        instance: &Url,
        token: SecretString,
        channel: &str,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<MastodonClient, ClientError> {
        Ok(MastodonClient {
            http: http::http_client(timeout, connect_timeout)?,
            statuses: http::join(instance, "api/v1/statuses", "the Mastodon instance URL")?,
            instance_info: http::join(instance, "api/v2/instance", "the Mastodon instance URL")?,
            token,
            channel: channel.to_string(),
            visibility: None,
            language: None,
            rule: MASTODON_DEFAULT,
            gate: RateGate::new(),
        })
    }

    /// Posts with this `visibility` (the account's default when unset).
    pub(crate) fn with_visibility(mut self, visibility: Option<Visibility>) -> MastodonClient {
        self.visibility = visibility;
        self
    }

    /// Posts with this ISO 639 `language` (the instance guesses when unset).
    pub(crate) fn with_language(mut self, language: Option<String>) -> MastodonClient {
        self.language = language;
        self
    }

    /// The length rule posts are checked against.
    pub(crate) fn length_rule(&self) -> LengthRule {
        self.rule
    }

    /// The account's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        &self.gate
    }

    /// Reads the instance's limits from `GET /api/v2/instance`
    /// (`configuration.statuses.max_characters` and `characters_reserved_per_url`), keeps them
    /// for [`MastodonClient::length_rule`] and returns them. A field the instance does not send
    /// keeps Mastodon's default (500, 23).
    ///
    /// Documentation: <https://docs.joinmastodon.org/methods/instance/#v2>,
    /// <https://docs.joinmastodon.org/entities/Instance/#statuses>
    ///
    /// # Errors
    /// [`SinkError`] when the instance cannot be read; the rule is then unchanged.
    pub(crate) async fn load_length_rule(&mut self) -> Result<LengthRule, SinkError> {
        let url = &self.instance_info;
        let answer = http::send(SINK, url.as_str(), self.http.get(url.clone())).await?;
        accepted(&answer, limits(&answer.headers))?;
        let instance: Instance = answer.json(SINK)?;
        let s = instance.configuration.statuses;
        self.rule = LengthRule::Mastodon {
            max_characters: s.max_characters.unwrap_or(MASTODON_DEFAULT_MAX_CHARACTERS),
            characters_reserved_per_url: s.characters_reserved_per_url.unwrap_or(MASTODON_DEFAULT_URL_CHARACTERS),
        };
        Ok(self.rule)
    }

    /// Posts `text` as a new status for the match `claim` won, with the `Idempotency-Key`
    /// [`idempotency_key`] of that match and this client's channel: derived from the claim, so
    /// no argument can name another match than the one claimed.
    ///
    /// # Errors
    /// [`SinkError::TooLong`] before sending when `text` breaks the instance's rule; otherwise
    /// the answer classified by [`classify`].
    pub(crate) async fn post(&self, text: &str, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        self.rule.check(SINK, text)?;
        let idempotency = idempotency_key(claim.key(), &self.channel);
        let mut body = serde_json::json!({ "status": text });
        if let Some(v) = self.visibility {
            body["visibility"] = serde_json::json!(v);
        }
        if let Some(l) = &self.language {
            body["language"] = serde_json::json!(l);
        }
        // A result under its announcement (`in_reply_to_id`,
        // <https://docs.joinmastodon.org/methods/statuses/#create>).
        if let Some(parent) = &claim.claim().reply_to {
            body["in_reply_to_id"] = serde_json::json!(parent.post_id);
        }
        let request = self
            .http
            .post(self.statuses.clone())
            .bearer_auth(self.token.expose_secret())
            .header("Idempotency-Key", &idempotency)
            .json(&body);
        let answer = http::send(SINK, self.statuses.as_str(), request).await?;
        let limits = limits(&answer.headers);
        http::observe(&self.gate, answer.status, limits.as_ref());
        accepted(&answer, limits)?;
        let status: Status = answer.json(SINK)?;
        Ok(Receipt {
            sink: SINK,
            id: status.id,
            url: status.url,
            dedupe_key: Some(idempotency),
            limits,
            cid: None,
        })
    }
}

/// What a Mastodon refusal with HTTP `status` proves.
///
/// Sources: <https://docs.joinmastodon.org/methods/statuses/#create> (401 invalid or missing
/// token, 422 "Validation failed", e.g. over the length limit),
/// <https://docs.joinmastodon.org/api/guidelines/#errors> and
/// <https://docs.joinmastodon.org/entities/Error/> (403 "This action is outside the authorized
/// scopes", a suspended or disabled account), <https://docs.joinmastodon.org/api/rate-limits/>
/// (429 over the limit). Any other status, and every 5xx, proves nothing.
pub fn classify(status: u16) -> Refusal {
    match status {
        // Refused while validating the request, before the status is created.
        400 | 422 => Refusal::Rejected,
        // The token is invalid or revoked, lacks `write:statuses`, or the account is suspended:
        // no later post on this account can succeed.
        401 | 403 => Refusal::Halt,
        429 => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

/// Mastodon's rate-limit headers: `X-RateLimit-Remaining` and `X-RateLimit-Reset`, an ISO 8601
/// timestamp (not epoch seconds as on X).
///
/// Documentation: <https://docs.joinmastodon.org/api/rate-limits/>
pub fn limits(headers: &HeaderMap) -> Option<RateLimits> {
    let reset = http::header(headers, "x-ratelimit-reset")
        .and_then(|r| DateTime::parse_from_rfc3339(r).ok())
        .map(|t| t.with_timezone(&Utc));
    http::some_limits(RateLimits {
        remaining: http::header_count(headers, "x-ratelimit-remaining"),
        reset,
        ..RateLimits::default()
    })
}

/// `Ok` for a 2xx answer; otherwise the refusal it proves ([`classify`]), with the detail
/// Mastodon gave and the limits the answer reported.
fn accepted(answer: &Answer, limits: Option<RateLimits>) -> Result<(), SinkError> {
    if (200..300).contains(&answer.status) {
        return Ok(());
    }
    Err(SinkError::Refused {
        sink: SINK,
        status: answer.status,
        detail: error_detail(&answer.body),
        refusal: classify(answer.status),
        limits,
    })
}

/// Mastodon's error text (`{"error": "…"}`), else the start of the body.
fn error_detail(body: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    match value.get("error").and_then(|v| v.as_str()) {
        Some(s) => http::preview(s.as_bytes()),
        None => http::preview(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idempotency_key_is_a_function_of_match_and_channel() {
        let a = MatchKey::parse("2026-07-17_bangladesh-v-zimbabwe_2nd-t20i").unwrap();
        let b = MatchKey::parse("2026-07-18_bangladesh-v-zimbabwe_3rd-t20i").unwrap();
        let k = idempotency_key(&a, "cricket-social");
        assert_eq!(k, idempotency_key(&a, "cricket-social"));
        assert_eq!(k.len(), "cricket-announcer-".len() + 64);
        assert!(k.starts_with("cricket-announcer-"));
        assert_ne!(k, idempotency_key(&a, "other-channel"));
        assert_ne!(k, idempotency_key(&b, "cricket-social"));
    }

    #[test]
    fn the_token_never_shows_in_debug() {
        let c = MastodonClient::new(
            &Url::parse("https://mastodon.example").unwrap(),
            "masto-secret-token".into(),
            "masto",
            Duration::from_secs(1),
            Duration::from_secs(1),
        )
        .unwrap();
        let debug = format!("{c:?}");
        assert!(!debug.contains("masto-secret-token"), "{debug}");
        assert!(debug.contains("token: SecretBox<str>([REDACTED])"), "{debug}");
    }

    #[test]
    fn each_documented_status_has_its_refusal() {
        assert_eq!(classify(422), Refusal::Rejected);
        assert_eq!(classify(401), Refusal::Halt);
        assert_eq!(classify(403), Refusal::Halt);
        assert_eq!(classify(429), Refusal::RateLimited);
        for s in [500, 502, 503, 504, 404, 409] {
            assert_eq!(classify(s), Refusal::Unknown, "{s}");
        }
    }
}
