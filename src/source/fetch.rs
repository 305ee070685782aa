//! Fetching pages: HTTP(S) with timeouts, a body size cap and a User-Agent naming the bot, or a
//! local file with the same cap.

use super::Location;
use std::path::PathBuf;
use std::time::Duration;

/// The largest page accepted, in bytes (the biggest real page we have seen is about 1.1 MB).
pub const DEFAULT_MAX_BYTES: usize = 8 * 1024 * 1024;
/// How long connecting to a score site may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a whole page fetch may take.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// The most redirects followed for one page.
pub const MAX_REDIRECTS: usize = 5;

/// Why a page could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Network failure or timeout.
    #[error("cannot fetch {url}: {source}")]
    Http {
        /// The URL.
        url: String,
        /// The client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with a non-success status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// HTTP status.
        status: u16,
    },
    /// The page is larger than the cap.
    #[error("{location} is larger than {max_bytes} bytes")]
    TooLarge {
        /// The page.
        location: String,
        /// The cap in bytes.
        max_bytes: usize,
    },
    /// The local file could not be read.
    #[error("cannot read {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Fetches pages. Cheap to clone (the HTTP client is shared).
#[derive(Clone, Debug)]
pub struct Fetcher {
    http: reqwest::Client,
    max_bytes: usize,
}

impl Fetcher {
    /// A fetcher with the given body cap (bytes) and timeouts.
    ///
    /// # Errors
    /// A message when the HTTP client cannot be built.
    pub fn new(max_bytes: usize, connect_timeout: Duration, total_timeout: Duration) -> Result<Fetcher, String> {
        let http = reqwest::Client::builder()
            .user_agent(crate::USER_AGENT)
            .connect_timeout(connect_timeout)
            .timeout(total_timeout)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Fetcher { http, max_bytes })
    }

    /// Reads the page at `location` as text (invalid UTF-8 is replaced, never an error).
    ///
    /// # Errors
    /// [`FetchError`] on network failure, a non-2xx status, a page over the size cap, or an
    /// unreadable file.
    pub async fn fetch(&self, location: &Location) -> Result<String, FetchError> {
        let too_large = || FetchError::TooLarge {
            location: location.to_string(),
            max_bytes: self.max_bytes,
        };
        match location {
            Location::File(path) => {
                let file_error = |source| FetchError::File {
                    path: path.clone(),
                    source,
                };
                let meta = tokio::fs::metadata(path).await.map_err(file_error)?;
                if meta.len() > self.max_bytes as u64 {
                    return Err(too_large());
                }
                let bytes = tokio::fs::read(path).await.map_err(|source| FetchError::File {
                    path: path.clone(),
                    source,
                })?;
                Ok(String::from_utf8_lossy(&bytes).into_owned())
            }
            Location::Url(url) => {
                let http_error = |source| FetchError::Http {
                    url: url.to_string(),
                    source,
                };
                let mut response = self.http.get(url.clone()).send().await.map_err(http_error)?;
                let status = response.status();
                if !status.is_success() {
                    return Err(FetchError::Status {
                        url: url.to_string(),
                        status: status.as_u16(),
                    });
                }
                if response.content_length().is_some_and(|n| n > self.max_bytes as u64) {
                    return Err(too_large());
                }
                let mut body = Vec::new();
                while let Some(chunk) = response.chunk().await.map_err(|source| FetchError::Http {
                    url: url.to_string(),
                    source,
                })? {
                    if body.len() + chunk.len() > self.max_bytes {
                        return Err(too_large());
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(String::from_utf8_lossy(&body).into_owned())
            }
        }
    }
}
