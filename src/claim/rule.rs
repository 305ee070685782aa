//! The claim rule, stated once, and the same rule as a small reference model
//! ([`ReferenceStore`]) that the contract suite (`tests/it/rule.rs`) runs beside every store,
//! comparing what each answers and leaves behind. Each store implements the rule in its own
//! terms: Redis in one Lua script (`lua/claim_match.lua`), SQLite in one `BEGIN IMMEDIATE`
//! transaction (`embedded.rs`), PostgreSQL in one transaction under an advisory lock per key
//! prefix (`postgres.rs`); what they receive and answer is `request.rs`'s.
//!
//! # The rule
//! A store holds claim records (one per match key: owner, token, state, and the identities
//! the claim recorded), identity pointers (an [`Identity`] → the key of the claim that
//! recorded it) and the first-start marker. Each lives for its TTL; a released record is gone.
//!
//! Claiming a match, whose [`Identities`] a sighting gives, is ONE atomic step whose answer
//! says who won:
//! 1. **Marker.** When the claim requires it, the marker must exist; else the answer is
//!    "no marker" and nothing is written (a store wiped since the cycle began never looks
//!    free).
//! 2. **Held.** The look-ups ([`Identities::lookups`]) are tried in order: a key finds the
//!    record stored under it; an identity finds the record its pointer names, if that record
//!    lives. The first found holds the match, whatever the sighting's start time, names or
//!    description say now: the answer is "held", with that record's key and the identity that
//!    found it. Each of the sighting's identities whose pointer is absent, or names a record
//!    that no longer lives, then points at the holder (except the sighting's own key's
//!    identity when the holder is stored under that very key); and the holder's record lists
//!    the identities it lacked, only while it is still the record read (compare-and-swap: a
//!    holder recording its post at that moment is never overwritten).
//! 3. **Won.** Otherwise our record (`claimed`, a new token, every identity of the sighting)
//!    is written under the sighting's key, and each identity's pointer names that key, except
//!    the key's own identity (the record under the key answers for it). The answer is "won",
//!    with the token: only its holder may post.
//!
//! Never check-then-set: N concurrent sightings all read "absent" before any write lands; only
//! the one atomic step decides. Two processes seeing two versions of one listing at once make
//! one claim: the versions share a source id, and step 2 of the later one finds the first.
//!
//! # The rest of the contract
//! - Every record has a TTL. A later sighting refreshes it, and its identities' pointers,
//!   without changing the record, so a still-listed match never expires into a second
//!   announcement.
//! - A change of state, and a release, act only while the record still carries the caller's
//!   token (compare-and-set, compare-and-delete), answering applied, not ours (the claim
//!   expired and was re-taken by another) or gone: a worker never overwrites or deletes
//!   another's claim. The winner's change writes the record as the winner holds it (as won,
//!   changed): identities other sightings recorded in it since are dropped from the record,
//!   while their pointers still lead to it, and the next sighting records them again.
//! - A failure that proves nothing was posted releases the claim and counts the attempt;
//!   after the limit the record says `failed`.
//! - The first-start marker says the store was initialised; its disappearance means the
//!   store lost its data, and posting stops until an operator re-seeds.
//! - A value at a record key that is not a record of this bot's reads as held, never as
//!   free; a store error is an error, never "held" and never "free".

use super::record::ClaimState;
use crate::cricket::{Identities, Identity, Lookup, MatchKey};
use std::collections::BTreeMap;

/// The rule as a store in memory, written from the rule alone (no code shared with the
/// stores): what every store must answer, step for step. Nothing expires in it (the suite
/// runs it with TTLs longer than a test), and every step is atomic by construction.
#[derive(Debug, Clone, Default)]
pub struct ReferenceStore {
    records: BTreeMap<MatchKey, ReferenceRecord>,
    pointers: BTreeMap<Identity, MatchKey>,
    marker: bool,
    /// The identities of each claim as it was won, by token: what its winner's changes write.
    won: BTreeMap<u64, Vec<Identity>>,
}

/// A claim record as the model keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceRecord {
    /// The instance that won it.
    pub owner: String,
    /// Its token: the model numbers them 1, 2, … in the order claims are won.
    pub token: u64,
    /// Its state.
    pub state: ClaimState,
    /// The identities it recorded, in the order recorded.
    pub identities: Vec<Identity>,
}

/// The model's answer to a claim (the stores': `MatchClaim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceClaim {
    /// Won, with the new record's token.
    Won {
        /// The token.
        token: u64,
    },
    /// Held by the record under `key`, found through `via`.
    Held {
        /// The holder's key.
        key: MatchKey,
        /// The identity that found it.
        via: Identity,
    },
    /// The marker was required and absent.
    NoMarker,
}

/// The model's answer to a change checked on a token (the stores': `Checked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceChange {
    /// The record carried the token: changed (or deleted).
    Applied,
    /// The record carries another token: unchanged.
    NotOurs,
    /// No record under the key.
    Gone,
}

impl ReferenceStore {
    /// Claims the match `ids` describes for `owner`, by the rule's three steps.
    pub fn claim_match(&mut self, owner: &str, ids: &Identities, require_marker: bool) -> ReferenceClaim {
        if require_marker && !self.marker {
            return ReferenceClaim::NoMarker;
        }
        for lookup in ids.lookups() {
            let found = match &lookup {
                Lookup::Key(k) => self.records.contains_key(k).then(|| k.clone()),
                Lookup::Id(i) => self.pointers.get(i).filter(|k| self.records.contains_key(*k)).cloned(),
            };
            let Some(holder) = found else { continue };
            for i in &ids.ids {
                if i.is_key_of(&ids.key) && holder == ids.key {
                    continue;
                }
                let free = match self.pointers.get(i) {
                    None => true,
                    Some(named) => *named != holder && !self.records.contains_key(named),
                };
                if free {
                    self.pointers.insert(i.clone(), holder.clone());
                }
            }
            if let Some(record) = self.records.get_mut(&holder) {
                for i in &ids.ids {
                    if !record.identities.contains(i) {
                        record.identities.push(i.clone());
                    }
                }
            }
            return ReferenceClaim::Held {
                key: holder,
                via: lookup.via(),
            };
        }
        let token = self.won.len() as u64 + 1;
        self.won.insert(token, ids.ids.clone());
        self.records.insert(
            ids.key.clone(),
            ReferenceRecord {
                owner: owner.to_string(),
                token,
                state: ClaimState::Claimed,
                identities: ids.ids.clone(),
            },
        );
        for i in ids.ids.iter().filter(|i| !i.is_key_of(&ids.key)) {
            self.pointers.insert(i.clone(), ids.key.clone());
        }
        ReferenceClaim::Won { token }
    }

    /// Deletes the record under `key` while it carries `token` (compare-and-delete). Its
    /// identities' pointers stay, naming a record that no longer lives.
    pub fn release(&mut self, key: &MatchKey, token: u64) -> ReferenceChange {
        let change = self.check(key, token);
        if change == ReferenceChange::Applied {
            self.records.remove(key);
        }
        change
    }

    /// Moves the record under `key` to `state` while it carries `token` (compare-and-set),
    /// written as its winner holds it: with the identities it was won with.
    pub fn transition(&mut self, key: &MatchKey, token: u64, state: ClaimState) -> ReferenceChange {
        let change = self.check(key, token);
        if let (ReferenceChange::Applied, Some(record)) = (change, self.records.get_mut(key)) {
            record.state = state;
            record.identities = self.won.get(&token).cloned().unwrap_or_default();
        }
        change
    }

    fn check(&self, key: &MatchKey, token: u64) -> ReferenceChange {
        match self.records.get(key) {
            None => ReferenceChange::Gone,
            Some(r) if r.token == token => ReferenceChange::Applied,
            Some(_) => ReferenceChange::NotOurs,
        }
    }

    /// Writes the first-start marker if there is none; true when this call wrote it.
    pub fn initialise(&mut self) -> bool {
        !std::mem::replace(&mut self.marker, true)
    }

    /// The record under `key`, if it lives.
    pub fn record(&self, key: &MatchKey) -> Option<&ReferenceRecord> {
        self.records.get(key)
    }

    /// The key of the live claim `identity` leads to: for a key identity, the record stored
    /// under that key first; then the record its pointer names, if that lives (as the stores'
    /// `ClaimStore::peek_identity` reads it).
    pub fn holder_of(&self, identity: &Identity) -> Option<&MatchKey> {
        if let Some((key, _)) = identity.key().and_then(|k| self.records.get_key_value(&k)) {
            return Some(key);
        }
        self.pointers.get(identity).filter(|k| self.records.contains_key(*k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> MatchKey {
        MatchKey::parse(s).unwrap()
    }

    fn ids(k: &str, sources: &[&str], other_keys: &[&str]) -> Identities {
        let key = key(k);
        let mut ids: Vec<Identity> = sources.iter().map(|s| Identity::parse(s).unwrap()).collect();
        ids.push(Identity::of_key(&key));
        Identities {
            key,
            ids,
            other_keys: other_keys.iter().map(|k| self::key(k)).collect(),
        }
    }

    #[test]
    fn a_listing_edited_since_its_claim_is_held_through_its_source_id_and_records_its_new_key() {
        let mut store = ReferenceStore::default();
        assert_eq!(
            store.claim_match("a", &ids("2026-07-17_a-v-b_1st", &["cricbuzz:1"], &[]), false),
            ReferenceClaim::Won { token: 1 }
        );
        let edited = ids("2026-07-17_a-v-b_1st-d-n", &["cricbuzz:1"], &[]);
        assert_eq!(
            store.claim_match("b", &edited, false),
            ReferenceClaim::Held {
                key: key("2026-07-17_a-v-b_1st"),
                via: Identity::parse("cricbuzz:1").unwrap(),
            }
        );
        // The new key now leads to the claim, and the record lists it.
        let new_key = Identity::of_key(&key("2026-07-17_a-v-b_1st-d-n"));
        assert_eq!(store.holder_of(&new_key), Some(&key("2026-07-17_a-v-b_1st")));
        assert!(store
            .record(&key("2026-07-17_a-v-b_1st"))
            .unwrap()
            .identities
            .contains(&new_key));
    }

    #[test]
    fn a_released_claims_pointers_are_taken_by_the_next_claim() {
        let mut store = ReferenceStore::default();
        let first = ids("2026-07-17_a-v-b_1st", &["cricbuzz:1"], &[]);
        let ReferenceClaim::Won { token } = store.claim_match("a", &first, false) else {
            panic!("won")
        };
        assert_eq!(store.release(&first.key, token + 1), ReferenceChange::NotOurs);
        assert_eq!(store.release(&first.key, token), ReferenceChange::Applied);
        assert_eq!(store.release(&first.key, token), ReferenceChange::Gone);
        let moved = ids("2026-07-18_a-v-b_1st", &["cricbuzz:1"], &[]);
        assert_eq!(store.claim_match("b", &moved, false), ReferenceClaim::Won { token: 2 });
        assert_eq!(
            store.holder_of(&Identity::parse("cricbuzz:1").unwrap()),
            Some(&moved.key)
        );
    }

    #[test]
    fn without_the_marker_a_claim_that_requires_it_writes_nothing() {
        let mut store = ReferenceStore::default();
        let m = ids("2026-07-17_a-v-b_1st", &["cricbuzz:1"], &[]);
        assert_eq!(store.claim_match("a", &m, true), ReferenceClaim::NoMarker);
        assert_eq!(store.record(&m.key), None);
        assert!(store.initialise());
        assert!(!store.initialise());
        assert_eq!(store.claim_match("a", &m, true), ReferenceClaim::Won { token: 1 });
    }
}
