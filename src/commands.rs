//! The binary's commands: turn a parsed [`Cli`] into work and an exit code. `anyhow` lives here
//! and in `App::build`, at the edge.

use crate::tables::{self, Column};
use anyhow::Context;
use chrono::Utc;
use cricket_announcer::announcer::{ClaimPolicy, Output};
use cricket_announcer::app::{
    channel_claims, check_eviction, check_sources, open_store, open_store_for, Access, App, Summary,
};
use cricket_announcer::claim::{
    known_time, ClaimError, ClaimState, EvictionSafety, ListedClaim, OperatorRelease, PostgresClaims, PostgresError,
};
use cricket_announcer::cli::{ClaimsCommand, Cli, Command};
use cricket_announcer::config::{Config, ConfigError, Invocation, Needs, Printing, Sending, StoreConfig};
use cricket_announcer::cricket::Identity;
use cricket_announcer::reconcile::{Decision, Settled};
use cricket_announcer::status;
use cricket_announcer::telemetry::CauseChain;
use cricket_announcer::template::{TemplateError, BUILT_IN_NAME};
use cricket_announcer::text::escaped;
use secrecy::ExposeSecret;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

// Exit codes, one table for every command (README, "Exit codes"). When several apply, the
// first in this order wins: 2, 4, 1, 5 (3 is `claims release` only).

/// Done: every source read, the store answered, nothing refused, every post made.
const EXIT_OK: u8 = 0;
/// An error (named on stderr), or a command that ran but did not complete: a source that
/// could not be read, a store that did not answer, a dry run whose output could not be
/// written, a `run` whose shutdown grace ran out with work in flight.
const EXIT_INCOMPLETE: u8 = 1;
/// The command line, `.env`, or the value of an option or variable cannot be used (clap's own
/// code for usage errors).
const EXIT_USAGE: u8 = 2;
/// An operator command refused (releasing a healthy claim, or a value the bot did not write).
const EXIT_REFUSED: u8 = 3;
/// The bot refused to post: the store was never initialised, it lost its data, or posting
/// halted (X refused the credentials or the account). `run` exits with it at once.
const EXIT_NOT_POSTING: u8 = 4;
/// A `backfill` (or `run --cycles`) in which a post failed or its outcome is unknown.
const EXIT_POSTS_FAILED: u8 = 5;

/// A usage error found after parsing: a value clap could not check (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

/// Loads `.env` (from the working directory or the nearest parent that has one, as dotenvy
/// looks) without overriding the environment.
///
/// # Errors
/// The exit code after saying on stderr what is wrong with the file: its line number and
/// variable name, never its value (the line may hold a secret).
pub fn load_dotenv() -> Result<(), ExitCode> {
    let Some(path) = find_dotenv() else {
        return Ok(());
    };
    // Named as the user would: `.env` in the working directory, else its path.
    let shown = match std::env::current_dir() {
        Ok(cwd) if path == cwd.join(".env") => ".env".to_string(),
        _ => path.display().to_string(),
    };
    let fail = |why: String| {
        // Written, not `eprintln!`ed: that panics when stderr is a closed pipe.
        let _ = writeln!(std::io::stderr(), "error: cannot read {shown}: {why}");
        Err(ExitCode::from(EXIT_USAGE))
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return fail(e.to_string()),
    };
    // A NUL byte cannot be put in the environment (the standard library panics, quoting the
    // value): refused here, by line.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let text = String::from_utf8_lossy(&bytes);
        let name = text.lines().nth(line).map(variable_of).unwrap_or_default();
        return fail(format!("line {}{name} contains a NUL byte; remove it", line + 1));
    }
    match dotenvy::from_path(&path) {
        Ok(()) => Ok(()),
        Err(e) => fail(describe_env_error(&e, &String::from_utf8_lossy(&bytes))),
    }
}

/// The `.env` dotenvy would load: in the working directory or its nearest ancestor.
fn find_dotenv() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().map(|d| d.join(".env")).find(|p| p.is_file())
}

/// ` (NAME)` for a `.env` line `NAME=…` whose name is readable, else nothing (never a guess).
fn variable_of(line: &str) -> String {
    let v = line
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
        .trim_start_matches("export ")
        .trim();
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!(" ({v})")
    } else {
        String::new()
    }
}

/// A malformed `.env` (whose text is `text`) described by its line number and variable name,
/// never its value.
fn describe_env_error(e: &dotenvy::Error, text: &str) -> String {
    match e {
        dotenvy::Error::LineParse(fragment, _) => {
            // The fragment is the text dotenvy was reading: from the failing line to the end
            // of the file when a quote is left open, and with its newline. Its first line is
            // the line that failed.
            let first = fragment.lines().next().unwrap_or("").trim_end();
            let found = text
                .lines()
                .enumerate()
                .find(|(_, l)| !first.is_empty() && l.contains(first));
            match found {
                Some((n, l)) => format!(
                    "line {}{} cannot be parsed (check its quotes; values with spaces need quotes)",
                    n + 1,
                    variable_of(l)
                ),
                None => "a line cannot be parsed (check its quotes; values with spaces need quotes)".to_string(),
            }
        }
        dotenvy::Error::Io(io) => io.to_string(),
        _ => "the file cannot be parsed".to_string(),
    }
}

/// The exit code of a command's result, saying on stderr what went wrong. A closed stdout
/// (`claims list | head -1`) is not an error: the reader had what it wanted.
pub fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    let e = match result {
        Ok(code) => return code,
        Err(e) => e,
    };
    let closed_stdout = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if closed_stdout {
        return ExitCode::SUCCESS;
    }
    // `downcast_ref` also finds a `Usage` given as context, which `chain` shows only as text.
    let usage = e.downcast_ref::<Usage>().is_some()
        || e.chain().any(|c| {
            c.is::<ConfigError>()
                || c.is::<TemplateError>()
                || c.is::<Usage>()
                || c.is::<cricket_announcer::channels::ChannelsError>()
                || c.downcast_ref::<cricket_announcer::app::StartError>()
                    .is_some_and(cricket_announcer::app::StartError::is_bad_setting)
        });
    // One line, on stderr: the cause chain without repeats, never a backtrace. Written, not
    // `eprintln!`ed: that panics when stderr is a closed pipe (`… 2>&1 | head`).
    let text = CauseChain(e.as_ref()).to_string();
    let _ = writeln!(std::io::stderr(), "error: {}", escaped(&text));
    ExitCode::from(if usage { EXIT_USAGE } else { EXIT_INCOMPLETE })
}

/// Runs the command `cli` names.
pub async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
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
        return Err(Usage("--shorten applies to a dry run of run or backfill only (a real post always shortens when SHORTENER is set)".into()).into());
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
    let stdout: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let reads_sources = !matches!(cli.command, Command::Claims { .. });
    if reads_sources && config.sources.specs.is_empty() {
        return Err(Usage("no sources: set SOURCES or pass --source (KIND=LOCATION or LOCATION)".into()).into());
    }
    match cli.command {
        Command::Run { init_store, cycles } => {
            log_startup("run", &config);
            run(&config, stdout, init_store, cycles).await
        }
        Command::Backfill { init_store } => {
            log_startup("backfill", &config);
            let app = App::build(&config, stdout).await?;
            if init_store && !config.dry_run() {
                app.init_store().await?;
            }
            // A signal stops the pass as it stops `run`: between matches, never inside one.
            let cancel = CancellationToken::new();
            let pass = app.backfill_until_cancelled(&cancel);
            tokio::pin!(pass);
            let (summary, ok) = tokio::select! {
                done = &mut pass => done,
                _ = wait_for_signal() => {
                    tracing::info!(grace_secs = config.service.shutdown_grace.as_secs(), "signal received; finishing the current match, then stopping");
                    cancel.cancel();
                    match tokio::time::timeout(config.service.shutdown_grace, &mut pass).await {
                        Ok(done) => done,
                        Err(_) => {
                            tracing::error!(
                                grace_secs = config.service.shutdown_grace.as_secs(),
                                "work still in flight when SHUTDOWN_GRACE_SECS ran out; exiting anyway: a claim being posted stays `claimed` and will show as stuck (check `claims list --state stuck`)"
                            );
                            return Ok(ExitCode::from(EXIT_INCOMPLETE));
                        }
                    }
                }
            };
            if cancel.is_cancelled() {
                tracing::info!("stopped by the signal; the matches not reached are left for the next pass");
            }
            print_summary("backfill", &summary, ok, &config);
            let refused = refused_to_post(&app, &summary, &config).await;
            Ok(ExitCode::from(if refused {
                EXIT_NOT_POSTING
            } else if !ok {
                EXIT_INCOMPLETE
            } else if summary.failed > 0 {
                EXIT_POSTS_FAILED
            } else {
                EXIT_OK
            }))
        }
        Command::Seed { channel } => {
            // A mistyped channel is a usage error, found before anything is opened.
            if let Some(name) = channel.as_deref() {
                let names = channel_names(&config);
                if !names.contains(&name) {
                    return Err(Usage(format!(
                        "no channel {:?} (channels: {})",
                        escaped(name),
                        names.join(", ")
                    ))
                    .into());
                }
            }
            log_startup("seed", &config);
            let app = App::build(&config, stdout).await?;
            if config.dry_run() {
                return seed_dry_run(&app, &config).await;
            }
            let summary = app.seed(channel.as_deref()).await?;
            let ok = summary.sources_failed == 0;
            print_summary("seed", &summary, ok, &config);
            Ok(ExitCode::from(if ok { EXIT_OK } else { EXIT_INCOMPLETE }))
        }
        Command::CheckSources { wide } => {
            let checks = check_sources(&config).await?;
            let store = check_store(&config).await;
            let ok = checks.iter().all(|c| c.status == "ok") && store.as_ref().is_none_or(|(_, s)| s.is_ok());
            let mut text = if config.json() {
                checks
                    .iter()
                    .map(|c| serde_json::to_string(c).map(|l| l + "\n"))
                    .collect::<Result<String, _>>()?
            } else {
                check_table(&checks, wide)
            };
            match (&store, config.json()) {
                (Some((kind, store)), true) => {
                    let status = store.as_ref().map_or_else(|e| e.clone(), |safe| format!("ok ({safe})"));
                    text.push_str(&format!(
                        "{}\n",
                        serde_json::json!({ "store": kind, "ok": store.is_ok(), "status": status })
                    ));
                }
                (Some((kind, Ok(safe))), false) => text.push_str(&format!("store {kind}: ok ({safe})\n")),
                (Some((kind, Err(e))), false) => text.push_str(&format!("store {kind}: ERROR: {e}\n")),
                (None, _) => {}
            }
            write_stdout(&text)?;
            Ok(ExitCode::from(if ok { EXIT_OK } else { EXIT_INCOMPLETE }))
        }
        Command::Claims { action, channel } => {
            if config.dry_run() && matches!(action, ClaimsCommand::Release { .. }) {
                return Err(Usage(
                    "claims release deletes a claim by design; it has no dry run (use `claims show` to look)".into(),
                )
                .into());
            }
            // A match key, or any identity a claim recorded (`cricbuzz:158062`, `key:2026-07-17_…`).
            let parse_key = |key: &str| {
                Identity::named(key).with_context(|| Usage(format!("{:?} is not a match key", escaped(key))))
            };
            // A mistyped key is a usage error, whatever the store.
            if let ClaimsCommand::Show { key, .. } | ClaimsCommand::Release { key, .. } = &action {
                parse_key(key)?;
            }
            // Opening would create an empty store, and a mistyped path would then read as
            // "no claims": the claims commands only ever look at a store that exists.
            if let StoreConfig::Embedded(path) = &config.store.backend {
                if !path.exists() {
                    anyhow::bail!(
                        "no embedded store at STORE_PATH={}: nothing was ever claimed there (is the path right?)",
                        path.display()
                    );
                }
            }

            // Listing and showing read; only `release` and `reconcile` write.
            let access = match action {
                ClaimsCommand::List { .. } | ClaimsCommand::Show { .. } => Access::ReadOnly,
                _ => Access::ReadWrite,
            };
            let base = open_store_for(&config, access).await?;
            let stuck_after = ClaimPolicy::new(
                config.store.claim_ttl,
                config.posting.max_post_attempts,
                config.send_bound(),
            )
            .stuck_after;
            let names = channel_names(&config);
            if let Some(name) = channel.as_deref().filter(|n| !names.contains(n)) {
                return Err(Usage(format!(
                    "no channel {:?} (channels: {})",
                    escaped(name),
                    names.join(", ")
                ))
                .into());
            }
            if let ClaimsCommand::Reconcile = action {
                return reconcile(&config, &base, channel.as_deref(), stuck_after).await;
            }
            // One channel's claims: the named one, or the only one.
            let name = match channel.as_deref() {
                Some(name) => name,
                None if names.len() == 1 => names[0],
                None => {
                    return Err(Usage(format!(
                        "name the channel whose claims to read: --channel NAME (channels: {})",
                        names.join(", ")
                    ))
                    .into())
                }
            };
            let store = channel_claims(&base, &config.posting.channels, name);
            match action {
                ClaimsCommand::List { state, wide } => {
                    let now = Utc::now();
                    let claims: Vec<ListedClaim> = store
                        .list()
                        .await?
                        .into_iter()
                        .filter(|c| state.is_none_or(|s| c.claim.display_state(now, stuck_after) == s))
                        .collect();
                    if claims.is_empty() && !config.json() {
                        let which = state.map(|s| format!(" in state {}", s.as_str())).unwrap_or_default();
                        write_stdout(&format!("no claims{which} (store {})\n", store_label(&config)))?;
                        return Ok(ExitCode::SUCCESS);
                    }
                    print_claims(&claims, config.json(), stuck_after, wide)?;
                    Ok(ExitCode::SUCCESS)
                }
                ClaimsCommand::Show { key, wide } => {
                    let asked = parse_key(&key)?;
                    let (key, claim) = store
                        .peek_identity(&asked)
                        .await?
                        .with_context(|| format!("no claim on {} (as a match key or an identity)", key.trim()))?;
                    let ttl = store.ttl(&key).await?;
                    let identities: Vec<String> = claim.aliases.iter().map(|a| escaped(a).into_owned()).collect();
                    print_claims(&[ListedClaim { key, claim, ttl }], config.json(), stuck_after, wide)?;
                    if !config.json() {
                        // Every identity the claim holds the match under (its sources' ids, its
                        // keys): a sighting with any of them is this match.
                        write_stdout(&format!("identities: {}\n", identities.join(", ")))?;
                    }
                    Ok(ExitCode::SUCCESS)
                }
                // Answered above, for every channel.
                ClaimsCommand::Reconcile => Ok(ExitCode::SUCCESS),
                ClaimsCommand::Release { key, force } => {
                    let asked = parse_key(&key)?;
                    // As `show`: a match key, or any identity a claim recorded.
                    let Some((key, _)) = store.peek_identity(&asked).await? else {
                        anyhow::bail!("no claim on {}", key.trim());
                    };
                    match store.operator_release(&key, force, stuck_after).await? {
                        OperatorRelease::Released(c) => {
                            // A posted match that is still listed will be announced again.
                            let warning = if c.state == ClaimState::Posted {
                                "; it was posted, and will be posted again if a source still lists it"
                            } else {
                                ""
                            };
                            write_stdout(&format!(
                                "released {key} (was {}, owner {}){warning}\n",
                                c.display_state(Utc::now(), stuck_after),
                                escaped(&c.owner)
                            ))?;
                            Ok(ExitCode::SUCCESS)
                        }
                        OperatorRelease::Refused(c) => {
                            // A live claim becomes releasable at its owner's deadline: say when.
                            let when = if c.state == ClaimState::Claimed {
                                let at = c.stuck_at(stuck_after);
                                let wait = (at - Utc::now()).num_seconds().max(0);
                                format!(
                                    "; its owner gives up at {} (in {wait} s), then it is stuck and can be released",
                                    at.format("%Y-%m-%dT%H:%M:%SZ")
                                )
                            } else {
                                String::new()
                            };
                            let _ = writeln!(
                                std::io::stderr(),
                                "refused: {key} is {} (owner {}); only unknown, failed or stuck claims are released without --force{when}",
                                c.display_state(Utc::now(), stuck_after),
                                escaped(&c.owner)
                            );
                            Ok(ExitCode::from(EXIT_REFUSED))
                        }
                        OperatorRelease::Absent => anyhow::bail!("no claim on {key}"),
                        OperatorRelease::NotARecord(c) => {
                            let _ = writeln!(
                                std::io::stderr(),
                                "refused: {key} holds a value cricket-announcer did not write ({}); it deletes only its own records (by their token): remove this one with the store's own tools (Redis: DEL the key ending in match:{key})",
                                escaped(c.detail.as_deref().unwrap_or("not a claim record"))
                            );
                            Ok(ExitCode::from(EXIT_REFUSED))
                        }
                    }
                }
            }
        }
    }
}

/// `check-sources` for people: a row per source (source, matches found, `ok` or `ERROR`),
/// each followed, indented, by the first matches it lists (one a line, cut to fit) or by its
/// error (wrapped, never cut: its end often says what went wrong).
fn check_table(checks: &[cricket_announcer::app::SourceCheck], wide: bool) -> String {
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            let status = if c.status == "ok" { "ok" } else { "ERROR" };
            vec![c.source.clone(), c.matches.to_string(), status.to_string()]
        })
        .collect();
    let columns = [
        Column::cut("SOURCE", 24),
        Column::number("MATCHES"),
        Column::fixed("STATUS / FIRST MATCHES"),
    ];
    let table = tables::render(&columns, &rows, wide);
    let mut lines = table.lines();
    let mut out = format!("{}\n", lines.next().unwrap_or_default());
    for (line, c) in lines.zip(checks) {
        out.push_str(line);
        out.push('\n');
        if c.status != "ok" {
            for part in tables::wrap(&escaped(&c.status), tables::WIDTH - 2) {
                out.push_str(&format!("  {part}\n"));
            }
        }
        for m in &c.first {
            let shown = format!("  {}", escaped(m));
            let shown = if wide {
                shown
            } else {
                tables::cut(&shown, tables::WIDTH)
            };
            out.push_str(&shown);
            out.push('\n');
        }
    }
    out
}

/// Whether this bot refused to post: posting halted, or (outside dry run) the store is not
/// initialised or lost its data. A store that did not answer is not a refusal: it may answer
/// next time.
async fn refused_to_post(app: &App, summary: &Summary, config: &Config) -> bool {
    use cricket_announcer::app::StoreReadiness;
    // A channel that halted (credentials, a deleted webhook) needs the operator, even while the
    // others post.
    app.any_halted()
        || (!config.dry_run()
            && summary.refused.is_some()
            && matches!(
                app.readiness().await,
                Ok(StoreReadiness::NotInitialised | StoreReadiness::Wiped)
            ))
}

/// `seed --dry-run`: what `seed` would record, read from the sources and the store, writing
/// nothing.
async fn seed_dry_run(app: &App, config: &Config) -> anyhow::Result<ExitCode> {
    let mut summary = Summary::default();
    let sightings = app.read_sources(&mut summary).await;
    let store = app.announcer().store();
    let mut out = String::new();
    for s in &sightings {
        if s.m.has_placeholder_team() {
            summary.not_announceable += 1;
            continue;
        }
        let title = s.m.claim_title();
        // Held through any identity, as the claim step would find it.
        let found = store.find(&s.ids).await?;
        let key = found.as_ref().map_or(&s.ids.key, |(k, _, _)| k).clone();
        let held = found.map(|(_, c, _)| c);
        if held.is_some() {
            summary.skipped += 1;
        } else {
            summary.seeded += 1;
        }
        let line = match (&held, config.json()) {
            (None, true) => {
                serde_json::json!({ "would_record": key, "title": title, "aliases": s.ids.ids }).to_string()
            }
            (Some(c), true) => {
                serde_json::json!({ "already_claimed": key, "title": title, "state": c.state, "owner": c.owner })
                    .to_string()
            }
            (None, false) => format!("would record {key}  {}", escaped(&title)),
            (Some(c), false) => format!(
                "already claimed {key}  {} ({}, owner {})",
                escaped(&title),
                c.state,
                escaped(&c.owner)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let marker = store.marker().await?;
    let ok = summary.sources_failed == 0;
    if config.json() {
        let line =
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": true, "initialised": marker.is_some() });
        out.push_str(&format!("{line}\n"));
    } else {
        let then = match (&marker, ok) {
            (Some(m), _) => format!("the store is already initialised (by {}, {})", escaped(&m.by), m.how),
            (None, true) => "then it would mark the store initialised".into(),
            (None, false) => "a source failed, so it would not mark the store initialised".into(),
        };
        out.push_str(&format!(
            "seed (dry run, nothing written): sources read {}, failed {}; matches seen {}, not announceable {}; would record {}, already claimed {}; {then}\n",
            summary.sources_read,
            summary.sources_failed,
            summary.matches_seen,
            summary.not_announceable,
            summary.seeded,
            summary.skipped
        ));
    }
    write_stdout(&out)?;
    Ok(ExitCode::from(if ok { EXIT_OK } else { EXIT_INCOMPLETE }))
}

/// The channels' names: the channels file's, or the environment's X channel (`x`) without one.
fn channel_names(config: &Config) -> Vec<&str> {
    config.posting.channels.names()
}

/// `claims reconcile`: the named channel, or every channel, each the way its platform can be
/// asked (see [`cricket_announcer::reconcile::reconcile`]).
async fn reconcile(
    config: &Config,
    base: &cricket_announcer::claim::ClaimStore,
    channel: Option<&str>,
    stuck_after: Duration,
) -> anyhow::Result<ExitCode> {
    if config.dry_run() {
        return Err(Usage(
            "claims reconcile records what the platform says; it has no dry run (use `claims list --state unknown` to look)"
                .into(),
        )
        .into());
    }
    let mut decisions = Vec::new();
    let channels = &config.posting.channels;
    for c in channels
        .channels()
        .iter()
        .filter(|c| channel.is_none_or(|n| n == c.name))
    {
        let sink = c.sink(
            config.posting.post_timeout,
            cricket_announcer::source::fetch::CONNECT_TIMEOUT,
        )?;
        let store = channel_claims(base, channels, &c.name);
        decisions.extend(cricket_announcer::reconcile::reconcile(&store, &sink, stuck_after).await?);
    }
    print_decisions(&decisions, config.json(), &store_label(config))?;
    let asked_all = decisions.iter().all(|d| !matches!(d.outcome, Settled::NotAsked { .. }));
    Ok(ExitCode::from(if asked_all { EXIT_OK } else { EXIT_INCOMPLETE }))
}

/// `claims reconcile`'s report: one line (or JSON object) per claim it looked at.
fn print_decisions(decisions: &[Decision], json: bool, store: &str) -> std::io::Result<()> {
    if decisions.is_empty() && !json {
        return write_stdout(&format!("no unknown or stuck claims (store {store})\n"));
    }
    let mut out = String::new();
    for d in decisions {
        let (result, detail) = match &d.outcome {
            Settled::Posted { id } => ("posted", id.clone()),
            Settled::StillUnknown { found } => ("not found", found.clone()),
            Settled::Changed { state } => ("changed", format!("now {state}; left alone")),
            Settled::Waiting { until } => (
                "waiting",
                format!(
                    "the platform may still be saving the last send: repeated from {} on; left alone",
                    until.format("%Y-%m-%dT%H:%M:%SZ")
                ),
            ),
            Settled::Repeating { by, until } => (
                "being repeated",
                format!("by {by} until {}; left alone", until.format("%Y-%m-%dT%H:%M:%SZ")),
            ),
            Settled::NotAsked { why } => ("not asked", why.clone()),
        };
        if json {
            out.push_str(
                &serde_json::json!({ "key": d.key.as_str(), "was": d.was, "result": result, "detail": detail })
                    .to_string(),
            );
            out.push('\n');
        } else {
            out.push_str(&format!("{} ({}): {result}: {}\n", d.key, d.was, escaped(&detail)));
        }
    }
    write_stdout(&out)
}

/// Where claims are kept, as it may be shown: a URL's host, port and path only (no user,
/// password or options), or the embedded file.
fn store_label(config: &Config) -> String {
    let url = |kind: &str, raw: &str| match url::Url::parse(raw) {
        Ok(u) => format!(
            "{kind} {}://{}{}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default(),
            u.path()
        ),
        Err(_) => format!("{kind} (URL hidden)"),
    };
    match &config.store.backend {
        StoreConfig::Redis(u) => url("redis", u.expose_secret()),
        StoreConfig::Postgres(u) => url("postgres", u.expose_secret()),
        StoreConfig::Embedded(path) => format!("embedded {}", path.display()),
    }
}

/// The one line saying what this process is about to do, with what: version, store, sources
/// (credentials hidden), template, poll interval and posting mode.
fn log_startup(command: &str, config: &Config) {
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

/// Writes `text` to stdout. A closed stdout (`| head -1`) is not an error for a table: the
/// reader had what it wanted.
fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `check-sources`' look at the store, Redis only (the other stores keep what they are given):
/// can it evict claims? `None` for the other stores; the error's text when the bot would refuse
/// to post (or cannot connect).
async fn check_store(config: &Config) -> Option<(&'static str, Result<String, String>)> {
    match &config.store.backend {
        StoreConfig::Redis(_) => Some((
            "redis",
            match open_store(config).await {
                Ok(store) => check_eviction(&store, config.store.redis.eviction_policy_asserted)
                    .await
                    .map(|safe: EvictionSafety| safe.to_string())
                    .map_err(|e| CauseChain(&e).to_string()),
                Err(e) => Err(CauseChain(&e).to_string()),
            },
        )),
        // Read only: checking never creates the ledger (a mistyped schema would get one).
        StoreConfig::Postgres(url) => Some((
            "postgres",
            match PostgresClaims::connect_read_only(
                url.expose_secret(),
                &config.store.key_prefix,
                &config.store.instance_id,
                config.store.database_ca_file.as_deref(),
            )
            .await
            {
                Ok(_) => Ok(format!("claims ledger found ({})", store_label(config))),
                Err(ClaimError::Postgres {
                    source: PostgresError::NoLedger { schema },
                    ..
                }) => Ok(format!(
                    "connected ({}); no claims ledger yet in schema {schema}: `seed` or `run --init-store` makes it",
                    store_label(config)
                )),
                Err(e) => Err(CauseChain(&e).to_string()),
            },
        )),
        // Its file is made by the first command that writes; reading it here would make it.
        StoreConfig::Embedded(path) => Some((
            "embedded",
            match std::fs::metadata(path) {
                Ok(m) if m.is_file() => Ok(format!("STORE_PATH={}", path.display())),
                Ok(_) => Err(format!("STORE_PATH={} is not a regular file", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(format!(
                    "STORE_PATH={}, not made yet: `seed` or `run` makes it",
                    path.display()
                )),
                Err(e) => Err(format!("cannot read STORE_PATH={}: {e}", path.display())),
            },
        )),
    }
}

/// `run`: the poll loop and, with METRICS_ADDR, the status endpoint, as tracked tasks. A
/// signal (or the cycle limit) cancels both; the loop stops between matches, so a post in
/// flight finishes and records its state, within SHUTDOWN_GRACE_SECS.
async fn run(config: &Config, stdout: Output, init_store: bool, cycles: Option<u64>) -> anyhow::Result<ExitCode> {
    let app = Arc::new(App::build(config, stdout).await?);
    if init_store && !config.dry_run() {
        app.init_store().await?;
    }
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    if let Some(addr) = config.service.metrics_addr {
        let metrics = status::install_recorder()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on METRICS_ADDR={addr}"))?;
        tracing::info!(addr = %listener.local_addr().unwrap_or(addr), "serving /metrics and /healthz");
        tracker.spawn(status::serve(listener, metrics, app.clone(), cancel.clone()));
    }
    let polling = tracker.spawn({
        let (app, cancel) = (app.clone(), cancel.clone());
        async move {
            let end = app.run_until_cancelled(cancel.clone(), cycles).await;
            // The cycle limit was reached, a signal came, or posting was refused: stop the
            // status endpoint too.
            cancel.cancel();
            end
        }
    });
    tracker.close();
    tokio::select! {
        _ = wait_for_signal() => {
            tracing::info!(grace_secs = config.service.shutdown_grace.as_secs(), "signal received; finishing the current match, then stopping");
            cancel.cancel();
        }
        _ = cancel.cancelled() => {}
    }
    if tokio::time::timeout(config.service.shutdown_grace, tracker.wait())
        .await
        .is_err()
    {
        tracing::error!(
            grace_secs = config.service.shutdown_grace.as_secs(),
            "work still in flight when SHUTDOWN_GRACE_SECS ran out; exiting anyway: a claim being posted stays `claimed` and will show as stuck (check `claims list --state stuck`)"
        );
        return Ok(ExitCode::from(EXIT_INCOMPLETE));
    }
    let end = polling.await.unwrap_or_default();
    if let Some(why) = &end.refused {
        // Said once more as the last line: the cycle's own error may be far up the log.
        tracing::error!(reason = %why, "stopped: this bot may not post; exiting");
        return Ok(ExitCode::from(EXIT_NOT_POSTING));
    }
    // A bounded run (`--cycles N`) ends as a backfill does: 4 when a channel halted (while
    // the others went on), else 5 when a post failed; a scheduler running it must see it. A
    // service stopped by a signal had its failures logged as they came.
    if cycles.is_some() && app.any_halted() {
        tracing::error!("stopped: a channel may not post (see its error above)");
        return Ok(ExitCode::from(EXIT_NOT_POSTING));
    }
    if cycles.is_some() && end.failed_posts > 0 {
        tracing::warn!(
            failed_posts = end.failed_posts,
            "shut down; some posts failed or their outcome is unknown"
        );
        return Ok(ExitCode::from(EXIT_POSTS_FAILED));
    }
    tracing::info!("shut down cleanly");
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary line. A closed stdout is not an error here: the exit code still says how
/// the run went (and `println!` would panic on it).
fn print_summary(what: &str, summary: &Summary, ok: bool, config: &Config) {
    let mut out = std::io::stdout().lock();
    let _ = if config.json() {
        // `posted` counts the posts printed in a dry run; `dry_run` says which it was.
        writeln!(
            out,
            "{}",
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": config.dry_run() })
        )
    } else {
        writeln!(out, "{what}: {}", summary.line(config.dry_run()))
    };
}

fn print_claims(claims: &[ListedClaim], json: bool, stuck_after: Duration, wide: bool) -> anyhow::Result<()> {
    let now = Utc::now();
    if json {
        let mut text = String::new();
        for c in claims {
            let line = serde_json::json!({
                "key": c.key,
                "state": c.claim.display_state(now, stuck_after),
                "claim": c.claim,
                "ttl_secs": c.ttl.map(|t| t.as_secs()),
            });
            text.push_str(&format!("{line}\n"));
        }
        return Ok(write_stdout(&text)?);
    }
    // Owner, title and detail come from the store, written by any process that could reach
    // it: escaped, so they cannot drive the terminal or forge a row.
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|c| {
            vec![
                c.key.as_str().to_string(),
                c.claim.display_state(now, stuck_after).to_string(),
                escaped(&c.claim.owner).into_owned(),
                known_time(c.claim.claimed_at)
                    .map_or_else(|| "-".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
                c.ttl.map(|t| t.as_secs().to_string()).unwrap_or_else(|| "-".into()),
                escaped(&detail_cell(&c.claim)).into_owned(),
            ]
        })
        .collect();
    let columns = [
        Column::cut("MATCH KEY", 30),
        Column::fixed("STATE"),
        Column::cut("OWNER", 12),
        Column::fixed("SINCE (UTC)"),
        Column::number("TTL (s)"),
        Column::cut("TWEET / DETAIL", 16),
    ];
    Ok(write_stdout(&tables::render(&columns, &rows, wide))?)
}

/// The TWEET / DETAIL cell: the post's id; else, while a `claims reconcile` repeats its post,
/// who and until when; else, once `claims reconcile` checked it, when and what it found; else
/// the record's detail.
fn detail_cell(claim: &cricket_announcer::claim::Claim) -> String {
    if let Some(id) = &claim.post_id {
        return id.clone();
    }
    if let Some(replay) = claim.replay.as_ref().filter(|r| r.until > Utc::now()) {
        return format!(
            "being repeated by {} until {}",
            replay.by,
            replay.until.format("%Y-%m-%d %H:%M:%S")
        );
    }
    match (claim.checked_at, &claim.check) {
        (Some(at), Some(found)) => format!("checked {}: {found}", at.format("%Y-%m-%d %H:%M:%S")),
        _ => claim.detail.clone().unwrap_or_default(),
    }
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
