//! What a command starts with: the configuration it runs with (and the usage errors found
//! before anything is opened), its channels, and the line it logs on starting.

use super::exit::Failure;
use super::output::store_label;
use cricket_announcer::cli::{ClaimsCommand, Cli, Command};
use cricket_announcer::config::{Config, Invocation, Needs, Printing, Sending};
use cricket_announcer::template::BUILT_IN_NAME;
use cricket_announcer::text::escaped;
use std::path::Path;

/// The configuration `cli` runs with.
///
/// # Errors
/// A usage [`Failure`] (exit 2): `--shorten` outside a dry run of `run` or `backfill`,
/// `--as-of` outside a dry run or `check-sources`, a
/// setting that cannot be used, or no sources for a command that reads them.
pub(super) fn configure(cli: &Cli) -> Result<Config, Failure> {
    // `claims reconcile` reads the account's posts: it needs the posting credentials too.
    let posts = (matches!(cli.command, Command::Run { .. } | Command::Backfill { .. }) && !cli.dry_run)
        || matches!(
            cli.command,
            Command::Claims {
                action: ClaimsCommand::Reconcile,
                ..
            }
        );
    let needs = if posts { Needs::Posting } else { Needs::NoPosting };
    if cli.shorten && !(cli.dry_run && matches!(cli.command, Command::Run { .. } | Command::Backfill { .. })) {
        return Err(Failure::usage(
            "--shorten applies to a dry run of run or backfill only (a real post always shortens when SHORTENER is set)",
        ));
    }
    if cli.settings.schedule.as_of.is_some() && !(cli.dry_run || matches!(cli.command, Command::CheckSources)) {
        return Err(Failure::usage(
            "--as-of applies to a dry run or check-sources only (a bot that writes claims judges time by the system's clock)",
        ));
    }
    let invocation = Invocation {
        sources: &cli.source,
        needs,
        sending: match (cli.dry_run, cli.shorten) {
            (false, _) => Sending::Live,
            (true, false) => Sending::DryRun,
            (true, true) => Sending::DryRunShortening,
        },
        printing: if cli.json { Printing::Json } else { Printing::Text },
    };
    let config = Config::from_settings(&cli.settings, invocation)?;
    let reads_sources = !matches!(cli.command, Command::Claims { .. });
    if reads_sources && config.sources.specs.is_empty() {
        return Err(Failure::usage(
            "no sources: set SOURCES or pass --source (KIND=LOCATION or LOCATION)",
        ));
    }
    Ok(config)
}

/// The channels' names: the channels file's, or the environment's X channel (`x`) without one.
pub(super) fn channel_names(config: &Config) -> Vec<&str> {
    config.posting.channels.names()
}

/// Checks that `--channel NAME`, when given, names a channel: a mistyped one is a usage error,
/// found before anything is opened.
///
/// # Errors
/// A usage [`Failure`] naming the channels there are.
pub(super) fn known_channel(config: &Config, channel: Option<&str>) -> Result<(), Failure> {
    let names = channel_names(config);
    match channel.filter(|n| !names.contains(n)) {
        Some(name) => Err(Failure::usage(format!(
            "no channel {:?} (channels: {})",
            escaped(name),
            names.join(", ")
        ))),
        None => Ok(()),
    }
}

/// The one line saying what this process is about to do, with what: version, store, sources
/// (credentials hidden), template, poll interval and posting mode.
pub(super) fn log_startup(command: &str, config: &Config) {
    let sources: Vec<String> = config.sources.specs.iter().map(ToString::to_string).collect();
    let template = config
        .text
        .template_path
        .as_deref()
        .map_or_else(|| BUILT_IN_NAME.to_string(), |p: &Path| p.display().to_string());
    let posting = match (command, config.dry_run(), config.posting.channels.file()) {
        ("seed", false, _) => "records without posting".to_string(),
        ("seed", true, _) => "dry run: records nothing".to_string(),
        (_, true, _) => "dry run: prints posts, sends and writes nothing".to_string(),
        (_, false, None) => "live: posts to X".to_string(),
        (_, false, Some(file)) => {
            let channels: Vec<String> = file
                .channels
                .iter()
                .map(|c| format!("{} ({})", c.name, c.sink.kind()))
                .collect();
            format!("live: posts on {} from {}", channels.join(", "), file.path.display())
        }
    };
    // Only `run` polls: an interval means nothing to one pass.
    let interval = (command == "run").then(|| format!("{:?}", config.service.poll_interval));
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        command,
        store = %store_label(config),
        sources = %sources.join(", "),
        template = %template,
        interval = interval.as_deref(),
        posting = %posting,
        announce_before = %config.schedule.lead,
        timezone = %config.schedule.zone,
        "starting"
    );
    // Read only when set, for a command that posts nothing (see `channels::Secrets`).
    if let Some(file) = config.posting.channels.file() {
        let unset: Vec<String> = file
            .channels
            .iter()
            .filter(|c| !c.has_secrets())
            .map(|c| format!("{} ({})", c.name, c.unset_secrets.join(", ")))
            .collect();
        if !unset.is_empty() {
            tracing::info!(
                unset = %unset.join(", "),
                "this command posts nothing, so it does not need the channels' secrets; those not set are skipped"
            );
        }
    }
}
