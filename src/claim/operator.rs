//! What is done to a claim by someone other than its winner, each by compare-and-set on the
//! token read: an operator's release (`claims release`), and `claims reconcile` settling a
//! claim with what the platform says or taking it to repeat its post.

use super::error::ClaimError;
use super::outcome::{Adoption, Checked, ClaimToken, OperatorRelease, Transition};
use super::record::{later_by, new_token, Claim, ClaimState, Replay};
use super::ClaimStore;
use crate::cricket::MatchKey;
use std::time::Duration;

impl ClaimStore {
    /// Changes the claim on `key` as read in `read` (by `claims reconcile`, which does not own
    /// it), only while the record still carries `read`'s token: a record that changed since it
    /// was read (its owner recorded the post meanwhile) is left alone and returned.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn settle(&self, key: &MatchKey, read: &Claim, change: &Transition) -> Result<Checked, ClaimError> {
        if read.token.is_empty() {
            // Not a record of this bot's: nothing to compare, nothing to change.
            return Ok(Checked::NotOurs(read.clone()));
        }
        let new = change.apply(read.clone(), self.clock().now());
        let swapped = each!(self, s => s.compare_and_set(&self.key(key), &read.token, &new.to_stored()).await)?;
        Ok(swapped.checked(|_| new))
    }

    /// Takes the claim on `key` as read in `read` for `claims reconcile` to repeat its post
    /// where the platform's own rule makes a second post impossible (Mastodon's
    /// `Idempotency-Key`, Bluesky's record key), by compare-and-set on `read`'s token: the
    /// record gets a new token and a [`Replay`] naming this instance until `lease` from now.
    /// Only one reconciler wins it, and until the lease ends no other one repeats the post:
    /// two repeats sent at once could both create it (Mastodon writes the key only once the
    /// status is saved, mastodon#21840, `../shared/docs/sinks.md`). The claim keeps its state;
    /// the winner records what the repeat came to with [`ClaimStore::settle`] on the returned
    /// token's record, which ends the lease. The claim's owner, if it is still at work, can no
    /// longer record its own outcome (its token is gone): only claims `unknown` or stuck are
    /// taken, whose owner has given up.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing was written.
    pub async fn adopt_for_replay(
        &self,
        key: &MatchKey,
        read: &Claim,
        lease: Duration,
    ) -> Result<Adoption, ClaimError> {
        if read.token.is_empty() {
            return Ok(Adoption::NotARecord);
        }
        let now = self.clock().now();
        let mut new = read.clone();
        new.token = new_token();
        new.replay = Some(Replay {
            by: self.owner().to_string(),
            until: later_by(now, lease),
        });
        let swapped = each!(self, s => s.compare_and_set(&self.key(key), &read.token, &new.to_stored()).await)?;
        Ok(match swapped.checked(|_| new) {
            Checked::Applied(claim) => Adoption::Adopted(ClaimToken {
                key: key.clone(),
                claim,
            }),
            Checked::NotOurs(now) => Adoption::Changed(now),
            Checked::Gone => Adoption::Gone,
        })
    }

    /// An operator's release of the claim on `key`: allowed when the claim is `unknown`,
    /// `failed` or stuck (`claimed` for longer than `stuck_after`), or with `force`. Deletes
    /// the record by compare-and-delete on the token it holds, and resets its attempt counter.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn operator_release(
        &self,
        key: &MatchKey,
        force: bool,
        stuck_after: Duration,
    ) -> Result<OperatorRelease, ClaimError> {
        let Some(claim) = self.peek(key).await? else {
            return Ok(OperatorRelease::Absent);
        };
        // Every record this bot writes carries a token; only an unreadable value has none.
        if claim.token.is_empty() {
            return Ok(OperatorRelease::NotARecord(claim));
        }
        let releasable = matches!(claim.state, ClaimState::Unknown | ClaimState::Failed)
            || claim.is_stuck(self.clock().now(), stuck_after);
        if !(releasable || force) {
            return Ok(OperatorRelease::Refused(claim));
        }
        let swapped = each!(self, s => s.compare_and_delete(&self.key(key), &claim.token).await)?;
        each!(self, s => s.delete(&self.attempts_key(key)).await)?;
        Ok(match swapped.checked(|_| claim) {
            Checked::Applied(c) => OperatorRelease::Released(c),
            // Changed between our read and the delete: show the operator what is there now.
            Checked::NotOurs(c) => OperatorRelease::Refused(c),
            Checked::Gone => OperatorRelease::Absent,
        })
    }
}
