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
use crate::zone::Zone;
use chrono::{DateTime, Utc};

/// The channels' leads and claims, as `check-sources` tells the announcements by them.
pub(super) struct Timing {
    /// The bot's filter, applied before each channel's.
    filter: Filter,
    /// Each channel: its name, its filter, its lead, the zone its posts tell times in, and its
    /// claims when the store could be read.
    channels: Vec<(String, Filter, Lead, Zone, Option<ClaimStore>)>,
    /// The command's "now".
    now: DateTime<Utc>,
}

impl Timing {
    /// The timing of `config`'s channels, or `None` when none waits for a window (then every
    /// match is announced at first sighting, and `check-sources` says nothing more of it).
    pub(super) async fn of(config: &Config) -> Option<Timing> {
        let list = &config.posting.channels;
        let leads: Vec<(String, Filter, Lead, Zone)> = list
            .channels()
            .iter()
            .map(|c| {
                let lead = c.announce_before.unwrap_or(config.schedule.lead);
                let zone = c.timezone.unwrap_or(config.schedule.zone);
                (c.name.clone(), c.filter.clone(), lead, zone)
            })
            .collect();
        if !leads.iter().any(|(_, _, lead, _)| lead.waits()) {
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
                .map(|(name, filter, lead, zone)| {
                    let claims = store.as_ref().map(|s| channel_claims(s, list, &name));
                    (name, filter, lead, zone, claims)
                })
                .collect(),
            now: config.clock().now(),
        })
    }

    /// When `m` is announced: one text for every channel (`announce now`, `announce in 3 h 10
    /// min, at Fri 17 Jul, 12:50 IST` in the channel's zone, `already announced`, `not
    /// announced: state complete (announced: upcoming, live)`), or each channel's (`x:
    /// announce now; club: announce in 2 h, at …`) when they differ.
    pub(super) async fn of_match(&self, m: &Match) -> String {
        let sighting = Sighting::new(m.clone());
        let mut told: Vec<(String, String)> = Vec::with_capacity(self.channels.len());
        for (name, filter, lead, zone, claims) in &self.channels {
            if let Err(why) = self.filter.check(m).and_then(|()| filter.check(m)) {
                told.push((name.clone(), format!("not announced: {}", self.reason(filter, m, why))));
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
                (None, When::At(opens)) => format!("announce {}, at {}", until(self.now, opens), zone.start(opens)),
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

    /// Why `m` is not announced, in a reader's words: the filter's reason, or for a state left
    /// out, which state it is and which states are announced (`state complete (announced:
    /// upcoming, live)`).
    fn reason(&self, channel: &Filter, m: &Match, why: &'static str) -> String {
        let announced = |f: &Filter| f.states.contains(&m.state);
        if announced(&self.filter) && announced(channel) {
            return why.to_string();
        }
        let states = if announced(&self.filter) {
            &channel.states
        } else {
            &self.filter.states
        };
        let names: Vec<String> = states.iter().map(ToString::to_string).collect();
        format!("state {} (announced: {})", m.state, names.join(", "))
    }
}
