//! What `check-sources` says of when each match it shows is announced, when a lead time is set
//! (`ANNOUNCE_BEFORE` or a channel's `announce_before`): `already announced` (or `already
//! claimed`) when a channel's claims hold it, else `now` or `in 3 h 10 min`, by each channel's
//! lead and the command's clock (`--as-of`). One text when every channel says the same, else
//! each channel's. The store is read only, and only when it can be read without creating
//! anything; when it cannot, every match is told by its time alone.

use super::store::{channel_claims, open_store_for, Access};
use crate::claim::{ClaimState, ClaimStore};
use crate::config::Config;
use crate::cricket::{Match, Sighting};
use crate::filter::Filter;
use crate::schedule::{until, Lead, When};
use chrono::{DateTime, Utc};

/// The channels' leads and claims, as `check-sources` tells the announcements by them.
pub(super) struct Timing {
    /// The bot's filter, applied before each channel's.
    filter: Filter,
    /// Each channel: its name, its filter, its lead, and its claims when the store could be
    /// read.
    channels: Vec<(String, Filter, Lead, Option<ClaimStore>)>,
    /// The command's "now".
    now: DateTime<Utc>,
}

impl Timing {
    /// The timing of `config`'s channels, or `None` when none waits for a window (then every
    /// match is announced at first sighting, and `check-sources` says nothing more of it).
    pub(super) async fn of(config: &Config) -> Option<Timing> {
        let list = &config.posting.channels;
        let leads: Vec<(String, Filter, Lead)> = list
            .channels()
            .iter()
            .map(|c| {
                let lead = c.announce_before.unwrap_or(config.schedule.lead);
                (c.name.clone(), c.filter.clone(), lead)
            })
            .collect();
        if !leads.iter().any(|(_, _, lead)| lead.waits()) {
            return None;
        }
        // Read only: a PostgreSQL schema without a ledger, or a store that does not answer, is
        // told by time alone (check-sources reports the store itself on its own line).
        let store = match open_store_for(config, Access::ReadOnly).await {
            Ok(store) => Some(store),
            Err(e) => {
                tracing::debug!(error.message = %e, "check-sources: claims not read; announcements told by time alone");
                None
            }
        };
        Some(Timing {
            filter: config.filter.clone(),
            channels: leads
                .into_iter()
                .map(|(name, filter, lead)| {
                    let claims = store.as_ref().map(|s| channel_claims(s, list, &name));
                    (name, filter, lead, claims)
                })
                .collect(),
            now: config.clock().now(),
        })
    }

    /// When `m` is announced: one text for every channel (`announce now`, `announce in 3 h 10
    /// min`, `already announced`, `not announced: state not announced`), or each channel's
    /// (`x: announce now; club: announce in 2 h`) when they differ.
    pub(super) async fn of_match(&self, m: &Match) -> String {
        let sighting = Sighting::new(m.clone());
        let mut told: Vec<(String, String)> = Vec::with_capacity(self.channels.len());
        for (name, filter, lead, claims) in &self.channels {
            if let Err(why) = self.filter.check(m).and_then(|()| filter.check(m)) {
                told.push((name.clone(), format!("not announced: {why}")));
                continue;
            }
            let held = match claims {
                Some(claims) => claims.find(&sighting.ids).await.ok().flatten(),
                None => None,
            };
            let text = match (held, lead.when(m, self.now)) {
                (Some((_, claim, _)), _) if claim.state == ClaimState::Posted => "already announced".to_string(),
                (Some((_, claim, _)), _) => format!("already claimed ({})", claim.state),
                (None, When::Now) => "announce now".to_string(),
                (None, When::At(opens)) => format!("announce {}", until(self.now, opens)),
            };
            told.push((name.clone(), text));
        }
        match told.first() {
            Some((_, first)) if told.iter().all(|(_, t)| t == first) => first.clone(),
            _ => told
                .iter()
                .map(|(name, text)| format!("{name}: {text}"))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}
