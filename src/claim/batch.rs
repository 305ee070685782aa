//! The cycle's batch look-up: the holder of every match a cycle sees, in one read (pipelined
//! `MGET`s across channels on Redis, in rounds of bounded size), the TTLs of the keys due a refresh set again in
//! bounded chunks, and parsing only the records that changed since the last look-up
//! ([`LastRecords`]).

use super::error::ClaimError;
use super::holder::{text_as_bytes, Fingerprint, Holder, Kept, LastRecords, Owners};
use super::key::StoreKey;
use super::{ttl_secs, ClaimStore};
use crate::cricket::{Identity, MatchKey};
use std::time::Duration;

impl ClaimStore {
    /// The [`Holder`] of each of `keys` (`None`: no live claim), in one round trip (Redis: a
    /// pipeline of one `GETEX` per key, or one `MGET`). With `refresh`, each held key's TTL is set to
    /// `refresh` again, as a later sighting must do so a still-listed match never expires into a
    /// second announcement, and so is the TTL of each identity in `touch` (`cricbuzz:158062`,
    /// `key:…`: the identities of the matches looked up), where the identity is recorded, so an
    /// identity lives as long as its claim; without `refresh` nothing is written (dry run).
    ///
    /// Only the records that changed since the look-up `last` remembers are parsed (their
    /// fingerprints compared place by place: the same keys in the same order, as cycle after
    /// cycle looks them up), and `last` then remembers the records this one read, and only those. A record's text
    /// alone decides its holder, so a record read again unchanged (a match posted days ago,
    /// seen every cycle) gives the same holder without being parsed again. What `last`
    /// remembers never decides whether a match is held: the store's answer does.
    ///
    /// This is a read, not a claim: `None` only means "try [`ClaimStore::claim_match`]", whose
    /// atomic write alone decides. A cycle calls this once for every match it sees, so matches
    /// already claimed cost no round trip of their own.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is known about any key (`last`
    /// may remember some records read before the failure, each with its own holder: it only
    /// spares parsing).
    pub async fn holders_touching(
        &self,
        keys: &[&MatchKey],
        touch: &[&Identity],
        refresh: Option<Duration>,
        last: &mut LastRecords,
    ) -> Result<Vec<Option<Holder>>, ClaimError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let stored: Vec<StoreKey> = keys.iter().map(|k| self.key(k)).collect();
        let touched: Vec<StoreKey> = match refresh {
            Some(_) => touch.iter().map(|i| self.identity_key(i)).collect(),
            None => Vec::new(),
        };
        let refresh = refresh.map(ttl_secs);
        let raw: Vec<Option<Vec<u8>>> = match self {
            ClaimStore::Redis(s) => s.get_many(&stored, &touched, refresh).await?,
            ClaimStore::Embedded(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
            ClaimStore::Postgres(s) => text_as_bytes(s.get_many(&stored, &touched, refresh).await?),
        };
        read_holders(raw, keys.len(), last)
    }

    /// Several look-ups at once (one per channel: the same store under each channel's
    /// prefix), each reading every one of its `keys` as [`ClaimStore::holders_touching`] does
    /// without refreshing, and then setting the TTL of its `renew` keys and `touch` identities
    /// (those of them that exist) to its `refresh` ([`ClaimStore::refresh_many`]). On Redis,
    /// when every look-up's store shares one connection, pipelined `MGET`s read them all,
    /// [`READ_ROUND`](super::redis::READ_ROUND) keys a round trip, each round's records read
    /// into holders before the next (so the records' text is never all held at once); elsewhere
    /// they read one after another. Holders per look-up, in order.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then nothing is known about any key (and
    /// some refreshes may not have been made).
    pub async fn holders_across(reads: &mut [BatchRead<'_>]) -> Result<Vec<Vec<Option<Holder>>>, ClaimError> {
        let all_redis = reads.iter().all(|r| matches!(r.store, ClaimStore::Redis(_)));
        let found = match reads.first().map(|r| r.store) {
            // `MGET`s of every key, each named in the command without a `String` of its own,
            // each round's records read into holders before the next round is asked for.
            Some(ClaimStore::Redis(redis)) if all_redis => {
                let mut lookups: Vec<(&str, &[&MatchKey])> = Vec::with_capacity(reads.len());
                let mut readers: Vec<HolderReader<'_>> = Vec::with_capacity(reads.len());
                for r in reads.iter_mut() {
                    let BatchRead { store, keys, last, .. } = r;
                    lookups.push((store.prefix(), keys.as_slice()));
                    readers.push(HolderReader::new(keys.len(), last));
                }
                redis
                    .mget_across(&lookups, &mut |lookup, value| match readers.get_mut(lookup) {
                        Some(reader) => reader.push(value),
                        None => Err(ClaimError::Protocol {
                            op: "peek",
                            detail: format!("a reply for look-up {lookup} of {}", lookups.len()),
                        }),
                    })
                    .await?;
                readers
                    .into_iter()
                    .map(HolderReader::finish)
                    .collect::<Result<Vec<_>, _>>()?
            }
            _ => {
                let mut out = Vec::with_capacity(reads.len());
                for r in reads.iter_mut() {
                    out.push(r.store.holders_touching(&r.keys, &[], None, r.last).await?);
                }
                out
            }
        };
        match reads.first().map(|r| r.store) {
            // Every channel's refreshes in the same pipelines: a slice of a few keys on each of
            // a hundred channels is one round trip, not a hundred.
            Some(ClaimStore::Redis(redis)) if all_redis => refresh_across(redis, reads).await?,
            _ => {
                for r in reads.iter() {
                    if let Some(ttl) = r.refresh {
                        r.store.refresh_many(&r.renew, &r.touch, ttl).await?;
                    }
                }
            }
        }
        Ok(found)
    }

    /// Sets the TTL of each of `keys` and of each identity in `touch` to `ttl`, where it is
    /// held (an absent key stays absent), in chunks of at most 1,000 (`REFRESH_CHUNK`) (Redis: one
    /// pipeline of `EXPIRE`s a chunk, replies ignored), so that what it holds in memory is
    /// bounded whatever the number of keys. What a later sighting owes a still-listed match, so
    /// it never expires into a second announcement; an identity lives as long as its claim.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; the chunks before were made.
    pub async fn refresh_many(&self, keys: &[&MatchKey], touch: &[&Identity], ttl: Duration) -> Result<(), ClaimError> {
        let ttl = ttl_secs(ttl);
        let total = keys.len() + touch.len();
        let mut chunk: Vec<StoreKey> = Vec::with_capacity(REFRESH_CHUNK.min(total));
        // By position, not an iterator of closures held across the awaits (a future holding one
        // is not `Send` for every lifetime, which a spawned cycle needs).
        let mut at = 0;
        while at < total {
            chunk.clear();
            for i in at..total.min(at + REFRESH_CHUNK) {
                chunk.push(match keys.get(i) {
                    Some(k) => self.key(k),
                    None => self.identity_key(touch[i - keys.len()]),
                });
            }
            at += chunk.len();
            match self {
                ClaimStore::Redis(s) => s.expire_each(&chunk, ttl).await?,
                // Read and refreshed: the SQL stores' batch of a held key's TTL and an
                // identity's (`touch`) differ only in that the first reads the record back.
                ClaimStore::Embedded(s) => drop(s.get_many(&[], &chunk, Some(ttl)).await?),
                ClaimStore::Postgres(s) => drop(s.get_many(&[], &chunk, Some(ttl)).await?),
            }
        }
        Ok(())
    }
}

/// The refreshes of every look-up of `reads` (each on its own store, Redis sharing `redis`'s
/// connection), in pipelines of at most [`REFRESH_CHUNK`] `EXPIRE`s across look-ups (a
/// pipeline is flushed early where the TTL changes from one look-up to the next).
///
/// # Errors
/// [`ClaimError`] when the store cannot answer; the pipelines before were sent.
async fn refresh_across(redis: &super::redis::RedisClaims, reads: &[BatchRead<'_>]) -> Result<(), ClaimError> {
    let mut chunk: Vec<StoreKey> = Vec::new();
    let mut chunk_ttl = None;
    for r in reads {
        let Some(ttl) = r.refresh.map(ttl_secs) else {
            continue;
        };
        let names = r
            .renew
            .iter()
            .map(|k| r.store.key(k))
            .chain(r.touch.iter().map(|i| r.store.identity_key(i)));
        for name in names {
            if chunk.len() >= REFRESH_CHUNK || chunk_ttl.is_some_and(|t| t != ttl) {
                redis.expire_each(&chunk, chunk_ttl.unwrap_or(ttl)).await?;
                chunk.clear();
            }
            chunk_ttl = Some(ttl);
            chunk.push(name);
        }
    }
    if let Some(ttl) = chunk_ttl {
        redis.expire_each(&chunk, ttl).await?;
    }
    Ok(())
}

/// The most keys one refresh round trip sets the TTL of ([`ClaimStore::refresh_many`]): on
/// Redis a pipeline of this many `EXPIRE`s (each O(1)), so a first look-up over 100,000 keys
/// holds one chunk's commands in memory at a time, not all of them.
pub(super) const REFRESH_CHUNK: usize = 1_000;

/// One look-up of a batch across channels (see [`ClaimStore::holders_across`]).
pub struct BatchRead<'a> {
    /// The store (a channel's) to read.
    pub store: &'a ClaimStore,
    /// The keys to read.
    pub keys: Vec<&'a MatchKey>,
    /// The keys whose TTL to set again, where held (only with `refresh`): those of `keys` due
    /// a refresh.
    pub renew: Vec<&'a MatchKey>,
    /// The identities whose TTL to set again with them (only with `refresh`).
    pub touch: Vec<&'a Identity>,
    /// The TTL to set again on `renew` and `touch`; `None`: nothing is written (dry run).
    pub refresh: Option<Duration>,
    /// The records this look-up read last time (see [`ClaimStore::holders_touching`]).
    pub last: &'a mut LastRecords,
}

/// The holders of one look-up's raw values (`expected` of them), reusing what `last` parsed
/// (see [`HolderReader`]).
fn read_holders(
    raw: Vec<Option<Vec<u8>>>,
    expected: usize,
    last: &mut LastRecords,
) -> Result<Vec<Option<Holder>>, ClaimError> {
    let mut reader = HolderReader::new(expected, last);
    for value in raw {
        reader.push(value)?;
    }
    reader.finish()
}

/// Reads one look-up's raw values into holders one by one as they arrive, reusing what `last`
/// parsed: a record whose fingerprint equals that of the one the last look-up read at the same
/// place gives the same holder without being parsed again (a record's text alone decides its
/// holder; nearly every record of a held cycle is unchanged). `last` then holds this look-up's
/// records' fingerprints alone: what the next one can reuse. A value is dropped once read, so a
/// reader holds holders, never the records' text.
struct HolderReader<'l> {
    expected: usize,
    last: &'l mut LastRecords,
    owners: Owners,
    holders: Vec<Option<Holder>>,
}

impl<'l> HolderReader<'l> {
    fn new(expected: usize, last: &'l mut LastRecords) -> Self {
        // Updated in place: the next look-up of a held cycle keeps nearly every entry as it is.
        last.0.resize_with(expected, || None);
        HolderReader {
            expected,
            last,
            owners: Owners::default(),
            holders: Vec::with_capacity(expected),
        }
    }

    /// The next value, in the order of the look-up's keys.
    ///
    /// # Errors
    /// [`ClaimError::Protocol`] when it is one more than the look-up read.
    fn push(&mut self, value: Option<Vec<u8>>) -> Result<(), ClaimError> {
        let Some(slot) = self.last.0.get_mut(self.holders.len()) else {
            return Err(self.miscounted(self.holders.len() + 1));
        };
        let holder = match value {
            None => {
                *slot = None;
                None
            }
            Some(r) => {
                let fingerprint = Fingerprint::of(&r);
                if !matches!(slot, Some(known) if known.fingerprint == fingerprint) {
                    *slot = Some(Kept {
                        // A value that is not UTF-8 is no record of ours; read lossily, it
                        // gives (as any foreign value) an unreadable record, not an error for
                        // the batch.
                        holder: Holder::from_stored(&String::from_utf8_lossy(&r), &mut self.owners),
                        fingerprint,
                    });
                }
                slot.as_ref().map(|known| known.holder.clone())
            }
        };
        self.holders.push(holder);
        Ok(())
    }

    /// The holders, in the order of the look-up's keys.
    ///
    /// # Errors
    /// [`ClaimError::Protocol`] when fewer values came than the look-up read.
    fn finish(self) -> Result<Vec<Option<Holder>>, ClaimError> {
        if self.holders.len() == self.expected {
            Ok(self.holders)
        } else {
            Err(self.miscounted(self.holders.len()))
        }
    }

    fn miscounted(&self, replies: usize) -> ClaimError {
        ClaimError::Protocol {
            op: "peek",
            detail: format!("{replies} replies to {} reads", self.expected),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::{Claim, ClaimState};
    use super::*;
    use chrono::Utc;

    #[test]
    fn a_record_changed_in_place_to_one_of_the_same_length_is_read_again() {
        let mut claim = Claim::with_deadline("host:1", "A v B", &["cricbuzz:1".into()], Utc::now(), None);
        claim.state = ClaimState::Posted;
        let posted = claim.to_stored();
        claim.state = ClaimState::Failed;
        let failed = claim.to_stored();
        assert_eq!(posted.len(), failed.len(), "the change this test is about");
        let mut last = LastRecords::default();
        let read = |raw: &str, last: &mut LastRecords| {
            read_holders(vec![Some(raw.as_bytes().to_vec()), None], 2, last).unwrap()
        };
        let first = read(&posted, &mut last);
        assert_eq!(first[0].as_ref().map(|h| h.state), Some(ClaimState::Posted));
        // Unchanged: the holder the last look-up parsed.
        assert_eq!(read(&posted, &mut last), first);
        let again = read(&failed, &mut last);
        assert_eq!(again[0].as_ref().map(|h| h.state), Some(ClaimState::Failed));
        assert_eq!(again[1], None);
        assert_eq!(last.len(), 1);
    }
}
