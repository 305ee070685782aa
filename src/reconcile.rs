//! Settling `unknown` and stuck claims with the platform, never by guessing (issue 22).
//!
//! A post that timed out after the request left, or met a 5xx, leaves its claim `unknown`; a
//! worker that died between claim and record leaves it stuck. Neither is ever retried blindly
//! (a duplicate is worse than a lost post). This module asks the platform whether the post
//! exists, and records what it learns:
//! - **X** has no idempotency key, so the bot never posts again: it reads the account's recent
//!   posts ([`XClient::find_post`]) and, when one is the claim's post (its text, links aside, or
//!   its link), records `posted` with that id. Not found is not proof (the timeline is
//!   eventually consistent, and reads cost credits): the claim stays as it was, with the time
//!   of the check and what was found (`claims list --state unknown` shows both).
//! - A claim whose record has no post text (written by a release before this one) cannot be
//!   looked for: it is listed for the operator.

use crate::claim::{Checked, Claim, ClaimError, ClaimState, ClaimStore, Transition};
use crate::cricket::MatchKey;
use crate::post::{Found, PostError, XClient};
use chrono::{DateTime, Utc};
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

/// The outcome of one claim's reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The post exists: recorded `posted` with its id.
    Posted {
        /// The post's id on the platform.
        id: String,
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
    /// Not asked: the record has nothing to look for, or the platform could not be asked.
    NotAsked {
        /// Why.
        why: String,
    },
}

/// Reconciles every `unknown` or stuck claim in `store` with X's account behind `x`; a claim
/// is stuck when `claimed` past its owner's deadline (or, for older records, `stuck_after`
/// after its claim). Stops asking X at the first refusal that every later read would meet too
/// (credentials, rate limit); the claims not asked are listed as such.
///
/// # Errors
/// [`ClaimError`] when the store cannot list the claims. A store error while recording one
/// claim's outcome is that claim's [`Settled::NotAsked`], not the whole call's.
pub async fn reconcile_x(store: &ClaimStore, x: &XClient, stuck_after: Duration) -> Result<Vec<Decision>, ClaimError> {
    let now = Utc::now();
    let mut decisions = Vec::new();
    let mut stop: Option<String> = None;
    for listed in store.list().await? {
        let claim = &listed.claim;
        let was = match claim.state {
            ClaimState::Unknown => "unknown",
            ClaimState::Claimed if claim.is_stuck(now, stuck_after) => "stuck",
            _ => continue,
        };
        let decision = |outcome| Decision {
            key: listed.key.clone(),
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
                    Ok(found) => record(store, &listed.key, claim, found, since).await,
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
        log(&listed.key, was, &outcome);
        decisions.push(decision(outcome));
    }
    Ok(decisions)
}

/// Records what X said about `claim`.
async fn record(store: &ClaimStore, key: &MatchKey, claim: &Claim, found: Found, since: DateTime<Utc>) -> Settled {
    let (change, settled) = match found {
        Found::Posted { tweet_id } => (
            Transition::Posted {
                tweet_id: Some(tweet_id.clone()),
                detail: Some("found on X by claims reconcile".into()),
            },
            Settled::Posted { id: tweet_id },
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
    match store.settle(key, claim, &change).await {
        Ok(Checked::Applied(_)) => settled,
        Ok(Checked::NotOurs(now)) => Settled::Changed { state: now.state },
        Ok(Checked::Gone) => Settled::NotAsked {
            why: "the claim expired or was released meanwhile".into(),
        },
        Err(e) => Settled::NotAsked {
            why: format!("could not record it: {e}"),
        },
    }
}

/// True when every later read would be refused the same way: credentials (401, 403) or the
/// read limit (429).
fn stops_asking(e: &PostError) -> bool {
    matches!(
        e,
        PostError::Refused {
            status: 401 | 403 | 429,
            ..
        }
    )
}

fn log(key: &MatchKey, was: &str, outcome: &Settled) {
    match outcome {
        Settled::Posted { id } => {
            tracing::info!(match_key = %key, was, tweet_id = %id, "reconciled: the post exists on X; recorded as posted")
        }
        Settled::StillUnknown { found } => {
            tracing::info!(match_key = %key, was, found = %found, "reconciled: not found; left as it was")
        }
        Settled::Changed { state } => {
            tracing::info!(match_key = %key, was, now = %state, "reconciled: the record changed meanwhile; left alone")
        }
        Settled::NotAsked { why } => tracing::warn!(match_key = %key, was, why = %why, "not reconciled"),
    }
}
