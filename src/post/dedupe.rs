//! The digest every server-side dedupe key is derived from (Mastodon's `Idempotency-Key`,
//! Bluesky's record key): one per match and channel, the same on every replica and in every
//! release.

use crate::cricket::MatchKey;
use sha2::{Digest, Sha256};

/// SHA-256 of the match key and the channel name, separated by a NUL (which neither holds), so
/// ("a", "bc") and ("ab", "c") differ. Stable across releases and machines: every replica
/// derives the same dedupe key for the same (match, channel).
pub(crate) fn match_channel_digest(key: &MatchKey, channel: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(key.as_str().as_bytes());
    h.update([0u8]);
    h.update(channel.as_bytes());
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_separates_match_from_channel() {
        let k = |s: &str| MatchKey::parse(s).unwrap();
        assert_ne!(match_channel_digest(&k("a"), "bc"), match_channel_digest(&k("ab"), "c"));
        assert_eq!(match_channel_digest(&k("a"), "b"), match_channel_digest(&k("a"), "b"));
    }
}
