//! The X API v2 client: `POST /2/tweets`, signed with OAuth 1.0a user context.
//!
//! Documentation: <https://docs.x.com/x-api/posts/create-post>. The JSON body is not part of the
//! OAuth 1.0a signature base string (RFC 5849 §3.4.1.3 signs only form-encoded bodies), so the
//! request is signed with no parameters.

use super::pace::{self, RateGate};
use super::{Post, PostError, PostReceipt};
use crate::claim::ClaimToken;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use url::Url;

/// The longest error detail kept from an X answer, in bytes.
const MAX_DETAIL_BYTES: usize = 300;

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
    /// A message naming the base URL when it cannot be joined with `/2/tweets`, or when the
    /// HTTP client cannot be built.
    pub fn new(
        base: &Url,
        credentials: XCredentials,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<XClient, String> {
        let endpoint = base
            .join("2/tweets")
            .map_err(|e| format!("X_API_BASE_URL {base} cannot take the path /2/tweets: {e}"))?;
        let http = reqwest::Client::builder()
            .user_agent(crate::USER_AGENT)
            .timeout(timeout)
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
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
        let c = &self.credentials;
        let token = oauth1_request::Token::from_parts(
            c.api_key.expose_secret(),
            c.api_secret.expose_secret(),
            c.access_token.expose_secret(),
            c.access_token_secret.expose_secret(),
        );
        let url = self.endpoint.as_str();
        let authorization = oauth1_request::post(url, &(), &token, oauth1_request::HMAC_SHA1);
        let sent = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::AUTHORIZATION, authorization)
            .json(&serde_json::json!({ "text": post.text() }))
            .send()
            .await;
        let response = match sent {
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
                    source,
                })
            }
        };
        let status = response.status().as_u16();
        let limits = pace::observe(&self.gate, status, response.headers());
        let body = response.bytes().await.map_err(|source| PostError::NoAnswer {
            url: url.to_string(),
            source,
        })?;
        if !(200..300).contains(&status) {
            return Err(PostError::Refused {
                status,
                detail: error_detail(&body),
                limits,
            });
        }
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

fn preview(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().filter(|c| !c.is_control()).collect();
    if s.len() > MAX_DETAIL_BYTES {
        let mut end = MAX_DETAIL_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
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
