//! The binary's commands: turn a parsed [`Cli`] into work and an exit code. `anyhow` lives here
//! and in `App::build`, at the edge.

use anyhow::Context;
use cricket_announcer::announcer::Output;
use cricket_announcer::app::{open_store, App};
use cricket_announcer::claim::ListedClaim;
use cricket_announcer::cli::{ClaimsCommand, Cli, Command};
use cricket_announcer::config::{Config, Needs};
use cricket_announcer::cricket::MatchKey;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Exit code of a backfill that ran but could not read every source or had to stop posting.
const EXIT_INCOMPLETE: u8 = 1;

pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let posts = matches!(cli.command, Command::Run | Command::Backfill) && !cli.dry_run;
    let needs = if posts { Needs::Posting } else { Needs::NoPosting };
    let config = Config::from_settings(&cli.settings, &cli.source, needs, cli.dry_run, cli.shorten, cli.json)?;
    let stdout: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    match cli.command {
        Command::Run => {
            let app = App::build(&config, stdout).await?;
            let cancel = CancellationToken::new();
            tokio::spawn(cancel_on_signal(cancel.clone()));
            app.run_until_cancelled(cancel).await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Backfill => {
            let app = App::build(&config, stdout).await?;
            let (summary, ok) = app.backfill().await;
            if config.json {
                println!("{}", serde_json::json!({ "summary": summary, "ok": ok }));
            } else {
                println!("backfill: {}", summary.line(config.dry_run));
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_INCOMPLETE)
            })
        }
        Command::Claims { action } => {
            let store = open_store(&config).await?;
            let claims = match &action {
                ClaimsCommand::List => store.list().await?,
                ClaimsCommand::Show { key } => {
                    let key = MatchKey::parse(key).with_context(|| format!("{key:?} is not a match key"))?;
                    let claim = store.peek(&key).await?.with_context(|| format!("no claim on {key}"))?;
                    let ttl = store.ttl(&key).await?;
                    vec![ListedClaim { key, claim, ttl }]
                }
            };
            print_claims(&claims, config.json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_claims(claims: &[ListedClaim], json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        for c in claims {
            let line = serde_json::json!({
                "key": c.key,
                "claim": c.claim,
                "ttl_secs": c.ttl.map(|t| t.as_secs()),
            });
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{:<50} {:<8} {:<24} {:<20} {:>9}  TWEET / DETAIL",
        "MATCH KEY", "STATE", "OWNER", "SINCE (UTC)", "TTL (s)"
    )?;
    for c in claims {
        writeln!(
            out,
            "{:<50} {:<8} {:<24} {:<20} {:>9}  {}",
            c.key.as_str(),
            c.claim.state.as_str(),
            c.claim.owner,
            c.claim.claimed_at.format("%Y-%m-%d %H:%M:%S"),
            c.ttl.map(|t| t.as_secs().to_string()).unwrap_or_else(|| "-".into()),
            c.claim.tweet_id.as_deref().or(c.claim.detail.as_deref()).unwrap_or("")
        )?;
    }
    Ok(())
}

/// Cancels `cancel` on SIGINT or SIGTERM. The cycle stops between matches; a post in flight
/// finishes and records its state.
async fn cancel_on_signal(cancel: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error.message = %e, "cannot listen for SIGTERM; only Ctrl-C stops the bot");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("signal received; finishing the current match, then stopping");
    cancel.cancel();
}
