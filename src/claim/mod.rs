//! The claim protocol: who announces a match. This module owns the protocol ([`ClaimStore`]:
//! claim a match under all its identities, look holders up, move or release a claim by
//! compare-and-set on its token) and the token that proves a claim was won. Around it, one file
//! per job: `record.rs` (what a claim says, stored as JSON), `holder.rs` (the fast reading of
//! who holds one), `error.rs` ([`ClaimError`]), `durability.rs` (eviction and replication), and
//! the stores: `redis.rs` over `redis_conn.rs` (one server, Cluster, Sentinel), `embedded.rs`
//! (SQLite), `postgres.rs`, with `tls.rs` for the networked ones.
//!
//! # The contract (every store keeps it; one test suite checks all three)
//! - [`ClaimStore::claim_match`] takes the match under every identity in ONE atomic step that
//!   says who won. The winner gets a [`ClaimToken`]; every loser gets the holder's [`Claim`]
//!   (owner, since, state).
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
mod error;
mod holder;
mod key;
mod postgres;
mod record;
mod redis;
mod redis_conn;
mod tls;

pub use self::durability::{EvictionRefusal, EvictionSafety, NO_EVICTION, REPLICA_ACK_TIMEOUT};
pub use self::embedded::EmbeddedClaims;
pub use self::error::ClaimError;
use self::holder::{text_as_bytes, Fingerprint, Kept, Owners};
pub use self::holder::{Holder, LastRecords};
pub(crate) use self::key::{RecordName, StoreKey};
pub use self::postgres::{PostgresClaims, PostgresError};
pub use self::record::{known_time, later_by, Claim, ClaimState, Replay};
pub use self::redis::{RedisClaims, RedisOptions};
pub use self::redis_conn::{check_sentinel_url, cluster_prefix, ClusterPrefixError, Deployment, SentinelUrlError};
pub use self::tls::{split_sslmode, SslMode, TlsError};

use crate::cricket::{Identities, Lookup, MatchKey, CROSS_KEY_IDENTITY};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    Record(StoreKey),
    /// `<prefix>id:<identity>`: the key (without `<prefix>match:`) of the claim that recorded
    /// the identity.
    Pointer(StoreKey),
}

/// One atomic claim of a match under all its identities, as the backends receive it (see
/// [`ClaimStore::claim_match`] for the contract).
#[derive(Debug, Clone)]
pub(crate) struct IdentityClaim {
    /// Where our record goes: `<prefix>match:<key>`.
    pub record_key: StoreKey,
    /// Our record.
    pub record: String,
    /// The key our identity pointers name (the record key without `<prefix>match:`).
    pub canonical: String,
    /// Where a claim may already be, in order; the first is `record_key`.
    pub lookups: Vec<StoredLookup>,
    /// The pointer keys to write: each identity's `<prefix>id:<identity>`.
    pub pointers: Vec<StoreKey>,
    /// The pointer of our own key (`<prefix>id:key:<key>`): not written when we win, as our
    /// record under that key already answers for it (one pointer less to write and refresh);
    /// written when another claim holds the match, so the key leads to it.
    pub own_pointer: StoreKey,
    /// The key prefix, to turn a pointer's value into a record key.
    pub prefix: String,
    /// The first-start marker's key, when the claim requires it to exist.
    pub marker: Option<StoreKey>,
    /// Time to live of everything written, seconds.
    pub ttl_secs: u64,
}

/// A backend's answer to an [`IdentityClaim`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum IdentityReply {
    /// Our record and pointers were written.
    Won,
    /// Lookup `index` found a claim: its match key and record. Our pointers that were absent
    /// or named no live record now name it.
    Held {
        /// Which lookup found it.
        index: usize,
        /// The holder's match key, as stored (the record's key without `<prefix>match:`).
        key: String,
        /// The holder's record.
        record: String,
    },
    /// The marker was required and absent; nothing was written.
    NoMarker,
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
    /// A reconciliation asked the platform and did not settle it: the state is kept, and the
    /// record says when it was checked and what was found.
    Checked {
        /// What was found ("not among the 37 posts since …").
        found: String,
    },
}

impl Transition {
    fn apply(&self, mut claim: Claim, now: DateTime<Utc>) -> Claim {
        let updated_at = claim.updated_at;
        claim.updated_at = now;
        // A change recorded ends any repeat of the post (`claims reconcile` records what its
        // repeat came to): the next reconciliation may ask again at once.
        claim.replay = None;
        match self {
            Transition::Posted { tweet_id, detail } => {
                claim.state = ClaimState::Posted;
                claim.tweet_id = tweet_id.clone();
                claim.detail = detail.clone();
                // The post is on the platform now: its text only served to find it there
                // (`claims reconcile`). Dropped, so the record every later cycle reads of a
                // posted match is its size before the post (a held cycle reads them all).
                claim.text = None;
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
            Transition::Checked { found } => {
                // Checked is not a change of state: `updated_at` stays when the state last changed.
                claim.updated_at = updated_at;
                claim.checked_at = Some(now);
                claim.check = Some(found.clone());
            }
        }
        claim
    }
}

/// The post a claim's winner is about to send, recorded in the claim (see
/// [`ClaimStore::claim_match_to_post`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostIntent<'a> {
    /// The post's text, as rendered before the claim.
    pub text: &'a str,
    /// The sink's server-side dedupe key for it, when the sink has one.
    pub dedupe_key: Option<&'a str>,
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

/// The answer to [`ClaimStore::adopt_for_replay`].
#[derive(Debug)]
pub enum Adoption {
    /// Taken: this instance alone repeats the post, with this token.
    Adopted(ClaimToken),
    /// The record changed since it was read (its owner recorded it, or another reconciler
    /// took it): nothing was written. Holds the record as it is now.
    Changed(Claim),
    /// The claim expired or was released meanwhile.
    Gone,
    /// The value is not a record of this bot's (it has no token): it cannot be taken.
    NotARecord,
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

    fn owner(&self) -> &str {
        each!(self, s => s.owner())
    }

    fn key(&self, key: &MatchKey) -> StoreKey {
        StoreKey::claim(self.prefix(), key)
    }

    fn identity_key(&self, identity: &str) -> StoreKey {
        StoreKey::identity(self.prefix(), identity)
    }

    fn attempts_key(&self, key: &MatchKey) -> StoreKey {
        StoreKey::attempts(self.prefix(), key)
    }

    fn marker_key(&self) -> StoreKey {
        StoreKey::marker(self.prefix())
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
        self.claim_match_to_post(ids, title, None, ttl, gives_up_after, require_marker)
            .await
    }

    /// As [`ClaimStore::claim_match`], with the post the winner is about to send (`text`, as
    /// rendered before the claim) and the sink's dedupe key for it (Mastodon's
    /// `Idempotency-Key`, Bluesky's record key) stored in the record, at no extra round trip: what settles
    /// an `unknown` or stuck claim later (`claims reconcile`) is whether that post exists.
    ///
    /// # Errors
    /// As [`ClaimStore::claim_match`].
    pub async fn claim_match_to_post(
        &self,
        ids: &Identities,
        title: &str,
        post: Option<&PostIntent<'_>>,
        ttl: Duration,
        gives_up_after: Duration,
        require_marker: bool,
    ) -> Result<MatchClaim, ClaimError> {
        let mut record = Claim::with_deadline(self.owner(), title, &ids.ids, Utc::now(), Some(gives_up_after));
        record.text = post.map(|p| p.text.to_string());
        record.dedupe_key = post.and_then(|p| p.dedupe_key.map(str::to_string));
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
            prefix: self.prefix().to_string(),
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
                let key = MatchKey::parse(&key).ok_or_else(|| ClaimError::Protocol {
                    op: "claim",
                    detail: format!("the store answered a holder whose match key is not one: {key:?}"),
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

    /// The [`Holder`] of each of `keys` (`None`: no live claim), in one round trip (Redis: a
    /// pipeline of one `GETEX` per key, or one `MGET`). With `refresh`, each held key's TTL is set to
    /// `refresh` again, as a later sighting must do so a still-listed match never expires into a
    /// second announcement, and so is the TTL of each identity in `touch` (`cricbuzz:158062`,
    /// `key:…`: the identities of the matches looked up), where the identity is recorded, so an
    /// identity lives as long as its claim; without `refresh` nothing is written (dry run).
    ///
    /// Only the records that changed since the look-up `last` remembers are parsed (their
    /// fingerprints compared place by place: the same keys in the same order, as cycle after
    /// cycle looks them up), and `last` then remembers the records this one read, and only those. A record's text
    /// alone decides its holder, so a record read again unchanged (a match posted days ago,
    /// seen every cycle) gives the same holder without being parsed again. What `last`
    /// remembers never decides whether a match is held: the store's answer does.
    ///
    /// This is a read, not a claim: `None` only means "try [`ClaimStore::claim_match`]", whose
    /// atomic write alone decides. A cycle calls this once for every match it sees, so matches
    /// already claimed cost no round trip of their own.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is known about any key, and
    /// `last` is left as it was.
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
        let stored: Vec<StoreKey> = keys.iter().map(|k| self.key(k)).collect();
        let touched: Vec<StoreKey> = match refresh {
            Some(_) => touch.iter().map(|i| self.identity_key(i)).collect(),
            None => Vec::new(),
        };
        let refresh = refresh.map(ttl_secs);
        let raw: Vec<Option<Vec<u8>>> = match self {
            ClaimStore::Redis(s) => s.get_many(&stored, &touched, refresh).await?,
            ClaimStore::Embedded(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
            ClaimStore::Postgres(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
        };
        read_holders(raw, keys.len(), last)
    }

    /// Several look-ups at once, each as [`ClaimStore::holders_touching`] on its own store
    /// (one per channel: the same store under each channel's prefix). On Redis, when every
    /// look-up's store shares one connection, ONE round trip answers them all (one `MGET`
    /// when none refreshes); elsewhere they run one after another. Holders per look-up, in
    /// order.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is known about any key.
    pub async fn holders_across(reads: &mut [BatchRead<'_>]) -> Result<Vec<Vec<Option<Holder>>>, ClaimError> {
        let all_redis = reads.iter().all(|r| matches!(r.store, ClaimStore::Redis(_)));
        let raw = match reads.first().map(|r| r.store) {
            // The held cycle: no look-up refreshes, so ONE `MGET` of every key, each named
            // in the command without a `String` of its own.
            Some(ClaimStore::Redis(redis)) if all_redis && reads.iter().all(|r| r.refresh.is_none()) => {
                let names: Vec<Vec<RecordName<'_>>> = reads
                    .iter()
                    .map(|r| {
                        let prefix = r.store.prefix();
                        r.keys
                            .iter()
                            .map(|k| RecordName {
                                prefix,
                                key: k.as_str(),
                            })
                            .collect()
                    })
                    .collect();
                redis.mget_across(&names).await?
            }
            Some(ClaimStore::Redis(redis)) if all_redis => {
                let requests: Vec<(Vec<StoreKey>, Vec<StoreKey>, Option<u64>)> = reads
                    .iter()
                    .map(|r| {
                        let stored = r.keys.iter().map(|k| r.store.key(k)).collect();
                        let touched = match r.refresh {
                            Some(_) => r.touch.iter().map(|i| r.store.identity_key(i)).collect(),
                            None => Vec::new(),
                        };
                        (stored, touched, r.refresh.map(ttl_secs))
                    })
                    .collect();
                redis.get_many_across(&requests).await?
            }
            _ => {
                let mut out = Vec::with_capacity(reads.len());
                for r in reads.iter_mut() {
                    out.push(r.store.holders_touching(&r.keys, &r.touch, r.refresh, r.last).await?);
                }
                return Ok(out);
            }
        };
        reads
            .iter_mut()
            .zip(raw)
            .map(|(r, raw)| read_holders(raw, r.keys.len(), r.last))
            .collect()
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
        let swapped =
            each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
        Ok(swapped.checked(|_| new))
    }

    /// Deletes our claim, only while it still carries `token` (compare-and-delete), so the match
    /// may be claimed again.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        let swapped = each!(self, s => s.compare_and_delete(&self.key(&token.key), &token.claim.token).await)?;
        Ok(swapped.checked(|before| Claim::from_stored(&before)))
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
            let swapped =
                each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
            return Ok(match swapped.checked(|_| new) {
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

    /// Changes the claim on `key` as read in `read` (by `claims reconcile`, which does not own
    /// it), only while the record still carries `read`'s token: a record that changed since it
    /// was read (its owner recorded the post meanwhile) is left alone and returned.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn settle(&self, key: &MatchKey, read: &Claim, change: &Transition) -> Result<Checked, ClaimError> {
        if read.token.is_empty() {
            // Not a record of this bot's: nothing to compare, nothing to change.
            return Ok(Checked::NotOurs(read.clone()));
        }
        let new = change.apply(read.clone(), Utc::now());
        let swapped = each!(self, s => s.compare_and_set(&self.key(key), &read.token, &new.to_stored()).await)?;
        Ok(swapped.checked(|_| new))
    }

    /// Takes the claim on `key` as read in `read` for `claims reconcile` to repeat its post
    /// where the platform's own rule makes a second post impossible (Mastodon's
    /// `Idempotency-Key`, Bluesky's record key), by compare-and-set on `read`'s token: the
    /// record gets a new token and a [`Replay`] naming this instance until `lease` from now.
    /// Only one reconciler wins it, and until the lease ends no other one repeats the post:
    /// two repeats sent at once could both create it (Mastodon writes the key only once the
    /// status is saved, mastodon#21840, `../shared/docs/sinks.md`). The claim keeps its state;
    /// the winner records what the repeat came to with [`ClaimStore::settle`] on the returned
    /// token's record, which ends the lease. The claim's owner, if it is still at work, can no
    /// longer record its own outcome (its token is gone): only claims `unknown` or stuck are
    /// taken, whose owner has given up.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing was written.
    pub async fn adopt_for_replay(
        &self,
        key: &MatchKey,
        read: &Claim,
        lease: Duration,
    ) -> Result<Adoption, ClaimError> {
        if read.token.is_empty() {
            return Ok(Adoption::NotARecord);
        }
        let now = Utc::now();
        let mut new = read.clone();
        new.token = record::new_token();
        new.replay = Some(Replay {
            by: self.owner().to_string(),
            until: later_by(now, lease),
        });
        let swapped = each!(self, s => s.compare_and_set(&self.key(key), &read.token, &new.to_stored()).await)?;
        Ok(match swapped.checked(|_| new) {
            Checked::Applied(claim) => Adoption::Adopted(ClaimToken {
                key: key.clone(),
                claim,
            }),
            Checked::NotOurs(now) => Adoption::Changed(now),
            Checked::Gone => Adoption::Gone,
        })
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
        let swapped = each!(self, s => s.compare_and_delete(&self.key(key), &claim.token).await)?;
        each!(self, s => s.delete(&self.attempts_key(key)).await)?;
        Ok(match swapped.checked(|_| claim) {
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
/// What a store's compare-and-set or compare-and-delete on a record's token did. Every store
/// answers with one of these; Redis' scripts answer a status (1 applied, 0 not ours, -1 gone)
/// and the record as it was, which [`Swapped::from_script`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Swapped {
    /// The record carried the token and was replaced or deleted; here is what it was.
    Applied(String),
    /// The record carries another token (or is not ours to change); here it is, unchanged.
    NotOurs(String),
    /// No live record under the key.
    Gone,
}

impl Swapped {
    /// A compare-and-set script's reply (`lua/transition.lua`, `lua/release.lua`).
    ///
    /// # Errors
    /// [`ClaimError::Protocol`] for a status the scripts never answer.
    pub(super) fn from_script(op: &'static str, status: i64, record: String) -> Result<Swapped, ClaimError> {
        match status {
            1 => Ok(Swapped::Applied(record)),
            0 => Ok(Swapped::NotOurs(record)),
            -1 => Ok(Swapped::Gone),
            other => Err(ClaimError::Protocol {
                op,
                detail: format!("store answered status {other}"),
            }),
        }
    }

    /// As the caller sees it: when applied, the record `applied` makes of the one replaced.
    fn checked(self, applied: impl FnOnce(String) -> Claim) -> Checked {
        match self {
            Swapped::Applied(before) => Checked::Applied(applied(before)),
            Swapped::NotOurs(now) => Checked::NotOurs(Claim::from_stored(&now)),
            Swapped::Gone => Checked::Gone,
        }
    }
}

/// One look-up of a batch across channels (see [`ClaimStore::holders_across`]).
pub struct BatchRead<'a> {
    /// The store (a channel's) to read.
    pub store: &'a ClaimStore,
    /// The keys to read.
    pub keys: Vec<&'a MatchKey>,
    /// The identities whose TTL to refresh with them (only with `refresh`).
    pub touch: Vec<&'a str>,
    /// The TTL to set again on every held key, when due.
    pub refresh: Option<Duration>,
    /// The records this look-up read last time (see [`ClaimStore::holders_touching`]).
    pub last: &'a mut LastRecords,
}

/// The holders of one look-up's raw values (`expected` of them), reusing what `last` parsed:
/// a record whose fingerprint equals that of the one the last look-up read at the same place
/// gives the same holder without being parsed again (a record's text alone decides its holder;
/// nearly every record of a held cycle is unchanged). `last` then holds this look-up's
/// records' fingerprints alone: what the next one can reuse.
fn read_holders(
    raw: Vec<Option<Vec<u8>>>,
    expected: usize,
    last: &mut LastRecords,
) -> Result<Vec<Option<Holder>>, ClaimError> {
    if raw.len() != expected {
        return Err(ClaimError::Protocol {
            op: "peek",
            detail: format!("{} replies to {expected} reads", raw.len()),
        });
    }
    // Updated in place: the next look-up of a held cycle keeps nearly every entry as it is.
    last.0.resize_with(raw.len(), || None);
    let mut owners = Owners::default();
    let holders = raw
        .into_iter()
        .zip(last.0.iter_mut())
        .map(|(r, slot)| {
            let Some(r) = r else {
                *slot = None;
                return None;
            };
            let fingerprint = Fingerprint::of(&r);
            if !matches!(slot, Some(known) if known.fingerprint == fingerprint) {
                *slot = Some(Kept {
                    // A value that is not UTF-8 is no record of ours; read lossily, it gives
                    // (as any foreign value) an unreadable record, not an error for the batch.
                    holder: Holder::from_stored(&String::from_utf8_lossy(&r), &mut owners),
                    fingerprint,
                });
            }
            slot.as_ref().map(|known| known.holder.clone())
        })
        .collect();
    Ok(holders)
}

/// `ttl` in whole seconds, at least 1 (Redis refuses `EX 0`).
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_posted_record_drops_the_post_text_and_an_unknown_one_keeps_it() {
        let mut claim = Claim::with_deadline("host:1", "A v B", &[], Utc::now(), None);
        claim.text = Some("Coming up: A v B https://example.com/1".into());
        claim.dedupe_key = Some("k".into());
        let unknown = Transition::Unknown { reason: "504".into() }.apply(claim.clone(), Utc::now());
        assert_eq!(unknown.text, claim.text, "reconcile still needs it");
        let posted = Transition::Posted {
            tweet_id: Some("42".into()),
            detail: None,
        }
        .apply(unknown, Utc::now());
        assert_eq!(
            (
                posted.state,
                posted.text,
                posted.tweet_id.as_deref(),
                posted.dedupe_key.as_deref()
            ),
            (ClaimState::Posted, None, Some("42"), Some("k"))
        );
    }

    #[test]
    fn a_record_changed_in_place_to_one_of_the_same_length_is_read_again() {
        let mut claim = Claim::with_deadline("host:1", "A v B", &["cricbuzz:1".into()], Utc::now(), None);
        claim.state = ClaimState::Posted;
        let posted = claim.to_stored();
        claim.state = ClaimState::Failed;
        let failed = claim.to_stored();
        assert_eq!(posted.len(), failed.len(), "the change this test is about");
        let mut last = LastRecords::default();
        let read = |raw: &str, last: &mut LastRecords| {
            read_holders(vec![Some(raw.as_bytes().to_vec()), None], 2, last).unwrap()
        };
        let first = read(&posted, &mut last);
        assert_eq!(first[0].as_ref().map(|h| h.state), Some(ClaimState::Posted));
        // Unchanged: the holder the last look-up parsed.
        assert_eq!(read(&posted, &mut last), first);
        let again = read(&failed, &mut last);
        assert_eq!(again[0].as_ref().map(|h| h.state), Some(ClaimState::Failed));
        assert_eq!(again[1], None);
        assert_eq!(last.len(), 1);
    }

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
        let ok = Claim::with_deadline("host:1", "A v B", &["cricbuzz:1".to_string()], Utc::now(), None).to_stored();
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
            // Every optional field is type-checked in both readings.
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","text":1"#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","dedupe_key":[]"#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","checked_at":"soon""#),
            ok.replace(r#""state":"claimed""#, r#""state":"claimed","check":false"#),
            ok.replace(
                r#""state":"claimed""#,
                r#""state":"claimed","replay":{"by":"x","until":"soon"}"#,
            ),
            ok.replace(
                r#""state":"claimed""#,
                r#""state":"claimed","replay":{"until":"2026-12-01T00:00:00Z"}"#,
            ),
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
        let old = Claim::with_deadline("old:1", "A v B", &[], at, None);
        assert_eq!(old.deadline, None);
        assert!(old.is_stuck(later(46), reader));
        assert_eq!(old.stuck_at(reader), later(45));
    }

    #[test]
    fn a_record_round_trips_and_keeps_its_token_out_of_debug() {
        let c = Claim::with_deadline("host:1", "A v B", &["cricbuzz:1".to_string()], Utc::now(), None);
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
