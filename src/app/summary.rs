//! What one cycle (or a backfill, or a seed) did: the counts its summary line prints.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Whether a count is zero: such a count is left out of the JSON summary.
#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What one cycle (or a backfill) did. Printed as the backfill summary.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Sources read and parsed.
    pub sources_read: usize,
    /// Sources that failed (fetch, unknown kind, layout not recognised).
    pub sources_failed: usize,
    /// Distinct matches seen across all sources.
    pub matches_seen: usize,
    /// Matches not announced by rule (finished, or a team still TBC).
    pub not_announceable: usize,
    /// Posts made (in dry run: posts printed).
    pub posted: usize,
    /// Matches skipped because a claim exists.
    pub skipped: usize,
    /// Matches whose post failed or could not be processed.
    pub failed: usize,
    /// Matches left unclaimed for a later cycle by the flood cap.
    pub deferred: usize,
    /// Store errors (the store could not answer; nothing was posted for that match).
    pub store_errors: usize,
    /// Matches recorded without posting (`seed`).
    pub seeded: usize,
    /// Sources not read this cycle because they keep failing (see [`crate::backoff`]).
    pub sources_backed_off: usize,
    /// Claims seen stuck: claimed, never recorded, older than the post timeout allows.
    pub stuck_claims: usize,
    /// Matches left unclaimed because their announcement window has not opened
    /// (`ANNOUNCE_BEFORE`; see [`crate::schedule`]), summed over channels.
    #[serde(skip_serializing_if = "is_zero")]
    pub waiting: usize,
    /// When the first window of a waiting match opens (UTC): `run` polls then if that comes
    /// before its next poll.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_window: Option<DateTime<Utc>>,
    /// Why nothing (more) was posted this cycle, when the bot refused to post (store not
    /// initialised, store lost its data) or stopped (the dry-run output cannot be written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Each channel's share of the counts above, with a channels file (empty without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelSummary>,
    /// The counts per event (`announce`, `result`), when some channel posts results (empty
    /// otherwise: an announce-only bot's summary is what it always was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSummary>,
}

/// What one event's turns of a cycle did, over every channel.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct EventSummary {
    /// `announce` or `result`.
    pub event: &'static str,
    /// Posts made (or, in a dry run, that would be).
    pub posted: usize,
    /// Matches held already (or, for results, not due now).
    pub skipped: usize,
    /// Posts that failed.
    pub failed: usize,
    /// Matches left for a later cycle (flood cap, pace).
    pub deferred: usize,
    /// Matches recorded without posting.
    pub seeded: usize,
}

/// One channel's counts in a cycle.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelSummary {
    /// The channel.
    pub channel: String,
    /// The event, when not the announcement (`result`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<&'static str>,
    /// Posts made (in dry run: printed).
    pub posted: usize,
    /// Matches skipped because the channel's claim exists.
    pub skipped: usize,
    /// Posts that failed.
    pub failed: usize,
    /// Matches left for a later cycle (flood cap, pace).
    pub deferred: usize,
    /// Matches recorded without posting (the channel's first cycle, or `seed`).
    pub seeded: usize,
    /// Matches left unclaimed until their announcement window opens.
    #[serde(skip_serializing_if = "is_zero")]
    pub waiting: usize,
    /// Why the channel stopped posting, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halted: Option<String>,
}

impl Summary {
    /// One line for people: `sources read 1, failed 0; matches seen 9, …`.
    pub fn line(&self, dry_run: bool) -> String {
        let mut line = format!(
            "sources read {}, failed {}; matches seen {}, not announceable {}; {} {}, skipped {}, failed {}",
            self.sources_read,
            self.sources_failed,
            self.matches_seen,
            self.not_announceable,
            if dry_run { "would post" } else { "posted" },
            self.posted,
            self.skipped,
            self.failed
        );
        for (n, what) in [
            (self.deferred, "deferred"),
            (self.store_errors, "store errors"),
            (self.seeded, "seeded"),
            (self.sources_backed_off, "sources backed off"),
            (self.stuck_claims, "stuck claims"),
            (self.waiting, "waiting for their window"),
        ] {
            if n > 0 {
                line.push_str(&format!(", {what} {n}"));
            }
        }
        if let Some(why) = &self.refused {
            line.push_str(&format!("; refused to post: {why}"));
        }
        for e in &self.events {
            line.push_str(&format!(
                "; {}: {} {}, skipped {}, failed {}",
                e.event,
                if dry_run { "would post" } else { "posted" },
                e.posted,
                e.skipped,
                e.failed
            ));
            for (n, what) in [(e.deferred, "deferred"), (e.seeded, "seeded")] {
                if n > 0 {
                    line.push_str(&format!(", {what} {n}"));
                }
            }
        }
        for c in &self.channels {
            let event = c.event.map(|e| format!(" ({e})")).unwrap_or_default();
            line.push_str(&format!(
                "; {}{event}: {} {}, skipped {}, failed {}",
                c.channel,
                if dry_run { "would post" } else { "posted" },
                c.posted,
                c.skipped,
                c.failed
            ));
            for (n, what) in [(c.deferred, "deferred"), (c.seeded, "seeded"), (c.waiting, "waiting")] {
                if n > 0 {
                    line.push_str(&format!(", {what} {n}"));
                }
            }
            if let Some(why) = &c.halted {
                line.push_str(&format!(", halted: {why}"));
            }
        }
        line
    }
}
