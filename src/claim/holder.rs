//! The fast reading of who holds a claim: a cycle's batch look-up reads each held record into a
//! [`Holder`] (owner, since, state, deadline, identities), sharing owner names, and skips records
//! unchanged since the last cycle ([`LastRecords`]).

use super::record::{age, display_state, is_stuck, known_time, opt_rfc3339, rfc3339, Claim, ClaimState};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Who holds a claim: what a skip needs to say (who, since when, in which state) and nothing
/// more. A cycle's batch look-up ([`ClaimStore::holders_touching`](super::ClaimStore::holders_touching)) reads each held record into one of
/// these rather than into a whole [`Claim`]: nearly every match a cycle sees is held, and the
/// rest of the record (title, aliases, token…) was most of a held cycle's work
/// (`docs/benchmarks.md`). The whole record is [`ClaimStore::peek`](super::ClaimStore::peek)'s.
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
    pub(super) fn from_stored(raw: &str, owners: &mut Owners) -> Holder {
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
    #[serde(default, rename = "text")]
    _text: Option<AnyString>,
    #[serde(default, rename = "dedupe_key")]
    _dedupe_key: Option<AnyString>,
    #[serde(default, rename = "checked_at", deserialize_with = "opt_rfc3339")]
    _checked_at: Option<DateTime<Utc>>,
    #[serde(default, rename = "check")]
    _check: Option<AnyString>,
    #[serde(default, rename = "replay")]
    _replay: Option<super::record::Replay>,
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
pub(super) struct Owners(pub(super) Vec<Arc<str>>);

/// Stored text as the bytes a batch look-up reads.
pub(super) fn text_as_bytes(values: Vec<Option<String>>) -> Vec<Option<Vec<u8>>> {
    values.into_iter().map(|v| v.map(String::into_bytes)).collect()
}

/// The records one batch look-up read, in the order of its keys, each as its fingerprint with
/// the holder it reads as (see [`ClaimStore::holders_touching`](super::ClaimStore::holders_touching)):
/// the next look-up of the same keys compares each record's fingerprint with the one read at the
/// same place and reuses its holder when they are equal. Holds a 16-byte fingerprint and a
/// holder a match, not the record's text (~260 bytes): a deployment with 20 channels keeps
/// 2,000 of these for as long as it runs (`docs/benchmarks.md`, issue 21's memory target).
#[derive(Debug, Default)]
pub struct LastRecords(pub(super) Vec<Option<Kept>>);

/// One record a look-up read, as its fingerprint, and the holder it reads as.
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) fingerprint: Fingerprint,
    pub(super) holder: Holder,
}

/// A record's fingerprint: its length and its 128-bit XXH3 hash
/// (<https://github.com/Cyan4973/xxHash>). Two different records share one only by a chance
/// of about 2^-128 per comparison: never, for the records one key holds over a deployment's
/// life. It only spares parsing a record again; what it tells never decides whether a match
/// is held (the store's answer does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fingerprint {
    len: usize,
    hash: u128,
}

impl Fingerprint {
    pub(super) fn of(record: &[u8]) -> Fingerprint {
        Fingerprint {
            len: record.len(),
            hash: xxhash_rust::xxh3::xxh3_128(record),
        }
    }
}

impl LastRecords {
    /// How many records are remembered.
    pub fn len(&self) -> usize {
        self.0.iter().flatten().count()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Owners {
    /// At most this many names are shared; a look-up meeting more allocates the others.
    pub(super) const SHARED: usize = 8;

    pub(super) fn get(&mut self, name: &str) -> Arc<str> {
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
