//! The Redis backend: each primitive is one atomic Redis command or Lua script.
//!
//! Documentation: <https://redis.io/docs/latest/commands/set/> (`NX` + `GET` together need
//! Redis 7.0; the reply is nil when the key was set, else the old value, which is how a loser
//! learns the holder in the same round trip).

use super::error::ClaimError;
use super::key::{RecordName, StoreKey};
use super::record::Claim;
use super::redis_conn::{self, Deployment, RedisConn, SentinelConn, SENTINEL_SCHEMES};
use super::request::{Found, IdentityClaim, IdentityReply, StoredLookup, Swapped};
use super::window::Window;
use crate::clock::Clock;
use crate::cricket::{facts, MatchKey};
use chrono::{DateTime, Utc};
use redis::aio::ConnectionManager;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};
use redis::{AsyncCommands, ExistenceCheck, Script, SetExpiry, SetOptions};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

mod unsettled;

/// How long one Redis command may take before it is an error (not "claimed", not "free").
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long connecting to Redis may take.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest wait between reconnection attempts, milliseconds.
pub(super) const MAX_RECONNECT_DELAY_MS: u64 = 2_000;
/// The most keys one command names when the bot reads many (`MGET`, a page of the index of
/// unsettled claims, `ZADD`/`ZREM` of it): a longer command holds Redis, which serves no other
/// client meanwhile, for longer. `MGET` costs about 1 µs per key (issue 36: 101 ms for 100,000
/// keys, 649 ms for 500,000), so a slice holds it about a millisecond; the slices of one read go
/// in one pipeline, one round trip.
pub const READ_SLICE: usize = 1_000;

/// The most keys one round trip of a batch read across channels asks for
/// ([`READ_SLICE`]-key `MGET`s, pipelined): the replies of one round (~25 MB at ~500 bytes a
/// record) are all the read holds at once, and a round trip on loopback costs well under a
/// millisecond next to the round's ~50 ms of Redis time.
pub const READ_ROUND: usize = 50 * READ_SLICE;

/// What to ask of Redis beyond its URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisOptions {
    /// `REDIS_CA_FILE`: PEM file of the CAs that sign the server's certificate (`rediss://`);
    /// without it, the system's roots.
    pub ca_file: Option<std::path::PathBuf>,
    /// `REDIS_EVICTION_POLICY_ASSERTED=noeviction`: where `CONFIG` is disabled, the operator
    /// vouches that Redis never evicts keys (see `super::durability`).
    pub eviction_policy_asserted: bool,
    /// `CLAIM_MIN_REPLICAS`: replicas that must acknowledge a won claim (`WAIT`) before the
    /// winner may post (see `super::durability`).
    pub min_replicas: Option<u32>,
}

/// Claims held in Redis under a key prefix. Cheap to clone: clones share one connection,
/// which reconnects by itself (with backoff) after Redis restarts, and follows a cluster's slots
/// or Sentinel's failovers (see `super::redis_conn`).
#[derive(Clone)]
pub struct RedisClaims {
    conn: RedisConn,
    prefix: Arc<str>,
    /// The deployment's prefix (`KEY_PREFIX`, hash-tagged on a cluster), which every channel's
    /// prefix starts with: where its index of unsettled claims lives (`unsettled.rs`).
    root: Arc<str>,
    /// Whether this process saw the index of unsettled claims filled with the claims of
    /// earlier releases (its marker): then it no longer asks.
    indexed: Arc<AtomicBool>,
    /// Whether this process filled the index on a deployment without a first-start marker
    /// (`unsettled.rs`): every claim then in the store is in the index, and an earlier
    /// release's process cannot claim before a marker exists, so the marker this process
    /// writes next may say the index is filled (no later start scans a fresh deployment).
    filled_unmarked: Arc<AtomicBool>,
    owner: Arc<str>,
    /// The clock this store's records are written and judged by (see [`Clock`]).
    clock: Clock,
    compare_and_set: Arc<Script>,
    compare_and_delete: Arc<Script>,
    claim_match: Arc<Script>,
    replace: Arc<Script>,
    /// Takes settled or gone claims out of the index of unsettled ones (`lua/prune.lua`).
    prune: Arc<Script>,
    /// Says in the first-start marker that the index of unsettled claims holds the claims of
    /// earlier releases (`lua/mark_indexed.lua`).
    mark_indexed: Arc<Script>,
    /// `TIME`, run as a script on a key of this prefix: on a cluster it reaches the node that
    /// holds the prefix's slot, whose clock the claim scripts judge by.
    time: Arc<Script>,
    /// See [`RedisOptions::min_replicas`].
    min_replicas: Option<u32>,
}

fn err(op: &'static str) -> impl FnOnce(redis::RedisError) -> ClaimError {
    move |source| ClaimError::Redis { op, source }
}

impl RedisClaims {
    /// Connects to `url` (`redis://[:password@]host:port/db`, a cluster node's URL, or a
    /// `redis+sentinel://` URL: see `super::redis_conn`) and checks that it answers.
    ///
    /// `prefix` is prepended to every key (on a cluster, as a hash tag: see
    /// [`redis_conn::cluster_prefix`]); `owner` names this instance in the records it writes.
    ///
    /// # Errors
    /// [`ClaimError::Redis`] when the URL is invalid or the server cannot be reached;
    /// [`ClaimError::Setting`] when a Sentinel URL or, on a cluster, the prefix cannot be used.
    pub async fn connect(url: &str, prefix: &str, owner: &str) -> Result<RedisClaims, ClaimError> {
        RedisClaims::connect_with(url, prefix, owner, &RedisOptions::default()).await
    }

    /// As [`RedisClaims::connect`], with `options`: a `rediss://` URL (TLS, rustls) verifies the
    /// server against `options.ca_file`, or else the system's roots.
    ///
    /// # Errors
    /// [`ClaimError::Tls`] when the CA file cannot be used; otherwise as
    /// [`RedisClaims::connect`].
    pub async fn connect_with(
        url: &str,
        prefix: &str,
        owner: &str,
        options: &RedisOptions,
    ) -> Result<RedisClaims, ClaimError> {
        super::tls::install_default_provider();
        let (conn, prefix) = if SENTINEL_SCHEMES.iter().any(|s| url.starts_with(s))
            || url.starts_with("rediss+sentinel://")
            || url.starts_with("valkeys+sentinel://")
        {
            let config = redis::AsyncConnectionConfig::new()
                .set_connection_timeout(Some(CONNECT_TIMEOUT))
                .set_response_timeout(Some(RESPONSE_TIMEOUT));
            let conn = match SentinelConn::connect(url, config).await {
                Ok(conn) => conn,
                Err(Ok(bad)) => return Err(ClaimError::Setting(bad.to_string())),
                Err(Err(e)) => return Err(err("connect through Sentinel")(e)),
            };
            (RedisConn::Sentinel(conn), prefix.to_string())
        } else {
            let certificates = match &options.ca_file {
                Some(path) => Some(redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(super::tls::read_ca_file("REDIS_CA_FILE", path)?),
                }),
                None => None,
            };
            let client = match &certificates {
                Some(certificates) => redis::Client::build_with_tls(url, certificates.clone()),
                None => redis::Client::open(url),
            }
            .map_err(err("connect"))?;
            let config = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(Some(CONNECT_TIMEOUT))
                .set_response_timeout(Some(RESPONSE_TIMEOUT))
                .set_number_of_retries(2)
                .set_max_delay(Duration::from_millis(MAX_RECONNECT_DELAY_MS));
            let mut single = ConnectionManager::new_with_config(client.clone(), config)
                .await
                .map_err(err("connect"))?;
            if cluster_enabled(&mut single).await {
                let prefix = redis_conn::cluster_prefix(prefix).map_err(|e| ClaimError::Setting(e.to_string()))?;
                let mut builder = redis::cluster::ClusterClient::builder(vec![client.get_connection_info().clone()])
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(RESPONSE_TIMEOUT)
                    .retries(2)
                    .max_retry_wait(MAX_RECONNECT_DELAY_MS);
                if let Some(certificates) = certificates {
                    builder = builder.certs(certificates);
                }
                let cluster = builder
                    .build()
                    .map_err(err("connect to the cluster"))?
                    .get_async_connection()
                    .await
                    .map_err(err("connect to the cluster"))?;
                (RedisConn::Cluster(cluster), prefix)
            } else {
                (RedisConn::Single(single), prefix.to_string())
            }
        };
        Ok(RedisClaims {
            conn,
            root: prefix.as_str().into(),
            indexed: Arc::new(AtomicBool::new(false)),
            filled_unmarked: Arc::new(AtomicBool::new(false)),
            prefix: prefix.into(),
            owner: owner.into(),
            clock: Clock::system(),
            compare_and_set: Arc::new(Script::new(include_str!("lua/transition.lua"))),
            compare_and_delete: Arc::new(Script::new(include_str!("lua/release.lua"))),
            claim_match: Arc::new(Script::new(CLAIM_MATCH)),
            replace: Arc::new(Script::new(include_str!("lua/replace.lua"))),
            prune: Arc::new(Script::new(include_str!("lua/prune.lua"))),
            mark_indexed: Arc::new(Script::new(include_str!("lua/mark_indexed.lua"))),
            time: Arc::new(Script::new("return redis.call('TIME')")),
            min_replicas: options.min_replicas,
        })
    }

    /// Which kind of Redis deployment this is.
    pub fn deployment(&self) -> Deployment {
        self.conn.deployment()
    }

    /// The key prefix in use: `KEY_PREFIX`, or on a cluster its hash-tagged form.
    pub fn key_prefix(&self) -> &str {
        &self.prefix
    }

    /// The same connection under another key prefix (see [`super::ClaimStore::for_channel`]).
    pub(super) fn with_prefix(&self, prefix: String) -> RedisClaims {
        RedisClaims {
            prefix: prefix.into(),
            ..self.clone()
        }
    }

    pub(super) fn prefix(&self) -> &str {
        &self.prefix
    }

    pub(super) fn owner(&self) -> &str {
        &self.owner
    }

    pub(super) fn with_clock(&self, clock: Clock) -> RedisClaims {
        RedisClaims { clock, ..self.clone() }
    }

    pub(super) fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// `SET key value NX EX ttl GET`: `None` when we set it, else the value that was there
    /// ([`FOREIGN_TYPE`] when it is not a string: it is held, by something else).
    pub(super) async fn set_nx(
        &self,
        key: &StoreKey,
        value: &str,
        ttl_secs: u64,
    ) -> Result<Option<String>, ClaimError> {
        let options = SetOptions::default()
            .conditional_set(ExistenceCheck::NX)
            .get(true)
            .with_expiration(SetExpiry::EX(ttl_secs));
        let old = value_or_foreign(self.conn.clone().set_options(key, value, options).await).map_err(err("claim"))?;
        Ok(old.map(text))
    }

    /// The values of `keys`, in order, in one round trip, as bytes: a value that is not UTF-8
    /// (not written by this bot) must not fail the reading of every other key. With
    /// `refresh_secs`, one pipelined `GETEX key EX ttl` per key (the value, and its TTL set
    /// again in the same command; nothing happens to an absent key); without, `MGET`s of at
    /// most [`READ_SLICE`] keys in one pipeline (a read of many keys per command, less than half the
    /// server's and client's work of a pipeline of one command per key; it answers nil for a key
    /// of another type).
    /// `GETEX` needs Redis 6.2 (<https://redis.io/docs/latest/commands/getex/>); the claim itself
    /// already needs 7.0.
    /// With `refresh_secs`, each of `touch` gets `EXPIRE key ttl` in the same pipeline (its
    /// reply ignored): an absent key is left absent.
    pub(super) async fn get_many(
        &self,
        keys: &[StoreKey],
        touch: &[StoreKey],
        refresh_secs: Option<u64>,
    ) -> Result<Vec<Option<Vec<u8>>>, ClaimError> {
        let Some(ttl) = refresh_secs else {
            return self.mget(keys).await;
        };
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.cmd("GETEX").arg(key).arg("EX").arg(ttl);
        }
        for key in touch {
            pipe.cmd("EXPIRE").arg(key).arg(ttl).ignore();
        }
        match pipe.query_async(&mut self.conn.clone()).await {
            Ok(values) => Ok(values),
            // One key holds another type, which fails the whole pipeline: key by key instead,
            // so every other claim is still read and refreshed.
            Err(e) if wrong_type(&e) => {
                let mut out = Vec::with_capacity(keys.len());
                for key in keys {
                    let read = redis::cmd("GETEX")
                        .arg(key)
                        .arg("EX")
                        .arg(ttl)
                        .query_async(&mut self.conn.clone())
                        .await;
                    out.push(value_or_foreign(read).map_err(err("peek"))?);
                }
                for key in touch {
                    self.expire(key, ttl).await?;
                }
                Ok(out)
            }
            Err(e) => Err(err("peek")(e)),
        }
    }

    /// Sets the TTL of each of `keys` to `ttl_secs` where it exists (an absent key stays
    /// absent), in ONE pipeline of `EXPIRE`s, their replies ignored: a batch of refreshes (see
    /// [`super::ClaimStore::refresh_many`], which bounds its size). `EXPIRE` works on a key of
    /// any type, so no foreign value fails the batch.
    pub(super) async fn expire_each(&self, keys: &[StoreKey], ttl_secs: u64) -> Result<(), ClaimError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.cmd("EXPIRE").arg(key).arg(ttl_secs).ignore();
        }
        pipe.query_async::<()>(&mut self.conn.clone())
            .await
            .map_err(err("refresh"))
    }

    /// The values of several look-ups' keys (`lookups`: each a store's key prefix and its match
    /// keys), in order, handed to `each` with the look-up's index as they arrive (a key of
    /// another type reads as nil): `MGET`s of at most [`READ_SLICE`] keys, pipelined
    /// [`READ_ROUND`] keys to a round trip, each key's name written straight into the command
    /// from its parts. Only one round's replies are held at a time, so what a read of every
    /// channel's keys holds in memory is bounded by the round, not by channels × keys (issue 36:
    /// one pipeline of 2,000,000 keys held ~1 GB of replies at once).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer, or from `each`; the values before were
    /// handed over.
    pub(super) async fn mget_across(
        &self,
        lookups: &[(&str, &[&MatchKey])],
        each: &mut (dyn FnMut(usize, Option<Vec<u8>>) -> Result<(), ClaimError> + Send),
    ) -> Result<(), ClaimError> {
        // By position (look-up, key), not an iterator held across the awaits (a future holding
        // one is not `Send` for every lifetime, which a spawned cycle needs).
        let (mut lookup, mut at) = (0, 0);
        let mut slice: Vec<RecordName<'_>> = Vec::with_capacity(READ_SLICE);
        let mut owners: Vec<usize> = Vec::with_capacity(READ_ROUND);
        loop {
            let mut pipe = redis::pipe();
            owners.clear();
            while owners.len() < READ_ROUND {
                slice.clear();
                while slice.len() < READ_SLICE {
                    let Some((prefix, keys)) = lookups.get(lookup) else {
                        break;
                    };
                    let Some(key) = keys.get(at) else {
                        (lookup, at) = (lookup + 1, 0);
                        continue;
                    };
                    slice.push(RecordName {
                        prefix,
                        key: key.as_str(),
                    });
                    owners.push(lookup);
                    at += 1;
                }
                if slice.is_empty() {
                    break;
                }
                pipe.cmd("MGET").arg(&slice[..]);
            }
            // Nothing (more) to read: no round trip (MGET needs a key).
            if owners.is_empty() {
                return Ok(());
            }
            let slices: Vec<Vec<Option<Vec<u8>>>> =
                pipe.query_async(&mut self.conn.clone()).await.map_err(err("peek"))?;
            let values = slices.into_iter().flatten();
            let mut answered = 0;
            for (value, &owner) in values.zip(owners.iter()) {
                each(owner, value)?;
                answered += 1;
            }
            if answered != owners.len() {
                return Err(ClaimError::Protocol {
                    op: "peek",
                    detail: format!("{answered} replies to {} reads", owners.len()),
                });
            }
        }
    }

    /// The values of `keys`, in order, as bytes (nil for a key of another type): `MGET`s of at
    /// most [`READ_SLICE`] keys, in one pipeline, so that no one command holds Redis long however
    /// many keys are read, in one round trip.
    pub(super) async fn mget<K: redis::ToRedisArgs>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>, ClaimError> {
        // Nothing to read: no round trip (MGET needs a key).
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for slice in keys.chunks(READ_SLICE) {
            pipe.cmd("MGET").arg(slice);
        }
        let slices: Vec<Vec<Option<Vec<u8>>>> = pipe.query_async(&mut self.conn.clone()).await.map_err(err("peek"))?;
        Ok(slices.into_iter().flatten().collect())
    }

    /// The claim of a match under all its identities: one Lua script (`lua/claim_match.lua`),
    /// which Redis runs atomically: the claim rule (`rule.rs`), step by step.
    pub(super) async fn claim_identities(&self, c: &IdentityClaim) -> Result<IdentityReply, ClaimError> {
        let ours = &c.record.key;
        let mut keys: Vec<&StoreKey> = vec![ours, c.marker.as_ref().unwrap_or(ours)];
        let mut kinds = String::with_capacity(c.lookups.len());
        for l in &c.lookups {
            let (kind, key) = match l {
                StoredLookup::Record { key, compared: true } => ('r', key),
                StoredLookup::Record { key, compared: false } => ('b', key),
                StoredLookup::Pointer { key, compared: false } => ('s', key),
                StoredLookup::Pointer { key, compared: true } => ('k', key),
                StoredLookup::Fixture(key) => ('f', key),
            };
            kinds.push(kind);
            keys.push(key);
        }
        keys.extend(c.pointers.iter().map(|p| &p.key));
        keys.extend(&c.rivals);
        keys.extend(&c.fixture);
        keys.extend(&c.beside);
        let index = self.index_key();
        keys.push(&index);
        let (ttl, lookups, record_prefix) = (c.ttl_secs.to_string(), c.lookups.len().to_string(), c.record_key_of(""));
        let (pointers, rivals) = (c.pointers.len().to_string(), c.rivals.len().to_string());
        let lists = StoreKey::identity(c.prefix(), "fixture:");
        let tolerances = [facts::CLOSE, facts::DAY, facts::EAST, facts::WEST].map(|t| t.to_string());
        let due = c.record.due_ms.map(|due| due.to_string()).unwrap_or_default();
        let args: [&str; 19] = [
            &c.record.text,
            &ttl,
            if c.marker.is_some() { "1" } else { "0" },
            &lookups,
            &kinds,
            record_prefix.as_str(),
            c.match_key(),
            c.own_pointer().map_or("", StoreKey::as_str),
            &pointers,
            &rivals,
            c.facts.as_deref().unwrap_or(""),
            if c.fixture.is_some() { "1" } else { "0" },
            c.beside.as_ref().and_then(StoreKey::match_key).unwrap_or(""),
            lists.as_str(),
            &tolerances[0],
            &tolerances[1],
            &tolerances[2],
            &tolerances[3],
            &due,
        ];
        let reply: Vec<redis::Value> = match self.min_replicas {
            None => {
                let mut call = self.claim_match.prepare_invoke();
                for k in &keys {
                    call.key(*k);
                }
                for a in &args {
                    call.arg(a);
                }
                call.invoke_async(&mut self.conn.clone()).await.map_err(err("claim"))?
            }
            Some(wanted) => {
                // `CLAIM_MIN_REPLICAS`: the script, then `WAIT` (how many replicas acknowledged
                // every write this connection made up to it), in one pipeline, so both go down
                // one connection: a `WAIT` sent on a connection made after a reconnect would
                // count acknowledgements of nothing. `EVAL` with the source, as a pipeline cannot
                // reload a script the server lost.
                // Documentation: <https://redis.io/docs/latest/commands/wait/>.
                let mut pipe = redis::pipe();
                pipe.cmd("EVAL")
                    .arg(CLAIM_MATCH)
                    .arg(keys.len())
                    .arg(&keys)
                    .arg(&args[..]);
                pipe.cmd("WAIT")
                    .arg(wanted)
                    .arg(u64::try_from(super::REPLICA_ACK_TIMEOUT.as_millis()).unwrap_or(u64::MAX));
                let (reply, acked): (Vec<redis::Value>, u32) =
                    pipe.query_async(&mut self.conn.clone()).await.map_err(err("claim"))?;
                if let Some(beside) = won_beside(&reply) {
                    if acked < wanted {
                        let key = match (beside, &c.beside) {
                            (true, Some(b)) => b,
                            _ => ours,
                        };
                        let released = matches!(
                            self.compare_and_delete(key, &c.record.token).await,
                            Ok(Swapped::Applied(_))
                        );
                        return Err(ClaimError::NotReplicated {
                            key: key.match_key().unwrap_or_default().to_string(),
                            acked,
                            wanted,
                            timeout: super::REPLICA_ACK_TIMEOUT,
                            released,
                        });
                    }
                }
                reply
            }
        };
        let protocol = |detail: String| ClaimError::Protocol { op: "claim", detail };
        match reply.first().and_then(reply_text).as_deref() {
            Some("won") => match won_beside(&reply) {
                Some(beside) => Ok(IdentityReply::Won { beside }),
                None => Err(protocol(format!("a won reply without where: {reply:?}"))),
            },
            Some("nomarker") => Ok(IdentityReply::NoMarker),
            Some("held") => {
                let index = match reply.get(1) {
                    Some(redis::Value::Int(i)) => {
                        usize::try_from(*i - 1).map_err(|_| protocol(format!("lookup {i}")))?
                    }
                    other => return Err(protocol(format!("lookup index {other:?}"))),
                };
                let facts = reply.get(4).and_then(reply_text);
                match (reply.get(2).and_then(reply_text), reply.get(3).and_then(reply_text)) {
                    (Some(key), Some(record)) => Ok(IdentityReply::Held(Found {
                        index,
                        key,
                        record,
                        facts,
                    })),
                    _ => Err(protocol("a held reply without key and record".into())),
                }
            }
            _ => Err(protocol(format!("unexpected reply {reply:?}"))),
        }
    }

    /// Replaces the value at `key` with `new` only while it is exactly `old` (keeping the TTL).
    pub(super) async fn replace_if_equal(&self, key: &StoreKey, old: &str, new: &str) -> Result<bool, ClaimError> {
        let done: i64 = self
            .replace
            .key(key)
            .arg(old)
            .arg(new)
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err("record identities"))?;
        Ok(done == 1)
    }

    pub(super) async fn get(&self, key: &StoreKey) -> Result<Option<String>, ClaimError> {
        let value = value_or_foreign(self.conn.clone().get(key).await).map_err(err("get"))?;
        Ok(value.map(text))
    }

    pub(super) async fn expire(&self, key: &StoreKey, ttl_secs: u64) -> Result<bool, ClaimError> {
        let secs = i64::try_from(ttl_secs).unwrap_or(i64::MAX);
        self.conn.clone().expire(key, secs).await.map_err(err("expire"))
    }

    pub(super) async fn ttl(&self, key: &StoreKey) -> Result<Option<Duration>, ClaimError> {
        let secs: i64 = self.conn.clone().ttl(key).await.map_err(err("ttl"))?;
        Ok(match secs {
            -2 => None,
            -1 => Some(Duration::MAX),
            s => Some(Duration::from_secs(u64::try_from(s).unwrap_or(0))),
        })
    }

    /// `INCR` then `EXPIRE` in one transaction: the new count.
    pub(super) async fn incr(&self, key: &StoreKey, ttl_secs: u64) -> Result<u64, ClaimError> {
        let (n,): (u64,) = redis::pipe()
            .atomic()
            .incr(key, 1)
            .expire(key, i64::try_from(ttl_secs).unwrap_or(i64::MAX))
            .ignore()
            .query_async(&mut self.conn.clone())
            .await
            .map_err(err("count attempt"))?;
        Ok(n)
    }

    pub(super) async fn delete(&self, key: &StoreKey) -> Result<(), ClaimError> {
        self.conn.clone().del(key).await.map_err(err("delete"))
    }

    /// The store's time: Redis `TIME` on the node that holds this prefix's keys (a manual
    /// clock's time instead, in a simulation: [`Clock::simulated`]).
    pub(super) async fn time(&self) -> Result<DateTime<Utc>, ClaimError> {
        if let Some(now) = self.clock.simulated() {
            return Ok(now);
        }
        let (secs, micros): (i64, i64) = self
            .time
            .key(StoreKey::marker(&self.prefix))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err("read the time"))?;
        DateTime::from_timestamp_micros(secs.saturating_mul(1_000_000).saturating_add(micros)).ok_or_else(|| {
            ClaimError::Protocol {
                op: "read the time",
                detail: format!("TIME answered {secs} s {micros} µs"),
            }
        })
    }

    /// The simulated time the scripts judge by instead of `TIME`, as they read it ('' for none).
    fn simulated_micros(&self) -> String {
        self.clock
            .simulated()
            .map(|t| t.timestamp_micros().to_string())
            .unwrap_or_default()
    }

    /// Lua compare-and-set on the record's token, keeping the TTL.
    pub(super) async fn compare_and_set(&self, key: &StoreKey, token: &str, new: &str) -> Result<Swapped, ClaimError> {
        self.compare_and_set_within(key, token, new, Window::ANY).await
    }

    /// Lua compare-and-set on the record's token, keeping the TTL, while `TIME` is inside
    /// `window` (judged in the script).
    pub(super) async fn compare_and_set_within(
        &self,
        key: &StoreKey,
        token: &str,
        new: &str,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        let (from, until) = window.micros();
        // The index of unsettled claims follows the new state in the same step (`unsettled.rs`).
        let due = Claim::from_stored(new)
            .due()
            .map(|due| due.timestamp_millis().to_string())
            .unwrap_or_default();
        let (status, current): (i64, Vec<u8>) = self
            .compare_and_set
            .key(key)
            .key(self.index_key())
            .arg(token)
            .arg(new)
            .arg(from)
            .arg(until)
            .arg(self.simulated_micros())
            .arg(due)
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err("transition"))?;
        Swapped::from_script("transition", status, text(current))
    }

    /// Lua compare-and-delete on the record's token.
    pub(super) async fn compare_and_delete(&self, key: &StoreKey, token: &str) -> Result<Swapped, ClaimError> {
        self.compare_and_delete_within(key, token, Window::ANY).await
    }

    /// Lua compare-and-delete on the record's token, while `TIME` is inside `window` (judged
    /// in the script).
    pub(super) async fn compare_and_delete_within(
        &self,
        key: &StoreKey,
        token: &str,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        let (from, until) = window.micros();
        let (status, current): (i64, Vec<u8>) = self
            .compare_and_delete
            .key(key)
            .key(self.index_key())
            .arg(token)
            .arg(from)
            .arg(until)
            .arg(self.simulated_micros())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err("release"))?;
        Swapped::from_script("release", status, text(current))
    }

    /// Every key starting with `prefix`, with its value and TTL (`SCAN`, then `GET`/`TTL` in
    /// pipelined batches).
    pub(super) async fn scan(&self, prefix: &str) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        let keys = self.scan_names(prefix).await?;
        self.read_listed(keys).await
    }

    /// The name of every key starting with `prefix`, on every primary (a cluster's each), in
    /// no order: `SCAN … MATCH` by pages of 500, nothing else read (what `claims list` reads
    /// first, to then read the values a page at a time).
    pub(super) async fn scan_names(&self, prefix: &str) -> Result<Vec<String>, ClaimError> {
        self.scan_keys(&format!("{}*", escape_glob(prefix))).await
    }

    /// The value and TTL of each of `keys` that still holds one (a key of another type read
    /// as [`FOREIGN_TYPE`]), in pipelines of 200 (`GET` and `TTL` each), as `(key, value, TTL)`.
    pub(super) async fn read_listed(
        &self,
        mut keys: Vec<String>,
    ) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        let mut conn = self.conn.clone();
        // On a cluster, keys of several slots cannot share a pipeline: one slot per batch.
        if let RedisConn::Cluster(_) = self.conn {
            keys = by_slot(keys);
        }
        let mut out = Vec::with_capacity(keys.len());
        let cluster = matches!(self.conn, RedisConn::Cluster(_));
        for chunk in batches(&keys, cluster) {
            let mut pipe = redis::pipe();
            for k in chunk {
                pipe.get(k).ttl(k);
            }
            let read: redis::RedisResult<Vec<ValueAndTtl>> = pipe.query_async(&mut conn).await;
            let replies: Vec<(Option<String>, i64)> = match read {
                Ok(replies) => replies.into_iter().map(|(raw, ttl)| (raw.map(text), ttl)).collect(),
                // One key holds another type, which fails the whole pipeline: key by key.
                Err(e) if wrong_type(&e) => {
                    let mut replies = Vec::with_capacity(chunk.len());
                    for k in chunk {
                        let ttl: i64 = conn.ttl(k).await.map_err(err("list"))?;
                        // A key SCAN found, of any kind: read as it is.
                        let value = value_or_foreign(conn.get(k).await).map_err(err("list"))?;
                        replies.push((value.map(text), ttl));
                    }
                    replies
                }
                Err(e) => return Err(err("list")(e)),
            };
            for (k, (raw, ttl)) in chunk.iter().zip(replies) {
                if let Some(raw) = raw {
                    out.push((k.clone(), raw, u64::try_from(ttl).ok().map(Duration::from_secs)));
                }
            }
        }
        Ok(out)
    }

    /// Every key matching the glob `pattern`, on every primary (`SCAN … MATCH`).
    async fn scan_keys(&self, pattern: &str) -> Result<Vec<String>, ClaimError> {
        let mut conn = self.conn.clone();
        let mut keys: Vec<String> = Vec::new();
        for node in self.scan_nodes().await? {
            let mut cursor: u64 = 0;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(500);
                let (next, batch): (u64, Vec<String>) = match (&mut conn, &node) {
                    (RedisConn::Cluster(cluster), Some((host, port))) => {
                        let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                            host: host.clone(),
                            port: *port,
                        });
                        let reply = cluster.route_command(scan, routing).await.map_err(err("list"))?;
                        redis::from_redis_value(reply).map_err(|e| err("list")(e.into()))?
                    }
                    _ => scan.query_async(&mut conn).await.map_err(err("list"))?,
                };
                keys.extend(batch);
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
        Ok(keys)
    }
}

impl RedisClaims {
    /// The nodes a `SCAN` must visit: every primary of a cluster (`CLUSTER SHARDS` is 7.0;
    /// `CLUSTER NODES` answers on every version), or `None`, the one server.
    async fn scan_nodes(&self) -> Result<Vec<Option<(String, u16)>>, ClaimError> {
        let RedisConn::Cluster(cluster) = &self.conn else {
            return Ok(vec![None]);
        };
        let mut nodes_cmd = redis::cmd("CLUSTER");
        nodes_cmd.arg("NODES");
        let reply = cluster
            .clone()
            .route_command(nodes_cmd, RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random))
            .await
            .map_err(err("list the cluster's primaries"))?;
        let text: String = redis::from_redis_value(reply).map_err(|e| err("list the cluster's primaries")(e.into()))?;
        let primaries = cluster_primaries(&text);
        if primaries.is_empty() {
            return Err(ClaimError::Protocol {
                op: "list the cluster's primaries",
                detail: "CLUSTER NODES named no primary".to_string(),
            });
        }
        Ok(primaries.into_iter().map(Some).collect())
    }

    /// `CONFIG GET maxmemory-policy`: `Ok(Ok(policy))`, or `Ok(Err(reply))` when Redis answered
    /// the command with an error (managed Redis often disables `CONFIG`); `Err` only when Redis
    /// did not answer. See `super::durability`.
    pub(super) async fn maxmemory_policy(&self) -> Result<Result<String, String>, ClaimError> {
        let mut config_get = redis::cmd("CONFIG");
        config_get.arg("GET").arg("maxmemory-policy");
        let read: redis::RedisResult<std::collections::HashMap<String, String>> = match &self.conn {
            // On a cluster, the primary that holds every claim (the prefix's slot) is the one
            // whose policy matters; redis-rs would send `CONFIG GET` to any node.
            RedisConn::Cluster(cluster) => {
                let home = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
                    self.prefix.as_bytes(),
                    SlotAddr::Master,
                )));
                match cluster.clone().route_command(config_get, home).await {
                    Ok(reply) => redis::from_redis_value(reply).map_err(Into::into),
                    Err(e) => Err(e),
                }
            }
            _ => config_get.query_async(&mut self.conn.clone()).await,
        };
        match read {
            Ok(found) => Ok(found
                .into_iter()
                .find(|(name, _)| name == "maxmemory-policy")
                .map(|(_, policy)| policy)
                .ok_or_else(|| "(no maxmemory-policy in the reply)".to_string())),
            // An error reply carries a code (ERR, NOPERM…); a dropped connection or a timeout
            // does not, and says nothing about the policy.
            Err(e) if e.code().is_some() => Ok(Err(e.to_string())),
            Err(e) => Err(err("read maxmemory-policy")(e)),
        }
    }
}

/// The primaries in a `CLUSTER NODES` reply (one line per node: id, `ip:port@cport[,hostname]`,
/// flags, …; <https://redis.io/docs/latest/commands/cluster-nodes/>), failed ones left out.
fn cluster_primaries(nodes: &str) -> Vec<(String, u16)> {
    nodes
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let address = fields.nth(1)?;
            let flags = fields.next()?;
            let flags: Vec<&str> = flags.split(',').collect();
            if !flags.contains(&"master") || flags.iter().any(|f| matches!(*f, "fail" | "noaddr" | "handshake")) {
                return None;
            }
            let host_port = address.split(['@', ',']).next()?;
            let (host, port) = host_port.rsplit_once(':')?;
            Some((host.trim_matches(['[', ']']).to_string(), port.parse().ok()?))
        })
        .collect()
}

/// `keys` grouped by hash slot, slots in the order first seen.
fn by_slot(keys: Vec<String>) -> Vec<String> {
    let mut groups: Vec<(Slot, Vec<String>)> = Vec::new();
    for key in keys {
        let slot = Slot::for_key(&key);
        match groups.iter_mut().find(|(s, _)| *s == slot) {
            Some((_, group)) => group.push(key),
            None => groups.push((slot, vec![key])),
        }
    }
    groups.into_iter().flat_map(|(_, group)| group).collect()
}

/// `keys` in batches of at most 200 for one pipeline each; with `one_slot_each` (a cluster, and
/// `keys` grouped by slot), a batch never spans two slots.
fn batches(keys: &[String], one_slot_each: bool) -> Vec<&[String]> {
    let mut out = Vec::new();
    let mut rest = keys;
    while let Some(first) = rest.first() {
        let mut len = rest.len().min(200);
        if one_slot_each {
            let slot = Slot::for_key(first);
            len = rest[..len].iter().position(|k| Slot::for_key(k) != slot).unwrap_or(len);
        }
        let (batch, tail) = rest.split_at(len);
        out.push(batch);
        rest = tail;
    }
    out
}

/// True when the server says it is a cluster node (`INFO cluster`: `cluster_enabled:1`). A
/// server that refuses `INFO` (some managed offerings rename it) is taken as one server.
async fn cluster_enabled(conn: &mut ConnectionManager) -> bool {
    let info: redis::RedisResult<String> = redis::cmd("INFO").arg("cluster").query_async(conn).await;
    info.is_ok_and(|info| info.lines().any(|l| l.trim() == "cluster_enabled:1"))
}

/// The claim of a match under all its identities (see [`RedisClaims::claim_identities`]).
const CLAIM_MATCH: &str = include_str!("lua/claim_match.lua");

/// A script reply's value as text (a bulk or simple string; `None` for anything else, nil
/// among them).
fn reply_text(v: &redis::Value) -> Option<String> {
    match v {
        redis::Value::BulkString(b) => Some(text(b.clone())),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// Whether a claim script's reply says won, and where: `Some(true)` beside our key,
/// `Some(false)` under it; `None` when it does not say won.
fn won_beside(reply: &[redis::Value]) -> Option<bool> {
    match (reply.first(), reply.get(1)) {
        (Some(redis::Value::BulkString(b)), Some(redis::Value::Int(at))) if b == b"won" => Some(*at == 1),
        _ => None,
    }
}

/// A `GET` and a `TTL` reply: the value as bytes, the seconds left (negative: none, or gone).
type ValueAndTtl = (Option<Vec<u8>>, i64);

/// What a claim key that holds another Redis type (a hash, a list…) reads as: something else
/// wrote it, so it is held, and it reads as an unreadable record (it is not JSON).
const FOREIGN_TYPE: &str = "(a Redis value that is not a string)";

/// True when `e` is Redis' answer to a string command on a key of another type, alone or as
/// one of a pipeline's failures (which redis 1.x reports as one error listing each).
fn wrong_type(e: &redis::RedisError) -> bool {
    e.clone()
        .into_server_errors()
        .is_some_and(|failed| failed.iter().any(|(_, f)| f.code() == "WRONGTYPE"))
}

/// One key's value as read, where a key of another type reads as [`FOREIGN_TYPE`].
fn value_or_foreign(read: redis::RedisResult<Option<Vec<u8>>>) -> redis::RedisResult<Option<Vec<u8>>> {
    match read {
        Err(e) if wrong_type(&e) => Ok(Some(FOREIGN_TYPE.as_bytes().to_vec())),
        other => other,
    }
}

/// A stored value as text. A value that is not UTF-8 was not written by this bot; read
/// lossily, it is an unreadable record like any other foreign value, not an error that would
/// stop `claims list` (or a claim) at the first such key.
fn text(value: Vec<u8>) -> String {
    String::from_utf8(value).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Escapes Redis glob characters so a prefix like `a*b:` matches only itself in `SCAN MATCH`.
fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
