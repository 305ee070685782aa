//! What one announcer remembers from one cycle to the next: a plain value its caller owns and
//! lends to each call ([`Announcer::announce`](super::Announcer::announce),
//! [`Announcer::holders_of`](super::Announcer::holders_of)), never a cell shared by clones.
//! The cycle keeps one per channel and hands it to that channel's turn alone.
//!
//! Nothing here decides whether a match is held: the store's answer does. What is remembered
//! only saves work (a parse, a round trip, a refresh), and a fresh [`Memory`] (a restart, or a
//! caller that keeps none) costs that work once, never a post. It also owns [`Refreshes`], the
//! record of the last TTL refresh that the batch look-up (`lookup.rs`) consults.

use crate::claim::LastRecords;
use crate::cricket::MatchKey;
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
    /// When the held claims' TTLs were last refreshed, and which keys that covered: the look-ups
    /// in between only read.
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
    /// A refresh of `keys` that started at `started`.
    pub(super) fn done(started: tokio::time::Instant, keys: &[&MatchKey]) -> Refreshes {
        Refreshes {
            last: Some(started),
            covered: keys.iter().map(|k| (*k).clone()).collect(),
        }
    }

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
