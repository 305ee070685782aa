//! Whether a store keeps the claims it is given: Redis' eviction policy, and (opt-in) the
//! replicas that must hold a claim before its post is sent.
//!
//! A claim that disappears is a match announced again. Redis at `maxmemory` evicts keys by its
//! `maxmemory-policy`: `allkeys-*` policies evict any key, `volatile-*` policies evict keys that
//! have a TTL, and every claim key has one. Only `noeviction` (refuse writes when full) never
//! drops a claim. Documentation: <https://redis.io/docs/latest/develop/reference/eviction/>.
//!
//! The policy is read with `CONFIG GET maxmemory-policy`
//! (<https://redis.io/docs/latest/commands/config-get/>). Managed Redis services often disable
//! `CONFIG`; there the operator asserts the policy (`REDIS_EVICTION_POLICY_ASSERTED=noeviction`)
//! after checking it in the service's settings, and a readable policy always wins over the
//! assertion.
//!
//! Replication is asynchronous: a claim won on a primary that fails over before its replicas
//! have it is lost, and the promoted replica lets another bot claim and post the match again.
//! With `CLAIM_MIN_REPLICAS=N` the claim's script is followed, in the same pipeline, by
//! `WAIT N timeout` (<https://redis.io/docs/latest/commands/wait/>); the winner posts only when
//! N replicas acknowledged it. `WAIT` does not make Redis strongly consistent (a failover can
//! still pick a replica that missed the write), but a promoted replica that acknowledged holds
//! the claim.

use super::{ClaimError, ClaimStore};
use std::fmt;
use std::time::Duration;

/// How long a won claim waits for `CLAIM_MIN_REPLICAS` acknowledgements: replicas on a working
/// network acknowledge within milliseconds, and the whole pipeline must fit well within the Redis
/// client's response timeout (`super::redis::RESPONSE_TIMEOUT`, 5 s).
pub const REPLICA_ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// The only eviction policy under which Redis never drops a claim.
pub const NO_EVICTION: &str = "noeviction";

/// Why claims are safe from eviction on this store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvictionSafety {
    /// Not Redis: the embedded and PostgreSQL stores never evict.
    NotEvicting,
    /// Redis answered `maxmemory-policy noeviction`.
    NoEviction,
    /// Redis would not say (`CONFIG` refused); the operator asserted `noeviction`.
    Asserted {
        /// What Redis answered to `CONFIG GET`.
        reply: String,
    },
}

impl fmt::Display for EvictionSafety {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvictionSafety::NotEvicting => f.write_str("this store never evicts"),
            EvictionSafety::NoEviction => f.write_str("maxmemory-policy noeviction"),
            EvictionSafety::Asserted { .. } => {
                f.write_str("maxmemory-policy unreadable, noeviction asserted by REDIS_EVICTION_POLICY_ASSERTED")
            }
        }
    }
}

/// Claims may be evicted (or nobody can tell): the bot must not post.
#[derive(Debug, thiserror::Error)]
pub enum EvictionRefusal {
    /// Redis runs a policy that may evict claim keys.
    #[error(
        "Redis maxmemory-policy is {policy}: {why}, and a match whose claim is evicted is announced again, so the bot refuses to post; run `CONFIG SET maxmemory-policy noeviction` on the server (and set `maxmemory-policy noeviction` in redis.conf so it survives a restart)"
    )]
    Evicts {
        /// The policy Redis reported.
        policy: String,
        /// How that policy reaches claim keys.
        why: &'static str,
    },
    /// Redis refused `CONFIG GET` and the operator asserted nothing.
    #[error(
        "cannot read Redis maxmemory-policy: CONFIG GET answered {reply:?} (managed Redis services often disable CONFIG), so nobody can tell whether claims may be evicted and the bot refuses to post; set the service's eviction policy to noeviction, then set REDIS_EVICTION_POLICY_ASSERTED=noeviction"
    )]
    Unreadable {
        /// Redis' error reply.
        reply: String,
    },
    /// The store did not answer at all.
    #[error("cannot read Redis maxmemory-policy: {0}")]
    Store(#[source] ClaimError),
}

impl ClaimStore {
    /// Whether claims are safe from eviction here: always on the embedded and PostgreSQL
    /// stores; on Redis, when its `maxmemory-policy` is `noeviction`, or cannot be read and
    /// `asserted` (`REDIS_EVICTION_POLICY_ASSERTED=noeviction`). One round trip on Redis.
    ///
    /// # Errors
    /// [`EvictionRefusal`] when the bot must not post: claims may be evicted, nobody can tell,
    /// or Redis did not answer.
    pub async fn eviction_safety(&self, asserted: bool) -> Result<EvictionSafety, EvictionRefusal> {
        let ClaimStore::Redis(redis) = self else {
            return Ok(EvictionSafety::NotEvicting);
        };
        judge(
            redis.maxmemory_policy().await.map_err(EvictionRefusal::Store)?,
            asserted,
        )
    }
}

/// What Redis' answer to `CONFIG GET maxmemory-policy` means for claims. `read` is the policy,
/// or Redis' error reply when it refused the command; `asserted` is
/// `REDIS_EVICTION_POLICY_ASSERTED=noeviction`.
///
/// # Errors
/// [`EvictionRefusal`] when the policy may evict claims, or cannot be read and was not asserted.
pub(super) fn judge(read: Result<String, String>, asserted: bool) -> Result<EvictionSafety, EvictionRefusal> {
    match read {
        Ok(policy) if policy == NO_EVICTION => Ok(EvictionSafety::NoEviction),
        Ok(policy) => {
            let why = if policy.starts_with("volatile-") {
                "when memory is full Redis evicts keys that have a TTL, and every claim key has one"
            } else if policy.starts_with("allkeys-") {
                "when memory is full Redis evicts any key, claim keys included"
            } else {
                "only noeviction is known never to evict a claim key"
            };
            Err(EvictionRefusal::Evicts { policy, why })
        }
        Err(reply) if asserted => Ok(EvictionSafety::Asserted { reply }),
        Err(reply) => Err(EvictionRefusal::Unreadable { reply }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_noeviction_or_an_asserted_unreadable_policy_is_safe() {
        assert_eq!(
            judge(Ok("noeviction".into()), false).ok(),
            Some(EvictionSafety::NoEviction)
        );
        for policy in [
            "volatile-lru",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-random",
            "future-lfu",
        ] {
            let refused = judge(Ok(policy.into()), true).unwrap_err().to_string();
            assert!(
                refused.starts_with(&format!("Redis maxmemory-policy is {policy}: ")),
                "{refused}"
            );
            assert!(refused.contains("CONFIG SET maxmemory-policy noeviction"), "{refused}");
        }
        let reply = "ERR unknown command 'CONFIG'".to_string();
        assert_eq!(
            judge(Err(reply.clone()), true).ok(),
            Some(EvictionSafety::Asserted { reply: reply.clone() })
        );
        let refused = judge(Err(reply), false).unwrap_err().to_string();
        assert!(
            refused.contains("REDIS_EVICTION_POLICY_ASSERTED=noeviction"),
            "{refused}"
        );
    }
}
