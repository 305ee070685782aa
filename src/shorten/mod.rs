//! Link shortening: is.gd or Bitly. A failure is never fatal: the caller posts the long link.

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use url::Url;

/// How long a shortener may take before the long link is used instead (the production value
/// to pass to [`Shortener::new`]).
pub const SHORTEN_TIMEOUT: Duration = Duration::from_secs(5);

/// Which shortening service to use (`SHORTENER`).
#[derive(Clone)]
pub enum Provider {
    /// is.gd (no key). Documentation: <https://is.gd/apishorteningreference.php>; in JSON mode
    /// errors come inside a 200 answer as `{"errorcode":…,"errormessage":…}`.
    Isgd,
    /// Bitly v4 with a Bearer token (`BITLY_TOKEN`). Documentation:
    /// <https://dev.bitly.com/api-reference/#createBitlink>; 201 for a new link, 200 for an
    /// existing one, both with `{"link":…}`.
    Bitly(SecretString),
}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provider::Isgd => f.write_str("Isgd"),
            Provider::Bitly(_) => f.write_str("Bitly([REDACTED])"),
        }
    }
}

/// A configured shortener.
#[derive(Clone, Debug)]
pub struct Shortener {
    provider: Provider,
    base: Url,
    http: reqwest::Client,
}

/// Why a link could not be shortened.
#[derive(Debug, thiserror::Error)]
pub enum ShortenError {
    /// No answer (connect failure, timeout).
    #[error("shortener unreachable: {0}")]
    Unreachable(#[source] reqwest::Error),
    /// The service answered with an error.
    #[error("shortener refused ({status}): {detail}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The service's message.
        detail: String,
    },
    /// The answer was not the documented shape or not a URL.
    #[error("shortener answered something unreadable: {0}")]
    BadAnswer(String),
}

#[derive(Deserialize)]
struct IsgdAnswer {
    shorturl: Option<String>,
    errorcode: Option<i64>,
    errormessage: Option<String>,
}

#[derive(Deserialize)]
struct BitlyAnswer {
    link: Option<String>,
    message: Option<String>,
    description: Option<String>,
}

impl Provider {
    /// The production base URL of the provider: `https://is.gd/` or `https://api-ssl.bitly.com/`.
    pub fn default_base(&self) -> Url {
        let raw = match self {
            Provider::Isgd => "https://is.gd/",
            Provider::Bitly(_) => "https://api-ssl.bitly.com/",
        };
        Url::parse(raw).unwrap_or_else(|_| unreachable!("constant URL"))
    }
}

impl Shortener {
    /// A shortener for `provider` at `base` (`SHORTENER_BASE_URL`); `timeout` bounds each whole
    /// request (normally [`SHORTEN_TIMEOUT`]), after which the caller posts the long link.
    ///
    /// # Errors
    /// [`reqwest::Error`] when the HTTP client cannot be built (its TLS roots cannot be
    /// loaded).
    pub fn new(provider: Provider, base: Url, timeout: Duration) -> Result<Shortener, reqwest::Error> {
        let http = crate::http_client::builder()
            .user_agent(crate::USER_AGENT)
            .timeout(timeout)
            .build()?;
        Ok(Shortener { provider, base, http })
    }

    /// Shortens `long`.
    ///
    /// # Errors
    /// [`ShortenError`] on any failure; callers fall back to the long link.
    pub async fn shorten(&self, long: &Url) -> Result<Url, ShortenError> {
        let (status, body) = match &self.provider {
            Provider::Isgd => {
                let mut url = self
                    .base
                    .join("create.php")
                    .map_err(|e| ShortenError::BadAnswer(e.to_string()))?;
                url.query_pairs_mut()
                    .append_pair("format", "json")
                    .append_pair("url", long.as_str());
                let r = self.http.get(url).send().await.map_err(ShortenError::Unreachable)?;
                (r.status().as_u16(), r.bytes().await.map_err(ShortenError::Unreachable)?)
            }
            Provider::Bitly(token) => {
                let url = self
                    .base
                    .join("v4/shorten")
                    .map_err(|e| ShortenError::BadAnswer(e.to_string()))?;
                let r = self
                    .http
                    .post(url)
                    .bearer_auth(token.expose_secret())
                    .json(&serde_json::json!({ "long_url": long.as_str() }))
                    .send()
                    .await
                    .map_err(ShortenError::Unreachable)?;
                (r.status().as_u16(), r.bytes().await.map_err(ShortenError::Unreachable)?)
            }
        };
        let short = match &self.provider {
            Provider::Isgd => {
                let a: IsgdAnswer =
                    serde_json::from_slice(&body).map_err(|e| ShortenError::BadAnswer(e.to_string()))?;
                match (a.shorturl, a.errorcode) {
                    (Some(s), None) if status == 200 => s,
                    (_, code) => {
                        return Err(ShortenError::Refused {
                            status,
                            detail: format!(
                                "errorcode {}: {}",
                                code.map_or_else(|| "none".to_string(), |c| c.to_string()),
                                a.errormessage.unwrap_or_default()
                            ),
                        })
                    }
                }
            }
            Provider::Bitly(_) => {
                let a: BitlyAnswer =
                    serde_json::from_slice(&body).map_err(|e| ShortenError::BadAnswer(e.to_string()))?;
                match a.link {
                    Some(link) if status == 200 || status == 201 => link,
                    _ => {
                        return Err(ShortenError::Refused {
                            status,
                            detail: format!(
                                "{} {}",
                                a.message.unwrap_or_default(),
                                a.description.unwrap_or_default()
                            ),
                        })
                    }
                }
            }
        };
        let url = Url::parse(&short).map_err(|e| ShortenError::BadAnswer(format!("{short:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ShortenError::BadAnswer(format!("{short:?} is not an http(s) link")));
        }
        Ok(url)
    }
}
