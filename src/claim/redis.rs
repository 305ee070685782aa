//! The Redis claim store: one `SET key record NX EX ttl GET` per claim, Lua scripts for the
//! token-checked transitions.
//!
//! Documentation: <https://redis.io/docs/latest/commands/set/> (`NX` + `GET` together need
//! Redis 7.0; the reply is nil when the key was set, else the old value, which is how a loser
//! learns the holder in the same round trip).

use super::{store_key, ttl_secs, Checked, Claim, ClaimError, ClaimOutcome, ClaimToken, ListedClaim, Transition};
use crate::cricket::MatchKey;
use chrono::Utc;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, ExistenceCheck, Script, SetExpiry, SetOptions};
use std::sync::Arc;
use std::time::Duration;

/// How long one Redis command may take before it is an error (not "claimed", not "free").
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long connecting to Redis may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Claims held in Redis under a key prefix. Cheap to clone (the connection is shared and
/// reconnects by itself after Redis restarts).
#[derive(Clone)]
pub struct RedisClaims {
    conn: ConnectionManager,
    prefix: Arc<str>,
    owner: Arc<str>,
    transition: Arc<Script>,
    release: Arc<Script>,
}

fn err(op: &'static str) -> impl FnOnce(redis::RedisError) -> ClaimError {
    move |source| ClaimError::Redis { op, source }
}

impl RedisClaims {
    /// Connects to `url` (`redis://[:password@]host:port/db`) and checks that it answers.
    ///
    /// `prefix` is prepended to every key (`<prefix>match:<key>`); `owner` names this instance
    /// in the records it writes.
    ///
    /// # Errors
    /// [`ClaimError::Redis`] when the URL is invalid or the server cannot be reached.
    pub async fn connect(url: &str, prefix: &str, owner: &str) -> Result<RedisClaims, ClaimError> {
        let client = redis::Client::open(url).map_err(err("connect"))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(CONNECT_TIMEOUT)
            .set_response_timeout(RESPONSE_TIMEOUT)
            .set_number_of_retries(2)
            .set_max_delay(2_000);
        let conn = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(err("connect"))?;
        Ok(RedisClaims {
            conn,
            prefix: prefix.into(),
            owner: owner.into(),
            transition: Arc::new(Script::new(include_str!("lua/transition.lua"))),
            release: Arc::new(Script::new(include_str!("lua/release.lua"))),
        })
    }

    pub(super) async fn claim(&self, key: &MatchKey, title: &str, ttl: Duration) -> Result<ClaimOutcome, ClaimError> {
        let record = Claim::new(&self.owner, title, Utc::now());
        let options = SetOptions::default()
            .conditional_set(ExistenceCheck::NX)
            .get(true)
            .with_expiration(SetExpiry::EX(ttl_secs(ttl)));
        let previous: Option<String> = self
            .conn
            .clone()
            .set_options(store_key(&self.prefix, key), record.to_stored(), options)
            .await
            .map_err(err("claim"))?;
        Ok(match previous {
            None => ClaimOutcome::Won(ClaimToken {
                key: key.clone(),
                claim: record,
            }),
            Some(raw) => ClaimOutcome::HeldBy(Claim::from_stored(&raw)),
        })
    }

    pub(super) async fn peek(&self, key: &MatchKey) -> Result<Option<Claim>, ClaimError> {
        let raw: Option<String> = self
            .conn
            .clone()
            .get(store_key(&self.prefix, key))
            .await
            .map_err(err("peek"))?;
        Ok(raw.as_deref().map(Claim::from_stored))
    }

    async fn checked(
        &self,
        op: &'static str,
        script: &Script,
        token: &ClaimToken,
        new: &str,
    ) -> Result<(i64, String), ClaimError> {
        script
            .key(store_key(&self.prefix, &token.key))
            .arg(&token.claim.token)
            .arg(new)
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err(op))
    }

    pub(super) async fn transition(&self, token: &ClaimToken, change: &Transition) -> Result<Checked, ClaimError> {
        let new = change.apply(token.claim.clone(), Utc::now());
        let (status, current) = self
            .checked("transition", &self.transition, token, &new.to_stored())
            .await?;
        interpret("transition", status, &current, new)
    }

    pub(super) async fn release(&self, token: &ClaimToken) -> Result<Checked, ClaimError> {
        let (status, current) = self.checked("release", &self.release, token, "").await?;
        let old = Claim::from_stored(&current);
        interpret("release", status, &current, old)
    }

    pub(super) async fn refresh(&self, key: &MatchKey, ttl: Duration) -> Result<bool, ClaimError> {
        let secs = i64::try_from(ttl_secs(ttl)).unwrap_or(i64::MAX);
        self.conn
            .clone()
            .expire(store_key(&self.prefix, key), secs)
            .await
            .map_err(err("refresh"))
    }

    pub(super) async fn ttl(&self, key: &MatchKey) -> Result<Option<Duration>, ClaimError> {
        let secs: i64 = self
            .conn
            .clone()
            .ttl(store_key(&self.prefix, key))
            .await
            .map_err(err("ttl"))?;
        Ok(match secs {
            -2 => None,
            -1 => Some(Duration::MAX),
            s => Some(Duration::from_secs(u64::try_from(s).unwrap_or(0))),
        })
    }

    pub(super) async fn list(&self) -> Result<Vec<ListedClaim>, ClaimError> {
        let mut conn = self.conn.clone();
        let pattern = format!("{}match:*", escape_glob(&self.prefix));
        let mut keys: Vec<String> = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(500)
                .query_async(&mut conn)
                .await
                .map_err(err("list"))?;
            keys.extend(batch);
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        let mut out = Vec::with_capacity(keys.len());
        let strip = format!("{}match:", self.prefix);
        for chunk in keys.chunks(200) {
            let mut pipe = redis::pipe();
            for k in chunk {
                pipe.get(k).ttl(k);
            }
            let replies: Vec<(Option<String>, i64)> = pipe.query_async(&mut conn).await.map_err(err("list"))?;
            for (k, (raw, ttl)) in chunk.iter().zip(replies) {
                let (Some(raw), Some(key)) = (raw, k.strip_prefix(&strip).and_then(MatchKey::parse)) else {
                    continue;
                };
                out.push(ListedClaim {
                    key,
                    claim: Claim::from_stored(&raw),
                    ttl: u64::try_from(ttl).ok().map(Duration::from_secs),
                });
            }
        }
        Ok(out)
    }
}

/// Turns a script's `{status, value}` reply into [`Checked`].
fn interpret(op: &'static str, status: i64, current: &str, applied: Claim) -> Result<Checked, ClaimError> {
    match status {
        1 => Ok(Checked::Applied(applied)),
        0 => Ok(Checked::NotOurs(Claim::from_stored(current))),
        -1 => Ok(Checked::Gone),
        other => Err(ClaimError::Protocol {
            op,
            detail: format!("script answered status {other}"),
        }),
    }
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
