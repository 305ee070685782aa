//! The first-start marker ([`Marker`]): written when the store is first seeded or initialised;
//! while it is there the store has its data, and once it is gone posting stops until an
//! operator re-seeds (see `App`'s readiness).

use super::error::ClaimError;
use super::label::{labelled, Label};
use super::{ttl_secs, ClaimStore};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The first-start marker: written when the store is seeded (or initialised with
/// `--init-store`); its absence on a store that had it means the store lost its data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// The instance that initialised the store.
    pub by: String,
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// What wrote it.
    pub how: MarkerOrigin,
    /// On the deployment's marker (Redis): the index of unsettled claims holds every claim
    /// written before it existed, filled once by the first start of a release that keeps it
    /// (`unsettled.rs`), so no later start scans. Absent (false) on a marker of an earlier
    /// release; delete the field (or the marker's JSON key) to have the next start fill the
    /// index again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsettled_indexed: bool,
}

/// What wrote a first-start marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerOrigin {
    /// `seed`: what was current was recorded without posting.
    Seed,
    /// `--init-store`: the store was initialised and what was current announced.
    InitStore,
    /// A channel added to a running deployment, initialised by the cycle that first met it.
    NewChannel,
    /// A marker whose origin cannot be read (unreadable, or written by a later release).
    Unknown,
}

impl Label for MarkerOrigin {
    const WHAT: &'static str = "a marker origin";
    const ALL: &'static [MarkerOrigin] = &[
        MarkerOrigin::Seed,
        MarkerOrigin::InitStore,
        MarkerOrigin::NewChannel,
        MarkerOrigin::Unknown,
    ];

    /// As stored in the marker's `how`: `seed`, `init-store`, `new channel`, `unknown`.
    fn label(self) -> &'static str {
        match self {
            MarkerOrigin::Seed => "seed",
            MarkerOrigin::InitStore => "init-store",
            MarkerOrigin::NewChannel => "new channel",
            MarkerOrigin::Unknown => "unknown",
        }
    }

    /// Any word this release does not know reads as [`MarkerOrigin::Unknown`]: a marker is
    /// never unreadable for its origin alone.
    fn from_label(word: &str) -> Option<MarkerOrigin> {
        Some(
            MarkerOrigin::ALL
                .iter()
                .copied()
                .find(|o| o.label() == word)
                .unwrap_or(MarkerOrigin::Unknown),
        )
    }
}

labelled!(MarkerOrigin);

impl ClaimStore {
    /// The first-start marker, if the store has one.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn marker(&self) -> Result<Option<Marker>, ClaimError> {
        let raw = each!(self, s => s.get(&self.marker_key()).await)?;
        // An unreadable marker still marks the store as initialised: the key exists.
        Ok(raw.map(|r| {
            serde_json::from_str(&r).unwrap_or_else(|_| Marker {
                by: "(unreadable marker)".into(),
                at: DateTime::<Utc>::UNIX_EPOCH,
                how: MarkerOrigin::Unknown,
                unsettled_indexed: false,
            })
        }))
    }

    /// Writes the first-start marker if there is none, in one atomic step (two processes
    /// initialising at once is safe). Returns the marker in force and whether we wrote it.
    /// The marker lives `ttl` and is refreshed by [`ClaimStore::refresh_marker`].
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn initialise(&self, how: MarkerOrigin, ttl: Duration) -> Result<(Marker, bool), ClaimError> {
        // A fresh deployment's marker says its index is filled already, so no start scans it
        // for claims of an earlier release it never had.
        let unsettled_indexed = match self {
            ClaimStore::Redis(s) => s.index_filled_for(self.prefix()),
            _ => false,
        };
        let marker = Marker {
            by: self.owner().to_string(),
            at: self.now().await?,
            how,
            unsettled_indexed,
        };
        let stored = serde_json::to_string(&marker).unwrap_or_default();
        let previous = each!(self, s => s.set_nx(&self.marker_key(), &stored, ttl_secs(ttl)).await)?;
        Ok(match previous {
            None => (marker, true),
            Some(raw) => (serde_json::from_str(&raw).unwrap_or(marker), false),
        })
    }

    /// Extends the marker's TTL; `false` when the marker is gone (the store lost its data).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn refresh_marker(&self, ttl: Duration) -> Result<bool, ClaimError> {
        each!(self, s => s.expire(&self.marker_key(), ttl_secs(ttl)).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_its_origin_from_its_word_and_an_unknown_word_as_unknown() {
        let stored = r#"{"by":"host:1","at":"2026-07-17T10:30:00Z","how":"init-store"}"#;
        let marker: Marker = serde_json::from_str(stored).unwrap();
        assert_eq!(marker.how, MarkerOrigin::InitStore);
        assert_eq!(serde_json::to_string(&marker).unwrap(), stored);
        for o in MarkerOrigin::ALL {
            assert_eq!(MarkerOrigin::from_label(o.label()), Some(*o));
        }
        let later: Marker = serde_json::from_str(&stored.replace("init-store", "migrated")).unwrap();
        assert_eq!(
            (later.how, later.how.to_string()),
            (MarkerOrigin::Unknown, "unknown".into())
        );
    }
}
