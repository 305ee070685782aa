//! What a store's failure is: [`ClaimError`], never read as "already claimed" nor as "free";
//! and what PostgreSQL's is ([`PostgresError`]).

use super::tls::TlsError;
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

/// Why the PostgreSQL store could not answer.
#[derive(Debug, thiserror::Error)]
pub enum PostgresError {
    /// `DATABASE_URL` does not parse as a connection string.
    #[error("invalid connection string: {0}")]
    Url(#[source] tokio_postgres::Error),
    /// The pool could not hand out a working connection (server down, timeout, auth…).
    #[error("no connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The pool could not be built.
    #[error("cannot build the connection pool: {0}")]
    Build(#[from] deadpool_postgres::BuildError),
    /// The server refused or failed a statement, or the connection failed.
    #[error(transparent)]
    Query(#[from] tokio_postgres::Error),
    /// A command that only reads found no claims ledger, and does not create one.
    #[error("no claims ledger in the schema {schema} (nothing was ever claimed there): check the search_path of DATABASE_URL, or run `seed` or a command that posts first")]
    NoLedger {
        /// The schema searched (`search_path`'s first, or the default).
        schema: String,
    },
    /// A migration could not be applied.
    #[error("migration failed: {0}")]
    Migrate(#[from] refinery::Error),
    /// No answer in time.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The claim row changed between our statements every time we tried (each loss was
    /// followed by the holder vanishing): neither won nor lost, so an error.
    #[error("the claim row kept changing under us ({0} attempts)")]
    Contended(usize),
}
