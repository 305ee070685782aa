//! Settling `unknown` and stuck claims with the platform, never by guessing (issue 22).
//!
//! A post that timed out after the request left, or met a 5xx, leaves its claim `unknown`; a
//! worker that died between claim and record leaves it stuck. Neither is ever retried blindly
//! (a duplicate is worse than a lost post). This module asks the platform whether the post
//! exists, and records what it learns:
//! - **X** has no idempotency key, so the bot never posts again: it reads the account's recent
//!   posts (`GET /2/users/:id/tweets`) and, when one is the claim's post (its text, links aside, or
//!   its link), records `posted` with that id. Not found is not proof (the timeline is
//!   eventually consistent, and reads cost credits): the claim stays as it was, with the time
//!   of the check and what was found (`claims list --state unknown` shows both).
//! - **Mastodon** keeps a post's `Idempotency-Key` for an hour: within that hour the create is
//!   repeated with the same key (see [`reconcile`]), and the server answers the original
//!   status, or creates the post once if the first create never landed. After the hour a repeat
//!   is no longer safe: the claim is listed for the operator. Only one reconciler repeats a
//!   post at a time ([`ClaimStore::adopt_for_replay`]): Mastodon writes the key only once the
//!   status is saved, so two repeats at once (two replicas' `run`) could make two statuses.
//! - **Bluesky** refuses a second create at the same record key: the create is repeated at the
//!   claim's key, and either creates the post once or finds it there.
//! - **Discord and Telegram** can neither be searched nor deduplicated: their claims are listed
//!   for the operator ([`not_asked`]).
//! - A claim whose record has no post text (written by a release before this one) cannot be
//!   looked for: it is listed for the operator.
//!
//! [`reconcile_all`] picks the way for each channel's sink: `run` and `claims reconcile` both
//! call it. It reads the claims to settle in ONE pass for every channel, through the index of
//! unsettled claims the claim step keeps ([`ClaimStore::unsettled_across`]): its cost is what is
//! unsettled, never the store's keyspace nor channels × keys (issue 36).
//!
//! Every time judged here (stuck, a lease, Mastodon's windows) is the store's: the records'
//! times are written by its clock, `now` is read from it ([`ClaimStore::now`]), and a claim is
//! taken to repeat its post only while the store's clock, read in the step that takes it, is
//! inside the repeat's window ([`Window`]). The replicas' own clocks need not agree.

use crate::claim::{
    Adoption, Checked, Claim, ClaimError, ClaimState, ClaimStore, ClaimToken, Transition, UnsettledClaim, Window,
};
use crate::cricket::MatchKey;
use crate::post::{Client, Found, Sink, SinkError, SinkKind, XClient};
use chrono::{DateTime, DurationRound, Utc};
use std::time::Duration;

/// How often `run` reconciles: on its first cycle, then every this many cycles (an hour at the
/// default 300 s poll interval). Each reconciliation costs two X reads when a claim needs one,
/// none otherwise.
pub const RECONCILE_EVERY_CYCLES: u64 = 12;

/// How far before a claim's time the search for its post starts: the claim is written before
/// the post, so a minute covers any clock difference between this host and X.
pub const SEARCH_SLACK: chrono::Duration = chrono::Duration::minutes(1);

/// What a reconciliation decided for one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The match.
    pub key: MatchKey,
    /// Its state as read ("unknown", "stuck").
    pub was: &'static str,
    /// What was done.
    pub outcome: Settled,
}

/// How a reconciliation learnt that a post exists: found, or answered by a repeat of its
/// create (which may have made it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learnt {
    /// Found among the account's posts (X): this reconciliation posted nothing.
    Found,
    /// The repeat was refused at the post's record key and the record there read back
    /// (Bluesky): the first create had made it; this reconciliation posted nothing.
    AlreadyThere,
    /// The repeat made the post (Bluesky answers a create at a key that holds a record with an
    /// error, so a success is a post made now): the first create never landed.
    MadeByRepeat,
    /// The repeat was answered with a post under the same `Idempotency-Key` (Mastodon): the
    /// first post if it had landed within the hour, else one made now; Mastodon does not say
    /// which.
    AnsweredByRepeat,
}

impl Learnt {
    /// In words, for the report and the log.
    pub fn describe(self) -> &'static str {
        match self {
            Learnt::Found => "found among the account's posts; nothing posted",
            Learnt::AlreadyThere => {
                "the repeat was refused at the post's record key and the record read back: it was there already; nothing posted"
            }
            Learnt::MadeByRepeat => "the first create never landed: the repeat made the post now, once",
            Learnt::AnsweredByRepeat => {
                "the repeat under the same Idempotency-Key was answered with the post: the first one if it had landed, else made now (Mastodon does not say which)"
            }
        }
    }
}

/// The outcome of one claim's reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The post exists: recorded `posted` with its id.
    Posted {
        /// The post's id on the platform.
        id: String,
        /// How it was learnt, and whether this reconciliation made the post.
        how: Learnt,
    },
    /// Not found: the claim keeps its state; the check is recorded.
    StillUnknown {
        /// What was found.
        found: String,
    },
    /// The record changed while it was being checked (its owner recorded it): left alone.
    Changed {
        /// Its state now.
        state: ClaimState,
    },
    /// Too soon to repeat its post: the platform may still be saving the last send (see
    /// [`MASTODON_SETTLE`]). Left alone; a reconciliation from `until` on repeats it.
    Waiting {
        /// When it may be repeated (UTC).
        until: DateTime<Utc>,
    },
    /// Another reconciler is repeating its post now: left alone (asked again once it is done).
    Repeating {
        /// The instance repeating it.
        by: String,
        /// When it gives up (UTC).
        until: DateTime<Utc>,
    },
    /// Not asked: the record has nothing to look for, or the platform could not be asked.
    NotAsked {
        /// Why.
        why: String,
    },
}

/// Reconciles every `unknown` or stuck claim of one channel (its claims in `store`, its posts
/// through `sink`) the way its platform allows: X's account is searched, a Mastodon or Bluesky
/// post is repeated under its dedupe key, Discord's and Telegram's claims are listed as not
/// asked (see the module doc). A claim is stuck when `claimed` past its owner's deadline (or,
/// for older records, `stuck_after` after its claim).
///
/// # Errors
/// [`ClaimError`] when the store cannot list the claims. A store error while recording one
/// claim's outcome is that claim's [`Settled::NotAsked`], not the whole call's.
pub async fn reconcile(store: &ClaimStore, sink: &Sink, stuck_after: Duration) -> Result<Vec<Decision>, ClaimError> {
    Ok(reconcile_all(store, &[(store, sink)], stuck_after)
        .await?
        .into_iter()
        .flatten()
        .collect())
}

/// [`reconcile`] for every one of `channels` (each channel's or event's claims in its store,
/// posted through its sink), reading the claims to settle in ONE pass over the deployment's
/// unsettled claims (`base`: the deployment's store, whose prefix every channel's starts
/// with), then each channel's, one channel after another. One list of decisions per channel,
/// in the order of `channels`.
///
/// # Errors
/// As [`reconcile`].
pub async fn reconcile_all(
    base: &ClaimStore,
    channels: &[(&ClaimStore, &Sink)],
    stuck_after: Duration,
) -> Result<Vec<Vec<Decision>>, ClaimError> {
    let now = base.now().await?;
    let stores: Vec<&ClaimStore> = channels.iter().map(|(store, _)| *store).collect();
    let found = base.unsettled_across(&stores, now).await?;
    let mut decisions = Vec::with_capacity(channels.len());
    for ((store, sink), claims) in channels.iter().zip(found) {
        let pending = unsettled(claims, now, stuck_after);
        decisions.push(match way(sink) {
            Way::Search(x) => search(store, x, pending).await,
            Way::Replay => replay(store, sink, stuck_after, pending).await?,
            Way::NotAsked => not_asked(pending, sink.kind()),
        });
    }
    Ok(decisions)
}

/// Whether [`reconcile`] asks `sink`'s platform anything (X, Mastodon, Bluesky), rather than
/// only listing the claims for the operator (Discord, Telegram).
pub fn asks(sink: &Sink) -> bool {
    !matches!(way(sink), Way::NotAsked)
}

/// How a platform is asked whether a post exists.
enum Way<'a> {
    /// The account's recent posts are searched (X).
    Search(&'a XClient),
    /// The create is repeated under the post's dedupe key (Mastodon, Bluesky).
    Replay,
    /// Nothing can be asked (Discord, Telegram): the claims are listed for the operator.
    NotAsked,
}

/// The way `sink`'s platform is asked: the one place that tells the sinks apart.
fn way(sink: &Sink) -> Way<'_> {
    match sink.client() {
        Client::X(x) => Way::Search(x),
        Client::Mastodon(_) | Client::Bluesky(_) => Way::Replay,
        Client::Discord(_) | Client::Telegram(_) => Way::NotAsked,
    }
}

/// Reconciles with X's account behind `x` (see [`reconcile`]). Stops asking X at the first
/// refusal that every later read would meet too (credentials, rate limit); the claims not
/// asked are listed as such.
async fn search(store: &ClaimStore, x: &XClient, pending: Vec<Pending>) -> Vec<Decision> {
    let mut decisions = Vec::new();
    let mut stop: Option<String> = None;
    for Pending { key, claim, was } in pending {
        let claim = &claim;
        let decision = |outcome| Decision {
            key: key.clone(),
            was,
            outcome,
        };
        let outcome = match (&claim.text, &stop) {
            (_, Some(why)) => Settled::NotAsked { why: why.clone() },
            (None, _) => Settled::NotAsked {
                why:
                    "the record has no post text to look for (claimed by an earlier release); check the account by hand"
                        .into(),
            },
            (Some(text), None) => {
                let since = claim.claimed_at - SEARCH_SLACK;
                match x.find_post(text, since).await {
                    Ok(found) => record(store, &key, claim, found, since).await,
                    Err(e) => {
                        let why = format!("X could not be asked: {e}");
                        if stops_asking(&e) {
                            stop = Some(why.clone());
                        }
                        Settled::NotAsked { why }
                    }
                }
            }
        };
        log(&key, was, &outcome);
        decisions.push(decision(outcome));
    }
    decisions
}

/// How long Mastodon keeps an `Idempotency-Key` (one hour, per account: `sinks.md`, from
/// Mastodon's `post_status_service.rb`), less a margin for clocks. A repeat must reach the
/// server within it, counted from the claim (before the first send): it starts only when it
/// can end, at its post timeout, inside it.
pub const MASTODON_REPLAY_WINDOW: chrono::Duration = chrono::Duration::minutes(55);

/// How long after a Mastodon post's last send ended the bot waits before repeating it.
/// Mastodon stores an `Idempotency-Key` only once the status is saved (mastodon#21840,
/// `sinks.md`): a repeat that arrives while a slow instance is still saving the first create
/// makes a second status. A send ends, as the bot sees it, at its post timeout (or a
/// reconciler's lease, if it was killed); the server may go on after that. Ten minutes is far
/// past the time any HTTP front end lets a request run.
pub const MASTODON_SETTLE: chrono::Duration = chrono::Duration::minutes(10);

/// Reconciles a Mastodon or Bluesky channel's claims by repeating the create where the
/// platform makes a second post impossible (see [`reconcile`]).
///
/// # Errors
/// [`ClaimError`] when the store cannot tell its time.
async fn replay(
    store: &ClaimStore,
    sink: &Sink,
    stuck_after: Duration,
    pending: Vec<Pending>,
) -> Result<Vec<Decision>, ClaimError> {
    let kind = sink.kind();
    let mut decisions = Vec::new();
    for Pending { key, claim, was } in pending {
        let claim = &claim;
        // Read for each claim: the repeats before it may have taken minutes, and Mastodon's
        // window closes by the clock (the store's; the adoption judges it again, atomically).
        let now = store.now().await?;
        // Another reconciler (a replica's `run`, an operator's `claims reconcile`) is
        // repeating it now: a second repeat at the same time could post twice.
        let repeating = claim.replay.as_ref().filter(|r| r.until > now);
        let window = match kind {
            SinkKind::Mastodon => mastodon_window(claim, stuck_after),
            _ => Window::ANY,
        };
        let held_back = outside(window, now);
        let outcome = match (repeating, &claim.text, held_back) {
            (Some(r), _, _) => Settled::Repeating {
                by: r.by.clone(),
                until: r.until,
            },
            (None, None, _) => Settled::NotAsked {
                why: "the record has no post text to send again (claimed by an earlier release); check the channel by hand".into(),
            },
            (None, Some(_), Some(held_back)) => held_back,
            (None, Some(text), None) => match store.adopt_for_replay(&key, claim, stuck_after, window).await {
                Ok(Adoption::Adopted(token)) => repeat(store, sink, &key, text, &token).await,
                // Another reconciler took it between our read and our write.
                Ok(Adoption::Changed(now)) => match now.replay {
                    Some(r) => Settled::Repeating { by: r.by, until: r.until },
                    None => Settled::Changed { state: now.state },
                },
                Ok(Adoption::Gone) => Settled::NotAsked {
                    why: "the claim expired or was released meanwhile".into(),
                },
                Ok(Adoption::NotARecord) => Settled::NotAsked {
                    why: "not a record of this bot's (no token): check the channel by hand".into(),
                },
                // The store's clock, read as it took it, was outside the window (at its edge,
                // or the claim is not stuck yet by the store's clock): nothing was taken.
                Ok(Adoption::NotNow(held)) => match held.replay {
                    Some(r) => Settled::Repeating { by: r.by, until: r.until },
                    None => {
                        let later = store.now().await.unwrap_or(now);
                        outside(window, later).unwrap_or_else(|| Settled::Waiting {
                            until: round_up(held.stuck_at(stuck_after)),
                        })
                    }
                },
                Err(e) => Settled::NotAsked {
                    why: format!("could not take the claim to repeat its post: {e}"),
                },
            },
        };
        log(&key, was, &outcome);
        decisions.push(Decision { key, was, outcome });
    }
    Ok(decisions)
}

/// Why a Mastodon claim's post must not be repeated at `now`, if it must not: a repeat that
/// ends (at `post_bound`, its post timeout and margin) after [`MASTODON_REPLAY_WINDOW`] could
/// find its key gone and post twice; one within [`MASTODON_SETTLE`] of the last send could
/// arrive while the instance still saves it.
#[cfg(test)]
fn mastodon_holds_back(claim: &Claim, now: DateTime<Utc>, post_bound: Duration) -> Option<Settled> {
    outside(mastodon_window(claim, post_bound), now)
}

/// The store's times in which a Mastodon claim's post may be repeated: from
/// [`MASTODON_SETTLE`] after its last send (rounded up to the second, as shown), until a
/// repeat starting then would end (at `post_bound`, its post timeout and margin) past
/// [`MASTODON_REPLAY_WINDOW`] from the claim. Both ends are counted from times the store's
/// clock wrote, and judged by it.
fn mastodon_window(claim: &Claim, post_bound: Duration) -> Window {
    let post_bound = chrono::Duration::from_std(post_bound).unwrap_or(MASTODON_REPLAY_WINDOW);
    Window {
        from: Some(round_up(last_send_ended(claim) + MASTODON_SETTLE)),
        until: claim.claimed_at.checked_add_signed(MASTODON_REPLAY_WINDOW - post_bound),
    }
}

/// Shown to the second: rounded up, so the time shown is never before it.
fn round_up(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_round_up(chrono::Duration::seconds(1)).unwrap_or(t)
}

/// Why a repeat must not be made at `now` (the store's time), outside `window`, if it must
/// not: too late for Mastodon's hour, or still settling.
fn outside(window: Window, now: DateTime<Utc>) -> Option<Settled> {
    if window.until.is_some_and(|until| now >= until) {
        return Some(Settled::NotAsked {
            why: "Mastodon keeps a post's Idempotency-Key for an hour only: a repeat now could post twice; check the account by hand".into(),
        });
    }
    window
        .from
        .filter(|from| now < *from)
        .map(|until| Settled::Waiting { until })
}

/// When the first of the posts `decisions` left [`Settled::Waiting`] may be repeated: when a
/// reconciliation is worth running again. `None` when none waits.
pub fn earliest_wait(decisions: &[Decision]) -> Option<DateTime<Utc>> {
    decisions
        .iter()
        .filter_map(|d| match d.outcome {
            Settled::Waiting { until } => Some(until),
            _ => None,
        })
        .min()
}

/// When the last send of `claim`'s post ended at the latest, as far as the bot can know: its
/// owner's deadline or its last state change (a post timed out), the end of a reconciler's
/// lease (one killed mid-repeat), or the record of a repeat that did not settle it.
fn last_send_ended(claim: &Claim) -> DateTime<Utc> {
    [
        Some(claim.updated_at),
        claim.deadline,
        claim.checked_at,
        claim.replay.as_ref().map(|r| r.until),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(claim.updated_at)
}

/// Repeats the post of a claim this instance took for it (`token`), and records what came of it.
async fn repeat(store: &ClaimStore, sink: &Sink, key: &MatchKey, text: &str, token: &ClaimToken) -> Settled {
    let kind = sink.kind();
    let (change, settled) = match sink.post(text, token).await {
        Ok(receipt) => {
            let how = match kind {
                SinkKind::Mastodon => Learnt::AnsweredByRepeat,
                _ => Learnt::MadeByRepeat,
            };
            (
                Transition::Posted {
                    post_id: Some(receipt.id.clone()),
                    detail: Some(format!("{kind}, by claims reconcile: {}", how.describe())),
                },
                Settled::Posted { id: receipt.id, how },
            )
        }
        Err(SinkError::AlreadyPosted { id, detail, .. }) => (
            Transition::Posted {
                post_id: Some(id.clone()),
                detail: Some(format!("{kind} already held it: {detail}")),
            },
            Settled::Posted {
                id,
                how: Learnt::AlreadyThere,
            },
        ),
        Err(e) => {
            let found = format!("{kind} did not settle it: {e}");
            (
                Transition::Checked { found: found.clone() },
                Settled::StillUnknown { found },
            )
        }
    };
    settle(store, key, token.claim(), &change, settled).await
}

/// A claim a reconciliation settles, with what it was.
struct Pending {
    key: MatchKey,
    claim: Claim,
    was: &'static str,
}

/// Of the claims found unsettled, those a reconciliation settles, each with what it was:
/// `unknown`, or `stuck` (`claimed` past its owner's deadline, or for older records
/// `stuck_after` after its claim, at `now`).
fn unsettled(found: Vec<UnsettledClaim>, now: DateTime<Utc>, stuck_after: Duration) -> Vec<Pending> {
    found
        .into_iter()
        .filter_map(|(key, claim)| {
            let was = match claim.state {
                ClaimState::Unknown => "unknown",
                ClaimState::Claimed if claim.is_stuck(now, stuck_after) => "stuck",
                _ => return None,
            };
            Some(Pending { key, claim, was })
        })
        .collect()
}

/// The `unknown` and stuck claims of a channel whose sink this release does not ask yet
/// (`kind`), each listed as not asked, for the operator.
fn not_asked(pending: Vec<Pending>, kind: SinkKind) -> Vec<Decision> {
    let mut decisions = Vec::new();
    for Pending { key, was, .. } in pending {
        let outcome = Settled::NotAsked {
            why: format!("{kind} is not asked by this release: check the channel by hand, then `claims release`"),
        };
        log(&key, was, &outcome);
        decisions.push(Decision { key, was, outcome });
    }
    decisions
}

/// Records what X said about `claim`.
async fn record(store: &ClaimStore, key: &MatchKey, claim: &Claim, found: Found, since: DateTime<Utc>) -> Settled {
    let (change, settled) = match found {
        Found::Posted { tweet_id } => (
            Transition::Posted {
                post_id: Some(tweet_id.clone()),
                detail: Some("found on X by claims reconcile".into()),
            },
            Settled::Posted {
                id: tweet_id,
                how: Learnt::Found,
            },
        ),
        Found::NotAmong { looked_at } => {
            let found = format!(
                "not among the {looked_at} posts on X since {} (not proof: X's timeline is eventually consistent)",
                since.format("%Y-%m-%dT%H:%M:%SZ")
            );
            (
                Transition::Checked { found: found.clone() },
                Settled::StillUnknown { found },
            )
        }
    };
    settle(store, key, claim, &change, settled).await
}

/// Records `change` on the claim as read (`claim`), and says what came of it: `settled` when
/// recorded, else why not.
async fn settle(store: &ClaimStore, key: &MatchKey, claim: &Claim, change: &Transition, settled: Settled) -> Settled {
    match store.settle(key, claim, change).await {
        Ok(Checked::Applied(_)) => settled,
        Ok(Checked::NotOurs(now)) => Settled::Changed { state: now.state },
        Ok(Checked::Gone) => Settled::NotAsked {
            why: "the claim expired or was released meanwhile".into(),
        },
        Err(e) => Settled::NotAsked {
            why: match &settled {
                Settled::Posted { id, .. } => format!(
                    "the post exists (id {id}) but the store did not take it ({e}): the claim is left as it was; run `claims reconcile` again to record it"
                ),
                _ => format!("could not record it: {e}"),
            },
        },
    }
}

/// True when every later read would be refused the same way: credentials (401, 403) or the
/// read limit (429).
fn stops_asking(e: &SinkError) -> bool {
    matches!(
        e,
        SinkError::Refused {
            status: 401 | 403 | 429,
            ..
        }
    )
}

fn log(key: &MatchKey, was: &str, outcome: &Settled) {
    match outcome {
        Settled::Posted { id, how } => {
            tracing::info!(match_key = %key, was, post_id = %id, how = how.describe(), "reconciled: recorded as posted");
        }
        Settled::StillUnknown { found } => {
            tracing::info!(match_key = %key, was, found = %found, "reconciled: not found; left as it was");
        }
        Settled::Changed { state } => {
            tracing::info!(match_key = %key, was, now = %state, "reconciled: the record changed meanwhile; left alone");
        }
        Settled::Waiting { until } => {
            tracing::info!(match_key = %key, was, until = %until.to_rfc3339(), "reconciled later: the platform may still be saving the last send; left alone");
        }
        Settled::Repeating { by, until } => {
            tracing::info!(match_key = %key, was, by = %by, until = %until.to_rfc3339(), "reconciled elsewhere: another instance is repeating the post; left alone");
        }
        Settled::NotAsked { why } => tracing::warn!(match_key = %key, was, why = %why, "not reconciled"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `unknown` Mastodon claim won at `claimed`, its state last changed at `updated`.
    fn claim(claimed: DateTime<Utc>, updated: DateTime<Utc>, extra: serde_json::Value) -> Claim {
        let mut record = serde_json::json!({
            "state": "unknown",
            "owner": "host:1",
            "token": "t",
            "claimed_at": claimed.to_rfc3339(),
            "updated_at": updated.to_rfc3339(),
            "text": "Coming up: A v B https://example.com/1",
        });
        if let (Some(record), serde_json::Value::Object(extra)) = (record.as_object_mut(), extra) {
            record.extend(extra);
        }
        serde_json::from_value(record).unwrap()
    }

    #[test]
    fn a_mastodon_post_is_repeated_only_after_its_last_send_settled_and_inside_the_hour() {
        let now = Utc::now();
        let min = chrono::Duration::minutes;
        let bound = Duration::from_secs(45);
        let waiting = |until: DateTime<Utc>| {
            Some(Settled::Waiting {
                until: until.duration_round_up(chrono::Duration::seconds(1)).unwrap(),
            })
        };
        // Timed out two minutes ago: the instance may still be saving it.
        let fresh = claim(now - min(3), now - min(2), serde_json::Value::Null);
        assert_eq!(
            mastodon_holds_back(&fresh, now, bound),
            waiting(now - min(2) + MASTODON_SETTLE)
        );
        // Eleven minutes since: repeated.
        let settled = claim(now - min(12), now - min(11), serde_json::Value::Null);
        assert_eq!(mastodon_holds_back(&settled, now, bound), None);
        // A repeat that did not settle it, recorded a minute ago, is a send too.
        let checked = claim(
            now - min(30),
            now - min(29),
            serde_json::json!({"checked_at": (now - min(1)).to_rfc3339()}),
        );
        assert_eq!(
            mastodon_holds_back(&checked, now, bound),
            waiting(now - min(1) + MASTODON_SETTLE)
        );
        // A reconciler killed mid-repeat: its send may have gone on until its lease ended.
        let killed = claim(
            now - min(30),
            now - min(29),
            serde_json::json!({"replay": {"by": "host:2", "until": (now - min(3)).to_rfc3339()}}),
        );
        assert_eq!(
            mastodon_holds_back(&killed, now, bound),
            waiting(now - min(3) + MASTODON_SETTLE)
        );
        // Won 54 minutes ago: a repeat ending 45 s from now ends past the window.
        let late = claim(
            now - min(54) - chrono::Duration::seconds(30),
            now - min(40),
            serde_json::Value::Null,
        );
        assert!(matches!(
            mastodon_holds_back(&late, now, bound),
            Some(Settled::NotAsked { .. })
        ));
        assert_eq!(mastodon_holds_back(&late, now, Duration::from_secs(10)), None);
    }

    #[test]
    fn the_next_reconciliation_is_due_when_the_first_waiting_post_may_be_repeated() {
        let now = Utc::now();
        let decision = |outcome| Decision {
            key: MatchKey::parse("2026-07-17_a-v-b").unwrap(),
            was: "unknown",
            outcome,
        };
        let min = chrono::Duration::minutes;
        let decisions = [
            decision(Settled::Posted {
                id: "1".into(),
                how: Learnt::Found,
            }),
            decision(Settled::Waiting { until: now + min(9) }),
            decision(Settled::Repeating {
                by: "host:2".into(),
                until: now + min(1),
            }),
            decision(Settled::Waiting { until: now + min(4) }),
        ];
        assert_eq!(earliest_wait(&decisions), Some(now + min(4)));
        assert_eq!(earliest_wait(&decisions[..1]), None);
    }
}
