//! Wiring and orchestration: [`App::build`] makes the concrete parts from a [`Config`];
//! [`App::cycle`] is one poll (read sources → dedupe by match → filter → announce);
//! [`App::backfill`] and [`App::run_until_cancelled`] are the two ways to run it.

use crate::announcer::{AnnounceError, Announcer, Mode, Outcome, Output};
use crate::claim::{ClaimStore, EmbeddedClaims, RedisClaims};
use crate::config::{Config, StoreConfig};
use crate::cricket::{Match, MatchKey};
use crate::post::XClient;
use crate::shorten::Shortener;
use crate::source::{self, fetch::Fetcher, SourceSpec};
use crate::template::Template;
use anyhow::Context;
use secrecy::ExposeSecret;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Share of the poll interval added as random jitter, so replicas do not poll in lockstep.
pub const POLL_JITTER_FRACTION: f64 = 0.1;

/// What one cycle (or a backfill) did. Printed as the backfill summary.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Sources read and parsed.
    pub sources_read: usize,
    /// Sources that failed (fetch, unknown kind, layout not recognised).
    pub sources_failed: usize,
    /// Distinct matches seen across all sources.
    pub matches_seen: usize,
    /// Matches not announced by rule (finished, or a team still TBC).
    pub not_announceable: usize,
    /// Posts made (in dry run: posts printed).
    pub posted: usize,
    /// Matches skipped because a claim exists.
    pub skipped: usize,
    /// Matches whose post failed or could not be processed.
    pub failed: usize,
}

impl Summary {
    /// One line for people: `sources read 1, failed 0; matches seen 9, …`.
    pub fn line(&self, dry_run: bool) -> String {
        format!(
            "sources read {}, failed {}; matches seen {}, not announceable {}; {} {}, skipped {}, failed {}",
            self.sources_read,
            self.sources_failed,
            self.matches_seen,
            self.not_announceable,
            if dry_run { "would post" } else { "posted" },
            self.posted,
            self.skipped,
            self.failed
        )
    }
}

/// The assembled bot.
pub struct App {
    sources: Vec<SourceSpec>,
    fetcher: Fetcher,
    announcer: Announcer,
    poll_interval: Duration,
    dry_run: bool,
}

/// Opens the store `config` names.
///
/// # Errors
/// When Redis cannot be reached or the embedded file cannot be opened.
pub async fn open_store(config: &Config) -> anyhow::Result<ClaimStore> {
    Ok(match &config.store {
        StoreConfig::Redis(url) => ClaimStore::Redis(
            RedisClaims::connect(url.expose_secret(), &config.key_prefix, &config.instance_id)
                .await
                .context("cannot connect to REDIS_URL")?,
        ),
        StoreConfig::Embedded(path) => ClaimStore::Embedded(
            EmbeddedClaims::open(path, &config.key_prefix, &config.instance_id)
                .with_context(|| format!("cannot open the embedded store STORE_PATH={}", path.display()))?,
        ),
    })
}

impl App {
    /// Builds the bot: opens the store, compiles the template, makes the HTTP clients. Dry-run
    /// posts are printed to `out`.
    ///
    /// # Errors
    /// Any part that cannot be made, with the setting that caused it.
    pub async fn build(config: &Config, out: Output) -> anyhow::Result<App> {
        if config.sources.is_empty() {
            anyhow::bail!("no sources: set SOURCES or pass --source (KIND=LOCATION or LOCATION)");
        }
        let template = Template::load(&config.template_path).context("TEMPLATE_PATH")?;
        let store = open_store(config).await?;
        let fetcher = Fetcher::new(
            config.fetch_max_bytes,
            source::fetch::CONNECT_TIMEOUT,
            source::fetch::TOTAL_TIMEOUT,
        )
        .map_err(anyhow::Error::msg)?;
        let shortener = match &config.shortener {
            Some(s) => Some(
                Shortener::new(s.provider.clone(), s.base.clone(), crate::shorten::SHORTEN_TIMEOUT)
                    .map_err(anyhow::Error::msg)?,
            ),
            None => None,
        };
        let mode = if config.dry_run {
            Mode::DryRun {
                out,
                json: config.json,
                shorten: config.shorten_in_dry_run,
            }
        } else {
            let credentials = config
                .x_credentials
                .clone()
                .context("X credentials are required outside dry run (X_API_KEY, X_API_SECRET, X_ACCESS_TOKEN, X_ACCESS_TOKEN_SECRET)")?;
            Mode::Live(
                XClient::new(
                    &config.x_api_base,
                    credentials,
                    config.post_timeout,
                    source::fetch::CONNECT_TIMEOUT,
                )
                .map_err(anyhow::Error::msg)?,
            )
        };
        Ok(App {
            sources: config.sources.clone(),
            fetcher,
            announcer: Announcer::new(store, template, shortener, mode, config.claim_ttl),
            poll_interval: config.poll_interval,
            dry_run: config.dry_run,
        })
    }

    /// The announcer (for tests and embedding).
    pub fn announcer(&self) -> &Announcer {
        &self.announcer
    }

    /// Reads every source (concurrently), returning the distinct matches in first-seen order.
    /// A failing source is logged at error level and counted; the others still run.
    pub async fn read_sources(&self, summary: &mut Summary) -> Vec<Match> {
        let reads = self.sources.iter().map(|spec| source::read(&self.fetcher, spec));
        let results = futures_join_all(reads).await;
        let mut seen: HashMap<MatchKey, usize> = HashMap::new();
        let mut matches: Vec<Match> = Vec::new();
        for (spec, result) in self.sources.iter().zip(results) {
            match result {
                Ok(found) => {
                    summary.sources_read += 1;
                    tracing::debug!(source = %spec, matches = found.len(), "source read");
                    for m in found {
                        let key = MatchKey::for_match(&m);
                        if let std::collections::hash_map::Entry::Vacant(slot) = seen.entry(key) {
                            slot.insert(matches.len());
                            matches.push(m);
                        }
                    }
                }
                Err(e) => {
                    summary.sources_failed += 1;
                    tracing::error!(source = %spec, error.message = %e, error.cause_chain = ?e, "source failed");
                }
            }
        }
        summary.matches_seen = matches.len();
        matches
    }

    /// One poll: read, dedupe, filter, announce each match in turn. Stops early (between
    /// matches, never inside one) when `cancel` fires or posting has halted.
    pub async fn cycle(&self, cancel: &CancellationToken) -> Summary {
        let mut summary = Summary::default();
        let matches = self.read_sources(&mut summary).await;
        for m in &matches {
            if cancel.is_cancelled() || self.announcer.halted().is_some() {
                break;
            }
            if !m.state.is_announceable() || m.has_placeholder_team() {
                summary.not_announceable += 1;
                continue;
            }
            match self.announcer.announce(m).await {
                Ok(Outcome::Posted(_)) | Ok(Outcome::WouldPost(_)) => summary.posted += 1,
                Ok(Outcome::Skipped { .. }) => summary.skipped += 1,
                Ok(Outcome::PostFailed { .. }) => summary.failed += 1,
                Err(e) => {
                    summary.failed += 1;
                    log_announce_error(&e);
                }
            }
        }
        summary
    }

    /// One cycle, then the summary. Success means every source was read and posting did not
    /// halt.
    pub async fn backfill(&self) -> (Summary, bool) {
        let summary = self.cycle(&CancellationToken::new()).await;
        let ok = summary.sources_failed == 0 && self.announcer.halted().is_none();
        (summary, ok)
    }

    /// Polls until `cancel` fires. A cycle in progress finishes its current match first. Polls
    /// are spaced by the interval plus up to [`POLL_JITTER_FRACTION`] of it; a slow cycle
    /// delays the next instead of bunching them.
    pub async fn run_until_cancelled(&self, cancel: CancellationToken) {
        loop {
            let summary = self.cycle(&cancel).await;
            tracing::info!(
                sources_read = summary.sources_read,
                sources_failed = summary.sources_failed,
                matches = summary.matches_seen,
                posted = summary.posted,
                skipped = summary.skipped,
                failed = summary.failed,
                dry_run = self.dry_run,
                "cycle done"
            );
            if let Some(why) = self.announcer.halted() {
                tracing::error!(reason = %why, "posting halted; fix the account or credentials and restart");
            }
            let jitter = self.poll_interval.mul_f64(POLL_JITTER_FRACTION * rand::random::<f64>());
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(self.poll_interval + jitter) => {}
            }
        }
        tracing::info!("stopped");
    }
}

fn log_announce_error(e: &AnnounceError) {
    tracing::error!(error.message = %e, error.cause_chain = ?e, "match not announced");
}

/// Awaits all futures concurrently, keeping their order.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(f);
    }
    let mut out = Vec::with_capacity(set.len());
    // Sources are few (tens at most); polling them one after another inside one task keeps
    // the fetcher's connection pool shared without spawning.
    let pinned: Vec<_> = set.into_iter().map(Box::pin).collect();
    for f in pinned {
        out.push(f.await);
    }
    out
}
