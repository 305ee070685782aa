//! The claim protocol: who announces a match. This module owns the claim record, the token that
//! proves a claim was won, and the stores that hold claims.
//!
//! # The contract (every store keeps it; one test suite checks both)
//! - [`ClaimStore::claim`] takes `<prefix>match:<key>` in ONE atomic step that says who won. The
//!   winner gets a [`ClaimToken`]; every loser gets the holder's [`Claim`] (owner, since, state).
//!   Never check-then-set: N concurrent checks all answer "absent" before any write lands.
//! - Every claim has a TTL. [`ClaimStore::refresh`] extends it on later sightings without
//!   changing the record, so a still-listed match never expires into a second announcement.
//! - [`ClaimStore::transition`] and [`ClaimStore::release`] act only while the record still
//!   carries the caller's token (compare-and-set / compare-and-delete): a worker whose claim
//!   expired and was re-taken by another must not overwrite or delete the other's record.
//! - [`ClaimStore::peek`] reads without writing (dry run).
//! - A store error is [`ClaimError`], never "already claimed" and never "free".

mod embedded;
mod redis;

pub use self::embedded::EmbeddedClaims;
pub use self::redis::RedisClaims;

use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Where a claimed match is in the announcement protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimState {
    /// A worker won the claim and is composing or sending the post.
    Claimed,
    /// The post exists on X (`tweet_id` is set when X told us the id).
    Posted,
    /// The post was sent but its outcome could not be known (timeout after sending, reset,
    /// 5xx). Never retried automatically: a lost tweet is acceptable, a duplicate is not.
    Unknown,
    /// Given up after repeated failures that proved nothing was posted.
    Failed,
}

impl ClaimState {
    /// Lower-case name, as stored in the record: `claimed`, `posted`, `unknown`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimState::Claimed => "claimed",
            ClaimState::Posted => "posted",
            ClaimState::Unknown => "unknown",
            ClaimState::Failed => "failed",
        }
    }
}

impl fmt::Display for ClaimState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A claim record: what the store holds at `<prefix>match:<key>`, serialised as JSON.
///
/// It says what it is, so that a loser (and an operator) learns who holds the match, since when
/// and in which state.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// Where the announcement is in its life.
    pub state: ClaimState,
    /// The instance that won the claim (`INSTANCE_ID`, default `<hostname>:<pid>`).
    pub owner: String,
    /// Random per-claim value; transitions compare it. Not shown to losers' logs.
    token: String,
    /// When the claim was won (UTC).
    pub claimed_at: DateTime<Utc>,
    /// When the record last changed state (UTC).
    pub updated_at: DateTime<Utc>,
    /// The match in words ("Zimbabwe v Bangladesh, 2nd T20I"), for operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tweet's id once X returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tweet_id: Option<String>,
    /// Why the record is in its state (the failure, the note on a duplicate…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl fmt::Debug for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim")
            .field("state", &self.state)
            .field("owner", &self.owner)
            .field("claimed_at", &self.claimed_at)
            .field("updated_at", &self.updated_at)
            .field("title", &self.title)
            .field("tweet_id", &self.tweet_id)
            .field("detail", &self.detail)
            .finish_non_exhaustive()
    }
}

/// The most bytes of an unreadable record quoted in [`Claim::detail`].
const UNREADABLE_QUOTE_BYTES: usize = 120;

impl Claim {
    fn new(owner: &str, title: &str, now: DateTime<Utc>) -> Claim {
        Claim {
            state: ClaimState::Claimed,
            owner: owner.to_string(),
            token: uuid::Uuid::new_v4().to_string(),
            claimed_at: now,
            updated_at: now,
            title: Some(title.to_string()),
            tweet_id: None,
            detail: None,
        }
    }

    /// Reads a stored record. A value that is not a claim record (written by something else, or
    /// a bare `1` from an older bot) still means "held": it becomes an `unknown` claim whose
    /// detail quotes the value, so the caller never posts over it.
    fn from_stored(raw: &str) -> Claim {
        serde_json::from_str(raw).unwrap_or_else(|e| {
            let mut quote: String = raw.chars().filter(|c| !c.is_control()).collect();
            if quote.len() > UNREADABLE_QUOTE_BYTES {
                let mut end = UNREADABLE_QUOTE_BYTES;
                while !quote.is_char_boundary(end) {
                    end -= 1;
                }
                quote.truncate(end);
            }
            Claim {
                state: ClaimState::Unknown,
                owner: "(unreadable record)".to_string(),
                token: String::new(),
                claimed_at: DateTime::<Utc>::UNIX_EPOCH,
                updated_at: DateTime::<Utc>::UNIX_EPOCH,
                title: None,
                tweet_id: None,
                detail: Some(format!("not a claim record ({e}): {quote:?}")),
            }
        })
    }

    fn to_stored(&self) -> String {
        // A struct of strings, dates and options always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// How long ago the claim was won, at `now` (zero if the clock went backwards).
    pub fn age(&self, now: DateTime<Utc>) -> Duration {
        (now - self.claimed_at).to_std().unwrap_or_default()
    }

    fn carries(&self, token: &str) -> bool {
        !self.token.is_empty() && self.token == token
    }
}

/// Proof that this process won the claim on a match. Only this module can create one, so
/// nothing can post without having won (see [`crate::post::Poster::post`]).
#[derive(Debug)]
pub struct ClaimToken {
    key: MatchKey,
    claim: Claim,
}

impl ClaimToken {
    /// The match this token claims.
    pub fn key(&self) -> &MatchKey {
        &self.key
    }

    /// The record as this process wrote it when it won.
    pub fn claim(&self) -> &Claim {
        &self.claim
    }
}

/// The answer to [`ClaimStore::claim`]. Losing is an expected result, not an error.
#[derive(Debug)]
pub enum ClaimOutcome {
    /// We took the claim; we, and only we, may post.
    Won(ClaimToken),
    /// Someone holds it; here is their record.
    HeldBy(Claim),
}

/// What a state change after the claim should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The post exists on X.
    Posted {
        /// The tweet's id, when X returned one.
        tweet_id: Option<String>,
        /// A note (e.g. "X reported duplicate content").
        detail: Option<String>,
    },
    /// The post was attempted and its outcome cannot be known.
    Unknown {
        /// What went wrong, for operators.
        reason: String,
    },
    /// The bot gave up on this match.
    Failed {
        /// The last failure.
        reason: String,
    },
}

impl Transition {
    fn apply(&self, mut claim: Claim, now: DateTime<Utc>) -> Claim {
        claim.updated_at = now;
        match self {
            Transition::Posted { tweet_id, detail } => {
                claim.state = ClaimState::Posted;
                claim.tweet_id = tweet_id.clone();
                claim.detail = detail.clone();
            }
            Transition::Unknown { reason } => {
                claim.state = ClaimState::Unknown;
                claim.detail = Some(reason.clone());
            }
            Transition::Failed { reason } => {
                claim.state = ClaimState::Failed;
                claim.detail = Some(reason.clone());
            }
        }
        claim
    }
}

/// The answer to a token-checked change ([`ClaimStore::transition`], [`ClaimStore::release`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Our token matched; the change was made. Holds the record as it is now (for a release,
    /// as it was before deletion).
    Applied(Claim),
    /// The record now belongs to another worker (our claim expired and was re-taken); nothing
    /// was changed.
    NotOurs(Claim),
    /// The key no longer exists (expired or released); nothing was changed.
    Gone,
}

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

/// A claim as listed for operators: its key, its record and its remaining TTL.
#[derive(Debug, Clone)]
pub struct ListedClaim {
    /// The match key.
    pub key: MatchKey,
    /// The record.
    pub claim: Claim,
    /// Remaining time to live, when the store reports one.
    pub ttl: Option<Duration>,
}

/// The claim store in use: a closed set, so every backend is listed in one `match`.
#[derive(Clone)]
pub enum ClaimStore {
    /// Redis (`REDIS_URL`): production, shared by any number of replicas.
    Redis(RedisClaims),
    /// SQLite file (`STORE_PATH`), for one machine.
    Embedded(EmbeddedClaims),
}

impl ClaimStore {
    /// Claims `key` for this instance with a time to live of `ttl` (whole seconds, at least 1).
    ///
    /// `title` is stored in the record for operators.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the caller must not post.
    pub async fn claim(&self, key: &MatchKey, title: &str, ttl: Duration) -> Result<ClaimOutcome, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.claim(key, title, ttl).await,
            ClaimStore::Embedded(s) => s.claim(key, title, ttl).await,
        }
    }

    /// Reads the claim on `key` without writing anything (dry run, operators).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek(&self, key: &MatchKey) -> Result<Option<Claim>, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.peek(key).await,
            ClaimStore::Embedded(s) => s.peek(key).await,
        }
    }

    /// Moves our claim to a new state, only while it still carries `token`, keeping its TTL.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn transition(&self, token: &ClaimToken, change: &Transition) -> Result<Checked, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.transition(token, change).await,
            ClaimStore::Embedded(s) => s.transition(token, change).await,
        }
    }

    /// Deletes our claim, only while it still carries `token` (compare-and-delete), so the match
    /// may be claimed again. Use only when a failure proves nothing was posted.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.release(token).await,
            ClaimStore::Embedded(s) => s.release(token).await,
        }
    }

    /// Sets the TTL of an existing claim on `key` to `ttl`, without changing the record.
    /// Returns `false` when there is no claim to refresh.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn refresh(&self, key: &MatchKey, ttl: Duration) -> Result<bool, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.refresh(key, ttl).await,
            ClaimStore::Embedded(s) => s.refresh(key, ttl).await,
        }
    }

    /// Remaining time to live of the claim on `key`: `None` when there is no claim,
    /// `Some(Duration::MAX)` for a key without expiry (which this bot never writes).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn ttl(&self, key: &MatchKey) -> Result<Option<Duration>, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.ttl(key).await,
            ClaimStore::Embedded(s) => s.ttl(key).await,
        }
    }

    /// Lists every live claim under this store's prefix, sorted by key.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn list(&self) -> Result<Vec<ListedClaim>, ClaimError> {
        let mut all = match self {
            ClaimStore::Redis(s) => s.list().await?,
            ClaimStore::Embedded(s) => s.list().await?,
        };
        all.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(all)
    }

    /// Short name of the backend for logs: `redis` or `embedded`.
    pub fn kind(&self) -> &'static str {
        match self {
            ClaimStore::Redis(_) => "redis",
            ClaimStore::Embedded(_) => "embedded",
        }
    }
}

/// `ttl` in whole seconds, at least 1 (Redis refuses `EX 0`).
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

/// The store key of a match: `<prefix>match:<key>`.
fn store_key(prefix: &str, key: &MatchKey) -> String {
    format!("{prefix}match:{key}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_one_from_an_old_bot_reads_as_an_unknown_claim_not_as_free() {
        let c = Claim::from_stored("1");
        assert_eq!(c.state, ClaimState::Unknown);
        assert_eq!(c.owner, "(unreadable record)");
        assert!(!c.carries(""));
    }

    #[test]
    fn a_record_round_trips_and_keeps_its_token_out_of_debug() {
        let c = Claim::new("host:1", "A v B", Utc::now());
        let back = Claim::from_stored(&c.to_stored());
        assert_eq!(back, c);
        assert!(!format!("{c:?}").contains(&c.token));
    }
}
