//! What this running process did, kept in memory for the operator's status page (`GET /` and
//! `GET /status.json` on `METRICS_ADDR`, see [`crate::status`]): each source's last read and
//! error, each channel's posts by day, the last announcements and results with a link to each
//! post, and what waits (unknown and stuck claims, Mastodon repeats, announcement windows).
//!
//! This module owns that record ([`Journal`]), the page's data ([`Snapshot`], in
//! `snapshot.rs`) and the post links (`link.rs`). The cycle, the source reads and the
//! reconciliation write to it as they go; the page reads it, so a page view costs the store
//! nothing. Everything is bounded: the last [`RECENT_POSTS`] posts, [`CHART_DAYS`] days of
//! counts, [`MAX_ROWS`] waiting rows per channel. It covers this process since it started: a
//! replica shows what it did, and a restart starts it afresh.

mod link;
mod snapshot;

pub use link::post_link;
pub use snapshot::{ChannelRow, ClaimRow, PostRow, PostState, Snapshot, SourceRow, Waiting, WindowRow};

use crate::announcer::Outcome;
use crate::cricket::Sighting;
use crate::event::Event;
use crate::post::{SinkKind, Verdict};
use crate::reconcile::{Decision, Settled};
use crate::source::{Location, SourceSpec};
use crate::telemetry::CauseChain;
use crate::zone::Zone;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many of the last posts (announcements and results, every channel) are kept and shown.
pub const RECENT_POSTS: usize = 50;
/// How many days of posts per channel the chart shows (today included).
pub const CHART_DAYS: usize = 14;
/// Most waiting rows kept per channel (claims a reconciliation found, matches waiting for
/// their window): the page stays small however much waits.
pub const MAX_ROWS: usize = 50;
/// Most posts of unknown outcome remembered per channel (match key and day) so that a
/// reconciliation settling one `posted` moves it to the posts of its day: an unknown outcome
/// is a platform's failure, rare; past this many the oldest is forgotten (its count stays
/// unknown).
pub const UNKNOWN_KEPT: usize = 1_000;

/// What this process did, for the status page. Cheap to write (a lock and a few counters per
/// post or source read); see the module doc.
#[derive(Debug)]
pub struct Journal {
    started_at: DateTime<Utc>,
    /// The zone whose days the posts are counted by (the bot's `TIMEZONE`).
    zone: Zone,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    sources: Vec<SourceRow>,
    channels: Vec<ChannelLog>,
    recent: VecDeque<PostRow>,
    cycles: u64,
    last_cycle: Option<DateTime<Utc>>,
    stuck_last_cycle: usize,
}

/// One channel's run, as recorded.
#[derive(Debug)]
struct ChannelLog {
    name: String,
    event: Event,
    sink: SinkKind,
    /// Posts per day (in the journal's zone), oldest first, at most [`CHART_DAYS`] days.
    by_day: VecDeque<(NaiveDate, u32)>,
    failed: u32,
    unknown: u32,
    /// Dry run: posts that would have been made (never counted as posts).
    would_post: u32,
    /// The posts of unknown outcome still counted in `unknown`: match key and the day (in the
    /// journal's zone) it was tried, oldest first, at most [`UNKNOWN_KEPT`].
    unknown_keys: VecDeque<(String, NaiveDate)>,
    waiting: usize,
    claims: Vec<ClaimRow>,
    windows: Vec<WindowRow>,
}

/// One channel's run as [`Journal::new`] is told of it: its name, what it posts, its sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelInfo {
    /// The channel's name.
    pub name: String,
    /// The event the run posts.
    pub event: Event,
    /// The channel's sink.
    pub sink: SinkKind,
}

impl Journal {
    /// An empty journal of a process started at `started_at`, reading `sources` (in order) and
    /// posting on `channels` (in order), counting posts by the days of `zone`.
    pub fn new(sources: &[SourceSpec], channels: Vec<ChannelInfo>, started_at: DateTime<Utc>, zone: Zone) -> Journal {
        let sources = sources
            .iter()
            .map(|spec| SourceRow {
                source: spec.to_string(),
                kind: spec
                    .kind
                    .as_ref()
                    .map_or_else(|| "detect".to_string(), ToString::to_string),
                host: match &spec.location {
                    Location::Url(u) => u.host_str().unwrap_or_default().to_string(),
                    Location::File(_) => "file".to_string(),
                },
                location: location(&spec.location),
                last_read: None,
                matches: None,
                reads: 0,
                failures: 0,
                failures_in_a_row: 0,
                last_error: None,
                last_error_at: None,
                backoff_cycles: 0,
            })
            .collect();
        let channels = channels
            .into_iter()
            .map(|c| ChannelLog {
                name: c.name,
                event: c.event,
                sink: c.sink,
                by_day: VecDeque::with_capacity(CHART_DAYS + 1),
                failed: 0,
                unknown: 0,
                would_post: 0,
                unknown_keys: VecDeque::new(),
                waiting: 0,
                claims: Vec::new(),
                windows: Vec::new(),
            })
            .collect();
        Journal {
            started_at,
            zone,
            inner: Mutex::new(Inner {
                sources,
                channels,
                recent: VecDeque::with_capacity(RECENT_POSTS + 1),
                cycles: 0,
                last_cycle: None,
                stuck_last_cycle: 0,
            }),
        }
    }

    /// Runs `f` on the record; a lock poisoned by a panic elsewhere is used as it is (a
    /// count may be off; the page must still answer).
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut inner)
    }

    /// Source number `index` was read at `at`, listing `matches` matches.
    pub fn source_read(&self, index: usize, matches: usize, at: DateTime<Utc>) {
        self.with(|i| {
            if let Some(s) = i.sources.get_mut(index) {
                s.last_read = Some(at);
                s.matches = Some(matches);
                s.reads += 1;
                s.failures_in_a_row = 0;
                s.last_error = None;
                s.backoff_cycles = 0;
            }
        });
    }

    /// Source number `index` failed at `at` with `error` (the error, whose cause chain is
    /// shown as the log shows it), `failures_in_a_row` times now; it is skipped for
    /// `backoff_cycles` cycles.
    pub fn source_failed(
        &self,
        index: usize,
        error: &(dyn std::error::Error + 'static),
        failures_in_a_row: u32,
        backoff_cycles: u32,
        at: DateTime<Utc>,
    ) {
        let message = CauseChain(error).to_string();
        self.with(|i| {
            if let Some(s) = i.sources.get_mut(index) {
                s.failures += 1;
                s.failures_in_a_row = failures_in_a_row;
                s.last_error = Some(message);
                s.last_error_at = Some(at);
                s.backoff_cycles = backoff_cycles;
            }
        });
    }

    /// Source number `index` was skipped by its backoff, for `cycles_left` more cycles.
    pub fn source_skipped(&self, index: usize, cycles_left: u32) {
        self.with(|i| {
            if let Some(s) = i.sources.get_mut(index) {
                s.backoff_cycles = cycles_left;
            }
        });
    }

    /// The channel `channel`'s run of `event` announced `sighting` at `at`, with `outcome`.
    /// Only what reached the platform (or, in a dry run, would) is recorded: a match held,
    /// withheld or deferred is not a post.
    pub fn announced(&self, channel: &str, event: Event, sighting: &Sighting, outcome: &Outcome, at: DateTime<Utc>) {
        let Some(sink) = self.with(|i| {
            i.channels
                .iter()
                .find(|c| c.name == channel && c.event == event)
                .map(|c| c.sink)
        }) else {
            return;
        };
        let (state, post_id, link, error) = match outcome {
            Outcome::Posted(receipt) => (
                PostState::Posted,
                Some(receipt.id.clone()),
                post_link(receipt.sink, &receipt.id, receipt.url.as_deref()),
                None,
            ),
            Outcome::AlreadyPosted { id, .. } => (
                PostState::AlreadyPosted,
                id.clone(),
                id.as_deref().and_then(|id| post_link(sink, id, None)),
                None,
            ),
            Outcome::PostFailed { verdict, error, .. } => (
                if *verdict == Verdict::Unknown {
                    PostState::Unknown
                } else {
                    PostState::Failed
                },
                None,
                None,
                Some(CauseChain(error).to_string()),
            ),
            Outcome::WouldPost(_) => (PostState::WouldPost, None, None, None),
            Outcome::Skipped { .. } | Outcome::Withheld { .. } | Outcome::Deferred { .. } => return,
        };
        self.record(channel, event, sighting, (state, post_id, link, error), at);
    }

    /// Records a post of `sighting` on the channel `channel`'s run of `event` at `at`: its
    /// state, the post's id and link, the error; and counts it by its state.
    fn record(
        &self,
        channel: &str,
        event: Event,
        sighting: &Sighting,
        (state, post_id, link, error): (PostState, Option<String>, Option<String>, Option<String>),
        at: DateTime<Utc>,
    ) {
        let day = self.zone.date(at);
        self.with(|i| {
            let Some(log) = i.channels.iter_mut().find(|c| c.name == channel && c.event == event) else {
                return;
            };
            match state {
                PostState::Posted | PostState::AlreadyPosted => log.count_post(day),
                // A dry run posts nothing: its would-be posts are counted apart.
                PostState::WouldPost => log.would_post = log.would_post.saturating_add(1),
                PostState::Failed => log.failed = log.failed.saturating_add(1),
                PostState::Unknown => {
                    log.unknown = log.unknown.saturating_add(1);
                    log.unknown_keys.push_back((sighting.ids.key.to_string(), day));
                    if log.unknown_keys.len() > UNKNOWN_KEPT {
                        log.unknown_keys.pop_front();
                    }
                }
            }
            let m = &sighting.m;
            i.recent.push_front(PostRow {
                at,
                channel: channel.to_string(),
                event: event.as_str().to_string(),
                title: m.title(),
                description: m.description.as_ref().map(ToString::to_string),
                key: sighting.ids.key.to_string(),
                match_url: matches!(m.url.scheme(), "http" | "https").then(|| m.url.to_string()),
                state,
                post_id,
                link,
                error,
                settled_at: None,
            });
            i.recent.truncate(RECENT_POSTS);
        });
    }

    /// What the last reconciliation of the channel `channel`'s run of `event` decided, at
    /// `at` (replacing what the one before decided). A post this process recorded `unknown`
    /// that the reconciliation settled `posted` becomes a post: its row in the recent posts
    /// says `posted` with the post's id and link (and when it was settled), and the channel
    /// counts it among the posts of the day it was tried instead of the unknown ones.
    pub fn reconciled(&self, channel: &str, event: Event, decisions: &[Decision], at: DateTime<Utc>) {
        let rows: Vec<ClaimRow> = decisions
            .iter()
            .take(MAX_ROWS)
            .map(|d| {
                let (decided, repeat_at) = describe(&d.outcome);
                ClaimRow {
                    channel: channel.to_string(),
                    key: d.key.to_string(),
                    was: d.was.to_string(),
                    decided,
                    settled: matches!(d.outcome, Settled::Posted { .. }),
                    repeat_at,
                    seen_at: at,
                }
            })
            .collect();
        let settled: Vec<(String, &str)> = decisions
            .iter()
            .filter_map(|d| match &d.outcome {
                Settled::Posted { id, .. } => Some((d.key.to_string(), id.as_str())),
                _ => None,
            })
            .collect();
        self.with(|i| {
            let Some(log) = i.channels.iter_mut().find(|c| c.name == channel && c.event == event) else {
                return;
            };
            log.claims = rows;
            for (key, id) in &settled {
                // Only a post this process counted unknown moves, once: a claim another
                // process left unknown was never counted here.
                if let Some(at) = log.unknown_keys.iter().position(|(k, _)| k == key) {
                    if let Some((_, day)) = log.unknown_keys.remove(at) {
                        log.unknown = log.unknown.saturating_sub(1);
                        log.count_post(day);
                    }
                }
                let sink = log.sink;
                for row in i.recent.iter_mut().filter(|r| {
                    r.state == PostState::Unknown && r.channel == channel && r.event == event.as_str() && r.key == *key
                }) {
                    row.state = PostState::Posted;
                    row.post_id = Some((*id).to_string());
                    row.link = post_link(sink, id, None);
                    row.settled_at = Some(at);
                }
            }
        });
    }

    /// The matches the last cycle left waiting for their windows on the channel `channel`'s
    /// run of `event`: each sighting with when its window opens (replacing the cycle
    /// before's).
    pub fn windows(&self, channel: &str, event: Event, waiting: &[(&Sighting, DateTime<Utc>)]) {
        let rows: Vec<WindowRow> = waiting
            .iter()
            .take(MAX_ROWS)
            .map(|(s, opens)| WindowRow {
                channel: channel.to_string(),
                title: s.m.title(),
                key: s.ids.key.to_string(),
                opens: *opens,
            })
            .collect();
        self.with(|i| {
            if let Some(log) = i.channels.iter_mut().find(|c| c.name == channel && c.event == event) {
                log.waiting = waiting.len();
                log.windows = rows;
            }
        });
    }

    /// A cycle ended at `at`, having met `stuck_claims` stuck claims.
    pub fn cycle_done(&self, stuck_claims: usize, at: DateTime<Utc>) {
        self.with(|i| {
            i.cycles += 1;
            i.last_cycle = Some(at);
            i.stuck_last_cycle = stuck_claims;
        });
    }

    /// What the journal holds, as of `now`: no channel halted and no problem (the app adds
    /// those: see `App::snapshot`).
    pub fn snapshot(&self, now: DateTime<Utc>, dry_run: bool) -> Snapshot {
        let today = self.zone.date(now);
        let days: Vec<NaiveDate> = (0..CHART_DAYS)
            .rev()
            .filter_map(|back| today.checked_sub_signed(TimeDelta::days(i64::try_from(back).unwrap_or(0))))
            .collect();
        let week_from = today.checked_sub_signed(TimeDelta::days(6)).unwrap_or(today);
        self.with(|i| {
            let mut windows: Vec<WindowRow> = i.channels.iter().flat_map(|c| c.windows.iter().cloned()).collect();
            windows.sort_by_key(|w| w.opens);
            Snapshot {
                generated_at: now,
                started_at: self.started_at,
                version: env!("CARGO_PKG_VERSION").to_string(),
                dry_run,
                zone: self.zone.name().to_string(),
                problems: Vec::new(),
                warnings: i.sources.iter().filter_map(failing).collect(),
                cycles: i.cycles,
                last_cycle: i.last_cycle,
                sources: i.sources.clone(),
                channels: i
                    .channels
                    .iter()
                    .map(|c| ChannelRow {
                        channel: c.name.clone(),
                        event: c.event.as_str().to_string(),
                        sink: c.sink.as_str().to_string(),
                        posts_today: c.on(today),
                        posts_this_week: c
                            .by_day
                            .iter()
                            .filter(|(d, _)| *d >= week_from && *d <= today)
                            .map(|(_, n)| n)
                            .sum(),
                        failed: c.failed,
                        unknown: c.unknown,
                        would_post: c.would_post,
                        waiting: c.waiting,
                        halted: None,
                        posts_by_day: days.iter().map(|d| c.on(*d)).collect(),
                    })
                    .collect(),
                recent: i.recent.iter().cloned().collect(),
                waiting: Waiting {
                    claims: i.channels.iter().flat_map(|c| c.claims.iter().cloned()).collect(),
                    stuck_last_cycle: i.stuck_last_cycle,
                    windows,
                },
                days,
            }
        })
    }
}

impl ChannelLog {
    /// Counts a post made on `day`, dropping the days the chart no longer shows.
    fn count_post(&mut self, day: NaiveDate) {
        match self.by_day.iter_mut().find(|(d, _)| *d == day) {
            Some((_, n)) => *n = n.saturating_add(1),
            None => {
                self.by_day.push_back((day, 1));
                self.by_day.make_contiguous().sort_by_key(|(d, _)| *d);
                while self.by_day.len() > CHART_DAYS {
                    self.by_day.pop_front();
                }
            }
        }
    }

    /// Posts made on `day`.
    fn on(&self, day: NaiveDate) -> u32 {
        self.by_day.iter().find(|(d, _)| *d == day).map_or(0, |(_, n)| *n)
    }
}

/// Where `location` is read, masked as the logs mask it: a URL's path and query (its host
/// has its own column), a file's path.
fn location(location: &Location) -> String {
    match location {
        Location::Url(u) => {
            let shown = crate::redact::url(u);
            match shown.query() {
                Some(q) => format!("{}?{q}", shown.path()),
                None => shown.path().to_string(),
            }
        }
        Location::File(p) => crate::redact::path(p),
    }
}

/// A warning for a source whose last read failed, or `None` while it reads.
fn failing(s: &SourceRow) -> Option<String> {
    let error = s.last_error.as_deref()?;
    let times = if s.failures_in_a_row == 1 { "time" } else { "times" };
    let mut warning = format!(
        "source {} failed {} {times} in a row: {error}",
        s.source, s.failures_in_a_row
    );
    if s.backoff_cycles > 0 {
        let cycles = if s.backoff_cycles == 1 { "cycle" } else { "cycles" };
        warning.push_str(&format!(" (skipped {} more {cycles})", s.backoff_cycles));
    }
    Some(warning)
}

/// A reconciliation's decision in words, and when a repeat may go when it must wait.
fn describe(outcome: &Settled) -> (String, Option<DateTime<Utc>>) {
    match outcome {
        Settled::Posted { id, how } => (format!("posted (id {id}): {}", how.describe()), None),
        Settled::StillUnknown { found } => (format!("still unknown: {found}"), None),
        Settled::Changed { state } => (format!("changed while checked: now {state}"), None),
        Settled::Waiting { until } => (
            format!("its post may be repeated from {}", until.format("%Y-%m-%d %H:%M UTC")),
            Some(*until),
        ),
        Settled::Repeating { by, until } => (
            format!("being repeated by {by} until {}", until.format("%Y-%m-%d %H:%M UTC")),
            None,
        ),
        Settled::NotAsked { why } => (format!("not asked: {why}"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{sample_match, Site};
    use crate::post::Receipt;
    use chrono::TimeZone;

    fn posted(id: &str) -> Outcome {
        Outcome::Posted(Receipt {
            sink: SinkKind::X,
            id: id.into(),
            url: None,
            dedupe_key: None,
            limits: None,
            cid: None,
        })
    }

    fn journal() -> Journal {
        let start = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        Journal::new(
            &[],
            vec![ChannelInfo {
                name: "x".into(),
                event: Event::Announce,
                sink: SinkKind::X,
            }],
            start,
            Zone::default(),
        )
    }

    #[test]
    fn it_keeps_the_last_fifty_posts_newest_first_and_fourteen_days_of_counts() {
        let j = journal();
        let start = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        // One post a day for 20 days, then 60 on the last.
        for day in 0..20 {
            j.announced(
                "x",
                Event::Announce,
                &s,
                &posted(&day.to_string()),
                start + TimeDelta::days(day),
            );
        }
        let last = start + TimeDelta::days(19);
        for n in 0..60 {
            j.announced("x", Event::Announce, &s, &posted(&format!("9{n}")), last);
        }
        let snap = j.snapshot(last, false);
        assert_eq!(snap.recent.len(), RECENT_POSTS);
        assert_eq!(snap.recent[0].post_id.as_deref(), Some("959"));
        assert_eq!(snap.recent[0].link.as_deref(), Some("https://x.com/i/web/status/959"));
        let c = &snap.channels[0];
        assert_eq!(c.posts_by_day.len(), CHART_DAYS);
        assert_eq!(c.posts_today, 61);
        assert_eq!(c.posts_this_week, 61 + 6);
        assert_eq!(c.posts_by_day.iter().sum::<u32>(), 61 + 13);
        assert_eq!(snap.days.last(), Some(&last.date_naive()));
    }

    #[test]
    fn what_is_not_a_post_is_not_listed_and_a_failure_is_counted_by_what_it_proves() {
        let j = journal();
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        j.announced("x", Event::Announce, &s, &Outcome::Withheld { reason: "not due" }, at);
        // Another channel's, or another event's, is not this one's.
        j.announced("y", Event::Announce, &s, &posted("1"), at);
        j.announced("x", Event::Result, &s, &posted("1"), at);
        let snap = j.snapshot(at, false);
        assert!(snap.recent.is_empty());
        assert_eq!(snap.channels[0].posts_today, 0);
    }

    #[test]
    fn what_waits_is_the_last_reconciliation_and_the_last_cycle_with_the_mastodon_repeat_time() {
        let j = journal();
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        let until = at + TimeDelta::minutes(10);
        let decision = |outcome| Decision {
            key: s.ids.key.clone(),
            was: "unknown",
            outcome,
        };
        j.reconciled(
            "x",
            Event::Announce,
            &[decision(Settled::NotAsked { why: "no id".into() })],
            at,
        );
        // The next reconciliation replaces the last one's rows.
        j.reconciled("x", Event::Announce, &[decision(Settled::Waiting { until })], at);
        j.windows("x", Event::Announce, &[(&s, until)]);
        j.cycle_done(2, at);
        let w = j.snapshot(at, false).waiting;
        assert_eq!(w.claims.len(), 1);
        assert_eq!(w.claims[0].repeat_at, Some(until));
        assert_eq!(w.claims[0].was, "unknown");
        assert_eq!(
            w.claims[0].decided,
            "its post may be repeated from 2026-12-01 12:10 UTC"
        );
        assert_eq!(w.stuck_last_cycle, 2);
        assert_eq!(w.windows.len(), 1);
        assert_eq!(w.windows[0].title, "Zimbabwe v Bangladesh");
        assert_eq!(w.windows[0].opens, until);
        j.windows("x", Event::Announce, &[]);
        assert!(j.snapshot(at, false).waiting.windows.is_empty());
    }

    fn unknown() -> Outcome {
        Outcome::PostFailed {
            claim_kept: true,
            verdict: Verdict::Unknown,
            error: crate::post::SinkError::BadReceipt {
                sink: SinkKind::X,
                status: 200,
                detail: "not JSON".into(),
            },
        }
    }

    #[test]
    fn a_post_a_reconciliation_settles_posted_becomes_a_post_of_its_day_with_its_link() {
        let j = journal();
        let tried = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let now = tried + TimeDelta::days(1);
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        let other = Sighting::new(sample_match(Site::Cricbuzz, "2", "India", "Australia", None));
        j.announced("x", Event::Announce, &s, &unknown(), tried);
        j.announced("x", Event::Announce, &other, &unknown(), tried);
        let before = j.snapshot(now, false);
        assert_eq!(before.channels[0].unknown, 2);
        assert_eq!(before.channels[0].posts_this_week, 0);
        assert_eq!(before.recent[1].state, PostState::Unknown);

        let found = [Decision {
            key: s.ids.key.clone(),
            was: "unknown",
            outcome: Settled::Posted {
                id: "1800000000000000001".into(),
                how: crate::reconcile::Learnt::Found,
            },
        }];
        j.reconciled("x", Event::Announce, &found, now);
        // Settled twice (the next reconciliation finds it again): counted once.
        j.reconciled("x", Event::Announce, &found, now);
        let after = j.snapshot(now, false);
        let row = &after.recent[1];
        assert_eq!(row.key, s.ids.key.to_string());
        assert_eq!(row.state, PostState::Posted);
        assert_eq!(row.post_id.as_deref(), Some("1800000000000000001"));
        assert_eq!(
            row.link.as_deref(),
            Some("https://x.com/i/web/status/1800000000000000001")
        );
        assert_eq!(row.settled_at, Some(now));
        assert_eq!(row.at, tried);
        // The other match is still unknown.
        assert_eq!(after.recent[0].state, PostState::Unknown);
        assert_eq!(after.recent[0].settled_at, None);
        let c = &after.channels[0];
        assert_eq!(c.unknown, 1);
        // A post of the day it was tried (yesterday), not of the day it was found.
        assert_eq!(c.posts_today, 0);
        assert_eq!(c.posts_this_week, 1);
        assert_eq!(c.posts_by_day[CHART_DAYS - 2], 1);
        assert_eq!(after.waiting.claims.len(), 1);
        assert!(after.waiting.claims[0].settled);
        assert!(after.waiting.claims[0]
            .decided
            .starts_with("posted (id 1800000000000000001)"));
    }

    #[test]
    fn a_claim_this_process_did_not_count_unknown_changes_no_count_when_settled() {
        let j = journal();
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        j.announced("x", Event::Announce, &s, &posted("5"), at);
        let found = Decision {
            key: s.ids.key.clone(),
            was: "unknown",
            outcome: Settled::Posted {
                id: "6".into(),
                how: crate::reconcile::Learnt::Found,
            },
        };
        j.reconciled("x", Event::Announce, &[found], at);
        let snap = j.snapshot(at, false);
        assert_eq!(snap.channels[0].posts_today, 1);
        assert_eq!(snap.channels[0].unknown, 0);
        assert_eq!(snap.recent[0].post_id.as_deref(), Some("5"));
        assert_eq!(snap.recent[0].settled_at, None);
    }

    #[test]
    fn a_dry_runs_would_be_posts_are_not_posts() {
        let j = journal();
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        for _ in 0..4 {
            j.record("x", Event::Announce, &s, (PostState::WouldPost, None, None, None), at);
        }
        let snap = j.snapshot(at, true);
        let c = &snap.channels[0];
        assert_eq!((c.posts_today, c.posts_this_week), (0, 0));
        assert_eq!(c.posts_by_day.iter().sum::<u32>(), 0);
        assert_eq!(c.would_post, 4);
        assert_eq!(snap.recent.len(), 4);
        assert!(snap.recent.iter().all(|r| r.state == PostState::WouldPost));
    }

    #[test]
    fn a_failing_source_is_a_warning_until_it_reads_and_each_source_says_where_it_reads() {
        let sources: Vec<SourceSpec> = [
            "cricbuzz=http://127.0.0.1:1/p/Xk9qL2mZ7vB4nR8t/live-scores?token=hunter2",
            "cricbuzz=/srv/pages/first.html",
            "cricbuzz=/srv/pages/second.html",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        let at = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let j = Journal::new(&sources, Vec::new(), at, Zone::default());
        let snap = j.snapshot(at, false);
        let locations: Vec<&str> = snap.sources.iter().map(|s| s.location.as_str()).collect();
        assert_eq!(
            locations,
            [
                "/p/REDACTED/live-scores?token=REDACTED",
                "/srv/pages/first.html",
                "/srv/pages/second.html"
            ]
        );
        assert!(snap.warnings.is_empty());

        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        j.source_failed(0, &refused, 2, 1, at);
        assert_eq!(
            j.snapshot(at, false).warnings,
            ["source cricbuzz=http://127.0.0.1:1/p/REDACTED/live-scores?token=REDACTED failed 2 times in a row: Connection refused (skipped 1 more cycle)"]
        );
        j.source_read(0, 3, at);
        assert!(j.snapshot(at, false).warnings.is_empty());
    }

    #[test]
    fn posts_are_counted_by_the_days_of_the_bots_time_zone() {
        let start = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let channel = ChannelInfo {
            name: "x".into(),
            event: Event::Announce,
            sink: SinkKind::X,
        };
        let j = Journal::new(&[], vec![channel], start, Zone::parse("Asia/Kolkata").unwrap());
        let s = Sighting::new(sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None));
        // 20:00 UTC on the 1st is 01:30 on the 2nd in Kolkata.
        let late = Utc.with_ymd_and_hms(2026, 12, 1, 20, 0, 0).unwrap();
        j.announced("x", Event::Announce, &s, &posted("1"), late);
        let snap = j.snapshot(late, false);
        assert_eq!(snap.zone, "Asia/Kolkata");
        assert_eq!(snap.days.last().map(ToString::to_string).as_deref(), Some("2026-12-02"));
        assert_eq!(snap.channels[0].posts_today, 1);
    }
}
