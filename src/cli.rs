//! The command line: global flags, the settings (each also an environment variable) and the
//! commands.

use crate::config::Settings;
use clap::{Parser, Subcommand};

/// Watches cricket score pages and announces each match exactly once on X.
#[derive(Parser)]
#[command(name = "cricket-announcer", version, about, long_about = None)]
pub struct Cli {
    /// Print each post exactly as it would be sent, with its weighted length; write nothing to
    /// any store and send nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Machine-readable output: one JSON object per line.
    #[arg(long, global = true)]
    pub json: bool,
    /// A source, KIND=LOCATION or LOCATION (repeatable); replaces SOURCES.
    #[arg(long = "source", value_name = "SOURCE", global = true)]
    pub source: Vec<String>,
    /// In dry run, shorten links too (calls the configured shortener).
    #[arg(long, global = true)]
    pub shorten: bool,
    /// Settings, each also readable from the environment or .env.
    #[command(flatten)]
    pub settings: Settings,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Poll every source every POLL_INTERVAL_SECS until SIGINT or SIGTERM (a post in flight
    /// finishes and is recorded first, for at most SHUTDOWN_GRACE_SECS).
    Run {
        /// On a store never initialised, initialise it and announce what is current (instead
        /// of refusing). Use once, on first deployment; not in a service definition.
        #[arg(long)]
        init_store: bool,
        /// Stop after this many cycles (bounded runs: soak tests, one-off catch-ups).
        #[arg(long, value_name = "N")]
        cycles: Option<u64>,
    },
    /// Read every source once, announce what is new, print a summary and exit (0 only if every
    /// source was read and nothing stopped posting).
    Backfill {
        /// As for `run`: initialise a never-initialised store and announce what is current.
        #[arg(long)]
        init_store: bool,
    },
    /// Record every match currently on the sources without posting, and mark the store
    /// initialised. Run it on first start, and again after the store lost its data.
    Seed,
    /// Fetch every configured source once and print a table: source, status, matches found,
    /// the first few matches. Exit 1 if any source failed.
    CheckSources,
    /// Inspect the claims in the store.
    Claims {
        /// What to do with claims.
        #[command(subcommand)]
        action: ClaimsCommand,
    },
}

/// Operator commands on claims.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ClaimsCommand {
    /// List every live claim.
    List {
        /// Only claims in this state: claimed, posted, unknown, failed, seeded or stuck.
        #[arg(long)]
        state: Option<String>,
    },
    /// Show the claim on one match key.
    Show {
        /// The match key, as `claims list` prints it.
        key: String,
    },
    /// Delete the claim on one match key so it may be announced again. Refused unless the
    /// claim is unknown, failed or stuck, or --force is given.
    Release {
        /// The match key, as `claims list` prints it.
        key: String,
        /// Release whatever the state (may cause a second post of a match already posted).
        #[arg(long)]
        force: bool,
    },
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
