//! The binary's commands: turn a parsed [`Cli`] into work and an [`Exit`]. `anyhow` lives here
//! (inside [`Failure`]) and in `App::build`, at the edge.
//!
//! # Layout
//! One file per command: `run.rs`, `backfill.rs`, `seed.rs`, `check_sources.rs`, and `claims/`
//! (`list`, `show`, `release`, `reconcile`). What they share: `exit.rs` (the exit codes, and
//! the one place each error type is given its code), `startup.rs` (the configuration a command
//! runs with, its channels, its startup line), `output.rs` (stdout, the summary line, the
//! store's name), `signal.rs` (SIGINT/SIGTERM and the shutdown grace), `dotenv.rs` (`.env`).

mod backfill;
mod check_sources;
mod claims;
mod dotenv;
mod exit;
mod output;
mod run;
mod seed;
mod signal;
mod startup;

pub(crate) use dotenv::load_dotenv;
pub(crate) use exit::{finish, Exit, Failure};

use cricket_announcer::announcer::Output;
use cricket_announcer::cli::{Cli, Command};
use std::sync::{Arc, Mutex};

/// Runs the command `cli` names.
///
/// # Errors
/// The command's [`Failure`]: what went wrong, and the code it exits with.
pub(crate) async fn dispatch(cli: Cli) -> Result<Exit, Failure> {
    let config = startup::configure(&cli)?;
    let stdout: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    match cli.command {
        Command::Run { init_store, cycles } => run::run(&config, stdout, init_store, cycles).await,
        Command::Backfill { init_store } => backfill::backfill(&config, stdout, init_store).await,
        Command::Seed { channel } => seed::seed(&config, stdout, channel.as_deref()).await,
        Command::CheckSources => check_sources::check_sources(&config, cli.wide).await,
        Command::Claims { action, channel } => claims::claims(&config, action, channel.as_deref(), cli.wide).await,
    }
}
