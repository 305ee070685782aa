//! The claim protocol: who announces a match. A match is claimed under all its identities in
//! ONE atomic step of the store whose answer says who won; only the winner, holding a
//! [`ClaimToken`], may post, and later changes act by compare-and-set on its token. The rule
//! every store keeps is stated once, with a reference model the contract suite runs beside
//! each store, in `rule.rs`.
//!
//! # Layout
//! [`ClaimStore`] (here) is the closed set of stores, each method documented once and
//! dispatched to the store in use. Around it, one file per job:
//! - `rule.rs`: the claim rule, and [`ReferenceStore`], the rule as a model;
//! - `request.rs`: what a store receives and answers in an atomic step;
//! - `outcome.rs`: the token and every answer ([`MatchClaim`], [`Checked`], …);
//! - `identity_claim.rs`: claiming a match ([`ClaimStore::claim_match`]);
//! - `owner.rs`: what the winner does with its token (record, release, refresh);
//! - `reads.rs`: reading a claim by key or identity, listing; `batch.rs`: the cycle's
//!   batch look-up of holders; `unsettled.rs`: the claims a reconciliation looks at, through
//!   the index the claim step keeps;
//! - `operator.rs`: changes by others than the winner (operators, `claims reconcile`),
//!   each inside its window of the store's clock (`window.rs`);
//!   `marker.rs`: the first-start marker; `upgrade.rs`: stores written by earlier releases;
//! - `record.rs` (what a claim says, stored as JSON), `holder.rs` (the fast reading of who
//!   holds one), `key.rs` (the store's keys), `label.rs` (closed sets and their words),
//!   `error.rs` ([`ClaimError`]), `durability.rs` (eviction and replication);
//! - the stores: `redis.rs` over `redis_conn.rs` (one server, Cluster, Sentinel; its scripts in
//!   `lua/`), `embedded.rs` (SQLite), `postgres.rs`, with `tls.rs` for the networked ones.

/// Runs `$e` with `$s` bound to the store in use: every store listed in one `match`.
macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            ClaimStore::Redis($s) => $e,
            ClaimStore::Embedded($s) => $e,
            ClaimStore::Postgres($s) => $e,
        }
    };
}

mod batch;
mod decide;
mod durability;
mod embedded;
mod error;
mod holder;
mod identity_claim;
mod key;
mod label;
mod marker;
mod operator;
mod outcome;
mod owner;
mod postgres;
mod reads;
mod record;
mod redis;
mod redis_conn;
mod request;
mod rule;
mod tls;
mod unsettled;
mod upgrade;
mod window;

pub use self::batch::BatchRead;
pub use self::durability::{EvictionRefusal, EvictionSafety, NO_EVICTION, REPLICA_ACK_TIMEOUT};
pub use self::embedded::EmbeddedClaims;
pub use self::error::{ClaimError, PostgresError};
pub use self::holder::{Holder, LastRecords};
pub(crate) use self::key::StoreKey;
pub use self::label::Label;
pub use self::marker::{Marker, MarkerOrigin};
pub use self::outcome::{
    Adoption, Checked, ClaimToken, ListedClaim, MatchClaim, OperatorRelease, PostIntent, Released, Transition,
};
pub use self::postgres::PostgresClaims;
pub use self::reads::{Listing, LIST_PAGE};
pub use self::record::{known_time, later_by, Claim, ClaimState, Replay, ReplyTo, ShownState, MAX_RECORD_BYTES};
pub use self::redis::{RedisClaims, RedisOptions, READ_ROUND, READ_SLICE};
pub use self::redis_conn::{check_sentinel_url, cluster_prefix, ClusterPrefixError, Deployment, SentinelUrlError};
pub use self::rule::{ReferenceChange, ReferenceClaim, ReferenceRecord, ReferenceStore};
pub use self::tls::{split_sslmode, SslMode, TlsError};
pub use self::unsettled::UnsettledClaim;
pub use self::window::Window;

use crate::clock::Clock;
use crate::cricket::{Identity, MatchKey};
use std::time::Duration;

/// The claim store in use: a closed set, so every backend is listed in one `match`.
///
/// The protocol (record format, tokens, attempts, marker) is implemented once, over a few
/// primitive operations each backend provides atomically; its methods are in the files named
/// for their jobs (see the module's layout).
#[derive(Clone)]
pub enum ClaimStore {
    /// Redis (`REDIS_URL`): production, shared by any number of replicas.
    Redis(RedisClaims),
    /// SQLite file (`STORE_PATH`), for one machine.
    Embedded(EmbeddedClaims),
    /// PostgreSQL (`DATABASE_URL`): shared by replicas, and a permanent ledger of every claim.
    Postgres(PostgresClaims),
}

impl ClaimStore {
    fn prefix(&self) -> &str {
        each!(self, s => s.prefix())
    }

    /// The claims of channel `channel` (issue 21: one claim per match and channel): the same
    /// store and connection, under the prefix `<prefix>ch:<channel>:`, so every key of the
    /// protocol (claims, identities, attempts, the first-start marker) is the channel's own and a
    /// failure on one channel never blocks or repeats another. On a cluster the prefix keeps
    /// the deployment's hash tag, so every channel's keys share its slot.
    pub fn for_channel(&self, channel: &str) -> ClaimStore {
        let prefix = format!("{}ch:{channel}:", self.prefix());
        match self {
            ClaimStore::Redis(s) => ClaimStore::Redis(s.with_prefix(prefix)),
            ClaimStore::Embedded(s) => ClaimStore::Embedded(s.with_prefix(prefix)),
            ClaimStore::Postgres(s) => ClaimStore::Postgres(s.with_prefix(prefix)),
        }
    }

    /// The claims of `event` in this store's namespace (see [`crate::event`]): this store
    /// itself for the announcement, so every key written before events stays where it was;
    /// under `<prefix>ev:<event>:` for any other, so each event of a match is claimed once per
    /// channel with the same protocol (identities, states, deadlines, markers) and no code of
    /// its own.
    #[must_use]
    pub fn for_event(&self, event: crate::event::Event) -> ClaimStore {
        let Some(segment) = event.namespace() else {
            return self.clone();
        };
        let prefix = format!("{}{segment}", self.prefix());
        match self {
            ClaimStore::Redis(s) => ClaimStore::Redis(s.with_prefix(prefix)),
            ClaimStore::Embedded(s) => ClaimStore::Embedded(s.with_prefix(prefix)),
            ClaimStore::Postgres(s) => ClaimStore::Postgres(s.with_prefix(prefix)),
        }
    }

    fn owner(&self) -> &str {
        each!(self, s => s.owner())
    }

    /// This store, with `clock` as the process's clock (the system's by default). Redis and
    /// PostgreSQL write and judge their records' times (claimed, updated, the owner's deadline,
    /// a replay's lease, the marker's; whether a claim is stuck, a lease over, a Mastodon
    /// repeat in its window) by their own clock ([`ClaimStore::now`]), whatever this one
    /// reads: a replica whose clock is off changes nothing of it. Only a manual clock
    /// ([`Clock::manual`], a test's simulation) stands in for theirs. The embedded store, on
    /// one host, judges by `clock`, its expiry included.
    #[must_use]
    pub fn with_clock(&self, clock: Clock) -> ClaimStore {
        match self {
            ClaimStore::Redis(s) => ClaimStore::Redis(s.with_clock(clock)),
            ClaimStore::Embedded(s) => ClaimStore::Embedded(s.with_clock(clock)),
            ClaimStore::Postgres(s) => ClaimStore::Postgres(s.with_clock(clock)),
        }
    }

    /// The process's clock this store was given (see [`ClaimStore::with_clock`]); the
    /// records' times are the store's, [`ClaimStore::now`].
    pub fn clock(&self) -> Clock {
        each!(self, s => s.clock())
    }

    /// The store's time (UTC), which every time a claim record carries is written by and every
    /// judgement of them is made by: Redis `TIME` (on the node holding this prefix's keys),
    /// PostgreSQL `clock_timestamp()`, the embedded store's clock (the host's). One clock for
    /// every replica, so their own clocks need not agree. In a simulation (a manual
    /// [`Clock`]), the simulated time.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn now(&self) -> Result<chrono::DateTime<chrono::Utc>, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.time().await,
            ClaimStore::Embedded(s) => Ok(s.time()),
            ClaimStore::Postgres(s) => s.time().await,
        }
    }

    fn key(&self, key: &MatchKey) -> StoreKey {
        StoreKey::claim(self.prefix(), key)
    }

    fn identity_key(&self, identity: &Identity) -> StoreKey {
        StoreKey::identity(self.prefix(), identity.as_str())
    }

    fn attempts_key(&self, key: &MatchKey) -> StoreKey {
        StoreKey::attempts(self.prefix(), key)
    }

    fn marker_key(&self) -> StoreKey {
        StoreKey::marker(self.prefix())
    }

    /// Short name of the backend for logs: `redis`, `embedded` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self {
            ClaimStore::Redis(_) => "redis",
            ClaimStore::Embedded(_) => "embedded",
            ClaimStore::Postgres(_) => "postgres",
        }
    }
}

/// `ttl` in whole seconds, at least 1 (Redis refuses `EX 0`).
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}
