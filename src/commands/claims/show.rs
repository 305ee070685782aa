//! `claims show KEY`: one claim, found by its match key or any identity it recorded, with every
//! identity it holds the match under.

use super::super::exit::{Exit, Failure};
use super::super::output::write_stdout;
use super::table::print_claims;
use cricket_announcer::claim::{ClaimStore, ListedClaim};
use cricket_announcer::config::Config;
use cricket_announcer::cricket::Identity;
use cricket_announcer::text::escaped;
use std::time::Duration;

/// `claims show`: the claim on `asked` (as the operator wrote it, and as the identity it
/// names) in `store`, then (for people) its identities.
///
/// # Errors
/// A [`Failure`] when no claim holds `asked`, the store cannot answer or the output cannot be
/// written.
pub(super) async fn show(
    config: &Config,
    store: &ClaimStore,
    (written, asked): (&str, &Identity),
    wide: bool,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    let (key, claim) = store.peek_identity(asked).await?.ok_or_else(|| {
        Failure::incomplete(format!(
            "no claim on {} (as a match key or an identity)",
            written.trim()
        ))
    })?;
    let ttl = store.ttl(&key).await?;
    let identities: Vec<String> = claim.aliases.iter().map(|a| escaped(a).into_owned()).collect();
    print_claims(&[ListedClaim { key, claim, ttl }], config.json(), stuck_after, wide)?;
    if !config.json() {
        // Every identity the claim holds the match under (its sources' ids, its keys): a
        // sighting with any of them is this match.
        write_stdout(&format!("identities: {}\n", identities.join(", ")))?;
    }
    Ok(Exit::Done)
}
