//! The embedded claim store: a SQLite file, for running on one machine without Redis.
//!
//! Each operation is one `BEGIN IMMEDIATE` transaction, which takes SQLite's write lock before
//! reading, so two processes sharing the file serialise exactly like two Redis clients do.
//! Expiry is a column (`expires_at`, Unix seconds); expired rows count as absent and are
//! replaced by the next claim.

use super::{store_key, ttl_secs, Checked, Claim, ClaimError, ClaimOutcome, ClaimToken, ListedClaim, Transition};
use crate::cricket::MatchKey;
use chrono::Utc;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a process waits for another process's write lock on the file before erroring.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS claims (
    key        TEXT PRIMARY KEY,
    record     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);";

/// Claims held in a SQLite file. Cheap to clone (clones share one connection).
#[derive(Clone)]
pub struct EmbeddedClaims {
    conn: Arc<Mutex<Connection>>,
    path: Arc<PathBuf>,
    prefix: Arc<str>,
    owner: Arc<str>,
}

fn err(op: &'static str) -> impl FnOnce(rusqlite::Error) -> ClaimError {
    move |source| ClaimError::Embedded { op, source }
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
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the connection in a blocking task, so SQLite's file locks never stall the
    /// async runtime.
    async fn with<T: Send + 'static>(
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

    pub(super) async fn claim(&self, key: &MatchKey, title: &str, ttl: Duration) -> Result<ClaimOutcome, ClaimError> {
        let record = Claim::new(&self.owner, title, Utc::now());
        let stored = record.to_stored();
        let k = store_key(&self.prefix, key);
        let ttl = i64::try_from(ttl_secs(ttl)).unwrap_or(i64::MAX);
        let previous = self
            .with("claim", move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let now = Utc::now().timestamp();
                tx.execute(
                    "DELETE FROM claims WHERE key = ?1 AND expires_at <= ?2",
                    params![k, now],
                )?;
                let inserted = tx.execute(
                    "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT(key) DO NOTHING",
                    params![k, stored, now.saturating_add(ttl)],
                )?;
                let previous = if inserted == 1 {
                    None
                } else {
                    Some(tx.query_row("SELECT record FROM claims WHERE key = ?1", [&k], |r| {
                        r.get::<_, String>(0)
                    })?)
                };
                tx.commit()?;
                Ok(previous)
            })
            .await?;
        Ok(match previous {
            None => ClaimOutcome::Won(ClaimToken {
                key: key.clone(),
                claim: record,
            }),
            Some(raw) => ClaimOutcome::HeldBy(Claim::from_stored(&raw)),
        })
    }

    pub(super) async fn peek(&self, key: &MatchKey) -> Result<Option<Claim>, ClaimError> {
        let k = store_key(&self.prefix, key);
        let raw = self
            .with("peek", move |conn| {
                conn.query_row(
                    "SELECT record FROM claims WHERE key = ?1 AND expires_at > ?2",
                    params![k, Utc::now().timestamp()],
                    |r| r.get::<_, String>(0),
                )
                .optional()
            })
            .await?;
        Ok(raw.as_deref().map(Claim::from_stored))
    }

    /// Applies `change` to the row of `token` inside one write transaction, if the live row
    /// still carries the token. `None` as the new record deletes the row.
    async fn checked(
        &self,
        op: &'static str,
        token: &ClaimToken,
        change: impl FnOnce(Claim) -> Option<Claim> + Send + 'static,
    ) -> Result<Checked, ClaimError> {
        let k = store_key(&self.prefix, &token.key);
        let ours = token.claim.token.clone();
        self.with(op, move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let raw: Option<String> = tx
                .query_row(
                    "SELECT record FROM claims WHERE key = ?1 AND expires_at > ?2",
                    params![k, Utc::now().timestamp()],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(raw) = raw else {
                return Ok(Checked::Gone);
            };
            let current = Claim::from_stored(&raw);
            if !current.carries(&ours) {
                return Ok(Checked::NotOurs(current));
            }
            let result = match change(current.clone()) {
                Some(new) => {
                    tx.execute(
                        "UPDATE claims SET record = ?2 WHERE key = ?1",
                        params![k, new.to_stored()],
                    )?;
                    Checked::Applied(new)
                }
                None => {
                    tx.execute("DELETE FROM claims WHERE key = ?1", [&k])?;
                    Checked::Applied(current)
                }
            };
            tx.commit()?;
            Ok(result)
        })
        .await
    }

    pub(super) async fn transition(&self, token: &ClaimToken, change: &Transition) -> Result<Checked, ClaimError> {
        let change = change.clone();
        self.checked("transition", token, move |c| Some(change.apply(c, Utc::now())))
            .await
    }

    pub(super) async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        self.checked("release", token, |_| None).await
    }

    pub(super) async fn refresh(&self, key: &MatchKey, ttl: Duration) -> Result<bool, ClaimError> {
        let k = store_key(&self.prefix, key);
        let ttl = i64::try_from(ttl_secs(ttl)).unwrap_or(i64::MAX);
        self.with("refresh", move |conn| {
            let now = Utc::now().timestamp();
            let n = conn.execute(
                "UPDATE claims SET expires_at = ?3 WHERE key = ?1 AND expires_at > ?2",
                params![k, now, now.saturating_add(ttl)],
            )?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn list(&self) -> Result<Vec<ListedClaim>, ClaimError> {
        let strip = format!("{}match:", self.prefix);
        let rows = self
            .with("list", move |conn| {
                let now = Utc::now().timestamp();
                let mut stmt = conn.prepare("SELECT key, record, expires_at FROM claims WHERE expires_at > ?1")?;
                let rows = stmt
                    .query_map([now], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, i64>(2)? - now,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(rows)
            })
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(k, raw, left)| {
                let key = k.strip_prefix(&strip).and_then(MatchKey::parse)?;
                Some(ListedClaim {
                    key,
                    claim: Claim::from_stored(&raw),
                    ttl: u64::try_from(left).ok().map(Duration::from_secs),
                })
            })
            .collect())
    }

    pub(super) async fn ttl(&self, key: &MatchKey) -> Result<Option<Duration>, ClaimError> {
        let k = store_key(&self.prefix, key);
        let left: Option<i64> = self
            .with("ttl", move |conn| {
                let now = Utc::now().timestamp();
                conn.query_row(
                    "SELECT expires_at - ?2 FROM claims WHERE key = ?1 AND expires_at > ?2",
                    params![k, now],
                    |r| r.get(0),
                )
                .optional()
            })
            .await?;
        Ok(left.and_then(|s| u64::try_from(s).ok()).map(Duration::from_secs))
    }
}
