//! `seed`: the cycle's reading, each match recorded as `seeded` instead of posted, then the
//! first-start markers; in a dry run, what it would record, printed, with nothing written. With
//! a lead time (`ANNOUNCE_BEFORE`), only the matches already inside their announcement window
//! (or live) are recorded: the later ones stay unclaimed and are announced when their windows
//! open.

use super::{App, ChannelRun, ChannelSummary, Summary};
use crate::claim::{ClaimError, MarkerOrigin, MatchClaim, Transition};
use crate::cricket::Sighting;
use crate::schedule::{until, When};
use crate::telemetry::CauseChain;
use crate::text::escaped;
use std::io::Write;
use std::sync::atomic::Ordering;

/// Why a dry-run seed stopped before its last match.
enum Stop {
    /// The store did not answer.
    Store(ClaimError),
    /// The dry run's output cannot be written.
    Output(std::io::Error),
}

impl From<ClaimError> for Stop {
    fn from(e: ClaimError) -> Stop {
        Stop::Store(e)
    }
}

impl App {
    /// Records every current match (teams known) as `seeded` on every channel (or only on
    /// `only`), without posting, then marks the store (and each such channel) initialised.
    /// Matches already claimed are left as they are. On a channel with a lead time, a match
    /// whose window has not opened is not current: it is left unclaimed (counted `waiting`),
    /// to be announced when its window opens.
    ///
    /// In a dry run (an `App` built for one) nothing is written: each match is looked up under
    /// every identity, as its claim would find it, and printed to the dry run's output as
    /// `would record KEY  TITLE`, `already claimed KEY  TITLE (STATE, owner OWNER)` or `waits KEY
    /// TITLE (announced in 6 h, at …)` (with `--json`, an object with `would_record`,
    /// `already_claimed` or `waits`), after `[CHANNEL] ` (or
    /// with a `channel` field) when the channels come from a channels file; the summary counts
    /// them as seeded and skipped. A closed output ends the listing quietly; one that cannot be
    /// written otherwise stops it, and the summary says why in `refused`.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the markers are written only after every
    /// match was recorded, so an interrupted seed can simply be run again.
    pub async fn seed(&self, only: Option<&str>) -> Result<Summary, ClaimError> {
        let mut summary = Summary::default();
        let matches = self.read_sources(&mut summary).await;
        let several = self.channels_file;
        for channel in self.channels.iter().filter(|c| only.is_none_or(|n| n == c.name())) {
            let mut counts = ChannelSummary {
                channel: channel.name().to_string(),
                event: (channel.event() != crate::event::Event::Announce).then(|| channel.event().as_str()),
                ..ChannelSummary::default()
            };
            let placeholders = if self.dry_run {
                match self.preview_seed(channel, &matches, &mut counts).await {
                    Ok(placeholders) => placeholders,
                    Err(Stop::Store(e)) => return Err(e),
                    // The reader had what it wanted (`seed --dry-run | head`).
                    Err(Stop::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(summary),
                    Err(Stop::Output(e)) => {
                        tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written; stopping the dry run");
                        summary.refused = Some(format!("the dry run's output cannot be written: {e}"));
                        return Ok(summary);
                    }
                }
            } else {
                self.seed_channel(channel, &matches, &mut counts).await?
            };
            summary.not_announceable = placeholders;
            summary.seeded += counts.seeded;
            summary.skipped += counts.skipped;
            summary.waiting += counts.waiting;
            if !self.dry_run && summary.sources_failed == 0 && channel.own_marker {
                channel.initialise(MarkerOrigin::Seed, self.marker_ttl()).await?;
            }
            if several {
                summary.channels.push(counts);
            }
        }
        if self.dry_run {
            return Ok(summary);
        }
        if summary.sources_failed > 0 {
            tracing::error!("not marking the store initialised: a source failed, so its matches were not seeded");
            summary.refused = Some("a source failed; seed again when every source reads".into());
            return Ok(summary);
        }
        let (marker, wrote) = self.store.initialise(MarkerOrigin::Seed, self.marker_ttl()).await?;
        if !wrote {
            tracing::info!(by = %marker.by, at = %marker.at, "store was already initialised; seeded matches added");
        }
        self.saw_marker.store(true, Ordering::SeqCst);
        Ok(summary)
    }

    /// A dry run's turn for a channel that a real run would take for one just added (the
    /// deployment's marker present, the channel's own absent): what the real run's first cycle
    /// would record without posting, printed as `seed --dry-run` prints it, instead of posts
    /// that would never be made. A closed output ends the listing quietly; one that cannot be
    /// written otherwise is logged.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub(super) async fn preview_new_channel(
        &self,
        channel: &ChannelRun,
        matches: &[Sighting],
        counts: &mut ChannelSummary,
    ) -> Result<(), ClaimError> {
        match self.preview_seed(channel, matches, counts).await {
            Ok(_) => Ok(()),
            Err(Stop::Store(e)) => Err(e),
            Err(Stop::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(Stop::Output(e)) => {
                tracing::error!(error.cause_chain = %CauseChain(&e), "the dry run's output cannot be written");
                Ok(())
            }
        }
    }

    /// Records each of `matches` (teams known) that is current on `channel` (not waiting for
    /// its window, by the channel's lead time) as `seeded`; returns how many were left out for a
    /// placeholder team.
    pub(super) async fn seed_channel(
        &self,
        channel: &ChannelRun,
        matches: &[Sighting],
        counts: &mut ChannelSummary,
    ) -> Result<usize, ClaimError> {
        let store = channel.announcer.store();
        let ttl = self.policy.ttl;
        let (lead, now) = (channel.announcer.lead(), self.clock.now());
        let mut placeholders = 0;
        for sighting in matches {
            if sighting.m.has_placeholder_team() {
                placeholders += 1;
                continue;
            }
            if !channel.records_at_first_start(&sighting.m) {
                continue;
            }
            // Not current yet: announced when its window opens, so not recorded.
            if lead.when(&sighting.m, now) != When::Now {
                counts.waiting += 1;
                continue;
            }
            match store
                .claim_match(
                    &sighting.ids,
                    &sighting.m.claim_title(),
                    ttl,
                    self.policy.stuck_after,
                    false,
                )
                .await?
            {
                MatchClaim::Won(token) => {
                    store.transition(&token, &Transition::Seeded).await?;
                    counts.seeded += 1;
                }
                MatchClaim::Held { key, .. } => {
                    store.refresh(&key, ttl).await?;
                    counts.skipped += 1;
                }
                // Not asked for: a seed claims before it writes the marker.
                MatchClaim::NoMarker => counts.skipped += 1,
            }
        }
        Ok(placeholders)
    }

    /// [`App::seed_channel`] in a dry run: prints what it would record on `channel` (and what
    /// is already claimed there, found under any identity), reading the store only. Returns how
    /// many matches were left out for a placeholder team.
    async fn preview_seed(
        &self,
        channel: &ChannelRun,
        matches: &[Sighting],
        counts: &mut ChannelSummary,
    ) -> Result<usize, Stop> {
        let store = channel.announcer.store();
        // Named when a channels file names the channels, as the dry run's posts are.
        let named = self.channels_file.then(|| channel.name());
        let result = (channel.event() != crate::event::Event::Announce).then(|| channel.event().as_str());
        let (lead, now) = (channel.announcer.lead(), self.clock.now());
        let mut placeholders = 0;
        for s in matches {
            if s.m.has_placeholder_team() {
                placeholders += 1;
                continue;
            }
            if !channel.records_at_first_start(&s.m) {
                continue;
            }
            let title = s.m.claim_title();
            if let When::At(opens) = lead.when(&s.m, now) {
                counts.waiting += 1;
                let wait = until(now, opens);
                let line = if self.json {
                    let mut line = serde_json::json!({
                        "waits": s.ids.key,
                        "title": title,
                        "announce": wait,
                        "announce_at": opens.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    });
                    if let (Some(name), Some(fields)) = (named, line.as_object_mut()) {
                        fields.insert("channel".into(), name.into());
                    }
                    line.to_string()
                } else {
                    let prefix = named.map(|n| format!("[{n}] ")).unwrap_or_default();
                    let at = channel.announcer.zone().start(opens);
                    format!(
                        "{prefix}waits {}  {} (announced {wait}, at {at})",
                        s.ids.key,
                        escaped(&title)
                    )
                };
                self.print_line(&line)?;
                continue;
            }
            // Held through any identity, as the claim step would find it.
            let found = store.find(&s.ids).await?;
            let key = found.as_ref().map_or(&s.ids.key, |(k, _, _)| k).clone();
            let held = found.map(|(_, c, _)| c);
            if held.is_some() {
                counts.skipped += 1;
            } else {
                counts.seeded += 1;
            }
            let line = if self.json {
                let mut line = match &held {
                    None => serde_json::json!({ "would_record": key, "title": title, "aliases": s.ids.ids }),
                    Some(c) => {
                        serde_json::json!({ "already_claimed": key, "title": title, "state": c.state, "owner": c.owner })
                    }
                };
                if let (Some(name), Some(fields)) = (named, line.as_object_mut()) {
                    fields.insert("channel".into(), name.into());
                }
                if let (Some(event), Some(fields)) = (result, line.as_object_mut()) {
                    fields.insert("event".into(), event.into());
                }
                line.to_string()
            } else {
                let prefix = named.map(|n| format!("[{n}] ")).unwrap_or_default();
                // A result's record says so: the same match is listed for its announcement too.
                let prefix = match result {
                    Some(event) => format!("{prefix}({event}) "),
                    None => prefix,
                };
                match &held {
                    None => format!("{prefix}would record {key}  {}", escaped(&title)),
                    Some(c) => format!(
                        "{prefix}already claimed {key}  {} ({}, owner {})",
                        escaped(&title),
                        c.state,
                        escaped(&c.owner)
                    ),
                }
            };
            self.print_line(&line)?;
        }
        Ok(placeholders)
    }

    /// Writes `line` to the dry run's output.
    fn print_line(&self, line: &str) -> Result<(), Stop> {
        let mut out = self
            .out
            .lock()
            .map_err(|_| Stop::Output(std::io::Error::other("output poisoned")))?;
        writeln!(out, "{line}").and_then(|()| out.flush()).map_err(Stop::Output)
    }
}
