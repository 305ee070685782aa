//! What a store's failure is: [`ClaimError`], never read as "already claimed" nor as "free".

use super::{PostgresError, TlsError};
use std::time::Duration;

/// A store could not answer. Never read as "already claimed" nor as "free".
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Redis refused or failed the command (down, timeout, READONLY, auth…).
    #[error("redis store error on {op}: {source}")]
    Redis {
        /// The operation that failed ("claim", "peek", …).
        op: &'static str,
        /// The client's error.
        #[source]
        source: ::redis::RedisError,
    },
    /// The embedded SQLite store failed.
    #[error("embedded store error on {op}: {source}")]
    Embedded {
        /// The operation that failed.
        op: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The PostgreSQL ledger failed (down, timeout, auth, a failed migration…).
    #[error("postgres store error on {op}: {source}")]
    Postgres {
        /// The operation that failed.
        op: &'static str,
        /// What failed.
        #[source]
        source: PostgresError,
    },
    /// `CLAIM_MIN_REPLICAS`: the claim was won, but fewer replicas acknowledged it in time, so
    /// it might not survive a failover. Nothing was posted.
    #[error(
        "claim on {key} was acknowledged by {acked} of the {wanted} replicas CLAIM_MIN_REPLICAS requires within {} ms, so it might not survive a failover: not posting; {}",
        timeout.as_millis(),
        if *released { "the claim was released, and the match is tried again next cycle (check the replicas: INFO replication)" } else { "the claim could not be released and is kept (it will show as stuck; release it with `claims release` once the replicas are back)" }
    )]
    NotReplicated {
        /// The match key.
        key: String,
        /// Replicas that acknowledged the claim.
        acked: u32,
        /// `CLAIM_MIN_REPLICAS`.
        wanted: u32,
        /// How long the claim waited for them.
        timeout: Duration,
        /// Whether the claim was released (compare-and-delete on its token).
        released: bool,
    },
    /// A TLS setting of the store cannot be used (a CA file, `sslmode`).
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A store setting cannot be used (a Sentinel URL that cannot be read, a `KEY_PREFIX` that
    /// cannot be a cluster's hash tag). The text names the setting and what to do.
    #[error("{0}")]
    Setting(String),
    /// The store answered something the protocol does not allow (a script's reply of the wrong
    /// shape).
    #[error("store protocol error on {op}: {detail}")]
    Protocol {
        /// The operation that failed.
        op: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The blocking task running an embedded store call panicked or was cancelled.
    #[error("embedded store task failed: {0}")]
    Task(String),
}
