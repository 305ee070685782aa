//! The per-match protocol: render → claim → shorten → post → record. Returns an [`Outcome`];
//! losing a claim is an outcome, not an error.
//!
//! The post is rendered *before* the claim, so a post that cannot be made (too long, template
//! failure) never leaves a claim behind. After a failed post the claim keeps exactly the state
//! the failure proves (see [`crate::post::Verdict`]).

use crate::claim::{
    Checked, ClaimError, ClaimStore, ClaimToken, Holder, LastRecords, MatchClaim, Released, Transition,
};
use crate::cricket::{Match, MatchKey, Sighting, CROSS_KEY_IDENTITY};
use crate::post::{Post, PostError, PostPace, PostReceipt, Verdict, XClient};
use crate::shorten::Shortener;
use crate::template::{RenderError, Template};
use chrono::Utc;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::Instrument;
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
    /// The store's first-start marker was gone when the claim was tried (checked in the claim's
    /// own atomic step): the store lost its data, or was never initialised. Nothing was claimed.
    #[error("match {key}: the store has no first-start marker (it lost its data, or was never initialised); nothing claimed")]
    NoMarker {
        /// The match.
        key: MatchKey,
    },
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
    /// Source id → the key its match's claim is stored under, where that differs from the key
    /// its sighting derives now (the listing changed since the claim): learned from the claim
    /// step, so the next batch look-up reads the claim directly (see [`Announcer::holders_of`]).
    hints: Arc<Mutex<HashMap<String, MatchKey>>>,
    /// Whether a claim requires the first-start marker (see [`Announcer::requiring_marker`]).
    require_marker: bool,
}

/// How many times per claim TTL a process refreshes the TTLs of the matches it keeps seeing.
/// A refresh leaves a claim its full TTL, so refreshing every TTL/8 keeps at least 7/8 of it
/// (21 h of the minimum 24 h) on every listed match, while the cycles in between only read.
pub const REFRESHES_PER_TTL: u32 = 8;

/// When this process last refreshed the TTLs of the matches it looks up, and which matches
/// that refresh covered.
#[derive(Debug, Default)]
struct Refreshes {
    // tokio's clock, so that tests can advance it instead of waiting a share of a TTL.
    last: Option<tokio::time::Instant>,
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
            hints: Arc::new(Mutex::new(HashMap::new())),
            require_marker: false,
        }
    }

    /// With `yes`, every claim checks, in its own atomic step, that the store's first-start
    /// marker exists, and claims nothing when it does not ([`AnnounceError::NoMarker`]): a store
    /// wiped between a cycle's readiness check and its claims never looks free. `run` and
    /// `backfill` require it; `seed` (which writes the marker after claiming) does not.
    pub fn requiring_marker(mut self, yes: bool) -> Announcer {
        self.require_marker = yes;
        self
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

    /// Runs the protocol for one match as its own source lists it; see the module documentation.
    ///
    /// # Errors
    /// [`AnnounceError`] when the store cannot answer (nothing posted), or the post cannot be
    /// rendered (nothing claimed).
    pub async fn announce(&self, m: &Match) -> Result<Outcome, AnnounceError> {
        self.announce_sighting(&Sighting::new(m.clone())).await
    }

    /// Runs the protocol for one sighting (a match with every identity the cycle's sources gave
    /// it), without a batch look-up first: the claim step alone decides.
    ///
    /// # Errors
    /// As for [`Announcer::announce`].
    pub async fn announce_sighting(&self, s: &Sighting) -> Result<Outcome, AnnounceError> {
        Box::pin(self.announce_inner(s).instrument(span(s))).await
    }

    /// The current holder of each sighting's claim, in one store round trip. Each is read under
    /// the key its claim was found under when this process last met one of its source ids under
    /// another key (the listing changed since the claim), else the key the sighting derives; a
    /// miss still goes through the claim step, which tries every identity (see [`Announcer::holders`]); a refresh also refreshes every
    /// identity of the sightings. Forgets what it learned of source ids no longer listed.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn holders_of(&self, sightings: &[&Sighting]) -> Result<Vec<Option<Holder>>, ClaimError> {
        let hinted: Vec<Option<MatchKey>> = {
            let mut hints = self.hints.lock().unwrap_or_else(|p| p.into_inner());
            if hints.is_empty() {
                Vec::new()
            } else {
                let listed: foldhash::HashSet<&str> = sightings.iter().flat_map(|s| s.source_ids()).collect();
                hints.retain(|id, _| listed.contains(id.as_str()));
                sightings
                    .iter()
                    .map(|s| s.source_ids().find_map(|id| hints.get(id)).cloned())
                    .collect()
            }
        };
        let refs: Vec<&MatchKey> = sightings
            .iter()
            .enumerate()
            .map(|(i, s)| hinted.get(i).and_then(Option::as_ref).unwrap_or(&s.ids.key))
            .collect();
        // Each sighting's source ids, and its own key's identity where the claim is stored
        // under another key (a claim stored under the sighting's key answers for that one).
        let touch = || {
            sightings
                .iter()
                .zip(&refs)
                .flat_map(|(s, read)| {
                    let own = (*read != &s.ids.key).then(|| s.ids.ids.iter().map(String::as_str));
                    s.source_ids()
                        .chain(own.into_iter().flatten().filter(|i| i.starts_with(CROSS_KEY_IDENTITY)))
                })
                .collect::<Vec<&str>>()
        };
        self.holders_with(&refs, touch).await
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
        self.holders_with(keys, Vec::new).await
    }

    /// [`Announcer::holders`], refreshing (when due) the identities `touch` gives too; `touch`
    /// is only called when a refresh is due.
    async fn holders_with<'t>(
        &self,
        keys: &[&MatchKey],
        touch: impl FnOnce() -> Vec<&'t str>,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        if self.is_dry_run() {
            return self.holders_since_last(keys, &[], None).await;
        }
        let every = self.policy.ttl / REFRESHES_PER_TTL;
        // A poisoned lock only means another task panicked mid-update: refreshing is then the
        // safe answer, and the log is rebuilt below.
        let due = self.refreshes.lock().map_or(true, |r| r.due(keys, every));
        if !due {
            return self.holders_since_last(keys, &[], None).await;
        }
        let started = tokio::time::Instant::now();
        let found = self.holders_since_last(keys, &touch(), Some(self.policy.ttl)).await?;
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
        touch: &[&str],
        refresh: Option<Duration>,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        // Taken out for the await (a std lock is not held across it), put back after; a
        // look-up running meanwhile starts from nothing, which only costs it the parsing.
        let mut last = std::mem::take(&mut *self.last_records.lock().unwrap_or_else(|p| p.into_inner()));
        let found = self.store.holders_touching(keys, touch, refresh, &mut last).await;
        *self.last_records.lock().unwrap_or_else(|p| p.into_inner()) = last;
        found
    }

    /// As [`Announcer::announce_sighting`], for a sighting whose holder the cycle already looked
    /// up with [`Announcer::holders_of`]: a holder that recorded every identity of the sighting
    /// is skipped at once (logged with who, since when and in which state); one that lacks some
    /// (another source's id, a changed key) goes through the claim step, which records them
    /// (in dry run it is only skipped); `None` goes on to the claim, which alone decides (in
    /// dry run, to a read of every identity, then the post's preview).
    ///
    /// # Errors
    /// As for [`Announcer::announce`].
    pub async fn announce_looked_up(&self, s: &Sighting, holder: Option<Holder>) -> Result<Outcome, AnnounceError> {
        match holder {
            Some(holder) if self.is_dry_run() || holder.covers(&s.ids.ids) => {
                let message = if self.is_dry_run() {
                    "dry run: would skip"
                } else {
                    metrics::counter!(crate::metric_names::CLAIMS, "result" => "held").increment(1);
                    "skipped: match already claimed"
                };
                // Every held match is seen again each cycle: a line each would bury the news.
                log_skip(&s.ids.key, &holder, self.policy.stuck_after, message, Level::DEBUG);
                Ok(Outcome::Skipped { holder })
            }
            // Boxed: this future is created once per sighting, and nearly every sighting is a
            // held one; the claim-and-post path's state would otherwise be copied with each.
            _ => Box::pin(self.announce_inner(s).instrument(span(s))).await,
        }
    }

    /// Remembers that the claim of `s` is stored under `key`, when that is not the key `s`
    /// derives, for [`Announcer::holders_of`].
    fn learn(&self, s: &Sighting, key: &MatchKey) {
        if *key == s.ids.key {
            return;
        }
        let mut hints = self.hints.lock().unwrap_or_else(|p| p.into_inner());
        for id in s.source_ids() {
            hints.insert(id.to_string(), key.clone());
        }
    }

    /// Logs a sighting found held by the claim step: through another identity (what changed
    /// since the claim, and which identity found it), or under its own key (a race lost).
    fn log_held(&self, s: &Sighting, key: &MatchKey, holder: &Holder, via: &str) {
        let changed = key.changes_to(&s.ids.key);
        let own = via.strip_prefix(CROSS_KEY_IDENTITY) == Some(s.ids.key.as_str());
        if own && changed.is_empty() {
            metrics::counter!(crate::metric_names::CLAIMS, "result" => "lost").increment(1);
            // A race lost just now: news, unlike a match held since an earlier cycle.
            log_skip(
                key,
                holder,
                self.policy.stuck_after,
                "skipped: match already claimed",
                Level::INFO,
            );
            return;
        }
        metrics::counter!(crate::metric_names::CLAIMS, "result" => "held").increment(1);
        let message = if changed.is_empty() {
            format!("held via {via}")
        } else {
            format!("held via {via}; {changed}")
        };
        tracing::info!(
            match_key = %key,
            seen_as = %s.ids.key,
            via = %via,
            owner = %holder.owner,
            state = %holder.display_state(Utc::now(), self.policy.stuck_after),
            "skipped: {message}"
        );
    }

    async fn announce_inner(&self, s: &Sighting) -> Result<Outcome, AnnounceError> {
        let (m, key) = (&s.m, &s.ids.key);
        // Rendered with the long link first: a URL weighs 23 whatever its length, so the
        // shortened post has the same weighted length and cannot fail where this one passed.
        let draft = self.render(key, m, &m.url)?;
        let store_err = |source| AnnounceError::Store {
            key: key.clone(),
            source,
        };
        match &self.mode {
            Mode::DryRun { out, json, shorten } => {
                // A read of every identity: a listing edited since its claim is still held.
                if let Some((held_key, claim, via)) = self.store.find(&s.ids).await.map_err(store_err)? {
                    let holder = Holder::from(&claim);
                    if held_key == *key && via.strip_prefix(CROSS_KEY_IDENTITY) == Some(key.as_str()) {
                        log_skip(
                            key,
                            &holder,
                            self.policy.stuck_after,
                            "dry run: would skip",
                            Level::DEBUG,
                        );
                    } else {
                        let changed = held_key.changes_to(key);
                        tracing::info!(match_key = %held_key, seen_as = %key, via = %via, changed = %changed, "dry run: would skip (held via {via})");
                    }
                    return Ok(Outcome::Skipped { holder });
                }
                let post = if *shorten {
                    self.render(key, m, &self.link(m).await)?
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
                let token = match self
                    .store
                    .claim_match(
                        &s.ids,
                        &m.claim_title(),
                        self.policy.ttl,
                        self.policy.stuck_after,
                        self.require_marker,
                    )
                    .await
                    .map_err(store_err)?
                {
                    MatchClaim::Held {
                        key: held_key,
                        claim,
                        via,
                    } => {
                        let holder = Holder::from(&claim);
                        self.learn(s, &held_key);
                        self.log_held(s, &held_key, &holder, &via);
                        // A still-listed match must never expire into a second announcement.
                        if let Err(e) = self.store.refresh(&held_key, self.policy.ttl).await {
                            tracing::warn!(error.message = %e, "could not refresh the claim's TTL");
                        }
                        return Ok(Outcome::Skipped { holder });
                    }
                    MatchClaim::NoMarker => return Err(AnnounceError::NoMarker { key: key.clone() }),
                    MatchClaim::Won(token) => token,
                };
                metrics::counter!(crate::metric_names::CLAIMS, "result" => "won").increment(1);
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
                let post = self.render(key, m, &link).unwrap_or(draft);
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

/// The span of one match's claim and post, so that every line they log names the match.
fn span(s: &Sighting) -> tracing::Span {
    tracing::info_span!("match", match_key = %s.ids.key, source = %s.m.alias())
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
    // Nearly every sighting is a held one: build no text for a line nobody will see.
    let shown = match level {
        Level::DEBUG => tracing::enabled!(Level::DEBUG),
        _ => tracing::enabled!(Level::INFO),
    };
    if state != "stuck" && !shown {
        return;
    }
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
