//! Configuration: the only place that reads the environment (through clap's `env`, after
//! `.env` is loaded). [`Settings`] is what the user typed, one section per file (store,
//! sources, filter, posting, post text, service and logging); clap reads numbers, closed sets
//! and lists into their types as it parses. [`Config`] is the validated, typed result, built
//! section by section. A bad value is a [`ConfigError`] naming the variable.

mod filter;
mod posting;
mod service;
mod sources;
mod store;
mod text;
mod value;

pub use crate::filter::FormatSetting;
pub use filter::{FilterSettings, StateSetting};
pub use posting::{Posting, PostingSettings};
pub use service::{LogSettings, Service, ServiceSettings};
pub use sources::{SourceSettings, Sources};
pub use store::{Store, StoreSettings, DEFAULT_CLAIM_TTL_SECS, MIN_CLAIM_TTL_SECS};
pub use text::{PostText, ShortenerConfig, ShortenerSetting, TextSettings};
pub use value::{Blankable, EnumList, EnumListParser, OrBlank, Whole};

use crate::claim::RedisOptions;
use crate::filter::Filter;
use crate::post::XCredentials;
use secrecy::SecretString;
use std::borrow::Cow;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;
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
    /// Logs.
    #[command(flatten)]
    pub logging: LogSettings,
    /// What only `run` uses.
    #[command(flatten)]
    pub service: ServiceSettings,
}

/// A configuration value that cannot be used. Names the variable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A value that does not parse or is out of range.
    #[error("invalid {var}={value:?}: {problem}")]
    Invalid {
        /// The environment variable (and flag) name.
        var: Cow<'static, str>,
        /// The value given (`(hidden)` for one that may hold a password).
        value: String,
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
    Channels(String),
}

impl ConfigError {
    /// `value` of `var` refused for `problem`.
    pub fn invalid(var: &'static str, value: &str, problem: Problem) -> ConfigError {
        ConfigError::Invalid {
            var: var.into(),
            value: value.to_string(),
            problem,
        }
    }

    /// The value of `var`, which may hold a password, refused for `problem` without showing it.
    pub fn hidden(var: &'static str, problem: Problem) -> ConfigError {
        ConfigError::invalid(var, "(hidden)", problem)
    }
}

/// What is wrong with a value, and what is expected instead.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Problem {
    /// Not a whole number of seconds.
    #[error("expected a whole number of seconds")]
    NotSeconds,
    /// Fewer seconds than the setting's least.
    #[error("must be at least {0} seconds")]
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
    /// A source that cannot be read as `KIND=LOCATION` or `LOCATION` (the source parser's
    /// reason).
    #[error("{0}")]
    Source(String),
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

/// Validated configuration. Holds secrets only as [`SecretString`].
#[derive(Clone)]
pub struct Config {
    /// Claim store.
    pub store: StoreConfig,
    /// Key prefix.
    pub key_prefix: String,
    /// Claim TTL (whole seconds, at least one day).
    pub claim_ttl: Duration,
    /// Poll interval of `run`.
    pub poll_interval: Duration,
    /// Sources to read.
    pub sources: Vec<crate::source::SourceSpec>,
    /// X API base URL.
    pub x_api_base: Url,
    /// X credentials; `None` only in dry run or for commands that do not post.
    pub x_credentials: Option<XCredentials>,
    /// Time bound of one post.
    pub post_timeout: Duration,
    /// Flood cap: most posts per cycle (at least 1).
    pub max_posts_per_cycle: u32,
    /// Attempts before a match is given up (at least 1).
    pub max_post_attempts: u32,
    /// Shortener, if any.
    pub shortener: Option<ShortenerConfig>,
    /// Time bound of one shortening.
    pub shorten_timeout: Duration,
    /// Local pace: posts per minute.
    pub posts_per_minute: NonZeroU32,
    /// Local pace: posts per day.
    pub posts_per_day: NonZeroU32,
    /// Template file; `None`: the built-in template.
    pub template_path: Option<PathBuf>,
    /// Owner name written into claims.
    pub instance_id: String,
    /// Page size cap, bytes.
    pub fetch_max_bytes: usize,
    /// Requests per minute to one host.
    pub fetch_per_host_per_minute: u32,
    /// Which matches are announced.
    pub filter: Filter,
    /// Print posts instead of sending them; write nothing.
    pub dry_run: bool,
    /// In dry run, shorten links too (calls the shortener).
    pub shorten_in_dry_run: bool,
    /// Machine-readable output.
    pub json: bool,
    /// Where `run` serves /metrics and /healthz, if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    /// /healthz fails after this many poll intervals without any source read (at least 1).
    pub health_max_stale_cycles: u32,
    /// How long `run` waits for work in flight after a stop signal.
    pub shutdown_grace: Duration,
    /// Redis options beyond the URL.
    pub redis: RedisOptions,
    /// PEM file of the CAs trusted for PostgreSQL's certificate (`DATABASE_CA_FILE`).
    pub database_ca_file: Option<PathBuf>,
    /// `CHANNELS_FILE`: the channels to announce on; `None`: one X channel from the X settings.
    pub channels: Option<crate::channels::Channels>,
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
        let Store {
            store,
            key_prefix,
            claim_ttl,
            instance_id,
            redis,
            database_ca_file,
        } = settings.store.validate()?;
        let Sources {
            sources,
            fetch_max_bytes,
            fetch_per_host_per_minute,
        } = settings.sources.validate(invocation.sources)?;
        let filter = settings.filter.validate()?;
        let Posting {
            x_api_base,
            x_credentials,
            post_timeout,
            max_posts_per_cycle,
            max_post_attempts,
            posts_per_minute,
            posts_per_day,
            channels,
        } = settings.posting.validate(invocation.needs)?;
        let PostText {
            template_path,
            shortener,
            shorten_timeout,
        } = settings.text.validate()?;
        let Service {
            poll_interval,
            metrics_addr,
            health_max_stale_cycles,
            shutdown_grace,
        } = settings.service.validate()?;
        Ok(Config {
            store,
            key_prefix,
            claim_ttl,
            poll_interval,
            sources,
            x_api_base,
            x_credentials,
            post_timeout,
            max_posts_per_cycle,
            max_post_attempts,
            shortener,
            shorten_timeout,
            posts_per_minute,
            posts_per_day,
            template_path,
            instance_id,
            fetch_max_bytes,
            fetch_per_host_per_minute,
            filter,
            dry_run: invocation.sending != Sending::Live,
            shorten_in_dry_run: invocation.sending == Sending::DryRunShortening,
            json: invocation.printing == Printing::Json,
            metrics_addr,
            health_max_stale_cycles,
            shutdown_grace,
            redis,
            database_ca_file,
            channels,
        })
    }
}

/// An http(s) URL setting.
///
/// # Errors
/// [`ConfigError::Invalid`] when it does not parse or has another scheme; the value is shown
/// without any credentials it carries.
fn http_url(var: &'static str, raw: &str) -> Result<Url, ConfigError> {
    let u = Url::parse(raw.trim()).map_err(|e| ConfigError::invalid(var, raw, Problem::Url(e)))?;
    if !matches!(u.scheme(), "http" | "https") {
        // It parsed: shown without any credentials it carries.
        let shown = crate::source::redacted(&u).to_string();
        return Err(ConfigError::invalid(var, &shown, Problem::NotHttp));
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
