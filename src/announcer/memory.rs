//! What one announcer remembers from one cycle to the next: a plain value its caller owns and
//! lends to each call ([`Announcer::announce`](super::Announcer::announce),
//! [`Announcer::holders_of`](super::Announcer::holders_of)), never a cell shared by clones.
//! The cycle keeps one per channel and hands it to that channel's turn alone.
//!
//! Nothing here decides whether a match is held: the store's answer does. What is remembered
//! only saves work (a parse, a round trip, a refresh), and a fresh [`Memory`] (a restart, or a
//! caller that keeps none) costs that work once, never a post. It also owns [`Refreshes`], the
//! schedule of TTL refreshes that the batch look-up (`lookup.rs`) follows.

use crate::claim::LastRecords;
use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// One announcer's memory between calls (one channel's, in the cycle). `Default` is a process
/// that has seen nothing yet.
#[derive(Debug, Default)]
pub struct Memory {
    /// Source id → the key its match's claim is stored under, where that differs from the key
    /// its sighting derives now (the listing changed since the claim): learned from the claim
    /// step, so the next batch look-up reads the claim directly instead of missing it and
    /// taking the claim step again. Forgotten for source ids no longer listed.
    pub(super) hints: foldhash::HashMap<String, MatchKey>,
    /// The records the last batch look-up read: a record read again unchanged (a match posted
    /// days ago, seen every cycle) gives the same holder without being parsed again.
    pub(super) last_records: LastRecords,
    /// When the last look-up ran and which keys it read: which keys' TTLs a look-up refreshes
    /// (see [`Refreshes`]).
    pub(super) refreshes: Refreshes,
    /// Matches skipped as held by the batch look-up since [`Memory::publish_held`] last added
    /// them to the claims metric: nearly every sighting of a cycle is one, and a metric update
    /// each (a registry look-up with a recorder installed) cost more than the skip.
    pub(super) held: u64,
    /// Post outcomes the store did not take (it did not answer) since
    /// [`Memory::take_unrecorded`] last asked.
    pub(super) unrecorded: usize,
}

impl Memory {
    /// Adds the matches skipped as held since the last call to the claims metric
    /// (`result="held"`, with `event` when the turn was of an event other than the
    /// announcement), in one update: the cycle calls it once a channel's turn is over.
    pub fn publish_held(&mut self, event: crate::event::Event) {
        let held = std::mem::take(&mut self.held);
        if held > 0 {
            crate::announcer::claims_counter("held", event).increment(held);
        }
    }

    /// How many post outcomes the store did not take (it did not answer) since the last call,
    /// and starts counting again: the cycle counts them as store errors, so a command whose
    /// records were not written does not end as if the store had answered.
    pub fn take_unrecorded(&mut self) -> usize {
        std::mem::take(&mut self.unrecorded)
    }
}

/// What the batch look-up (`lookup.rs`) needs to spread TTL refreshes over time: when the
/// last look-up ran, and which keys it read. Each key has its own refresh instants, one every
/// `every` (TTL / [`REFRESHES_PER_TTL`](super::REFRESHES_PER_TTL)) at an offset that a hash of
/// the key sets, counted from this memory's first look-up: a look-up refreshes the keys whose
/// instant passed since the last one (a slice of about `every`'s share of them), the keys the
/// last one did not read (newly listed), and, the first time, every key.
#[derive(Debug, Default)]
pub(super) struct Refreshes {
    /// When this memory's first look-up ran: the origin of every key's refresh instants.
    origin: Option<DateTime<Utc>>,
    /// When the last look-up ran (never earlier than a look-up before it: a clock set back
    /// counts as no time passed).
    last: Option<DateTime<Utc>>,
    /// The keys the last look-up read, in its order.
    seen: Vec<MatchKey>,
}

impl Refreshes {
    /// The positions in `keys` (a look-up at `now`) whose TTL is due to be set again, with
    /// refresh instants `every` apart: every position on the first look-up; otherwise each key
    /// the last look-up did not read, and each whose refresh instant passed since it.
    pub(super) fn due(&self, keys: &[&MatchKey], every: Duration, now: DateTime<Utc>) -> Vec<usize> {
        let (Some(origin), Some(last)) = (self.origin, self.last) else {
            return (0..keys.len()).collect();
        };
        let every = u64::try_from(every.as_nanos()).unwrap_or(u64::MAX).max(1);
        let since = |t: DateTime<Utc>| {
            (t - origin)
                .num_nanoseconds()
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0)
        };
        let (from, to) = (since(last), since(now.max(last)));
        // Cycle after cycle looks up the same keys in the same order: compared in place, with
        // no hashing, unless the listing changed.
        let same = keys.len() == self.seen.len() && keys.iter().zip(&self.seen).all(|(k, s)| *k == s);
        let seen: foldhash::HashSet<&MatchKey> = if same {
            foldhash::HashSet::default()
        } else {
            self.seen.iter().collect()
        };
        keys.iter()
            .enumerate()
            .filter(|(_, k)| {
                (!same && !seen.contains(**k)) || {
                    let offset = offset(k, every);
                    instants_by(from, offset, every) < instants_by(to, offset, every)
                }
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Records a look-up of `keys` at `now` whose due refreshes were made.
    pub(super) fn done(&mut self, keys: &[&MatchKey], now: DateTime<Utc>) {
        self.origin.get_or_insert(now);
        self.last = Some(self.last.map_or(now, |last| last.max(now)));
        let same = keys.len() == self.seen.len() && keys.iter().zip(&self.seen).all(|(k, s)| *k == s);
        if !same {
            self.seen.clear();
            self.seen.extend(keys.iter().map(|k| (*k).clone()));
        }
    }
}

/// Where in each period of `every` ns the refresh instant of `key` falls: a hash of the key,
/// so that a listing's keys spread evenly over the period, and a key keeps its place when the
/// listing around it changes.
fn offset(key: &MatchKey, every: u64) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(key.as_str()) % every
}

/// How many refresh instants of a key at `offset` in each period of `every` ns fall in the
/// first `t` ns: a key is due when this grew since the last look-up.
fn instants_by(t: u64, offset: u64, every: u64) -> u64 {
    match t.checked_sub(offset) {
        Some(after) => after / every + 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<MatchKey> {
        (0..n)
            .map(|i| MatchKey::parse(&format!("2026-07-{:02}_a{i}-v-b{i}", 1 + i % 28)).unwrap())
            .collect()
    }

    #[test]
    fn each_key_is_due_once_per_period_and_a_new_key_at_once() {
        let every = Duration::from_secs(100);
        let all = keys(200);
        let refs: Vec<&MatchKey> = all.iter().collect();
        let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let mut r = Refreshes::default();
        assert_eq!(r.due(&refs, every, t0).len(), 200, "the first look-up refreshes all");
        r.done(&refs, t0);
        assert!(r.due(&refs, every, t0).is_empty(), "no time passed: nothing");
        // Looked up every 10 s for one period: each key due exactly once, about a tenth each
        // time.
        let mut count = vec![0; 200];
        for step in 1..=10 {
            let now = t0 + chrono::TimeDelta::seconds(10 * step);
            let due = r.due(&refs, every, now);
            assert!(due.len() < 60, "a slice, not the lot: {}", due.len());
            for i in due {
                count[i] += 1;
            }
            r.done(&refs, now);
        }
        assert!(count.iter().all(|c| *c == 1), "{count:?}");
        // A key the last look-up did not read is due at once, alone.
        let more = keys(201);
        let refs: Vec<&MatchKey> = more.iter().collect();
        let now = t0 + chrono::TimeDelta::seconds(100);
        assert_eq!(r.due(&refs, every, now), vec![200]);
        r.done(&refs, now);
        // A clock set back: no time passed.
        assert!(r.due(&refs, every, t0).is_empty());
    }
}
