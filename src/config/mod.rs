//! Configuration: the only place that reads the environment (through clap's `env`, after
//! `.env` is loaded). [`Settings`] is what the user typed, one section per file (store,
//! sources, filter, posting, post text, service and logging); clap reads numbers, closed sets
//! and lists into their types as it parses. [`Config`] is the validated, typed result, built
//! section by section. A bad value is a [`ConfigError`] naming the variable.

mod filter;
mod posting;
mod schedule;
mod service;
mod sources;
mod store;
mod text;
mod value;

pub use crate::filter::FormatSetting;
pub use filter::{FilterSettings, StateSetting};
pub use posting::{ChannelList, Posting, PostingSettings, ENVIRONMENT_CHANNEL};
pub use schedule::{Schedule, ScheduleSettings};
pub use service::{LogSettings, Service, ServiceSettings, StatusPage};
pub use sources::{SourceSettings, Sources};
pub use store::{
    Store, StoreSettings, DEFAULT_CLAIM_TTL_SECS, DEFAULT_KEY_PREFIX, DEFAULT_STORE_PATH, MIN_CLAIM_TTL_SECS,
};
pub use text::{PostText, ShortenerConfig, ShortenerSetting, TextSettings};
pub use value::{Blankable, EnumList, EnumListParser, OrBlank, Reads, Whole};

use crate::filter::Filter;
use crate::redact::ShownValue;
use secrecy::SecretString;
use std::borrow::Cow;
use std::path::PathBuf;
use url::Url;

/// The longest duration any setting accepts: ten years, far beyond any sensible value, and far
/// from where adding margins or jitter to it could overflow.
pub const MAX_SECS: u64 = 10 * 365 * 24 * 3600;

/// Raw settings from flags and environment variables (and `.env`), one section each. Each flag
/// has the variable named in its help; the flag wins over the variable.
#[derive(clap::Args, Clone)]
pub struct Settings {
    /// The claim store.
    #[command(flatten)]
    pub store: StoreSettings,
    /// The sources and fetching.
    #[command(flatten)]
    pub sources: SourceSettings,
    /// Which matches are announced.
    #[command(flatten)]
    pub filter: FilterSettings,
    /// X and the bounds on posting.
    #[command(flatten)]
    pub posting: PostingSettings,
    /// The template and the link shortener.
    #[command(flatten)]
    pub text: TextSettings,
    /// When matches are announced, and the time zone posts tell their start in.
    #[command(flatten)]
    pub schedule: ScheduleSettings,
    /// Logs.
    #[command(flatten)]
    pub logging: LogSettings,
    /// What only `run` uses.
    #[command(flatten)]
    pub service: ServiceSettings,
}

/// A configuration value that cannot be used. Names the variable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value that does not parse or is out of range.
    #[error("invalid {var}={value}: {problem}")]
    Invalid {
        /// The environment variable (and flag) name.
        var: Cow<'static, str>,
        /// The value given, as it may be shown ([`crate::redact::setting_value`]): echoed when
        /// it cannot be a secret, a URL without its credentials, else described by its length.
        value: ShownValue,
        /// What is wrong and what is expected.
        problem: Problem,
    },
    /// Two settings that exclude each other are both set.
    #[error("{first} and {second} are both set: {why}")]
    Conflict {
        /// The first variable.
        first: &'static str,
        /// The second variable.
        second: &'static str,
        /// Why only one may be set.
        why: &'static str,
    },
    /// A required value is missing.
    #[error("{var} is not set: {why}")]
    Missing {
        /// The environment variable name.
        var: &'static str,
        /// Why it is needed here.
        why: &'static str,
    },
    /// `CHANNELS_FILE` cannot be used: the channels file's own error (naming the file, the
    /// channel and the field, and what to do).
    #[error("CHANNELS_FILE: {0}")]
    Channels(Box<crate::channels::ChannelsError>),
}

impl ConfigError {
    /// `value` of `var` refused for `problem`; the value shown as
    /// [`crate::redact::setting_value`] allows.
    pub fn invalid(var: impl Into<Cow<'static, str>>, value: &str, problem: Problem) -> ConfigError {
        let var = var.into();
        ConfigError::Invalid {
            value: crate::redact::setting_value(&var, value),
            var,
            problem,
        }
    }

    /// The value of `var`, which may hold a password, refused for `problem` without showing it.
    pub fn hidden(var: &'static str, problem: Problem) -> ConfigError {
        ConfigError::Invalid {
            var: var.into(),
            value: ShownValue::Hidden,
            problem,
        }
    }
}

/// What is wrong with a value, and what is expected instead.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// Not a whole number of seconds.
    #[error("expected a whole number of seconds")]
    NotSeconds,
    /// Fewer seconds than the setting's least.
    #[error("must be at least {} {}", .0, if *.0 == 1 { "second" } else { "seconds" })]
    TooFewSeconds(u64),
    /// More seconds than [`MAX_SECS`].
    #[error("must be at most {MAX_SECS} seconds (ten years)")]
    TooManySeconds,
    /// Not a whole number of milliseconds, at least 1.
    #[error("expected a whole number of milliseconds, at least 1")]
    NotMilliseconds,
    /// Not a whole number, at least 1 (or too large for one).
    #[error("expected a whole number, at least 1")]
    NotCount,
    /// Not a size in bytes, at least 1.
    #[error("expected a positive whole number of bytes")]
    NotBytes,
    /// A URL that does not parse.
    #[error("{0}")]
    Url(url::ParseError),
    /// A URL of a scheme other than http(s).
    #[error("expected an http(s) URL")]
    NotHttp,
    /// A `DATABASE_URL` of another scheme.
    #[error("expected postgres:// or postgresql://")]
    NotPostgresUrl,
    /// A `DATABASE_URL` whose `sslmode` libpq does not know (as it may be shown:
    /// [`crate::redact::setting_value`]).
    #[error("sslmode={0} is not one of disable, prefer, require, verify-ca, verify-full")]
    SslMode(ShownValue),
    /// A `REDIS_URL` of another scheme.
    #[error("expected redis://, rediss:// (TLS), valkey://, valkeys:// (TLS), unix:// or redis+sentinel://")]
    NotRedisUrl,
    /// A TLS Sentinel URL (`rediss+sentinel://`), which the Redis connection does not support.
    #[error("TLS through Sentinel is not supported yet: use redis+sentinel:// on a private network, or rediss:// to the primary")]
    TlsThroughSentinel,
    /// A `redis+sentinel://` URL that cannot be read (the reason never repeats a password).
    #[error("{0}")]
    SentinelUrl(String),
    /// Not an HTTP header name.
    #[error("not a valid HTTP header name")]
    NotHeaderName,
    /// A key prefix that would make keys hard to type and read back.
    #[error("must not contain whitespace or control characters")]
    KeyPrefixChars,
    /// Not `IP:PORT`.
    #[error("{0}; expected IP:PORT, e.g. 127.0.0.1:9464")]
    NotSocketAddress(std::net::AddrParseError),
    /// A CA file for a Redis reached without TLS.
    #[error("applies to a TLS REDIS_URL only (rediss:// or valkeys://)")]
    CaFileWithoutTls,
    /// An eviction policy other than `noeviction` asserted.
    #[error(
        "only noeviction can be asserted: any other policy may evict claim keys, and the bot refuses to post under it"
    )]
    EvictionPolicy,
    /// Replica acknowledgement asked of a store that is not Redis.
    #[error("applies to Redis (REDIS_URL) only; PostgreSQL's synchronous replication is the server's setting (synchronous_standby_names)")]
    ReplicasWithoutRedis,
    /// A control character (its position, from 1) in text shown in logs and tables.
    #[error("character {0} is a control character; use printable text")]
    ControlCharacter(usize),
    /// An empty list of states.
    #[error("no state given: nothing would ever be announced (default: upcoming,live)")]
    NoStates,
    /// A `LINK_PREFERENCE` naming something that is no site with match pages.
    #[error(transparent)]
    Link(crate::cricket::LinkError),
    /// A lead time that cannot be read (see [`crate::schedule::Lead::parse`]).
    #[error("{0}")]
    Lead(String),
    /// An `EVENTS` entry that names no event, or a `RESULT_MAX_AGE` that is no duration.
    #[error("{0}")]
    Events(String),
    /// A time zone the IANA database does not know (see [`crate::zone::Zone::parse`]).
    #[error("{0}")]
    Zone(String),
    /// Not an RFC 3339 instant.
    #[error("expected an RFC 3339 time such as 2024-06-16T06:00:00Z")]
    NotInstant,
    /// A source that cannot be read as `KIND=LOCATION` or `LOCATION`: the source parser's own
    /// error (an unknown kind, a bad URL, a CSS profile that cannot be loaded).
    #[error(transparent)]
    Source(Box<crate::source::SpecError>),
}

/// Where claims are kept.
#[derive(Clone)]
pub enum StoreConfig {
    /// Redis at this URL (may hold a password, hence secret).
    Redis(SecretString),
    /// SQLite file at this path.
    Embedded(PathBuf),
    /// PostgreSQL at this URL (may hold a password, hence secret).
    Postgres(SecretString),
}

/// Validated configuration, one section per settings section. Holds secrets only as
/// [`SecretString`].
#[derive(Clone)]
pub struct Config {
    /// The claim store: where, under which prefix, for how long, as whom.
    pub store: Store,
    /// The sources to read and the bounds on fetching them.
    pub sources: Sources,
    /// Which matches are announced.
    pub filter: Filter,
    /// X, the channels file, and the bounds on posting.
    pub posting: Posting,
    /// The template and the link shortener.
    pub text: PostText,
    /// When matches are announced (the lead time), the time zone of their start, and the
    /// instant a dry run judges time as (`--as-of`).
    pub schedule: Schedule,
    /// What only `run` uses: the poll interval, the operator's endpoint, shutdown.
    pub service: Service,
    /// Whether posts are sent or printed.
    pub sending: Sending,
    /// How the command prints its results.
    pub printing: Printing,
}

impl Config {
    /// The longest a post's send can take after its claim: the shortener's time-out (when
    /// `SHORTENER` is set; shortening comes between the claim and the post) plus the post's.
    pub fn send_bound(&self) -> std::time::Duration {
        let shortening = match self.text.shortener {
            Some(_) => self.text.shorten_timeout,
            None => std::time::Duration::ZERO,
        };
        self.posting.post_timeout + shortening
    }

    /// Whether this is a dry run: posts printed, nothing written.
    pub fn dry_run(&self) -> bool {
        self.sending != Sending::Live
    }

    /// Whether a dry run shortens links too (`--dry-run --shorten`; calls the shortener).
    pub fn shorten_in_dry_run(&self) -> bool {
        self.sending == Sending::DryRunShortening
    }

    /// Whether results are printed as JSON lines (`--json`).
    pub fn json(&self) -> bool {
        self.printing == Printing::Json
    }

    /// The clock this command judges time by: the system's, or one reading `--as-of` at start.
    pub fn clock(&self) -> crate::clock::Clock {
        self.schedule
            .as_of
            .map_or_else(crate::clock::Clock::system, crate::clock::Clock::from)
    }
}

/// What the command needs of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Posting (`run`, `backfill` without `--dry-run`): X credentials are required.
    Posting,
    /// Reading only (dry run, `claims`): no X credentials needed.
    NoPosting,
}

/// Whether posts are sent or printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sending {
    /// Posts are sent, claims written.
    Live,
    /// Posts are printed, nothing written; links as they are.
    DryRun,
    /// Posts are printed, nothing written; links shortened (`--dry-run --shorten`).
    DryRunShortening,
}

/// How the command prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printing {
    /// For people.
    Text,
    /// One JSON object per line (`--json`).
    Json,
}

/// What the command line asks beyond the settings: the `--source` flags, whether the command
/// posts, sends or prints, and how it prints.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// `--source` values; when given, they replace `SOURCES`.
    pub sources: &'a [String],
    /// Whether the command posts (and so needs X credentials).
    pub needs: Needs,
    /// Live or dry run.
    pub sending: Sending,
    /// Text or JSON.
    pub printing: Printing,
}

impl<'a> Invocation<'a> {
    /// A live command printing text, reading `sources` (or `SOURCES` when empty).
    pub fn new(sources: &'a [String], needs: Needs) -> Invocation<'a> {
        Invocation {
            sources,
            needs,
            sending: Sending::Live,
            printing: Printing::Text,
        }
    }
}

impl Config {
    /// Validates `settings`, section by section, for the command `invocation` describes.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first variable that is invalid, or missing for what the
    /// command needs.
    pub fn from_settings(settings: &Settings, invocation: Invocation<'_>) -> Result<Config, ConfigError> {
        Ok(Config {
            store: settings.store.validate()?,
            sources: settings.sources.validate(invocation.sources)?,
            filter: settings.filter.validate()?,
            posting: settings.posting.validate(invocation.needs)?,
            text: settings.text.validate()?,
            schedule: settings.schedule.validate(),
            service: settings.service.validate()?,
            sending: invocation.sending,
            printing: invocation.printing,
        })
    }
}

/// An http(s) URL setting.
///
/// # Errors
/// [`ConfigError::Invalid`] when it does not parse or has another scheme; the value is shown
/// without any credentials it carries.
fn http_url(var: &'static str, raw: &str) -> Result<Url, ConfigError> {
    // Shown without any credentials it carries, whether it parses or not.
    let u = Url::parse(raw.trim()).map_err(|e| ConfigError::invalid(var, raw, Problem::Url(e)))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(ConfigError::invalid(var, raw, Problem::NotHttp));
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::{http_url, Settings, DEFAULT_CLAIM_TTL_SECS};
    use clap::Parser;
    use std::time::Duration;

    #[derive(Parser)]
    struct Only {
        #[command(flatten)]
        settings: Settings,
    }

    #[test]
    fn the_defaults_clap_shows_are_the_constants_the_code_uses() {
        let s = Only::try_parse_from(["x"]).unwrap().settings;
        assert_eq!(s.store.claim_ttl_secs, Duration::from_secs(DEFAULT_CLAIM_TTL_SECS));
        assert_eq!(s.sources.fetch_max_bytes, crate::source::fetch::DEFAULT_MAX_BYTES);
        assert_eq!(
            s.sources.fetch_per_host_per_minute,
            crate::source::fetch::DEFAULT_PER_HOST_PER_MINUTE
        );
    }

    #[test]
    fn a_blank_key_prefix_is_the_default_and_one_second_is_singular() {
        let s = Only::try_parse_from(["x", "--key-prefix", " "]).unwrap().settings;
        assert_eq!(s.store.validate().unwrap().key_prefix, super::DEFAULT_KEY_PREFIX);
        let s = Only::try_parse_from(["x", "--key-prefix", "club:"]).unwrap().settings;
        assert_eq!(s.store.validate().unwrap().key_prefix, "club:");
        assert_eq!(
            super::Problem::TooFewSeconds(1).to_string(),
            "must be at least 1 second"
        );
        assert_eq!(
            super::Problem::TooFewSeconds(60).to_string(),
            "must be at least 60 seconds"
        );
    }

    #[test]
    fn a_refused_url_setting_is_named_without_its_credentials() {
        let e = http_url("X_API_BASE_URL", "ftp://u:pw_SECRET@example.com/")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("X_API_BASE_URL") && e.contains("expected an http(s) URL"),
            "{e}"
        );
        assert!(!e.contains("pw_SECRET") && !e.contains("u:"), "{e}");
    }
}
