//! The HTTP plumbing every sink's client shares: one HTTP client per pair of bounds, joining
//! API paths to a base URL, sending a request and reading its whole (capped) answer while
//! telling "the request never left" ([`SinkError::Connect`]) from "it left and no answer came
//! back" ([`SinkError::NoAnswer`]), endpoints whose URL is the credential, and the header and
//! body readers the sinks' rate-limit and error tables use.

use super::error::{ClientError, SinkError};
use super::kind::SinkKind;
use super::pace::{RateGate, RateLimits};
use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret, SecretString};

/// The longest error detail kept from an answer, in bytes.
const MAX_DETAIL_BYTES: usize = 300;

/// The most bytes read of a platform's answer to a post or a read. Their documented answers are
/// a few KiB; a larger one is cut off here (and then fails to parse, which the sink reads as an
/// unknown outcome), so a misbehaving server cannot make the bot hold gigabytes.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The body of `response`, at most [`MAX_ANSWER_BYTES`] of it.
///
/// # Errors
/// The HTTP client's error when the body cannot be read (the connection dropped, the time
/// ran out).
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_ANSWER_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ANSWER_BYTES {
            break;
        }
    }
    Ok(body)
}

/// The HTTP client every sink uses: the bot's User-Agent, a bound on the whole request (past it
/// the outcome is unknown) and on connecting, and no redirects (a redirected POST could be sent
/// twice, or a secret sent elsewhere). One client per pair of bounds for the whole process,
/// shared by every channel: each client holds its own TLS roots and connection pool, which
/// twenty channels had twenty times (reqwest's `Client` is a handle, cheap to clone:
/// <https://docs.rs/reqwest/latest/reqwest/struct.Client.html>).
pub(crate) fn http_client(
    timeout: std::time::Duration,
    connect_timeout: std::time::Duration,
) -> Result<reqwest::Client, ClientError> {
    type Clients = Vec<((std::time::Duration, std::time::Duration), reqwest::Client)>;
    static CLIENTS: std::sync::OnceLock<std::sync::Mutex<Clients>> = std::sync::OnceLock::new();
    let mut clients = CLIENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, client)) = clients.iter().find(|(bounds, _)| *bounds == (timeout, connect_timeout)) {
        return Ok(client.clone());
    }
    let client = crate::http_client::builder()
        .user_agent(crate::USER_AGENT)
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(ClientError::Http)?;
    clients.push(((timeout, connect_timeout), client.clone()));
    Ok(client)
}

/// Whether `url` names this machine (`localhost`, `127.0.0.0/8`, `::1`): the one place a
/// request carrying a credential may go over plain `http://` (a local stand-in, a test server).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `base` joined with `path` as a subpath, whether or not `base` ends with a slash
/// (`https://host/prefix` + `api/v1/statuses` = `https://host/prefix/api/v1/statuses`).
///
/// # Errors
/// [`ClientError::BadBase`] naming `what` (the setting) when `base` cannot take a path
/// (`mailto:`, `data:`).
pub(crate) fn join(base: &url::Url, path: &str, what: &'static str) -> Result<url::Url, ClientError> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        let with_slash = format!("{}/", base.path());
        base.set_path(&with_slash);
    }
    // "./" keeps a first segment with a colon (`bot123:abc`) from reading as a URL scheme.
    base.join(&format!("./{path}"))
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ClientError::BadBase {
            what,
            base: base.to_string(),
            path: path.to_string(),
        })
}

/// One answer, read whole.
pub(crate) struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body read as `T`, the platform's documented answer.
    ///
    /// # Errors
    /// [`SinkError::BadReceipt`] (for `sink`) naming the status and the start of the body, when
    /// the body is not that.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self, sink: SinkKind) -> Result<T, SinkError> {
        serde_json::from_slice(&self.body).map_err(|e| SinkError::BadReceipt {
            sink,
            status: self.status,
            detail: format!("{e}: {}", preview(&self.body)),
        })
    }
}

/// An endpoint whose URL is the credential (a Discord webhook, a Telegram bot's method URL):
/// kept secret, named in errors and logs by `shown` (the URL with the credential redacted),
/// with the limits its answers report.
#[derive(Debug, Clone)]
pub(crate) struct SecretEndpoint {
    http: reqwest::Client,
    /// The URL, credential included.
    url: SecretString,
    /// The URL with the credential redacted.
    shown: String,
    /// Shared by clones: one view of the endpoint's limits per process.
    gate: RateGate,
}

impl SecretEndpoint {
    /// `url`, named `shown`, over the HTTP client of `timeout` and `connect_timeout`.
    ///
    /// # Errors
    /// [`ClientError::Http`] when the HTTP client cannot be built.
    pub(crate) fn new(
        url: String,
        shown: String,
        timeout: std::time::Duration,
        connect_timeout: std::time::Duration,
    ) -> Result<SecretEndpoint, ClientError> {
        Ok(SecretEndpoint {
            http: http_client(timeout, connect_timeout)?,
            url: url.into(),
            shown,
            gate: RateGate::new(),
        })
    }

    /// The endpoint's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        &self.gate
    }

    /// The URL with the credential redacted.
    #[cfg(test)]
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// POSTs `body` as JSON and reads the whole answer (see [`send`]).
    ///
    /// # Errors
    /// As [`send`].
    pub(crate) async fn post_json(&self, sink: SinkKind, body: &serde_json::Value) -> Result<Answer, SinkError> {
        send(sink, &self.shown, self.http.post(self.url.expose_secret()).json(body)).await
    }

    /// Records what an answer said of the endpoint's limits in its gate.
    pub(crate) fn observe(&self, status: u16, limits: Option<&RateLimits>) {
        observe(&self.gate, status, limits);
    }
}

/// Sends `request` and reads the whole answer. `endpoint` is how errors name the endpoint
/// (secrets redacted by the caller); reqwest's own errors lose their URL, which may hold one.
///
/// # Errors
/// [`SinkError::Connect`] when the request never left, [`SinkError::NoAnswer`] when it left
/// and the answer did not come back whole.
pub(crate) async fn send(
    sink: SinkKind,
    endpoint: &str,
    request: reqwest::RequestBuilder,
) -> Result<Answer, SinkError> {
    let response = match request.send().await {
        Ok(r) => r,
        Err(source) if source.is_connect() || source.is_builder() => {
            return Err(SinkError::Connect {
                sink,
                endpoint: endpoint.to_string(),
                source: source.without_url(),
            })
        }
        Err(source) => {
            return Err(SinkError::NoAnswer {
                sink,
                endpoint: endpoint.to_string(),
                timed_out: source.is_timeout(),
                source: source.without_url(),
            })
        }
    };
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = read_capped(response).await.map_err(|source| SinkError::NoAnswer {
        sink,
        endpoint: endpoint.to_string(),
        timed_out: source.is_timeout(),
        source: source.without_url(),
    })?;
    Ok(Answer { status, headers, body })
}

/// Updates `gate` from one answer's limits.
pub(crate) fn observe(gate: &RateGate, status: u16, limits: Option<&RateLimits>) {
    gate.observe(status, limits, Utc::now());
}

/// A header as a trimmed string.
pub(crate) fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// A header as a count.
pub(crate) fn header_count(headers: &HeaderMap, name: &str) -> Option<u32> {
    let n: u64 = header(headers, name)?.parse().ok()?;
    Some(u32::try_from(n).unwrap_or(u32::MAX))
}

/// An instant given as Unix epoch seconds, possibly with a fraction (`1470173023.123`).
pub(crate) fn epoch_instant(raw: &str) -> Option<DateTime<Utc>> {
    let secs: f64 = raw.trim().parse().ok()?;
    if !secs.is_finite() || !(0.0..=1e11).contains(&secs) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, reason = "at most 1e14 ms, checked above")]
    let millis = (secs * 1000.0).round() as i64;
    DateTime::<Utc>::from_timestamp_millis(millis)
}

/// `now` plus `secs` seconds (a `retry_after`), when it is a sane number.
pub(crate) fn after_secs(secs: f64) -> Option<DateTime<Utc>> {
    if !secs.is_finite() || !(0.0..1e9).contains(&secs) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 1e12 ms, checked above")]
    let millis = (secs * 1000.0).ceil() as i64;
    Some(Utc::now() + chrono::Duration::milliseconds(millis))
}

/// `Some` when any field is set.
pub(crate) fn some_limits(limits: RateLimits) -> Option<RateLimits> {
    (limits != RateLimits::default()).then_some(limits)
}

/// The start of a body or message, printable, at most [`MAX_DETAIL_BYTES`].
pub(crate) fn preview(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().filter(|c| !c.is_control()).collect();
    if crate::text::cut_to_bytes(&mut s, MAX_DETAIL_BYTES) {
        s.push('…');
    }
    s
}
