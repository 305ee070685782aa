//! Fetching pages like a good citizen: one rate limiter per host and no overlapping requests to
//! one host, conditional GET (ETag / Last-Modified), bounded retries with backoff and jitter on
//! timeouts and 5xx (honouring `Retry-After`), a body size cap, bounded redirects, and bodies
//! decoded by their declared charset. Local files get the same size cap.

use super::Location;
use governor::{DefaultDirectRateLimiter, Quota};
use reqwest::header::{
    HeaderMap, HeaderValue, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, RETRY_AFTER,
};
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::Url;

/// The largest page accepted, in bytes (the biggest real page we have seen is about 1.1 MB).
pub const DEFAULT_MAX_BYTES: usize = 8 * 1024 * 1024;
/// How long connecting to a score site may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one attempt at a page may take.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(15);
/// How long reading one source may take in all, retries and waits included, so that a hanging
/// source delays a cycle by at most this much.
pub const SOURCE_DEADLINE: Duration = Duration::from_secs(30);
/// The most redirects followed for one page.
pub const MAX_REDIRECTS: usize = 5;
/// Attempts for one GET (the first plus retries) on timeouts, connection failures and 5xx.
pub const MAX_ATTEMPTS: u32 = 3;
/// First retry delay; doubled on each retry, plus up to 50% random jitter.
pub const RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// The longest `Retry-After` honoured; a server asking for more gets an error this cycle.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Default pace of requests to one host, per minute.
pub const DEFAULT_PER_HOST_PER_MINUTE: u32 = 30;

/// Why a page could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Network failure or timeout (after retries).
    #[error("cannot fetch {url}: {} ({source})", if source.is_timeout() { "timed out" } else if source.is_connect() { "could not connect" } else { "request failed" })]
    Http {
        /// The URL.
        url: String,
        /// The client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The source took longer than [`SOURCE_DEADLINE`] in all.
    #[error("{location}: no page within {} s (retries included)", .deadline.as_secs())]
    Deadline {
        /// The page.
        location: String,
        /// The deadline.
        deadline: Duration,
    },
    /// The server answered with a non-success status (after retries for 5xx).
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// HTTP status.
        status: u16,
    },
    /// The page is larger than the cap.
    #[error(
        "{location} is larger than FETCH_MAX_BYTES ({max_bytes} bytes); if the page really is this big, raise FETCH_MAX_BYTES (or --fetch-max-bytes)"
    )]
    TooLarge {
        /// The page.
        location: String,
        /// The cap in bytes.
        max_bytes: usize,
    },
    /// The local file could not be read.
    #[error("cannot read {}: {source}", crate::redact::path(path))]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Credentials some APIs want with each request.
#[derive(Clone)]
pub enum ApiKey {
    /// A header, e.g. `X-RapidAPI-Key` for Cricbuzz's API gateways.
    Header {
        /// Header name.
        name: String,
        /// The key.
        value: SecretString,
    },
    /// A query parameter, e.g. `apikey` for CricketData.org.
    Query {
        /// Parameter name.
        name: String,
        /// The key.
        value: SecretString,
    },
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKey::Header { name, .. } => write!(f, "ApiKey::Header({name}: [REDACTED])"),
            ApiKey::Query { name, .. } => write!(f, "ApiKey::Query({name}=[REDACTED])"),
        }
    }
}

/// A fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// A new body, decoded to text.
    Fresh(String),
    /// The server answered 304 Not Modified to our conditional GET: the page is unchanged.
    NotModified,
}

/// Per-host pacing: a rate limiter, and a lock so requests to one host never overlap.
struct Host {
    limiter: DefaultDirectRateLimiter,
    turn: tokio::sync::Mutex<()>,
}

/// Validators from the last 200 answer of a URL, for conditional GET.
#[derive(Clone, Default)]
struct Validators {
    etag: Option<HeaderValue>,
    last_modified: Option<HeaderValue>,
}

/// Fetches pages. Cheap to clone; clones share the HTTP client, the per-host limiters and the
/// conditional-GET validators.
#[derive(Clone)]
pub struct Fetcher {
    http: reqwest::Client,
    max_bytes: usize,
    per_host: Quota,
    hosts: Arc<Mutex<HashMap<String, Arc<Host>>>>,
    validators: Arc<Mutex<HashMap<String, Validators>>>,
}

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetcher")
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    /// A fetcher with the given body cap (bytes), timeouts (per attempt) and pace per host
    /// (requests per minute, at least 1).
    ///
    /// # Errors
    /// [`reqwest::Error`] when the HTTP client cannot be built (its TLS roots cannot be
    /// loaded).
    pub fn new(
        max_bytes: usize,
        connect_timeout: Duration,
        total_timeout: Duration,
        per_host_per_minute: u32,
    ) -> Result<Fetcher, reqwest::Error> {
        let http = crate::http_client::builder()
            .user_agent(crate::USER_AGENT)
            .connect_timeout(connect_timeout)
            .timeout(total_timeout)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .build()?;
        let rate = NonZeroU32::new(per_host_per_minute).unwrap_or(NonZeroU32::MIN);
        Ok(Fetcher {
            http,
            max_bytes,
            per_host: Quota::per_minute(rate),
            hosts: Arc::default(),
            validators: Arc::default(),
        })
    }

    fn host(&self, url: &Url) -> Arc<Host> {
        let name = format!(
            "{}:{}",
            url.host_str().unwrap_or(""),
            url.port_or_known_default().unwrap_or(0)
        );
        let mut hosts = self.hosts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(hosts.entry(name).or_insert_with(|| {
            Arc::new(Host {
                limiter: DefaultDirectRateLimiter::direct(self.per_host),
                turn: tokio::sync::Mutex::new(()),
            })
        }))
    }

    /// Reads the page at `location`. URLs are fetched with a conditional GET when a previous
    /// answer carried validators; `api_key` is sent as the API wants it.
    ///
    /// # Errors
    /// [`FetchError`] on network failure or 5xx after [`MAX_ATTEMPTS`], another non-2xx
    /// status, a page over the size cap, or an unreadable file.
    pub async fn fetch(&self, location: &Location, api_key: Option<&ApiKey>) -> Result<Fetched, FetchError> {
        let read = async {
            match location {
                Location::File(path) => self.read_file(path).await.map(Fetched::Fresh),
                Location::Url(url) => self.get(url, api_key).await,
            }
        };
        tokio::time::timeout(SOURCE_DEADLINE, read).await.unwrap_or_else(|_| {
            let location = match (location, api_key) {
                (Location::Url(u), key) => redact_query(u, key),
                (other, _) => other.to_string(),
            };
            Err(FetchError::Deadline {
                location,
                deadline: SOURCE_DEADLINE,
            })
        })
    }

    /// Drops the conditional-GET validators of `location`, so the next fetch is unconditional
    /// (used when a body we fetched could not be parsed: a 304 for it would tell us nothing).
    pub fn forget(&self, location: &Location, api_key: Option<&ApiKey>) {
        if let Location::Url(url) = location {
            let mut url = url.clone();
            if let Some(ApiKey::Query { name, value }) = api_key {
                url.query_pairs_mut().append_pair(name, value.expose_secret());
            }
            self.validators
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(url.as_str());
        }
    }

    async fn read_file(&self, path: &PathBuf) -> Result<String, FetchError> {
        use std::io::Read;
        let file_error = |source| FetchError::File {
            path: path.clone(),
            source,
        };
        // Read in place, not on tokio's blocking pool: a local page is small and quick to read,
        // and a pool thread per concurrent file would give glibc one more memory arena each
        // (measured: 20 file sources held ~60 MiB that way, growing, against ~25 MiB here).
        let file = std::fs::File::open(path).map_err(file_error)?;
        let meta = file.metadata().map_err(|source| FetchError::File {
            path: path.clone(),
            source,
        })?;
        let too_large = || FetchError::TooLarge {
            location: crate::redact::path(path),
            max_bytes: self.max_bytes,
        };
        if meta.len() > self.max_bytes as u64 {
            return Err(too_large());
        }
        // The size in the metadata is 0 for devices and pipes (/dev/zero would never end), so
        // the cap is enforced on what is actually read.
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0).min(self.max_bytes));
        file.take(self.max_bytes as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| FetchError::File {
                path: path.clone(),
                source,
            })?;
        if bytes.len() > self.max_bytes {
            return Err(too_large());
        }
        Ok(decode(&bytes, None))
    }

    async fn get(&self, url: &Url, api_key: Option<&ApiKey>) -> Result<Fetched, FetchError> {
        let mut url = url.clone();
        let mut headers = HeaderMap::new();
        match api_key {
            Some(ApiKey::Query { name, value }) => {
                url.query_pairs_mut().append_pair(name, value.expose_secret());
            }
            Some(ApiKey::Header { name, value }) => {
                if let (Ok(n), Ok(v)) = (
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value.expose_secret()),
                ) {
                    let mut v = v;
                    v.set_sensitive(true);
                    headers.insert(n, v);
                }
            }
            None => {}
        }
        // Errors name the URL without any API key we added to it.
        let shown = redact_query(&url, api_key);
        // The URL itself, in memory only: two sources differing only in a hidden value keep
        // validators of their own.
        let cache_key = url.to_string();
        let cached = self
            .validators
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&cache_key)
            .cloned();
        if let Some(v) = &cached {
            if let Some(etag) = &v.etag {
                headers.insert(IF_NONE_MATCH, etag.clone());
            }
            if let Some(lm) = &v.last_modified {
                headers.insert(IF_MODIFIED_SINCE, lm.clone());
            }
        }
        let host = self.host(&url);
        let _turn = host.turn.lock().await;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            host.limiter.until_ready().await;
            let sent = self.http.get(url.clone()).headers(headers.clone()).send().await;
            let retry_in = |attempt: u32| backoff(attempt);
            let response = match sent {
                Ok(r) => r,
                Err(e) if attempt < MAX_ATTEMPTS && (e.is_timeout() || e.is_connect()) => {
                    // The client's error quotes the URL, API key included: drop it.
                    let e = e.without_url();
                    tracing::warn!(url = %shown, attempt, error.message = %e, "fetch failed; retrying");
                    tokio::time::sleep(retry_in(attempt)).await;
                    continue;
                }
                Err(e) => {
                    return Err(FetchError::Http {
                        url: shown,
                        source: e.without_url(),
                    })
                }
            };
            let status = response.status();
            if status == StatusCode::NOT_MODIFIED && cached.is_some() {
                return Ok(Fetched::NotModified);
            }
            if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                let wait = retry_after(response.headers()).unwrap_or_else(|| retry_in(attempt));
                if attempt < MAX_ATTEMPTS && wait <= MAX_RETRY_AFTER {
                    tracing::warn!(url = %shown, attempt, status = status.as_u16(), wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), "fetch answered an error; retrying");
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: shown,
                    status: status.as_u16(),
                });
            }
            let validators = Validators {
                etag: response.headers().get(ETAG).cloned(),
                last_modified: response.headers().get(LAST_MODIFIED).cloned(),
            };
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let body = self.read_body(response, &shown).await?;
            if validators.etag.is_some() || validators.last_modified.is_some() {
                self.validators
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(cache_key, validators);
            }
            return Ok(Fetched::Fresh(decode(&body, content_type.as_deref())));
        }
    }

    async fn read_body(&self, mut response: reqwest::Response, shown: &str) -> Result<Vec<u8>, FetchError> {
        let too_large = || FetchError::TooLarge {
            location: shown.to_string(),
            max_bytes: self.max_bytes,
        };
        if response.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| FetchError::Http {
            url: shown.to_string(),
            source: e.without_url(),
        })? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// The delay before retry number `attempt` (1-based): base × 2^(attempt-1), plus up to 50%
/// random jitter so replicas do not retry in lockstep.
fn backoff(attempt: u32) -> Duration {
    let base = RETRY_BASE_DELAY * 2u32.saturating_pow(attempt.saturating_sub(1));
    base + base.mul_f64(0.5 * rand::random::<f64>())
}

/// `Retry-After` as seconds or an HTTP date (RFC 9110 §10.2.3).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let raw = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = raw.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(raw).ok()?;
    (when.with_timezone(&chrono::Utc) - chrono::Utc::now()).to_std().ok()
}

/// The URL as shown in logs and errors: the configured API key in the query is replaced by
/// `REDACTED`, as is anything [`super::redacted`] hides.
fn redact_query(url: &Url, api_key: Option<&ApiKey>) -> String {
    let mut shown = super::redacted(url);
    let Some(ApiKey::Query { name, .. }) = api_key else {
        return shown.to_string();
    };
    let pairs: Vec<(String, String)> = shown
        .query_pairs()
        .map(|(k, v)| {
            if k == name.as_str() {
                (k.into_owned(), "REDACTED".into())
            } else {
                (k.into_owned(), v.into_owned())
            }
        })
        .collect();
    shown.query_pairs_mut().clear().extend_pairs(pairs);
    shown.to_string()
}

/// Decodes `bytes` by the charset in `content_type`, else a `<meta charset>` near the start of
/// an HTML page, else UTF-8 (WHATWG Encoding Standard labels via `encoding_rs`). Invalid
/// sequences become U+FFFD, never an error.
pub fn decode(bytes: &[u8], content_type: Option<&str>) -> String {
    let declared = content_type.and_then(charset_param).or_else(|| meta_charset(bytes));
    let encoding = declared
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// The charset of `<meta charset="…">` or `<meta http-equiv content="…; charset=…">` in the
/// first 1024 bytes (where the HTML standard says to look for it).
fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head.get(at..)?.trim_start_matches(['"', '\'']);
    let label: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
        .collect();
    (!label.is_empty()).then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_1252_body_decodes_to_the_right_names() {
        let bytes = b"Cura\xe7ao v M\xfcnchen";
        assert_eq!(
            decode(bytes, Some("text/html; charset=windows-1252")),
            "Curaçao v München"
        );
        assert_eq!(
            decode(b"<meta charset=\"iso-8859-1\">Cura\xe7ao", None),
            "<meta charset=\"iso-8859-1\">Curaçao"
        );
        assert_eq!(decode("Curaçao".as_bytes(), Some("text/html")), "Curaçao");
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&h), None, "a date in the past means no wait");
    }

    #[test]
    fn an_api_key_in_the_query_never_shows_in_errors() {
        let key = ApiKey::Query {
            name: "apikey".into(),
            value: "s3cret".into(),
        };
        let url = Url::parse("https://api.cricapi.com/v1/currentMatches?offset=0&apikey=s3cret").unwrap();
        assert_eq!(
            redact_query(&url, Some(&key)),
            "https://api.cricapi.com/v1/currentMatches?offset=0&apikey=REDACTED"
        );
        assert!(!format!("{key:?}").contains("s3cret"));
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        for attempt in 1..=3 {
            let base = RETRY_BASE_DELAY * 2u32.pow(attempt - 1);
            let d = backoff(attempt);
            assert!(d >= base && d <= base + base / 2, "{attempt}: {d:?}");
        }
    }
}
