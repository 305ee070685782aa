//! Wiring and orchestration: [`App::build`] makes the concrete parts from a [`Config`];
//! [`App::cycle`] is one poll (read sources → dedupe by match → filter → announce);
//! [`App::backfill`] and [`App::run_until_cancelled`] are the two ways to run it.

use crate::announcer::{AnnounceError, Announcer, ClaimPolicy, DryRun, Mode, Outcome, Output};
use crate::backoff::{Backoff, Turn};
use crate::claim::{
    ClaimError, ClaimStore, EmbeddedClaims, EvictionRefusal, EvictionSafety, Holder, MatchClaim, PostgresClaims,
    RedisClaims, Transition,
};
use crate::config::{Config, StoreConfig};
use crate::cricket::{MatchKey, Sighting};
use crate::filter::Filter;
use crate::metric_names as names;
use crate::post::{PostPace, XClient};
use crate::shorten::Shortener;
use crate::source::{self, fetch::Fetcher, SourceReader, SourceSpec};
use crate::telemetry::CauseChain;
use crate::template::Template;
use anyhow::Context;
use secrecy::ExposeSecret;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

/// Share of the poll interval added as random jitter, so replicas do not poll in lockstep.
pub const POLL_JITTER_FRACTION: f64 = 0.1;
/// How long `/healthz` waits for the store to answer before calling it unreachable. Short:
/// a health probe must answer well within an orchestrator's probe timeout (often 1–5 s).
pub const HEALTH_STORE_TIMEOUT: Duration = Duration::from_secs(2);

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
    /// Matches left unclaimed for a later cycle by the flood cap.
    pub deferred: usize,
    /// Store errors (the store could not answer; nothing was posted for that match).
    pub store_errors: usize,
    /// Matches recorded without posting (`seed`).
    pub seeded: usize,
    /// Sources not read this cycle because they keep failing (see [`crate::backoff`]).
    pub sources_backed_off: usize,
    /// Claims seen stuck: claimed, never recorded, older than the post timeout allows.
    pub stuck_claims: usize,
    /// Why nothing (more) was posted this cycle, when the bot refused to post (store not
    /// initialised, store lost its data) or stopped (the dry-run output cannot be written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Summary {
    /// One line for people: `sources read 1, failed 0; matches seen 9, …`.
    pub fn line(&self, dry_run: bool) -> String {
        let mut line = format!(
            "sources read {}, failed {}; matches seen {}, not announceable {}; {} {}, skipped {}, failed {}",
            self.sources_read,
            self.sources_failed,
            self.matches_seen,
            self.not_announceable,
            if dry_run { "would post" } else { "posted" },
            self.posted,
            self.skipped,
            self.failed
        );
        for (n, what) in [
            (self.deferred, "deferred"),
            (self.store_errors, "store errors"),
            (self.seeded, "seeded"),
            (self.sources_backed_off, "sources backed off"),
            (self.stuck_claims, "stuck claims"),
        ] {
            if n > 0 {
                line.push_str(&format!(", {what} {n}"));
            }
        }
        if let Some(why) = &self.refused {
            line.push_str(&format!("; refused to post: {why}"));
        }
        line
    }
}

/// How long the first-start marker lives, as a multiple of the claim TTL. Refreshed every
/// cycle, so it only expires when no bot has run for that long; then a re-seed is needed.
pub const MARKER_TTL_FACTOR: u32 = 3;

/// The assembled bot.
pub struct App {
    sources: Vec<SourceSpec>,
    reader: SourceReader,
    filter: Filter,
    announcer: Announcer,
    poll_interval: Duration,
    max_posts_per_cycle: usize,
    dry_run: bool,
    /// Set once this process has seen the first-start marker: its later absence means the
    /// store lost its data (as opposed to never having been initialised).
    saw_marker: std::sync::atomic::AtomicBool,
    /// One backoff per source (same order as `sources`), so a failing source is asked less
    /// often while the others are read every cycle.
    backoff: Mutex<Vec<Backoff>>,
    /// When a source was last read successfully (start time until then): `/healthz` fails
    /// once this is older than `health_max_stale_cycles` poll intervals.
    last_source_read: Mutex<Instant>,
    /// See [`Config::health_max_stale_cycles`].
    health_max_stale_cycles: u32,
    /// `REDIS_EVICTION_POLICY_ASSERTED=noeviction` (see [`check_eviction`]).
    eviction_policy_asserted: bool,
    /// Why posting stopped: the last `/healthz` found a store that may evict claims. Checked at
    /// the start of every cycle; cleared by a later check that finds it safe.
    eviction_refusal: Mutex<Option<String>>,
}

/// Why the bot may not post on this store now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreReadiness {
    /// Initialised: posting allowed.
    Ready,
    /// Never initialised (no marker, never seen one).
    NotInitialised,
    /// The marker was seen by this process and is gone: the store lost its data.
    Wiped,
}

/// A source reader with the fetch settings of `config`.
///
/// # Errors
/// When the HTTP client cannot be built.
pub fn source_reader(config: &Config) -> anyhow::Result<SourceReader> {
    let fetcher = Fetcher::new(
        config.fetch_max_bytes,
        source::fetch::CONNECT_TIMEOUT,
        source::fetch::TOTAL_TIMEOUT,
        config.fetch_per_host_per_minute,
    )
    .map_err(anyhow::Error::msg)?;
    Ok(SourceReader::new(fetcher))
}

/// One source's health, as `check-sources` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct SourceCheck {
    /// The source as configured.
    pub source: String,
    /// `ok` or the error.
    pub status: String,
    /// Matches found (0 on error).
    pub matches: usize,
    /// The first few matches, as `title, description (state)`.
    pub first: Vec<String>,
}

/// How many matches `check-sources` shows per source.
pub const CHECK_SHOWS: usize = 3;

/// Fetches and parses every configured source once (concurrently), for `check-sources`.
///
/// # Errors
/// When the HTTP client cannot be built.
pub async fn check_sources(config: &Config) -> anyhow::Result<Vec<SourceCheck>> {
    let reader = source_reader(config)?;
    let results = futures_util::future::join_all(config.sources.iter().map(|spec| reader.read(spec))).await;
    Ok(config
        .sources
        .iter()
        .zip(results)
        .map(|(spec, r)| match r {
            Ok(found) => SourceCheck {
                source: spec.to_string(),
                status: "ok".into(),
                matches: found.len(),
                first: found
                    .iter()
                    .take(CHECK_SHOWS)
                    // With the description: two matches of one pair of teams differ only there.
                    .map(|m| match m.description.as_deref() {
                        Some(d) => format!("{}, {d} ({})", m.title(), m.state),
                        None => format!("{} ({})", m.title(), m.state),
                    })
                    .collect(),
            },
            Err(e) => SourceCheck {
                source: spec.to_string(),
                status: e.to_string(),
                matches: 0,
                first: Vec::new(),
            },
        })
        .collect())
}

/// Whether `store` keeps its claims (see [`ClaimStore::eviction_safety`]), logged: checked before
/// a bot that posts starts, by `check-sources` and by `/healthz`.
///
/// # Errors
/// [`EvictionRefusal`]: claims may be evicted, nobody can tell, or Redis did not answer.
pub async fn check_eviction(store: &ClaimStore, asserted: bool) -> Result<EvictionSafety, EvictionRefusal> {
    let safety = store.eviction_safety(asserted).await?;
    if let EvictionSafety::Asserted { reply } = &safety {
        tracing::warn!(config_get = %reply, "Redis does not say its maxmemory-policy; relying on REDIS_EVICTION_POLICY_ASSERTED=noeviction");
    }
    Ok(safety)
}

/// Opens the store `config` names.
///
/// # Errors
/// When Redis or PostgreSQL cannot be reached (or PostgreSQL's migrations fail), or the
/// embedded file cannot be opened.
pub async fn open_store(config: &Config) -> anyhow::Result<ClaimStore> {
    Ok(match &config.store {
        StoreConfig::Redis(url) => ClaimStore::Redis(
            RedisClaims::connect_with(
                url.expose_secret(),
                &config.key_prefix,
                &config.instance_id,
                &config.redis,
            )
            .await
            .context("cannot connect to REDIS_URL")?,
        ),
        StoreConfig::Embedded(path) if config.dry_run => ClaimStore::Embedded(
            EmbeddedClaims::open_read_only(path, &config.key_prefix, &config.instance_id)
                .with_context(|| format!("cannot open the embedded store STORE_PATH={}", path.display()))?,
        ),
        StoreConfig::Postgres(url) => ClaimStore::Postgres(
            PostgresClaims::connect_with(
                url.expose_secret(),
                &config.key_prefix,
                &config.instance_id,
                config.database_ca_file.as_deref(),
            )
            .await
            .context("cannot open the PostgreSQL store DATABASE_URL")?,
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
        let template = Template::configured(config.template_path.as_deref()).context("TEMPLATE_PATH")?;
        let store = open_store(config).await?;
        // A claim the store drops is a match announced again: refuse before anything is claimed.
        if !config.dry_run {
            check_eviction(&store, config.redis.eviction_policy_asserted).await?;
        }
        let reader = source_reader(config)?;
        let shortener = match &config.shortener {
            Some(s) => Some(
                Shortener::new(s.provider.clone(), s.base.clone(), config.shorten_timeout)
                    .map_err(anyhow::Error::msg)?,
            ),
            None => None,
        };
        let mode = if config.dry_run {
            Mode::DryRun(DryRun {
                out,
                json: config.json,
                shorten: config.shorten_in_dry_run,
            })
        } else if let Some(credentials) = config.x_credentials.clone() {
            Mode::Live(
                XClient::new(
                    &config.x_api_base,
                    credentials,
                    config.post_timeout,
                    source::fetch::CONNECT_TIMEOUT,
                )
                .map_err(anyhow::Error::msg)?,
                std::sync::Arc::new(PostPace::new(config.posts_per_minute, config.posts_per_day)),
            )
        } else {
            // Only a command that never posts (`seed`) gets here: `Config` requires the
            // credentials of those that do. Without them nothing can reach X; posts are printed.
            Mode::DryRun(DryRun {
                out,
                json: config.json,
                shorten: false,
            })
        };
        let policy = ClaimPolicy::new(config.claim_ttl, config.max_post_attempts, config.post_timeout);
        if !config.dry_run {
            // Claims written before identities were recorded keep them only in their records:
            // record them, so an edited listing of a match claimed then is still held.
            let written = store
                .index_identities()
                .await
                .context("cannot record the identities of existing claims")?;
            if written > 0 {
                tracing::info!(
                    identities = written,
                    "recorded the identities of claims written by an earlier release"
                );
            }
        }
        Ok(App {
            sources: config.sources.clone(),
            reader,
            filter: config.filter.clone(),
            announcer: Announcer::new(store, template, shortener, mode, policy).requiring_marker(!config.dry_run),
            poll_interval: config.poll_interval,
            max_posts_per_cycle: usize::try_from(config.max_posts_per_cycle).unwrap_or(usize::MAX),
            dry_run: config.dry_run,
            saw_marker: std::sync::atomic::AtomicBool::new(false),
            backoff: Mutex::new(vec![Backoff::default(); config.sources.len()]),
            last_source_read: Mutex::new(Instant::now()),
            health_max_stale_cycles: config.health_max_stale_cycles,
            eviction_policy_asserted: config.redis.eviction_policy_asserted,
            eviction_refusal: Mutex::new(None),
        })
    }

    fn marker_ttl(&self) -> Duration {
        self.announcer
            .policy()
            .ttl
            .checked_mul(MARKER_TTL_FACTOR)
            .unwrap_or(Duration::MAX)
    }

    /// `--init-store`: initialises the store if it has no marker (one atomic step; two
    /// processes doing it at once is safe). Returns whether this call wrote the marker.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn init_store(&self) -> Result<bool, ClaimError> {
        let (marker, wrote) = self
            .announcer
            .store()
            .initialise("init-store", self.marker_ttl())
            .await?;
        if wrote {
            tracing::warn!("store initialised by --init-store: every current match will be announced");
        } else {
            tracing::info!(by = %marker.by, at = %marker.at, how = %marker.how, "store already initialised");
        }
        self.saw_marker.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(wrote)
    }

    /// Whether posting is allowed on the store now; refreshes the marker's TTL when present.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn readiness(&self) -> Result<StoreReadiness, ClaimError> {
        use std::sync::atomic::Ordering;
        let store = self.announcer.store();
        if store.refresh_marker(self.marker_ttl()).await? {
            self.saw_marker.store(true, Ordering::SeqCst);
            return Ok(StoreReadiness::Ready);
        }
        Ok(if self.saw_marker.load(Ordering::SeqCst) {
            StoreReadiness::Wiped
        } else {
            StoreReadiness::NotInitialised
        })
    }

    /// Records every current match (teams known) as `seeded`, without posting, then marks
    /// the store initialised. Matches already claimed are left as they are.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the marker is written only after every
    /// match was recorded, so an interrupted seed can simply be run again.
    pub async fn seed(&self) -> Result<Summary, ClaimError> {
        let mut summary = Summary::default();
        let matches = self.read_sources(&mut summary).await;
        let store = self.announcer.store();
        let ttl = self.announcer.policy().ttl;
        for sighting in &matches {
            if sighting.m.has_placeholder_team() {
                summary.not_announceable += 1;
                continue;
            }
            match store
                .claim_match(
                    &sighting.ids,
                    &sighting.m.claim_title(),
                    ttl,
                    self.announcer.policy().stuck_after,
                    false,
                )
                .await?
            {
                MatchClaim::Won(token) => {
                    store.transition(&token, &Transition::Seeded).await?;
                    summary.seeded += 1;
                }
                MatchClaim::Held { key, .. } => {
                    store.refresh(&key, ttl).await?;
                    summary.skipped += 1;
                }
                // Not asked for: a seed claims before it writes the marker.
                MatchClaim::NoMarker => summary.skipped += 1,
            }
        }
        if summary.sources_failed > 0 {
            tracing::error!("not marking the store initialised: a source failed, so its matches were not seeded");
            summary.refused = Some("a source failed; seed again when every source reads".into());
            return Ok(summary);
        }
        let (marker, wrote) = store.initialise("seed", self.marker_ttl()).await?;
        if !wrote {
            tracing::info!(by = %marker.by, at = %marker.at, "store was already initialised; seeded matches added");
        }
        self.saw_marker.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(summary)
    }

    /// The announcer (for tests and embedding).
    pub fn announcer(&self) -> &Announcer {
        &self.announcer
    }

    /// Reads every source (concurrently), returning the distinct matches in first-seen order,
    /// each with the aliases (`site:id`) under which the sources listed it. A failing source
    /// is logged at error level and counted; the others still run. A source that keeps
    /// failing is skipped for more and more cycles (see [`crate::backoff`]); a slow one
    /// delays only its own result, as all are read at once.
    pub async fn read_sources(&self, summary: &mut Summary) -> Vec<Sighting> {
        let turns: Vec<Turn> = match self.backoff.lock() {
            Ok(mut b) => b.iter_mut().map(Backoff::turn).collect(),
            // A poisoned lock only means a panic elsewhere: read everything.
            Err(_) => vec![Turn::Read; self.sources.len()],
        };
        let reads = self.sources.iter().zip(&turns).map(|(spec, turn)| async move {
            match turn {
                Turn::Read => Some(self.reader.read(spec).await),
                Turn::Skip { .. } => None,
            }
        });
        let results = futures_util::future::join_all(reads).await;
        // One sighting per match: listings that share a source id (one site's page and its
        // API) or a key (two sites) are one match, whatever else they say.
        let mut by_key: HashMap<MatchKey, usize> = HashMap::new();
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut sightings: Vec<Sighting> = Vec::new();
        for (i, (spec, result)) in self.sources.iter().zip(results).enumerate() {
            let label = spec.to_string();
            let Some(result) = result else {
                summary.sources_backed_off += 1;
                metrics::counter!(names::SOURCE_BACKOFF_SKIPS, "source" => label).increment(1);
                if let Turn::Skip { cycles_left } = turns[i] {
                    tracing::info!(source = %spec, cycles_left, "source backing off after repeated failures; not read this cycle");
                }
                continue;
            };
            match result {
                Ok(found) => {
                    summary.sources_read += 1;
                    metrics::counter!(names::SOURCE_READS, "source" => label).increment(1);
                    if let Ok(mut at) = self.last_source_read.lock() {
                        *at = Instant::now();
                    }
                    let failures_before = self.backoff.lock().map(|mut b| b[i].succeeded()).unwrap_or(0);
                    if failures_before > 0 {
                        tracing::info!(source = %spec, failures_before, "source recovered; backoff reset");
                    }
                    tracing::debug!(source = %spec, matches = found.len(), "source read");
                    for m in found {
                        let alias = m.alias();
                        // A listing already seen under its own id adds nothing: its identities
                        // are not even derived.
                        if by_id.contains_key(&alias) {
                            continue;
                        }
                        let sighting = Sighting::new(m);
                        match by_key.get(&sighting.ids.key).copied() {
                            Some(at) => {
                                sightings[at].ids.add_source(alias.clone());
                                by_id.insert(alias, at);
                            }
                            None => {
                                by_id.insert(alias, sightings.len());
                                by_key.insert(sighting.ids.key.clone(), sightings.len());
                                sightings.push(sighting);
                            }
                        }
                    }
                }
                Err(e) => {
                    summary.sources_failed += 1;
                    metrics::counter!(names::SOURCE_ERRORS, "source" => label).increment(1);
                    let (skip_cycles, consecutive_failures) = self
                        .backoff
                        .lock()
                        .map(|mut b| (b[i].failed(), b[i].consecutive_failures()))
                        .unwrap_or((0, 0));
                    tracing::error!(source = %spec, consecutive_failures, skip_cycles, error.cause_chain = %CauseChain(&e), "source failed");
                }
            }
        }
        summary.matches_seen = sightings.len();
        sightings
    }

    /// One poll: read, dedupe, filter, announce each match in turn. Stops early (while
    /// reading sources, or between matches, never inside one) when `cancel` fires, posting has halted, the store fails,
    /// or the flood cap is reached. Outside dry run, nothing is posted unless the store is
    /// initialised (see [`App::readiness`]).
    pub async fn cycle(&self, cancel: &CancellationToken) -> Summary {
        let started = Instant::now();
        let summary = self.cycle_inner(cancel).await;
        record_metrics(&summary, started.elapsed());
        release_freed_memory();
        summary
    }

    async fn cycle_inner(&self, cancel: &CancellationToken) -> Summary {
        let mut summary = Summary::default();
        // A stop signal does not wait for slow pages: nothing is claimed while reading.
        let matches = tokio::select! {
            matches = self.read_sources(&mut summary) => matches,
            _ = cancel.cancelled() => return Summary::default(),
        };
        // Counted before anything can refuse, so every mode's summary counts the same matches.
        let verdicts: Vec<Result<(), &'static str>> = matches.iter().map(|s| self.filter.check(&s.m)).collect();
        summary.not_announceable = verdicts.iter().filter(|v| v.is_err()).count();
        if !self.dry_run {
            if let Some(why) = self.eviction_refusal.lock().ok().and_then(|r| r.clone()) {
                tracing::error!("{why}");
                summary.refused = Some(why);
                return summary;
            }
            match self.readiness().await {
                Ok(StoreReadiness::Ready) => {}
                Ok(StoreReadiness::NotInitialised) => {
                    let why = "the store was never initialised; run `cricket-announcer seed` (records what is current without posting) or pass --init-store (announces it)";
                    tracing::error!("{why}");
                    summary.refused = Some(why.into());
                    return summary;
                }
                Ok(StoreReadiness::Wiped) => {
                    let why = "the store lost its data (its first-start marker is gone); posting stopped so nothing is announced twice; run `cricket-announcer seed` to resume";
                    tracing::error!("{why}");
                    summary.refused = Some(why.into());
                    return summary;
                }
                Err(e) => {
                    summary.store_errors += 1;
                    tracing::error!(error.cause_chain = %CauseChain(&e), "store unavailable; nothing posted this cycle");
                    summary.refused = Some(format!("store unavailable: {e}"));
                    return summary;
                }
            }
        }
        // One round trip tells which matches are already claimed (and refreshes their TTL), so
        // the steady state, where nearly every match is held, costs one batch per cycle instead
        // of a claim per match.
        let wanted: Vec<(usize, &Sighting)> = verdicts
            .iter()
            .zip(&matches)
            .enumerate()
            .filter(|(_, (v, _))| v.is_ok())
            .map(|(i, (_, s))| (i, s))
            .collect();
        let refs: Vec<&Sighting> = wanted.iter().map(|(_, s)| *s).collect();
        let mut holders: HashMap<usize, Holder> = match self.announcer.holders_of(&refs).await {
            Ok(found) => wanted
                .iter()
                .zip(found)
                .filter_map(|((i, _), h)| h.map(|h| (*i, h)))
                .collect(),
            Err(e) => {
                summary.store_errors += 1;
                tracing::error!(error.cause_chain = %CauseChain(&e), "store unavailable; nothing posted this cycle");
                summary.refused = Some(format!("store unavailable: {e}"));
                return summary;
            }
        };
        let mut announced = 0usize;
        for (i, sighting) in matches.iter().enumerate() {
            if cancel.is_cancelled() || self.announcer.halted().is_some() {
                break;
            }
            if let Err(why) = verdicts[i] {
                tracing::debug!(match_key = %sighting.ids.key, reason = why, "not announced");
                continue;
            }
            let announceable_left = || verdicts[i..].iter().filter(|v| v.is_ok()).count();
            // The flood cap paces real posts; a dry run previews every post the bot would make.
            if !self.dry_run && announced >= self.max_posts_per_cycle {
                let left = announceable_left();
                summary.deferred = left;
                tracing::warn!(
                    cap = self.max_posts_per_cycle,
                    left,
                    "flood cap reached; the rest stay unclaimed for later cycles"
                );
                break;
            }
            match self.announcer.announce(sighting, holders.remove(&i)).await {
                Ok(outcome @ (Outcome::Posted(_) | Outcome::WouldPost(_))) => {
                    let label = if matches!(outcome, Outcome::Posted(_)) {
                        "posted"
                    } else {
                        "would_post"
                    };
                    metrics::counter!(names::POSTS, "outcome" => label).increment(1);
                    summary.posted += 1;
                    announced += 1;
                }
                Ok(Outcome::Skipped { holder }) => {
                    summary.skipped += 1;
                    if holder.is_stuck(chrono::Utc::now(), self.announcer.policy().stuck_after) {
                        summary.stuck_claims += 1;
                    }
                }
                Ok(Outcome::Deferred { .. }) => {
                    metrics::counter!(names::POSTS, "outcome" => "deferred").increment(1);
                    // Pace applies to every later match too: leave them all for later cycles.
                    summary.deferred = announceable_left();
                    break;
                }
                Ok(Outcome::PostFailed { .. }) => {
                    metrics::counter!(names::POSTS, "outcome" => "failed").increment(1);
                    summary.failed += 1;
                    announced += 1;
                }
                Err(AnnounceError::Store { key, source }) => {
                    summary.store_errors += 1;
                    summary.failed += 1;
                    tracing::error!(match_key = %key, error.cause_chain = %CauseChain(&source), "store unavailable; not posting, will retry next cycle");
                    break;
                }
                Err(e @ AnnounceError::NoMarker { .. }) => {
                    // The claim's own check: the store was wiped after this cycle's readiness
                    // check. Nothing was claimed; nothing more is tried.
                    let why = "the store lost its data (its first-start marker is gone); posting stopped so nothing is announced twice; run `cricket-announcer seed` to resume";
                    tracing::error!(error.message = %e, "{why}");
                    summary.refused = Some(why.into());
                    break;
                }
                Err(e @ AnnounceError::Output(_)) => {
                    // Every later post would fail the same way: the dry run has nowhere to
                    // show its posts, so it stops, and a backfill says it did not complete.
                    summary.failed += 1;
                    tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written; stopping the dry run");
                    summary.refused = Some(e.to_string());
                    break;
                }
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
        let ok = summary.sources_failed == 0
            && summary.store_errors == 0
            && summary.refused.is_none()
            && self.announcer.halted().is_none();
        (summary, ok)
    }

    /// Polls until `cancel` fires, or after `max_cycles` cycles when given. A cycle in
    /// progress finishes its current match first. Cycles start on a fixed schedule of one
    /// per poll interval, each delayed by up to [`POLL_JITTER_FRACTION`] of it at random so
    /// replicas do not poll in lockstep; the first starts at once.
    ///
    /// Returns why, when it stopped because this bot may not post (the store was never
    /// initialised or lost its data, or posting halted): waiting would not change that, and
    /// an idle bot that looks alive hides it.
    pub async fn run_until_cancelled(&self, cancel: CancellationToken, max_cycles: Option<u64>) -> Option<String> {
        let mut ticks = tokio::time::interval(self.poll_interval);
        // A cycle longer than the interval (slow pages, many posts) pushes the schedule back
        // instead of firing the missed cycles in a burst to catch up.
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut done: u64 = 0;
        loop {
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = ticks.tick() => {}
            }
            if done > 0 {
                let jitter = self.poll_interval.mul_f64(POLL_JITTER_FRACTION * rand::random::<f64>());
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(jitter) => {}
                }
            }
            let summary = self.cycle(&cancel).await;
            done += 1;
            tracing::info!(
                cycle = done,
                sources_read = summary.sources_read,
                sources_failed = summary.sources_failed,
                sources_backed_off = summary.sources_backed_off,
                matches = summary.matches_seen,
                posted = summary.posted,
                skipped = summary.skipped,
                failed = summary.failed,
                deferred = summary.deferred,
                stuck_claims = summary.stuck_claims,
                dry_run = self.dry_run,
                "cycle done"
            );
            if let Some(why) = self.announcer.halted() {
                tracing::error!(reason = %why, "posting halted; fix the account or credentials and restart");
                return Some(format!("posting halted: {why}"));
            }
            if let (false, Some(why)) = (self.dry_run, &summary.refused) {
                // The refusal may be a store that did not answer (worth another cycle) or one
                // that may not be posted to (not worth any): asked again to tell them apart.
                if let Ok(StoreReadiness::NotInitialised | StoreReadiness::Wiped) = self.readiness().await {
                    return Some(why.clone());
                }
            }
            if max_cycles.is_some_and(|n| done >= n) {
                tracing::info!(cycles = done, "cycle limit reached");
                break;
            }
        }
        tracing::info!("stopped");
        None
    }

    /// What is wrong with this running bot, for `/healthz`; empty when healthy. Unhealthy
    /// when the store does not answer within [`HEALTH_STORE_TIMEOUT`], has no first-start
    /// marker (so nothing is posted), may evict claims (Redis' `maxmemory-policy`, see
    /// [`check_eviction`]; posting then stops until a later check finds it safe), posting has
    /// halted (credentials, credits), or no source has been read for `HEALTH_MAX_STALE_CYCLES`
    /// poll intervals (counted from start until the first read).
    pub async fn health(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let reachable = match tokio::time::timeout(HEALTH_STORE_TIMEOUT, self.announcer.store().marker()).await {
            Ok(Ok(Some(_))) => true,
            // A bot that refuses to post is not healthy, however well it polls.
            Ok(Ok(None)) if !self.dry_run => {
                problems.push(
                    "store not initialised or it lost its data: nothing is posted until `cricket-announcer seed`"
                        .into(),
                );
                true
            }
            Ok(Ok(None)) => true,
            Ok(Err(e)) => {
                problems.push(format!("store unreachable: {e}"));
                false
            }
            Err(_) => {
                problems.push(format!(
                    "store unreachable: no answer within {} s",
                    HEALTH_STORE_TIMEOUT.as_secs()
                ));
                false
            }
        };
        // Posting only: a dry run keeps nothing to lose. Unreachable: already said, and the
        // probe must answer within its own timeout.
        if !self.dry_run && reachable {
            // Not `check_eviction`: its warning about an asserted policy belongs to startup,
            // not to every probe.
            let store = self.announcer.store();
            let checked = tokio::time::timeout(
                HEALTH_STORE_TIMEOUT,
                store.eviction_safety(self.eviction_policy_asserted),
            )
            .await;
            let refusal = match checked {
                Ok(Ok(_)) => Some(None),
                // No answer says nothing new about the policy: a refusal stays as it was.
                Ok(Err(e @ EvictionRefusal::Store(_))) => {
                    problems.push(e.to_string());
                    None
                }
                Err(_) => {
                    problems.push(format!(
                        "cannot read Redis maxmemory-policy: no answer within {} s",
                        HEALTH_STORE_TIMEOUT.as_secs()
                    ));
                    None
                }
                Ok(Err(e)) => {
                    problems.push(e.to_string());
                    Some(Some(e.to_string()))
                }
            };
            if let (Some(refusal), Ok(mut held)) = (refusal, self.eviction_refusal.lock()) {
                *held = refusal;
            }
        }
        if let Some(why) = self.announcer.halted() {
            problems.push(format!("posting halted: {why}"));
        }
        // The jitter can add up to a tenth of an interval to each cycle: allow for it.
        let allowed = self
            .poll_interval
            .mul_f64((1.0 + POLL_JITTER_FRACTION) * f64::from(self.health_max_stale_cycles));
        if let Ok(at) = self.last_source_read.lock() {
            let since = at.elapsed();
            if since > allowed {
                problems.push(format!(
                    "no source read for {} s (more than {} poll intervals)",
                    since.as_secs(),
                    self.health_max_stale_cycles
                ));
            }
        }
        problems
    }
}

/// Publishes one cycle's figures (no-ops unless a recorder is installed: `METRICS_ADDR`).
/// Hands the memory a cycle freed back to the operating system.
///
/// A cycle reads every page whole, parses it and drops it all at the end; glibc's malloc keeps
/// freed memory in its arenas for reuse, so between cycles (minutes apart) the process would go
/// on holding its largest cycle's working set. `malloc_trim(0)` releases the free memory at the
/// top of each arena and, since glibc 2.8, the free whole pages inside them (`man 3
/// malloc_trim`). Measured with `examples/cycles.rs`: see `docs/benchmarks.md`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_freed_memory() {
    // SAFETY: malloc_trim takes no pointer and only walks glibc's own free lists under its
    // arena locks; it may be called at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators and C libraries decide for themselves when to return memory.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_freed_memory() {}

fn record_metrics(summary: &Summary, took: Duration) {
    metrics::counter!(names::POLLS).increment(1);
    metrics::counter!(names::MATCHES_SEEN).increment(summary.matches_seen as u64);
    metrics::gauge!(names::MATCHES_LAST_CYCLE).set(summary.matches_seen as f64);
    metrics::gauge!(names::STUCK_CLAIMS).set(summary.stuck_claims as f64);
    metrics::counter!(names::STORE_ERRORS).increment(summary.store_errors as u64);
    metrics::histogram!(names::CYCLE_DURATION).record(took.as_secs_f64());
}

fn log_announce_error(e: &AnnounceError) {
    tracing::error!(error.cause_chain = %CauseChain(e), "match not announced");
}
