//! The identity claim: [`ClaimStore::claim_match`] takes a match under every identity it has,
//! in one atomic step of the store (the rule: `rule.rs`), and records on the holder's claim
//! the identities a held sighting gave that it lacked.

use super::error::ClaimError;
use super::outcome::{ClaimToken, MatchClaim, PostIntent};
use super::record::Claim;
use super::request::{Found, IdentityClaim, IdentityReply, NewRecord, Pointer, StoredLookup};
use super::{ttl_secs, ClaimStore};
use crate::cricket::{Facts, Identities, Identity, Lookup, MatchKey};
use std::time::Duration;

impl ClaimStore {
    /// Claims the match `ids` describes under every identity it has, in ONE atomic step on every
    /// store, by the claim rule (`claim/rule.rs`): with `require_marker`, nothing without the
    /// first-start marker ([`MatchClaim::NoMarker`]); else held by the first claim found through
    /// [`Identities::lookups`] ([`MatchClaim::Held`], the sighting's identities then recorded
    /// for it), or won ([`MatchClaim::Won`]), the record stored under [`Identities::key`] and
    /// every identity recorded as ours. Identity pointers live `ttl` and are refreshed with the
    /// claim ([`ClaimStore::holders_touching`]).
    ///
    /// The record says when its owner gives up on the post: `gives_up_after` from now (its
    /// post timeout and margin); past that the claim is stuck for every reader.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the caller must not post.
    pub async fn claim_match(
        &self,
        ids: &Identities,
        title: &str,
        ttl: Duration,
        gives_up_after: Duration,
        require_marker: bool,
    ) -> Result<MatchClaim, ClaimError> {
        self.claim_match_to_post(ids, title, None, ttl, gives_up_after, require_marker)
            .await
    }

    /// As [`ClaimStore::claim_match`], with the post the winner is about to send (`text`, as
    /// rendered before the claim) and the sink's dedupe key for it (Mastodon's
    /// `Idempotency-Key`, Bluesky's record key) stored in the record, at no extra round trip: what settles
    /// an `unknown` or stuck claim later (`claims reconcile`) is whether that post exists. The
    /// record's `claimed_at` is the intent's (without one, the store's clock's now).
    ///
    /// # Errors
    /// As [`ClaimStore::claim_match`].
    pub async fn claim_match_to_post(
        &self,
        ids: &Identities,
        title: &str,
        post: Option<&PostIntent<'_>>,
        ttl: Duration,
        gives_up_after: Duration,
        require_marker: bool,
    ) -> Result<MatchClaim, ClaimError> {
        let aliases: Vec<String> = ids.ids.iter().map(ToString::to_string).collect();
        let claimed_at = match post {
            Some(p) => p.claimed_at,
            None => self.now().await?,
        };
        let mut record = Claim::with_deadline(self.owner(), title, &aliases, claimed_at, Some(gives_up_after));
        record.text = post.map(|p| p.text.to_string());
        record.dedupe_key = post.and_then(|p| p.dedupe_key.map(str::to_string));
        record.reply_to = post.and_then(|p| p.reply_to.cloned());
        let lookups = ids.lookups();
        let request = self.identity_request(ids, &lookups, &record, require_marker, ttl);
        let reply = each!(self, s => s.claim_identities(&request).await)?;
        Ok(match reply {
            IdentityReply::Won { beside } => {
                let key = match (beside, ids.alternate()) {
                    (true, Some(k)) => k,
                    _ => ids.key.clone(),
                };
                MatchClaim::Won(ClaimToken { key, claim: record })
            }
            IdentityReply::NoMarker => MatchClaim::NoMarker,
            IdentityReply::Held(Found {
                index,
                key,
                record,
                facts,
            }) => {
                let key = MatchKey::parse(&key).ok_or_else(|| ClaimError::Protocol {
                    op: "claim",
                    detail: format!("the store answered a holder whose match key is not one: {key:?}"),
                })?;
                let via = lookups
                    .get(index)
                    .map(Lookup::via)
                    .ok_or_else(|| ClaimError::Protocol {
                        op: "claim",
                        detail: format!("the store answered lookup {index} of {}", lookups.len()),
                    })?;
                let claim = self.record_identities(&key, &record, &ids.ids).await?;
                MatchClaim::Held {
                    key,
                    claim,
                    via,
                    facts: facts.map(|f| Facts::from_stored(&f)),
                }
            }
        })
    }

    /// The atomic step a store runs to claim the match `ids` describes (its look-ups
    /// `lookups`), writing `record` when won.
    pub(super) fn identity_request(
        &self,
        ids: &Identities,
        lookups: &[Lookup],
        record: &Claim,
        require_marker: bool,
        ttl: Duration,
    ) -> IdentityClaim {
        IdentityClaim {
            record: NewRecord {
                key: self.key(&ids.key),
                text: record.to_stored(),
                token: record.token.clone(),
                due_ms: record.due().map(|due| due.timestamp_millis()),
            },
            beside: ids.alternate().map(|k| self.key(&k)),
            lookups: lookups.iter().map(|l| self.stored_lookup(l)).collect(),
            pointers: ids
                .ids
                .iter()
                .filter(|i| !i.is_fixture())
                .map(|i| Pointer {
                    key: self.identity_key(i),
                    own: i.is_key_of(&ids.key),
                })
                .collect(),
            rivals: ids.rivals.iter().map(|i| self.identity_key(i)).collect(),
            fixture: ids.fixture().map(|f| self.identity_key(f)),
            facts: ids.facts.map(|f| f.to_stored()),
            marker: require_marker.then(|| self.marker_key()),
            ttl_secs: ttl_secs(ttl),
        }
    }

    /// `lookup` as this store names it.
    pub(super) fn stored_lookup(&self, lookup: &Lookup) -> StoredLookup {
        match lookup {
            Lookup::Key(k) => StoredLookup::Record {
                key: self.key(k),
                compared: true,
            },
            Lookup::Beside(k, _) => StoredLookup::Record {
                key: self.key(k),
                compared: false,
            },
            Lookup::Id(i) => StoredLookup::Pointer {
                key: self.identity_key(i),
                compared: lookup.is_compared(),
            },
            Lookup::Fixture(f) => StoredLookup::Fixture(self.identity_key(f)),
        }
    }

    /// Adds `ids` to the identity list of the record `raw` at `key`, only while the record is
    /// still exactly `raw` (compare-and-swap on the value: the holder may be recording its post
    /// at this moment, and its state must never be overwritten by ours). A record that changed
    /// in between is left alone; the next sighting adds them again. Returns the record as it is.
    async fn record_identities(&self, key: &MatchKey, raw: &str, ids: &[Identity]) -> Result<Claim, ClaimError> {
        let claim = Claim::from_stored(raw);
        let lacks = |claim: &Claim, i: &Identity| !claim.aliases.iter().any(|a| i == a);
        if claim.token.is_empty() || !ids.iter().any(|i| lacks(&claim, i)) {
            return Ok(claim);
        }
        let mut grown = claim.clone();
        for i in ids {
            if lacks(&grown, i) {
                grown.aliases.push(i.to_string());
            }
        }
        let swapped = each!(self, s => s.replace_if_equal(&self.key(key), raw, &grown.to_stored()).await)?;
        Ok(if swapped { grown } else { claim })
    }
}
