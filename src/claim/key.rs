//! The store's keys, typed by what they hold. Every key of the protocol is built here, once,
//! and each store reads what it needs from the type (PostgreSQL: which table, and the match
//! key of a claim row) instead of taking the text apart again.

use crate::cricket::MatchKey;
use std::fmt;

/// What follows the prefix in a claim's key: `<prefix>match:<key>`.
pub(crate) const CLAIM_SEGMENT: &str = "match:";

/// A key of the claim store: its text (what Redis and SQLite see, `<prefix>…`) and what it
/// holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StoreKey {
    text: String,
    kind: KeyKind,
}

/// What a [`StoreKey`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum KeyKind {
    /// A claim record, `<prefix>match:<key>`; the match key starts at byte `at` of the text.
    Claim {
        /// Where the match key starts.
        at: usize,
    },
    /// An identity pointer, `<prefix>id:<identity>`: the match key of the claim that recorded
    /// the identity.
    Identity,
    /// A match's count of failed attempts, `<prefix>attempts:<key>`.
    Attempts,
    /// The first-start marker, `<prefix>store:initialised`.
    Marker,
    /// The deployment's index of unsettled claims (Redis only: see `unsettled.rs`).
    Index,
}

impl StoreKey {
    fn joined(prefix: &str, segment: &str, rest: &str, kind: KeyKind) -> StoreKey {
        // Built by hand, not with `format!`: a cycle's batch look-up makes one per match seen,
        // and the formatting machinery was ~8 % of a held cycle.
        let mut text = String::with_capacity(prefix.len() + segment.len() + rest.len());
        text.push_str(prefix);
        text.push_str(segment);
        text.push_str(rest);
        StoreKey { text, kind }
    }

    /// The key of the claim on `key`: `<prefix>match:<key>`.
    pub(crate) fn claim(prefix: &str, key: &MatchKey) -> StoreKey {
        StoreKey::claim_named(prefix, key.as_str())
    }

    /// The key of the claim on the match key `key` as the store gave it (an identity
    /// pointer's value), not checked as a [`MatchKey`]: a value some other writer left is
    /// only ever looked up, and a key that holds nothing is simply absent.
    pub(crate) fn claim_named(prefix: &str, key: &str) -> StoreKey {
        StoreKey::joined(
            prefix,
            CLAIM_SEGMENT,
            key,
            KeyKind::Claim {
                at: prefix.len() + CLAIM_SEGMENT.len(),
            },
        )
    }

    /// The pointer of `identity` (`cricbuzz:158062`, `key:…`): `<prefix>id:<identity>`.
    pub(crate) fn identity(prefix: &str, identity: &str) -> StoreKey {
        StoreKey::joined(prefix, "id:", identity, KeyKind::Identity)
    }

    /// The failed-attempt count of `key`: `<prefix>attempts:<key>`.
    pub(crate) fn attempts(prefix: &str, key: &MatchKey) -> StoreKey {
        StoreKey::joined(prefix, "attempts:", key.as_str(), KeyKind::Attempts)
    }

    /// The first-start marker: `<prefix>store:initialised`.
    pub(crate) fn marker(prefix: &str) -> StoreKey {
        StoreKey::joined(prefix, "store:initialised", "", KeyKind::Marker)
    }

    /// The deployment's index of unsettled claims, `<root>store:unsettled` (`root`: the
    /// deployment's prefix, every channel's keys under it): a Redis sorted set of claim keys
    /// by the time each is due for a reconciliation (see `unsettled.rs`).
    pub(crate) fn unsettled(root: &str) -> StoreKey {
        StoreKey::joined(root, "store:unsettled", "", KeyKind::Index)
    }

    /// The key's text, as Redis and SQLite store it.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The match key of a claim's key (`None` for every other kind).
    pub(crate) fn match_key(&self) -> Option<&str> {
        match self.kind {
            KeyKind::Claim { at } => self.text.get(at..),
            _ => None,
        }
    }

    /// The prefix of a claim's key, `<prefix>` of `<prefix>match:<key>` (`None` for every
    /// other kind).
    pub(crate) fn claim_prefix(&self) -> Option<&str> {
        match self.kind {
            KeyKind::Claim { at } => self.text.get(..at - CLAIM_SEGMENT.len()),
            _ => None,
        }
    }
}

impl fmt::Display for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl redis::ToRedisArgs for StoreKey {
    fn write_redis_args<W>(&self, out: &mut W)
    where
        W: ?Sized + redis::RedisWrite,
    {
        out.write_arg(self.text.as_bytes());
    }
}

/// A key is one argument: what lets the typed commands (`GET`, `SET … NX`, `EXPIRE`) take it.
impl redis::ToSingleRedisArg for StoreKey {}

/// The name of a claim's record (`<prefix>match:<key>`, as [`StoreKey::claim`] names it),
/// written into a command from its parts: a held cycle's `MGET` names every match of every
/// channel, and building each name as a `String` first cost an allocation and a copy each.
pub(crate) struct RecordName<'a> {
    /// The store's key prefix (a channel's, under the deployment's).
    pub(crate) prefix: &'a str,
    /// The match key.
    pub(crate) key: &'a str,
}

impl redis::ToRedisArgs for RecordName<'_> {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        use std::io::Write;
        let mut arg = out.writer_for_next_arg();
        // A command's buffer is a `Vec`: writing to it cannot fail.
        let _ = arg.write_all(self.prefix.as_bytes());
        let _ = arg.write_all(CLAIM_SEGMENT.as_bytes());
        let _ = arg.write_all(self.key.as_bytes());
    }
}

impl redis::ToSingleRedisArg for RecordName<'_> {}

#[cfg(test)]
mod tests {
    use super::{RecordName, StoreKey};
    use crate::cricket::MatchKey;

    #[test]
    fn each_key_is_its_prefix_a_segment_and_a_name_and_a_claim_key_gives_its_match_back() {
        let key = MatchKey::parse("2026-07-17:india:zimbabwe").unwrap();
        let claim = StoreKey::claim("{bot:}ch:x:", &key);
        assert_eq!(claim.as_str(), "{bot:}ch:x:match:2026-07-17:india:zimbabwe");
        assert_eq!(claim.match_key(), Some("2026-07-17:india:zimbabwe"));
        assert_eq!(claim.claim_prefix(), Some("{bot:}ch:x:"));
        assert_eq!(claim, StoreKey::claim_named("{bot:}ch:x:", key.as_str()));
        let id = StoreKey::identity("bot:", "cricbuzz:158062");
        assert_eq!(
            (id.as_str(), id.match_key(), id.claim_prefix()),
            ("bot:id:cricbuzz:158062", None, None)
        );
        assert_ne!(id, StoreKey::claim_named("bot:", "cricbuzz:158062"));
        assert_eq!(
            StoreKey::attempts("bot:", &key).as_str(),
            "bot:attempts:2026-07-17:india:zimbabwe"
        );
        assert_eq!(StoreKey::marker("bot:").as_str(), "bot:store:initialised");
        assert_eq!(StoreKey::marker("bot:").match_key(), None);
    }

    #[test]
    fn a_record_name_is_written_as_its_claim_key_reads() {
        use redis::ToRedisArgs;
        let key = MatchKey::parse("2026-07-17:india:zimbabwe").unwrap();
        let name = RecordName {
            prefix: "{bot:}ch:x:",
            key: key.as_str(),
        };
        assert_eq!(
            name.to_redis_args(),
            vec![StoreKey::claim("{bot:}ch:x:", &key).as_str().as_bytes().to_vec()]
        );
    }
}
