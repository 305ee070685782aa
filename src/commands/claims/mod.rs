//! `claims`: the operator's look at the store and hands on it. One file per command: `list.rs`,
//! `show.rs`, `release.rs`, `reconcile.rs`; `table.rs` prints the claims `list` and `show` read.
//! This file opens the store each needs and picks the channel whose claims it reads.

mod list;
mod reconcile;
mod release;
mod show;
mod table;

use super::exit::{Exit, Failure};
use super::startup::{channel_names, known_channel};
use cricket_announcer::announcer::ClaimPolicy;
use cricket_announcer::app::{channel_claims, open_store_for, Access};
use cricket_announcer::cli::ClaimsCommand;
use cricket_announcer::config::{Config, StoreConfig};
use cricket_announcer::cricket::Identity;
use cricket_announcer::text::escaped;

/// Runs the claims command `action`, on the channel named `channel` (required when the
/// channels file has several; every channel for `reconcile` without it); `wide` (`--wide`)
/// prints the tables of `list` and `show` in full.
///
/// # Errors
/// A usage [`Failure`] for a key that is not a match key, a channel that does not exist or is
/// not named, or a dry run of a command that writes; a [`Failure`] when the store cannot be
/// opened or cannot answer.
pub(super) async fn claims(
    config: &Config,
    action: ClaimsCommand,
    channel: Option<&str>,
    wide: bool,
) -> Result<Exit, Failure> {
    if config.dry_run() && matches!(action, ClaimsCommand::Release { .. }) {
        return Err(Failure::usage(
            "claims release deletes a claim by design; it has no dry run (use `claims show` to look)",
        ));
    }
    // A mistyped key is a usage error, whatever the store.
    if let ClaimsCommand::Show { key, .. } | ClaimsCommand::Release { key, .. } = &action {
        identity(key)?;
    }
    // Opening would create an empty store, and a mistyped path would then read as "no claims":
    // the claims commands only ever look at a store that exists.
    if let StoreConfig::Embedded(path) = &config.store.backend {
        if !path.exists() {
            return Err(Failure::incomplete(format!(
                "no embedded store at STORE_PATH={}: nothing was ever claimed there (is the path right?)",
                path.display()
            )));
        }
    }
    // Listing and showing read; only `release` and `reconcile` write.
    let access = match action {
        ClaimsCommand::List { .. } | ClaimsCommand::Show { .. } => Access::ReadOnly,
        ClaimsCommand::Release { .. } | ClaimsCommand::Reconcile => Access::ReadWrite,
    };
    let base = open_store_for(config, access).await?;
    let stuck_after = ClaimPolicy::new(
        config.store.claim_ttl,
        config.posting.max_post_attempts,
        config.send_bound(),
    )
    .stuck_after;
    known_channel(config, channel)?;
    if let ClaimsCommand::Reconcile = action {
        return reconcile::reconcile(config, &base, channel, stuck_after).await;
    }
    // One channel's claims: the named one, or the only one.
    let names = channel_names(config);
    let name = match channel {
        Some(name) => name,
        None if names.len() == 1 => names[0],
        None => {
            return Err(Failure::usage(format!(
                "name the channel whose claims to read: --channel NAME (channels: {})",
                names.join(", ")
            )))
        }
    };
    let store = channel_claims(&base, &config.posting.channels, name);
    match action {
        ClaimsCommand::List { state, limit, event } => {
            list::list(config, &store, list::Filter { state, limit, event }, wide, stuck_after).await
        }
        ClaimsCommand::Show { key, event } => {
            show::show(
                config,
                &store.for_event(event),
                event,
                (&key, &identity(&key)?),
                wide,
                stuck_after,
            )
            .await
        }
        ClaimsCommand::Release { key, force, event } => {
            release::release(&store.for_event(event), (&key, &identity(&key)?), force, stuck_after).await
        }
        // Answered above, for every channel.
        ClaimsCommand::Reconcile => Ok(Exit::Done),
    }
}

/// The identity `key` names: a match key, or any identity a claim recorded (`cricbuzz:158062`,
/// `key:2026-07-17_…`).
///
/// # Errors
/// A usage [`Failure`] when it is neither.
fn identity(key: &str) -> Result<Identity, Failure> {
    Identity::named(key).ok_or_else(|| Failure::usage(format!("{:?} is not a match key", escaped(key))))
}
