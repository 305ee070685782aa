//! One poll (read → filter → one batch look-up → announce each sighting in turn, within the
//! flood cap).

use super::{App, ChannelRun, ChannelSummary, StoreReadiness, Summary};
use crate::announcer::{holders_of_all, Announcer};
use crate::announcer::{AnnounceError, Outcome};
use crate::claim::{ClaimError, ClaimState, Holder, MarkerOrigin};
use crate::cricket::Sighting;
use crate::metric_names as names;
use crate::telemetry::CauseChain;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One sighting of a cycle, with whether the bot's filter lets it be announced (else why not).
struct Seen {
    sighting: Sighting,
    verdict: Result<(), &'static str>,
}

/// How a channel's turn in a cycle ended.
enum Turn {
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
        // First each channel's own first-start check and its verdicts, then ONE batch read of
        // every channel's holders, then each channel's announcements in turn.
        let mut counts: Vec<ChannelSummary> = self
            .channels
            .iter()
            .map(|c| ChannelSummary {
                channel: c.name().to_string(),
                ..ChannelSummary::default()
            })
            .collect();
        let mut ready: Vec<(usize, Vec<Result<(), &'static str>>)> = Vec::new();
        let mut stopped = false;
        for (at, channel) in self.channels.iter().enumerate() {
            if cancel.is_cancelled() {
                break;
            }
            match self.prepare_turn(channel, &seen, &mut summary, &mut counts[at]).await {
                Ok(Some(verdicts)) => ready.push((at, verdicts)),
                Ok(None) => {}
                Err(_) => {
                    stopped = true;
                    break;
                }
            }
        }
        if !stopped && !ready.is_empty() {
            let wanted: Vec<Vec<&Sighting>> = ready
                .iter()
                .map(|(_, verdicts)| {
                    seen.iter()
                        .zip(verdicts)
                        .filter(|(_, v)| v.is_ok())
                        .map(|(s, _)| &s.sighting)
                        .collect()
                })
                .collect();
            let lookups: Vec<(&Announcer, &[&Sighting])> = ready
                .iter()
                .zip(&wanted)
                .map(|((at, _), w)| (&self.channels[*at].announcer, w.as_slice()))
                .collect();
            // One round trip tells which matches are already claimed on every channel (and
            // refreshes their TTL), so the steady state, where nearly every match is held,
            // costs one batch per cycle instead of a claim per match and channel.
            match holders_of_all(&lookups).await {
                Ok(found) => {
                    for ((at, verdicts), holders) in ready.iter().zip(found) {
                        if cancel.is_cancelled() {
                            break;
                        }
                        let channel = &self.channels[*at];
                        let turn = self
                            .channel_turn(
                                channel,
                                &seen,
                                verdicts,
                                holders,
                                cancel,
                                &mut summary,
                                &mut counts[*at],
                            )
                            .await;
                        if let Turn::Stop = turn {
                            break;
                        }
                    }
                }
                Err(e) => {
                    store_failed(&mut summary, &e);
                }
            }
        }
        for (channel, mut counts) in self.channels.iter().zip(counts) {
            channel.announcer.publish_held();
            counts.halted = channel.announcer.halted();
            summary.posted += counts.posted;
            summary.skipped += counts.skipped;
            summary.failed += counts.failed;
            summary.deferred += counts.deferred;
            summary.seeded += counts.seeded;
            if self.channels_file {
                summary.channels.push(counts);
            }
        }
        summary
    }

    /// A channel's first-start check (a channel added to a running deployment records what is
    /// current instead of posting it) and its verdict on each sighting: the bot's filter, then
    /// its own. `Ok(None)`: the channel does not announce this cycle (halted, or just seeded);
    /// `Err`: the store failed, and the cycle stops.
    async fn prepare_turn(
        &self,
        channel: &ChannelRun,
        seen: &[Seen],
        summary: &mut Summary,
        counts: &mut ChannelSummary,
    ) -> Result<Option<Vec<Result<(), &'static str>>>, Turn> {
        let announcer = &channel.announcer;
        if announcer.halted().is_some() {
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
                    tracing::warn!(channel = %channel.name(), "new channel: recording the matches listed now without posting them (`seed --channel` does the same by hand)");
                    let sightings: Vec<Sighting> = seen.iter().map(|s| s.sighting.clone()).collect();
                    let seeded = match self.seed_channel(channel, &sightings, counts).await {
                        Ok(_) => announcer
                            .store()
                            .initialise(MarkerOrigin::NewChannel, self.marker_ttl())
                            .await
                            .map(|_| ()),
                        Err(e) => Err(e),
                    };
                    return match seeded {
                        Ok(()) => {
                            channel.saw_marker.store(true, Ordering::SeqCst);
                            Ok(None)
                        }
                        Err(e) => Err(store_failed(summary, &e)),
                    };
                }
                Err(e) => return Err(store_failed(summary, &e)),
            }
        }
        Ok(Some(
            seen.iter()
                .map(|s| s.verdict.and_then(|()| channel.takes(&s.sighting.m)))
                .collect(),
        ))
    }

    /// One channel's announcements: each match it takes, in order, with the holder the batch
    /// read found (`holders`, one per match it takes).
    #[allow(clippy::too_many_arguments)]
    async fn channel_turn(
        &self,
        channel: &ChannelRun,
        seen: &[Seen],
        verdicts: &[Result<(), &'static str>],
        holders: Vec<Option<Holder>>,
        cancel: &CancellationToken,
        summary: &mut Summary,
        counts: &mut ChannelSummary,
    ) -> Turn {
        let announcer = &channel.announcer;
        let mut holders = holders.into_iter();
        let mut announced = 0usize;
        // Per channel only with a channels file: the one X channel keeps the series it always
        // had.
        let label = self.channels_file.then(|| channel.name().to_string());
        let count = |outcome: &'static str| match &label {
            Some(c) => metrics::counter!(names::POSTS, "outcome" => outcome, "channel" => c.clone()).increment(1),
            None => metrics::counter!(names::POSTS, "outcome" => outcome).increment(1),
        };
        for (i, s) in seen.iter().enumerate() {
            if cancel.is_cancelled() || announcer.halted().is_some() {
                break;
            }
            let sighting = &s.sighting;
            if let Err(why) = verdicts[i] {
                tracing::debug!(match_key = %sighting.ids.key, channel = %channel.name(), reason = why, "not announced");
                continue;
            }
            let holder = holders.next().flatten();
            let announceable_left = || verdicts[i..].iter().filter(|v| v.is_ok()).count();
            // The flood cap paces real posts; a dry run previews every post the bot would make.
            if !self.dry_run && announced >= channel.max_posts_per_cycle {
                let left = announceable_left();
                counts.deferred = left;
                tracing::warn!(
                    cap = channel.max_posts_per_cycle,
                    left,
                    channel = %channel.name(),
                    "flood cap reached; the rest stay unclaimed for later cycles"
                );
                break;
            }
            let announced_now = announcer.announce(sighting, holder).await;
            summary.store_errors += announcer.take_unrecorded();
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
                    // Only a `claimed` holder can be stuck: no clock read for the others.
                    if holder.state == ClaimState::Claimed
                        && holder.is_stuck(chrono::Utc::now(), self.policy.stuck_after)
                    {
                        summary.stuck_claims += 1;
                    }
                }
                Ok(Outcome::Deferred { .. }) => {
                    count("deferred");
                    // Pace applies to every later match too: leave them all for later cycles.
                    counts.deferred = announceable_left();
                    break;
                }
                Ok(Outcome::PostFailed { .. }) => {
                    count("failed");
                    counts.failed += 1;
                    announced += 1;
                }
                Err(AnnounceError::Store { key, source }) => {
                    summary.store_errors += 1;
                    counts.failed += 1;
                    tracing::error!(match_key = %key, error.cause_chain = %CauseChain(&source), "store unavailable; not posting, will retry next cycle");
                    return Turn::Stop;
                }
                Err(e @ AnnounceError::NoMarker { .. }) => {
                    // The claim's own check: the store was wiped after this cycle's readiness
                    // check. Nothing was claimed; nothing more is tried.
                    let why = "the store lost its data (its first-start marker is gone); posting stopped so nothing is announced twice; run `cricket-announcer seed` to resume";
                    tracing::error!(error.message = %e, "{why}");
                    summary.refused = Some(why.into());
                    return Turn::Stop;
                }
                Err(e @ AnnounceError::Output(_)) => {
                    // Every later post would fail the same way: the dry run has nowhere to
                    // show its posts, so it stops, and a backfill says it did not complete.
                    counts.failed += 1;
                    tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written; stopping the dry run");
                    summary.refused = Some(e.to_string());
                    return Turn::Stop;
                }
                Err(e) => {
                    counts.failed += 1;
                    log_announce_error(&e);
                }
            }
        }
        Turn::Next
    }
}

/// Counts and logs a store failure that ends the cycle.
fn store_failed(summary: &mut Summary, e: &ClaimError) -> Turn {
    summary.store_errors += 1;
    tracing::error!(error.cause_chain = %CauseChain(e), "store unavailable; nothing posted this cycle");
    summary.refused = Some(format!("store unavailable: {e}"));
    Turn::Stop
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
