//! `claims show KEY`: one claim, found by its match key or any identity it recorded, with every
//! identity it holds the match under and, for its fixture, the facts each claim on it was
//! listed with (why another site's listing was judged this match, or another); or, for a
//! fixture identity, every claim on that fixture.

use super::super::exit::{Exit, Failure};
use super::super::output::write_stdout;
use super::table::print_claims;
use cricket_announcer::claim::{ClaimStore, ListedClaim};
use cricket_announcer::config::Config;
use cricket_announcer::cricket::{Identity, MatchKey};
use cricket_announcer::event::Event;
use cricket_announcer::text::escaped;
use std::time::Duration;

/// `claims show`: the claim on `asked` (as the operator wrote it, and as the identity it
/// names) in `store` (the claims of `event`, which it is shown as), then (for people) its identities and its fixture's claims with their
/// facts; for a fixture identity (`fixture:<date>_<teams>`), every claim listed on it.
///
/// # Errors
/// A [`Failure`] when no claim holds `asked`, the store cannot answer or the output cannot be
/// written.
pub(super) async fn show(
    config: &Config,
    store: &ClaimStore,
    event: Event,
    (written, asked): (&str, &Identity),
    wide: bool,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    let none = || {
        // Which event's claims were read: an announcement's claim does not answer `--event
        // result`, and the operator should see why.
        let other = match event {
            Event::Announce => String::new(),
            Event::Result => format!(" among the {event} claims (without --event: the announcement's)"),
        };
        Failure::incomplete(format!(
            "no claim on {} (as a match key or an identity){other}",
            written.trim()
        ))
    };
    if asked.is_fixture() {
        let mut claims = Vec::new();
        for (key, _) in store.fixture_entries(asked).await? {
            if let Some(claim) = store.peek(&key).await? {
                let ttl = store.ttl(&key).await?;
                claims.push((event, ListedClaim { key, claim, ttl }));
            }
        }
        if claims.is_empty() {
            return Err(none());
        }
        print_claims(&claims, config.json(), stuck_after, wide, store.now().await?)?;
        if !config.json() {
            write_stdout(&fixture_lines(store, asked, None).await?)?;
        }
        return Ok(Exit::Done);
    }
    let (key, claim) = store.peek_identity(asked).await?.ok_or_else(none)?;
    let ttl = store.ttl(&key).await?;
    let identities: Vec<String> = claim.aliases.iter().map(|a| escaped(a).into_owned()).collect();
    let fixtures: Vec<Identity> = claim
        .aliases
        .iter()
        .filter_map(|a| Identity::parse(a))
        .filter(Identity::is_fixture)
        .collect();
    print_claims(
        &[(
            event,
            ListedClaim {
                key: key.clone(),
                claim,
                ttl,
            },
        )],
        config.json(),
        stuck_after,
        wide,
        store.now().await?,
    )?;
    if !config.json() {
        // Every identity the claim holds the match under (its sources' ids, its keys, its
        // fixtures): a sighting with any of them is this match, through a fixture only when
        // its facts agree with the ones listed there.
        let mut text = format!("identities: {}\n", identities.join(", "));
        for fixture in &fixtures {
            text.push_str(&fixture_lines(store, fixture, Some(&key)).await?);
        }
        write_stdout(&text)?;
    }
    Ok(Exit::Done)
}

/// One line per live claim `fixture` lists, with the facts it lists for it (`this` marks the
/// claim shown): `fixture:… lists <key> (this claim): starts …, 20-over, match 42`.
async fn fixture_lines(store: &ClaimStore, fixture: &Identity, this: Option<&MatchKey>) -> Result<String, Failure> {
    let mut text = String::new();
    for (key, facts) in store.fixture_entries(fixture).await? {
        let mark = if Some(&key) == this { " (this claim)" } else { "" };
        text.push_str(&format!("{fixture} lists {key}{mark}: {facts}\n"));
    }
    Ok(text)
}
