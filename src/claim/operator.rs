//! What is done to a claim by someone other than its winner, each by compare-and-set on the
//! token read: an operator's release (`claims release`), and `claims reconcile` settling a
//! claim with what the platform says or taking it to repeat its post. Taking a claim from its
//! owner (a release of a stuck claim, a repeat) is judged by the store's clock in the step
//! that takes it ([`Window`]), and the times written are the store's: a replica's own clock,
//! however far off, takes nothing early.

use super::error::ClaimError;
use super::outcome::{Adoption, Checked, ClaimToken, OperatorRelease, Transition};
use super::record::{later_by, new_token, Claim, ClaimState, Replay};
use super::request::Swapped;
use super::window::Window;
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
        let new = change.apply(read.clone(), self.now().await?);
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
    /// The store takes it only while its clock reads inside `window` (the platform's bounds on
    /// a repeat, e.g. Mastodon's) and, for a `claimed` record, once it is stuck (its owner's
    /// deadline, or `lease` after its claim for a record without one), and once another
    /// reconciler's lease has ended; judged in the same step as the compare-and-set.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing was written.
    pub async fn adopt_for_replay(
        &self,
        key: &MatchKey,
        read: &Claim,
        lease: Duration,
        window: Window,
    ) -> Result<Adoption, ClaimError> {
        if read.token.is_empty() {
            return Ok(Adoption::NotARecord);
        }
        let now = self.now().await?;
        let mut new = read.clone();
        new.token = new_token();
        new.replay = Some(Replay {
            by: self.owner().to_string(),
            until: later_by(now, lease),
        });
        let from = [
            window.from,
            (read.state == ClaimState::Claimed).then(|| read.stuck_at(lease)),
            read.replay.as_ref().map(|r| r.until),
        ]
        .into_iter()
        .flatten()
        .max();
        let window = Window { from, ..window };
        let swapped =
            each!(self, s => s.compare_and_set_within(&self.key(key), &read.token, &new.to_stored(), window).await)?;
        Ok(match swapped {
            Swapped::Applied(_) => Adoption::Adopted(ClaimToken {
                key: key.clone(),
                claim: new,
            }),
            Swapped::NotOurs(now) => Adoption::Changed(Claim::from_stored(&now)),
            Swapped::NotNow(now) => Adoption::NotNow(Claim::from_stored(&now)),
            Swapped::Gone => Adoption::Gone,
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
        // A `claimed` record is released (unforced) only once stuck, as the store's clock tells
        // in the step that deletes it: a healthy owner may still be posting.
        let window = match claim.state {
            ClaimState::Claimed if !force => Window {
                from: Some(claim.stuck_at(stuck_after) + chrono::TimeDelta::microseconds(1)),
                until: None,
            },
            ClaimState::Unknown | ClaimState::Failed => Window::ANY,
            _ if force => Window::ANY,
            _ => return Ok(OperatorRelease::Refused(claim)),
        };
        let swapped = each!(self, s => s.compare_and_delete_within(&self.key(key), &claim.token, window).await)?;
        if let Swapped::NotNow(c) = swapped {
            // Not stuck yet by the store's clock: nothing deleted, the counter stays too.
            return Ok(OperatorRelease::Refused(Claim::from_stored(&c)));
        }
        each!(self, s => s.delete(&self.attempts_key(key)).await)?;
        Ok(match swapped.checked(|_| claim) {
            Checked::Applied(c) => OperatorRelease::Released(c),
            // Changed between our read and the delete: show the operator what is there now.
            Checked::NotOurs(c) => OperatorRelease::Refused(c),
            Checked::Gone => OperatorRelease::Absent,
        })
    }
}
