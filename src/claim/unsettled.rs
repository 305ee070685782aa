//! The claims a reconciliation looks at (`unknown`, and `claimed` past the owner's deadline:
//! stuck), found through an index the claim step keeps, so that a reconciliation costs what
//! is unsettled, never the keyspace nor channels × keys (issue 36).
//!
//! - **Redis**: one sorted set per deployment, `<root>store:unsettled` (`root`: the
//!   deployment's `KEY_PREFIX`, every channel's and event's keys under it; on a cluster it is
//!   the hash tag, so the set shares the claims' slot). Member: a claim's key; score: when it
//!   is due ([`Claim::due`], Unix milliseconds). The claim script adds a won claim in the same
//!   atomic step that writes it; a transition sets its score or, for a settled state, takes it
//!   out; a release takes it out (`lua/`). A claim that expires leaves a member behind, taken
//!   out by the next reconciliation that reads it (`lua/prune.lua`, which judges again in one
//!   step, so a claim written anew meanwhile stays).
//! - **Records of earlier releases** carry no member: the first start of this release (or the
//!   first reconciliation, for `claims reconcile`) fills the index from one `SCAN` of the
//!   deployment's claim keys, then says so in the deployment's first-start marker
//!   ([`super::Marker::unsettled_indexed`]), so no later one scans. A fresh deployment's
//!   marker says so when it is written: the process writing it filled the index at its start,
//!   when no marker existed (and an earlier release's process claims nothing without one).
//!   A replica of an earlier
//!   release still running after that (a rolling upgrade) writes claims the index does not
//!   know: they are reconciled by that replica's own scan while it runs; once the last one
//!   stopped, clearing the marker's field makes the next start fill the index again (see
//!   `docs/reconcile.md`).
//! - **SQLite and PostgreSQL**: a partial index on the unsettled rows (`claims_unsettled`),
//!   which every write keeps as part of the row, old releases' writes included; nothing to
//!   fill.
//!
//! Whatever the store, each claim found is judged again from its record as read: the index
//! only narrows what is read, it never decides.

use super::error::ClaimError;
use super::key::CLAIM_SEGMENT;
use super::record::{Claim, ClaimState};
use super::ClaimStore;
use crate::cricket::MatchKey;
use chrono::{DateTime, Utc};

impl Claim {
    /// When this claim is due for a reconciliation: a `claimed` one at its owner's deadline
    /// (a record of an earlier release without one: when it was claimed, and judged stuck by
    /// the reader's `stuck_after` once read), an `unknown` one at once (when it was claimed).
    /// `None` for a settled one (`posted`, `failed`, `seeded`), which no reconciliation reads.
    pub fn due(&self) -> Option<DateTime<Utc>> {
        match self.state {
            ClaimState::Claimed => Some(self.deadline.unwrap_or(self.claimed_at)),
            ClaimState::Unknown => Some(self.claimed_at),
            _ => None,
        }
    }
}

/// A claim a reconciliation looks at: its match and its record as read.
pub type UnsettledClaim = (MatchKey, Claim);

impl ClaimStore {
    /// The claims of each of `stores` (channels' and events' stores of the deployment this
    /// store belongs to; this one is the deployment's base store for the SQL stores, whose
    /// prefix every other starts with) that are due for a reconciliation at `now` (the store's
    /// time): `unknown`, or `claimed` with their owner's deadline passed. Found in ONE pass
    /// over the deployment's unsettled claims, through the index the claim step keeps (see the
    /// module doc), in slices of bounded size; per store, sorted by key. A claim under none of
    /// `stores` is left out.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn unsettled_across(
        &self,
        stores: &[&ClaimStore],
        now: DateTime<Utc>,
    ) -> Result<Vec<Vec<UnsettledClaim>>, ClaimError> {
        let rows = match self {
            ClaimStore::Redis(s) => s.unsettled(now.timestamp_millis()).await?,
            ClaimStore::Embedded(s) => s.unsettled(self.prefix()).await?,
            ClaimStore::Postgres(s) => s.unsettled(self.prefix()).await?,
        };
        let mut out: Vec<Vec<UnsettledClaim>> = vec![Vec::new(); stores.len()];
        for (stored, raw) in rows {
            let claim = Claim::from_stored(&raw);
            if claim.due().is_none_or(|due| due > now) {
                continue;
            }
            if let Some((i, key)) = owning(stores, &stored) {
                out[i].push((key, claim));
            }
        }
        for claims in &mut out {
            claims.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Ok(out)
    }

    /// This store's claims due for a reconciliation at `now` (see
    /// [`ClaimStore::unsettled_across`]), sorted by key.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn unsettled(&self, now: DateTime<Utc>) -> Result<Vec<UnsettledClaim>, ClaimError> {
        Ok(self.unsettled_across(&[self], now).await?.pop().unwrap_or_default())
    }
}

/// Which of `stores` the claim key `stored` (`<prefix>match:<key>`) belongs to, with its match
/// key: the one whose prefix is the longest that names it (a channel's events live under the
/// channel's prefix).
fn owning(stores: &[&ClaimStore], stored: &str) -> Option<(usize, MatchKey)> {
    let mut best: Option<(usize, usize, MatchKey)> = None;
    for (i, store) in stores.iter().enumerate() {
        let prefix = store.prefix();
        let Some(key) = stored
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix(CLAIM_SEGMENT))
            .and_then(MatchKey::parse)
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, len, _)| prefix.len() > *len) {
            best = Some((i, prefix.len(), key));
        }
    }
    best.map(|(i, _, key)| (i, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_claim_is_due_at_its_deadline_when_claimed_at_once_when_unknown_and_never_when_settled() {
        let now = Utc::now();
        let mut claim = Claim::with_deadline("host:1", "A v B", &[], now, Some(Duration::from_secs(60)));
        assert_eq!(claim.due(), Some(now + chrono::Duration::seconds(60)));
        claim.deadline = None;
        assert_eq!(claim.due(), Some(now), "a record of an earlier release");
        claim.state = ClaimState::Unknown;
        assert_eq!(claim.due(), Some(now));
        for settled in [ClaimState::Posted, ClaimState::Failed, ClaimState::Seeded] {
            claim.state = settled;
            assert_eq!(claim.due(), None);
        }
    }
}
