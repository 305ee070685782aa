//! The cycle's batch look-up of holders: one store round trip for every sighting, reading each
//! claim under the key it was last found under, and refreshing TTLs only when due.

use super::Announcer;
use crate::claim::{BatchRead, ClaimError, ClaimStore, Holder, LastRecords};
use crate::cricket::{Identity, MatchKey, Sighting};
use std::time::Duration;

/// How many times per claim TTL a process refreshes the TTLs of the matches it keeps seeing.
/// A refresh leaves a claim its full TTL, so refreshing every TTL/8 keeps at least 7/8 of it
/// (21 h of the minimum 24 h) on every listed match, while the cycles in between only read.
pub const REFRESHES_PER_TTL: u32 = 8;

/// When this process last refreshed the TTLs of the matches it looks up, and which matches
/// that refresh covered.
#[derive(Debug, Default)]
pub(super) struct Refreshes {
    // tokio's clock, so that tests can advance it instead of waiting a share of a TTL.
    last: Option<tokio::time::Instant>,
    /// The keys that refresh covered, in the order it read them.
    covered: Vec<MatchKey>,
}

impl Refreshes {
    /// True when a look-up of `keys` must refresh: never refreshed yet, the last refresh is
    /// `every` old, or a key is one the last refresh did not cover.
    pub(super) fn due(&self, keys: &[&MatchKey], every: Duration) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= every) || !self.covers(keys)
    }

    /// True when the last refresh covered every one of `keys`.
    fn covers(&self, keys: &[&MatchKey]) -> bool {
        // Cycle after cycle looks up the same keys in the same order: compared in place, with
        // no hashing, unless the listing changed.
        if keys.len() <= self.covered.len() && keys.iter().zip(&self.covered).all(|(k, c)| *k == c) {
            return true;
        }
        let covered: foldhash::HashSet<&MatchKey> = self.covered.iter().collect();
        keys.iter().all(|k| covered.contains(*k))
    }
}

impl Announcer {
    /// The current holder of each sighting's claim, in one store round trip. Each is read under
    /// the key its claim was found under when this process last met one of its source ids under
    /// another key (the listing changed since the claim), else the key the sighting derives; a
    /// miss still goes through the claim step, which tries every identity. Forgets what it
    /// learned of source ids no longer listed.
    ///
    /// Live, the look-up also gives every held claim the policy's full TTL again (what a later
    /// sighting owes a still-listed match, so it never expires into a second announcement), and
    /// every identity of the sightings with it, but only when due: on this process's first
    /// look-up, when a key is one the last refresh did not cover, and otherwise once per TTL /
    /// [`REFRESHES_PER_TTL`]. The look-ups in between only read (Redis: one `MGET` instead of
    /// a `GETEX` per match). In dry run nothing is written.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn holders_of(&self, sightings: &[&Sighting]) -> Result<Vec<Option<Holder>>, ClaimError> {
        let mut found = holders_of_all(&[(self, sightings)]).await?;
        Ok(found.pop().unwrap_or_default())
    }

    /// The key each sighting's claim is read under: the one learned from the claim step when
    /// the listing changed since its claim, else the sighting's own. Forgets what it learned of
    /// source ids no longer listed.
    fn hinted(&self, sightings: &[&Sighting]) -> Vec<Option<MatchKey>> {
        let mut hints = self.hints.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if hints.is_empty() {
            return Vec::new();
        }
        let listed: foldhash::HashSet<&str> = sightings
            .iter()
            .flat_map(|s| s.source_identities())
            .map(Identity::as_str)
            .collect();
        hints.retain(|id, _| listed.contains(id.as_str()));
        sightings
            .iter()
            .map(|s| s.source_identities().find_map(|id| hints.get(id.as_str())).cloned())
            .collect()
    }

    /// Whether this look-up of `keys` must refresh TTLs (see [`Announcer::holders_of`]): the TTL
    /// to set again, or `None` (dry run, or not due).
    fn refresh_due(&self, keys: &[&MatchKey]) -> Option<Duration> {
        if self.is_dry_run() {
            return None;
        }
        let every = self.policy.ttl / REFRESHES_PER_TTL;
        // A poisoned lock only means another task panicked mid-update: refreshing is then the
        // safe answer, and the log is rebuilt after.
        self.refreshes
            .lock()
            .map_or(true, |r| r.due(keys, every))
            .then_some(self.policy.ttl)
    }

    /// Records a refresh of `keys` that started at `started`.
    fn refreshed(&self, keys: &[&MatchKey], started: tokio::time::Instant) {
        let mut log = self.refreshes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *log = Refreshes {
            last: Some(started),
            covered: keys.iter().map(|k| (*k).clone()).collect(),
        };
    }
}

/// The holders of several channels' sightings in ONE store round trip (see
/// [`ClaimStore::holders_across`]): for each `(announcer, sightings)`, what
/// [`Announcer::holders_of`] answers. A cycle on many channels costs one batch read, not one
/// per channel.
///
/// # Errors
/// [`ClaimError`] when the store cannot answer; every refresh is then still due.
pub async fn holders_of_all(lookups: &[(&Announcer, &[&Sighting])]) -> Result<Vec<Vec<Option<Holder>>>, ClaimError> {
    let hinted: Vec<Vec<Option<MatchKey>>> = lookups.iter().map(|(a, s)| a.hinted(s)).collect();
    let refs: Vec<Vec<&MatchKey>> = lookups
        .iter()
        .zip(&hinted)
        .map(|((_, sightings), hinted)| {
            sightings
                .iter()
                .enumerate()
                .map(|(i, s)| hinted.get(i).and_then(Option::as_ref).unwrap_or(&s.ids.key))
                .collect()
        })
        .collect();
    let refresh: Vec<Option<Duration>> = lookups.iter().zip(&refs).map(|((a, _), r)| a.refresh_due(r)).collect();
    let started = tokio::time::Instant::now();
    // Taken out for the await (a std lock is not held across it), put back after; a look-up
    // running meanwhile starts from nothing, which only costs it the parsing.
    let mut lasts: Vec<LastRecords> = lookups
        .iter()
        .map(|(a, _)| std::mem::take(&mut *a.last_records.lock().unwrap_or_else(std::sync::PoisonError::into_inner)))
        .collect();
    let found = {
        let mut reads: Vec<BatchRead<'_>> = lookups
            .iter()
            .zip(&refs)
            .zip(&refresh)
            .zip(lasts.iter_mut())
            .map(|((((announcer, sightings), keys), refresh), last)| BatchRead {
                store: announcer.store(),
                keys: keys.clone(),
                // Each sighting's source ids, and its own key's identity where the claim is
                // stored under another key (a claim under the sighting's key answers for it).
                touch: match refresh {
                    Some(_) => touched(sightings, keys),
                    None => Vec::new(),
                },
                refresh: *refresh,
                last,
            })
            .collect();
        ClaimStore::holders_across(&mut reads).await
    };
    for ((announcer, _), last) in lookups.iter().zip(lasts) {
        *announcer
            .last_records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = last;
    }
    let found = found?;
    for (((announcer, _), keys), refresh) in lookups.iter().zip(&refs).zip(&refresh) {
        if refresh.is_some() {
            announcer.refreshed(keys, started);
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
        })
        .collect()
}
