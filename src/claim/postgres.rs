//! The PostgreSQL ledger backend: the row is the claim, and rows are never deleted, so the
//! database keeps the history of every announcement.
//!
//! # How the primitives map to tables
//! - `<prefix>match:<key>` is one row of `claims`, `UNIQUE (prefix, match_key)`. Winning is
//!   `INSERT … ON CONFLICT … DO UPDATE … WHERE <the row is released or expired> RETURNING id`:
//!   one statement that either writes our row (a fresh insert, or a reclaim of a lapsed one) or
//!   leaves the holder's row alone. The columns are read from the record, which is kept whole
//!   in `record` (jsonb).
//! - A release marks the row `released` (logically absent; claimable again); a row past its
//!   `expires_at` is logically absent too. Both stay in the table, and a trigger writes every
//!   change to `claim_events`.
//! - Every other key (attempt counters, the first-start marker) lives in `store_keys`, a small
//!   key/value table with an expiry column, and is deleted for real, as in Redis.
//!
//! Each statement commits on its own (autocommit); the compare-and-set and compare-and-delete
//! hold one short transaction with the row locked (`SELECT … FOR UPDATE`). No transaction is
//! ever open across the call to X, so a crash between claim and post leaves a committed
//! `claimed` row, which the stuck-claim report lists.
//!
//! The schema is versioned in `migrations/` and applied at connect time by
//! [refinery](https://docs.rs/refinery), under an advisory lock so that replicas starting
//! together migrate once.

use super::decide::{decide, Decision, NotRead, ReadSoFar};
use super::error::{ClaimError, PostgresError};
use super::key::StoreKey;
use super::request::{Found, IdentityClaim, IdentityReply, Swapped};
use super::tls::SslMode;
use super::window::Window;
use crate::clock::Clock;
use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long one store operation may take before it is an error (not "claimed", not "free").
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long opening one connection may take (unless the URL sets `connect_timeout`).
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long connecting and migrating may take at startup, waiting for another replica's
/// migration included.
pub(super) const MIGRATE_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections kept by one process: the announcer works one match at a time, operators' and
/// tests' bursts need a few more.
pub(super) const POOL_SIZE: usize = 8;
/// The advisory lock held while migrating (any constant unique to this bot; "cricket1").
const MIGRATION_LOCK: i64 = 0x6372_6963_6b65_7431;
/// The first key of the advisory lock that serialises claims of one key prefix (its second key
/// is the prefix's hash); any constant unique to this bot ("cric").
const IDENTITY_LOCK: i32 = 0x6372_6963;
/// Attempts at a claim whose holder vanished between our insert and our read of it.
const CLAIM_RETRIES: usize = 5;

mod migrations {
    refinery::embed_migrations!("migrations");
}

/// Claims held in PostgreSQL tables. Cheap to clone: clones share one connection pool, which
/// replaces broken connections (each is checked before use), so the store survives a server
/// restart.
#[derive(Clone)]
pub struct PostgresClaims {
    pool: Pool,
    prefix: Arc<str>,
    owner: Arc<str>,
    /// The clock this store's records are written and judged by (see [`Clock`]).
    clock: Clock,
}

/// Where a store key lives.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// A row of `claims`: (prefix, match key).
    Claim(&'a str),
    /// A row of `store_keys`.
    Key(&'a str),
}

fn err(op: &'static str) -> impl FnOnce(PostgresError) -> ClaimError {
    move |source| ClaimError::Postgres { op, source }
}

fn secs(ttl_secs: u64) -> i64 {
    i64::try_from(ttl_secs).unwrap_or(i64::MAX)
}

/// Runs `f` within [`RESPONSE_TIMEOUT`], mapping every failure to [`ClaimError::Postgres`].
async fn bounded<T>(op: &'static str, f: impl Future<Output = Result<T, PostgresError>>) -> Result<T, ClaimError> {
    match tokio::time::timeout(RESPONSE_TIMEOUT, f).await {
        Ok(r) => r.map_err(err(op)),
        Err(_) => Err(err(op)(PostgresError::Timeout(RESPONSE_TIMEOUT))),
    }
}

/// The server's clock as it reads when the statement runs (not the transaction's start, as
/// `now()` is), in Unix microseconds.
const CLOCK_MICROS: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// The partial index of the unsettled claims (`claimed`, `unknown`) that reconciliation reads
/// ([`PostgresClaims::unsettled`]), by expiry: rows are never deleted, and those of claims that
/// lapsed unsettled keep their state, so only the live ones are read. Created at connect, under the migration lock, if missing,
/// and NOT as a versioned migration: refinery in every earlier release refuses to start on a
/// database that has a version it does not know (`abort_missing`), which would stop the
/// replicas of a rolling upgrade (or a rollback). An index changes no row and no statement of
/// an earlier release, which keeps it up to date as it writes (see `migrations/README.md`).
const UNSETTLED_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS claims_unsettled ON claims (expires_at) WHERE state IN ('claimed', 'unknown')";

/// A claim row is live (the claim exists) while it is not released and not past its TTL.
const LIVE: &str = "state <> 'released' AND expires_at > now()";

/// The columns of `claims` read from the record `r` (jsonb), in the order of [`COLUMNS`].
///
/// The column `tweet_id` holds the post's id on any platform: records name it `post_id`, and
/// records of earlier releases `tweet_id`. The column keeps its name: a migration renaming it
/// would break every replica of the previous release still running during a rolling upgrade
/// (their statements name `tweet_id`), and the operators' queries (README) with them.
const FROM_RECORD: &str = "r->>'state', r->>'owner', r->>'token', r->>'title', (r->>'attempts')::integer, \
     (r->>'claimed_at')::timestamptz, (r->>'updated_at')::timestamptz, coalesce(r->>'post_id', r->>'tweet_id'), \
     r->>'detail', r";
const COLUMNS: &str = "state, owner, token, title, attempts, claimed_at, updated_at, tweet_id, detail, record";

/// Under `sslmode=prefer`, says so when the server offered no TLS, so a connection in plain
/// text is never silent. Asked of the server (`pg_stat_ssl`, PostgreSQL ≥ 9.5:
/// <https://www.postgresql.org/docs/current/monitoring-stats.html#MONITORING-PG-STAT-SSL-VIEW>)
/// rather than guessed; a server that will not say is logged the same way.
async fn warn_if_plain_text(client: &tokio_postgres::Client) {
    let encrypted = client
        .query_opt("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .await
        .ok()
        .flatten()
        .and_then(|row| row.try_get::<_, bool>(0).ok());
    if encrypted != Some(true) {
        tracing::warn!("DATABASE_URL sslmode=prefer (the default): the server offers no TLS, so the connection is plain text; set sslmode=require (or verify-full) to refuse plain text");
    }
}

impl PostgresClaims {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/db[?options]`), applies the
    /// pending migrations, and checks that the pool answers.
    ///
    /// `prefix` is prepended to every key (it is the `prefix` column of `claims`); `owner`
    /// names this instance in the records it writes. The URL may set `search_path` (e.g.
    /// `?options=-csearch_path%3Dannouncer`) to keep the tables in their own schema.
    ///
    /// # Errors
    /// [`ClaimError::Postgres`] when the URL is invalid, the server cannot be reached, or a
    /// migration fails.
    pub async fn connect(url: &str, prefix: &str, owner: &str) -> Result<PostgresClaims, ClaimError> {
        PostgresClaims::connect_with(url, prefix, owner, None).await
    }

    /// As [`PostgresClaims::connect`], with TLS as the URL's `sslmode` says (libpq's modes,
    /// default `prefer`; see `super::tls`), verifying against `ca_file` (`DATABASE_CA_FILE`)
    /// or else the system's roots. Under `prefer`, a server that offers no TLS is logged as a
    /// warning: the connection is then plain text.
    ///
    /// # Errors
    /// [`ClaimError::Tls`] for an unknown `sslmode` or a CA file that cannot be used; the
    /// others as [`PostgresClaims::connect`] (a certificate refused is a connect error).
    pub async fn connect_with(
        url: &str,
        prefix: &str,
        owner: &str,
        ca_file: Option<&std::path::Path>,
    ) -> Result<PostgresClaims, ClaimError> {
        PostgresClaims::connect_as(url, prefix, owner, ca_file, true).await
    }

    /// As [`PostgresClaims::connect_with`] for a command that only reads (a dry run, `claims
    /// list`): nothing is created or migrated.
    ///
    /// # Errors
    /// As [`PostgresClaims::connect_with`]; [`PostgresError::NoLedger`] when the schema holds
    /// no claims ledger (a mistyped schema must not read as "no claims").
    pub async fn connect_read_only(
        url: &str,
        prefix: &str,
        owner: &str,
        ca_file: Option<&std::path::Path>,
    ) -> Result<PostgresClaims, ClaimError> {
        PostgresClaims::connect_as(url, prefix, owner, ca_file, false).await
    }

    async fn connect_as(
        url: &str,
        prefix: &str,
        owner: &str,
        ca_file: Option<&std::path::Path>,
        migrating: bool,
    ) -> Result<PostgresClaims, ClaimError> {
        let (url, sslmode) = super::tls::split_sslmode(url)?;
        let tls = MakeRustlsConnect::new(super::tls::postgres_client_config(sslmode, ca_file)?);
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| err("connect")(PostgresError::Url(e)))?;
        config.ssl_mode(sslmode.for_driver());
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("cricket-announcer");
        }
        let (client, connection) = match tokio::time::timeout(CONNECT_TIMEOUT, config.connect(tls.clone())).await {
            Ok(r) => r.map_err(|e| err("connect")(e.into()))?,
            Err(_) => return Err(err("connect")(PostgresError::Timeout(CONNECT_TIMEOUT))),
        };
        let driver = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error.message = %e, "PostgreSQL migration connection ended with an error");
            }
        });
        if sslmode == SslMode::Prefer {
            warn_if_plain_text(&client).await;
        }
        let schema = search_path_schema(config.get_options());
        let migrated = if migrating {
            tokio::time::timeout(MIGRATE_TIMEOUT, migrate(client, schema.as_deref())).await
        } else {
            tokio::time::timeout(MIGRATE_TIMEOUT, ledger_exists(client, schema.as_deref())).await
        };
        // The client is gone (dropped by `migrate`, or with its future): the driver ends.
        let _ = driver.await;
        // A read-only command only looks for the ledger: its errors say so, not "migrate".
        let op = if migrating {
            "migrate"
        } else {
            "finding the claims ledger"
        };
        match migrated {
            Ok(r) => r.map_err(err(op))?,
            Err(_) => return Err(err(op)(PostgresError::Timeout(MIGRATE_TIMEOUT))),
        }
        let manager = Manager::from_config(
            config,
            tls,
            ManagerConfig {
                // A connection the server dropped (restart, idle timeout, terminate) is found
                // out before use and replaced, instead of failing the next claim.
                recycling_method: RecyclingMethod::Verified,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(RESPONSE_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(RESPONSE_TIMEOUT))
            .build()
            .map_err(|e| err("connect")(e.into()))?;
        let store = PostgresClaims {
            pool,
            prefix: prefix.into(),
            owner: owner.into(),
            clock: Clock::system(),
        };
        bounded("connect", async {
            drop(store.pool.get().await?);
            Ok(())
        })
        .await?;
        Ok(store)
    }

    /// The same pool under another key prefix (see [`super::ClaimStore::for_channel`]).
    pub(super) fn with_prefix(&self, prefix: String) -> PostgresClaims {
        PostgresClaims {
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

    pub(super) fn with_clock(&self, clock: Clock) -> PostgresClaims {
        PostgresClaims { clock, ..self.clone() }
    }

    pub(super) fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// Where `key` lives: a claim's key is a row of `claims` (this prefix, its match key),
    /// every other key a row of `store_keys`.
    fn place(key: &StoreKey) -> Place<'_> {
        match key.match_key() {
            Some(m) => Place::Claim(m),
            None => Place::Key(key.as_str()),
        }
    }

    /// `SET NX EX GET` on a key of `store_keys` (an identity pointer, the first-start marker):
    /// `None` when we wrote it (new, or the old one had expired), else the live value. A claim
    /// is never taken this way: only [`PostgresClaims::claim_identities`] writes a claim row,
    /// under the prefix's lock, so a claim key here is refused.
    pub(super) async fn set_nx(
        &self,
        key: &StoreKey,
        value: &str,
        ttl_secs: u64,
    ) -> Result<Option<String>, ClaimError> {
        let place = Self::place(key);
        let Place::Key(k) = place else {
            return Err(ClaimError::Protocol {
                op: "claim",
                detail: "claims are taken by claim_match only, never by a single-key set".into(),
            });
        };
        let ttl = secs(ttl_secs);
        bounded("claim", async {
            let client = self.pool.get().await?;
            // Losing and then finding no live value means it expired or was deleted between our
            // two statements: try again rather than call that a win or a loss.
            for _ in 0..CLAIM_RETRIES {
                let won = client
                    .query_opt(
                        "INSERT INTO store_keys AS k (key, value, expires_at)
                         VALUES ($1, $2, now() + $3::bigint * interval '1 second')
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
                           WHERE k.expires_at <= now()
                         RETURNING 1",
                        &[&k, &value, &ttl],
                    )
                    .await?
                    .is_some();
                if won {
                    return Ok(None);
                }
                if let Some(holder) = self.read(&client, place).await? {
                    return Ok(Some(holder));
                }
            }
            Err(PostgresError::Contended(CLAIM_RETRIES))
        })
        .await
    }

    /// The live value at `place`, on `client`.
    async fn read<C: deadpool_postgres::GenericClient + Sync>(
        &self,
        client: &C,
        place: Place<'_>,
    ) -> Result<Option<String>, PostgresError> {
        let row = match place {
            Place::Claim(m) => {
                client
                    .query_opt(
                        &format!("SELECT record::text FROM claims WHERE prefix = $1 AND match_key = $2 AND {LIVE}"),
                        &[&&*self.prefix, &m],
                    )
                    .await?
            }
            Place::Key(k) => {
                client
                    .query_opt(
                        "SELECT value FROM store_keys WHERE key = $1 AND expires_at > now()",
                        &[&k],
                    )
                    .await?
            }
        };
        Ok(row.map(|r| r.get(0)))
    }

    pub(super) async fn get(&self, key: &StoreKey) -> Result<Option<String>, ClaimError> {
        bounded("get", async {
            let client = self.pool.get().await?;
            self.read(&client, Self::place(key)).await
        })
        .await
    }

    /// Each key's live value, then (with `refresh_secs`, when live) a TTL refresh: two
    /// statements per key, not pipelined (the ledger is not the fast path).
    /// With `refresh_secs`, each live key of `touch` gets the same new expiry.
    pub(super) async fn get_many(
        &self,
        keys: &[StoreKey],
        touch: &[StoreKey],
        refresh_secs: Option<u64>,
    ) -> Result<Vec<Option<String>>, ClaimError> {
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let held = self.get(key).await?;
            if let (Some(ttl), Some(_)) = (refresh_secs, &held) {
                self.expire(key, ttl).await?;
            }
            out.push(held);
        }
        if let Some(ttl) = refresh_secs {
            for key in touch {
                self.expire(key, ttl).await?;
            }
        }
        Ok(out)
    }

    /// The claim of a match under all its identities, in one transaction that first takes a
    /// transaction-scoped advisory lock on this key prefix, so that two claims of one prefix
    /// never interleave their look-ups and writes: the claim rule (`rule.rs`), decided over
    /// the values read so far (`decide.rs`); a value the decision lacks is read and the
    /// decision made again, until it has all it needs (a few rounds: one per step of its
    /// look-ups that found something), then written in the same transaction.
    pub(super) async fn claim_identities(&self, c: &IdentityClaim) -> Result<IdentityReply, ClaimError> {
        let ttl = secs(c.ttl_secs);
        bounded("claim", async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&IDENTITY_LOCK, &&*self.prefix],
            )
            .await?;
            let mut read = ReadSoFar::default();
            let decision = loop {
                match decide(c, &mut read) {
                    Ok(decision) => break decision,
                    Err(NotRead(key)) => {
                        let value = self.read(&tx, Self::place(&key)).await?;
                        read.insert(key, value);
                    }
                }
            };
            let upsert = "INSERT INTO store_keys AS k (key, value, expires_at)
                          VALUES ($1, $2, now() + $3::bigint * interval '1 second')
                          ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at";
            let (reply, writes) = match decision {
                Decision::NoMarker => {
                    tx.commit().await?;
                    return Ok(IdentityReply::NoMarker);
                }
                Decision::Held(found, writes) => (IdentityReply::Held(found), writes),
                Decision::Won { record, writes } => {
                    let key = record.match_key().unwrap_or_default();
                    let won = tx
                        .query_opt(&claim_sql(), &[&&*self.prefix, &key, &c.record.text, &ttl])
                        .await?
                        .is_some();
                    if !won {
                        // A claim written without this lock (a replica of an older release)
                        // got there first: it holds the match.
                        let held = self.read(&tx, Place::Claim(key)).await?;
                        tx.commit().await?;
                        return match held {
                            Some(record) => Ok(IdentityReply::Held(Found {
                                index: 0,
                                key: key.to_string(),
                                record,
                                facts: None,
                            })),
                            None => Err(PostgresError::Contended(1)),
                        };
                    }
                    (
                        IdentityReply::Won {
                            beside: record != c.record.key,
                        },
                        writes,
                    )
                }
            };
            for w in &writes {
                tx.execute(upsert, &[&w.key.as_str(), &w.value, &ttl]).await?;
            }
            tx.commit().await?;
            Ok(reply)
        })
        .await
    }

    /// Replaces the live claim record at `key` with `new` only while it is still `old` (compared
    /// as JSON values: jsonb keeps no formatting).
    pub(super) async fn replace_if_equal(&self, key: &StoreKey, old: &str, new: &str) -> Result<bool, ClaimError> {
        let Place::Claim(m) = Self::place(key) else {
            return Err(not_a_claim_operation("record identities"));
        };
        bounded("record identities", async {
            let client = self.pool.get().await?;
            let n = client
                .execute(
                    &format!(
                        "UPDATE claims SET ({COLUMNS}) = (SELECT {FROM_RECORD} FROM (SELECT $4::text::jsonb AS r) AS v)
                         WHERE prefix = $1 AND match_key = $2 AND {LIVE} AND record = $3::text::jsonb"
                    ),
                    &[&&*self.prefix, &m, &old, &new],
                )
                .await?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn expire(&self, key: &StoreKey, ttl_secs: u64) -> Result<bool, ClaimError> {
        let ttl = secs(ttl_secs);
        bounded("expire", async {
            let client = self.pool.get().await?;
            let n = match Self::place(key) {
                Place::Claim(m) => {
                    client
                        .execute(
                            &format!(
                                "UPDATE claims SET expires_at = now() + $3::bigint * interval '1 second'
                                 WHERE prefix = $1 AND match_key = $2 AND {LIVE}"
                            ),
                            &[&&*self.prefix, &m, &ttl],
                        )
                        .await?
                }
                Place::Key(k) => {
                    client
                        .execute(
                            "UPDATE store_keys SET expires_at = now() + $2::bigint * interval '1 second'
                             WHERE key = $1 AND expires_at > now()",
                            &[&k, &ttl],
                        )
                        .await?
                }
            };
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn ttl(&self, key: &StoreKey) -> Result<Option<Duration>, ClaimError> {
        const LEFT: &str = "floor(extract(epoch FROM expires_at - now()))::bigint";
        bounded("ttl", async {
            let client = self.pool.get().await?;
            let row = match Self::place(key) {
                Place::Claim(m) => {
                    client
                        .query_opt(
                            &format!("SELECT {LEFT} FROM claims WHERE prefix = $1 AND match_key = $2 AND {LIVE}"),
                            &[&&*self.prefix, &m],
                        )
                        .await?
                }
                Place::Key(k) => {
                    client
                        .query_opt(
                            &format!("SELECT {LEFT} FROM store_keys WHERE key = $1 AND expires_at > now()"),
                            &[&k],
                        )
                        .await?
                }
            };
            Ok(row.map(|r| Duration::from_secs(u64::try_from(r.get::<_, i64>(0)).unwrap_or(0))))
        })
        .await
    }

    /// Adds one to the counter at `key` (from 0 when absent or expired) and sets its TTL, in one
    /// statement: the new count. Counters are never claim rows.
    pub(super) async fn incr(&self, key: &StoreKey, ttl_secs: u64) -> Result<u64, ClaimError> {
        let ttl = secs(ttl_secs);
        let Place::Key(k) = Self::place(key) else {
            return Err(not_a_claim_operation("count attempt"));
        };
        bounded("count attempt", async {
            let client = self.pool.get().await?;
            let row = client
                .query_one(
                    "INSERT INTO store_keys AS k (key, value, expires_at)
                     VALUES ($1, '1', now() + $2::bigint * interval '1 second')
                     ON CONFLICT (key) DO UPDATE
                       SET value = CASE WHEN k.expires_at > now() THEN (k.value::bigint + 1)::text ELSE '1' END,
                           expires_at = excluded.expires_at
                     RETURNING value::bigint",
                    &[&k, &ttl],
                )
                .await?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
        .await
    }

    /// Claims: marks the live row `released` (kept as history). Keys: deletes the row.
    pub(super) async fn delete(&self, key: &StoreKey) -> Result<(), ClaimError> {
        bounded("delete", async {
            let client = self.pool.get().await?;
            match Self::place(key) {
                Place::Claim(m) => {
                    client
                        .execute(
                            &format!(
                                "UPDATE claims SET state = 'released', updated_at = now()
                                 WHERE prefix = $1 AND match_key = $2 AND {LIVE}"
                            ),
                            &[&&*self.prefix, &m],
                        )
                        .await?
                }
                Place::Key(k) => client.execute("DELETE FROM store_keys WHERE key = $1", &[&k]).await?,
            };
            Ok(())
        })
        .await
    }

    /// The store's time: the server's `clock_timestamp()` (a manual clock's time instead, in
    /// a simulation: [`Clock::simulated`]).
    pub(super) async fn time(&self) -> Result<DateTime<Utc>, ClaimError> {
        if let Some(now) = self.clock.simulated() {
            return Ok(now);
        }
        let micros: i64 = bounded("read the time", async {
            let client = self.pool.get().await?;
            Ok(client.query_one(CLOCK_MICROS, &[]).await?.get(0))
        })
        .await?;
        DateTime::from_timestamp_micros(micros).ok_or_else(|| ClaimError::Protocol {
            op: "read the time",
            detail: format!("clock_timestamp() answered {micros} µs"),
        })
    }

    /// Applies the record `new` (or marks the row released, when `None`) if the live row carries
    /// `token` and the server's clock, read in the same transaction once the row is locked, is
    /// inside `window`: one short transaction holding the row lock. Returns the same
    /// [`Swapped`] as the Redis scripts do.
    async fn checked(
        &self,
        op: &'static str,
        key: &StoreKey,
        token: &str,
        new: Option<&str>,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        let Place::Claim(m) = Self::place(key) else {
            return Err(not_a_claim_operation(op));
        };
        bounded(op, async {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let Some(row) = tx
                .query_opt(
                    &format!(
                        "SELECT id, token, record::text FROM claims
                         WHERE prefix = $1 AND match_key = $2 AND {LIVE} FOR UPDATE"
                    ),
                    &[&&*self.prefix, &m],
                )
                .await?
            else {
                tx.commit().await?;
                return Ok(Swapped::Gone);
            };
            let (id, held, current): (i64, Option<String>, String) = (row.get(0), row.get(1), row.get(2));
            if token.is_empty() || held.as_deref() != Some(token) {
                tx.commit().await?;
                return Ok(Swapped::NotOurs(current));
            }
            if window != Window::ANY {
                let now = match self.clock.simulated() {
                    Some(t) => t.timestamp_micros(),
                    None => tx.query_one(CLOCK_MICROS, &[]).await?.get(0),
                };
                let inside = DateTime::from_timestamp_micros(now).is_some_and(|now| window.holds(now));
                if !inside {
                    tx.commit().await?;
                    return Ok(Swapped::NotNow(current));
                }
            }
            match new {
                Some(record) => {
                    tx.execute(
                        &format!(
                            "UPDATE claims SET ({COLUMNS}) = (SELECT {FROM_RECORD} FROM (SELECT $2::text::jsonb AS r) AS v)
                             WHERE id = $1"
                        ),
                        &[&id, &record],
                    )
                    .await?
                }
                None => {
                    tx.execute(
                        "UPDATE claims SET state = 'released', updated_at = now() WHERE id = $1",
                        &[&id],
                    )
                    .await?
                }
            };
            tx.commit().await?;
            Ok(Swapped::Applied(current))
        })
        .await
    }

    pub(super) async fn compare_and_set(&self, key: &StoreKey, token: &str, new: &str) -> Result<Swapped, ClaimError> {
        self.checked("transition", key, token, Some(new), Window::ANY).await
    }

    pub(super) async fn compare_and_set_within(
        &self,
        key: &StoreKey,
        token: &str,
        new: &str,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        self.checked("transition", key, token, Some(new), window).await
    }

    pub(super) async fn compare_and_delete(&self, key: &StoreKey, token: &str) -> Result<Swapped, ClaimError> {
        self.checked("release", key, token, None, Window::ANY).await
    }

    pub(super) async fn compare_and_delete_within(
        &self,
        key: &StoreKey,
        token: &str,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        self.checked("release", key, token, None, window).await
    }

    /// The name of every live key starting with `prefix` (claims and other keys alike), in no
    /// order (nothing else read: what `claims list` reads first, to then read the records a
    /// page at a time).
    pub(super) async fn scan_names(&self, prefix: &str) -> Result<Vec<String>, ClaimError> {
        bounded("list", async {
            let client = self.pool.get().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT key FROM (
                           SELECT prefix || 'match:' || match_key AS key FROM claims WHERE {LIVE}
                           UNION ALL
                           SELECT key FROM store_keys WHERE expires_at > now()
                         ) AS live WHERE starts_with(key, $1)"
                    ),
                    &[&prefix],
                )
                .await?;
            Ok(rows.into_iter().map(|r| r.get(0)).collect())
        })
        .await
    }

    /// The value and TTL of each of `keys` still live, as `(key, value, TTL)`, in one query.
    pub(super) async fn read_listed(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        bounded("list", async {
            let client = self.pool.get().await?;
            let rows = client.query(&live_keys_where("key = ANY($1)"), &[&keys]).await?;
            Ok(rows.iter().map(live_row).collect())
        })
        .await
    }

    /// Every live claim in state `claimed` or `unknown` whose prefix starts with `root`, as
    /// (`<prefix>match:<key>`, record): read through the partial index `claims_unsettled`
    /// ([`UNSETTLED_INDEX`]), so the cost is what is unsettled, not the ledger.
    pub(super) async fn unsettled(&self, root: &str) -> Result<Vec<(String, String)>, ClaimError> {
        bounded("read the unsettled claims", async {
            let client = self.pool.get().await?;
            let rows = client
                .query(
                    "SELECT prefix || 'match:' || match_key, record::text FROM claims
                     WHERE state IN ('claimed', 'unknown') AND expires_at > now() AND starts_with(prefix, $1)",
                    &[&root],
                )
                .await?;
            Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
        })
        .await
    }

    /// Every live key starting with `prefix` (claims of any bot prefix, and other keys), with
    /// its value and TTL, as Redis `SCAN MATCH prefix*` would find them.
    pub(super) async fn scan(&self, prefix: &str) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        bounded("list", async {
            let client = self.pool.get().await?;
            let rows = client
                .query(&live_keys_where("starts_with(key, $1)"), &[&prefix])
                .await?;
            Ok(rows.iter().map(live_row).collect())
        })
        .await
    }
}

/// The live keys (claims as `<prefix>match:<key>`, and the other keys) that meet `filter` (a
/// condition on `key`, its one parameter `$1`), each as key, value and the seconds its TTL has
/// left: the query of `scan` and `read_listed`, read by [`live_row`].
fn live_keys_where(filter: &str) -> String {
    format!(
        "SELECT key, value, floor(extract(epoch FROM expires_at - now()))::bigint FROM (
           SELECT prefix || 'match:' || match_key AS key, record::text AS value, expires_at
             FROM claims WHERE {LIVE}
           UNION ALL
           SELECT key, value, expires_at FROM store_keys WHERE expires_at > now()
         ) AS live WHERE {filter}"
    )
}

/// A row of the live keys' reads (`scan`, `read_listed`): key, value, and the seconds it has
/// left as a TTL (`None` when none is left).
fn live_row(r: &tokio_postgres::Row) -> (String, String, Option<Duration>) {
    let left = u64::try_from(r.get::<_, i64>(2)).ok().map(Duration::from_secs);
    (r.get(0), r.get(1), left)
}

/// The claim: one statement that writes our row ($1 prefix, $2 match key, $3 record, $4 TTL
/// seconds) when there is none or it is released or lapsed, and returns its id; no row back
/// means a live holder kept it.
fn claim_sql() -> String {
    format!(
        "INSERT INTO claims AS c (prefix, match_key, {COLUMNS}, expires_at)
         SELECT $1, $2, {FROM_RECORD}, now() + $4::bigint * interval '1 second'
         FROM (SELECT $3::text::jsonb AS r) AS v
         ON CONFLICT (prefix, match_key) DO UPDATE
           SET ({COLUMNS}, expires_at) = ROW({COLUMNS_EXCLUDED}, excluded.expires_at)
           WHERE c.state = 'released' OR c.expires_at <= now()
         RETURNING c.id",
        COLUMNS_EXCLUDED = excluded(COLUMNS),
    )
}

/// `a, b` → `excluded.a, excluded.b`.
fn excluded(columns: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("excluded.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_a_claim_operation(op: &'static str) -> ClaimError {
    ClaimError::Protocol {
        op,
        detail: "this PostgreSQL operation applies to claim keys (<prefix>match:<key>) only".into(),
    }
}

/// The schema the connection's `search_path` names first (`options=-csearch_path=announcer`
/// or `--search_path=…`), unless it is the per-user `$user`: where the migrations create the
/// tables.
fn search_path_schema(options: Option<&str>) -> Option<String> {
    let options = options?;
    let mut words = options.split_whitespace().peekable();
    while let Some(word) = words.next() {
        // `-c name=value`, `-cname=value` or `--name=value`.
        let setting = match word {
            "-c" => words.next().unwrap_or(""),
            w => w.strip_prefix("-c").or_else(|| w.strip_prefix("--")).unwrap_or(""),
        };
        if let Some(path) = setting.strip_prefix("search_path=") {
            let first = path.split(',').next().unwrap_or("").trim().trim_matches('"');
            return (!first.is_empty() && first != "$user").then(|| first.to_string());
        }
    }
    None
}

/// Applies pending migrations on `client` (a connection of its own), holding an advisory lock
/// so that processes starting together migrate one after the other (the second finds nothing
/// to do). The lock is released when the connection closes, also on failure. The schema
/// `search_path` names is created first when missing: the migrations would otherwise fail on
/// a new database with "no schema has been selected to create in".
/// Whether the claims ledger exists where the connection's `search_path` finds it (both tables),
/// without creating anything.
async fn ledger_exists(client: tokio_postgres::Client, schema: Option<&str>) -> Result<(), PostgresError> {
    let found = client
        .query_one(
            "SELECT to_regclass('claims') IS NOT NULL AND to_regclass('store_keys') IS NOT NULL",
            &[],
        )
        .await?
        .get::<_, bool>(0);
    if found {
        return Ok(());
    }
    Err(PostgresError::NoLedger {
        schema: schema.unwrap_or("public").to_string(),
    })
}

async fn migrate(mut client: tokio_postgres::Client, schema: Option<&str>) -> Result<(), PostgresError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    if let Some(schema) = schema {
        // Looked up first: CREATE SCHEMA needs the CREATE privilege on the database even when
        // the schema exists, which a least-privileged account need not have.
        let exists = client
            .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
            .await?
            .is_some();
        if !exists {
            let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
            client
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}"))
                .await?;
            tracing::info!(schema = %schema, "created the PostgreSQL schema named in search_path");
        }
    }
    let report = migrations::migrations::runner().run_async(&mut client).await?;
    for m in report.applied_migrations() {
        tracing::info!(migration = %m, "applied PostgreSQL migration");
    }
    client.batch_execute(UNSETTLED_INDEX).await?;
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await?;
    Ok(())
}

#[cfg(test)]
mod schema_tests {
    use super::search_path_schema;

    #[test]
    fn the_schema_is_read_from_each_form_of_the_search_path_option() {
        assert_eq!(
            search_path_schema(Some("-csearch_path=announcer")).as_deref(),
            Some("announcer")
        );
        assert_eq!(
            search_path_schema(Some("-c search_path=a,public")).as_deref(),
            Some("a")
        );
        assert_eq!(
            search_path_schema(Some("--search_path=b -cstatement_timeout=5")).as_deref(),
            Some("b")
        );
        assert_eq!(search_path_schema(Some("-csearch_path=$user,public")), None);
        assert_eq!(search_path_schema(Some("-cstatement_timeout=5")), None);
        assert_eq!(search_path_schema(None), None);
    }
}
