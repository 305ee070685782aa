//! The channels file as written: its TOML shape, before any check, and the fields each sink
//! takes.

use super::schema::Pace;
use crate::post::SinkKind;
use serde::Deserialize;

/// One `[[channel]]` as written. Fields of every sink are here; which ones a sink takes is
/// checked after, so the error can name the sink that does take a misplaced one.
#[derive(Deserialize)]
pub(super) struct RawChannel {
    pub(super) name: Option<String>,
    pub(super) sink: Option<String>,
    // x
    pub(super) base_url: Option<String>,
    pub(super) api_key_env: Option<String>,
    pub(super) api_secret_env: Option<String>,
    pub(super) access_token_env: Option<String>,
    pub(super) access_token_secret_env: Option<String>,
    // mastodon
    pub(super) instance: Option<String>,
    pub(super) visibility: Option<String>,
    // mastodon, telegram
    pub(super) token_env: Option<String>,
    // mastodon, bluesky
    pub(super) language: Option<String>,
    // x, mastodon, bluesky, telegram
    pub(super) hashtags: Option<bool>,
    // bluesky
    pub(super) service: Option<String>,
    pub(super) handle: Option<String>,
    pub(super) app_password_env: Option<String>,
    // discord
    pub(super) webhook_url_env: Option<String>,
    // telegram
    pub(super) api_base: Option<String>,
    pub(super) chat_id: Option<RawChatId>,
    // every sink
    pub(super) template: Option<String>,
    pub(super) template_path: Option<String>,
    pub(super) announce_before: Option<String>,
    pub(super) timezone: Option<String>,
    pub(super) events: Option<Vec<String>>,
    pub(super) result_template: Option<String>,
    pub(super) result_template_path: Option<String>,
    pub(super) result_without_announcement: Option<String>,
    #[serde(default)]
    pub(super) teams: Vec<String>,
    #[serde(default)]
    pub(super) exclude_teams: Vec<String>,
    #[serde(default)]
    pub(super) series: Vec<String>,
    #[serde(default)]
    pub(super) exclude_series: Vec<String>,
    #[serde(default)]
    pub(super) formats: Vec<String>,
    #[serde(default)]
    pub(super) exclude_formats: Vec<String>,
    pub(super) states: Option<Vec<String>>,
    pub(super) pace: Option<Pace>,
    /// Whatever else was written: refused, as an inline secret or an unknown field. Values are
    /// never printed.
    #[serde(flatten)]
    pub(super) rest: toml::Table,
}

/// `chat_id` as written: a number, or text (`@channelname`, or a number in quotes).
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawChatId {
    Number(i64),
    Text(String),
}

/// The whole file: its `[[channel]]` tables, nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) channel: Vec<RawChannel>,
}

/// The fields each sink takes besides the common ones.
pub(super) fn sink_fields(kind: SinkKind) -> &'static [&'static str] {
    match kind {
        SinkKind::X => &[
            "base_url",
            "api_key_env",
            "api_secret_env",
            "access_token_env",
            "access_token_secret_env",
            "hashtags",
        ],
        SinkKind::Mastodon => &["instance", "token_env", "visibility", "language", "hashtags"],
        SinkKind::Bluesky => &["service", "handle", "app_password_env", "language", "hashtags"],
        SinkKind::Discord => &["webhook_url_env"],
        SinkKind::Telegram => &["api_base", "token_env", "chat_id", "hashtags"],
    }
}

/// The fields every channel takes: these, the filter's ([`crate::filter::FIELDS`]), and `pace`.
pub(super) const COMMON_FIELDS: &[&str] = &[
    "name",
    "sink",
    "template",
    "template_path",
    "announce_before",
    "timezone",
    "events",
    "result_template",
    "result_template_path",
    "result_without_announcement",
];

/// Words in a field name that say it would hold a secret.
pub(super) const SECRET_WORDS: &[&str] = &[
    "token",
    "password",
    "secret",
    "webhook",
    "key",
    "credential",
    "bearer",
    "auth",
];
