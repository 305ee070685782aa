//! What the protocol reads without writing (dry run, operators, the cycle's look-ups of one
//! match): a claim by its key, by any identity of a match, every claim under the prefix (at
//! once, or a page at a time: [`Listing`]), a claim's TTL and failed attempts.

use super::decide::{decide, Decision, NotRead, ReadSoFar};
use super::error::ClaimError;
use super::outcome::ListedClaim;
use super::record::Claim;
use super::request::{entries, Found};
use super::ClaimStore;
use crate::cricket::{Facts, Identities, Identity, MatchKey};
use std::time::Duration;

impl ClaimStore {
    /// Reads the claim on `key` without writing anything (dry run, operators).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek(&self, key: &MatchKey) -> Result<Option<Claim>, ClaimError> {
        let raw = each!(self, s => s.get(&self.key(key)).await)?;
        Ok(raw.as_deref().map(Claim::from_stored))
    }

    /// Reads where a claim on the match `ids` describes may be, as [`ClaimStore::claim_match`]
    /// would find it (the same rule, `decide.rs`, over values read one by one), without
    /// writing anything (dry run, operators): the holder's key, record and the identity that
    /// found it. Not atomic: a read.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn find(&self, ids: &Identities) -> Result<Option<(MatchKey, Claim, Identity)>, ClaimError> {
        let lookups = ids.lookups();
        let probe = Claim::with_deadline(self.owner(), "", &[], self.clock().now(), None);
        let request = self.identity_request(ids, &lookups, &probe, false, Duration::from_secs(1));
        let mut read = ReadSoFar::default();
        let decision = loop {
            match decide(&request, &mut read) {
                Ok(decision) => break decision,
                Err(NotRead(key)) => {
                    let value = each!(self, s => s.get(&key).await)?;
                    read.insert(key, value);
                }
            }
        };
        let Decision::Held(Found { index, key, record, .. }, _) = decision else {
            return Ok(None);
        };
        let (Some(key), Some(via)) = (MatchKey::parse(&key), lookups.get(index)) else {
            return Ok(None);
        };
        Ok(Some((key, Claim::from_stored(&record), via.via())))
    }

    /// The claims listed on `fixture` (a fixture identity), in the order listed, each with
    /// the facts listed for it (as `claims show` prints them): only those whose claim lives.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn fixture_entries(&self, fixture: &Identity) -> Result<Vec<(MatchKey, Facts)>, ClaimError> {
        let Some(list) = each!(self, s => s.get(&self.identity_key(fixture)).await)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (key, facts) in entries(&list) {
            let Some(key) = MatchKey::parse(key) else { continue };
            if self.peek(&key).await?.is_some() {
                out.push((key, Facts::from_stored(facts)));
            }
        }
        Ok(out)
    }

    /// The live claim `identity` leads to, with its key: for a match key as an identity, the
    /// claim stored under that key first; then the claim that recorded the identity. What
    /// operators name a claim by (`claims show`, `claims release`: a match key, a source's id
    /// such as `cricbuzz:158062`, or a key as an identity).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn peek_identity(&self, identity: &Identity) -> Result<Option<(MatchKey, Claim)>, ClaimError> {
        if let Some(key) = identity.key() {
            if let Some(claim) = self.peek(&key).await? {
                return Ok(Some((key, claim)));
            }
        }
        let Some(key) = self.pointer(identity).await? else {
            return Ok(None);
        };
        Ok(self.peek(&key).await?.map(|c| (key, c)))
    }

    /// The key `identity`'s pointer names, if it has a live one naming a match key.
    async fn pointer(&self, identity: &Identity) -> Result<Option<MatchKey>, ClaimError> {
        let target = each!(self, s => s.get(&self.identity_key(identity)).await)?;
        Ok(target.as_deref().and_then(MatchKey::parse))
    }

    /// Failed attempts counted for `key` (see [`ClaimStore::release_failed`]).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn attempts(&self, key: &MatchKey) -> Result<u32, ClaimError> {
        let raw = each!(self, s => s.get(&self.attempts_key(key)).await)?;
        Ok(raw.and_then(|r| r.trim().parse().ok()).unwrap_or(0))
    }

    /// Remaining time to live of the claim on `key`: `None` when there is no claim,
    /// `Some(Duration::MAX)` for a key without expiry (which this bot never writes).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn ttl(&self, key: &MatchKey) -> Result<Option<Duration>, ClaimError> {
        each!(self, s => s.ttl(&self.key(key)).await)
    }

    /// Lists every live claim under this store's prefix, sorted by key.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn list(&self) -> Result<Vec<ListedClaim>, ClaimError> {
        let strip = format!("{}match:", self.prefix());
        let rows = each!(self, s => s.scan(&strip).await)?;
        let mut all: Vec<ListedClaim> = rows
            .into_iter()
            .filter_map(|(k, raw, ttl)| {
                Some(ListedClaim {
                    key: k.strip_prefix(&strip).and_then(MatchKey::parse)?,
                    claim: Claim::from_stored(&raw),
                    ttl,
                })
            })
            .collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(all)
    }

    /// Every live claim under this store's prefix, sorted by key, to be read a page at a time
    /// ([`Listing::next_page`]): only the keys' names are read now (tens of bytes each), the
    /// records page by page, so a reader that stops early (`claims list | head -1`, `--limit`)
    /// reads no more records than it shows, and memory holds one page of records at a time.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn listing(&self) -> Result<Listing<'_>, ClaimError> {
        let strip = format!("{}match:", self.prefix());
        let mut names = each!(self, s => s.scan_names(&strip).await)?;
        // Only names that are match keys are listed (as `list` does), sorted as they are.
        names.retain(|k| k.strip_prefix(&strip).and_then(MatchKey::parse).is_some());
        names.sort_unstable();
        Ok(Listing {
            store: self,
            strip,
            names,
            at: 0,
        })
    }
}

/// The claims of one store a page at a time, in key order (see [`ClaimStore::listing`]).
pub struct Listing<'s> {
    store: &'s ClaimStore,
    /// What each name starts with before its match key (`<prefix>match:`).
    strip: String,
    /// Every live key's name when the listing began, sorted.
    names: Vec<String>,
    /// How many names the pages so far covered.
    at: usize,
}

/// How many claims one page of a [`Listing`] reads (one round trip on Redis: a pipeline of a
/// `GET` and a `TTL` each, in batches of 200).
pub const LIST_PAGE: usize = 500;

impl Listing<'_> {
    /// The match keys listed (live when the listing began; a claim that expired since is left
    /// out of its page), in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.names.iter().filter_map(|n| n.strip_prefix(&self.strip))
    }

    /// The next page of claims, sorted by key (up to [`LIST_PAGE`]; fewer where some expired
    /// since the listing began), or `None` past the last.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the page can be asked for again.
    pub async fn next_page(&mut self) -> Result<Option<Vec<ListedClaim>>, ClaimError> {
        if self.at >= self.names.len() {
            return Ok(None);
        }
        let end = self.names.len().min(self.at + LIST_PAGE);
        let page = self.names[self.at..end].to_vec();
        let store = self.store;
        let rows = each!(store, s => s.read_listed(page).await)?;
        self.at = end;
        let mut claims: Vec<ListedClaim> = rows
            .into_iter()
            .filter_map(|(k, raw, ttl)| {
                Some(ListedClaim {
                    key: k.strip_prefix(&self.strip).and_then(MatchKey::parse)?,
                    claim: Claim::from_stored(&raw),
                    ttl,
                })
            })
            .collect();
        claims.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Some(claims))
    }
}
