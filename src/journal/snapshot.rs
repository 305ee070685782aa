//! The status page's data: one [`Snapshot`] of what a running bot knows, rendered as the HTML
//! page and served as `/status.json`, so the two cannot disagree. Every field is plain data
//! (text, counts, UTC times); nothing here reads a store.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// What a running bot knows of itself at one moment, for the status page and `/status.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// When this snapshot was taken (UTC); every "time ago" on the page counts from it.
    pub generated_at: DateTime<Utc>,
    /// When this process started (UTC): the counts and lists cover the time since.
    pub started_at: DateTime<Utc>,
    /// The bot's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// Whether this is a dry run (nothing is posted; the posts are printed).
    pub dry_run: bool,
    /// The time zone whose days [`Snapshot::days`] and each channel's counts by day are (the
    /// bot's `TIMEZONE`, an IANA name; `UTC` by default).
    pub zone: String,
    /// What is wrong, as far as the process knows without asking the store (posting halted,
    /// a store that may evict claims, sources not read for too long); empty when nothing is.
    pub problems: Vec<String>,
    /// What may be wrong but does not fail `/healthz` (which only counts sources not read for
    /// `HEALTH_MAX_STALE_CYCLES` poll intervals): each source whose last read failed, masked
    /// as the logs show it. Empty when every source reads.
    pub warnings: Vec<String>,
    /// Poll cycles done since start.
    pub cycles: u64,
    /// When the last cycle ended (UTC), once one has.
    pub last_cycle: Option<DateTime<Utc>>,
    /// Each configured source, in the configured order.
    pub sources: Vec<SourceRow>,
    /// Each channel's run (a channel posting results too has a second row), in order.
    pub channels: Vec<ChannelRow>,
    /// The last announcements and results this process made or tried, newest first (at most
    /// [`super::RECENT_POSTS`]).
    pub recent: Vec<PostRow>,
    /// What waits: claims whose post's fate is open, repeats, and announcement windows.
    pub waiting: Waiting,
    /// The days of the chart, oldest first (dates in [`Snapshot::zone`]; the last is today): each channel's
    /// [`ChannelRow::posts_by_day`] lines up with them.
    pub days: Vec<NaiveDate>,
}

/// One source as the status page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRow {
    /// The source as configured, masked as in the logs (see [`crate::redact`]).
    pub source: String,
    /// Its parser (`cricbuzz`, `espncricinfo-rss`, …), or `detect` when found per page.
    pub kind: String,
    /// The host read (`www.cricbuzz.com`), or `file` for a local file.
    pub host: String,
    /// Where on it: a URL's path and query (`/cricket-match/live-scores`), a file's path, masked
    /// as in the logs (see [`crate::redact`]), so two sources on one host tell apart.
    pub location: String,
    /// When it was last read and parsed (UTC); `None` until it has been.
    pub last_read: Option<DateTime<Utc>>,
    /// Matches its last successful read listed.
    pub matches: Option<usize>,
    /// Successful reads since start.
    pub reads: u64,
    /// Failed reads since start.
    pub failures: u64,
    /// Failures since its last success.
    pub failures_in_a_row: u32,
    /// Its last error's message (as the log prints it), while it fails; `None` once it reads.
    pub last_error: Option<String>,
    /// When that error came (UTC).
    pub last_error_at: Option<DateTime<Utc>>,
    /// Cycles it is still skipped for after repeated failures (see [`crate::backoff`]).
    pub backoff_cycles: u32,
}

/// One channel's run (announcements or results) as the status page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRow {
    /// The channel's name (`x` for the environment's X account).
    pub channel: String,
    /// What it posts: `announce` or `result`.
    pub event: String,
    /// Its sink (`x`, `mastodon`, `bluesky`, `discord`, `telegram`).
    pub sink: String,
    /// Posts made today (in [`Snapshot::zone`]), by this process (0 in a dry run).
    pub posts_today: u32,
    /// Posts made over the last 7 days (today included), by this process.
    pub posts_this_week: u32,
    /// Posts that failed (nothing was created) since start.
    pub failed: u32,
    /// Posts whose outcome is unknown (the platform may have made them) since start, less
    /// those a reconciliation since found posted (counted as posts of their day).
    pub unknown: u32,
    /// Dry run: posts that would have been made since start (none is, so none counts in
    /// `posts_today`, `posts_this_week` or `posts_by_day`); 0 when posting.
    pub would_post: u32,
    /// Matches the last cycle left unclaimed until their announcement window opens.
    pub waiting: usize,
    /// Why posting stopped on this channel, when it did.
    pub halted: Option<String>,
    /// Posts per day, lined up with [`Snapshot::days`].
    pub posts_by_day: Vec<u32>,
}

/// What became of one announcement (or result) this process made or tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PostState {
    /// The platform created the post.
    Posted,
    /// The platform's answer proved the post was there already: counted as posted.
    AlreadyPosted,
    /// Nothing was created.
    Failed,
    /// The post may have been created: its claim is kept until reconciled.
    Unknown,
    /// Dry run: the post that would be made.
    WouldPost,
}

impl PostState {
    /// The state's name as the page and the JSON give it (`posted`, `already_posted`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PostState::Posted => "posted",
            PostState::AlreadyPosted => "already_posted",
            PostState::Failed => "failed",
            PostState::Unknown => "unknown",
            PostState::WouldPost => "would_post",
        }
    }
}

/// One announcement or result this process made or tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostRow {
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// The channel.
    pub channel: String,
    /// `announce` or `result`.
    pub event: String,
    /// The match, as its listing names it ("Zimbabwe v Bangladesh", 2nd T20I).
    pub title: String,
    /// The match's place in its series, when the page says ("2nd T20I").
    pub description: Option<String>,
    /// The match's key in the store.
    pub key: String,
    /// The match's page the post links to, when it is an `http` or `https` address (a page
    /// could list any other scheme; the status page links to none).
    pub match_url: Option<String>,
    /// What became of it.
    pub state: PostState,
    /// The post's id on its platform, when known.
    pub post_id: Option<String>,
    /// Where people see the post on its platform, when it can be linked (see
    /// [`super::post_link`]).
    pub link: Option<String>,
    /// Why it failed, as the log says (kept once a reconciliation settled it: why it was
    /// unknown).
    pub error: Option<String>,
    /// When a reconciliation found the post of this `unknown` try and it became `posted`
    /// (UTC); `None` otherwise.
    pub settled_at: Option<DateTime<Utc>>,
}

/// What waits, as far as this process knows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The `unknown` and stuck claims each channel's last reconciliation found, with what it
    /// decided (Mastodon repeats that must wait carry the time they may go).
    pub claims: Vec<ClaimRow>,
    /// Stuck claims (claimed, never recorded, past their deadline) the last cycle met.
    pub stuck_last_cycle: usize,
    /// Matches waiting for their announcement window (`ANNOUNCE_BEFORE`), soonest first.
    pub windows: Vec<WindowRow>,
}

/// One `unknown` or stuck claim a reconciliation found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// The channel.
    pub channel: String,
    /// The match's key.
    pub key: String,
    /// Its state as read: `unknown` or `stuck`.
    pub was: String,
    /// What the reconciliation decided, in words.
    pub decided: String,
    /// Whether it settled the claim: its post exists and is recorded `posted` (the row of the
    /// post, if this process tried it, says `posted` too).
    pub settled: bool,
    /// When its post may be repeated (Mastodon's wait after a send), when it must wait (UTC).
    pub repeat_at: Option<DateTime<Utc>>,
    /// When the reconciliation looked (UTC).
    pub seen_at: DateTime<Utc>,
}

/// One match waiting for its announcement window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowRow {
    /// The channel.
    pub channel: String,
    /// The match, as its listing names it.
    pub title: String,
    /// The match's key.
    pub key: String,
    /// When its window opens and it is announced (UTC).
    pub opens: DateTime<Utc>,
}
