//! The claim protocol: who announces a match. This module owns the claim record, the token that
//! proves a claim was won, and the stores that hold claims.
//!
//! # The contract (every store keeps it; one test suite checks all three)
//! - [`ClaimStore::claim`] takes `<prefix>match:<key>` in ONE atomic step that says who won. The
//!   winner gets a [`ClaimToken`]; every loser gets the holder's [`Claim`] (owner, since, state).
//!   Never check-then-set: N concurrent checks all answer "absent" before any write lands.
//! - Every claim has a TTL. [`ClaimStore::refresh`] extends it on later sightings without
//!   changing the record, so a still-listed match never expires into a second announcement.
//! - [`ClaimStore::transition`] and [`ClaimStore::release`] act only while the record still
//!   carries the caller's token (compare-and-set / compare-and-delete): a worker whose claim
//!   expired and was re-taken by another must not overwrite or delete the other's record.
//! - [`ClaimStore::peek`] reads without writing (dry run).
//! - A failure that proves nothing was posted releases the claim and counts the attempt
//!   ([`ClaimStore::release_failed`]); after the limit the record says `failed`.
//! - The first-start [`Marker`] says the store was initialised; its disappearance means the
//!   store lost its data, and posting must stop until an operator re-seeds.
//! - A store error is [`ClaimError`], never "already claimed" and never "free".

mod durability;
mod embedded;
mod postgres;
mod redis;
mod redis_conn;
mod tls;

pub use self::durability::{EvictionRefusal, EvictionSafety, NO_EVICTION, REPLICA_ACK_TIMEOUT};
pub use self::embedded::EmbeddedClaims;
pub use self::postgres::{PostgresClaims, PostgresError};
pub use self::redis::{RedisClaims, RedisOptions};
pub use self::redis_conn::{cluster_prefix, ClusterPrefixError, Deployment, SentinelUrlError};
pub use self::tls::{SslMode, TlsError};

use crate::cricket::{Identities, Lookup, MatchKey, CROSS_KEY_IDENTITY};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
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
    /// Recorded by `seed` at first start, without posting: the match was already current.
    Seeded,
}

impl ClaimState {
    /// Lower-case name, as stored in the record: `claimed`, `posted`, `unknown`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimState::Claimed => "claimed",
            ClaimState::Posted => "posted",
            ClaimState::Unknown => "unknown",
            ClaimState::Failed => "failed",
            ClaimState::Seeded => "seeded",
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
    #[serde(deserialize_with = "rfc3339")]
    pub claimed_at: DateTime<Utc>,
    /// When the record last changed state (UTC).
    #[serde(deserialize_with = "rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// The match in words ("Zimbabwe v Bangladesh, 2nd T20I"), for operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Where the match was seen (`cricbuzz:158062`, `espncricinfo:1530000`): each source's
    /// own id for the same match, kept as aliases of the one key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The tweet's id once X returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tweet_id: Option<String>,
    /// Why the record is in its state (the failure, the note on a duplicate…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Failed attempts behind a `failed` record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// When the owner gives up on its post (UTC): past it, a record still `claimed` is stuck,
    /// whatever the reader's own settings. Written by the winner from its own post timeout;
    /// absent in records of earlier releases (then the reader's `POST_TIMEOUT_SECS` decides).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "opt_rfc3339")]
    pub deadline: Option<DateTime<Utc>>,
}

/// [`rfc3339`] for an optional field (`null` or absent: `None`).
fn opt_rfc3339<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    #[derive(Deserialize)]
    struct Time(#[serde(deserialize_with = "rfc3339")] DateTime<Utc>);
    Ok(Option::<Time>::deserialize(deserializer)?.map(|t| t.0))
}

/// Reads a record's time as chrono writes it (RFC 3339, e.g. `2026-11-30T02:16:20.123Z`) with
/// chrono's dedicated RFC 3339 reader; anything else goes through chrono's general reader, which
/// is what the default deserialiser does, only several times slower. Every held sighting reads two
/// of these (a cycle's batch look-up parses each held record).
fn rfc3339<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<DateTime<Utc>, D::Error> {
    struct Time;
    impl serde::de::Visitor<'_> for Time {
        type Value = DateTime<Utc>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an RFC 3339 date and time")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
            DateTime::parse_from_rfc3339(text)
                .or_else(|_| text.parse::<DateTime<chrono::FixedOffset>>())
                .map(|t| t.with_timezone(&Utc))
                .map_err(E::custom)
        }
    }
    deserializer.deserialize_str(Time)
}

impl fmt::Debug for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim")
            .field("state", &self.state)
            .field("owner", &self.owner)
            .field("claimed_at", &self.claimed_at)
            .field("updated_at", &self.updated_at)
            .field("title", &self.title)
            .field("aliases", &self.aliases)
            .field("tweet_id", &self.tweet_id)
            .field("detail", &self.detail)
            .field("attempts", &self.attempts)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// The most bytes of an unreadable record quoted in [`Claim::detail`].
const UNREADABLE_QUOTE_BYTES: usize = 120;

impl Claim {
    fn new(owner: &str, title: &str, aliases: &[String], now: DateTime<Utc>) -> Claim {
        Claim::with_deadline(owner, title, aliases, now, None)
    }

    fn with_deadline(
        owner: &str,
        title: &str,
        aliases: &[String],
        now: DateTime<Utc>,
        gives_up_after: Option<Duration>,
    ) -> Claim {
        Claim {
            state: ClaimState::Claimed,
            owner: owner.to_string(),
            token: uuid::Uuid::new_v4().to_string(),
            claimed_at: now,
            updated_at: now,
            title: Some(title.to_string()),
            aliases: aliases.to_vec(),
            tweet_id: None,
            detail: None,
            attempts: None,
            deadline: gives_up_after
                .and_then(|d| chrono::Duration::from_std(d).ok())
                .and_then(|d| now.checked_add_signed(d)),
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
                aliases: Vec::new(),
                tweet_id: None,
                // Said in the field's words, not serde's (which name Rust types).
                detail: Some(format!(
                    "not a claim record ({}): {quote:?}",
                    match e.classify() {
                        serde_json::error::Category::Data => "JSON without a claim's fields",
                        _ => "not JSON",
                    }
                )),
                attempts: None,
                deadline: None,
            }
        })
    }

    fn to_stored(&self) -> String {
        // A struct of strings, dates and options always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// How long ago the claim was won, at `now` (zero if the clock went backwards).
    pub fn age(&self, now: DateTime<Utc>) -> Duration {
        age(self.claimed_at, now)
    }

    /// True when the claim is `claimed` and past its owner's deadline (a record without one:
    /// older than `stuck_after`, the reader's own bound): its worker died between claim and
    /// post. Stuck claims are never retried automatically.
    pub fn is_stuck(&self, now: DateTime<Utc>, stuck_after: Duration) -> bool {
        is_stuck(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// The state as operators see it: the stored state, or `stuck`.
    pub fn display_state(&self, now: DateTime<Utc>, stuck_after: Duration) -> &'static str {
        display_state(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// When a `claimed` record becomes stuck: its owner's deadline, or (a record of an earlier
    /// release) `stuck_after` after it was claimed.
    pub fn stuck_at(&self, stuck_after: Duration) -> DateTime<Utc> {
        stuck_at(self.claimed_at, self.deadline, stuck_after)
    }
}

fn age(claimed_at: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (now - claimed_at).to_std().unwrap_or_default()
}

fn stuck_at(claimed_at: DateTime<Utc>, deadline: Option<DateTime<Utc>>, stuck_after: Duration) -> DateTime<Utc> {
    deadline.unwrap_or_else(|| {
        chrono::Duration::from_std(stuck_after)
            .ok()
            .and_then(|d| claimed_at.checked_add_signed(d))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    })
}

fn is_stuck(
    state: ClaimState,
    claimed_at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    stuck_after: Duration,
) -> bool {
    state == ClaimState::Claimed && now > stuck_at(claimed_at, deadline, stuck_after)
}

fn display_state(
    state: ClaimState,
    claimed_at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    stuck_after: Duration,
) -> &'static str {
    if is_stuck(state, claimed_at, deadline, now, stuck_after) {
        "stuck"
    } else {
        state.as_str()
    }
}

/// Who holds a claim: what a skip needs to say (who, since when, in which state) and nothing
/// more. A cycle's batch look-up ([`ClaimStore::holders`]) reads each held record into one of
/// these rather than into a whole [`Claim`]: nearly every match a cycle sees is held, and the
/// rest of the record (title, aliases, token…) was most of a held cycle's work
/// (`docs/benchmarks.md`). The whole record is [`ClaimStore::peek`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Where the announcement is in its life.
    pub state: ClaimState,
    /// The instance that won the claim. The holders of one look-up that name the same owner
    /// share one copy of the name.
    pub owner: Arc<str>,
    /// When the claim was won (UTC).
    pub claimed_at: DateTime<Utc>,
    /// The identities the claim recorded for its match (`cricbuzz:158062`, `key:2026-07-17_…`;
    /// see [`crate::cricket::Identities`]); empty for an unreadable record.
    pub identities: Arc<[Box<str>]>,
    /// When the owner gives up on its post (see [`Claim::deadline`]).
    pub deadline: Option<DateTime<Utc>>,
}

impl Holder {
    /// Reads a stored record as [`Claim::from_stored`] does, keeping only the holder's fields: a
    /// value that is not a claim record reads as the same `unknown` holder, so the two readings
    /// never disagree about whether a record is readable.
    fn from_stored(raw: &str, owners: &mut Owners) -> Holder {
        match serde_json::from_str::<HolderFields<'_>>(raw) {
            Ok(f) => Holder {
                state: f.state,
                owner: owners.get(&f.owner),
                claimed_at: f.claimed_at,
                identities: f.aliases.iter().map(|a| Box::from(&**a)).collect(),
                deadline: f.deadline,
            },
            Err(_) => Holder::from(&Claim::from_stored(raw)),
        }
    }

    /// How long ago the claim was won, at `now` (zero if the clock went backwards).
    pub fn age(&self, now: DateTime<Utc>) -> Duration {
        age(self.claimed_at, now)
    }

    /// True when the claim recorded every one of `ids` (a readable record: an unreadable one
    /// records nothing and is never updated).
    pub fn covers(&self, ids: &[String]) -> bool {
        known_time(self.claimed_at).is_none() || ids.iter().all(|i| self.identities.iter().any(|h| **h == **i))
    }

    /// As [`Claim::is_stuck`]: `claimed` and past the owner's deadline (or, without one,
    /// older than `stuck_after`).
    pub fn is_stuck(&self, now: DateTime<Utc>, stuck_after: Duration) -> bool {
        is_stuck(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// As [`Claim::display_state`]: the stored state, or `stuck`.
    pub fn display_state(&self, now: DateTime<Utc>, stuck_after: Duration) -> &'static str {
        display_state(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }
}

impl From<&Claim> for Holder {
    fn from(claim: &Claim) -> Holder {
        Holder {
            state: claim.state,
            owner: Arc::from(claim.owner.as_str()),
            claimed_at: claim.claimed_at,
            identities: claim.aliases.iter().map(|a| Box::from(a.as_str())).collect(),
            deadline: claim.deadline,
        }
    }
}

/// A record read for its [`Holder`]: every field of [`Claim`], of the same type and with the
/// same defaults, so exactly the records that read as a `Claim` read as this (tested); but
/// only the holder's fields are kept, borrowed from the record's text where it has no escapes.
#[derive(Deserialize)]
struct HolderFields<'a> {
    state: ClaimState,
    #[serde(borrow)]
    owner: Cow<'a, str>,
    #[serde(rename = "token")]
    _token: AnyString,
    #[serde(deserialize_with = "rfc3339")]
    claimed_at: DateTime<Utc>,
    #[serde(rename = "updated_at", deserialize_with = "rfc3339")]
    _updated_at: DateTime<Utc>,
    #[serde(default, rename = "title")]
    _title: Option<AnyString>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default, rename = "tweet_id")]
    _tweet_id: Option<AnyString>,
    #[serde(default, rename = "detail")]
    _detail: Option<AnyString>,
    #[serde(default, rename = "attempts")]
    _attempts: Option<u32>,
    #[serde(default, deserialize_with = "opt_rfc3339")]
    deadline: Option<DateTime<Utc>>,
}

/// Any JSON string, checked and not kept.
struct AnyString;

impl<'de> Deserialize<'de> for AnyString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<AnyString, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = AnyString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<AnyString, E> {
                Ok(AnyString)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// The owner names one look-up has met, so that its holders naming the same owner (nearly all
/// of them: a deployment has a few replicas) share one copy of the name.
#[derive(Default)]
struct Owners(Vec<Arc<str>>);

/// Stored text as the bytes a batch look-up reads.
fn text_as_bytes(values: Vec<Option<String>>) -> Vec<Option<Vec<u8>>> {
    values.into_iter().map(|v| v.map(String::into_bytes)).collect()
}

/// The records one batch look-up read, each with the holder it reads as (see
/// [`ClaimStore::holders_since`]). Holds each record's text: about 260 bytes a match.
#[derive(Debug, Default)]
pub struct LastRecords(HashMap<Vec<u8>, Holder, foldhash::fast::RandomState>);

impl LastRecords {
    fn with_capacity(n: usize) -> LastRecords {
        LastRecords(HashMap::with_capacity_and_hasher(n, Default::default()))
    }

    /// How many distinct records are remembered.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Owners {
    /// At most this many names are shared; a look-up meeting more allocates the others.
    const SHARED: usize = 8;

    fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.0.iter().find(|known| ***known == *name) {
            return Arc::clone(known);
        }
        let new: Arc<str> = Arc::from(name);
        if self.0.len() < Self::SHARED {
            self.0.push(Arc::clone(&new));
        }
        new
    }
}

/// `t` when it is a real time; `None` for the Unix epoch, which is what an unreadable record
/// (no time of its own) reads as, so that it is shown as unknown rather than as 1970.
pub fn known_time(t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    (t != DateTime::<Utc>::UNIX_EPOCH).then_some(t)
}

/// Proof that this process won the claim on a match. Only this module can create one, so
/// nothing can post without having won (see [`crate::post::XClient::post`]).
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

/// The answer to [`ClaimStore::claim_match`].
#[derive(Debug)]
pub enum MatchClaim {
    /// No claim held any identity of the match: we took it, and only we may post.
    Won(ClaimToken),
    /// A claim holds the match under one of its identities; the identities this sighting
    /// gave that the claim lacked are now recorded in it.
    Held {
        /// The key the holder's claim is stored under (the match as it was first claimed).
        key: MatchKey,
        /// The holder's record, as it is after the identities were added.
        claim: Claim,
        /// What found it: `key:<key>` or a source's own id (`cricbuzz:158062`).
        via: String,
    },
    /// The store has no first-start marker (never initialised, or it lost its data), checked
    /// in the same atomic step as the claim: nothing was claimed.
    NoMarker,
}

/// Where a claim on a match may be, as a store names it: a record key, or an identity's
/// pointer key whose value names a record key.
#[derive(Debug, Clone)]
pub(crate) enum StoredLookup {
    /// `<prefix>match:<key>`: a claim record.
    Record(String),
    /// `<prefix>id:<identity>`: the key (without `<prefix>match:`) of the claim that recorded
    /// the identity.
    Pointer(String),
}

/// One atomic claim of a match under all its identities, as the backends receive it (see
/// [`ClaimStore::claim_match`] for the contract).
#[derive(Debug, Clone)]
pub(crate) struct IdentityClaim {
    /// Where our record goes: `<prefix>match:<key>`.
    pub record_key: String,
    /// Our record.
    pub record: String,
    /// The key our identity pointers name (the record key without `<prefix>match:`).
    pub canonical: String,
    /// Where a claim may already be, in order; the first is `record_key`.
    pub lookups: Vec<StoredLookup>,
    /// The pointer keys to write: each identity's `<prefix>id:<identity>`.
    pub pointers: Vec<String>,
    /// The pointer of our own key (`<prefix>id:key:<key>`): not written when we win, as our
    /// record under that key already answers for it (one pointer less to write and refresh);
    /// written when another claim holds the match, so the key leads to it.
    pub own_pointer: String,
    /// `<prefix>match:`, to turn a pointer's value into a record key.
    pub match_prefix: String,
    /// The first-start marker's key, when the claim requires it to exist.
    pub marker: Option<String>,
    /// Time to live of everything written, seconds.
    pub ttl_secs: u64,
}

/// A backend's answer to an [`IdentityClaim`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum IdentityReply {
    /// Our record and pointers were written.
    Won,
    /// Lookup `index` found a claim: its record key and record. Our pointers that were absent
    /// or named no live record now name it.
    Held {
        /// Which lookup found it.
        index: usize,
        /// The holder's record key.
        key: String,
        /// The holder's record.
        record: String,
    },
    /// The marker was required and absent; nothing was written.
    NoMarker,
}

/// One match to claim in a batch ([`ClaimStore::claim_many`]): what [`ClaimStore::claim`]
/// takes, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct ClaimRequest<'a> {
    /// The match.
    pub key: &'a MatchKey,
    /// The match in words, stored for operators.
    pub title: &'a str,
    /// Each source's id for the match, stored for operators.
    pub aliases: &'a [String],
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
    /// Recorded at first start without posting.
    Seeded,
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
            Transition::Seeded => {
                claim.state = ClaimState::Seeded;
                claim.detail = Some("present at first start; not announced".into());
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

/// What [`ClaimStore::release_failed`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Released {
    /// The claim was deleted; the match may be claimed again. `attempts` counts the failed
    /// attempts so far (kept in a counter that survives the release).
    Released {
        /// Failed attempts so far, this one included.
        attempts: u32,
    },
    /// The attempt limit was reached: the record now says `failed` and blocks the match.
    GaveUp(Claim),
    /// The record belongs to another worker now; nothing changed.
    NotOurs(Claim),
    /// The key no longer exists; nothing changed.
    Gone,
}

/// What an operator's [`ClaimStore::operator_release`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorRelease {
    /// Deleted (with its attempt counter); the match may be announced again.
    Released(Claim),
    /// Refused: the claim is live and healthy (`claimed` and not stuck, `posted`, `seeded`).
    Refused(Claim),
    /// No claim on that key.
    Absent,
    /// The key holds a value that is not a claim record (not written by this bot): there is no
    /// token to compare, so it is never deleted, with or without `force`; the store's own tools
    /// remove it.
    NotARecord(Claim),
}

/// The first-start marker: written when the store is seeded (or initialised with
/// `--init-store`); its absence on a store that had it means the store lost its data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// The instance that initialised the store.
    pub by: String,
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// How: `seed` or `init-store`.
    pub how: String,
}

/// The claim store in use: a closed set, so every backend is listed in one `match`.
///
/// The protocol (record format, tokens, attempts, marker) is implemented once, here, over a
/// few primitive operations each backend provides atomically.
#[derive(Clone)]
pub enum ClaimStore {
    /// Redis (`REDIS_URL`): production, shared by any number of replicas.
    Redis(RedisClaims),
    /// SQLite file (`STORE_PATH`), for one machine.
    Embedded(EmbeddedClaims),
    /// PostgreSQL (`DATABASE_URL`): shared by replicas, and a permanent ledger of every claim.
    Postgres(PostgresClaims),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            ClaimStore::Redis($s) => $e,
            ClaimStore::Embedded($s) => $e,
            ClaimStore::Postgres($s) => $e,
        }
    };
}

impl ClaimStore {
    fn prefix(&self) -> &str {
        each!(self, s => s.prefix())
    }

    fn owner(&self) -> &str {
        each!(self, s => s.owner())
    }

    fn key(&self, key: &MatchKey) -> String {
        // Built by hand, not with `format!`: a cycle's batch look-up makes one per match seen,
        // and the formatting machinery was ~8 % of a held cycle.
        let (prefix, key) = (self.prefix(), key.as_str());
        let mut out = String::with_capacity(prefix.len() + "match:".len() + key.len());
        out.push_str(prefix);
        out.push_str("match:");
        out.push_str(key);
        out
    }

    fn identity_key(&self, identity: &str) -> String {
        format!("{}id:{identity}", self.prefix())
    }

    fn attempts_key(&self, key: &MatchKey) -> String {
        format!("{}attempts:{key}", self.prefix())
    }

    fn marker_key(&self) -> String {
        format!("{}store:initialised", self.prefix())
    }

    /// Claims `key` for this instance with a time to live of `ttl` (whole seconds, at least 1),
    /// in ONE atomic step (Redis: `SET key record NX EX ttl GET`).
    ///
    /// `title` and `aliases` (each source's id for the match) are stored for operators.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the caller must not post.
    pub async fn claim(
        &self,
        key: &MatchKey,
        title: &str,
        aliases: &[String],
        ttl: Duration,
    ) -> Result<ClaimOutcome, ClaimError> {
        let record = Claim::new(self.owner(), title, aliases, Utc::now());
        if let ClaimStore::Redis(redis) = self {
            if let Some(wanted) = redis.min_replicas() {
                return self.claim_replicated(redis, key, record, ttl, wanted).await;
            }
        }
        let previous = each!(self, s => s.set_nx(&self.key(key), &record.to_stored(), ttl_secs(ttl)).await)?;
        Ok(match previous {
            None => ClaimOutcome::Won(ClaimToken {
                key: key.clone(),
                claim: record,
            }),
            Some(raw) => ClaimOutcome::HeldBy(Claim::from_stored(&raw)),
        })
    }

    /// Claims the match `ids` describes under every identity it has, in ONE atomic step on every
    /// store (Redis: one Lua script; SQLite: one `BEGIN IMMEDIATE` transaction; PostgreSQL: one
    /// transaction under an advisory lock per key prefix):
    ///
    /// 1. with `require_marker`, the first-start marker must exist, else [`MatchClaim::NoMarker`]
    ///    and nothing is written (a store wiped since the cycle began never looks free);
    /// 2. each of [`Identities::lookups`] is tried in order: a claim stored under that key, or
    ///    the claim that recorded that identity; the first found holds the match, whatever the
    ///    sighting's start time, names or description say now ([`MatchClaim::Held`]), and the
    ///    sighting's identities are recorded for it (pointers, then the record's list);
    /// 3. otherwise our record is written under [`Identities::key`] and every identity is
    ///    recorded as ours ([`MatchClaim::Won`]).
    ///
    /// Two processes seeing two versions of one listing at once therefore make one claim: the
    /// versions share a source id, and the second step of the later one finds the first.
    /// Identity pointers live `ttl` and are refreshed with the claim ([`ClaimStore::holders_touching`]).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the caller must not post.
    /// The record says when its owner gives up on the post: `gives_up_after` from now (its
    /// post timeout and margin); past that the claim is stuck for every reader.
    pub async fn claim_match(
        &self,
        ids: &Identities,
        title: &str,
        ttl: Duration,
        gives_up_after: Duration,
        require_marker: bool,
    ) -> Result<MatchClaim, ClaimError> {
        let record = Claim::with_deadline(self.owner(), title, &ids.ids, Utc::now(), Some(gives_up_after));
        let lookups = ids.lookups();
        let request = IdentityClaim {
            record_key: self.key(&ids.key),
            record: record.to_stored(),
            canonical: ids.key.as_str().to_string(),
            lookups: lookups
                .iter()
                .map(|l| match l {
                    Lookup::Key(k) => StoredLookup::Record(self.key(k)),
                    Lookup::Id(i) => StoredLookup::Pointer(self.identity_key(i)),
                })
                .collect(),
            pointers: ids.ids.iter().map(|i| self.identity_key(i)).collect(),
            own_pointer: self.identity_key(&format!("{CROSS_KEY_IDENTITY}{}", ids.key)),
            match_prefix: format!("{}match:", self.prefix()),
            marker: require_marker.then(|| self.marker_key()),
            ttl_secs: ttl_secs(ttl),
        };
        let reply = each!(self, s => s.claim_identities(&request).await)?;
        Ok(match reply {
            IdentityReply::Won => MatchClaim::Won(ClaimToken {
                key: ids.key.clone(),
                claim: record,
            }),
            IdentityReply::NoMarker => MatchClaim::NoMarker,
            IdentityReply::Held { index, key, record } => {
                let key = key
                    .strip_prefix(&request.match_prefix)
                    .and_then(MatchKey::parse)
                    .ok_or_else(|| ClaimError::Protocol {
                        op: "claim",
                        detail: format!("the store answered a holder at a key that is not a claim key: {key:?}"),
                    })?;
                let via = match lookups.get(index) {
                    Some(Lookup::Key(k)) => format!("{CROSS_KEY_IDENTITY}{k}"),
                    Some(Lookup::Id(i)) => i.clone(),
                    None => {
                        return Err(ClaimError::Protocol {
                            op: "claim",
                            detail: format!("the store answered lookup {index} of {}", lookups.len()),
                        })
                    }
                };
                let claim = self.record_identities(&key, &record, &ids.ids).await?;
                MatchClaim::Held { key, claim, via }
            }
        })
    }

    /// Adds `ids` to the identity list of the record `raw` at `key`, only while the record is
    /// still exactly `raw` (compare-and-swap on the value: the holder may be recording its post
    /// at this moment, and its state must never be overwritten by ours). A record that changed
    /// in between is left alone; the next sighting adds them again. Returns the record as it is.
    async fn record_identities(&self, key: &MatchKey, raw: &str, ids: &[String]) -> Result<Claim, ClaimError> {
        let claim = Claim::from_stored(raw);
        if claim.token.is_empty() || ids.iter().all(|i| claim.aliases.contains(i)) {
            return Ok(claim);
        }
        let mut grown = claim.clone();
        for i in ids {
            if !grown.aliases.contains(i) {
                grown.aliases.push(i.clone());
            }
        }
        let swapped = each!(self, s => s.replace_if_equal(&self.key(key), raw, &grown.to_stored()).await)?;
        Ok(if swapped { grown } else { claim })
    }

    /// Reads where a claim on the match `ids` describes may be, as [`ClaimStore::claim_match`]
    /// would find it, without writing anything (dry run, operators): the holder's key, record
    /// and what found it. Not atomic: a read.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn find(&self, ids: &Identities) -> Result<Option<(MatchKey, Claim, String)>, ClaimError> {
        for lookup in ids.lookups() {
            let (key, via) = match &lookup {
                Lookup::Key(k) => (k.clone(), format!("{CROSS_KEY_IDENTITY}{k}")),
                Lookup::Id(i) => {
                    let Some(target) = each!(self, s => s.get(&self.identity_key(i)).await)? else {
                        continue;
                    };
                    let Some(k) = MatchKey::parse(&target) else { continue };
                    (k, i.clone())
                }
            };
            if let Some(claim) = self.peek(&key).await? {
                return Ok(Some((key, claim, via)));
            }
        }
        Ok(None)
    }

    /// The claim that recorded `identity` (`cricbuzz:158062`), with its key, if it is live.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek_identity(&self, identity: &str) -> Result<Option<(MatchKey, Claim)>, ClaimError> {
        // A key as an identity: the claim stored under it answers first.
        if let Some(key) = identity.strip_prefix(CROSS_KEY_IDENTITY).and_then(MatchKey::parse) {
            if let Some(claim) = self.peek(&key).await? {
                return Ok(Some((key, claim)));
            }
        }
        let Some(target) = each!(self, s => s.get(&self.identity_key(identity)).await)? else {
            return Ok(None);
        };
        let Some(key) = MatchKey::parse(&target) else {
            return Ok(None);
        };
        Ok(self.peek(&key).await?.map(|c| (key, c)))
    }

    /// The claim an operator names by `asked`: the claim stored under it as a match key, else
    /// the claim that recorded it as an identity (`cricbuzz:158062`, `key:…`), with its key.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek_named(&self, asked: &MatchKey) -> Result<Option<(MatchKey, Claim)>, ClaimError> {
        match self.peek(asked).await? {
            Some(claim) => Ok(Some((asked.clone(), claim))),
            None => self.peek_identity(asked.as_str()).await,
        }
    }

    /// Records the identities of every claim written by a release that kept them only inside
    /// its record (`aliases`), so that a store written before identities were recorded still
    /// protects its matches through every edit of their listings. Idempotent and safe beside
    /// running replicas: a pointer is written only where none exists, with the claim's own
    /// remaining TTL. Returns how many pointers were written.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn index_identities(&self) -> Result<usize, ClaimError> {
        let mut written = 0;
        for listed in self.list().await? {
            if listed.claim.token.is_empty() {
                continue;
            }
            let ttl = listed
                .ttl
                .unwrap_or(Duration::from_secs(1))
                .min(Duration::from_secs(u64::MAX / 2));
            let own = format!("{CROSS_KEY_IDENTITY}{}", listed.key);
            // Its own key needs no pointer: the record is stored under it.
            for alias in listed.claim.aliases.iter().filter(|a| **a != own) {
                let key = self.identity_key(alias);
                let previous = each!(self, s => s.set_nx(&key, listed.key.as_str(), ttl_secs(ttl)).await)?;
                if previous.is_none() {
                    written += 1;
                }
            }
        }
        Ok(written)
    }

    /// Claims several matches in one round trip: for each request, exactly what
    /// [`ClaimStore::claim`] does (one atomic `SET key record NX EX ttl GET` per key), and, for
    /// a key already held, what a later sighting does ([`ClaimStore::refresh`]: its TTL is set
    /// to `ttl` again, the record untouched). Outcomes are in request order.
    ///
    /// Why: a cycle sees mostly matches it (or another replica) already claimed; one pipelined
    /// batch answers them all instead of two round trips each. Redis: the commands go in one
    /// pipeline (not a `MULTI`: each key's `SET NX GET` is atomic on its own, which is all the
    /// contract asks; keys are independent). Embedded: one `BEGIN IMMEDIATE` transaction.
    /// The `EXPIRE` sent after a `SET` we won sets the TTL it already has. A key requested twice
    /// in one batch is won by its first request; the second sees our own record (`HeldBy`).
    ///
    /// Unlike [`ClaimStore::claim`], the batch does not wait for `CLAIM_MIN_REPLICAS` replicas
    /// (the cycle claims one match at a time, with [`ClaimStore::claim`]).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then no outcome is known, and the caller must
    /// post none of them (a claim may nevertheless have been taken: it expires, or is stuck).
    pub async fn claim_many(
        &self,
        requests: &[ClaimRequest<'_>],
        ttl: Duration,
    ) -> Result<Vec<ClaimOutcome>, ClaimError> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let now = Utc::now();
        let records: Vec<Claim> = requests
            .iter()
            .map(|r| Claim::new(self.owner(), r.title, r.aliases, now))
            .collect();
        let items: Vec<(String, String)> = requests
            .iter()
            .zip(&records)
            .map(|(r, c)| (self.key(r.key), c.to_stored()))
            .collect();
        let previous = each!(self, s => s.set_nx_many(&items, ttl_secs(ttl)).await)?;
        if previous.len() != requests.len() {
            return Err(ClaimError::Protocol {
                op: "claim",
                detail: format!("{} replies to {} claims", previous.len(), requests.len()),
            });
        }
        Ok(requests
            .iter()
            .zip(records)
            .zip(previous)
            .map(|((r, record), previous)| match previous {
                None => ClaimOutcome::Won(ClaimToken {
                    key: r.key.clone(),
                    claim: record,
                }),
                Some(raw) => ClaimOutcome::HeldBy(Claim::from_stored(&raw)),
            })
            .collect())
    }

    /// The [`Holder`] of each of `keys` (`None`: no live claim), in one round trip (Redis: a
    /// pipeline of one `GETEX` per key, or one `MGET`). With `refresh`, each held key's TTL is set to
    /// `refresh` again, as a later sighting must do so a still-listed match never expires into a
    /// second announcement; without it nothing is written (dry run).
    ///
    /// This is a read, not a claim: `None` only means "try [`ClaimStore::claim`]", whose
    /// `SET NX` alone decides. A cycle calls this once for every match it sees, so matches
    /// already claimed cost no round trip of their own.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is known about any key.
    pub async fn holders(
        &self,
        keys: &[&MatchKey],
        refresh: Option<Duration>,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        self.holders_since(keys, refresh, &mut LastRecords::default()).await
    }

    /// As [`ClaimStore::holders`], reading only the records that changed since the look-up
    /// `last` remembers, and remembering this one's in its place. A record's text alone
    /// decides its holder, so a record read again unchanged (a match posted days ago, seen
    /// every cycle) gives the same holder without being parsed again. What `last` remembers
    /// never decides whether a match is held: the store's answer does.
    ///
    /// # Errors
    /// As [`ClaimStore::holders`]; `last` is then left as it was.
    pub async fn holders_since(
        &self,
        keys: &[&MatchKey],
        refresh: Option<Duration>,
        last: &mut LastRecords,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        self.holders_touching(keys, &[], refresh, last).await
    }

    /// As [`ClaimStore::holders_since`]; with `refresh`, the TTL of each identity in `touch`
    /// (`cricbuzz:158062`, `key:…`: the identities of the matches looked up) is set to `refresh`
    /// again in the same round trip, where the identity is recorded, so an identity lives as
    /// long as its claim.
    ///
    /// # Errors
    /// As [`ClaimStore::holders`]; `last` is then left as it was.
    pub async fn holders_touching(
        &self,
        keys: &[&MatchKey],
        touch: &[&str],
        refresh: Option<Duration>,
        last: &mut LastRecords,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let stored: Vec<String> = keys.iter().map(|k| self.key(k)).collect();
        let touched: Vec<String> = match refresh {
            Some(_) => touch.iter().map(|i| self.identity_key(i)).collect(),
            None => Vec::new(),
        };
        let refresh = refresh.map(ttl_secs);
        let raw: Vec<Option<Vec<u8>>> = match self {
            ClaimStore::Redis(s) => s.get_many(&stored, &touched, refresh).await?,
            ClaimStore::Embedded(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
            ClaimStore::Postgres(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
        };
        if raw.len() != keys.len() {
            return Err(ClaimError::Protocol {
                op: "peek",
                detail: format!("{} replies to {} reads", raw.len(), keys.len()),
            });
        }
        let mut owners = Owners::default();
        let mut now = LastRecords::with_capacity(raw.len());
        let holders = raw
            .into_iter()
            .map(|r| {
                let r = r?;
                let holder = match last.0.get(r.as_slice()) {
                    Some(known) => known.clone(),
                    // A value that is not UTF-8 is no record of ours; read lossily, it gives
                    // (as any foreign value) an unreadable record, not an error for the batch.
                    None => Holder::from_stored(&String::from_utf8_lossy(&r), &mut owners),
                };
                now.0.insert(r, holder.clone());
                Some(holder)
            })
            .collect();
        *last = now;
        Ok(holders)
    }

    /// Reads the claim on `key` without writing anything (dry run, operators).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek(&self, key: &MatchKey) -> Result<Option<Claim>, ClaimError> {
        let raw = each!(self, s => s.get(&self.key(key)).await)?;
        Ok(raw.as_deref().map(Claim::from_stored))
    }

    /// Moves our claim to a new state, only while it still carries `token`, keeping its TTL.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn transition(&self, token: &ClaimToken, change: &Transition) -> Result<Checked, ClaimError> {
        let new = change.apply(token.claim.clone(), Utc::now());
        let (status, current) =
            each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
        interpret("transition", status, &current, new)
    }

    /// Deletes our claim, only while it still carries `token` (compare-and-delete), so the match
    /// may be claimed again.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        let (status, current) =
            each!(self, s => s.compare_and_delete(&self.key(&token.key), &token.claim.token).await)?;
        interpret("release", status, &current, Claim::from_stored(&current))
    }

    /// After a failure that proves nothing was posted: counts the attempt (in a counter that
    /// survives the release and lives `ttl`), then releases the claim, or, once `max_attempts`
    /// failures are counted, records `failed` with `reason` so the match is not tried again.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release_failed(
        &self,
        token: &ClaimToken,
        reason: &str,
        max_attempts: u32,
        ttl: Duration,
    ) -> Result<Released, ClaimError> {
        let attempts = each!(self, s => s.incr(&self.attempts_key(&token.key), ttl_secs(ttl)).await)?;
        let attempts = u32::try_from(attempts).unwrap_or(u32::MAX);
        if attempts >= max_attempts {
            let change = Transition::Failed {
                reason: format!("gave up after {attempts} attempts: {reason}"),
            };
            let mut new = change.apply(token.claim.clone(), Utc::now());
            new.attempts = Some(attempts);
            let (status, current) =
                each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
            return Ok(match interpret("release", status, &current, new)? {
                Checked::Applied(c) => Released::GaveUp(c),
                Checked::NotOurs(c) => Released::NotOurs(c),
                Checked::Gone => Released::Gone,
            });
        }
        Ok(match self.release(token).await? {
            Checked::Applied(_) => Released::Released { attempts },
            Checked::NotOurs(c) => Released::NotOurs(c),
            Checked::Gone => Released::Gone,
        })
    }

    /// Failed attempts counted for `key` (see [`ClaimStore::release_failed`]).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn attempts(&self, key: &MatchKey) -> Result<u32, ClaimError> {
        let raw = each!(self, s => s.get(&self.attempts_key(key)).await)?;
        Ok(raw.and_then(|r| r.trim().parse().ok()).unwrap_or(0))
    }

    /// An operator's release of the claim on `key`: allowed when the claim is `unknown`,
    /// `failed` or stuck (`claimed` for longer than `stuck_after`), or with `force`. Deletes
    /// the record by compare-and-delete on the token it holds, and resets its attempt counter.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn operator_release(
        &self,
        key: &MatchKey,
        force: bool,
        stuck_after: Duration,
    ) -> Result<OperatorRelease, ClaimError> {
        let Some(claim) = self.peek(key).await? else {
            return Ok(OperatorRelease::Absent);
        };
        // Every record this bot writes carries a token; only an unreadable value has none.
        if claim.token.is_empty() {
            return Ok(OperatorRelease::NotARecord(claim));
        }
        let releasable =
            matches!(claim.state, ClaimState::Unknown | ClaimState::Failed) || claim.is_stuck(Utc::now(), stuck_after);
        if !(releasable || force) {
            return Ok(OperatorRelease::Refused(claim));
        }
        let (status, current) = each!(self, s => s.compare_and_delete(&self.key(key), &claim.token).await)?;
        each!(self, s => s.delete(&self.attempts_key(key)).await)?;
        Ok(match interpret("operator release", status, &current, claim)? {
            Checked::Applied(c) => OperatorRelease::Released(c),
            // Changed between our read and the delete: show the operator what is there now.
            Checked::NotOurs(c) => OperatorRelease::Refused(c),
            Checked::Gone => OperatorRelease::Absent,
        })
    }

    /// Sets the TTL of an existing claim on `key` to `ttl`, without changing the record.
    /// Returns `false` when there is no claim to refresh.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn refresh(&self, key: &MatchKey, ttl: Duration) -> Result<bool, ClaimError> {
        each!(self, s => s.expire(&self.key(key), ttl_secs(ttl)).await)
    }

    /// Remaining time to live of the claim on `key`: `None` when there is no claim,
    /// `Some(Duration::MAX)` for a key without expiry (which this bot never writes).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn ttl(&self, key: &MatchKey) -> Result<Option<Duration>, ClaimError> {
        each!(self, s => s.ttl(&self.key(key)).await)
    }

    /// Lists every live claim under this store's prefix, sorted by key.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn list(&self) -> Result<Vec<ListedClaim>, ClaimError> {
        let strip = format!("{}match:", self.prefix());
        let rows = each!(self, s => s.scan(&strip).await)?;
        let mut all: Vec<ListedClaim> = rows
            .into_iter()
            .filter_map(|(k, raw, ttl)| {
                Some(ListedClaim {
                    key: k.strip_prefix(&strip).and_then(MatchKey::parse)?,
                    claim: Claim::from_stored(&raw),
                    ttl,
                })
            })
            .collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(all)
    }

    /// The first-start marker, if the store has one.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn marker(&self) -> Result<Option<Marker>, ClaimError> {
        let raw = each!(self, s => s.get(&self.marker_key()).await)?;
        // An unreadable marker still marks the store as initialised: the key exists.
        Ok(raw.map(|r| {
            serde_json::from_str(&r).unwrap_or_else(|_| Marker {
                by: "(unreadable marker)".into(),
                at: DateTime::<Utc>::UNIX_EPOCH,
                how: "unknown".into(),
            })
        }))
    }

    /// Writes the first-start marker if there is none, in one atomic step (two processes
    /// initialising at once is safe). Returns the marker in force and whether we wrote it.
    /// The marker lives `ttl` and is refreshed by [`ClaimStore::refresh_marker`].
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn initialise(&self, how: &str, ttl: Duration) -> Result<(Marker, bool), ClaimError> {
        let marker = Marker {
            by: self.owner().to_string(),
            at: Utc::now(),
            how: how.to_string(),
        };
        let stored = serde_json::to_string(&marker).unwrap_or_default();
        let previous = each!(self, s => s.set_nx(&self.marker_key(), &stored, ttl_secs(ttl)).await)?;
        Ok(match previous {
            None => (marker, true),
            Some(raw) => (serde_json::from_str(&raw).unwrap_or(marker), false),
        })
    }

    /// Extends the marker's TTL; `false` when the marker is gone (the store lost its data).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn refresh_marker(&self, ttl: Duration) -> Result<bool, ClaimError> {
        each!(self, s => s.expire(&self.marker_key(), ttl_secs(ttl)).await)
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

/// Turns a checked operation's `(status, current value)` into [`Checked`]: 1 applied, 0 the
/// record is someone else's, -1 the key is gone.
fn interpret(op: &'static str, status: i64, current: &str, applied: Claim) -> Result<Checked, ClaimError> {
    match status {
        1 => Ok(Checked::Applied(applied)),
        0 => Ok(Checked::NotOurs(Claim::from_stored(current))),
        -1 => Ok(Checked::Gone),
        other => Err(ClaimError::Protocol {
            op,
            detail: format!("store answered status {other}"),
        }),
    }
}

/// `ttl` in whole seconds, at least 1 (Redis refuses `EX 0`).
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_one_from_an_old_bot_reads_as_an_unknown_claim_not_as_free() {
        let c = Claim::from_stored("1");
        assert_eq!(c.state, ClaimState::Unknown);
        assert_eq!(c.owner, "(unreadable record)");
        assert!(c.token.is_empty(), "no token can ever match it");
        // It has no time of its own: shown as unknown, never as 1970.
        assert_eq!(known_time(c.claimed_at), None);
        assert_eq!(known_time(Holder::from(&c).claimed_at), None);
        let real = Utc::now();
        assert_eq!(known_time(real), Some(real));
    }

    #[test]
    fn a_record_reads_as_the_same_holder_whether_read_whole_or_for_its_holder_alone() {
        let ok = Claim::new("host:1", "A v B", &["cricbuzz:1".to_string()], Utc::now()).to_stored();
        let records = [
            ok.clone(),
            ok.replace("host:1", r#"host\u003a1 \"quoted\""#),
            ok.replace(
                r#""state":"claimed""#,
                r#""state":"posted","tweet_id":"42","attempts":2,"extra":[1]"#,
            ),
            // Each of these is unreadable as a whole record, so it must be as a holder too.
            "1".to_string(),
            String::new(),
            ok.replace(r#","token":"#, r#","no_token":"#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","attempts":"2""#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","title":7"#),
            ok.replace(r#""aliases":["cricbuzz:1"]"#, r#""aliases":null"#),
            ok.replace(r#""aliases":["cricbuzz:1"]"#, r#""aliases":["cricbuzz:1",2]"#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","owner":"twice""#),
            ok.replace(r#""state":"claimed""#, r#""state":"lost""#),
            ok.replacen("T", "X", 1),
            ok[..ok.len() - 1].to_string(),
        ];
        let mut owners = Owners::default();
        for (i, raw) in records.iter().enumerate() {
            let whole = Claim::from_stored(raw);
            assert_eq!(
                Holder::from_stored(raw, &mut owners),
                Holder::from(&whole),
                "record {i}: {raw}"
            );
            assert_eq!(whole.owner == "(unreadable record)", i >= 3, "record {i}: {raw}");
        }
        assert_eq!(
            &*Holder::from_stored(&records[1], &mut owners).owner,
            "host:1 \"quoted\""
        );
    }

    #[test]
    fn the_holders_of_one_look_up_share_each_owner_name() {
        let mut owners = Owners::default();
        let (a, b) = (owners.get("host:1"), owners.get("host:1"));
        assert!(Arc::ptr_eq(&a, &b));
        for i in 0..20 {
            assert_eq!(&*owners.get(&format!("host:{i}")), format!("host:{i}"));
        }
        assert_eq!(
            owners.0.len(),
            Owners::SHARED,
            "a look-up of many owners shares only the first few"
        );
    }

    #[test]
    fn stuck_is_past_the_owners_deadline_whatever_the_readers_timeout() {
        let at = Utc::now();
        let owner = Claim::with_deadline("slow:1", "A v B", &[], at, Some(Duration::from_secs(105)));
        let reader = Duration::from_secs(45);
        let later = |secs: i64| at + chrono::Duration::seconds(secs);
        assert!(
            !owner.is_stuck(later(60), reader),
            "the owner is still within its 105 s"
        );
        assert_eq!(owner.display_state(later(60), reader), "claimed");
        assert!(owner.is_stuck(later(106), reader));
        assert_eq!(owner.stuck_at(reader), later(105));
        let holder = Holder::from_stored(&owner.to_stored(), &mut Owners::default());
        assert_eq!(
            (holder.is_stuck(later(60), reader), holder.is_stuck(later(106), reader)),
            (false, true)
        );
        // A record of an earlier release has no deadline: the reader's bound decides.
        let old = Claim::new("old:1", "A v B", &[], at);
        assert_eq!(old.deadline, None);
        assert!(old.is_stuck(later(46), reader));
        assert_eq!(old.stuck_at(reader), later(45));
    }

    #[test]
    fn a_record_round_trips_and_keeps_its_token_out_of_debug() {
        let c = Claim::new("host:1", "A v B", &["cricbuzz:1".to_string()], Utc::now());
        let back = Claim::from_stored(&c.to_stored());
        assert_eq!(back, c);
        assert!(!format!("{c:?}").contains(&c.token));
    }

    #[test]
    fn record_times_are_read_in_rfc_3339_and_in_the_other_forms_chrono_reads() {
        let record = |at: &str| {
            format!(r#"{{"state":"posted","owner":"h:1","token":"t","claimed_at":"{at}","updated_at":"{at}"}}"#)
        };
        let want = "2026-11-30T02:16:20.5Z".parse::<DateTime<Utc>>().expect("a time");
        for at in [
            "2026-11-30T02:16:20.5Z",
            "2026-11-30T03:16:20.5+01:00",
            "2026-11-30T02:16:20.500000000Z",
            "2026-11-30 02:16:20.5Z",
            "2026-11-30T02:16:20.5z",
        ] {
            let c = Claim::from_stored(&record(at));
            assert_eq!(
                (c.state, c.claimed_at, c.updated_at),
                (ClaimState::Posted, want, want),
                "{at}"
            );
        }
        let c = Claim::from_stored(&record("yesterday"));
        assert_eq!(
            c.state,
            ClaimState::Unknown,
            "an unreadable time is an unreadable record, still held"
        );
    }
}

/// The record readers against anything a store can hold: never a panic, and a record that is
/// not the bot's reads as held (`unknown`), never as free.
#[cfg(test)]
mod stored_fuzz {
    use super::*;
    use proptest::prelude::*;

    /// A record the bot could have written, with an owner of any text and length.
    fn record(owner: &str, state: &str, claimed_at: &str) -> String {
        serde_json::json!({
            "state": state, "owner": owner, "token": "t", "claimed_at": claimed_at,
            "updated_at": claimed_at, "title": owner, "detail": owner,
        })
        .to_string()
    }

    #[test]
    fn a_64_kib_owner_reads_whole_and_the_same_by_both_readers() {
        let owner = "o".repeat(64 * 1024);
        let raw = record(&owner, "posted", "2026-07-17T10:30:00Z");
        let claim = Claim::from_stored(&raw);
        assert_eq!((claim.state, claim.owner.len()), (ClaimState::Posted, 64 * 1024));
        let holder = Holder::from_stored(&raw, &mut Owners::default());
        assert_eq!(holder, Holder::from(&claim));
    }

    proptest! {
        #[test]
        fn any_text_reads_without_panic_and_never_as_free(raw in any::<String>()) {
            let claim = Claim::from_stored(&raw);
            let holder = Holder::from_stored(&raw, &mut Owners::default());
            prop_assert_eq!(holder, Holder::from(&claim));
        }

        #[test]
        fn any_record_shape_reads_without_panic(
            owner in ".{0,2000}",
            state in prop_oneof![
                Just("claimed".to_string()),
                Just("posted".to_string()),
                Just("seeded".to_string()),
                ".{0,12}",
            ],
            claimed_at in prop_oneof![Just("2026-07-17T10:30:00Z".to_string()), ".{0,40}"],
        ) {
            let raw = record(&owner, &state, &claimed_at);
            let claim = Claim::from_stored(&raw);
            let holder = Holder::from_stored(&raw, &mut Owners::default());
            prop_assert_eq!(&holder, &Holder::from(&claim));
            let _ = claim.display_state(Utc::now(), Duration::from_secs(60));
            let _ = claim.age(Utc::now());
        }
    }
}
