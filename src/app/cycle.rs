//! One poll (read → filter → one batch look-up → announce each sighting in turn, within the
//! flood cap).

use super::window::{Halt, Waiting};
use super::{App, ChannelRun, ChannelSummary, StoreReadiness, Summary};
use crate::announcer::{holders_of_all, LookUp, Memory};
use crate::announcer::{AnnounceError, Outcome};
use crate::claim::{ClaimError, ClaimState, Holder, MarkerOrigin};
use crate::cricket::Sighting;
use crate::event::Event;
use crate::metric_names as names;
use crate::schedule::When;
use crate::telemetry::CauseChain;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One sighting of a cycle, with whether the bot's filter lets it be announced (else why not).
struct Seen {
    sighting: Sighting,
    verdict: Result<(), &'static str>,
}

/// One channel's part of a cycle: its memory, held for the whole turn, its work list, and what
/// it did.
struct Turn<'c, 's> {
    channel: &'c ChannelRun,
    memory: tokio::sync::MutexGuard<'c, Memory>,
    /// The sightings it announces this cycle, in order, each with what the batch look-up found;
    /// `None` when it does not announce this cycle (halted, just seeded, or the cycle stopped
    /// before it was ready).
    work: Option<Vec<Work<'s>>>,
    counts: ChannelSummary,
}

impl<'c> Turn<'c, '_> {
    /// `channel`'s turn, its memory taken for the turn.
    async fn new(channel: &'c ChannelRun) -> Self {
        Turn {
            channel,
            memory: channel.memory.lock().await,
            work: None,
            counts: ChannelSummary {
                channel: channel.name().to_string(),
                event: (channel.event() != Event::Announce).then(|| channel.event().as_str()),
                ..ChannelSummary::default()
            },
        }
    }
}

/// One match a channel's turn announces: the sighting, the holder the batch look-up found
/// (`None`: free, or not looked up; the claim step decides), and whether it is due now or waits
/// for its window (see [`crate::schedule`]).
struct Work<'s> {
    sighting: &'s Sighting,
    holder: Option<Holder>,
    when: When,
}

/// How a channel's turn in a cycle ended.
enum Step {
    /// Go on with the next channel.
    Next,
    /// Stop the cycle: the store failed, or lost its data, or the output is gone.
    Stop,
}

impl App {
    /// One poll: read, dedupe, filter, then on each channel in turn announce each match.
    /// Stops early (while reading sources, or between matches, never inside one) when
    /// `cancel` fires or the store fails; a channel stops early when its posting halted or its
    /// flood cap is reached. Outside dry run, nothing is posted unless the store is
    /// initialised (see [`App::readiness`]); a channel whose own first-start marker is missing
    /// (added to a running deployment) records what is current instead of posting it.
    pub async fn cycle(&self, cancel: &CancellationToken) -> Summary {
        let started = Instant::now();
        let summary = self.cycle_inner(cancel).await;
        record_metrics(&summary, started.elapsed());
        self.journal.cycle_done(summary.stuck_claims, self.clock.now());
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
        let seen: Vec<Seen> = matches
            .into_iter()
            .map(|sighting| Seen {
                verdict: self.filter.check(&sighting.m),
                sighting,
            })
            .collect();
        summary.not_announceable = seen.iter().filter(|s| s.verdict.is_err()).count();
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
        // First each channel's own first-start check and its work list, then ONE batch read of
        // every channel's holders, then each channel's announcements in turn.
        let mut turns = Vec::with_capacity(self.channels.len());
        for channel in &self.channels {
            turns.push(Turn::new(channel).await);
        }
        let mut stopped = false;
        for turn in &mut turns {
            if cancel.is_cancelled() {
                break;
            }
            match self
                .prepare_turn(turn.channel, &seen, &mut summary, &mut turn.counts)
                .await
            {
                Ok(work) => turn.work = work,
                Err(_) => {
                    stopped = true;
                    break;
                }
            }
        }
        if !stopped && turns.iter().any(|t| t.work.is_some()) {
            // One round trip tells which matches are already claimed on every channel (and
            // refreshes their TTL), so the steady state, where nearly every match is held,
            // costs one batch per cycle instead of a claim per match and channel.
            match look_up(&mut turns).await {
                Ok(()) => {
                    for turn in turns.iter_mut().filter(|t| t.work.is_some()) {
                        if cancel.is_cancelled() {
                            break;
                        }
                        if let Step::Stop = self.channel_turn(turn, cancel, &mut summary).await {
                            break;
                        }
                    }
                }
                Err(e) => {
                    store_failed(&mut summary, &e);
                }
            }
        }
        let by_event = self.channels.iter().any(|c| c.event() != Event::Announce);
        for mut turn in turns {
            turn.memory.publish_held(turn.channel.event());
            if by_event {
                add_to_event(&mut summary, turn.channel.event(), &turn.counts);
            }
            turn.counts.halted = turn.channel.halted().map(str::to_string);
            summary.posted += turn.counts.posted;
            summary.skipped += turn.counts.skipped;
            summary.failed += turn.counts.failed;
            summary.deferred += turn.counts.deferred;
            summary.seeded += turn.counts.seeded;
            summary.waiting += turn.counts.waiting;
            if self.channels_file {
                summary.channels.push(turn.counts);
            }
        }
        summary
    }

    /// Whether a real run would take `channel` for one added to a running deployment: the
    /// deployment's marker is there and the channel's own is not (read, never written).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    async fn new_channel_in_dry_run(&self, channel: &ChannelRun) -> Result<bool, ClaimError> {
        if channel.saw_marker.load(Ordering::SeqCst) || self.store.marker().await?.is_none() {
            return Ok(false);
        }
        Ok(match channel.announcer.store().marker().await? {
            Some(_) => {
                channel.saw_marker.store(true, Ordering::SeqCst);
                false
            }
            None => true,
        })
    }

    /// A channel's first-start check (a channel added to a running deployment records what is
    /// current instead of posting it) and its work list: the sightings the bot's filter, then
    /// its own, let it announce, in order. `Ok(None)`: the channel does not announce this cycle
    /// (halted, or just seeded); `Err`: the store failed, and the cycle stops.
    async fn prepare_turn<'s>(
        &self,
        channel: &ChannelRun,
        seen: &'s [Seen],
        summary: &mut Summary,
        counts: &mut ChannelSummary,
    ) -> Result<Option<Vec<Work<'s>>>, Step> {
        let announcer = &channel.announcer;
        if channel.halted().is_some() {
            return Ok(None);
        }
        if self.dry_run
            && channel.own_marker
            && self
                .new_channel_in_dry_run(channel)
                .await
                .map_err(|e| store_failed(summary, &e))?
        {
            // A real run's first cycle on this channel would record, not post: show that.
            tracing::warn!(channel = %channel.name(), "new channel: a real run records the matches listed now without posting them; the dry run lists them (`would record`)");
            let sightings: Vec<Sighting> = seen.iter().map(|s| s.sighting.clone()).collect();
            self.preview_new_channel(channel, &sightings, counts)
                .await
                .map_err(|e| store_failed(summary, &e))?;
            return Ok(None);
        }
        if !self.dry_run && channel.own_marker && !channel.saw_marker.load(Ordering::SeqCst) {
            match announcer.store().marker().await {
                Ok(Some(_)) => channel.saw_marker.store(true, Ordering::SeqCst),
                Ok(None) if summary.sources_failed > 0 => {
                    // Seeded now, the failed source's matches would be posted when it reads
                    // again: the channel waits for a cycle where every source reads.
                    tracing::warn!(channel = %channel.name(), "new channel: not recording the current matches while a source fails; it starts on a cycle where every source reads");
                    return Ok(None);
                }
                Ok(None) => {
                    // What is current now was announced elsewhere already, or is old news:
                    // record it, post what is new.
                    if channel.event() == Event::Result {
                        tracing::warn!(channel = %channel.name(), "results newly enabled on the channel: recording the results on the pages now without posting them");
                    } else {
                        tracing::warn!(channel = %channel.name(), "new channel: recording the matches listed now without posting them (`seed --channel` does the same by hand)");
                    }
                    let sightings: Vec<Sighting> = seen.iter().map(|s| s.sighting.clone()).collect();
                    let seeded = match self.seed_channel(channel, &sightings, counts).await {
                        Ok(_) => channel.initialise(MarkerOrigin::NewChannel, self.marker_ttl()).await,
                        Err(e) => Err(e),
                    };
                    return match seeded {
                        Ok(()) => Ok(None),
                        Err(e) => Err(store_failed(summary, &e)),
                    };
                }
                Err(e) => return Err(store_failed(summary, &e)),
            }
        }
        // Due now, or waiting for its window: one clock reading for the whole list.
        let (lead, now) = (announcer.lead(), self.clock.now());
        if channel.event() == Event::Result {
            // A result is due once its match is finished, whatever the states announced: only
            // the matches whose page proves a result no older than RESULT_MAX_AGE are looked up.
            let work = seen
                .iter()
                .filter(|s| {
                    let m = &s.sighting.m;
                    if self.filter.check_any_state(m).and_then(|()| channel.takes(m)).is_err() {
                        return false;
                    }
                    let due = announcer.result_due(m, now);
                    if !due && matches!(m.state, crate::cricket::MatchState::Complete | crate::cricket::MatchState::Abandoned) {
                        // Said, so a run that posts no result tells why (a new user saw nothing).
                        tracing::debug!(match_key = %s.sighting.ids.key, channel = %channel.name(), "result not posted: no result on its page, or its end older than RESULT_MAX_AGE");
                    }
                    due
                })
                .map(|s| Work {
                    sighting: &s.sighting,
                    holder: None,
                    when: When::Now,
                })
                .collect();
            return Ok(Some(work));
        }
        let work = seen
            .iter()
            .filter(|s| match s.verdict.and_then(|()| channel.takes(&s.sighting.m)) {
                Ok(()) => true,
                Err(why) => {
                    tracing::debug!(match_key = %s.sighting.ids.key, channel = %channel.name(), reason = why, "not announced");
                    false
                }
            })
            .map(|s| Work {
                sighting: &s.sighting,
                holder: None,
                when: lead.when(&s.sighting.m, now),
            })
            .collect();
        Ok(Some(work))
    }

    /// One channel's announcements: each item of its work list, in order, with the holder the
    /// batch look-up found for it.
    async fn channel_turn(&self, turn: &mut Turn<'_, '_>, cancel: &CancellationToken, summary: &mut Summary) -> Step {
        let channel = turn.channel;
        let announcer = &channel.announcer;
        let counts = &mut turn.counts;
        let memory = &mut *turn.memory;
        let work = turn.work.as_mut().map(std::mem::take).unwrap_or_default();
        // The matches whose window has not opened are never claimed: only counted (and, in a
        // dry run, printed) once the due ones had their turn.
        let (work, waiting) = split_waiting(work);
        let mut announced = 0usize;
        // Per channel only with a channels file: the one X channel keeps the series it always
        // had.
        let label = self.channels_file.then(|| channel.name().to_string());
        // A result's posts carry `event="result"`; an announcement's series are the ones they
        // always were (no `event` label is `announce`).
        let event = (channel.event() != Event::Announce).then(|| channel.event().as_str());
        let count = |outcome: &'static str| match (&label, event) {
            (Some(c), None) => {
                metrics::counter!(names::POSTS, "outcome" => outcome, "channel" => c.clone()).increment(1);
            }
            (None, None) => metrics::counter!(names::POSTS, "outcome" => outcome).increment(1),
            (Some(c), Some(e)) => {
                metrics::counter!(names::POSTS, "outcome" => outcome, "channel" => c.clone(), "event" => e)
                    .increment(1);
            }
            (None, Some(e)) => metrics::counter!(names::POSTS, "outcome" => outcome, "event" => e).increment(1),
        };
        let total = work.len();
        for (done, item) in work.into_iter().enumerate() {
            if cancel.is_cancelled() || channel.halted().is_some() {
                break;
            }
            // This item and every one after it.
            let left = total - done;
            // The flood cap paces real posts; a dry run previews every post the bot would make.
            if !self.dry_run && announced >= channel.max_posts_per_cycle {
                counts.deferred = left;
                tracing::warn!(
                    cap = channel.max_posts_per_cycle,
                    left,
                    channel = %channel.name(),
                    "flood cap reached; the rest stay unclaimed for later cycles"
                );
                break;
            }
            let announced_now = announcer.announce(memory, item.sighting, item.holder).await;
            if let Ok(outcome) = &announced_now {
                self.journal.announced(
                    channel.name(),
                    channel.event(),
                    item.sighting,
                    outcome,
                    self.clock.now(),
                );
            }
            summary.store_errors += memory.take_unrecorded();
            match announced_now {
                // A post the platform proved is there already counts as made: it is.
                Ok(outcome @ (Outcome::Posted(_) | Outcome::AlreadyPosted { .. } | Outcome::WouldPost(_))) => {
                    let outcome = if matches!(outcome, Outcome::WouldPost(_)) {
                        "would_post"
                    } else {
                        "posted"
                    };
                    count(outcome);
                    counts.posted += 1;
                    announced += 1;
                }
                Ok(Outcome::Skipped { holder }) => {
                    counts.skipped += 1;
                    // Only a `claimed` holder can be stuck: no clock read for the others. Its
                    // deadline is the store's time, so the store's clock judges it.
                    if holder.state == ClaimState::Claimed {
                        let now = announcer.store().now().await.unwrap_or_else(|_| self.clock.now());
                        if holder.is_stuck(now, self.policy.stuck_after) {
                            summary.stuck_claims += 1;
                        }
                    }
                }
                // A result not due now (its announcement in flight or unknown, or skipped by
                // the channel's setting): looked at again next cycle, nothing claimed.
                Ok(Outcome::Withheld { .. }) => counts.skipped += 1,
                Ok(Outcome::Deferred { .. }) => {
                    count("deferred");
                    // Pace applies to every later match too: leave them all for later cycles.
                    counts.deferred = left;
                    break;
                }
                Ok(failed @ Outcome::PostFailed { .. }) => {
                    count("failed");
                    counts.failed += 1;
                    announced += 1;
                    if let Some(why) = failed.halts() {
                        channel.halt(why);
                    }
                }
                Err(AnnounceError::Store { key, source }) => {
                    summary.store_errors += 1;
                    counts.failed += 1;
                    tracing::error!(match_key = %key, error.cause_chain = %CauseChain(&source), "store unavailable; not posting, will retry next cycle");
                    return Step::Stop;
                }
                Err(e @ AnnounceError::NoMarker { .. }) => {
                    // The claim's own check: the store was wiped after this cycle's readiness
                    // check. Nothing was claimed; nothing more is tried.
                    let why = "the store lost its data (its first-start marker is gone); posting stopped so nothing is announced twice; run `cricket-announcer seed` to resume";
                    tracing::error!(error.message = %e, "{why}");
                    summary.refused = Some(why.into());
                    return Step::Stop;
                }
                Err(e @ AnnounceError::Output(_)) => {
                    // Every later post would fail the same way: the dry run has nowhere to
                    // show its posts, so it stops, and a backfill says it did not complete.
                    counts.failed += 1;
                    tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written; stopping the dry run");
                    summary.refused = Some(e.to_string());
                    return Step::Stop;
                }
                Err(e) => {
                    counts.failed += 1;
                    log_announce_error(&e);
                }
            }
        }
        match self.wait_turn(channel, memory, waiting, counts, summary).await {
            Ok(()) => Step::Next,
            Err(Halt::Store(e)) => store_failed(summary, &e),
            Err(Halt::Output) => Step::Stop,
        }
    }
}

/// A channel's work list split into the matches due now and those waiting for their windows
/// (see `window.rs`). The due ones go soonest first (live ones, having started, before
/// upcoming ones; a listing without a start time last; the pages' order among equals): within
/// the flood cap and the pace, a match starting today is not left behind a backlog of later
/// ones (issue 36).
fn split_waiting(work: Vec<Work<'_>>) -> (Vec<Work<'_>>, Vec<Waiting<'_>>) {
    let mut due = Vec::with_capacity(work.len());
    let mut waiting = Vec::new();
    for w in work {
        match w.when {
            When::Now => due.push(w),
            When::At(opens) => waiting.push(Waiting {
                sighting: w.sighting,
                holder: w.holder,
                opens,
            }),
        }
    }
    due.sort_by_key(|w| (w.sighting.m.start_time.is_none(), w.sighting.m.start_time));
    (due, waiting)
}

/// One batch read of every channel's holders (those with a work list), written into each
/// work item.
///
/// # Errors
/// [`ClaimError`] when the store cannot answer; then no holder is known.
async fn look_up(turns: &mut [Turn<'_, '_>]) -> Result<(), ClaimError> {
    let sightings: Vec<Vec<&Sighting>> = turns
        .iter()
        .map(|t| t.work.iter().flatten().map(|w| w.sighting).collect())
        .collect();
    let found = {
        let mut lookups: Vec<LookUp<'_>> = turns
            .iter_mut()
            .zip(&sightings)
            .filter(|(t, _)| t.work.is_some())
            .map(|(t, sightings)| LookUp {
                announcer: &t.channel.announcer,
                memory: &mut t.memory,
                sightings,
            })
            .collect();
        holders_of_all(&mut lookups).await?
    };
    for (turn, holders) in turns.iter_mut().filter_map(|t| t.work.as_mut()).zip(found) {
        for (item, holder) in turn.iter_mut().zip(holders) {
            item.holder = holder;
        }
    }
    Ok(())
}

/// Adds one channel's turn, of `event`, to the summary's counts per event.
pub(super) fn add_to_event(summary: &mut Summary, event: Event, counts: &ChannelSummary) {
    let at = match summary.events.iter().position(|e| e.event == event.as_str()) {
        Some(at) => at,
        None => {
            summary.events.push(super::EventSummary {
                event: event.as_str(),
                ..super::EventSummary::default()
            });
            summary.events.len() - 1
        }
    };
    let e = &mut summary.events[at];
    e.posted += counts.posted;
    e.skipped += counts.skipped;
    e.failed += counts.failed;
    e.deferred += counts.deferred;
    e.seeded += counts.seeded;
}

/// Counts and logs a store failure that ends the cycle.
fn store_failed(summary: &mut Summary, e: &ClaimError) -> Step {
    summary.store_errors += 1;
    tracing::error!(error.cause_chain = %CauseChain(e), "store unavailable; nothing posted this cycle");
    summary.refused = Some(format!("store unavailable: {e}"));
    Step::Stop
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
    super::window::record_waiting(summary);
    metrics::counter!(names::STORE_ERRORS).increment(summary.store_errors as u64);
    metrics::histogram!(names::CYCLE_DURATION).record(took.as_secs_f64());
}

fn log_announce_error(e: &AnnounceError) {
    tracing::error!(error.cause_chain = %CauseChain(e), "match not announced");
}
