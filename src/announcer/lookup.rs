//! The cycle's batch look-up of holders: one store read for every sighting, reading each claim
//! under the key it was last found under, and setting again the TTLs of the keys due a refresh
//! (a slice spread over the TTL: [`REFRESHES_PER_TTL`]).

use super::memory::Refreshes;
use super::{Announcer, Memory};
use crate::claim::{BatchRead, ClaimError, ClaimStore, Holder};
use crate::cricket::{Identity, MatchKey, Sighting};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// How many times per claim TTL a process refreshes the TTL of each match it keeps seeing.
///
/// The guarantee: a held key that stays listed has its TTL set again (a) at the first look-up
/// that lists it (this memory's first look-up, or the first after one that did not list it),
/// and (b) then at the first look-up at or after each of its refresh instants, one every
/// TTL / 8, at an offset within that period that a hash of the key sets. So between two
/// refreshes of a listed key pass at most TTL / 8 plus the time between two look-ups (the poll
/// interval and a cycle's run), and a listed match keeps at least 7/8 of its TTL less that
/// time (21 h of the minimum 24 h, less a poll): it never expires into a second announcement.
///
/// The cost: a look-up `Δt` after the one before refreshes the keys whose instant fell in
/// between, about `N × Δt / (TTL / 8)` of `N` (at the default 10-day TTL and 300 s poll,
/// `N / 360` a cycle), plus the keys newly listed; a new match costs its own refresh and
/// nothing for the others. Only the first look-up (a process's start) refreshes every key, as
/// it cannot know how long the keys went without one; it does so in chunks
/// ([`ClaimStore::holders_across`]), so its memory stays that of any other look-up.
///
/// The memory bound: beside what a steady look-up holds (the one read's values, the parsed
/// holders, the keys last read), a refresh holds a list of the due keys and identities (a
/// reference each: 8 bytes, about 24 bytes a sighting when every key is due) and one chunk of
/// at most 1,000 key names and `EXPIRE` commands (some 150 KB) at a time: well within 2× the
/// steady figure at every cycle, the first included (measured: `docs/benchmarks.md` 11).
pub const REFRESHES_PER_TTL: u32 = 8;

impl Announcer {
    /// The current holder of each sighting's claim, in one store round trip. Each is read under
    /// the key its claim was found under when this announcer (by `memory`) last met one of its
    /// source ids under another key (the listing changed since the claim), else the key the
    /// sighting derives; a miss still goes through the claim step, which tries every identity.
    /// Forgets what it learned of source ids no longer listed.
    ///
    /// Live, the look-up also gives the held claims due a refresh the policy's full TTL again
    /// (what a later sighting owes a still-listed match, so it never expires into a second
    /// announcement), and every identity of their sightings with it: see [`REFRESHES_PER_TTL`]
    /// for which are due, when, and what it costs. In dry run nothing is written.
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

    /// What this look-up of `keys` refreshes at `now` (see [`REFRESHES_PER_TTL`]): the TTL
    /// to set again, and the positions in `keys` due it; `None` in dry run.
    fn refresh_due(
        &self,
        refreshes: &Refreshes,
        keys: &[&MatchKey],
        now: DateTime<Utc>,
    ) -> Option<(Duration, Vec<usize>)> {
        if self.is_dry_run() {
            return None;
        }
        let every = self.policy.ttl / REFRESHES_PER_TTL;
        Some((self.policy.ttl, refreshes.due(keys, every, now)))
    }

    /// The time a look-up is made at, by this announcer's clock (a test's own clock moves the
    /// refresh instants too).
    fn look_up_time(&self) -> DateTime<Utc> {
        self.clock.now()
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
/// [`ClaimError`] when the store cannot answer; every refresh it was to make is then still
/// due, and each memory's records are as they were.
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
    let now: Vec<DateTime<Utc>> = lookups.iter().map(|l| l.announcer.look_up_time()).collect();
    let refresh: Vec<Option<(Duration, Vec<usize>)>> = lookups
        .iter()
        .zip(&refs)
        .zip(&now)
        .map(|((l, r), now)| l.announcer.refresh_due(&l.memory.refreshes, r, *now))
        .collect();
    let found = {
        let mut reads: Vec<BatchRead<'_>> = lookups
            .iter_mut()
            .zip(&refs)
            .zip(&refresh)
            .map(|((l, keys), refresh)| {
                let (renew, touch) = match refresh {
                    Some((_, due)) => {
                        let renew = due.iter().map(|i| keys[*i]).collect();
                        // Each due sighting's source ids, its own key's identity where the
                        // claim is stored under another key (a claim under the sighting's key
                        // answers for it), and its fixture's list.
                        (renew, touched(due.iter().map(|i| (l.sightings[*i], keys[*i]))))
                    }
                    None => (Vec::new(), Vec::new()),
                };
                BatchRead {
                    store: l.announcer.store(),
                    keys: keys.clone(),
                    renew,
                    touch,
                    refresh: refresh.as_ref().map(|(ttl, _)| *ttl),
                    last: &mut l.memory.last_records,
                }
            })
            .collect();
        ClaimStore::holders_across(&mut reads).await?
    };
    for (((l, keys), refresh), now) in lookups.iter_mut().zip(&refs).zip(&refresh).zip(now) {
        if refresh.is_some() {
            l.memory.refreshes.done(keys, now);
        }
    }
    Ok(found)
}

/// The identities a refresh of `due` (each sighting, with the key it is read under) sets the
/// TTL of again.
fn touched<'a>(due: impl Iterator<Item = (&'a Sighting, &'a MatchKey)>) -> Vec<&'a Identity> {
    due.flat_map(|(s, read)| {
        let own = (read != &s.ids.key).then(|| s.ids.ids.iter());
        s.source_identities()
            .chain(own.into_iter().flatten().filter(|i| i.is_key()))
            // The fixture's list lives as long as a claim on it is seen.
            .chain(s.ids.fixture())
    })
    .collect()
}
