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
//! recorded it), fixture lists (a fixture [`Identity`] → one entry per claim on that fixture:
//! its key and the facts its sightings stated, [`crate::cricket::Facts`]) and the first-start
//! marker. Each lives for its TTL; a released record is gone.
//!
//! Claiming a match, whose [`Identities`] a sighting gives, is ONE atomic step whose answer
//! says who won:
//! 1. **Marker.** When the claim requires it, the marker must exist; else the answer is
//!    "no marker" and nothing is written (a store wiped since the cycle began never looks
//!    free).
//! 2. **Held.** The look-ups ([`Identities::lookups`]) are tried in order: a key finds the
//!    record stored under it; an identity the record its pointer names, if that record lives;
//!    a fixture each record its list names, in the order listed, with the facts listed for
//!    it, if that record lives. A record found through one of the sighting's own source ids
//!    (or under the key beside its key, which its first source id names) holds the match at
//!    once, whatever the sighting's start time, names or description say now: within a site,
//!    its ids decide. A record found otherwise (a key, a key identity, a fixture) holds the
//!    match only when
//!    - no rival's pointer names it (a rival is another match the sighting's sites list at
//!      the same time: [`Identities::rivals`]), and
//!    - its facts agree with the sighting's ([`crate::cricket::Facts::conflict`]): the facts
//!      the fixture's list gives it (found through a key: its entry in its own fixture's
//!      list; none listed, as for a claim of an earlier release, agrees), or the sighting
//!      states none (it has no start).
//!
//!    The first record that holds the match answers "held", with its key, the identity that
//!    found it and the facts that agreed (when compared). Each of the sighting's identities
//!    whose pointer is absent, or names a record that no longer lives, then points at the
//!    holder (except the sighting's own key's identity when the holder is stored under that
//!    very key); the sighting's fixture list drops the entries whose record no longer lives
//!    and lists the holder's key with the sighting's facts, merged into the facts it lists
//!    for that key already ([`crate::cricket::Facts::merged`]: a fact stated once stays), and
//!    is written when that changed it;
//!    and the holder's record lists the identities it lacked, only while it is still the
//!    record read (compare-and-swap: a holder recording its post at that moment is never
//!    overwritten).
//! 3. **Won.** Otherwise our record (`claimed`, a new token, every identity of the sighting)
//!    is written under the sighting's key or, when a record lives there (another match,
//!    passed over in step 2), under the key beside it ([`Identities::alternate`]; a sighting
//!    without a source id has none, and the record under its key then holds the match). Each
//!    identity's pointer that is absent, or names a record that no longer lives, names our
//!    key, except the identity of the key our record is stored under (the record answers for
//!    it); a pointer naming a live record is another match's, passed over, and left alone.
//!    The fixture's list drops the entries whose record no longer lives and lists our key
//!    with our facts. The answer is "won", with the token: only its holder may post.
//!
//! Never check-then-set: N concurrent sightings all read "absent" before any write lands; only
//! the one atomic step decides. Two processes seeing two versions of one listing at once make
//! one claim: the versions share a source id, and step 2 of the later one finds the first.
//!
//! # The rest of the contract
//! - Every record has a TTL. A later sighting refreshes it, and its identities' pointers
//!   (its fixture's list among them), without changing the record, so a still-listed match
//!   never expires into a second announcement.
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
use crate::cricket::{Facts, Identities, Identity, Lookup, MatchKey};
use std::collections::{BTreeMap, BTreeSet};

/// The rule as a store in memory, written from the rule alone (no code shared with the
/// stores but the comparison of facts, [`Facts::conflict`], which is the domain's): what every
/// store must answer, step for step. Nothing expires in it (the suite runs it with TTLs
/// longer than a test), and every step is atomic by construction.
#[derive(Debug, Clone, Default)]
pub struct ReferenceStore {
    records: BTreeMap<MatchKey, ReferenceRecord>,
    pointers: BTreeMap<Identity, MatchKey>,
    /// Each fixture's list: (a claim's key, the facts listed for it), in the order listed.
    fixtures: BTreeMap<Identity, Vec<(MatchKey, String)>>,
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
        /// The facts listed for the holder that agreed with the sighting's (when compared
        /// and listed), as stored.
        facts: Option<String>,
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
        let ours = ids.facts.map(|f| f.to_stored());
        // The keys the sighting's rivals lead to: other matches, never this one.
        let rivals: BTreeSet<&MatchKey> = ids.rivals.iter().filter_map(|r| self.pointers.get(r)).collect();
        for lookup in ids.lookups() {
            // (a live record, the facts listed for it when given).
            let found: Vec<(MatchKey, Option<String>)> = match &lookup {
                Lookup::Key(k) | Lookup::Beside(k, _) => vec![(k.clone(), None)],
                Lookup::Id(i) => self.pointers.get(i).map(|k| (k.clone(), None)).into_iter().collect(),
                Lookup::Fixture(f) => self
                    .fixtures
                    .get(f)
                    .map(|list| list.iter().map(|(k, facts)| (k.clone(), Some(facts.clone()))).collect())
                    .unwrap_or_default(),
            };
            for (holder, listed) in found {
                if !self.records.contains_key(&holder) {
                    continue;
                }
                let mut agreed = None;
                if lookup.is_compared() {
                    if rivals.contains(&holder) {
                        continue;
                    }
                    // Found through a key: the facts its own fixture lists for it, if any
                    // (a claim of an earlier release has none, and holds).
                    let listed = listed.or_else(|| self.listed_for(&holder));
                    if let (Some(ours), Some(listed)) = (&ours, listed) {
                        if !Facts::stored_agree(ours, &listed) {
                            continue;
                        }
                        agreed = Some(listed);
                    }
                }
                self.held_writes(ids, &holder, ours.as_deref());
                return ReferenceClaim::Held {
                    key: holder,
                    via: lookup.via(),
                    facts: agreed,
                };
            }
        }
        let key = if self.records.contains_key(&ids.key) {
            match ids.alternate() {
                Some(beside) => beside,
                // No key beside ours: the record under our key holds the match.
                None => {
                    let holder = ids.key.clone();
                    self.held_writes(ids, &holder, ours.as_deref());
                    return ReferenceClaim::Held {
                        key: holder,
                        via: Identity::of_key(&ids.key),
                        facts: None,
                    };
                }
            }
        } else {
            ids.key.clone()
        };
        let token = self.won.len() as u64 + 1;
        self.won.insert(token, ids.ids.clone());
        if let (Some(fixture), Some(facts)) = (ids.fixture(), &ours) {
            self.list(fixture, &key, facts);
        }
        self.records.insert(
            key.clone(),
            ReferenceRecord {
                owner: owner.to_string(),
                token,
                state: ClaimState::Claimed,
                identities: ids.ids.clone(),
            },
        );
        for i in ids.ids.iter().filter(|i| !i.is_fixture() && !i.is_key_of(&key)) {
            if self.points_nowhere(i) {
                self.pointers.insert(i.clone(), key.clone());
            }
        }
        ReferenceClaim::Won { token }
    }

    /// The writes of step 2 once `holder` holds the match `ids` describes (with the facts
    /// `ours`, as stored).
    fn held_writes(&mut self, ids: &Identities, holder: &MatchKey, ours: Option<&str>) {
        for i in ids.ids.iter().filter(|i| !i.is_fixture()) {
            if i.is_key_of(&ids.key) && *holder == ids.key {
                continue;
            }
            let free = match self.pointers.get(i) {
                None => true,
                Some(named) => named != holder && !self.records.contains_key(named),
            };
            if free {
                self.pointers.insert(i.clone(), holder.clone());
            }
        }
        if let (Some(fixture), Some(facts)) = (ids.fixture(), ours) {
            self.list(fixture, holder, facts);
        }
        if let Some(record) = self.records.get_mut(holder) {
            for i in &ids.ids {
                if !record.identities.contains(i) {
                    record.identities.push(i.clone());
                }
            }
        }
    }

    /// Lists `key` with `facts` on `fixture`: the entries whose record no longer lives are
    /// dropped; `key`'s entry, if listed, now states every fact it stated and `facts` adds
    /// ([`Facts::merged`]), else it is listed last.
    fn list(&mut self, fixture: &Identity, key: &MatchKey, facts: &str) {
        let records = &self.records;
        let list = self.fixtures.entry(fixture.clone()).or_default();
        list.retain(|(k, _)| records.contains_key(k));
        match list.iter_mut().find(|(k, _)| k == key) {
            Some((_, listed)) => *listed = Facts::stored_merged(listed, facts),
            None => list.push((key.clone(), facts.to_string())),
        }
    }

    /// The facts listed for the claim under `key` on its own fixture; `None` when none are.
    fn listed_for(&self, key: &MatchKey) -> Option<String> {
        let fixture = Identity::fixture_of(key)?;
        let list = self.fixtures.get(&fixture)?;
        list.iter().find(|(k, _)| k == key).map(|(_, f)| f.clone())
    }

    /// True when `identity` has no pointer, or one naming a record that no longer lives.
    fn points_nowhere(&self, identity: &Identity) -> bool {
        self.pointers
            .get(identity)
            .is_none_or(|k| !self.records.contains_key(k))
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

    /// The key of the live record that carries `token` (where a won claim was stored: its key,
    /// or the key beside it).
    pub fn key_of(&self, token: u64) -> Option<&MatchKey> {
        self.records.iter().find(|(_, r)| r.token == token).map(|(k, _)| k)
    }

    /// The live entries of `fixture`'s list, in order: (key, facts as stored).
    pub fn fixture_entries(&self, fixture: &Identity) -> Vec<(MatchKey, String)> {
        self.fixtures
            .get(fixture)
            .map(|list| {
                list.iter()
                    .filter(|(k, _)| self.records.contains_key(k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
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
            facts: None,
            rivals: Vec::new(),
        }
    }

    /// A listing of A v B on 2026-07-17 from `source`, starting at `hour`:00 UTC and described
    /// as `desc` (its key's description slug `slug`).
    fn listed(source: &str, hour: u32, slug: &str, desc: &str) -> Identities {
        use crate::cricket::{Described, FormatClass, Start};
        use chrono::TimeZone;
        let key = key(&format!("2026-07-17_a-v-b_{slug}"));
        let ids = vec![
            Identity::parse(source).unwrap(),
            Identity::of_key(&key),
            Identity::fixture_of(&key).unwrap(),
        ];
        Identities {
            key,
            ids,
            other_keys: Vec::new(),
            facts: Some(Facts {
                start: chrono::Utc
                    .with_ymd_and_hms(2026, 7, 17, hour, 0, 0)
                    .single()
                    .map(Start::At),
                class: Some(FormatClass::Twenty),
                described: Described::read(desc),
            }),
            rivals: Vec::new(),
        }
    }

    #[test]
    fn another_sites_listing_is_held_through_the_fixture_when_its_facts_agree() {
        let mut store = ReferenceStore::default();
        let cricbuzz = listed("cricbuzz:87780", 14, "super-8-group-2", "Super 8 Group 2");
        assert_eq!(
            store.claim_match("a", &cricbuzz, false),
            ReferenceClaim::Won { token: 1 }
        );
        let espn = listed("espncricinfo:1", 14, "42nd-match", "42nd Match, Super Eights, Group 2");
        let fixture = Identity::parse("fixture:2026-07-17_a-v-b").unwrap();
        assert_eq!(
            store.claim_match("b", &espn, false),
            ReferenceClaim::Held {
                key: cricbuzz.key.clone(),
                via: fixture.clone(),
                facts: cricbuzz.facts.map(|f| f.to_stored()),
            }
        );
        // The fixture lists the claim once, with what both listings state: the number is
        // ESPNcricinfo's.
        assert_eq!(
            store.fixture_entries(&fixture),
            [(cricbuzz.key.clone(), "t=1784296800;f=t;n=42;r=8;g=2".to_string())]
        );
        // Another match of the fixture: its facts conflict, so it is won.
        let other = listed("espncricinfo:2", 14, "43rd-match", "43rd Match, Super Eights, Group 2");
        assert_eq!(store.claim_match("b", &other, false), ReferenceClaim::Won { token: 2 });
    }

    #[test]
    fn a_double_header_sharing_a_key_is_won_beside_it_and_a_rival_is_never_held() {
        let mut store = ReferenceStore::default();
        let early = listed("espncricinfo:1", 10, "t20i", "");
        let late = listed("espncricinfo:2", 14, "t20i", "");
        assert_eq!(store.claim_match("a", &early, false), ReferenceClaim::Won { token: 1 });
        assert_eq!(store.claim_match("a", &late, false), ReferenceClaim::Won { token: 2 });
        let beside = key("2026-07-17_a-v-b_t20i_espncricinfo-2");
        assert_eq!(store.record(&beside).map(|r| r.token), Some(2));
        // Same time, same words, another id of the site listed at the same time: a rival.
        let mut twin = listed("espncricinfo:3", 10, "t20i", "");
        twin.rivals = vec![Identity::parse("espncricinfo:1").unwrap()];
        assert_eq!(store.claim_match("a", &twin, false), ReferenceClaim::Won { token: 3 });
        // Without the rival listed, the same listing under a new id is the first match.
        let recreated = listed("espncricinfo:4", 10, "t20i", "");
        assert!(matches!(
            store.claim_match("a", &recreated, false),
            ReferenceClaim::Held { ref key, .. } if *key == early.key
        ));
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
                facts: None,
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
