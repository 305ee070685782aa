//! The kinds of sink, as the channels file names them, and how people name each platform.

use std::fmt;

/// The kinds of sink, as the channels file names them (`sink = "mastodon"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// X API v2 (`POST /2/tweets`).
    X,
    /// A Mastodon instance (`POST /api/v1/statuses`).
    Mastodon,
    /// Bluesky or any AT Protocol PDS (`com.atproto.repo.createRecord`).
    Bluesky,
    /// A Discord channel's webhook.
    Discord,
    /// A Telegram chat, through the Bot API (`sendMessage`).
    Telegram,
}

impl SinkKind {
    /// Every kind, in the order the channels file documents them.
    pub const ALL: [SinkKind; 5] = [
        SinkKind::X,
        SinkKind::Mastodon,
        SinkKind::Bluesky,
        SinkKind::Discord,
        SinkKind::Telegram,
    ];

    /// The name used in the channels file and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::X => "x",
            SinkKind::Mastodon => "mastodon",
            SinkKind::Bluesky => "bluesky",
            SinkKind::Discord => "discord",
            SinkKind::Telegram => "telegram",
        }
    }

    /// The kind named `raw` (exact, lower case), if any.
    pub fn parse(raw: &str) -> Option<SinkKind> {
        SinkKind::ALL.into_iter().find(|k| k.as_str() == raw)
    }

    /// The platform's name as people write it, for sentences ("X answered 429", "Mastodon
    /// allows 500").
    pub fn platform(self) -> &'static str {
        match self {
            SinkKind::X => "X",
            SinkKind::Mastodon => "Mastodon",
            SinkKind::Bluesky => "Bluesky",
            SinkKind::Discord => "Discord",
            SinkKind::Telegram => "Telegram",
        }
    }
}

impl fmt::Display for SinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_from_its_name() {
        for k in SinkKind::ALL {
            assert_eq!(SinkKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(SinkKind::parse("twitter"), None);
    }
}
