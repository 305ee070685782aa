//! The status page's view of the running bot: its [`Journal`](crate::journal::Journal) with
//! what only the app knows (each channel's halt, a store refused for eviction, sources not
//! read for too long). Reads memory only, never the store: a page view costs the store
//! nothing.

use super::App;
use crate::journal::Snapshot;

impl App {
    /// What this bot knows of itself now, for the status page and `/status.json` (see
    /// [`crate::journal`]). Its `problems` are those of `/healthz` that need no store read:
    /// posting halted on a channel, a store that may evict claims (as the last check found),
    /// no source read for `HEALTH_MAX_STALE_CYCLES` poll intervals.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.journal.snapshot(self.clock.now(), self.dry_run);
        for (row, run) in s.channels.iter_mut().zip(&self.channels) {
            row.halted = run.halted().map(str::to_string);
            if let Some(why) = &row.halted {
                s.problems
                    .push(format!("posting halted on channel {}: {why}", row.channel));
            }
        }
        if let Some(why) = self.eviction_refusal.lock().ok().and_then(|r| r.clone()) {
            s.problems.push(why);
        }
        s.problems.extend(self.stale_sources());
        s
    }
}
