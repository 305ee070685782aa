//! The claim rule (`rule.rs`) as the SQL stores run it inside their one transaction: a
//! decision ([`decide`]) over the values the transaction reads, answering what to write and
//! what to reply. SQLite reads as it decides (every value is one statement away in its
//! `BEGIN IMMEDIATE` transaction); PostgreSQL decides over what it has read so far and, when a
//! value is missing, reads it and decides again, all under its advisory lock. Redis runs the
//! same rule in its script (`lua/claim_match.lua`).

use super::key::StoreKey;
use super::request::{entries, list_text, Found, IdentityClaim, StoredLookup};
use crate::cricket::Facts;
use std::collections::{HashMap, HashSet};

/// What a decision reads: the live value at a key (a record, a pointer, a fixture's list, the
/// marker), or `Err` when it cannot (a store error, or for PostgreSQL a value not read yet).
pub(crate) trait Reads {
    /// Why a value cannot be given.
    type Error;
    /// The live value at `key`, `None` when there is none.
    ///
    /// # Errors
    /// `Self::Error` when the value cannot be given.
    fn value(&mut self, key: &StoreKey) -> Result<Option<String>, Self::Error>;
}

/// The values read so far, for a reader that cannot read in the middle of a decision
/// (PostgreSQL's async transaction, a dry run's reads): a value not read yet is [`NotRead`],
/// which the caller reads, [`ReadSoFar::insert`]s, and decides again.
#[derive(Debug, Default)]
pub(crate) struct ReadSoFar(HashMap<StoreKey, Option<String>>);

/// A value a decision needs that has not been read yet.
#[derive(Debug)]
pub(crate) struct NotRead(pub StoreKey);

impl ReadSoFar {
    /// Remembers the value read at `key`.
    pub(crate) fn insert(&mut self, key: StoreKey, value: Option<String>) {
        self.0.insert(key, value);
    }
}

impl Reads for ReadSoFar {
    type Error = NotRead;

    fn value(&mut self, key: &StoreKey) -> Result<Option<String>, NotRead> {
        self.0.get(key).cloned().ok_or_else(|| NotRead(key.clone()))
    }
}

/// One value to write, with the claim's TTL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Write {
    /// Where.
    pub key: StoreKey,
    /// What.
    pub value: String,
}

/// What the claim comes to, and what to write for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The marker was required and absent: write nothing.
    NoMarker,
    /// A claim holds the match: write `writes` (pointers, the fixture's list).
    Held(Found, Vec<Write>),
    /// Won: write our record under `record`, then `writes` (pointers, the fixture's list).
    Won {
        /// Where our record goes: our key, or the one beside it.
        record: StoreKey,
        /// What else to write.
        writes: Vec<Write>,
    },
}

/// Decides the claim `c` over the values `r` gives, by the rule in `rule.rs`, step for step.
///
/// # Errors
/// The reader's, when a value cannot be given (nothing has been written).
pub(crate) fn decide<R: Reads>(c: &IdentityClaim, r: &mut R) -> Result<Decision, R::Error> {
    if let Some(marker) = &c.marker {
        if r.value(marker)?.is_none() {
            return Ok(Decision::NoMarker);
        }
    }
    let mut rivals = HashSet::new();
    for rival in &c.rivals {
        if let Some(named) = r.value(rival)? {
            rivals.insert(named);
        }
    }
    for (index, lookup) in c.lookups.iter().enumerate() {
        // (a record's key, the facts listed with it when given)
        let found: Vec<(String, Option<String>)> = match lookup {
            StoredLookup::Record { key, .. } => key.match_key().map(|m| (m.to_string(), None)).into_iter().collect(),
            StoredLookup::Pointer { key, .. } => r.value(key)?.map(|m| (m, None)).into_iter().collect(),
            StoredLookup::Fixture(key) => r
                .value(key)?
                .map(|list| {
                    entries(&list)
                        .map(|(k, f)| (k.to_string(), Some(f.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
        };
        for (holder, listed) in found {
            let Some(record) = r.value(&c.record_key_of(&holder))? else {
                continue;
            };
            let mut agreed = None;
            if lookup.is_compared() {
                if rivals.contains(&holder) {
                    continue;
                }
                // Found through a key: the facts its own fixture lists for it, if any (a
                // claim of an earlier release has none, and holds).
                let listed = match listed {
                    Some(f) => Some(f),
                    None if c.facts.is_some() => listed_for(c, r, &holder)?,
                    None => None,
                };
                if let Some(f) = listed {
                    if !c.agrees(&f) {
                        continue;
                    }
                    agreed = c.facts.is_some().then_some(f);
                }
            }
            let writes = held_writes(c, r, &holder)?;
            let found = Found {
                index,
                key: holder,
                record,
                facts: agreed,
            };
            return Ok(Decision::Held(found, writes));
        }
    }
    let ours = c.match_key();
    let (record, stored_under) = match r.value(&c.record.key)? {
        None => (c.record.key.clone(), ours.to_string()),
        Some(other) => match &c.beside {
            Some(beside) => (beside.clone(), beside.match_key().unwrap_or_default().to_string()),
            // No key beside ours: the record under our key holds the match.
            None => {
                let writes = held_writes(c, r, ours)?;
                let found = Found {
                    index: 0,
                    key: ours.to_string(),
                    record: other,
                    facts: None,
                };
                return Ok(Decision::Held(found, writes));
            }
        },
    };
    let mut writes = Vec::new();
    if let (Some(list), Some(facts)) = (&c.fixture, &c.facts) {
        let current = r.value(list)?.unwrap_or_default();
        writes.push(Write {
            key: list.clone(),
            value: relisted(c, r, &current, &stored_under, facts)?,
        });
    }
    // Our own key's pointer is not needed when our record is stored under that key.
    for p in c.pointers.iter().filter(|p| !p.own || stored_under != ours) {
        if points_nowhere(c, r, &p.key)? {
            writes.push(Write {
                key: p.key.clone(),
                value: stored_under.clone(),
            });
        }
    }
    Ok(Decision::Won { record, writes })
}

/// What step 2 writes once `holder` holds the match: each pointer that is absent or names a
/// record that no longer lives (but our own key's, when the holder is stored under our key),
/// and the fixture's list with our facts merged into the holder's entry, when that changes it.
fn held_writes<R: Reads>(c: &IdentityClaim, r: &mut R, holder: &str) -> Result<Vec<Write>, R::Error> {
    let mut writes = Vec::new();
    for p in c.pointers.iter().filter(|p| !p.own || holder != c.match_key()) {
        let free = match r.value(&p.key)? {
            None => true,
            Some(cur) => cur != holder && r.value(&c.record_key_of(&cur))?.is_none(),
        };
        if free {
            writes.push(Write {
                key: p.key.clone(),
                value: holder.to_string(),
            });
        }
    }
    if let (Some(list), Some(facts)) = (&c.fixture, &c.facts) {
        let current = r.value(list)?.unwrap_or_default();
        let relisted = relisted(c, r, &current, holder, facts)?;
        if relisted != current {
            writes.push(Write {
                key: list.clone(),
                value: relisted,
            });
        }
    }
    Ok(writes)
}

/// The fixture's list `current` without the entries whose record no longer lives, listing
/// `key` with `facts`: merged into its entry when it has one ([`Facts::stored_merged`]), else
/// last.
fn relisted<R: Reads>(c: &IdentityClaim, r: &mut R, current: &str, key: &str, facts: &str) -> Result<String, R::Error> {
    let mut kept: Vec<(&str, String)> = Vec::new();
    for (k, f) in entries(current) {
        if r.value(&c.record_key_of(k))?.is_some() {
            kept.push((k, f.to_string()));
        }
    }
    match kept.iter_mut().find(|(k, _)| *k == key) {
        Some((_, listed)) => *listed = Facts::stored_merged(listed, facts),
        None => kept.push((key, facts.to_string())),
    }
    Ok(list_text(kept.iter().map(|(k, f)| (*k, f.as_str()))))
}

/// The facts listed for the claim under `key` on its own fixture (none for a key without a
/// date, or a claim no list names).
fn listed_for<R: Reads>(c: &IdentityClaim, r: &mut R, key: &str) -> Result<Option<String>, R::Error> {
    let Some(list) = c.fixture_list_of(key) else {
        return Ok(None);
    };
    Ok(r.value(&list)?
        .and_then(|text| entries(&text).find(|(k, _)| *k == key).map(|(_, f)| f.to_string())))
}

/// True when the pointer at `key` is absent or names a record that no longer lives.
fn points_nowhere<R: Reads>(c: &IdentityClaim, r: &mut R, key: &StoreKey) -> Result<bool, R::Error> {
    Ok(match r.value(key)? {
        None => true,
        Some(cur) => r.value(&c.record_key_of(&cur))?.is_none(),
    })
}
