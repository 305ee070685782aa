//! The cycle's part of announcement windows (`ANNOUNCE_BEFORE`, see [`crate::schedule`]): a
//! channel's matches whose window has not opened are split from its work list, never claimed,
//! and only counted (the `waiting` count, its gauge, and the earliest opening, which `run` wakes
//! for); a dry run prints each one's post with when it would be made.
//!
//! A waiting match the batch look-up finds held is skipped as any held match is (the look-up
//! refreshed its TTL). One it finds free may still be held under another key (its listing was
//! edited since it was claimed, at first sighting or by `seed`): the claim step would find that
//! through the match's identities and keep the claim alive, but a waiting match never reaches the
//! claim step. So each such match is read once under every identity ([`ClaimStore::find`]): a
//! claim found is refreshed every cycle it waits, so it cannot expire into a second
//! announcement when the window opens; a match found free is remembered, and not read again
//! while it is listed.

use super::{App, ChannelRun, ChannelSummary, Summary};
use crate::announcer::{AnnounceError, Memory, Outcome};
use crate::claim::{ClaimError, Holder};
use crate::cricket::{MatchKey, Sighting};
use crate::metric_names as names;
use crate::telemetry::CauseChain;
use chrono::{DateTime, Utc};
use std::collections::HashSet;

/// A match of a channel's turn that waits for its window: the sighting, the holder the batch
/// look-up found (`None`: free under its key), and when its window opens.
pub(super) struct Waiting<'s> {
    pub(super) sighting: &'s Sighting,
    pub(super) holder: Option<Holder>,
    pub(super) opens: DateTime<Utc>,
}

/// Why the waiting part of a turn stopped the cycle.
pub(super) enum Halt {
    /// The store did not answer.
    Store(ClaimError),
    /// The dry run's output cannot be written (said, and put in the summary's `refused`).
    Output,
}

/// What a channel's turns learned of its waiting matches, from one cycle to the next.
#[derive(Debug, Default)]
pub(super) struct Waits {
    /// Waiting matches read under every identity and found free: not read again while listed.
    free: HashSet<MatchKey>,
}

/// Sets the waiting gauge from a cycle's `summary`: per channel with a channels file (its
/// channels' counts are listed), else the one unlabelled series.
pub(super) fn record_waiting(summary: &Summary) {
    if summary.channels.is_empty() {
        metrics::gauge!(names::MATCHES_WAITING).set(summary.waiting as f64);
    }
    for c in &summary.channels {
        metrics::gauge!(names::MATCHES_WAITING, "channel" => c.channel.clone()).set(c.waiting as f64);
    }
}

impl App {
    /// The waiting part of `channel`'s turn, the earliest opening first: each of `waiting` is
    /// counted as waiting (the earliest opening kept in `summary.next_window`), or skipped when
    /// a claim holds it; in a dry run its post is printed by the channel's announcer, saying
    /// when it would be made. Nothing is claimed.
    ///
    /// # Errors
    /// [`Halt`] when the store failed or the dry run's output is gone: the cycle stops.
    pub(super) async fn wait_turn(
        &self,
        channel: &ChannelRun,
        memory: &mut Memory,
        mut waiting: Vec<Waiting<'_>>,
        counts: &mut ChannelSummary,
        summary: &mut Summary,
    ) -> Result<(), Halt> {
        waiting.sort_by_key(|w| w.opens);
        let listed: HashSet<&MatchKey> = waiting.iter().map(|w| &w.sighting.ids.key).collect();
        if let Ok(mut waits) = channel.waits.lock() {
            waits.free.retain(|k| listed.contains(k));
        }
        let mut left = Vec::with_capacity(waiting.len());
        for item in waiting {
            let held = if self.dry_run {
                // The dry run's printer reads every identity and says what it finds.
                match channel.announcer.announce(memory, item.sighting, item.holder).await {
                    Ok(Outcome::Skipped { .. }) => true,
                    Ok(_) => false,
                    Err(e @ AnnounceError::Output(_)) => {
                        tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written; stopping the dry run");
                        summary.refused = Some(e.to_string());
                        return Err(Halt::Output);
                    }
                    Err(AnnounceError::Store { source, .. }) => return Err(Halt::Store(source)),
                    Err(e) => {
                        counts.failed += 1;
                        tracing::error!(error.cause_chain = %CauseChain(&e), "match not announced");
                        continue;
                    }
                }
            } else if item.holder.is_some() {
                true
            } else {
                self.held_elsewhere(channel, item.sighting).await.map_err(Halt::Store)?
            };
            if held {
                counts.skipped += 1;
                continue;
            }
            counts.waiting += 1;
            let opens = item.opens;
            tracing::debug!(match_key = %item.sighting.ids.key, channel = %channel.name(), opens = %opens, "waiting for its window");
            summary.next_window = Some(summary.next_window.map_or(opens, |t| t.min(opens)));
            left.push((item.sighting, opens));
        }
        self.journal.windows(channel.name(), channel.event(), &left);
        Ok(())
    }

    /// Whether the waiting sighting `s`, which the batch look-up found free under its key, is
    /// held under another of its identities (read once while it is listed and free; a claim
    /// found gets its TTL back).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    async fn held_elsewhere(&self, channel: &ChannelRun, s: &Sighting) -> Result<bool, ClaimError> {
        let key = &s.ids.key;
        if channel.waits.lock().is_ok_and(|w| w.free.contains(key)) {
            return Ok(false);
        }
        let store = channel.announcer.store();
        match store.find(&s.ids).await? {
            Some((held, claim, via)) => {
                tracing::info!(match_key = %held, seen_as = %key, via = %via, owner = %claim.owner, state = %claim.state, "waiting for its window, but already claimed: its claim is kept alive");
                store.refresh(&held, self.policy.ttl).await?;
                Ok(true)
            }
            None => {
                if let Ok(mut waits) = channel.waits.lock() {
                    waits.free.insert(key.clone());
                }
                Ok(false)
            }
        }
    }
}
