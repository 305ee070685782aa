//! The per-match protocol: render → claim → shorten → post → record. Returns an [`Outcome`];
//! losing a claim is an outcome, not an error.
//!
//! The post is rendered *before* the claim, so a post that cannot be made (too long, template
//! failure) never leaves a claim behind. After a failed post the claim keeps exactly the state
//! the failure proves (see [`crate::post::Verdict`]).

use crate::claim::{
    Checked, ClaimError, ClaimOutcome, ClaimStore, ClaimToken, Holder, LastRecords, Released, Transition,
};
use crate::cricket::{Match, MatchKey};
use crate::post::{Post, PostError, PostPace, PostReceipt, Verdict, XClient};
use crate::shorten::Shortener;
use crate::template::{RenderError, Template};
use chrono::Utc;
use serde::Serialize;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::Level;
use url::Url;

/// What happened to one match.
#[derive(Debug)]
pub enum Outcome {
    /// We won the claim and X created the post.
    Posted(PostReceipt),
    /// Someone else holds the claim (or, in dry run, would be skipped because of it).
    Skipped {
        /// Who holds the claim, since when, in which state.
        holder: Holder,
    },
    /// We won the claim and the post failed.
    PostFailed {
        /// Whether the claim still blocks the match (false: released for a later attempt).
        claim_kept: bool,
        /// What the failure proves.
        verdict: Verdict,
        /// The failure.
        error: PostError,
    },
    /// Dry run: this post would be sent.
    WouldPost(Post),
    /// Not claimed now because of pace: X's rate limit is exhausted until `until`, or the
    /// local pace (`POSTS_PER_MINUTE`, `POSTS_PER_DAY`) has no slot. Tried again later.
    Deferred {
        /// Why.
        reason: String,
        /// When posting may resume, when known.
        until: Option<chrono::DateTime<Utc>>,
    },
}

/// A match that could not be processed. The claim, if any, is in a known state.
#[derive(Debug, thiserror::Error)]
pub enum AnnounceError {
    /// The store could not answer; nothing was posted.
    #[error("match {key}: {source}")]
    Store {
        /// The match.
        key: MatchKey,
        /// The store's error.
        #[source]
        source: ClaimError,
    },
    /// The post could not be rendered (template failure, or too long even with the least
    /// important fields cut); nothing was claimed.
    #[error("match {key}: {source}")]
    Render {
        /// The match.
        key: MatchKey,
        /// What failed.
        #[source]
        source: RenderError,
    },
    /// Writing the dry-run output failed.
    #[error("cannot write dry-run output: {0}")]
    Output(#[source] std::io::Error),
}

/// Where dry-run posts are printed, shared by clones.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// How posts leave the process.
#[derive(Clone)]
pub enum Mode {
    /// Claim in the store and post to X, at the pace `pace` allows.
    Live(XClient, Arc<PostPace>),
    /// Only peek at claims; print each post to `out` (as JSON lines when `json`).
    DryRun {
        /// Where posts are printed.
        out: Output,
        /// One JSON object per post instead of text.
        json: bool,
        /// Whether to call the shortener.
        shorten: bool,
    },
}

/// How claims are held and given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimPolicy {
    /// Claim time to live; refreshed on each later sighting.
    pub ttl: Duration,
    /// Failures that prove nothing was posted, after which the match is recorded `failed`.
    pub max_attempts: u32,
    /// A `claimed` record older than this is stuck (its worker died between claim and post).
    pub stuck_after: Duration,
}

impl ClaimPolicy {
    /// The defaults: `ttl` as given, 3 attempts, stuck after `post_timeout` plus
    /// [`STUCK_MARGIN`] (the most a live worker can take between claim and record).
    pub fn new(ttl: Duration, max_attempts: u32, post_timeout: Duration) -> ClaimPolicy {
        ClaimPolicy {
            ttl,
            max_attempts,
            stuck_after: post_timeout + STUCK_MARGIN,
        }
    }
}

/// Time a live worker may spend between winning a claim and sending the post (shortening),
/// added to the post timeout to decide that a `claimed` record is stuck.
pub const STUCK_MARGIN: Duration = Duration::from_secs(15);

/// Announces matches. Cheap to clone; clones share the store, HTTP clients and output.
#[derive(Clone)]
pub struct Announcer {
    store: ClaimStore,
    template: Arc<Template>,
    shortener: Option<Shortener>,
    mode: Mode,
    policy: ClaimPolicy,
    halted: Arc<Mutex<Option<String>>>,
    refreshes: Arc<Mutex<Refreshes>>,
    /// The records the last batch look-up read (see [`Announcer::holders`]).
    last_records: Arc<Mutex<LastRecords>>,
}

/// How many times per claim TTL a process refreshes the TTLs of the matches it keeps seeing.
/// A refresh leaves a claim its full TTL, so refreshing every TTL/8 keeps at least 7/8 of it
/// (21 h of the minimum 24 h) on every listed match, while the cycles in between only read.
pub const REFRESHES_PER_TTL: u32 = 8;

/// When this process last refreshed the TTLs of the matches it looks up, and which matches
/// that refresh covered.
#[derive(Debug, Default)]
struct Refreshes {
    last: Option<std::time::Instant>,
    covered: foldhash::HashSet<MatchKey>,
}

impl Refreshes {
    /// True when a look-up of `keys` must refresh: never refreshed yet, the last refresh is
    /// `every` old, or a key is one the last refresh did not cover.
    fn due(&self, keys: &[&MatchKey], every: Duration) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= every) || keys.iter().any(|k| !self.covered.contains(*k))
    }
}

#[derive(Serialize)]
struct DryRunLine<'a> {
    match_key: &'a str,
    source: String,
    state: &'a str,
    weighted_length: usize,
    text: &'a str,
}

impl Announcer {
    /// An announcer claiming in `store` under `policy`, rendering with `template`.
    pub fn new(
        store: ClaimStore,
        template: Template,
        shortener: Option<Shortener>,
        mode: Mode,
        policy: ClaimPolicy,
    ) -> Announcer {
        Announcer {
            store,
            template: Arc::new(template),
            shortener,
            mode,
            policy,
            halted: Arc::new(Mutex::new(None)),
            refreshes: Arc::new(Mutex::new(Refreshes::default())),
            last_records: Arc::new(Mutex::new(LastRecords::default())),
        }
    }

    /// The claim policy in force.
    pub fn policy(&self) -> ClaimPolicy {
        self.policy
    }

    /// True in dry run: nothing is written or sent.
    pub fn is_dry_run(&self) -> bool {
        matches!(self.mode, Mode::DryRun { .. })
    }

    /// The store this announcer claims in.
    pub fn store(&self) -> &ClaimStore {
        &self.store
    }

    /// Why posting stopped for this process (bad credentials, credits depleted, permission),
    /// if it did. Once set, callers must not announce further matches.
    pub fn halted(&self) -> Option<String> {
        self.halted.lock().ok().and_then(|h| h.clone())
    }

    fn render(&self, key: &MatchKey, m: &Match, link: &Url) -> Result<Post, AnnounceError> {
        self.template
            .render_post(m, link)
            .map_err(|source| AnnounceError::Render {
                key: key.clone(),
                source,
            })
    }

    async fn link(&self, m: &Match) -> Url {
        let Some(shortener) = &self.shortener else {
            return m.url.clone();
        };
        match shortener.shorten(&m.url).await {
            Ok(short) => short,
            Err(e) => {
                tracing::warn!(url = %m.url, error.message = %e, "shortener failed; posting the long link");
                m.url.clone()
            }
        }
    }

    /// Runs the protocol for one match; see the module documentation.
    ///
    /// # Errors
    /// [`AnnounceError`] when the store cannot answer (nothing posted), or the post cannot be
    /// rendered (nothing claimed).
    pub async fn announce(&self, m: &Match) -> Result<Outcome, AnnounceError> {
        self.announce_sighting(m, &[m.alias()]).await
    }

    /// As [`Announcer::announce`], recording `aliases` (every source's id for this match seen
    /// this cycle) in the claim.
    ///
    /// # Errors
    /// As for [`Announcer::announce`].
    #[tracing::instrument(skip_all, fields(match_key = %MatchKey::for_match(m), source = %m.alias()))]
    pub async fn announce_sighting(&self, m: &Match, aliases: &[String]) -> Result<Outcome, AnnounceError> {
        self.announce_inner(m, aliases, false).await
    }

    /// The current holder of each of `keys` (`None`: unclaimed), in one store round trip:
    /// the batch a cycle makes before announcing, so matches already claimed cost no round trip
    /// of their own.
    ///
    /// Live, the look-up also gives every held claim the policy's full TTL again (what a later
    /// sighting owes a still-listed match, so it never expires into a second announcement), but
    /// only when due: on this process's first look-up, when a key is one the last refresh did not
    /// cover, and otherwise once per TTL / [`REFRESHES_PER_TTL`]. The look-ups in between only
    /// read (Redis: one `MGET` instead of a `GETEX` per match). In dry run nothing is written.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the refresh is then still due.
    pub async fn holders(&self, keys: &[&MatchKey]) -> Result<Vec<Option<Holder>>, ClaimError> {
        if self.is_dry_run() {
            return self.holders_since_last(keys, None).await;
        }
        let every = self.policy.ttl / REFRESHES_PER_TTL;
        // A poisoned lock only means another task panicked mid-update: refreshing is then the
        // safe answer, and the log is rebuilt below.
        let due = self.refreshes.lock().map_or(true, |r| r.due(keys, every));
        if !due {
            return self.holders_since_last(keys, None).await;
        }
        let started = std::time::Instant::now();
        let found = self.holders_since_last(keys, Some(self.policy.ttl)).await?;
        let mut log = self.refreshes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *log = Refreshes {
            last: Some(started),
            covered: keys.iter().map(|k| (*k).clone()).collect(),
        };
        Ok(found)
    }

    /// [`ClaimStore::holders_since`] this process's last look-up: the records read unchanged
    /// since (nearly all of them, cycle after cycle) are not parsed again.
    async fn holders_since_last(
        &self,
        keys: &[&MatchKey],
        refresh: Option<Duration>,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        // Taken out for the await (a std lock is not held across it), put back after; a
        // look-up running meanwhile starts from nothing, which only costs it the parsing.
        let mut last = std::mem::take(&mut *self.last_records.lock().unwrap_or_else(|p| p.into_inner()));
        let found = self.store.holders_since(keys, refresh, &mut last).await;
        *self.last_records.lock().unwrap_or_else(|p| p.into_inner()) = last;
        found
    }

    /// As [`Announcer::announce_sighting`], for a match whose holder the cycle already looked
    /// up with [`Announcer::holders`] under `key` (the match's [`MatchKey::for_match`], which
    /// the cycle has at hand): `Some(holder)` is skipped at once (logged with who, since when and
    /// in which state); `None` goes on to the claim, which alone decides (in dry run, to the
    /// post's preview without a second look).
    ///
    /// # Errors
    /// As for [`Announcer::announce`].
    #[tracing::instrument(skip_all, fields(match_key = %key, source = %m.alias()))]
    pub async fn announce_looked_up(
        &self,
        key: &MatchKey,
        m: &Match,
        aliases: &[String],
        holder: Option<Holder>,
    ) -> Result<Outcome, AnnounceError> {
        match holder {
            Some(holder) => {
                let message = if self.is_dry_run() {
                    "dry run: would skip"
                } else {
                    metrics::counter!(crate::status::names::CLAIMS, "result" => "held").increment(1);
                    "skipped: match already claimed"
                };
                // Every held match is seen again each cycle: a line each would bury the news.
                log_skip(key, &holder, self.policy.stuck_after, message, Level::DEBUG);
                Ok(Outcome::Skipped { holder })
            }
            // Boxed: this future is created once per sighting, and nearly every sighting is a
            // held one; the claim-and-post path's state would otherwise be copied with each.
            None => Box::pin(self.announce_inner(m, aliases, true)).await,
        }
    }

    async fn announce_inner(&self, m: &Match, aliases: &[String], looked_up: bool) -> Result<Outcome, AnnounceError> {
        let key = MatchKey::for_match(m);
        // Rendered with the long link first: a URL weighs 23 whatever its length, so the
        // shortened post has the same weighted length and cannot fail where this one passed.
        let draft = self.render(&key, m, &m.url)?;
        let store_err = |source| AnnounceError::Store {
            key: key.clone(),
            source,
        };
        match &self.mode {
            Mode::DryRun { out, json, shorten } => {
                let holder = if looked_up {
                    None
                } else {
                    self.store
                        .peek(&key)
                        .await
                        .map_err(store_err)?
                        .as_ref()
                        .map(Holder::from)
                };
                if let Some(holder) = holder {
                    log_skip(
                        &key,
                        &holder,
                        self.policy.stuck_after,
                        "dry run: would skip",
                        Level::DEBUG,
                    );
                    return Ok(Outcome::Skipped { holder });
                }
                let post = if *shorten {
                    self.render(&key, m, &self.link(m).await)?
                } else {
                    draft
                };
                let mut out = out
                    .lock()
                    .map_err(|_| AnnounceError::Output(std::io::Error::other("output poisoned")))?;
                if *json {
                    let line = DryRunLine {
                        match_key: key.as_str(),
                        source: m.alias(),
                        state: m.state.as_str(),
                        weighted_length: post.weighted_length(),
                        text: post.text(),
                    };
                    let json = serde_json::to_string(&line).map_err(|e| AnnounceError::Output(e.into()))?;
                    writeln!(out, "{json}").map_err(AnnounceError::Output)?;
                } else {
                    writeln!(
                        out,
                        "--- {key} ({}; weighted length {}/{})\n{}\n",
                        m.alias(),
                        post.weighted_length(),
                        crate::post::MAX_WEIGHTED_LENGTH,
                        post.text()
                    )
                    .map_err(AnnounceError::Output)?;
                }
                out.flush().map_err(AnnounceError::Output)?;
                Ok(Outcome::WouldPost(post))
            }
            Mode::Live(x, pace) => {
                if let Some(until) = x.gate().closed_until(Utc::now()) {
                    tracing::info!(until = %until, "X rate limit exhausted; not claiming until the reset");
                    return Ok(Outcome::Deferred {
                        reason: "X rate limit exhausted".into(),
                        until: Some(until),
                    });
                }
                let title = format!(
                    "{}{}",
                    m.title(),
                    m.description.as_deref().map(|d| format!(", {d}")).unwrap_or_default()
                );
                let token = match self
                    .store
                    .claim(&key, &title, aliases, self.policy.ttl)
                    .await
                    .map_err(store_err)?
                {
                    ClaimOutcome::HeldBy(record) => {
                        let holder = Holder::from(&record);
                        metrics::counter!(crate::status::names::CLAIMS, "result" => "lost").increment(1);
                        // A race lost just now: news, unlike a match held since an earlier cycle.
                        log_skip(
                            &key,
                            &holder,
                            self.policy.stuck_after,
                            "skipped: match already claimed",
                            Level::INFO,
                        );
                        // A still-listed match must never expire into a second announcement.
                        if let Err(e) = self.store.refresh(&key, self.policy.ttl).await {
                            tracing::warn!(error.message = %e, "could not refresh the claim's TTL");
                        }
                        return Ok(Outcome::Skipped { holder });
                    }
                    ClaimOutcome::Won(token) => token,
                };
                metrics::counter!(crate::status::names::CLAIMS, "result" => "won").increment(1);
                tracing::info!(owner = %token.claim().owner, "claim won");
                // The pace is checked after the claim, so skipped matches spend no slot; a
                // claim we cannot use now is released: nothing was sent.
                if let Err(not_until) = pace.check() {
                    if let Err(e) = self.store.release(&token).await {
                        tracing::error!(error.message = %e, "could not release a paced claim; it stays claimed (stuck)");
                    }
                    let until = chrono::Duration::from_std(not_until.wait).ok().map(|w| Utc::now() + w);
                    tracing::info!(
                        wait_ms = not_until.wait.as_millis() as u64,
                        "local post pace reached; match left for later"
                    );
                    return Ok(Outcome::Deferred {
                        reason: not_until.to_string(),
                        until,
                    });
                }
                let link = self.link(m).await;
                let post = self.render(&key, m, &link).unwrap_or(draft);
                match x.post(&post, &token).await {
                    Ok(receipt) => {
                        tracing::info!(tweet_id = %receipt.tweet_id, "posted");
                        let change = Transition::Posted {
                            tweet_id: Some(receipt.tweet_id.clone()),
                            detail: None,
                        };
                        self.record(&token, &change).await;
                        Ok(Outcome::Posted(receipt))
                    }
                    Err(error) => Ok(self.after_failure(&token, error).await),
                }
            }
        }
    }

    /// Leaves the claim in the state `error` proves, and halts posting when no later post can
    /// succeed.
    async fn after_failure(&self, token: &ClaimToken, error: PostError) -> Outcome {
        let verdict = error.verdict();
        let reason = error.to_string();
        if error.halts_posting() {
            tracing::error!(error.message = %error, "X refused the credentials or account; posting stops for this process");
            if let Ok(mut h) = self.halted.lock() {
                *h = Some(reason.clone());
            }
        }
        let claim_kept = match verdict {
            Verdict::NotPosted if error.is_rate_limited() => {
                tracing::warn!(error.message = %error, "X answered 429; claim released without counting an attempt, posting resumes after the reset");
                match self.store.release(token).await {
                    Ok(Checked::Applied(_)) | Ok(Checked::Gone) => false,
                    Ok(other) => {
                        warn_not_ours(token, &other);
                        true
                    }
                    Err(e) => {
                        tracing::error!(error.message = %e, "could not release the claim; it stays claimed (stuck)");
                        true
                    }
                }
            }
            Verdict::NotPosted => {
                let max = self.policy.max_attempts;
                match self.store.release_failed(token, &reason, max, self.policy.ttl).await {
                    Ok(Released::Released { attempts }) => {
                        tracing::warn!(error.message = %error, attempts, max_attempts = max, "post refused, nothing was created; claim released for a later cycle");
                        false
                    }
                    Ok(Released::GaveUp(_)) => {
                        tracing::error!(error.message = %error, attempts = max, "post refused, nothing was created; attempts used up, giving up on this match (state `failed`)");
                        true
                    }
                    Ok(Released::NotOurs(other)) => {
                        warn_not_ours(token, &Checked::NotOurs(other));
                        true
                    }
                    Ok(Released::Gone) => {
                        warn_not_ours(token, &Checked::Gone);
                        false
                    }
                    Err(e) => {
                        tracing::error!(error.message = %e, "could not release the claim; it stays claimed (stuck)");
                        true
                    }
                }
            }
            Verdict::AlreadyPosted => {
                tracing::warn!(error.message = %error, "X says this was posted before; recording it as posted");
                self.record(
                    token,
                    &Transition::Posted {
                        tweet_id: None,
                        detail: Some(reason),
                    },
                )
                .await;
                true
            }
            Verdict::Unknown => {
                tracing::error!(error.message = %error, "post outcome unknown; keeping the claim, not retrying");
                self.record(token, &Transition::Unknown { reason }).await;
                true
            }
        };
        Outcome::PostFailed {
            claim_kept,
            verdict,
            error,
        }
    }

    async fn record(&self, token: &ClaimToken, change: &Transition) {
        match self.store.transition(token, change).await {
            Ok(Checked::Applied(_)) => {}
            Ok(other) => warn_not_ours(token, &other),
            Err(e) => {
                tracing::error!(error.message = %e, "could not record the post's outcome; the claim stays `claimed`")
            }
        }
    }
}

fn warn_not_ours(token: &ClaimToken, found: &Checked) {
    match found {
        Checked::NotOurs(other) => tracing::warn!(
            match_key = %token.key(),
            holder = %other.owner,
            state = %other.state,
            "our claim expired and another worker holds the match now; left its record untouched"
        ),
        _ => tracing::warn!(match_key = %token.key(), "our claim is gone (expired or released); nothing recorded"),
    }
}

/// Logs a skip at `level` (a stuck holder always at WARN), naming the holder, since when and
/// in which state.
fn log_skip(key: &MatchKey, holder: &Holder, stuck_after: Duration, message: &'static str, level: Level) {
    let now = Utc::now();
    let state = holder.display_state(now, stuck_after);
    let known = crate::claim::known_time(holder.claimed_at);
    // An unreadable record has no time: say so rather than show 1970.
    let since = known.map_or_else(|| "unknown".to_string(), |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    let age_secs = known.map(|_| holder.age(now).as_secs());
    let owner = &*holder.owner;
    if state == "stuck" {
        tracing::warn!(match_key = %key, owner, since, age_secs, state, "{message}; the holder seems to have died between claim and post (see `claims list --state stuck`)");
    } else if level == Level::DEBUG {
        tracing::debug!(match_key = %key, owner, since, age_secs, state, "{message}");
    } else {
        tracing::info!(match_key = %key, owner, since, age_secs, state, "{message}");
    }
}
