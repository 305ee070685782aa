//! The binary's commands: turn a parsed [`Cli`] into work and an exit code. `anyhow` lives here
//! and in `App::build`, at the edge.

use anyhow::Context;
use chrono::Utc;
use cricket_announcer::announcer::{ClaimPolicy, Output};
use cricket_announcer::app::{check_sources, open_store, App};
use cricket_announcer::claim::{ListedClaim, OperatorRelease};
use cricket_announcer::cli::{ClaimsCommand, Cli, Command};
use cricket_announcer::config::{Config, Needs};
use cricket_announcer::cricket::MatchKey;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Exit code of a backfill or seed that ran but could not read every source, hit store
/// errors, refused to post, or had to stop posting.
const EXIT_INCOMPLETE: u8 = 1;
/// Exit code of an operator command that was refused (e.g. releasing a healthy claim).
const EXIT_REFUSED: u8 = 3;

/// Runs the command `cli` names.
pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let posts = matches!(cli.command, Command::Run { .. } | Command::Backfill { .. }) && !cli.dry_run;
    let needs = if posts { Needs::Posting } else { Needs::NoPosting };
    let config = Config::from_settings(&cli.settings, &cli.source, needs, cli.dry_run, cli.shorten, cli.json)?;
    let stdout: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    match cli.command {
        Command::Run { init_store } => {
            let app = App::build(&config, stdout).await?;
            if init_store && !config.dry_run {
                app.init_store().await?;
            }
            let cancel = CancellationToken::new();
            tokio::spawn(cancel_on_signal(cancel.clone()));
            app.run_until_cancelled(cancel).await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Backfill { init_store } => {
            let app = App::build(&config, stdout).await?;
            if init_store && !config.dry_run {
                app.init_store().await?;
            }
            let (summary, ok) = app.backfill().await;
            print_summary("backfill", &summary, ok, &config);
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_INCOMPLETE)
            })
        }
        Command::Seed => {
            if config.dry_run {
                anyhow::bail!(
                    "seed writes the store by design; it has no dry run (use `--dry-run backfill` to preview)"
                );
            }
            let app = App::build(&config, stdout).await?;
            let summary = app.seed().await?;
            let ok = summary.sources_failed == 0;
            print_summary("seed", &summary, ok, &config);
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_INCOMPLETE)
            })
        }
        Command::CheckSources => {
            let checks = check_sources(&config).await?;
            let ok = checks.iter().all(|c| c.status == "ok");
            let mut out = std::io::stdout().lock();
            if config.json {
                for c in &checks {
                    writeln!(out, "{}", serde_json::to_string(c)?)?;
                }
            } else {
                writeln!(out, "{:<60} {:>7}  STATUS / FIRST MATCHES", "SOURCE", "MATCHES")?;
                for c in &checks {
                    let detail = if c.status == "ok" {
                        c.first.join("; ")
                    } else {
                        format!("ERROR: {}", c.status)
                    };
                    writeln!(out, "{:<60} {:>7}  {}", c.source, c.matches, detail)?;
                }
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_INCOMPLETE)
            })
        }
        Command::Claims { action } => {
            let store = open_store(&config).await?;
            let stuck_after =
                ClaimPolicy::new(config.claim_ttl, config.max_post_attempts, config.post_timeout).stuck_after;
            match action {
                ClaimsCommand::List { state } => {
                    let now = Utc::now();
                    let claims: Vec<ListedClaim> = store
                        .list()
                        .await?
                        .into_iter()
                        .filter(|c| {
                            state
                                .as_deref()
                                .is_none_or(|s| c.claim.display_state(now, stuck_after) == s)
                        })
                        .collect();
                    print_claims(&claims, config.json, stuck_after)?;
                    Ok(ExitCode::SUCCESS)
                }
                ClaimsCommand::Show { key } => {
                    let key = MatchKey::parse(&key).with_context(|| format!("{key:?} is not a match key"))?;
                    let claim = store.peek(&key).await?.with_context(|| format!("no claim on {key}"))?;
                    let ttl = store.ttl(&key).await?;
                    print_claims(&[ListedClaim { key, claim, ttl }], config.json, stuck_after)?;
                    Ok(ExitCode::SUCCESS)
                }
                ClaimsCommand::Release { key, force } => {
                    let key = MatchKey::parse(&key).with_context(|| format!("{key:?} is not a match key"))?;
                    match store.operator_release(&key, force, stuck_after).await? {
                        OperatorRelease::Released(c) => {
                            println!(
                                "released {key} (was {}, owner {})",
                                c.display_state(Utc::now(), stuck_after),
                                c.owner
                            );
                            Ok(ExitCode::SUCCESS)
                        }
                        OperatorRelease::Refused(c) => {
                            eprintln!(
                                "refused: {key} is {} (owner {}); only unknown, failed or stuck claims are released without --force",
                                c.display_state(Utc::now(), stuck_after),
                                c.owner
                            );
                            Ok(ExitCode::from(EXIT_REFUSED))
                        }
                        OperatorRelease::Absent => anyhow::bail!("no claim on {key}"),
                    }
                }
            }
        }
    }
}

fn print_summary(what: &str, summary: &cricket_announcer::app::Summary, ok: bool, config: &Config) {
    if config.json {
        println!("{}", serde_json::json!({ "summary": summary, "ok": ok }));
    } else {
        println!("{what}: {}", summary.line(config.dry_run));
    }
}

fn print_claims(claims: &[ListedClaim], json: bool, stuck_after: Duration) -> anyhow::Result<()> {
    let now = Utc::now();
    let mut out = std::io::stdout().lock();
    if json {
        for c in claims {
            let line = serde_json::json!({
                "key": c.key,
                "state": c.claim.display_state(now, stuck_after),
                "claim": c.claim,
                "ttl_secs": c.ttl.map(|t| t.as_secs()),
            });
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{:<55} {:<8} {:<24} {:<20} {:>8}  TWEET / DETAIL",
        "MATCH KEY", "STATE", "OWNER", "SINCE (UTC)", "TTL (s)"
    )?;
    for c in claims {
        writeln!(
            out,
            "{:<55} {:<8} {:<24} {:<20} {:>8}  {}",
            c.key.as_str(),
            c.claim.display_state(now, stuck_after),
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
