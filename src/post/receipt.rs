//! What a sink returns for a created post ([`Receipt`]), whichever the platform.

use super::kind::SinkKind;
use super::pace::RateLimits;

/// What a sink returned for a created post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The sink that took the post.
    pub sink: SinkKind,
    /// The platform's id of the post: tweet id, Mastodon status id, Bluesky `at://` URI,
    /// Discord message id, Telegram message id.
    pub id: String,
    /// Where people see the post, when the platform says (Mastodon `url`).
    pub url: Option<String>,
    /// The server-side dedupe key that was sent (Mastodon `Idempotency-Key`, Bluesky record
    /// key), so the announcer can record it in the claim; `None` where the platform has none.
    pub dedupe_key: Option<String>,
    /// The rate-limit headers of the answer, when it carried any.
    pub limits: Option<RateLimits>,
    /// The post's content hash, where the platform names posts by address and hash (Bluesky's
    /// record CID, which a reply to the post must name); `None` elsewhere.
    pub cid: Option<String>,
}

impl Receipt {
    /// Logs that the post was made, its id named as its platform names it (a tweet on X).
    pub fn log_posted(&self) {
        match self.sink {
            SinkKind::X => tracing::info!(tweet_id = %self.id, "posted"),
            // A platform that gives no link (Bluesky, Telegram) leaves the field out, not empty.
            _ => tracing::info!(post_id = %self.id, url = self.url.as_deref(), "posted"),
        }
    }
}
