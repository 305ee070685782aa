//! The binary's commands: turn a parsed [`Cli`] into work and an exit code. `anyhow` lives here
//! and in `App::build`, at the edge.

use anyhow::Context;
use chrono::Utc;
use cricket_announcer::announcer::{ClaimPolicy, Output};
use cricket_announcer::app::{check_eviction, check_sources, open_store, App};
use cricket_announcer::claim::{known_time, ClaimState, EvictionSafety, ListedClaim, OperatorRelease};
use cricket_announcer::cli::{ClaimsCommand, Cli, Command};
use cricket_announcer::config::{Config, Needs, StoreConfig};
use cricket_announcer::cricket::MatchKey;
use cricket_announcer::status;
use cricket_announcer::telemetry::CauseChain;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Exit code of a backfill or seed that ran but could not read every source, hit store
/// errors, refused to post, or had to stop posting; and of a `run` whose shutdown grace ran
/// out with work in flight.
const EXIT_INCOMPLETE: u8 = 1;
/// Exit code of an operator command that was refused (e.g. releasing a healthy claim).
const EXIT_REFUSED: u8 = 3;

/// A malformed `.env` described by its line number and variable name, never its value (the
/// line may hold a secret).
pub fn describe_env_error(e: &dotenvy::Error) -> String {
    match e {
        dotenvy::Error::LineParse(fragment, _) => {
            let text = std::fs::read_to_string(".env").unwrap_or_default();
            // The fragment is the text dotenvy was reading: from the failing line to the end
            // of the file when a quote is left open, and with its newline. Its first line is
            // the line that failed.
            let first = fragment.lines().next().unwrap_or("").trim_end();
            let found = text
                .lines()
                .enumerate()
                .find(|(_, l)| !first.is_empty() && l.contains(first));
            let name = |l: &str| {
                let v = l
                    .split('=')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_start_matches("export ")
                    .trim();
                if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    format!(" ({v})")
                } else {
                    // No name can be read off the line: say nothing rather than guess.
                    String::new()
                }
            };
            match found {
                Some((n, l)) => format!(
                    "line {}{} cannot be parsed (check its quotes; values with spaces need quotes)",
                    n + 1,
                    name(l)
                ),
                None => "a line cannot be parsed (check its quotes; values with spaces need quotes)".to_string(),
            }
        }
        dotenvy::Error::Io(io) => io.to_string(),
        _ => "the file cannot be parsed".to_string(),
    }
}

/// The error and its causes on one line, skipping a cause whose text is already shown.
pub fn chain(e: &anyhow::Error) -> String {
    let e: &(dyn std::error::Error + 'static) = e.as_ref();
    CauseChain(e).to_string()
}

/// Runs the command `cli` names.
pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let posts = matches!(cli.command, Command::Run { .. } | Command::Backfill { .. }) && !cli.dry_run;
    let needs = if posts { Needs::Posting } else { Needs::NoPosting };
    let config = Config::from_settings(&cli.settings, &cli.source, needs, cli.dry_run, cli.shorten, cli.json)?;
    let stdout: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    match cli.command {
        Command::Run { init_store, cycles } => run(&config, stdout, init_store, cycles).await,
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
            if config.sources.is_empty() {
                anyhow::bail!("no sources: set SOURCES or pass --source (KIND=LOCATION or LOCATION)");
            }
            let checks = check_sources(&config).await?;
            let store = check_store(&config).await;
            let ok = checks.iter().all(|c| c.status == "ok") && store.as_ref().is_none_or(Result::is_ok);
            let mut out = std::io::stdout().lock();
            if config.json {
                for c in &checks {
                    writeln!(out, "{}", serde_json::to_string(c)?)?;
                }
                if let Some(store) = &store {
                    let status = store.as_ref().map_or_else(|e| e.clone(), |safe| format!("ok ({safe})"));
                    writeln!(out, "{}", serde_json::json!({ "store": "redis", "status": status }))?;
                }
            } else {
                let source_w = column_width("SOURCE", checks.iter().map(|c| c.source.as_str()));
                writeln!(out, "{:<source_w$} {:>7}  STATUS / FIRST MATCHES", "SOURCE", "MATCHES")?;
                for c in &checks {
                    let detail = if c.status == "ok" {
                        c.first.join("; ")
                    } else {
                        format!("ERROR: {}", c.status)
                    };
                    writeln!(out, "{:<source_w$} {:>7}  {}", c.source, c.matches, detail)?;
                }
                match &store {
                    Some(Ok(safe)) => writeln!(out, "store redis: ok ({safe})")?,
                    Some(Err(e)) => writeln!(out, "store redis: ERROR: {e}")?,
                    None => {}
                }
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_INCOMPLETE)
            })
        }
        Command::Claims { action } => {
            if config.dry_run && matches!(action, ClaimsCommand::Release { .. }) {
                anyhow::bail!(
                    "claims release deletes a claim by design; it has no dry run (use `claims show` to look)"
                );
            }
            // Opening would create an empty store, and a mistyped path would then read as
            // "no claims": the claims commands only ever look at a store that exists.
            if let StoreConfig::Embedded(path) = &config.store {
                if !path.exists() {
                    anyhow::bail!(
                        "no embedded store at STORE_PATH={}: nothing was ever claimed there (is the path right?)",
                        path.display()
                    );
                }
            }
            let store = open_store(&config).await?;
            let stuck_after =
                ClaimPolicy::new(config.claim_ttl, config.max_post_attempts, config.post_timeout).stuck_after;
            match action {
                ClaimsCommand::List { state } => {
                    const STATES: [&str; 6] = ["claimed", "posted", "unknown", "failed", "seeded", "stuck"];
                    if let Some(s) = state.as_deref().filter(|s| !STATES.contains(s)) {
                        anyhow::bail!("unknown state {s:?} for --state; expected one of {}", STATES.join(", "));
                    }
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
                            // A posted match that is still listed will be announced again.
                            let warning = if c.state == ClaimState::Posted {
                                "; it was posted, and will be posted again if a source still lists it"
                            } else {
                                ""
                            };
                            writeln!(
                                std::io::stdout(),
                                "released {key} (was {}, owner {}){warning}",
                                c.display_state(Utc::now(), stuck_after),
                                c.owner
                            )?;
                            Ok(ExitCode::SUCCESS)
                        }
                        OperatorRelease::Refused(c) => {
                            writeln!(
                                std::io::stderr(),
                                "refused: {key} is {} (owner {}); only unknown, failed or stuck claims are released without --force",
                                c.display_state(Utc::now(), stuck_after),
                                c.owner
                            )?;
                            Ok(ExitCode::from(EXIT_REFUSED))
                        }
                        OperatorRelease::Absent => anyhow::bail!("no claim on {key}"),
                        OperatorRelease::NotARecord(c) => {
                            writeln!(
                                std::io::stderr(),
                                "refused: {key} holds a value cricket-announcer did not write ({}); it deletes only its own records (by their token): remove this one with the store's own tools (Redis: DEL the key ending in match:{key})",
                                c.detail.as_deref().unwrap_or("not a claim record")
                            )?;
                            Ok(ExitCode::from(EXIT_REFUSED))
                        }
                    }
                }
            }
        }
    }
}

/// `check-sources`' look at the store, Redis only (the other stores keep what they are given):
/// can it evict claims? `None` for the other stores; the error's text when the bot would refuse
/// to post (or cannot connect).
async fn check_store(config: &Config) -> Option<Result<EvictionSafety, String>> {
    let StoreConfig::Redis(_) = config.store else {
        return None;
    };
    Some(match open_store(config).await {
        Ok(store) => check_eviction(&store, config.redis.eviction_policy_asserted)
            .await
            .map_err(|e| CauseChain(&e).to_string()),
        Err(e) => Err(chain(&e)),
    })
}

/// `run`: the poll loop and, with METRICS_ADDR, the status endpoint, as tracked tasks. A
/// signal (or the cycle limit) cancels both; the loop stops between matches, so a post in
/// flight finishes and records its state, within SHUTDOWN_GRACE_SECS.
async fn run(config: &Config, stdout: Output, init_store: bool, cycles: Option<u64>) -> anyhow::Result<ExitCode> {
    let app = Arc::new(App::build(config, stdout).await?);
    if init_store && !config.dry_run {
        app.init_store().await?;
    }
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    if let Some(addr) = config.metrics_addr {
        let metrics = status::install_recorder()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on METRICS_ADDR={addr}"))?;
        tracing::info!(addr = %listener.local_addr().unwrap_or(addr), "serving /metrics and /healthz");
        tracker.spawn(status::serve(listener, metrics, app.clone(), cancel.clone()));
    }
    tracker.spawn({
        let (app, cancel) = (app.clone(), cancel.clone());
        async move {
            app.run_until_cancelled(cancel.clone(), cycles).await;
            // The cycle limit was reached (or a signal came): stop the status endpoint too.
            cancel.cancel();
        }
    });
    tracker.close();
    tokio::select! {
        _ = wait_for_signal() => {
            tracing::info!(grace_secs = config.shutdown_grace.as_secs(), "signal received; finishing the current match, then stopping");
            cancel.cancel();
        }
        _ = cancel.cancelled() => {}
    }
    if tokio::time::timeout(config.shutdown_grace, tracker.wait())
        .await
        .is_err()
    {
        tracing::error!(
            grace_secs = config.shutdown_grace.as_secs(),
            "work still in flight when SHUTDOWN_GRACE_SECS ran out; exiting anyway: a claim being posted stays `claimed` and will show as stuck (check `claims list --state stuck`)"
        );
        return Ok(ExitCode::from(EXIT_INCOMPLETE));
    }
    tracing::info!("shut down cleanly");
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary line. A closed stdout is not an error here: the exit code still says how
/// the run went (and `println!` would panic on it).
fn print_summary(what: &str, summary: &cricket_announcer::app::Summary, ok: bool, config: &Config) {
    let mut out = std::io::stdout().lock();
    let _ = if config.json {
        // `posted` counts the posts printed in a dry run; `dry_run` says which it was.
        writeln!(
            out,
            "{}",
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": config.dry_run })
        )
    } else {
        writeln!(out, "{what}: {}", summary.line(config.dry_run))
    };
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
    // Columns as wide as their widest cell, so a long key or owner name does not push the
    // rest of its row out of line.
    let key_w = column_width("MATCH KEY", claims.iter().map(|c| c.key.as_str()));
    let state_w = column_width("STATE", claims.iter().map(|c| c.claim.display_state(now, stuck_after)));
    let owner_w = column_width("OWNER", claims.iter().map(|c| &*c.claim.owner));
    writeln!(
        out,
        "{:<key_w$} {:<state_w$} {:<owner_w$} {:<19} {:>8}  TWEET / DETAIL",
        "MATCH KEY", "STATE", "OWNER", "SINCE (UTC)", "TTL (s)"
    )?;
    for c in claims {
        writeln!(
            out,
            "{:<key_w$} {:<state_w$} {:<owner_w$} {:<19} {:>8}  {}",
            c.key.as_str(),
            c.claim.display_state(now, stuck_after),
            c.claim.owner,
            known_time(c.claim.claimed_at)
                .map_or_else(|| "-".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
            c.ttl.map(|t| t.as_secs().to_string()).unwrap_or_else(|| "-".into()),
            c.claim.tweet_id.as_deref().or(c.claim.detail.as_deref()).unwrap_or("")
        )?;
    }
    Ok(())
}

/// The width, in characters, of a column headed `header` holding `cells`.
fn column_width<'a>(header: &str, cells: impl Iterator<Item = &'a str>) -> usize {
    cells
        .map(|c| c.chars().count())
        .chain([header.chars().count()])
        .max()
        .unwrap_or(0)
}

/// Returns on SIGINT or SIGTERM.
async fn wait_for_signal() {
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
}
