//! What the claim protocol answers and takes, as values: the proof of a won claim
//! ([`ClaimToken`]), the answer to a claim ([`MatchClaim`]), a change to record
//! ([`Transition`]) and what each change did ([`Checked`], [`Released`], [`Adoption`],
//! [`OperatorRelease`]). Losing a claim is an answer here, not an error.

use super::record::{Claim, ClaimState};
use crate::cricket::{Facts, Identity, MatchKey};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Proof that this process won the claim on a match. Only this module can create one, so
/// nothing can post without having won (every sink's post takes one).
#[derive(Debug)]
pub struct ClaimToken {
    pub(super) key: MatchKey,
    pub(super) claim: Claim,
}

impl ClaimToken {
    /// The match this token claims.
    pub fn key(&self) -> &MatchKey {
        &self.key
    }

    /// The record as this process wrote it when it won.
    pub fn claim(&self) -> &Claim {
        &self.claim
    }
}

/// The answer to [`ClaimStore::claim_match`].
#[derive(Debug)]
pub enum MatchClaim {
    /// No claim held any identity of the match: we took it, and only we may post.
    Won(ClaimToken),
    /// A claim holds the match under one of its identities; the identities this sighting
    /// gave that the claim lacked are now recorded in it.
    Held {
        /// The key the holder's claim is stored under (the match as it was first claimed).
        key: MatchKey,
        /// The holder's record, as it is after the identities were added.
        claim: Claim,
        /// What found it: a key as an identity, a source's own id (`cricbuzz:158062`), or
        /// the fixture (`fixture:2024-06-19_south-africa-v-united-states`).
        via: Identity,
        /// The facts listed for the holder that agreed with the sighting's, when they were
        /// compared (found through anything but the match's own source ids) and listed.
        facts: Option<Facts>,
    },
    /// The store has no first-start marker (never initialised, or it lost its data), checked
    /// in the same atomic step as the claim: nothing was claimed.
    NoMarker,
}

/// What a state change after the claim should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The post exists on its platform.
    Posted {
        /// The post's id, when the platform returned one.
        post_id: Option<String>,
        /// A note (e.g. "X reported duplicate content").
        detail: Option<String>,
    },
    /// The post was attempted and its outcome cannot be known.
    Unknown {
        /// What went wrong, for operators.
        reason: String,
    },
    /// The bot gave up on this match.
    Failed {
        /// The last failure.
        reason: String,
    },
    /// The post exists on its platform, which names it by id and content hash (Bluesky's URI
    /// and CID): both are recorded, so a reply to it can name it.
    PostedWithCid {
        /// The post's id.
        post_id: String,
        /// Its content hash.
        cid: String,
    },
    /// Recorded at first start without posting.
    Seeded,
    /// A reconciliation asked the platform and did not settle it: the state is kept, and the
    /// record says when it was checked and what was found.
    Checked {
        /// What was found ("not among the 37 posts since …").
        found: String,
    },
}

impl Transition {
    /// The record `claim` becomes once this change is recorded at `now`.
    pub(super) fn apply(&self, mut claim: Claim, now: DateTime<Utc>) -> Claim {
        let updated_at = claim.updated_at;
        claim.updated_at = now;
        // A change recorded ends any repeat of the post (`claims reconcile` records what its
        // repeat came to): the next reconciliation may ask again at once.
        claim.replay = None;
        match self {
            Transition::Posted { post_id, detail } => {
                claim.state = ClaimState::Posted;
                claim.post_id = post_id.clone();
                claim.detail = detail.clone();
                // The post is on the platform now: its text only served to find it there
                // (`claims reconcile`). Dropped, so the record every later cycle reads of a
                // posted match is its size before the post (a held cycle reads them all).
                claim.text = None;
            }
            Transition::PostedWithCid { post_id, cid } => {
                claim.state = ClaimState::Posted;
                claim.post_id = Some(post_id.clone());
                claim.post_cid = Some(cid.clone());
                claim.detail = None;
                claim.text = None;
            }
            Transition::Unknown { reason } => {
                claim.state = ClaimState::Unknown;
                claim.detail = Some(reason.clone());
            }
            Transition::Failed { reason } => {
                claim.state = ClaimState::Failed;
                claim.detail = Some(reason.clone());
            }
            Transition::Seeded => {
                claim.state = ClaimState::Seeded;
                claim.detail = Some("present at first start; not announced".into());
            }
            Transition::Checked { found } => {
                // Checked is not a change of state: `updated_at` stays when the state last changed.
                claim.updated_at = updated_at;
                claim.checked_at = Some(now);
                claim.check = Some(found.clone());
            }
        }
        claim
    }
}

/// The post a claim's winner is about to send, recorded in the claim (see
/// [`ClaimStore::claim_match_to_post`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostIntent<'a> {
    /// The post's text, as rendered before the claim.
    pub text: &'a str,
    /// The sink's server-side dedupe key for it, when the sink has one (derived from the
    /// match, the channel and, for Bluesky, `claimed_at`).
    pub dedupe_key: Option<&'a str>,
    /// The time the claim records as its own (`claimed_at`), read from the store's clock
    /// ([`ClaimStore::now`](super::ClaimStore::now)): chosen before the claim, so that a dedupe key made of it
    /// (Bluesky's record key) can be written with the claim.
    pub claimed_at: DateTime<Utc>,
    /// The post it replies to (a result under its announcement), recorded with the claim.
    pub reply_to: Option<&'a super::record::ReplyTo>,
}

/// The answer to a token-checked change ([`ClaimStore::transition`], [`ClaimStore::release`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Our token matched; the change was made. Holds the record as it is now (for a release,
    /// as it was before deletion).
    Applied(Claim),
    /// The record now belongs to another worker (our claim expired and was re-taken); nothing
    /// was changed.
    NotOurs(Claim),
    /// The key no longer exists (expired or released); nothing was changed.
    Gone,
}

/// The answer to [`ClaimStore::adopt_for_replay`].
#[derive(Debug)]
pub enum Adoption {
    /// Taken: this instance alone repeats the post, with this token.
    Adopted(ClaimToken),
    /// The record changed since it was read (its owner recorded it, or another reconciler
    /// took it): nothing was written. Holds the record as it is now.
    Changed(Claim),
    /// The claim expired or was released meanwhile.
    Gone,
    /// The value is not a record of this bot's (it has no token): it cannot be taken.
    NotARecord,
    /// The store's clock read outside the window the repeat may be made in (not stuck yet,
    /// still settling, another reconciler's lease running, or too late): nothing was written.
    /// Holds the record as it is now.
    NotNow(Claim),
}

/// A claim as listed for operators: its key, its record and its remaining TTL.
#[derive(Debug, Clone)]
pub struct ListedClaim {
    /// The match key.
    pub key: MatchKey,
    /// The record.
    pub claim: Claim,
    /// Remaining time to live, when the store reports one.
    pub ttl: Option<Duration>,
}

/// What [`ClaimStore::release_failed`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Released {
    /// The claim was deleted; the match may be claimed again. `attempts` counts the failed
    /// attempts so far (kept in a counter that survives the release).
    Released {
        /// Failed attempts so far, this one included.
        attempts: u32,
    },
    /// The attempt limit was reached: the record now says `failed` and blocks the match.
    GaveUp(Claim),
    /// The record belongs to another worker now; nothing changed.
    NotOurs(Claim),
    /// The key no longer exists; nothing changed.
    Gone,
}

/// What an operator's [`ClaimStore::operator_release`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorRelease {
    /// Deleted (with its attempt counter); the match may be announced again.
    Released(Claim),
    /// Refused: the claim is live and healthy (`claimed` and not stuck, `posted`, `seeded`).
    Refused(Claim),
    /// No claim on that key.
    Absent,
    /// The key holds a value that is not a claim record (not written by this bot): there is no
    /// token to compare, so it is never deleted, with or without `force`; the store's own tools
    /// remove it.
    NotARecord(Claim),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posted_record_drops_the_post_text_and_an_unknown_one_keeps_it() {
        let mut claim = Claim::with_deadline("host:1", "A v B", &[], Utc::now(), None);
        claim.text = Some("Coming up: A v B https://example.com/1".into());
        claim.dedupe_key = Some("k".into());
        let unknown = Transition::Unknown { reason: "504".into() }.apply(claim.clone(), Utc::now());
        assert_eq!(unknown.text, claim.text, "reconcile still needs it");
        let posted = Transition::Posted {
            post_id: Some("42".into()),
            detail: None,
        }
        .apply(unknown, Utc::now());
        assert_eq!(
            (
                posted.state,
                posted.text,
                posted.post_id.as_deref(),
                posted.dedupe_key.as_deref()
            ),
            (ClaimState::Posted, None, Some("42"), Some("k"))
        );
    }
}
