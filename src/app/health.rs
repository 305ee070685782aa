//! `/healthz`: what is wrong with a running bot (store, eviction policy, halted posting, stale
//! sources), as an orchestrator's probe asks.

use super::{App, HEALTH_STORE_TIMEOUT, POLL_JITTER_FRACTION};
use crate::claim::EvictionRefusal;

impl App {
    /// What is wrong with this running bot, for `/healthz`; empty when healthy. Unhealthy
    /// when the store does not answer within [`HEALTH_STORE_TIMEOUT`], has no first-start
    /// marker (so nothing is posted), may evict claims (Redis' `maxmemory-policy`, see
    /// [`check_eviction`](super::check_eviction); posting then stops until a later check finds it safe), posting has
    /// halted (credentials, credits), or no source has been read for `HEALTH_MAX_STALE_CYCLES`
    /// poll intervals (counted from start until the first read).
    pub async fn health(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let reachable = match tokio::time::timeout(HEALTH_STORE_TIMEOUT, self.store.marker()).await {
            Ok(Ok(Some(_))) => true,
            // A bot that refuses to post is not healthy, however well it polls.
            Ok(Ok(None)) if !self.dry_run => {
                problems.push(
                    "store not initialised or it lost its data: nothing is posted until `cricket-announcer seed`"
                        .into(),
                );
                true
            }
            Ok(Ok(None)) => true,
            Ok(Err(e)) => {
                problems.push(format!("store unreachable: {e}"));
                false
            }
            Err(_) => {
                problems.push(format!(
                    "store unreachable: no answer within {} s",
                    HEALTH_STORE_TIMEOUT.as_secs()
                ));
                false
            }
        };
        // Posting only: a dry run keeps nothing to lose. Unreachable: already said, and the
        // probe must answer within its own timeout.
        if !self.dry_run && reachable {
            // Not `check_eviction`: its warning about an asserted policy belongs to startup,
            // not to every probe.
            let store = &self.store;
            let checked = tokio::time::timeout(
                HEALTH_STORE_TIMEOUT,
                store.eviction_safety(self.eviction_policy_asserted),
            )
            .await;
            let refusal = match checked {
                Ok(Ok(_)) => Some(None),
                // No answer says nothing new about the policy: a refusal stays as it was.
                Ok(Err(e @ EvictionRefusal::Store(_))) => {
                    problems.push(e.to_string());
                    None
                }
                Err(_) => {
                    problems.push(format!(
                        "cannot read Redis maxmemory-policy: no answer within {} s",
                        HEALTH_STORE_TIMEOUT.as_secs()
                    ));
                    None
                }
                Ok(Err(e)) => {
                    problems.push(e.to_string());
                    Some(Some(e.to_string()))
                }
            };
            if let (Some(refusal), Ok(mut held)) = (refusal, self.eviction_refusal.lock()) {
                *held = refusal;
            }
        }
        for channel in &self.channels {
            if let Some(why) = channel.halted() {
                problems.push(if self.channels.len() == 1 {
                    format!("posting halted: {why}")
                } else {
                    format!("posting halted on channel {}: {why}", channel.name())
                });
            }
        }
        problems.extend(self.stale_sources());
        problems
    }
}

impl App {
    /// The problem of a bot that has read no source for `HEALTH_MAX_STALE_CYCLES` poll
    /// intervals (counted from start until the first read), for `/healthz` and the status page.
    pub(super) fn stale_sources(&self) -> Option<String> {
        // The jitter can add up to a tenth of an interval to each cycle: allow for it.
        let allowed = self
            .poll_interval
            .mul_f64((1.0 + POLL_JITTER_FRACTION) * f64::from(self.health_max_stale_cycles));
        let since = self.last_source_read.lock().ok()?.elapsed();
        (since > allowed).then(|| {
            format!(
                "no source read for {} s (more than {} poll intervals)",
                since.as_secs(),
                self.health_max_stale_cycles
            )
        })
    }
}
