//! The embedded backend: a SQLite file, for running on one machine without Redis.
//!
//! Each primitive is one `BEGIN IMMEDIATE` transaction, which takes SQLite's write lock before
//! reading, so processes sharing the file serialise exactly like Redis clients do. Expiry is a
//! column (`expires_at`, Unix seconds); expired rows count as absent and are replaced by the
//! next write. The store's clock is the one host's: the [`Clock`] it is given (the system's in
//! production; a test's own, [`Clock::manual`], moves the store's expiry and windows too).

use super::decide::{decide, Decision, Reads};
use super::error::ClaimError;
use super::key::StoreKey;
use super::request::{IdentityClaim, IdentityReply, Swapped};
use super::window::Window;
use crate::clock::Clock;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a process waits for another process's write lock on the file before erroring.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS claims (
    key        TEXT PRIMARY KEY,
    record     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_unsettled ON claims (expires_at)
    WHERE (CASE WHEN json_valid(record) THEN json_extract(record, '$.state') END) IN ('claimed', 'unknown');";

/// The rows [`SCHEMA`]'s partial index `claims_unsettled` holds: the claims in state `claimed`
/// or `unknown` (the other values of the table, identity pointers and counters, are not JSON
/// objects with a state), by expiry, so that the rows of claims that expired unsettled (kept
/// until their key is written again) are passed over. Written as the index's own condition, word for word, so SQLite reads
/// the index instead of the table (a query's condition must contain the index's). Every write
/// keeps it, those of files written by earlier releases included: opening one creates the
/// index over their rows (`CREATE INDEX IF NOT EXISTS`).
const UNSETTLED: &str =
    "(CASE WHEN json_valid(record) THEN json_extract(record, '$.state') END) IN ('claimed', 'unknown')";

/// Claims held in a SQLite file. Cheap to clone (clones share one connection).
#[derive(Clone)]
pub struct EmbeddedClaims {
    conn: Arc<Mutex<Connection>>,
    path: Arc<PathBuf>,
    prefix: Arc<str>,
    owner: Arc<str>,
    /// The clock this store's records are written and judged by (see [`Clock`]).
    clock: Clock,
}

fn err(op: &'static str) -> impl FnOnce(rusqlite::Error) -> ClaimError {
    move |source| ClaimError::Embedded { op, source }
}

fn secs(ttl_secs: u64) -> i64 {
    i64::try_from(ttl_secs).unwrap_or(i64::MAX)
}

/// The live record at `key` at `now` (Unix seconds), inside a transaction.
fn live(conn: &Connection, key: &str, now: i64) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT record FROM claims WHERE key = ?1 AND expires_at > ?2",
        params![key, now],
        |r| r.get(0),
    )
    .optional()
}

/// A transaction's reads at a time (Unix seconds), for [`decide`]: every value is one
/// statement away.
struct InTransaction<'a>(&'a Connection, i64);

impl Reads for InTransaction<'_> {
    type Error = rusqlite::Error;

    fn value(&mut self, key: &StoreKey) -> rusqlite::Result<Option<String>> {
        live(self.0, key.as_str(), self.1)
    }
}

/// The token inside a stored record, if it is a claim record.
fn token_of(raw: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(raw)
        .ok()?
        .get("token")?
        .as_str()
        .map(str::to_string)
}

impl EmbeddedClaims {
    /// Opens (creating if needed) the store at `path`, with WAL journaling so readers do not
    /// block the writer.
    ///
    /// # Errors
    /// [`ClaimError::Embedded`] when the file cannot be opened or created (missing directory,
    /// permissions, not a SQLite file).
    pub fn open(path: &Path, prefix: &str, owner: &str) -> Result<EmbeddedClaims, ClaimError> {
        let conn = Connection::open(path).map_err(err("open"))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(err("open"))?;
        // Switching to WAL needs a lock that SQLite does not wait for (busy_timeout does not
        // apply), so processes opening a new file together retry for a bounded time.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            let setup = conn
                .pragma_update(None, "journal_mode", "WAL")
                .and_then(|()| conn.execute_batch(SCHEMA));
            match setup {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(err("open")(e)),
            }
        }
        Ok(EmbeddedClaims {
            conn: Arc::new(Mutex::new(conn)),
            path: Arc::new(path.to_path_buf()),
            prefix: prefix.into(),
            owner: owner.into(),
            clock: Clock::system(),
        })
    }

    /// Opens the store at `path` for reading only (dry run): nothing is created or written. A
    /// missing file is an empty in-memory store, so every match reads as unclaimed.
    ///
    /// # Errors
    /// [`ClaimError::Embedded`] when an existing file cannot be opened.
    pub fn open_read_only(path: &Path, prefix: &str, owner: &str) -> Result<EmbeddedClaims, ClaimError> {
        let conn = if path.exists() {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(path, flags).map_err(err("open"))?
        } else {
            let conn = Connection::open_in_memory().map_err(err("open"))?;
            conn.execute_batch(SCHEMA).map_err(err("open"))?;
            conn
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(err("open"))?;
        Ok(EmbeddedClaims {
            conn: Arc::new(Mutex::new(conn)),
            path: Arc::new(path.to_path_buf()),
            prefix: prefix.into(),
            owner: owner.into(),
            clock: Clock::system(),
        })
    }

    /// An empty store in memory, read as [`EmbeddedClaims::open_read_only`] reads a missing
    /// file: every match unclaimed. For a dry run on a store that holds no claims yet.
    ///
    /// # Errors
    /// [`ClaimError::Embedded`] when SQLite cannot make the in-memory database.
    pub fn empty(prefix: &str, owner: &str) -> Result<EmbeddedClaims, ClaimError> {
        EmbeddedClaims::open_read_only(Path::new(""), prefix, owner)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same database under another key prefix (see [`super::ClaimStore::for_channel`]).
    pub(super) fn with_prefix(&self, prefix: String) -> EmbeddedClaims {
        EmbeddedClaims {
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

    pub(super) fn with_clock(&self, clock: Clock) -> EmbeddedClaims {
        EmbeddedClaims { clock, ..self.clone() }
    }

    pub(super) fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// The store's time: its clock's (one host's), which judges expiry too.
    pub(super) fn time(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Runs `f` on the connection on a blocking thread, so SQLite's file locks never stall the
    /// async runtime. Errors are reported as `op`.
    async fn blocking<T: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, ClaimError> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn
                .lock()
                .map_err(|_| ClaimError::Task("store connection poisoned".into()))?;
            f(&mut guard).map_err(err(op))
        })
        .await
        .map_err(|e| ClaimError::Task(e.to_string()))?
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction (see [`EmbeddedClaims::blocking`]).
    async fn tx<T: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, ClaimError> {
        self.blocking(op, move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    /// Runs `f` as a plain read, not a write transaction: it works on a read-only (dry-run)
    /// store.
    async fn read<T: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, ClaimError> {
        self.blocking(op, move |c| f(c)).await
    }

    pub(super) async fn set_nx(
        &self,
        key: &StoreKey,
        value: &str,
        ttl_secs: u64,
    ) -> Result<Option<String>, ClaimError> {
        let (key, value, clock) = (key.as_str().to_string(), value.to_string(), self.clock.clone());
        self.tx("claim", move |c| {
            let now = clock.now().timestamp();
            c.execute(
                "DELETE FROM claims WHERE key = ?1 AND expires_at <= ?2",
                params![key, now],
            )?;
            let inserted = c.execute(
                "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT(key) DO NOTHING",
                params![key, value, now.saturating_add(secs(ttl_secs))],
            )?;
            if inserted == 1 {
                Ok(None)
            } else {
                // The row that blocked the insert is live as of `now` (expired rows were deleted
                // above with the same `now`). Reading it with a fresh clock could miss it at the
                // second's edge and report "won" without a write, so read it unconditionally.
                let holder: String = c.query_row("SELECT record FROM claims WHERE key = ?1", [&key], |r| r.get(0))?;
                Ok(Some(holder))
            }
        })
        .await
    }

    pub(super) async fn get(&self, key: &StoreKey) -> Result<Option<String>, ClaimError> {
        let (key, clock) = (key.as_str().to_string(), self.clock.clone());
        self.read("get", move |c| live(c, &key, clock.now().timestamp())).await
    }

    /// Each key's live record; with `refresh_secs`, in one `BEGIN IMMEDIATE` transaction that
    /// also sets each live key's expiry to now + `refresh_secs`. Without it, a plain read (works
    /// on a read-only dry-run store).
    /// With `refresh_secs`, each live key of `touch` gets the same new expiry in the same
    /// transaction.
    pub(super) async fn get_many(
        &self,
        keys: &[StoreKey],
        touch: &[StoreKey],
        refresh_secs: Option<u64>,
    ) -> Result<Vec<Option<String>>, ClaimError> {
        let text = |keys: &[StoreKey]| -> Vec<String> { keys.iter().map(|k| k.as_str().to_string()).collect() };
        let (keys, touch, clock) = (text(keys), text(touch), self.clock.clone());
        let read_all = |c: &Connection, keys: &[String], now: i64| -> rusqlite::Result<Vec<Option<String>>> {
            keys.iter().map(|k| live(c, k, now)).collect()
        };
        match refresh_secs {
            Some(ttl_secs) => {
                self.tx("peek", move |c| {
                    let now = clock.now().timestamp();
                    let held: Vec<Option<String>> = read_all(c, &keys, now)?;
                    for (key, record) in keys.iter().zip(&held) {
                        if record.is_some() {
                            c.execute(
                                "UPDATE claims SET expires_at = ?2 WHERE key = ?1",
                                params![key, now.saturating_add(secs(ttl_secs))],
                            )?;
                        }
                    }
                    for key in &touch {
                        c.execute(
                            "UPDATE claims SET expires_at = ?3 WHERE key = ?1 AND expires_at > ?2",
                            params![key, now, now.saturating_add(secs(ttl_secs))],
                        )?;
                    }
                    Ok(held)
                })
                .await
            }
            None => {
                self.read("peek", move |c| read_all(c, &keys, clock.now().timestamp()))
                    .await
            }
        }
    }

    /// The claim of a match under all its identities, in one `BEGIN IMMEDIATE` transaction: the
    /// claim rule (`rule.rs`), decided over the values the transaction reads (`decide.rs`),
    /// then written in the same transaction.
    pub(super) async fn claim_identities(&self, c: &IdentityClaim) -> Result<IdentityReply, ClaimError> {
        let (c, clock) = (c.clone(), self.clock.clone());
        self.tx("claim", move |tx| {
            let now = clock.now().timestamp();
            let expires_at = now.saturating_add(secs(c.ttl_secs));
            let upsert = |key: &StoreKey, value: &str| {
                tx.execute(
                    "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(key) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at",
                    params![key.as_str(), value, expires_at],
                )
            };
            let decision = decide(&c, &mut InTransaction(tx, now))?;
            let (reply, record, writes) = match decision {
                Decision::NoMarker => return Ok(IdentityReply::NoMarker),
                Decision::Held(found, writes) => (IdentityReply::Held(found), None, writes),
                Decision::Won { record, writes } => (
                    IdentityReply::Won {
                        beside: record != c.record.key,
                    },
                    Some(record),
                    writes,
                ),
            };
            if let Some(key) = record {
                upsert(&key, &c.record.text)?;
            }
            for w in &writes {
                upsert(&w.key, &w.value)?;
            }
            Ok(reply)
        })
        .await
    }

    /// Replaces the live value at `key` with `new` only while it is exactly `old`.
    pub(super) async fn replace_if_equal(&self, key: &StoreKey, old: &str, new: &str) -> Result<bool, ClaimError> {
        let (key, old, new, clock) = (
            key.as_str().to_string(),
            old.to_string(),
            new.to_string(),
            self.clock.clone(),
        );
        self.tx("record identities", move |c| {
            let n = c.execute(
                "UPDATE claims SET record = ?3 WHERE key = ?1 AND record = ?2 AND expires_at > ?4",
                params![key, old, new, clock.now().timestamp()],
            )?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn expire(&self, key: &StoreKey, ttl_secs: u64) -> Result<bool, ClaimError> {
        let (key, clock) = (key.as_str().to_string(), self.clock.clone());
        self.tx("expire", move |c| {
            let now = clock.now().timestamp();
            let n = c.execute(
                "UPDATE claims SET expires_at = ?3 WHERE key = ?1 AND expires_at > ?2",
                params![key, now, now.saturating_add(secs(ttl_secs))],
            )?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn ttl(&self, key: &StoreKey) -> Result<Option<Duration>, ClaimError> {
        let (key, clock) = (key.as_str().to_string(), self.clock.clone());
        let left: Option<i64> = self
            .tx("ttl", move |c| {
                let now = clock.now().timestamp();
                c.query_row(
                    "SELECT expires_at - ?2 FROM claims WHERE key = ?1 AND expires_at > ?2",
                    params![key, now],
                    |r| r.get(0),
                )
                .optional()
            })
            .await?;
        Ok(left.and_then(|s| u64::try_from(s).ok()).map(Duration::from_secs))
    }

    pub(super) async fn incr(&self, key: &StoreKey, ttl_secs: u64) -> Result<u64, ClaimError> {
        let (key, clock) = (key.as_str().to_string(), self.clock.clone());
        self.tx("count attempt", move |c| {
            let now = clock.now().timestamp();
            let current: u64 = live(c, &key, now)?.and_then(|r| r.trim().parse().ok()).unwrap_or(0);
            let next = current.saturating_add(1);
            c.execute(
                "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at",
                params![key, next.to_string(), now.saturating_add(secs(ttl_secs))],
            )?;
            Ok(next)
        })
        .await
    }

    pub(super) async fn delete(&self, key: &StoreKey) -> Result<(), ClaimError> {
        let key = key.as_str().to_string();
        self.tx("delete", move |c| {
            c.execute("DELETE FROM claims WHERE key = ?1", [key]).map(|_| ())
        })
        .await
    }

    /// Applies `new` (or deletes, when `None`) if the live record carries `token` and the
    /// store's clock, read inside the write transaction, is inside `window`.
    /// Returns the same `(status, current)` as the Redis scripts.
    async fn checked(
        &self,
        op: &'static str,
        key: &StoreKey,
        token: &str,
        new: Option<String>,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        let (key, token, clock) = (key.as_str().to_string(), token.to_string(), self.clock.clone());
        self.tx(op, move |c| {
            let now = clock.now();
            let Some(current) = live(c, &key, now.timestamp())? else {
                return Ok(Swapped::Gone);
            };
            if token.is_empty() || token_of(&current).as_deref() != Some(token.as_str()) {
                return Ok(Swapped::NotOurs(current));
            }
            if !window.holds(now) {
                return Ok(Swapped::NotNow(current));
            }
            match new {
                Some(v) => c.execute("UPDATE claims SET record = ?2 WHERE key = ?1", params![key, v])?,
                None => c.execute("DELETE FROM claims WHERE key = ?1", [&key])?,
            };
            Ok(Swapped::Applied(current))
        })
        .await
    }

    pub(super) async fn compare_and_set(&self, key: &StoreKey, token: &str, new: &str) -> Result<Swapped, ClaimError> {
        self.checked("transition", key, token, Some(new.to_string()), Window::ANY)
            .await
    }

    pub(super) async fn compare_and_set_within(
        &self,
        key: &StoreKey,
        token: &str,
        new: &str,
        window: Window,
    ) -> Result<Swapped, ClaimError> {
        self.checked("transition", key, token, Some(new.to_string()), window)
            .await
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

    /// The name of every live key starting with `prefix`, in key order (nothing else read:
    /// what `claims list` reads first, to then read the records a page at a time).
    pub(super) async fn scan_names(&self, prefix: &str) -> Result<Vec<String>, ClaimError> {
        let (prefix, clock) = (prefix.to_string(), self.clock.clone());
        self.read("list", move |c| {
            let now = clock.now().timestamp();
            // A range of the primary key: the keys from `prefix` up to the last string it
            // starts (U+10FFFF sorts after every character in SQLite's byte order).
            let mut stmt =
                c.prepare("SELECT key FROM claims WHERE key >= ?1 AND key < ?2 AND expires_at > ?3 ORDER BY key")?;
            let rows = stmt
                .query_map(params![prefix, format!("{prefix}\u{10FFFF}"), now], |r| {
                    r.get::<_, String>(0)
                })?
                .filter(|k| k.as_ref().map_or(true, |k| k.starts_with(&prefix)))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .await
    }

    /// Every live claim in state `claimed` or `unknown` whose key starts with `root`, with its
    /// record: read through the partial index `claims_unsettled`, so the cost is what is
    /// unsettled, not the table (see `super::unsettled`).
    pub(super) async fn unsettled(&self, root: &str) -> Result<Vec<(String, String)>, ClaimError> {
        let (root, clock) = (root.to_string(), self.clock.clone());
        self.read("read the unsettled claims", move |c| {
            let now = clock.now().timestamp();
            let mut stmt = c.prepare(&unsettled_sql())?;
            let rows = stmt
                .query_map(
                    params![now, root, i64::try_from(root.chars().count()).unwrap_or(i64::MAX)],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .await
    }

    /// The record and TTL of each of `keys` still live, as `(key, record, TTL)`, in one read.
    pub(super) async fn read_listed(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        let clock = self.clock.clone();
        self.read("list", move |c| {
            let now = clock.now().timestamp();
            let mut stmt = c.prepare("SELECT record, expires_at FROM claims WHERE key = ?1 AND expires_at > ?2")?;
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                let row = stmt
                    .query_row(params![key, now], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                    .optional()?;
                if let Some((record, expires)) = row {
                    out.push((key, record, u64::try_from(expires - now).ok().map(Duration::from_secs)));
                }
            }
            Ok(out)
        })
        .await
    }

    pub(super) async fn scan(&self, prefix: &str) -> Result<Vec<(String, String, Option<Duration>)>, ClaimError> {
        let (prefix, clock) = (prefix.to_string(), self.clock.clone());
        self.tx("list", move |c| {
            let now = clock.now().timestamp();
            let mut stmt = c.prepare("SELECT key, record, expires_at FROM claims WHERE expires_at > ?1")?;
            let rows = stmt
                .query_map([now], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
                })?
                .filter_map(|row| match row {
                    Ok((k, v, exp)) if k.starts_with(&prefix) => {
                        Some(Ok((k, v, u64::try_from(exp - now).ok().map(Duration::from_secs))))
                    }
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .await
    }
}

/// The statement of [`EmbeddedClaims::unsettled`] (?1 now, Unix seconds; ?2 the prefix; ?3 its
/// length in characters).
fn unsettled_sql() -> String {
    format!("SELECT key, record FROM claims WHERE {UNSETTLED} AND expires_at > ?1 AND substr(key, 1, ?3) = ?2")
}

#[cfg(test)]
mod unsettled_tests {
    use super::*;

    #[test]
    fn the_unsettled_claims_are_read_through_the_partial_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedClaims::open(&dir.path().join("claims.db"), "bot:", "host:1").unwrap();
        let conn = store.conn.lock().unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", unsettled_sql()))
            .unwrap()
            .query_map(params![0, "bot:", 4], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter().any(|step| step.contains("USING INDEX claims_unsettled")),
            "{plan:?}"
        );
        // A value that is not JSON (an identity pointer) is stored as before.
        conn.execute(
            "INSERT INTO claims (key, record, expires_at) VALUES ('bot:id:x', '2026-07-17_a-v-b', 9)",
            [],
        )
        .unwrap();
    }
}
