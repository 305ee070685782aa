//! Why the bot could not be assembled: one error type for every part [`App::build`](super::App::build),
//! `check-sources` and the store's opening make, each naming the setting to fix.

use crate::channels::ChannelsError;
use crate::claim::{ClaimError, EvictionRefusal};
use crate::template::TemplateError;

/// A part of the bot that cannot be made from the configuration. Each message names the
/// setting (or channel) that caused it; the cause, when there is one, is its [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Neither `SOURCES` nor `--source` names a source.
    #[error("no sources: set SOURCES or pass --source (KIND=LOCATION or LOCATION)")]
    NoSources,
    /// `TEMPLATE_PATH` cannot be read or compiled.
    #[error("TEMPLATE_PATH")]
    Template(#[source] TemplateError),
    /// The store named by `REDIS_URL`, `DATABASE_URL` or `STORE_PATH` cannot be opened.
    #[error("cannot {what}")]
    Store {
        /// What was being done, naming the setting: `connect to REDIS_URL`, `open the
        /// embedded store STORE_PATH=…`.
        what: String,
        /// The store's answer.
        #[source]
        source: ClaimError,
    },
    /// The store may evict claims (or will not say): posting would risk a second announcement.
    #[error(transparent)]
    Eviction(#[from] EvictionRefusal),
    /// Claims written by an earlier release could not have their identities recorded.
    #[error("cannot record the identities of existing claims")]
    Identities(#[source] ClaimError),
    /// An HTTP client cannot be built (its TLS roots cannot be loaded).
    #[error("cannot build the HTTP client of the {what}")]
    HttpClient {
        /// Whose client: `sources`, `shortener`.
        what: &'static str,
        /// reqwest's reason.
        #[source]
        source: reqwest::Error,
    },
    /// The X client of the environment's X account (no channels file) cannot be made (a base
    /// URL that cannot take the API path, or no HTTP client).
    #[error("cannot make the X client")]
    X(#[source] Box<ChannelsError>),
    /// A channel of `CHANNELS_FILE` whose template cannot be read or compiled.
    #[error("channel {channel} in CHANNELS_FILE")]
    ChannelTemplate {
        /// The channel's name.
        channel: String,
        /// The template's error.
        #[source]
        source: TemplateError,
    },
    /// A channel of `CHANNELS_FILE` whose sink cannot be made.
    #[error("channel {channel} in CHANNELS_FILE")]
    ChannelSink {
        /// The channel's name.
        channel: String,
        /// The channels file's error (boxed: it is large, and start-up errors are rare).
        #[source]
        source: Box<ChannelsError>,
    },
}
