//! Redis' index of unsettled claims (see `super::super::unsettled` for what it holds and who
//! writes it): reading the due claims through it, taking out the settled and gone ones, and
//! filling it once per deployment with the claims written before it existed.

use super::super::error::ClaimError;
use super::super::key::{StoreKey, CLAIM_SEGMENT};
use super::super::marker::Marker;
use super::super::record::Claim;
use super::{err, escape_glob, text, RedisClaims, READ_SLICE};
use redis::AsyncCommands;
use std::sync::atomic::Ordering;

impl RedisClaims {
    /// The deployment's index of unsettled claims, `<root>store:unsettled`.
    pub(super) fn index_key(&self) -> StoreKey {
        StoreKey::unsettled(&self.root)
    }

    /// Every claim of the deployment in the index with a score up to `now_ms` (Unix
    /// milliseconds), with its record as read: pages of [`READ_SLICE`] members, then their records in
    /// `MGET`s of [`READ_SLICE`] keys. The members whose claim is gone or settled are taken out
    /// (`lua/prune.lua`, judged again in the step that takes them out). The first call of a
    /// deployment fills the index first ([`RedisClaims::fill_index`]).
    ///
    /// A member taken out by another process while the pages are read may move a later one
    /// onto a page already read: that claim is read by the next reconciliation.
    pub(in super::super) async fn unsettled(&self, now_ms: i64) -> Result<Vec<(String, String)>, ClaimError> {
        self.fill_index().await?;
        let index = self.index_key();
        let mut members: Vec<String> = Vec::new();
        loop {
            let page: Vec<String> = redis::cmd("ZRANGE")
                .arg(&index)
                .arg("-inf")
                .arg(now_ms)
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(members.len())
                .arg(READ_SLICE)
                .query_async(&mut self.conn.clone())
                .await
                .map_err(err("read the unsettled claims"))?;
            let full = page.len() == READ_SLICE;
            members.extend(page);
            if !full {
                break;
            }
        }
        let values = self.mget(&members).await?;
        let mut rows = Vec::with_capacity(members.len());
        let mut settled = Vec::new();
        for (member, value) in members.into_iter().zip(values) {
            match value.map(text) {
                Some(raw) if Claim::from_stored(&raw).due().is_some() => rows.push((member, raw)),
                _ => settled.push(member),
            }
        }
        for slice in settled.chunks(READ_SLICE) {
            let mut prune = self.prune.prepare_invoke();
            prune.key(&index);
            for member in slice {
                prune.key(member);
            }
            let _: i64 = prune
                .invoke_async(&mut self.conn.clone())
                .await
                .map_err(err("prune the unsettled claims"))?;
        }
        Ok(rows)
    }

    /// Fills the index with the unsettled claims of the deployment written before it existed
    /// (by an earlier release), once per deployment: unless the deployment's first-start
    /// marker says it was done ([`Marker::unsettled_indexed`]), one `SCAN` of the deployment's
    /// claim keys, their records read in slices, each unsettled one added (`ZADD NX`: a score
    /// the claim step wrote meanwhile is kept), then the marker says so (`lua/mark_indexed.lua`,
    /// keeping its TTL). A store without the marker (never initialised, or one that lost its
    /// data) is filled but not marked: nothing is written to a wiped store, and the fill is
    /// done again until it is seeded. Two processes doing it at once add the same members. A
    /// claim settled between the read and the add leaves a member, taken out by the next
    /// reconciliation that reads it. How many claims it added, when it filled and marked the
    /// index now.
    ///
    /// [`Marker::unsettled_indexed`]: super::super::Marker::unsettled_indexed
    pub(in super::super) async fn fill_index(&self) -> Result<Option<usize>, ClaimError> {
        if self.indexed.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let marker = StoreKey::marker(&self.root);
        let read: Option<String> = self
            .conn
            .clone()
            .get(&marker)
            .await
            .map_err(err("read the first-start marker"))?;
        let done = read
            .as_deref()
            .and_then(|m| serde_json::from_str::<Marker>(m).ok())
            .is_some_and(|m| m.unsettled_indexed);
        if done {
            self.indexed.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        let pattern = format!("{}*{CLAIM_SEGMENT}*", escape_glob(&self.root));
        let keys = self.scan_keys(&pattern).await?;
        let values = self.mget(&keys).await?;
        let due: Vec<(i64, &String)> = keys
            .iter()
            .zip(values)
            .filter_map(|(key, value)| {
                let due = Claim::from_stored(&text(value?)).due()?;
                Some((due.timestamp_millis(), key))
            })
            .collect();
        if !due.is_empty() {
            let index = self.index_key();
            let mut pipe = redis::pipe();
            for slice in due.chunks(READ_SLICE) {
                pipe.cmd("ZADD").arg(&index).arg("NX").arg(slice).ignore();
            }
            let () = pipe
                .query_async(&mut self.conn.clone())
                .await
                .map_err(err("fill the index of unsettled claims"))?;
        }
        let marked: i64 = self
            .mark_indexed
            .key(&marker)
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err("mark the index of unsettled claims filled"))?;
        if marked == 0 {
            self.filled_unmarked.store(read.is_none(), Ordering::Relaxed);
            return Ok(None);
        }
        tracing::info!(
            unsettled = due.len(),
            scanned = keys.len(),
            "indexed the unsettled claims written before this release"
        );
        self.indexed.store(true, Ordering::Relaxed);
        Ok(Some(due.len()))
    }

    /// Whether a first-start marker written now at `marker_of` (a store's prefix) may say the
    /// index of unsettled claims is filled: it is the deployment's marker, and this process
    /// filled the index while the deployment had none (see the field `filled_unmarked`).
    pub(in super::super) fn index_filled_for(&self, marker_of: &str) -> bool {
        marker_of == &*self.root && self.filled_unmarked.load(Ordering::Relaxed)
    }
}
