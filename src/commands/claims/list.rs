//! `claims list`: every live claim of a channel, or those in one state.

use super::super::exit::{Exit, Failure};
use super::super::output::{store_label, write_stdout};
use super::table::print_claims;
use cricket_announcer::claim::{ClaimStore, ListedClaim, ShownState};
use cricket_announcer::config::Config;
use cricket_announcer::event::Event;
use std::num::NonZeroUsize;
use std::time::Duration;

/// `claims list`: the claims of `store` (those in `state` when given, at most `limit` of them),
/// every event's (the announcements', then the results' namespace, see [`Event`]), as a table
/// or JSON lines; says so when there is none.
///
/// # Errors
/// A [`Failure`] when the store cannot list its claims or the output cannot be written.
pub(super) async fn list(
    config: &Config,
    store: &ClaimStore,
    (state, limit): (Option<ShownState>, Option<NonZeroUsize>),
    wide: bool,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    // Stuck is judged by the store's clock, which wrote the records' deadlines.
    let now = store.now().await?;
    let mut claims: Vec<(Event, ListedClaim)> = Vec::new();
    let full = |claims: &Vec<_>| limit.is_some_and(|n| claims.len() >= n.get());
    for event in Event::ALL {
        // A full list reads no further namespace.
        if full(&claims) {
            break;
        }
        claims.extend(
            store
                .for_event(event)
                .list()
                .await?
                .into_iter()
                .filter(|c| state.is_none_or(|s| c.claim.display_state(now, stuck_after) == s))
                .map(|c| (event, c)),
        );
    }
    if let Some(n) = limit {
        claims.truncate(n.get());
    }
    if claims.is_empty() && !config.json() {
        let which = state.map(|s| format!(" in state {}", s.as_str())).unwrap_or_default();
        write_stdout(&format!("no claims{which} (store {})\n", store_label(config)))?;
        return Ok(Exit::Done);
    }
    print_claims(&claims, config.json(), stuck_after, wide, now)?;
    Ok(Exit::Done)
}
