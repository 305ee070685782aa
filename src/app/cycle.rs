//! One poll (read → filter → one batch look-up → announce each sighting in turn, within the
//! flood cap), and `seed` (the same reading, recording instead of posting).

use super::{App, StoreReadiness, Summary};
use crate::announcer::{AnnounceError, Outcome};
use crate::claim::{ClaimError, Holder, MatchClaim, Transition};
use crate::cricket::Sighting;
use crate::metric_names as names;
use crate::telemetry::CauseChain;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One sighting of a cycle, with what the cycle learned of it: whether the filter lets it be
/// announced (else why not), and who holds its claim by the batch look-up.
struct Seen {
    sighting: Sighting,
    verdict: Result<(), &'static str>,
    holder: Option<Holder>,
}

impl App {
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
        let mut seen: Vec<Seen> = matches
            .into_iter()
            .map(|sighting| Seen {
                verdict: self.filter.check(&sighting.m),
                sighting,
                holder: None,
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
        // One round trip tells which matches are already claimed (and refreshes their TTL), so
        // the steady state, where nearly every match is held, costs one batch per cycle instead
        // of a claim per match.
        let wanted: Vec<&Sighting> = seen.iter().filter(|s| s.verdict.is_ok()).map(|s| &s.sighting).collect();
        let found = match self.announcer.holders_of(&wanted).await {
            Ok(found) => found,
            Err(e) => {
                summary.store_errors += 1;
                tracing::error!(error.cause_chain = %CauseChain(&e), "store unavailable; nothing posted this cycle");
                summary.refused = Some(format!("store unavailable: {e}"));
                return summary;
            }
        };
        for (s, holder) in seen.iter_mut().filter(|s| s.verdict.is_ok()).zip(found) {
            s.holder = holder;
        }
        let mut announced = 0usize;
        for i in 0..seen.len() {
            if cancel.is_cancelled() || self.announcer.halted().is_some() {
                break;
            }
            let holder = seen[i].holder.take();
            let sighting = &seen[i].sighting;
            if let Err(why) = seen[i].verdict {
                tracing::debug!(match_key = %sighting.ids.key, reason = why, "not announced");
                continue;
            }
            let announceable_left = || seen[i..].iter().filter(|s| s.verdict.is_ok()).count();
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
            match self.announcer.announce(sighting, holder).await {
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
