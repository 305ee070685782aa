//! The per-match protocol: render → claim → shorten → post → record. Returns an [`Outcome`];
//! losing a claim is an outcome, not an error.
//!
//! The post is rendered once, *before* the claim, within the sink's length rule, so a post
//! that cannot be made (too long, template failure) never leaves a claim behind; the winner
//! then only puts the shortened link in place of the match's own. After a failed post the
//! claim keeps exactly the state the failure proves (see [`crate::post::Verdict`]). One path
//! serves every sink: nothing here knows which platform it posts to.
//!
//! One way in: [`Announcer::announce`], for a [`Sighting`] and what the cycle's batch look-up
//! ([`Announcer::holders_of`], in `lookup.rs`) found for it. The dry run is a poster of its own
//! (`dry_run.rs`): it reads, and prints the post, where the live path claims and posts.

mod dry_run;
mod lookup;
mod memory;
mod result;

pub use dry_run::DryRun;
pub use lookup::{holders_of_all, LookUp, REFRESHES_PER_TTL};
pub use memory::Memory;
pub use result::{Parent, ResultPlan};

use crate::claim::{
    Checked, ClaimError, ClaimState, ClaimStore, ClaimToken, Holder, MatchClaim, PostIntent, Released, ReplyTo,
    ShownState, Transition,
};
use crate::clock::Clock;
use crate::cricket::{Facts, Identity, Match, MatchKey, Sighting};
use crate::post::{Card, LengthRule, Post, PostPace, Receipt, Sink, SinkError, SinkKind, Verdict};
use crate::schedule::Lead;
use crate::shorten::Shortener;
use crate::template::{RenderError, Style, Template};
use crate::zone::Zone;
use chrono::Utc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::Instrument;
use tracing::Level;
use url::Url;

/// What happened to one match.
#[derive(Debug)]
pub enum Outcome {
    /// We won the claim and the sink created the post.
    Posted(Receipt),
    /// Someone else holds the claim (or, in dry run, would be skipped because of it).
    Skipped {
        /// Who holds the claim, since when, in which state.
        holder: Holder,
    },
    /// We won the claim and the platform's answer proved the post is there already (Bluesky: a
    /// record at this match's record key, read back after a refused create; X: "duplicate
    /// content"): recorded `posted`, with the post's id when the platform gave it, and counted
    /// as posted.
    AlreadyPosted {
        /// The post's id on the platform (Bluesky's `at://` address), when the answer gave it.
        id: Option<String>,
        /// The answer that proved it.
        error: SinkError,
    },
    /// We won the claim and the post failed.
    PostFailed {
        /// Whether the claim still blocks the match (false: released for a later attempt).
        claim_kept: bool,
        /// What the failure proves.
        verdict: Verdict,
        /// The failure.
        error: SinkError,
    },
    /// Dry run: this post would be sent.
    WouldPost(Rendered),
    /// A result not posted now, nothing claimed: its page proves none, or its announcement's
    /// state says to wait (in flight, unknown until reconciled) or to skip it
    /// (`result_without_announcement = "skip"`).
    Withheld {
        /// Why.
        reason: &'static str,
    },
    /// Not claimed now because of pace: the platform's rate limit is exhausted until `until`, or the
    /// local pace (`POSTS_PER_MINUTE`, `POSTS_PER_DAY`) has no slot. Tried again later.
    Deferred {
        /// Why.
        reason: String,
        /// When posting may resume, when known.
        until: Option<chrono::DateTime<Utc>>,
    },
}

impl Outcome {
    /// Why posting must stop on this channel for this process, when the post's failure says so
    /// (bad credentials, credits depleted, a deleted webhook: see
    /// [`SinkError::halts_channel`]): the caller announces nothing more on the channel.
    pub fn halts(&self) -> Option<String> {
        match self {
            Outcome::PostFailed { error, .. } if error.halts_channel() => Some(error.to_string()),
            _ => None,
        }
    }
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
pub type Output = Arc<Mutex<Box<dyn std::io::Write + Send>>>;

/// A post rendered for one sink: its text, and its length by that sink's rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    text: String,
    length: usize,
    rule: LengthRule,
}

impl Rendered {
    /// `text`, within `rule`.
    fn new(text: String, rule: LengthRule) -> Rendered {
        Rendered {
            length: rule.length(&text),
            text,
            rule,
        }
    }

    /// The exact text that is (or would be) sent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its length by the sink's rule (X: weighted characters).
    pub fn length(&self) -> usize {
        self.length
    }

    /// The sink's limit, in the same unit.
    pub fn max(&self) -> usize {
        self.rule.max()
    }

    /// What the rule counts ("weighted characters", "graphemes"…).
    pub fn unit(&self) -> &'static str {
        self.rule.unit()
    }

    /// The length rule it was fitted to.
    pub fn rule(&self) -> LengthRule {
        self.rule
    }

    /// This post with `to` wherever it has the link `from` it was rendered with: no second
    /// render, so nothing the template cut is cut differently.
    ///
    /// # Errors
    /// Why it cannot be done: the text does not hold `from` as it was given (the template
    /// changed the link), or with `to` it breaks the rule (a link longer than the original on
    /// a sink that counts every character).
    fn relinked(&self, from: &str, to: &str) -> Result<Rendered, &'static str> {
        if from == to {
            return Ok(self.clone());
        }
        if !self.text.contains(from) {
            return Err("the template does not print the link as it is");
        }
        match self.rule.fit(&self.text.replace(from, to)) {
            Ok(text) => Ok(Rendered::new(text, self.rule)),
            Err(_) => Err("the shortened link makes the post too long for the sink"),
        }
    }
}

/// How posts leave the process.
#[derive(Clone)]
pub enum Mode {
    /// Claim in the store and post to the channel's sink, at the pace `pace` allows (boxed:
    /// a sink is large, and a mode is moved around with its announcer).
    Live(Box<Sink>, Arc<PostPace>),
    /// Only peek at claims; print each post (see [`DryRun`]).
    DryRun(DryRun),
}

impl Mode {
    /// Posting to `sink` at the pace `pace` allows.
    pub fn live(sink: Sink, pace: Arc<PostPace>) -> Mode {
        Mode::Live(Box::new(sink), pace)
    }
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
    /// `ttl` and `max_attempts` as given; stuck after `send_bound` plus [`STUCK_MARGIN`]:
    /// `send_bound` is the longest a live worker's send can take after its claim, the
    /// shortener's time-out (when a shortener is set) plus the post time-out, so that an
    /// owner still at work is never taken for stuck (and released, or its post repeated).
    pub fn new(ttl: Duration, max_attempts: u32, send_bound: Duration) -> ClaimPolicy {
        ClaimPolicy {
            ttl,
            max_attempts,
            stuck_after: send_bound + STUCK_MARGIN,
        }
    }
}

/// Time a live worker may spend between winning a claim and recording its outcome besides
/// the shortener's and the post's own time-outs (rendering, the store's writes), added to
/// them to decide that a `claimed` record is stuck.
pub const STUCK_MARGIN: Duration = Duration::from_secs(15);

/// Announces matches on one channel: what the channel is (its store, template, shortener,
/// sink or dry-run printer, and claim policy), and nothing it remembers: what a caller keeps
/// from one cycle to the next is its [`Memory`], lent to each call. Cheap to clone; clones share
/// the store, HTTP clients and dry-run output, never a memory.
#[derive(Clone)]
pub struct Announcer {
    store: ClaimStore,
    template: Arc<Template>,
    shortener: Option<Shortener>,
    mode: Mode,
    policy: ClaimPolicy,
    /// Whether a claim requires the first-start marker (see [`Announcer::requiring_marker`]).
    require_marker: bool,
    /// The channel posted on (see [`Announcer::on_channel`]).
    channel: Arc<str>,
    /// What "now" is for a platform's rate-limit reset, a local pace's wait and a holder's
    /// age (see [`Announcer::with_clock`]).
    clock: Clock,
    /// When the channel announces a match (see [`Announcer::with_lead`]).
    lead: Lead,
    /// The zone its posts tell the start in (see [`Announcer::in_zone`]).
    zone: Zone,
    /// How it posts results, when it posts results instead of announcements (see
    /// [`Announcer::for_results`]).
    results: Option<Arc<ResultPlan>>,
    /// The channel's `hashtags` setting (see [`Announcer::with_hashtags`]).
    hashtags: bool,
}

impl Announcer {
    /// An announcer claiming in `store` under `policy`, rendering with `template` (a
    /// `Template`, or an `Arc` of one that several channels share: a compiled template is tens
    /// of KiB).
    pub fn new(
        store: ClaimStore,
        template: impl Into<Arc<Template>>,
        shortener: Option<Shortener>,
        mode: Mode,
        policy: ClaimPolicy,
    ) -> Announcer {
        Announcer {
            store,
            template: template.into(),
            shortener,
            mode,
            policy,
            require_marker: false,
            channel: "x".into(),
            clock: Clock::system(),
            lead: Lead::FirstSighting,
            zone: Zone::default(),
            results: None,
            hashtags: false,
        }
    }

    /// This announcer, announcing by `lead` (at first sighting by default). The cycle decides
    /// which matches are due ([`Lead::when`]); the dry run's printer says of each post when it
    /// would be made, and of each held match that it is already claimed, when the lead waits.
    #[must_use]
    pub fn with_lead(mut self, lead: Lead) -> Announcer {
        self.lead = lead;
        self
    }

    /// When this announcer announces a match (see [`Announcer::with_lead`]).
    pub fn lead(&self) -> Lead {
        self.lead
    }

    /// This announcer, telling each post's start in `zone` (UTC by default).
    #[must_use]
    pub fn in_zone(mut self, zone: Zone) -> Announcer {
        self.zone = zone;
        self
    }

    /// This announcer, with the channel's `hashtags` setting: with `true` the built-in templates
    /// add the match's hashtags (field `channel_hashtags`, see [`crate::hashtags`]).
    #[must_use]
    pub fn with_hashtags(mut self, on: bool) -> Announcer {
        self.hashtags = on;
        self
    }

    /// The zone this announcer's posts tell the start in.
    pub fn zone(&self) -> Zone {
        self.zone
    }

    /// This announcer, judging time by `clock` (the system's by default): a test gives it a
    /// clock past a rate limit's reset instead of waiting for the reset.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Announcer {
        self.clock = clock;
        self
    }

    /// The sink posts go to (none in a dry run).
    pub fn sink(&self) -> Option<&Sink> {
        match &self.mode {
            Mode::Live(sink, _) => Some(sink),
            Mode::DryRun(_) => None,
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

    /// The sink posts go to (in a dry run, the one they would go to).
    fn sink_kind(&self) -> SinkKind {
        match &self.mode {
            Mode::Live(sink, _) => sink.kind(),
            Mode::DryRun(dry) => dry.sink,
        }
    }

    /// The length rule posts are fitted to (in a dry run, the sink's default).
    fn length_rule(&self) -> LengthRule {
        match &self.mode {
            Mode::Live(sink, _) => sink.length_rule(),
            Mode::DryRun(dry) => LengthRule::default_for(dry.sink),
        }
    }

    /// The post for `m` with `link`, its start told in the channel's zone and fitted to the
    /// sink's length rule (see [`Template::render_local`]): the one render of a post, whatever
    /// the sink.
    fn render(&self, key: &MatchKey, m: &Match, link: &Url) -> Result<Rendered, AnnounceError> {
        let rule = self.length_rule();
        let text = self
            .template
            .render_local(
                m,
                link,
                Style {
                    zone: self.zone,
                    hashtags: self.hashtags,
                },
                self.sink_kind(),
                rule,
            )
            .map_err(|source| AnnounceError::Render {
                key: key.clone(),
                source,
            })?;
        Ok(Rendered::new(text, rule))
    }

    /// `draft` (rendered with the match's own link) with the link the shortener gave instead:
    /// `draft` as it is when the shortener gave none, or when the short link cannot take the
    /// long one's place (said in the log, then the long link is posted).
    pub(super) fn with_link(&self, draft: Rendered, m: &Match, link: &Url) -> Rendered {
        match draft.relinked(m.url.as_str(), link.as_str()) {
            Ok(post) => post,
            Err(why) => {
                tracing::warn!(url = %m.url, short = %link, "{why}; posting the long link");
                draft
            }
        }
    }

    /// The channel this announcer posts on (`x` for the environment's X account).
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// This announcer, posting on the channel `name` (its logs and metrics say so).
    pub fn on_channel(mut self, name: &str) -> Announcer {
        self.channel = name.into();
        self
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

    /// Runs the protocol for one sighting (a match with every identity the cycle's sources gave
    /// it); see the module documentation. `looked_up` is what the cycle's batch look-up
    /// ([`Announcer::holders_of`]) found: a holder that recorded every identity of the sighting
    /// is skipped at once (logged with who, since when and in which state); one that lacks some
    /// (another source's id, a changed key) goes through the claim step, which records them
    /// (in dry run it is only skipped); `None` (free, or not looked up) goes on to the claim,
    /// which alone decides (in dry run, to a read of every identity, then the post's preview).
    ///
    /// # Errors
    /// [`AnnounceError`] when the store cannot answer (nothing posted), or the post cannot be
    /// rendered (nothing claimed).
    pub async fn announce(
        &self,
        memory: &mut Memory,
        s: &Sighting,
        looked_up: Option<Holder>,
    ) -> Result<Outcome, AnnounceError> {
        match looked_up {
            Some(holder) if self.is_dry_run() || holder.covers(&s.ids.ids) => {
                let message = if self.is_dry_run() {
                    "dry run: would skip"
                } else {
                    // Counted here, added to the metric once a cycle (see `publish_held`).
                    memory.held += 1;
                    "skipped: match already claimed"
                };
                // Every held match is seen again each cycle: a line each would bury the news.
                self.log_skip(&s.ids.key, &holder, message, Level::DEBUG);
                if let Mode::DryRun(dry) = &self.mode {
                    self.print_held(dry, s, &s.ids.key, &holder)?;
                }
                Ok(Outcome::Skipped { holder })
            }
            // Boxed: this future is created once per sighting, and nearly every sighting is a
            // held one; the claim-and-post path's state would otherwise be copied with each.
            _ => Box::pin(self.announce_unheld(memory, s).instrument(span(s, &self.channel))).await,
        }
    }

    /// A sighting not known to be held: rendered, then previewed (dry run) or claimed and
    /// posted (live).
    async fn announce_unheld(&self, memory: &mut Memory, s: &Sighting) -> Result<Outcome, AnnounceError> {
        // Rendered once, with the match's own link, before anything is claimed: the winner
        // only puts the shortened link in its place.
        let (draft, reply) = match &self.results {
            None => (self.render(&s.ids.key, &s.m, &s.m.url)?, None),
            Some(plan) => match self.result_post(plan, s).await? {
                Ok(post) => post,
                Err(reason) => {
                    tracing::debug!(reason, "result not posted now");
                    return Ok(Outcome::Withheld { reason });
                }
            },
        };
        match &self.mode {
            Mode::DryRun(dry) => self.preview(dry, s, draft, reply.as_ref()).await,
            Mode::Live(x, pace) => self.claim_and_post(memory, x, pace, s, draft, reply.as_ref()).await,
        }
    }

    /// The live path: pace, claim under every identity, then (won) shorten, post and record.
    async fn claim_and_post(
        &self,
        memory: &mut Memory,
        sink: &Sink,
        pace: &PostPace,
        s: &Sighting,
        draft: Rendered,
        reply_to: Option<&ReplyTo>,
    ) -> Result<Outcome, AnnounceError> {
        let m = &s.m;
        if let Some(until) = sink.gate().closed_until(self.clock.now()) {
            let reason = format!("{} rate limit exhausted", sink.kind().platform());
            tracing::info!(until = %until, "{reason}; not claiming until the reset");
            return Ok(Outcome::Deferred {
                reason,
                until: Some(until),
            });
        }
        // The pace is checked before the claim: a paced cycle claims nothing it cannot post
        // (a claim won only to be released again would count as won, and hold the match for
        // nothing). A slot taken for a match that turns out held is given back.
        if let Err(not_until) = pace.check() {
            let until = chrono::Duration::from_std(not_until.wait)
                .ok()
                .map(|w| self.clock.now() + w);
            tracing::info!(
                wait_ms = u64::try_from(not_until.wait.as_millis()).unwrap_or(u64::MAX),
                "local post pace reached; match left for later, nothing claimed"
            );
            return Ok(Outcome::Deferred {
                reason: not_until.to_string(),
                until,
            });
        }
        let token = match self.claim_for_post(memory, s, sink, &draft, reply_to).await {
            ClaimStep::Won(token) => *token,
            ClaimStep::Ends(ends) => {
                pace.give_back();
                return ends;
            }
        };
        let link = self.link(m).await;
        let post = self.with_link(draft, m, &link);
        // The card shows the match page itself and the start in the channel's zone.
        let card = Card::of(m, self.zone);
        match sink.post(Post::with_card(post.text(), &card), &token).await {
            Ok(receipt) => {
                receipt.log_posted();
                // A platform that names posts by hash too (Bluesky): kept for a reply to it.
                let change = match &receipt.cid {
                    Some(cid) => Transition::PostedWithCid {
                        post_id: receipt.id.clone(),
                        cid: cid.clone(),
                    },
                    None => Transition::Posted {
                        post_id: Some(receipt.id.clone()),
                        detail: None,
                    },
                };
                self.record(memory, &token, &change).await;
                Ok(Outcome::Posted(receipt))
            }
            Err(error) => Ok(self.after_failure(memory, &token, error).await),
        }
    }

    /// The claim step of [`Announcer::claim_and_post`]: the token when won, else what the
    /// sighting's turn ends with (held: skipped, its TTL set again; no marker, or the store
    /// did not answer: the error).
    async fn claim_for_post(
        &self,
        memory: &mut Memory,
        s: &Sighting,
        sink: &Sink,
        draft: &Rendered,
        reply_to: Option<&ReplyTo>,
    ) -> ClaimStep {
        let (m, key) = (&s.m, &s.ids.key);
        let store_err = |source| {
            ClaimStep::Ends(Err(AnnounceError::Store {
                key: key.clone(),
                source,
            }))
        };
        // The claim's time, read from the store's clock (one clock for every replica: the
        // owner's deadline and Mastodon's windows are counted from it), chosen here so that a
        // dedupe key made of it (Bluesky's record key) is written with the claim.
        let claimed_at = match self.store.now().await {
            Ok(now) => now,
            Err(e) => return store_err(e),
        };
        let dedupe_key = sink.dedupe_key(&s.ids.key, claimed_at);
        let claimed = self
            .store
            .claim_match_to_post(
                &s.ids,
                &m.claim_title(),
                Some(&PostIntent {
                    text: draft.text(),
                    dedupe_key: dedupe_key.as_deref(),
                    claimed_at,
                    reply_to,
                }),
                self.policy.ttl,
                self.policy.stuck_after,
                self.require_marker,
            )
            .await;
        let token = match claimed {
            Err(e) => return store_err(e),
            Ok(MatchClaim::Held {
                key: held_key,
                claim,
                via,
                facts,
            }) => {
                let holder = Holder::from(&claim);
                learn(memory, s, &held_key);
                self.log_held(s, &held_key, &claim, &via, facts.as_ref(), claimed_at);
                // A still-listed match must never expire into a second announcement.
                if let Err(e) = self.store.refresh(&held_key, self.policy.ttl).await {
                    tracing::warn!(error.message = %e, "could not refresh the claim's TTL");
                }
                return ClaimStep::Ends(Ok(Outcome::Skipped { holder }));
            }
            Ok(MatchClaim::NoMarker) => return ClaimStep::Ends(Err(AnnounceError::NoMarker { key: key.clone() })),
            Ok(MatchClaim::Won(token)) => token,
        };
        claims_counter("won", self.event()).increment(1);
        // Stored beside its key (another match of the fixture holds that one): later cycles
        // read it there.
        learn(memory, s, token.key());
        tracing::info!(owner = %token.claim().owner, stored_under = %token.key(), "claim won");
        ClaimStep::Won(Box::new(token))
    }

    /// Logs a sighting found held by the claim step: through another identity (what changed
    /// since the claim, and which identity found it; through another site's listing, which
    /// listing holds it and the facts compared), or under its own key (a race lost). `now` is
    /// the store's time read for the claim, by which the holder's deadline (stuck) is judged.
    fn log_held(
        &self,
        s: &Sighting,
        key: &MatchKey,
        claim: &crate::claim::Claim,
        via: &Identity,
        facts: Option<&Facts>,
        now: chrono::DateTime<Utc>,
    ) {
        let holder = &Holder::from(claim);
        let changed = key.changes_to(&s.ids.key);
        let own = via.is_key_of(&s.ids.key);
        if own && changed.is_empty() {
            claims_counter("lost", self.event()).increment(1);
            // A race lost just now: news, unlike a match held since an earlier cycle.
            self.log_skip(key, holder, "skipped: match already claimed", Level::INFO);
            return;
        }
        claims_counter("held", self.event()).increment(1);
        let message = if changed.is_empty() {
            format!("held via {via}")
        } else {
            format!("held via {via}; {changed}")
        };
        // The listing that holds it: the holder's sources' ids (`espncricinfo:1512760`).
        let held_by: Vec<&str> = claim
            .aliases
            .iter()
            .map(String::as_str)
            .filter(|a| Identity::parse(a).is_some_and(|i| i.is_source()))
            .collect();
        tracing::info!(
            match_key = %key,
            seen_as = %s.ids.key,
            via = %via,
            held_by = %held_by.join(","),
            holder_facts = facts.map(tracing::field::display),
            seen_facts = s.ids.facts.as_ref().map(tracing::field::display),
            owner = %holder.owner,
            state = %holder.display_state(now, self.policy.stuck_after),
            "skipped: {message}"
        );
    }

    /// Leaves the claim in the state `error` proves, and halts posting when no later post can
    /// succeed.
    async fn after_failure(&self, memory: &mut Memory, token: &ClaimToken, error: SinkError) -> Outcome {
        let verdict = error.verdict();
        let reason = error.to_string();
        let on = error.sink().platform();
        if error.halts_channel() {
            tracing::error!(error.message = %error, channel = %self.channel, "{on} refused the credentials or account; posting stops for this process");
        }
        let claim_kept = match verdict {
            // Neither a rate limit, a refused credential nor an unreachable platform says
            // anything about this match: an attempt counted for them would give matches up
            // (`failed`, for good) while the operator fixes a token or the network comes back.
            Verdict::NotPosted if error.is_rate_limited() || error.halts_channel() || error.never_reached() => {
                if error.is_rate_limited() {
                    tracing::warn!(error.message = %error, "{on} answered 429; claim released without counting an attempt, posting resumes after the reset");
                } else if error.never_reached() {
                    tracing::warn!(error.message = %error, "{on} could not be reached, nothing was sent; claim released without counting an attempt, tried again next cycle");
                } else {
                    tracing::warn!(error.message = %error, "claim released without counting an attempt: the refusal was of the credentials, not of this post");
                }
                match self.store.release(token).await {
                    Ok(Checked::Applied(_) | Checked::Gone) => false,
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
                let id = error.existing_post_id().map(str::to_string);
                tracing::info!(error.message = %error, post_id = id.as_deref().unwrap_or(""), "{on} says this was posted before; recorded as posted");
                self.record(
                    memory,
                    token,
                    &Transition::Posted {
                        post_id: id.clone(),
                        detail: Some(reason),
                    },
                )
                .await;
                return Outcome::AlreadyPosted { id, error };
            }
            Verdict::Unknown => {
                tracing::error!(error.message = %error, "post outcome unknown; keeping the claim, not retrying");
                self.record(memory, token, &Transition::Unknown { reason }).await;
                true
            }
        };
        Outcome::PostFailed {
            claim_kept,
            verdict,
            error,
        }
    }

    async fn record(&self, memory: &mut Memory, token: &ClaimToken, change: &Transition) {
        match self.store.transition(token, change).await {
            Ok(Checked::Applied(_)) => {}
            Ok(other) => warn_not_ours(token, &other),
            Err(e) => {
                // A time-out does not say the write was lost: it may land after.
                memory.unrecorded += 1;
                tracing::error!(error.message = %e, "could not record the post's outcome: the store did not answer; unless the write landed late, the claim stays `claimed` and shows as stuck after its deadline (`claims list --state stuck`)");
            }
        }
    }
}

/// How the claim step of a live post ended (see [`Announcer::claim_and_post`]).
enum ClaimStep {
    /// Won: post under this token (boxed: a token is large, the other variant small).
    Won(Box<ClaimToken>),
    /// Not won: what the sighting's turn ends with.
    Ends(Result<Outcome, AnnounceError>),
}

/// The claims metric's counter of `result` (`won`, `lost`, `held`): an announcement's series as
/// they always were, another event's with its `event` label (`event="result"`).
pub(crate) fn claims_counter(result: &'static str, event: crate::event::Event) -> metrics::Counter {
    match event {
        crate::event::Event::Announce => metrics::counter!(crate::metric_names::CLAIMS, "result" => result),
        other @ crate::event::Event::Result => {
            metrics::counter!(crate::metric_names::CLAIMS, "result" => result, "event" => other.as_str())
        }
    }
}

/// Remembers in `memory` that the claim of `s` is stored under `key`, when that is not the key
/// `s` derives, for [`Announcer::holders_of`].
fn learn(memory: &mut Memory, s: &Sighting, key: &MatchKey) {
    if *key == s.ids.key {
        return;
    }
    for id in s.source_identities() {
        memory.hints.insert(id.to_string(), key.clone());
    }
}

/// The span of one match's claim and post, so that every line they log names the match.
fn span(s: &Sighting, channel: &str) -> tracing::Span {
    tracing::info_span!("match", match_key = %s.ids.key, source = %s.m.identity(), channel)
}

fn warn_not_ours(token: &ClaimToken, found: &Checked) {
    match found {
        // Our claim was stuck, and a reconciler took it to repeat the post (it names itself).
        Checked::NotOurs(other) if other.replay.is_some() || other.owner == token.claim().owner => tracing::warn!(
            match_key = %token.key(),
            owner = %other.owner,
            repeated_by = other.replay.as_ref().map_or("", |r| r.by.as_str()),
            state = %other.state,
            "our claim's record changed under us: `claims reconcile` took it over (we were past our deadline), or it expired and we claimed it again; left its record untouched"
        ),
        Checked::NotOurs(other) => tracing::warn!(
            match_key = %token.key(),
            holder = %other.owner,
            state = %other.state,
            "our claim expired and another worker holds the match now; left its record untouched"
        ),
        _ => tracing::warn!(match_key = %token.key(), "our claim is gone (expired or released); nothing recorded"),
    }
}

impl Announcer {
    /// Logs a skip at `level` (a stuck holder always at WARN), naming the holder, since when and
    /// in which state.
    fn log_skip(&self, key: &MatchKey, holder: &Holder, message: &'static str, level: Level) {
        // Nearly every sighting is a held one: build no text for a line nobody will see, and read
        // the clock only for a line shown or a holder that can be stuck (only `claimed` can).
        let shown = match level {
            Level::DEBUG => tracing::enabled!(Level::DEBUG),
            _ => tracing::enabled!(Level::INFO),
        };
        if !shown && holder.state != ClaimState::Claimed {
            return;
        }
        let now = self.clock.now();
        let state = holder.display_state(now, self.policy.stuck_after);
        let stuck = state == ShownState::Stuck;
        if !stuck && !shown {
            return;
        }
        let state = state.as_str();
        let known = crate::claim::known_time(holder.claimed_at);
        // An unreadable record has no time: say so rather than show 1970.
        let since = known.map_or_else(|| "unknown".to_string(), |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        let age_secs = known.map(|_| holder.age(now).as_secs());
        let owner = &*holder.owner;
        if stuck {
            tracing::warn!(match_key = %key, owner, since, age_secs, state, "{message}; the holder seems to have died between claim and post (see `claims list --state stuck`)");
        } else if level == Level::DEBUG {
            tracing::debug!(match_key = %key, owner, since, age_secs, state, "{message}");
        } else {
            tracing::info!(match_key = %key, owner, since, age_secs, state, "{message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::post::{DISCORD_LENGTH, MASTODON_DEFAULT};

    const LONG: &str = "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i";
    const SHORT: &str = "https://is.gd/AbC123";

    #[test]
    fn the_short_link_takes_the_long_ones_place_and_the_length_is_counted_again() {
        let draft = Rendered::new(format!("Coming up: Zimbabwe v Bangladesh\n{LONG}"), DISCORD_LENGTH);
        let post = draft.relinked(LONG, SHORT).unwrap();
        assert_eq!(post.text(), format!("Coming up: Zimbabwe v Bangladesh\n{SHORT}"));
        assert_eq!(post.length(), draft.length() - LONG.len() + SHORT.len());
        // A URL weighs 23 on X whatever its length: the same weighted length.
        let x = Rendered::new(
            format!("Coming up: Zimbabwe v Bangladesh\n{LONG}"),
            LengthRule::XWeighted,
        );
        assert_eq!(x.relinked(LONG, SHORT).unwrap().length(), x.length());
        // The same link (the shortener failed, or none is set): the draft itself.
        assert_eq!(draft.relinked(LONG, LONG), Ok(draft.clone()));
    }

    #[test]
    fn a_short_link_that_cannot_take_the_long_ones_place_is_refused_with_the_reason() {
        let draft = Rendered::new(
            format!("{}\n{LONG}", "a".repeat(2_000 - LONG.len() - 1)),
            DISCORD_LENGTH,
        );
        assert_eq!(draft.length(), 2_000);
        let longer = format!("https://short.example/{}", "b".repeat(LONG.len()));
        assert_eq!(
            draft.relinked(LONG, &longer),
            Err("the shortened link makes the post too long for the sink")
        );
        let changed = Rendered::new(format!("Coming up\n{}", LONG.to_uppercase()), MASTODON_DEFAULT);
        assert_eq!(
            changed.relinked(LONG, SHORT),
            Err("the template does not print the link as it is")
        );
    }
}
