//! Wiring and orchestration: [`App::build`] makes the concrete parts from a [`Config`];
//! [`App::cycle`] is one poll (read sources → dedupe by match → filter → announce);
//! [`App::backfill`] and [`App::run_until_cancelled`] are the two ways to run it. One file per
//! job: `sources.rs` (reading and deduping the sources into sightings, and `check-sources`),
//! `store.rs` (opening the store, its first-start marker and eviction checks), `cycle.rs` (one
//! poll), `window.rs` (the matches of a cycle that wait for their announcement window), `seed.rs`
//! (`seed`, and its dry run), `timing.rs` (what `check-sources` says of when each match is
//! announced), `health.rs` (`/healthz`), `summary.rs` (what a cycle did), `snapshot.rs` (the
//! status page's view of the running bot, from its [`Journal`]).

mod cycle;
mod error;
mod health;
mod seed;
mod snapshot;
mod sources;
mod store;
mod summary;
mod timing;
mod window;

pub use error::StartError;
pub use sources::{check_sources, source_reader, SourceCheck, SourceStatus, CHECK_SHOWS};
pub use store::{channel_claims, check_eviction, open_store, open_store_for, Access, StoreReadiness};
pub use summary::{ChannelSummary, EventSummary, Summary};

use crate::announcer::{Announcer, ClaimPolicy, DryRun, Memory, Mode, Output, ResultPlan};
use crate::backoff::Backoff;
use crate::channels::TemplateSource;
use crate::claim::{ClaimError, ClaimStore, MarkerOrigin};
use crate::clock::Clock;
use crate::config::{ChannelList, Config};
use crate::event::Event;
use crate::filter::Filter;
use crate::journal::{ChannelInfo, Journal};
use crate::post::{PostPace, SinkKind};
use crate::reconcile::{asks, earliest_wait, reconcile_all, Decision, RECONCILE_EVERY_CYCLES};
use crate::shorten::Shortener;
use crate::source::{self, SourceReader, SourceSpec};
use crate::telemetry::CauseChain;
use crate::template::Template;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Share of the poll interval added as random jitter, so replicas do not poll in lockstep.
pub const POLL_JITTER_FRACTION: f64 = 0.1;
/// How long `/healthz` waits for the store to answer before calling it unreachable. Short:
/// a health probe must answer well within an orchestrator's probe timeout (often 1–5 s).
pub const HEALTH_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long after a waiting match's window opens `run` polls for it: a moment, so that the
/// cycle's clock reading is past the opening even when the timer fires a hair early.
pub const WINDOW_MARGIN: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// How long the first-start marker lives, as a multiple of the claim TTL. Refreshed every
/// cycle, so it only expires when no bot has run for that long; then a re-seed is needed.
pub const MARKER_TTL_FACTOR: u32 = 3;

/// The assembled bot.
pub struct App {
    sources: Vec<SourceSpec>,
    reader: SourceReader,
    /// Which listing of a match the post links to (`LINK_PREFERENCE`, `LINK_FALLBACK`).
    links: crate::cricket::Links,
    filter: Filter,
    /// The base store: the deployment's first-start marker, and the claims of the
    /// environment's X channel when there is no channels file.
    store: ClaimStore,
    policy: ClaimPolicy,
    /// The channels announced on, in order: the environment's X channel without a channels
    /// file.
    channels: Vec<ChannelRun>,
    /// Whether the channels come from a channels file (then the summary and the metrics
    /// count per channel).
    channels_file: bool,
    poll_interval: Duration,
    dry_run: bool,
    /// Where a dry run prints: a dry-run seed's records (the channels' posts are printed by
    /// their announcers, to the same output).
    out: Output,
    /// Whether a dry run prints JSON lines.
    json: bool,
    /// Set once this process has seen the first-start marker: its later absence means the
    /// store lost its data (as opposed to never having been initialised).
    saw_marker: std::sync::atomic::AtomicBool,
    /// When this process last extended its channels' first-start markers (see
    /// `store.rs`): never, until the first cycle that finds the store ready.
    channel_markers_refreshed: Mutex<Option<Instant>>,
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
    /// The wall clock every channel's announcer and the cycle judge time by.
    clock: Clock,
    /// What this process did, for the status page (see [`crate::journal`]).
    journal: Journal,
}

/// One channel the bot announces on: its announcer (the channel's sink or dry-run printer,
/// template, pace and claims), which matches it takes, and what it remembers between cycles.
pub struct ChannelRun {
    /// The channel's announcer.
    pub announcer: Announcer,
    /// What the channel's announcer remembers from one cycle to the next (see [`Memory`]): held
    /// by the channel's turn for the whole turn, and by nothing else.
    memory: tokio::sync::Mutex<Memory>,
    /// Why posting stopped on this channel for this process (its platform refused the
    /// credentials, the account or the webhook), once it did: set by the channel's turn from
    /// the post's outcome, read by `/healthz` and the exit code. Never cleared: a restart is
    /// what retries.
    halted: std::sync::OnceLock<String>,
    /// The channel's own filter, applied after the bot's.
    filter: Filter,
    /// Most posts on this channel per cycle (`MAX_POSTS_PER_CYCLE`).
    max_posts_per_cycle: usize,
    /// Whether the channel's claims carry a first-start marker of their own (a channels file:
    /// a channel added to a running deployment records what is current before it posts).
    own_marker: bool,
    /// Set once the channel's own marker was seen.
    saw_marker: std::sync::atomic::AtomicBool,
    /// What the channel's turns learned of the matches waiting for their windows (see
    /// `window.rs`).
    waits: Mutex<window::Waits>,
    /// The event this run posts on its channel (see [`crate::event`]).
    event: Event,
}

impl ChannelRun {
    fn new(announcer: Announcer, filter: Filter, max_posts_per_cycle: usize, own_marker: bool) -> ChannelRun {
        let event = announcer.event();
        ChannelRun {
            announcer,
            memory: tokio::sync::Mutex::new(Memory::default()),
            halted: std::sync::OnceLock::new(),
            filter,
            max_posts_per_cycle,
            own_marker,
            saw_marker: std::sync::atomic::AtomicBool::new(false),
            waits: Mutex::new(window::Waits::default()),
            event,
        }
    }

    /// The event this run posts (`announce`, `result`).
    pub fn event(&self) -> Event {
        self.event
    }

    /// Whether a first start records `m` on this run (as `seeded`): every match for the
    /// announcement; for a result, only a finished match whose page proves its result (a
    /// match still to finish must get its result posted when it does).
    fn records_at_first_start(&self, m: &crate::cricket::Match) -> bool {
        match self.event {
            Event::Announce => true,
            Event::Result => crate::cricket::MatchResult::read(m).is_ok(),
        }
    }

    /// The channel's name (`x` for the environment's X account).
    pub fn name(&self) -> &str {
        self.announcer.channel()
    }

    /// Why posting stopped on this channel for this process, if it did (see
    /// [`crate::announcer::Outcome::halts`]). Once set, nothing more is announced on it.
    pub fn halted(&self) -> Option<&str> {
        self.halted.get().map(String::as_str)
    }

    /// Records that posting stopped on this channel, and why (the first reason is kept).
    fn halt(&self, why: String) {
        let _ = self.halted.set(why);
    }

    /// Writes the channel's own first-start marker (its origin `how`, living `ttl`) unless it
    /// has one, and remembers that this process saw it.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is remembered.
    async fn initialise(&self, how: MarkerOrigin, ttl: Duration) -> Result<(), ClaimError> {
        self.announcer.store().initialise(how, ttl).await?;
        self.saw_marker.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Whether this channel announces `m`, by its own filter (the bot's is applied first); for
    /// a result, by every rule of the filter but the states.
    fn takes(&self, m: &crate::cricket::Match) -> Result<(), &'static str> {
        match self.event {
            Event::Announce => self.filter.check(m),
            Event::Result => self.filter.check_any_state(m),
        }
    }
}

impl App {
    /// Builds the bot: opens the store, compiles the template, makes the HTTP clients. A dry
    /// run prints to `out` (its posts, or what a seed would record).
    ///
    /// # Errors
    /// [`StartError`] for any part that cannot be made, naming the setting that caused it.
    pub async fn build(config: &Config, out: Output) -> Result<App, StartError> {
        App::build_on(config, out, config.clock()).await
    }

    /// [`App::build`], judging every time (the store's records, the announcers', the windows
    /// of `ANNOUNCE_BEFORE`) and waiting between polls by `clock`: a test passes a
    /// [`Clock::manual`] and lets days of polls pass in moments.
    ///
    /// # Errors
    /// As for [`App::build`].
    pub async fn build_on(config: &Config, out: Output, clock: Clock) -> Result<App, StartError> {
        if config.sources.specs.is_empty() {
            return Err(StartError::NoSources);
        }
        let template = Template::configured(config.text.template_path.as_deref()).map_err(StartError::Template)?;
        // One clock for every judgement of time: the store's records and the announcers'.
        let store = open_store(config).await?.with_clock(clock.clone());
        // A claim the store drops is a match announced again: refuse before anything is claimed.
        if !config.dry_run() {
            check_eviction(&store, config.store.redis.eviction_policy_asserted).await?;
        }
        let reader = source_reader(config)?;
        let shortener = match &config.text.shortener {
            Some(s) => Some(
                Shortener::new(s.provider.clone(), s.base.clone(), config.text.shorten_timeout).map_err(|source| {
                    StartError::HttpClient {
                        what: "shortener",
                        source,
                    }
                })?,
            ),
            None => None,
        };
        let policy = ClaimPolicy::new(
            config.store.claim_ttl,
            config.posting.max_post_attempts,
            config.send_bound(),
        );
        let cap = usize::try_from(config.posting.max_posts_per_cycle).unwrap_or(usize::MAX);
        let bot_pace = || {
            Arc::new(PostPace::new(
                config.posting.posts_per_minute,
                config.posting.posts_per_day,
            ))
        };
        let list = &config.posting.channels;
        // A channel of the channels file has a first-start marker of its own (a channel added
        // to a running deployment records what is current before it posts) and is named in the
        // dry run's output; the environment's X channel has the deployment's marker, and its
        // posts are printed as they always were.
        let from_file = list.file().is_some();
        let mut channels = Vec::with_capacity(list.channels().len());
        // The bot's template, compiled once, for every channel without one of its own; a
        // Discord channel's is the built-in one for Discord unless TEMPLATE_PATH names one.
        let shared = Arc::new(template);
        let mut discord: Option<Arc<Template>> = None;
        // The built-in result template, compiled once for every channel posting results
        // without one of its own.
        let mut built_in_result: Option<Arc<Template>> = None;
        for c in list.channels() {
            let template_error = |source| StartError::ChannelTemplate {
                channel: c.name.clone(),
                source,
            };
            let template = match (&c.template, list.file()) {
                (None, _) if c.sink.kind() == SinkKind::Discord && config.text.template_path.is_none() => {
                    match &discord {
                        Some(t) => t.clone(),
                        None => {
                            let t = Arc::new(
                                Template::configured_for(None, SinkKind::Discord).map_err(StartError::Template)?,
                            );
                            discord = Some(t.clone());
                            t
                        }
                    }
                }
                (None, _) => shared.clone(),
                (Some(TemplateSource::Path(path)), _) => Arc::new(Template::load(path).map_err(template_error)?),
                (Some(TemplateSource::Inline(text)), file) => {
                    let named = file.map_or_else(|| c.name.clone().into(), |f| f.path.join(format!("#{}", c.name)));
                    Arc::new(Template::from_source(&named, text.clone()).map_err(template_error)?)
                }
            };
            let pace = match c.pace {
                Some(p) => Arc::new(PostPace::new(p.posts_per_minute, p.posts_per_day)),
                None => bot_pace(),
            };
            let printing = |shorten| {
                Mode::DryRun(DryRun {
                    out: out.clone(),
                    json: config.json(),
                    shorten,
                    sink: c.sink.kind(),
                    channel: from_file.then(|| c.name.clone()),
                })
            };
            let mode = if config.dry_run() {
                printing(config.shorten_in_dry_run())
            } else if !c.has_secrets() {
                // Only a command that never posts (`seed`) gets here: `Config` requires every
                // secret of those that do. Without them nothing can reach the platform; posts
                // are printed.
                printing(false)
            } else {
                let mut sink = c
                    .sink(config.posting.post_timeout, source::fetch::CONNECT_TIMEOUT)
                    .map_err(|source| match list {
                        ChannelList::Environment(_) => StartError::X(Box::new(source)),
                        ChannelList::File(_) => StartError::ChannelSink {
                            channel: c.name.clone(),
                            source: Box::new(source),
                        },
                    })?;
                if let Err(e) = sink.prepare().await {
                    tracing::warn!(channel = %c.name, error.message = %e, "cannot read the sink's length rule from its server; using its default");
                }
                Mode::live(sink, pace)
            };
            let events = c.events.as_deref().unwrap_or(&config.schedule.events);
            let claims = channel_claims(&store, list, &c.name);
            let zone = c.timezone.unwrap_or(config.schedule.zone);
            // The result's run on the channel, made before its announcement's takes the mode:
            // the same sink (its dedupe keys the event's own) and the same pace.
            let results = if events.contains(&Event::Result) {
                let template = match &c.result_template {
                    None => match &built_in_result {
                        Some(t) => Arc::clone(t),
                        None => {
                            let t = Arc::new(Template::configured_result(None).map_err(StartError::Template)?);
                            built_in_result = Some(Arc::clone(&t));
                            t
                        }
                    },
                    Some(TemplateSource::Path(path)) => {
                        Arc::new(Template::configured_result(Some(path)).map_err(template_error)?)
                    }
                    Some(TemplateSource::Inline(text)) => {
                        let named = list.file().map_or_else(
                            || format!("{}#result", c.name).into(),
                            |f| f.path.join(format!("#{}#result", c.name)),
                        );
                        Arc::new(Template::result_from_source(&named, text.clone()).map_err(template_error)?)
                    }
                };
                let mode = match &mode {
                    Mode::Live(sink, pace) => Mode::Live(Box::new(sink.for_event(Event::Result)), Arc::clone(pace)),
                    dry @ Mode::DryRun(_) => dry.clone(),
                };
                let announcer = Announcer::new(
                    claims.for_event(Event::Result),
                    template,
                    shortener.clone(),
                    mode,
                    policy,
                )
                .requiring_marker(!config.dry_run())
                .on_channel(&c.name)
                .with_clock(clock.clone())
                .in_zone(zone)
                .for_results(ResultPlan {
                    announcements: claims.clone(),
                    max_age: chrono::TimeDelta::from_std(config.schedule.result_max_age)
                        .unwrap_or(chrono::TimeDelta::MAX),
                    without_announcement: c.result_without_announcement,
                });
                // Its own first-start marker, on every deployment: results enabled on a
                // running one record the results already on the pages instead of posting them.
                Some(ChannelRun::new(announcer, c.filter.clone(), cap, true))
            } else {
                None
            };
            if events.contains(&Event::Announce) {
                let announcer = Announcer::new(claims, template, shortener.clone(), mode, policy)
                    .requiring_marker(!config.dry_run())
                    .on_channel(&c.name)
                    .with_clock(clock.clone())
                    .with_lead(c.announce_before.unwrap_or(config.schedule.lead))
                    .in_zone(zone)
                    .with_hashtags(c.hashtags);
                channels.push(ChannelRun::new(announcer, c.filter.clone(), cap, from_file));
            }
            // After its announcement's: a cycle posts a match's announcement before the result
            // that replies to it.
            channels.extend(results);
        }
        let journal = Journal::new(
            &config.sources.specs,
            channels
                .iter()
                .map(|run| ChannelInfo {
                    name: run.name().to_string(),
                    event: run.event(),
                    sink: list
                        .channels()
                        .iter()
                        .find(|c| c.name == run.name())
                        .map_or(crate::post::SinkKind::X, |c| c.sink.kind()),
                })
                .collect(),
            clock.now(),
            config.schedule.zone,
        );
        if !config.dry_run() {
            // Claims written before identities were recorded keep them only in their records:
            // record them, so an edited listing of a match claimed then is still held.
            let written = store.index_identities().await.map_err(StartError::Identities)?;
            if written > 0 {
                tracing::info!(
                    identities = written,
                    "recorded the identities of claims written by an earlier release"
                );
            }
            // Claims of an earlier release are not in the index reconciliation reads: added once
            // per deployment, at start, so no reconciliation of `run` scans. A failure is not
            // fatal: the first reconciliation fills it instead.
            if let Err(e) = store.index_unsettled().await {
                tracing::warn!(error.cause_chain = %CauseChain(&e), "could not index the unsettled claims of an earlier release yet; the first reconciliation will");
            }
        }
        Ok(App {
            sources: config.sources.specs.clone(),
            reader,
            links: config.text.links.clone(),
            filter: config.filter.clone(),
            store,
            policy,
            channels_file: config.posting.channels.file().is_some(),
            channels,
            poll_interval: config.service.poll_interval,
            dry_run: config.dry_run(),
            out,
            json: config.json(),
            saw_marker: std::sync::atomic::AtomicBool::new(false),
            channel_markers_refreshed: Mutex::new(None),
            backoff: Mutex::new(vec![Backoff::default(); config.sources.specs.len()]),
            last_source_read: Mutex::new(Instant::now()),
            health_max_stale_cycles: config.service.health_max_stale_cycles,
            eviction_policy_asserted: config.store.redis.eviction_policy_asserted,
            eviction_refusal: Mutex::new(None),
            clock,
            journal,
        })
    }

    /// The first channel's announcer (the environment's X channel without a channels file; for
    /// tests and embedding).
    pub fn announcer(&self) -> &Announcer {
        &self.channels[0].announcer
    }

    /// The channels announced on, in order.
    pub fn channels(&self) -> &[ChannelRun] {
        &self.channels
    }

    /// The base store (the deployment's first-start marker; the environment's X channel's
    /// claims when there is no channels file).
    pub fn store(&self) -> &ClaimStore {
        &self.store
    }

    /// Whether any channel halted (its platform refused the credentials, the account or the
    /// webhook), while the others may go on: what `backfill` and a bounded `run` exit 4 for.
    pub fn any_halted(&self) -> bool {
        self.channels.iter().any(|c| c.halted().is_some())
    }

    /// Why posting stopped, when it stopped on every channel (bad credentials, credits
    /// depleted, a deleted webhook…); a channel halted alone is skipped while the others go on.
    pub fn halted(&self) -> Option<String> {
        let halted: Vec<String> = self
            .channels
            .iter()
            .map(|c| c.halted().map(|why| (c.name(), why)))
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .map(|(name, why)| {
                if self.channels.len() == 1 {
                    why.to_string()
                } else {
                    format!("{name}: {why}")
                }
            })
            .collect();
        Some(halted.join("; "))
    }

    /// One cycle, then the summary. Success means every source was read and posting did not
    /// halt.
    pub async fn backfill(&self) -> (Summary, bool) {
        self.backfill_until_cancelled(&CancellationToken::new()).await
    }

    /// [`App::backfill`], stopping early when `cancel` fires: while the sources are read, or
    /// between matches, never inside one (a post in flight finishes and is recorded), as
    /// [`App::run_until_cancelled`] stops. The summary counts what was done.
    pub async fn backfill_until_cancelled(&self, cancel: &CancellationToken) -> (Summary, bool) {
        let summary = self.cycle(cancel).await;
        let ok = summary.sources_failed == 0
            && summary.store_errors == 0
            && summary.refused.is_none()
            && self.halted().is_none();
        (summary, ok)
    }

    /// Settles every channel's `unknown` and stuck claims with its platform (see
    /// [`crate::reconcile`]), found in one pass for every channel; none in a dry run, which
    /// writes nothing.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot list its claims.
    pub async fn reconcile(&self) -> Result<Vec<Decision>, ClaimError> {
        if self.dry_run {
            return Ok(Vec::new());
        }
        // A Discord or Telegram channel cannot be asked: `claims reconcile` lists its claims for
        // the operator, and `run` does not read them for nothing.
        let asked: Vec<_> = self
            .channels
            .iter()
            .filter_map(|c| Some((c, c.announcer.sink().filter(|sink| asks(sink))?)))
            .collect();
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        let pairs: Vec<_> = asked.iter().map(|(c, sink)| (c.announcer.store(), *sink)).collect();
        let found = reconcile_all(&self.store, &pairs, self.policy.stuck_after).await?;
        let now = self.clock.now();
        let mut decisions = Vec::new();
        for ((c, _), found) in asked.iter().zip(found) {
            self.journal.reconciled(c.name(), c.event(), &found, now);
            decisions.extend(found);
        }
        Ok(decisions)
    }

    /// Polls until `cancel` fires, or after `max_cycles` cycles when given. A cycle in
    /// progress finishes its current match first. Cycles start on a schedule of one per poll
    /// interval, each delayed by up to [`POLL_JITTER_FRACTION`] of it at random so replicas do
    /// not poll in lockstep; the first starts at once. When a waiting match's announcement
    /// window (`ANNOUNCE_BEFORE`) opens before the next poll, a cycle starts [`WINDOW_MARGIN`]
    /// after the opening instead (with the same jitter), and the schedule goes on one interval
    /// from there: the poll interval is the longest the loop ever sleeps. Time is the app's
    /// clock's ([`App::build_on`]): a test's manual clock lets a day of polls pass in moments.
    ///
    /// Returns how the run ended: why, when it stopped because this bot may not post (the
    /// store was never initialised or lost its data, or posting halted: waiting would not
    /// change that, and an idle bot that looks alive hides it), and how many posts failed or
    /// ended unknown over all its cycles.
    pub async fn run_until_cancelled(&self, cancel: CancellationToken, max_cycles: Option<u64>) -> RunEnd {
        // At most MAX_SECS (ten years) by configuration; the hidden POLL_INTERVAL_MS is bounded
        // here too, so that no date arithmetic below can overflow.
        let longest = chrono::TimeDelta::seconds(crate::config::MAX_SECS.cast_signed());
        let interval = chrono::TimeDelta::from_std(self.poll_interval).map_or(longest, |i| i.min(longest));
        let mut next_poll = self.clock.now();
        let mut next_window: Option<chrono::DateTime<chrono::Utc>> = None;
        let mut done: u64 = 0;
        let mut end = RunEnd::default();
        let mut reconcile_again_at: Option<chrono::DateTime<chrono::Utc>> = None;
        loop {
            // The next cycle: the schedule's, or a window's opening when that comes first.
            let wake = next_window.filter(|w| *w < next_poll).unwrap_or(next_poll);
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = self.clock.sleep_until(wake) => {}
            }
            // A cycle longer than the interval (slow pages, many posts) pushes the schedule
            // back instead of running the missed cycles in a burst to catch up; a timer's
            // few milliseconds late are no reason to move it.
            let now = self.clock.now();
            let late = now - wake > chrono::TimeDelta::seconds(1);
            next_poll = if late { now } else { wake } + interval;
            if done > 0 {
                let jitter = self.poll_interval.mul_f64(POLL_JITTER_FRACTION * rand::random::<f64>());
                let until = self.clock.now() + chrono::TimeDelta::from_std(jitter).unwrap_or_default();
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = self.clock.sleep_until(until) => {}
                }
            }
            let summary = self.cycle(&cancel).await;
            done += 1;
            next_window = summary.next_window.map(|opens| opens + WINDOW_MARGIN);
            end.failed_posts = end.failed_posts.saturating_add(summary.failed);
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
                waiting = summary.waiting,
                stuck_claims = summary.stuck_claims,
                dry_run = self.dry_run,
                "cycle done"
            );
            if let Some(why) = self.halted() {
                tracing::error!(reason = %why, "posting halted; fix the account or credentials and restart");
                end.refused = Some(format!("posting halted: {why}"));
                return end;
            }
            // Unknown and stuck claims are settled with the platform on the first cycle, then
            // every RECONCILE_EVERY_CYCLES (see `crate::reconcile`), and as soon as a post the
            // last reconciliation had to leave for later may be repeated (Mastodon's wait
            // after a send: its one-hour window would often close before the next one).
            let due = (done - 1).is_multiple_of(RECONCILE_EVERY_CYCLES)
                || reconcile_again_at.is_some_and(|at| self.clock.now() >= at);
            if due && !cancel.is_cancelled() {
                match self.reconcile().await {
                    Ok(decisions) => reconcile_again_at = earliest_wait(&decisions),
                    Err(e) => {
                        tracing::error!(error.cause_chain = %CauseChain(&e), "reconciliation failed: the store could not list the claims");
                    }
                }
            }
            if let (false, Some(why)) = (self.dry_run, &summary.refused) {
                // The refusal may be a store that did not answer (worth another cycle) or one
                // that may not be posted to (not worth any): asked again to tell them apart.
                if let Ok(StoreReadiness::NotInitialised | StoreReadiness::Wiped) = self.readiness().await {
                    end.refused = Some(why.clone());
                    return end;
                }
            }
            if max_cycles.is_some_and(|n| done >= n) {
                tracing::info!(cycles = done, "cycle limit reached");
                break;
            }
        }
        tracing::info!("stopped");
        end
    }
}

/// How [`App::run_until_cancelled`] ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunEnd {
    /// Why it stopped, when this bot may not post (the store was never initialised or lost its
    /// data, or posting halted); `None` when it stopped on a signal or at its cycle limit.
    pub refused: Option<String>,
    /// Posts that failed or whose outcome is unknown, over every cycle of the run.
    pub failed_posts: usize,
}
