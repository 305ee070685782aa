//! Upgrades of a store written by an earlier release: [`ClaimStore::index_identities`] gives
//! every identity a claim kept only inside its record a pointer of its own, so the claim holds
//! its match through every identity as the rule (`rule.rs`) reads them;
//! [`ClaimStore::index_unsettled`] puts its unsettled claims in the index reconciliation reads
//! (`unsettled.rs`).

use super::error::ClaimError;
use super::key::StoreKey;
use super::{ttl_secs, ClaimStore};
use crate::cricket::Identity;
use std::time::Duration;

impl ClaimStore {
    /// Records the identities of every claim written by a release that kept them only inside
    /// its record (`aliases`), so that a store written before identities were recorded still
    /// protects its matches through every edit of their listings. Idempotent and safe beside
    /// running replicas: a pointer is written only where none exists, with the claim's own
    /// remaining TTL. Returns how many pointers were written.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn index_identities(&self) -> Result<usize, ClaimError> {
        let mut written = 0;
        for listed in self.list().await? {
            if listed.claim.token.is_empty() {
                continue;
            }
            let ttl = listed
                .ttl
                .unwrap_or(Duration::from_secs(1))
                .min(Duration::from_secs(u64::MAX / 2));
            let own = Identity::of_key(&listed.key);
            // Its own key needs no pointer: the record is stored under it. The others are
            // written as the record lists them, whatever release wrote them; a fixture's is
            // a list of claims with their facts, written by the claim step only.
            let fixture = |a: &str| Identity::parse(a).is_some_and(|i| i.is_fixture());
            for alias in listed.claim.aliases.iter().filter(|a| own != **a && !fixture(a)) {
                let key = StoreKey::identity(self.prefix(), alias);
                let previous = each!(self, s => s.set_nx(&key, listed.key.as_str(), ttl_secs(ttl)).await)?;
                if previous.is_none() {
                    written += 1;
                }
            }
        }
        Ok(written)
    }

    /// Fills the index of unsettled claims with those of the whole deployment written before
    /// it existed (Redis: one `SCAN` of the deployment's claim keys, once per deployment; see
    /// `unsettled.rs`), as its first reconciliation would: done at start, so that `run`'s
    /// reconciliations only read. Returns how many claims it added, when it filled the index
    /// now; `None` when it was filled already, the store has no first-start marker yet (the
    /// reconciliation after it is written fills it), or the store needs no filling (SQLite and
    /// PostgreSQL keep theirs as part of each row).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn index_unsettled(&self) -> Result<Option<usize>, ClaimError> {
        match self {
            ClaimStore::Redis(s) => s.fill_index().await,
            ClaimStore::Embedded(_) | ClaimStore::Postgres(_) => Ok(None),
        }
    }
}
