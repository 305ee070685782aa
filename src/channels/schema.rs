//! What a validated channels file holds: the channels, each a sink with its settings and
//! secrets, a template, a filter and a pace; and whether a command needs the secrets.

use crate::filter::Filter;
use crate::post::mastodon::Visibility;
use crate::post::telegram::ChatId;
use crate::post::{SinkKind, XCredentials};
use crate::schedule::Lead;
use crate::zone::Zone;
use secrecy::SecretString;
use serde::Deserialize;
use std::num::NonZeroU32;
use std::path::PathBuf;
use url::Url;

/// The X API when a channel does not set `base_url`.
pub const DEFAULT_X_BASE: &str = "https://api.x.com";

/// The Bluesky entryway when a channel does not set `service`.
pub const DEFAULT_BLUESKY_SERVICE: &str = "https://bsky.social";

/// The language a Mastodon or Bluesky channel's posts are tagged with (Mastodon's `language`,
/// Bluesky's `langs`) when it does not set `language`: the built-in templates write English.
pub const DEFAULT_LANGUAGE: &str = "en";

/// Every channel of the file, in file order, validated.
#[derive(Debug, Clone)]
pub struct Channels {
    /// The file they were read from.
    pub path: PathBuf,
    /// The channels, names unique.
    pub channels: Vec<Channel>,
}

/// One channel: where and how one announcement is posted.
#[derive(Debug, Clone)]
pub struct Channel {
    /// Unique name (`[a-z0-9_-]`, at most 64 bytes): the channel's part of its claims, metrics
    /// and logs, and of the Mastodon idempotency key and Bluesky record key.
    pub name: String,
    /// The sink and its settings, secrets resolved from the environment.
    pub sink: SinkSettings,
    /// The channel's own template; `None` uses the bot's (`TEMPLATE_PATH` or the built-in one).
    pub template: Option<TemplateSource>,
    /// Which matches this channel announces (the default: upcoming and live, any team).
    pub filter: Filter,
    /// The channel's local pace; `None` uses the bot's (`POSTS_PER_MINUTE`, `POSTS_PER_DAY`).
    pub pace: Option<Pace>,
    /// When the channel announces a match (`announce_before`: a lead time, or `off` for first
    /// sighting); `None` uses the bot's (`ANNOUNCE_BEFORE`).
    pub announce_before: Option<Lead>,
    /// The time zone the channel's posts tell the start in (`timezone`); `None` uses the
    /// bot's (`TIMEZONE`).
    pub timezone: Option<Zone>,
    /// What the channel posts of a match (`events`); `None` uses the bot's (`EVENTS`).
    pub events: Option<Vec<crate::event::Event>>,
    /// The channel's own result template (`result_template`, `result_template_path`); `None`
    /// uses the built-in `templates/result.txt`.
    pub result_template: Option<TemplateSource>,
    /// What a result without an announcement on this channel gets
    /// (`result_without_announcement`, default `post`).
    pub result_without_announcement: crate::event::WithoutAnnouncement,
    /// `hashtags = true`: the built-in templates add the match's hashtags (`#INDvAUS
    /// #T20WorldCup`, see [`crate::hashtags`]) on their own line. X, Mastodon, Bluesky (as tag
    /// facets) and Telegram take it; off by default, so a channel's posts stay as they were.
    pub hashtags: bool,
    /// The variables this channel names that were not set, read with [`Secrets::IfSet`]
    /// (names only, never values): a command that posts nothing does not need them, and the
    /// channel cannot post without them.
    pub unset_secrets: Vec<String>,
}

/// Where a channel's template comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateSource {
    /// `template_path`: a file, relative paths resolved from the channels file's directory.
    Path(PathBuf),
    /// `template`: the template text itself.
    Inline(String),
}

/// A channel's local pace (`[channel.pace]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pace {
    /// Most posts per minute on this channel.
    pub posts_per_minute: NonZeroU32,
    /// Most posts per day on this channel.
    pub posts_per_day: NonZeroU32,
}

/// A sink's settings, with its secrets read from the environment.
#[derive(Debug, Clone)]
pub enum SinkSettings {
    /// X API v2.
    X {
        /// `base_url` (default [`DEFAULT_X_BASE`]).
        base_url: Url,
        /// From `api_key_env`, `api_secret_env`, `access_token_env`, `access_token_secret_env`
        /// (defaults `X_API_KEY`, `X_API_SECRET`, `X_ACCESS_TOKEN`, `X_ACCESS_TOKEN_SECRET`);
        /// `None` when one was not set and the command posts nothing ([`Secrets::IfSet`]).
        credentials: Option<XCredentials>,
    },
    /// A Mastodon account.
    Mastodon {
        /// `instance`: the server's URL.
        instance: Url,
        /// From `token_env`: an access token with `write:statuses` (`None`: not set, and the
        /// command posts nothing).
        token: Option<SecretString>,
        /// `visibility` (the account's default when unset).
        visibility: Option<Visibility>,
        /// `language`, ISO 639 (default [`DEFAULT_LANGUAGE`]).
        language: Option<String>,
    },
    /// A Bluesky account.
    Bluesky {
        /// `service` (default [`DEFAULT_BLUESKY_SERVICE`]).
        service: Url,
        /// `handle`: the handle (or DID) that logs in.
        handle: String,
        /// From `app_password_env`: an app password (Settings → App passwords), never the
        /// account's password (`None`: not set, and the command posts nothing).
        app_password: Option<SecretString>,
        /// `language`, ISO 639, the `langs` of each post (default [`DEFAULT_LANGUAGE`]).
        language: Option<String>,
    },
    /// A Discord channel's webhook.
    Discord {
        /// From `webhook_url_env`: the whole webhook URL (it is the credential), checked to be
        /// a webhook URL's shape (`None`: not set, and the command posts nothing).
        webhook_url: Option<SecretString>,
    },
    /// A Telegram chat.
    Telegram {
        /// `api_base` (default [`DEFAULT_API_BASE`](crate::post::telegram::DEFAULT_API_BASE)).
        api_base: Url,
        /// From `token_env`: the bot's token from @BotFather, checked to be a token's shape
        /// (`None`: not set, and the command posts nothing).
        bot_token: Option<SecretString>,
        /// `chat_id`: a number or `@channelname`.
        chat_id: ChatId,
    },
}

impl SinkSettings {
    /// The kind of sink.
    pub fn kind(&self) -> SinkKind {
        match self {
            SinkSettings::X { .. } => SinkKind::X,
            SinkSettings::Mastodon { .. } => SinkKind::Mastodon,
            SinkSettings::Bluesky { .. } => SinkKind::Bluesky,
            SinkSettings::Discord { .. } => SinkKind::Discord,
            SinkSettings::Telegram { .. } => SinkKind::Telegram,
        }
    }
}

impl Channel {
    /// Whether every secret the channel names was read: only then can it post.
    pub fn has_secrets(&self) -> bool {
        self.unset_secrets.is_empty()
    }
}

/// Whether a command needs the channels' secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// The command posts or asks the platforms (`run`, `backfill`, `claims reconcile`): every
    /// variable a channel names must be set.
    Required,
    /// The command posts nothing (a dry run, `seed`, `check-sources`, `claims list`…): a
    /// variable that is set is read and its value checked; one that is not is listed in
    /// [`Channel::unset_secrets`] and the channel cannot post.
    IfSet,
}
