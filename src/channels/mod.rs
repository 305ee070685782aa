//! The channels file: where the bot posts. A channel is a sink (x, mastodon, bluesky, discord,
//! telegram) with its settings and credentials, a template, a filter and a pace. This module
//! owns reading and validating the file (TOML) into [`Channels`]; building each channel's
//! client is [`Channel::sink`]; what posting does with them is the announcer's.
//!
//! Secrets are never in the file: a field ending in `_env` names the environment variable that
//! holds one (`token_env = "MASTODON_TOKEN"`), and a secret written inline (`token = "…"`) is
//! refused with the channel and field named, never echoed. The environment is read through the
//! lookup the caller passes (the configuration module is the only reader of the process's
//! environment), so tests pass a map. A command that posts nothing reads only the secrets that
//! are set ([`Secrets::IfSet`]); every value read is checked when the file is read, where the
//! platform documents a shape (a Discord webhook URL, a Telegram bot token), so a dry run
//! refuses what the live run would.
//!
//! ```toml
//! [[channel]]
//! name = "mastodon-main"
//! sink = "mastodon"
//! instance = "https://mastodon.social"
//! token_env = "MASTODON_TOKEN"
//! formats = ["t20i", "odi"]
//! [channel.pace]
//! posts_per_minute = 2
//! posts_per_day = 40
//! ```
//!
//! Every field, per sink, is documented in `deploy/channels.example.toml`.
//!
//! # Layout
//! - `schema.rs`: what a validated channel is ([`Channels`], [`Channel`], [`SinkSettings`]…).
//! - `written.rs`: the file as written (its TOML shape) and the fields each sink takes.
//! - `validate.rs`: reading and checking the file into [`Channels`] ([`Channels::load`]).
//! - `client.rs`: building a channel's client ([`Channel::sink`]).
//! - `error.rs`: [`ChannelsError`], what cannot be used in the file.

mod client;
mod error;
mod schema;
mod validate;
mod written;

pub use error::ChannelsError;
pub use schema::{
    Channel, Channels, Pace, Secrets, SinkSettings, TemplateSource, DEFAULT_BLUESKY_SERVICE, DEFAULT_LANGUAGE,
    DEFAULT_X_BASE,
};
pub use validate::MAX_FILE_BYTES;
