//! The X API v2 client: `POST /2/tweets`, signed with OAuth 1.0a user context.
//!
//! Documentation: <https://docs.x.com/x-api/posts/create-post>. The JSON body is not part of the
//! OAuth 1.0a signature base string (RFC 5849 §3.4.1.3 signs only form-encoded bodies), so the
//! request is signed with no parameters.

use super::error::{ClientError, Refusal, SinkError};
use super::http::{self, preview, Answer};
use super::kind::SinkKind;
use super::length::LengthRule;
use super::pace::{self, RateGate, RateLimits};
use super::receipt::Receipt;
use crate::claim::ClaimToken;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use url::Url;

/// The four OAuth 1.0a user-context secrets from the X developer portal.
#[derive(Clone)]
pub struct XCredentials {
    /// Consumer key (`X_API_KEY`).
    pub api_key: SecretString,
    /// Consumer secret (`X_API_SECRET`).
    pub api_secret: SecretString,
    /// Access token of the posting account (`X_ACCESS_TOKEN`).
    pub access_token: SecretString,
    /// Access token secret (`X_ACCESS_TOKEN_SECRET`).
    pub access_token_secret: SecretString,
}

impl fmt::Debug for XCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("XCredentials([REDACTED])")
    }
}

const SINK: SinkKind = SinkKind::X;

/// Posts to X API v2.
#[derive(Clone, Debug)]
pub(crate) struct XClient {
    http: reqwest::Client,
    endpoint: Url,
    credentials: XCredentials,
    /// Shared by clones: every answer updates it, so one process has one view of X's limits.
    gate: RateGate,
}

#[derive(Deserialize)]
struct Created {
    data: CreatedData,
}

#[derive(Deserialize)]
struct CreatedData {
    id: String,
    /// Required: the documented answer to a created post carries its text (not kept).
    #[serde(rename = "text")]
    _text: String,
}

impl XClient {
    /// A client for the X API at `base` (`X_API_BASE_URL`, normally `https://api.x.com`).
    /// `timeout` bounds the whole request; past it the outcome is unknown.
    ///
    /// # Errors
    /// [`ClientError`] naming `X_API_BASE_URL` when it cannot take the path `/2/tweets`, or when
    /// the HTTP client cannot be built.
    pub(crate) fn new(
        base: &Url,
        credentials: XCredentials,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<XClient, ClientError> {
        let endpoint = base.join("2/tweets").map_err(|_| ClientError::BadBase {
            what: "X_API_BASE_URL",
            base: base.to_string(),
            path: "2/tweets".into(),
        })?;
        let http = http::http_client(timeout, connect_timeout)?;
        Ok(XClient {
            http,
            endpoint,
            credentials,
            gate: RateGate::new(),
        })
    }

    /// X's rate-limit gate as of the last answer (shared by clones of this client). Check
    /// [`RateGate::closed_until`] before claiming a match.
    pub(crate) fn gate(&self) -> &RateGate {
        &self.gate
    }

    /// Sends `text` (NFC-normalised, as X counts it) as a new tweet for the match `claim` won.
    /// X has no server-side dedupe key (`sinks.md`): the won claim is the only guard, so the
    /// client takes it as the proof and names its match in the log. The rate-limit headers of
    /// every answer (success or error) are read into the receipt or [`SinkError::Refused`]
    /// and update [`XClient::gate`].
    ///
    /// # Errors
    /// [`SinkError::TooLong`] before sending when `text` is over 280 weighted characters or
    /// empty; otherwise the failure, its refusal classified by [`classify`].
    pub(crate) async fn post(&self, text: &str, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        let text = LengthRule::XWeighted.normalise(text);
        LengthRule::XWeighted.check(SINK, &text)?;
        tracing::debug!(match_key = %claim.key(), "sending the post to X");
        let url = self.endpoint.as_str();
        let authorization = oauth1_request::post(url, &(), &self.token(), oauth1_request::HMAC_SHA1);
        let request = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::AUTHORIZATION, authorization)
            .json(&body(&text, claim));
        let (answer, limits) = self.send(request, url).await?;
        let created: Created = answer.json(SINK)?;
        Ok(Receipt {
            sink: SINK,
            id: created.data.id,
            url: None,
            dedupe_key: None,
            limits,
            cid: None,
        })
    }
}

/// The body of `POST /2/tweets` for `text`: `{"text"}`, with `reply.in_reply_to_tweet_id` when
/// the claim's post replies to another (a result under its announcement).
///
/// Documentation: <https://docs.x.com/x-api/posts/create-post>
fn body(text: &str, claim: &ClaimToken) -> serde_json::Value {
    match &claim.claim().reply_to {
        Some(parent) => serde_json::json!({
            "text": text,
            "reply": { "in_reply_to_tweet_id": parent.post_id },
        }),
        None => serde_json::json!({ "text": text }),
    }
}

/// What the account's recent posts say about one post (see [`XClient::find_post`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// A post with the same text (links aside) or the same link exists: its id.
    Posted {
        /// The tweet's id.
        tweet_id: String,
    },
    /// None of the `looked_at` posts since the window's start is it. Not proof that it was never
    /// created: X's timeline is eventually consistent.
    NotAmong {
        /// How many posts were read.
        looked_at: usize,
    },
}

#[derive(Deserialize)]
struct Me {
    data: MeData,
}

#[derive(Deserialize)]
struct MeData {
    id: String,
}

#[derive(Deserialize)]
struct Timeline {
    #[serde(default)]
    data: Vec<Tweet>,
}

#[derive(Deserialize)]
struct Tweet {
    id: String,
    text: String,
    #[serde(default)]
    entities: Option<Entities>,
}

#[derive(Deserialize)]
struct Entities {
    #[serde(default)]
    urls: Vec<UrlEntity>,
}

#[derive(Deserialize)]
struct UrlEntity {
    #[serde(default)]
    expanded_url: Option<String>,
}

/// How many of the account's posts one reconciliation reads (X's most per page:
/// <https://docs.x.com/x-api/users/get-posts>).
pub(crate) const RECONCILE_MAX_POSTS: u32 = 100;

impl XClient {
    /// Looks for the post `text` among the account's posts created since `since`: reads
    /// `GET /2/users/me` (the account's id), then one page of `GET /2/users/:id/tweets`
    /// (at most [`RECONCILE_MAX_POSTS`], `start_time` = `since`, with each post's links
    /// expanded). A post is it when its text is `text` with every link taken out (X rewrites
    /// links to `t.co`, and ours may have been shortened) or one of its links is one of
    /// `text`'s. Both reads are signed as the post is (OAuth 1.0a user context).
    ///
    /// Documentation: <https://docs.x.com/x-api/users/get-my-user>,
    /// <https://docs.x.com/x-api/users/get-posts>.
    ///
    /// # Errors
    /// [`SinkError`] when X cannot be reached or refuses the read (a 401 or 403: the
    /// credentials; a 429: the read limit), or answers what the documentation does not say.
    pub(crate) async fn find_post(&self, text: &str, since: chrono::DateTime<chrono::Utc>) -> Result<Found, SinkError> {
        let me: Me = self.read(&self.join("users/me")?, &[]).await?;
        let url = self.join(&format!("users/{}/tweets", me.data.id))?;
        let start = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let max = RECONCILE_MAX_POSTS.to_string();
        let params = [
            ("max_results", max.as_str()),
            ("start_time", start.as_str()),
            ("tweet.fields", "created_at,entities"),
        ];
        let timeline: Timeline = self.read(&url, &params).await?;
        let (ours, our_links) = without_links(text);
        for tweet in &timeline.data {
            let (theirs, _) = without_links(&unescape(&tweet.text));
            let links = tweet
                .entities
                .iter()
                .flat_map(|e| &e.urls)
                .filter_map(|u| u.expanded_url.as_deref());
            if theirs == ours || links.into_iter().any(|l| our_links.contains(&l)) {
                return Ok(Found::Posted {
                    tweet_id: tweet.id.clone(),
                });
            }
        }
        Ok(Found::NotAmong {
            looked_at: timeline.data.len(),
        })
    }

    /// The OAuth 1.0a token of the posting account.
    fn token(&self) -> oauth1_request::Token<&str, &str> {
        let c = &self.credentials;
        oauth1_request::Token::from_parts(
            c.api_key.expose_secret(),
            c.api_secret.expose_secret(),
            c.access_token.expose_secret(),
            c.access_token_secret.expose_secret(),
        )
    }

    /// Sends `request` (to `url`, named in errors): the answer of a 2xx, and the rate-limit
    /// headers it carried (every answer updates [`XClient::gate`]).
    ///
    /// # Errors
    /// [`SinkError::Connect`] when the request never left, [`SinkError::NoAnswer`] when no
    /// complete answer came back, [`SinkError::Refused`] for any other status, classified by
    /// [`classify`].
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<(Answer, Option<RateLimits>), SinkError> {
        let answer = http::send(SINK, url, request).await?;
        let limits = pace::observe(&self.gate, answer.status, &answer.headers);
        if !(200..300).contains(&answer.status) {
            let detail = error_detail(&answer.body);
            return Err(SinkError::Refused {
                sink: SINK,
                status: answer.status,
                refusal: classify(answer.status, &detail),
                detail,
                limits,
            });
        }
        Ok((answer, limits))
    }

    /// `<X_API_BASE_URL>/2/<path>`, next to the post endpoint `/2/tweets`.
    fn join(&self, path: &str) -> Result<Url, SinkError> {
        self.endpoint.join(path).map_err(|e| SinkError::BadReceipt {
            sink: SINK,
            status: 0,
            detail: format!("the X API base cannot take the path /2/{path}: {e}"),
        })
    }

    /// A signed `GET url?params`, read as `T`.
    async fn read<T: serde::de::DeserializeOwned>(&self, url: &Url, params: &[(&str, &str)]) -> Result<T, SinkError> {
        // The query is signed (RFC 5849 §3.4.1.3), and sent encoded by the same encoder.
        let request = oauth1_request::ParameterList::new(params.to_vec());
        let authorization = oauth1_request::get(url.as_str(), &request, &self.token(), oauth1_request::HMAC_SHA1);
        let with_query = oauth1_request::to_query(url.as_str().to_string(), &request);
        let request = self
            .http
            .get(with_query.as_str())
            .header(reqwest::header::AUTHORIZATION, authorization);
        let (answer, _) = self.send(request, url.as_str()).await?;
        answer.json(SINK)
    }
}

/// `text` with its links taken out and its white space collapsed (NFC), and the links.
fn without_links(text: &str) -> (String, Vec<&str>) {
    use unicode_normalization::UnicodeNormalization;
    let mut words = Vec::new();
    let mut links = Vec::new();
    for word in text.split_whitespace() {
        if word.starts_with("https://") || word.starts_with("http://") {
            links.push(word);
        } else {
            words.push(word);
        }
    }
    (words.join(" ").nfc().collect(), links)
}

/// X API v2 returns a post's text with `&`, `<` and `>` escaped as HTML entities.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// What an X refusal with HTTP `status` and error `detail` proves.
///
/// Sources: X API v2 error documentation
/// (<https://docs.x.com/x-api/fundamentals/response-codes-and-errors>): 400 invalid request,
/// 401 unauthorized (the credentials), 402 payment required (credits depleted), 403 forbidden
/// (the account's permissions; a detail naming "duplicate content" says an identical post
/// already exists), 429 too many requests. Any other status, and every 5xx, proves nothing.
pub(crate) fn classify(status: u16, detail: &str) -> Refusal {
    match status {
        403 if detail.to_ascii_lowercase().contains("duplicate") => Refusal::Duplicate,
        400 => Refusal::Rejected,
        // Bad credentials, credits depleted, a permission refusal: no later post can succeed
        // until an operator acts.
        401..=403 => Refusal::Halt,
        429 => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

/// X's error detail from an error body (`detail`, `title`, or `errors[0].message`), else the
/// start of the body.
fn error_detail(body: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let found = ["detail", "title"]
        .iter()
        .find_map(|f| value.get(f).and_then(|v| v.as_str()))
        .or_else(|| value.pointer("/errors/0/message").and_then(|v| v.as_str()));
    match found {
        Some(s) => preview(s.as_bytes()),
        None => preview(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_detail_comes_from_x_problem_json() {
        let body = br#"{"detail":"You are not allowed to create a Tweet with duplicate content.","type":"about:blank","title":"Forbidden","status":403}"#;
        assert_eq!(
            error_detail(body),
            "You are not allowed to create a Tweet with duplicate content."
        );
        assert_eq!(error_detail(b"<html>bad gateway</html>"), "<html>bad gateway</html>");
    }

    #[test]
    fn each_refusal_has_the_class_its_status_proves() {
        assert_eq!(classify(400, "x"), Refusal::Rejected);
        for s in [401, 402, 403] {
            assert_eq!(classify(s, "x"), Refusal::Halt, "{s}");
        }
        assert_eq!(classify(429, "x"), Refusal::RateLimited);
        assert_eq!(
            classify(403, "You are not allowed to create a Tweet with duplicate content."),
            Refusal::Duplicate
        );
        for s in [500, 502, 503, 504, 404, 409] {
            assert_eq!(classify(s, "x"), Refusal::Unknown, "{s}");
        }
    }

    #[test]
    fn credentials_never_show_in_debug() {
        let c = XCredentials {
            api_key: "k-secret".into(),
            api_secret: "s-secret".into(),
            access_token: "t-secret".into(),
            access_token_secret: "ts-secret".into(),
        };
        assert!(!format!("{c:?}").contains("secret"));
    }
}
