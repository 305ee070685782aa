//! What a claim's winner does with its token: record what became of the post (a state change,
//! compare-and-set on the token), release the claim (compare-and-delete), count a failed
//! attempt, and keep a held claim alive (its TTL).

use super::error::ClaimError;
use super::outcome::{Checked, ClaimToken, Released, Transition};
use super::record::Claim;
use super::{ttl_secs, ClaimStore};
use crate::cricket::MatchKey;
use std::time::Duration;

impl ClaimStore {
    /// Moves our claim to a new state, only while it still carries `token`, keeping its TTL.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn transition(&self, token: &ClaimToken, change: &Transition) -> Result<Checked, ClaimError> {
        let new = change.apply(token.claim.clone(), self.now().await?);
        let swapped =
            each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
        Ok(swapped.checked(|_| new))
    }

    /// Deletes our claim, only while it still carries `token` (compare-and-delete), so the match
    /// may be claimed again.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        let swapped = each!(self, s => s.compare_and_delete(&self.key(&token.key), &token.claim.token).await)?;
        Ok(swapped.checked(|before| Claim::from_stored(&before)))
    }

    /// After a failure that proves nothing was posted: counts the attempt (in a counter that
    /// survives the release and lives `ttl`), then releases the claim, or, once `max_attempts`
    /// failures are counted, records `failed` with `reason` so the match is not tried again.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn release_failed(
        &self,
        token: &ClaimToken,
        reason: &str,
        max_attempts: u32,
        ttl: Duration,
    ) -> Result<Released, ClaimError> {
        let attempts = each!(self, s => s.incr(&self.attempts_key(&token.key), ttl_secs(ttl)).await)?;
        let attempts = u32::try_from(attempts).unwrap_or(u32::MAX);
        if attempts >= max_attempts {
            let change = Transition::Failed {
                reason: format!("gave up after {attempts} attempts: {reason}"),
            };
            let mut new = change.apply(token.claim.clone(), self.now().await?);
            new.attempts = Some(attempts);
            let swapped =
                each!(self, s => s.compare_and_set(&self.key(&token.key), &token.claim.token, &new.to_stored()).await)?;
            return Ok(match swapped.checked(|_| new) {
                Checked::Applied(c) => Released::GaveUp(c),
                Checked::NotOurs(c) => Released::NotOurs(c),
                Checked::Gone => Released::Gone,
            });
        }
        Ok(match self.release(token).await? {
            Checked::Applied(_) => Released::Released { attempts },
            Checked::NotOurs(c) => Released::NotOurs(c),
            Checked::Gone => Released::Gone,
        })
    }

    /// Sets the TTL of an existing claim on `key` to `ttl`, without changing the record.
    /// Returns `false` when there is no claim to refresh.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn refresh(&self, key: &MatchKey, ttl: Duration) -> Result<bool, ClaimError> {
        each!(self, s => s.expire(&self.key(key), ttl_secs(ttl)).await)
    }
}
