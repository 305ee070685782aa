//! The start of every outbound HTTP client (score pages, sinks, shorteners): reqwest over rustls
//! with ring, the one crypto provider built into the binary (the stores' TLS uses it too).

/// A [`reqwest::ClientBuilder`] whose TLS uses ring; the caller adds its user agent, timeouts and
/// redirect policy.
///
/// reqwest 0.13 builds its rustls configuration from the process' default crypto provider, and
/// its `build()` panics when there is none (its own default, aws-lc-rs, is not compiled in:
/// <https://github.com/seanmonstar/reqwest/blob/v0.13.0/CHANGELOG.md>), so ring is made the
/// default first. Installing it again is harmless. Server certificates are checked against the
/// system's roots (rustls-platform-verifier), as the stores' are.
pub fn builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}
