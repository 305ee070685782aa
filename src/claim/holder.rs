//! The fast reading of who holds a claim: a cycle's batch look-up reads each held record into a
//! [`Holder`] (owner, since, state, deadline, identities), sharing owner names, and skips records
//! unchanged since the last cycle ([`LastRecords`]).

use super::record::{age, display_state, is_stuck, known_time, opt_rfc3339, rfc3339, Claim, ClaimState, ShownState};
use crate::cricket::Identity;
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
        if raw.len() > super::record::MAX_RECORD_BYTES {
            return Holder::from(&Claim::from_stored(raw));
        }
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
    pub fn covers(&self, ids: &[Identity]) -> bool {
        known_time(self.claimed_at).is_none() || ids.iter().all(|i| self.identities.iter().any(|h| **h == *i.as_str()))
    }

    /// As [`Claim::is_stuck`]: `claimed` and past the owner's deadline (or, without one,
    /// older than `stuck_after`).
    pub fn is_stuck(&self, now: DateTime<Utc>, stuck_after: Duration) -> bool {
        is_stuck(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// As [`Claim::display_state`]: the stored state, or `stuck`.
    pub fn display_state(&self, now: DateTime<Utc>, stuck_after: Duration) -> ShownState {
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
    #[serde(default, rename = "post_id", alias = "tweet_id")]
    _post_id: Option<AnyString>,
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
    #[serde(default, rename = "post_cid")]
    _post_cid: Option<AnyString>,
    #[serde(default, rename = "reply_to")]
    _reply_to: Option<super::record::ReplyTo>,
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

#[cfg(test)]
mod tests {
    use super::super::record::{known_time, Claim, ClaimState, ShownState};
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
        assert_eq!(
            owner.display_state(later(60), reader),
            ShownState::Stored(ClaimState::Claimed)
        );
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
}

/// The record readers against anything a store can hold: never a panic, and a record that is
/// not the bot's reads as held (`unknown`), never as free.
#[cfg(test)]
mod stored_fuzz {
    use super::super::record::{Claim, ClaimState};
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
