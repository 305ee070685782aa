//! The X API v2 client: `POST /2/tweets`, signed with OAuth 1.0a user context.
//!
//! Documentation: <https://docs.x.com/x-api/posts/create-post>. The JSON body is not part of the
//! OAuth 1.0a signature base string (RFC 5849 §3.4.1.3 signs only form-encoded bodies), so the
//! request is signed with no parameters.

use super::pace::{self, RateGate};
use super::sink::{preview, ClientError};
use super::{Post, PostError, PostReceipt};
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

/// Posts to X API v2.
#[derive(Clone, Debug)]
pub struct XClient {
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
    text: String,
}

impl XClient {
    /// A client for the X API at `base` (`X_API_BASE_URL`, normally `https://api.x.com`).
    /// `timeout` bounds the whole request; past it the outcome is unknown.
    ///
    /// # Errors
    /// [`ClientError`] naming `X_API_BASE_URL` when it cannot take the path `/2/tweets`, or when
    /// the HTTP client cannot be built.
    pub fn new(
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
        let http = super::sink::http_client(timeout, connect_timeout)?;
        Ok(XClient {
            http,
            endpoint,
            credentials,
            gate: RateGate::new(),
        })
    }

    /// X's rate-limit gate as of the last answer (shared by clones of this client). Check
    /// [`RateGate::closed_until`] before claiming a match.
    pub fn gate(&self) -> &RateGate {
        &self.gate
    }

    /// Sends `post` as a new tweet. The rate-limit headers of every answer (success or error)
    /// are read into the receipt or [`PostError::Refused`] and update [`XClient::gate`]. Requires the [`ClaimToken`] of the match: only the claim's
    /// winner posts.
    ///
    /// # Errors
    /// [`PostError`]; [`PostError::verdict`] says what each failure proves.
    pub async fn post(&self, post: &Post, _claim: &ClaimToken) -> Result<PostReceipt, PostError> {
        let url = self.endpoint.as_str();
        let authorization = oauth1_request::post(url, &(), &self.token(), oauth1_request::HMAC_SHA1);
        let request = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::AUTHORIZATION, authorization)
            .json(&serde_json::json!({ "text": post.text() }));
        let (status, body, limits) = self.send(request, url).await?;
        let created: Created = serde_json::from_slice(&body).map_err(|e| PostError::BadReceipt {
            status,
            detail: format!("{e}: {}", preview(&body)),
        })?;
        Ok(PostReceipt {
            tweet_id: created.data.id,
            text: created.data.text,
            limits,
        })
    }
}

/// What the account's recent posts say about one post (see [`XClient::find_post`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
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
pub const RECONCILE_MAX_POSTS: u32 = 100;

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
    /// [`PostError`] when X cannot be reached or refuses the read (a 401 or 403: the
    /// credentials; a 429: the read limit), or answers what the documentation does not say.
    pub async fn find_post(&self, text: &str, since: chrono::DateTime<chrono::Utc>) -> Result<Found, PostError> {
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

    /// Sends `request` (to `url`, named in errors): the status, the body and the rate-limit
    /// headers of a 2xx answer (which also update [`XClient::gate`], as every answer does).
    ///
    /// # Errors
    /// [`PostError::Connect`] when the request never left, [`PostError::NoAnswer`] when no
    /// complete answer came back, [`PostError::Refused`] for any other status.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<(u16, Vec<u8>, Option<super::RateLimits>), PostError> {
        let response = match request.send().await {
            Ok(r) => r,
            Err(source) if source.is_connect() => {
                return Err(PostError::Connect {
                    url: url.to_string(),
                    source,
                })
            }
            Err(source) => {
                return Err(PostError::NoAnswer {
                    url: url.to_string(),
                    timed_out: source.is_timeout(),
                    source,
                })
            }
        };
        let status = response.status().as_u16();
        let limits = pace::observe(&self.gate, status, response.headers());
        let body = super::read_capped(response)
            .await
            .map_err(|source| PostError::NoAnswer {
                url: url.to_string(),
                timed_out: source.is_timeout(),
                source,
            })?;
        if !(200..300).contains(&status) {
            return Err(PostError::Refused {
                status,
                detail: error_detail(&body),
                limits,
            });
        }
        Ok((status, body, limits))
    }

    /// `<X_API_BASE_URL>/2/<path>`, next to the post endpoint `/2/tweets`.
    fn join(&self, path: &str) -> Result<Url, PostError> {
        self.endpoint.join(path).map_err(|e| PostError::BadReceipt {
            status: 0,
            detail: format!("the X API base cannot take the path /2/{path}: {e}"),
        })
    }

    /// A signed `GET url?params`, read as `T`.
    async fn read<T: serde::de::DeserializeOwned>(&self, url: &Url, params: &[(&str, &str)]) -> Result<T, PostError> {
        // The query is signed (RFC 5849 §3.4.1.3), and sent encoded by the same encoder.
        let request = oauth1_request::ParameterList::new(params.to_vec());
        let authorization = oauth1_request::get(url.as_str(), &request, &self.token(), oauth1_request::HMAC_SHA1);
        let with_query = oauth1_request::to_query(url.as_str().to_string(), &request);
        let request = self
            .http
            .get(with_query.as_str())
            .header(reqwest::header::AUTHORIZATION, authorization);
        let (status, body, _) = self.send(request, url.as_str()).await?;
        serde_json::from_slice(&body).map_err(|e| PostError::BadReceipt {
            status,
            detail: format!("{e}: {}", preview(&body)),
        })
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
