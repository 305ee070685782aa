//! The cycle's batch look-up of holders: one store round trip for every sighting, reading each
//! claim under the key it was last found under, and refreshing TTLs only when due.

use super::memory::Refreshes;
use super::{Announcer, Memory};
use crate::claim::{BatchRead, ClaimError, ClaimStore, Holder};
use crate::cricket::{Identity, MatchKey, Sighting};
use std::time::Duration;

/// How many times per claim TTL a process refreshes the TTLs of the matches it keeps seeing.
/// A refresh leaves a claim its full TTL, so refreshing every TTL/8 keeps at least 7/8 of it
/// (21 h of the minimum 24 h) on every listed match, while the cycles in between only read.
pub const REFRESHES_PER_TTL: u32 = 8;

impl Announcer {
    /// The current holder of each sighting's claim, in one store round trip. Each is read under
    /// the key its claim was found under when this announcer (by `memory`) last met one of its
    /// source ids under another key (the listing changed since the claim), else the key the
    /// sighting derives; a miss still goes through the claim step, which tries every identity.
    /// Forgets what it learned of source ids no longer listed.
    ///
    /// Live, the look-up also gives every held claim the policy's full TTL again (what a later
    /// sighting owes a still-listed match, so it never expires into a second announcement), and
    /// every identity of the sightings with it, but only when due: on the first look-up with
    /// this `memory`, when a key is one the last refresh did not cover, and otherwise once per
    /// TTL / [`REFRESHES_PER_TTL`]. The look-ups in between only read (Redis: one `MGET` instead
    /// of a `GETEX` per match). In dry run nothing is written.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn holders_of(
        &self,
        memory: &mut Memory,
        sightings: &[&Sighting],
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        let mut found = holders_of_all(&mut [LookUp {
            announcer: self,
            memory,
            sightings,
        }])
        .await?;
        Ok(found.pop().unwrap_or_default())
    }

    /// Whether this look-up of `keys` must refresh TTLs (see [`Announcer::holders_of`]): the TTL
    /// to set again, or `None` (dry run, or not due).
    fn refresh_due(&self, refreshes: &Refreshes, keys: &[&MatchKey]) -> Option<Duration> {
        if self.is_dry_run() {
            return None;
        }
        let every = self.policy.ttl / REFRESHES_PER_TTL;
        refreshes.due(keys, every).then_some(self.policy.ttl)
    }
}

/// One announcer's part of a batch look-up ([`holders_of_all`]): the sightings it looks up, and
/// the memory it reads them with and then updates.
pub struct LookUp<'a> {
    /// Whose claims are read (a channel's).
    pub announcer: &'a Announcer,
    /// What that announcer remembers (see [`Memory`]).
    pub memory: &'a mut Memory,
    /// The sightings to look up, in order.
    pub sightings: &'a [&'a Sighting],
}

/// The key each sighting's claim is read under: the one `memory` learned from the claim step
/// when the listing changed since its claim, else the sighting's own. Forgets what it learned
/// of source ids no longer listed.
fn hinted(memory: &mut Memory, sightings: &[&Sighting]) -> Vec<Option<MatchKey>> {
    if memory.hints.is_empty() {
        return Vec::new();
    }
    // Every source id is looked up once, and the hits counted: when every hint was hit, every
    // hinted source id is still listed and nothing is forgotten, without a set of the listed
    // ids built each cycle (what a held cycle of claims found across sites paid for it).
    let mut hits = 0;
    let found = sightings
        .iter()
        .map(|s| {
            let mut first = None;
            for key in s.source_identities().filter_map(|id| memory.hints.get(id.as_str())) {
                hits += 1;
                first.get_or_insert(key);
            }
            first.cloned()
        })
        .collect();
    // A source id listed twice (by a caller other than the cycle, whose sightings list each
    // once) counts twice: then a hint no longer listed may be kept a cycle longer. A hint only
    // saves a round trip; it never decides whether a match is held.
    if hits < memory.hints.len() {
        let listed: foldhash::HashSet<&str> = sightings
            .iter()
            .flat_map(|s| s.source_identities())
            .map(Identity::as_str)
            .collect();
        memory.hints.retain(|id, _| listed.contains(id.as_str()));
    }
    found
}

/// The holders of several announcers' sightings (one per channel) in ONE store round trip
/// (see [`ClaimStore::holders_across`]): for each [`LookUp`], what [`Announcer::holders_of`]
/// answers. A cycle on many channels costs one batch read, not one per channel.
///
/// # Errors
/// [`ClaimError`] when the store cannot answer; every refresh is then still due, and each
/// memory's records are as they were.
pub async fn holders_of_all(lookups: &mut [LookUp<'_>]) -> Result<Vec<Vec<Option<Holder>>>, ClaimError> {
    let hinted: Vec<Vec<Option<MatchKey>>> = lookups.iter_mut().map(|l| hinted(l.memory, l.sightings)).collect();
    let refs: Vec<Vec<&MatchKey>> = lookups
        .iter()
        .zip(&hinted)
        .map(|(l, hinted)| {
            l.sightings
                .iter()
                .enumerate()
                .map(|(i, s)| hinted.get(i).and_then(Option::as_ref).unwrap_or(&s.ids.key))
                .collect()
        })
        .collect();
    let refresh: Vec<Option<Duration>> = lookups
        .iter()
        .zip(&refs)
        .map(|(l, r)| l.announcer.refresh_due(&l.memory.refreshes, r))
        .collect();
    let started = tokio::time::Instant::now();
    let found = {
        let mut reads: Vec<BatchRead<'_>> = lookups
            .iter_mut()
            .zip(&refs)
            .zip(&refresh)
            .map(|((l, keys), refresh)| BatchRead {
                store: l.announcer.store(),
                keys: keys.clone(),
                // Each sighting's source ids, its own key's identity where the claim is stored
                // under another key (a claim under the sighting's key answers for it), and
                // its fixture's list.
                touch: match refresh {
                    Some(_) => touched(l.sightings, keys),
                    None => Vec::new(),
                },
                refresh: *refresh,
                last: &mut l.memory.last_records,
            })
            .collect();
        ClaimStore::holders_across(&mut reads).await?
    };
    for ((l, keys), refresh) in lookups.iter_mut().zip(&refs).zip(&refresh) {
        if refresh.is_some() {
            l.memory.refreshes = Refreshes::done(started, keys);
        }
    }
    Ok(found)
}
/// The identities a refresh of `sightings` (read under `keys`) sets the TTL of again.
fn touched<'a>(sightings: &[&'a Sighting], keys: &[&MatchKey]) -> Vec<&'a Identity> {
    sightings
        .iter()
        .zip(keys)
        .flat_map(|(s, read)| {
            let own = (*read != &s.ids.key).then(|| s.ids.ids.iter());
            s.source_identities()
                .chain(own.into_iter().flatten().filter(|i| i.is_key()))
                // The fixture's list lives as long as a claim on it is seen.
                .chain(s.ids.fixture())
        })
        .collect()
}
