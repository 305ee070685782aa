//! Configuration: the only place that reads the environment (through clap's `env`, after
//! `.env` is loaded). [`Settings`] is what the user typed; [`Config`] is the validated, typed
//! result. A bad value is a [`ConfigError`] naming the variable.

use crate::claim::RedisOptions;
use crate::cricket::MatchState;
use crate::filter::Filter;
use crate::post::XCredentials;
use crate::shorten::Provider;
use crate::source::fetch::ApiKey;
use crate::source::{SourceKind, SourceSpec};
use crate::telemetry::LogFormat;
use secrecy::{ExposeSecret, SecretString};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use url::Url;

/// Default claim TTL: ten days, so a five-day Test listed before and after play stays claimed.
pub const DEFAULT_CLAIM_TTL_SECS: u64 = 10 * 24 * 3600;
/// The shortest claim TTL accepted: one day. A shorter one would let a match still on the page
/// expire and be announced again.
pub const MIN_CLAIM_TTL_SECS: u64 = 24 * 3600;

/// Raw settings from flags and environment variables (and `.env`). Each flag has the variable
/// named in its help; the flag wins over the variable.
#[derive(clap::Args, Clone)]
pub struct Settings {
    /// Redis URL, e.g. redis://host:6379/0 or redis://:PASSWORD@host:6379/0. Unset (and no DATABASE_URL): the embedded SQLite store.
    #[arg(long, env = "REDIS_URL", hide_env_values = true, global = true)]
    pub redis_url: Option<String>,
    /// PostgreSQL URL, e.g. postgres://USER:PASSWORD@host:5432/db: the ledger store. Not with REDIS_URL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<String>,
    /// Embedded store file, used when neither REDIS_URL nor DATABASE_URL is set.
    #[arg(long, env = "STORE_PATH", default_value = "cricket-announcer.db", global = true)]
    pub store_path: PathBuf,
    /// Prefix of every store key (keys are PREFIXmatch:MATCH_KEY).
    #[arg(long, env = "KEY_PREFIX", default_value = "cricket-announcer:", global = true)]
    pub key_prefix: String,
    /// Claim time to live, seconds (at least 86400).
    #[arg(long, env = "CLAIM_TTL_SECS", default_value_t = DEFAULT_CLAIM_TTL_SECS.to_string(), global = true)]
    pub claim_ttl_secs: String,
    /// Seconds between polls in `run`.
    #[arg(long, env = "POLL_INTERVAL_SECS", default_value = "300", global = true)]
    pub poll_interval_secs: String,
    /// Sources, separated by commas or whitespace: KIND=LOCATION or LOCATION (URL or file).
    // A source URL may carry a password or a key: its value is never shown in --help.
    #[arg(
        long,
        env = "SOURCES",
        default_value = "",
        hide_default_value = true,
        hide_env_values = true,
        global = true
    )]
    pub sources: String,
    /// X API base URL.
    #[arg(
        long,
        env = "X_API_BASE_URL",
        default_value = "https://api.x.com",
        hide_env_values = true,
        global = true
    )]
    pub x_api_base_url: String,
    /// X consumer key (OAuth 1.0a).
    #[arg(long, env = "X_API_KEY", hide_env_values = true, global = true)]
    pub x_api_key: Option<String>,
    /// X consumer secret.
    #[arg(long, env = "X_API_SECRET", hide_env_values = true, global = true)]
    pub x_api_secret: Option<String>,
    /// X access token of the posting account.
    #[arg(long, env = "X_ACCESS_TOKEN", hide_env_values = true, global = true)]
    pub x_access_token: Option<String>,
    /// X access token secret.
    #[arg(long, env = "X_ACCESS_TOKEN_SECRET", hide_env_values = true, global = true)]
    pub x_access_token_secret: Option<String>,
    /// Most posts in one cycle (flood cap); the rest wait, unclaimed, for later cycles.
    #[arg(long, env = "MAX_POSTS_PER_CYCLE", default_value = "5", global = true)]
    pub max_posts_per_cycle: String,
    /// Failures proving nothing was posted (e.g. X 400/429) after which a match is given up.
    #[arg(long, env = "MAX_POST_ATTEMPTS", default_value = "3", global = true)]
    pub max_post_attempts: String,
    /// Seconds a post to X may take; past it the outcome is unknown and the claim is kept.
    #[arg(long, env = "POST_TIMEOUT_SECS", default_value = "30", global = true)]
    pub post_timeout_secs: String,
    /// Most posts per minute (local pace, on top of X's own limits).
    #[arg(long, env = "POSTS_PER_MINUTE", default_value = "5", global = true)]
    pub posts_per_minute: String,
    /// Most posts per day (local pace; set it to your X plan's daily limit or below).
    #[arg(long, env = "POSTS_PER_DAY", default_value = "50", global = true)]
    pub posts_per_day: String,
    /// Seconds a shortener may take before the long link is used.
    #[arg(long, env = "SHORTEN_TIMEOUT_SECS", default_value = "5", global = true)]
    pub shorten_timeout_secs: String,
    /// Link shortener.
    #[arg(long, env = "SHORTENER", value_enum, ignore_case = true, default_value_t = ShortenerSetting::None, global = true)]
    pub shortener: ShortenerSetting,
    /// Shortener base URL (default: the provider's own).
    #[arg(long, env = "SHORTENER_BASE_URL", hide_env_values = true, global = true)]
    pub shortener_base_url: Option<String>,
    /// Bitly access token (SHORTENER=bitly).
    #[arg(long, env = "BITLY_TOKEN", hide_env_values = true, global = true)]
    pub bitly_token: Option<String>,
    /// Post template file (minijinja). Unset: the built-in template (templates/announce.txt of
    /// the source tree, compiled into the binary).
    // A string, not a path: a blank value (`TEMPLATE_PATH=` in .env) means unset.
    #[arg(long, env = "TEMPLATE_PATH", global = true)]
    pub template_path: Option<String>,
    /// This instance's name in claim records (default: HOSTNAME:PID).
    #[arg(long, env = "INSTANCE_ID", global = true)]
    pub instance_id: Option<String>,
    /// Requests per minute to one host (requests to one host never overlap).
    #[arg(long, env = "FETCH_PER_HOST_PER_MINUTE", default_value_t = crate::source::fetch::DEFAULT_PER_HOST_PER_MINUTE.to_string(), global = true)]
    pub fetch_per_host_per_minute: String,
    /// API key for cricbuzz-json sources (sent in CRICBUZZ_API_KEY_HEADER).
    #[arg(long, env = "CRICBUZZ_API_KEY", hide_env_values = true, global = true)]
    pub cricbuzz_api_key: Option<String>,
    /// Header carrying CRICBUZZ_API_KEY (API gateways differ).
    #[arg(
        long,
        env = "CRICBUZZ_API_KEY_HEADER",
        default_value = "X-RapidAPI-Key",
        global = true
    )]
    pub cricbuzz_api_key_header: String,
    /// API key for cricketdata sources (sent as the `apikey` query parameter).
    #[arg(long, env = "CRICKETDATA_API_KEY", hide_env_values = true, global = true)]
    pub cricketdata_api_key: Option<String>,
    /// Announce only matches with a team containing one of these (comma-separated).
    #[arg(long, env = "TEAMS", default_value = "", hide_default_value = true, global = true)]
    pub teams: String,
    /// Never announce matches with a team containing one of these (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_TEAMS",
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_teams: String,
    /// Announce only matches whose series contains one of these (comma-separated).
    #[arg(long, env = "SERIES", default_value = "", hide_default_value = true, global = true)]
    pub series: String,
    /// Never announce matches whose series contains one of these (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_SERIES",
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_series: String,
    /// Announce only these formats (comma-separated).
    #[arg(
        long,
        env = "FORMATS",
        value_parser = EnumList::<FormatSetting>::parser(),
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub formats: EnumList<FormatSetting>,
    /// Never announce these formats (comma-separated).
    #[arg(
        long,
        env = "EXCLUDE_FORMATS",
        value_parser = EnumList::<FormatSetting>::parser(),
        default_value = "",
        hide_default_value = true,
        global = true
    )]
    pub exclude_formats: EnumList<FormatSetting>,
    /// States to announce (comma-separated).
    #[arg(
        long,
        env = "STATES",
        value_parser = EnumList::<StateSetting>::parser(),
        default_value = "upcoming,live",
        global = true
    )]
    pub states: EnumList<StateSetting>,
    /// Largest page accepted from a source, bytes.
    #[arg(long, env = "FETCH_MAX_BYTES", default_value_t = crate::source::fetch::DEFAULT_MAX_BYTES.to_string(), global = true)]
    pub fetch_max_bytes: String,
    /// Log filter (tracing EnvFilter syntax), e.g. info or cricket_announcer=debug.
    #[arg(long = "log", env = "RUST_LOG", default_value = "info", value_parser = crate::telemetry::check_filter, global = true)]
    pub log: String,
    /// Log line format on stderr: text (for people) or json (one object per line, for machines).
    #[arg(long, env = "LOG_FORMAT", value_enum, ignore_case = true, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
    /// Address (IP:PORT) serving Prometheus metrics at /metrics and health at /healthz in
    /// `run`. Unset: no listener.
    #[arg(long, env = "METRICS_ADDR", global = true)]
    pub metrics_addr: Option<String>,
    /// /healthz fails when no source has been read for this many poll intervals.
    #[arg(long, env = "HEALTH_MAX_STALE_CYCLES", default_value = "3", global = true)]
    pub health_max_stale_cycles: String,
    /// Seconds `run` waits, after SIGINT/SIGTERM, for a post in flight to finish and record
    /// its state before exiting anyway.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value = "30", global = true)]
    pub shutdown_grace_secs: String,
    /// Redis only, where CONFIG is disabled (managed Redis): noeviction, asserting that the server never evicts keys (checked in the service's settings). Any other policy may evict claims.
    #[arg(long, env = "REDIS_EVICTION_POLICY_ASSERTED", global = true)]
    pub redis_eviction_policy_asserted: Option<String>,
    /// Redis only: replicas that must hold a claim (WAIT) before its post is sent; unset: none.
    #[arg(long, env = "CLAIM_MIN_REPLICAS", global = true)]
    pub claim_min_replicas: Option<String>,
    /// PEM file of the CA(s) that sign the Redis server's certificate (rediss://); unset: the system's roots.
    #[arg(long, env = "REDIS_CA_FILE", global = true)]
    pub redis_ca_file: Option<String>,
    /// PEM file of the CA(s) that sign the PostgreSQL server's certificate (sslmode=require, verify-ca, verify-full); unset: the system's roots.
    #[arg(long, env = "DATABASE_CA_FILE", global = true)]
    pub database_ca_file: Option<String>,
    /// Testing knob: milliseconds between polls, replacing POLL_INTERVAL_SECS (soak runs and
    /// tests). Hidden: a production poll interval is whole seconds.
    #[arg(long, env = "POLL_INTERVAL_MS", hide = true, global = true)]
    pub poll_interval_ms: Option<String>,
}

/// A link shortener, as `SHORTENER` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShortenerSetting {
    /// No shortener: the match link as it is (also a blank `SHORTENER=`).
    #[value(alias = "off", alias = "")]
    None,
    /// is.gd.
    #[value(alias = "is.gd")]
    Isgd,
    /// Bitly (needs `BITLY_TOKEN`).
    Bitly,
}

/// A match format, as `FORMATS` and `EXCLUDE_FORMATS` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatSetting {
    /// Test match.
    Test,
    /// One Day International.
    Odi,
    /// Twenty20 International.
    T20i,
    /// Domestic or franchise Twenty20.
    T20,
    /// Domestic multi-day cricket.
    #[value(alias = "first class", alias = "firstclass")]
    FirstClass,
    /// Domestic one-day cricket.
    #[value(alias = "list a", alias = "lista")]
    ListA,
    /// The Hundred.
    #[value(alias = "the hundred", alias = "the-hundred")]
    Hundred,
}

impl FormatSetting {
    /// The format's printed name, as [`crate::cricket::Format::label`] gives it (what the
    /// filter compares).
    pub fn label(self) -> &'static str {
        match self {
            FormatSetting::Test => "Test",
            FormatSetting::Odi => "ODI",
            FormatSetting::T20i => "T20I",
            FormatSetting::T20 => "T20",
            FormatSetting::FirstClass => "First-class",
            FormatSetting::ListA => "List A",
            FormatSetting::Hundred => "The Hundred",
        }
    }
}

/// A match state, as `STATES` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StateSetting {
    /// Not started.
    Upcoming,
    /// In play.
    Live,
    /// Finished with a result.
    Complete,
    /// Abandoned or called off.
    Abandoned,
    /// A state the page does not prove (also accepted as `unknown`).
    #[value(alias = "unknown")]
    Other,
}

impl StateSetting {
    /// The match state it names.
    pub fn state(self) -> MatchState {
        match self {
            StateSetting::Upcoming => MatchState::Upcoming,
            StateSetting::Live => MatchState::Live,
            StateSetting::Complete => MatchState::Complete,
            StateSetting::Abandoned => MatchState::Abandoned,
            StateSetting::Other => MatchState::Other,
        }
    }
}

/// A comma-separated list of the values of a closed set (`FORMATS=T20I,ODI`), each checked by
/// clap: an unknown one is a usage error (exit 2) listing the accepted values, so a typo
/// (`T20l`) cannot silently announce nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumList<E>(pub Vec<E>);

impl<E: clap::ValueEnum + Clone + Send + Sync + 'static> EnumList<E> {
    /// The clap parser of such a list.
    pub fn parser() -> EnumListParser<E> {
        EnumListParser(std::marker::PhantomData)
    }
}

/// Parses an [`EnumList`]: split on commas, each item trimmed and read case-insensitively.
#[derive(Clone)]
pub struct EnumListParser<E>(std::marker::PhantomData<E>);

impl<E: clap::ValueEnum + Clone + Send + Sync + 'static> clap::builder::TypedValueParser for EnumListParser<E> {
    type Value = EnumList<E>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<EnumList<E>, clap::Error> {
        let one = clap::builder::EnumValueParser::<E>::new();
        let text = value.to_string_lossy();
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                // Case as typed in the docs ("T20I", "List A") is accepted too.
                E::from_str(item, true).or_else(|_| one.parse_ref(cmd, arg, std::ffi::OsStr::new(item)))
            })
            .collect::<Result<Vec<E>, _>>()
            .map(EnumList)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(E::value_variants().iter().filter_map(E::to_possible_value)))
    }
}

/// A configuration value that cannot be used. Names the variable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A value that does not parse or is out of range.
    #[error("invalid {var}={value:?}: {reason}")]
    Invalid {
        /// The environment variable (and flag) name.
        var: &'static str,
        /// The value given.
        value: String,
        /// What is wrong and what is expected.
        reason: String,
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

/// The shortener to use and where it lives.
#[derive(Clone, Debug)]
pub struct ShortenerConfig {
    /// Which service.
    pub provider: Provider,
    /// Its base URL.
    pub base: Url,
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
    pub sources: Vec<SourceSpec>,
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
    pub posts_per_minute: std::num::NonZeroU32,
    /// Local pace: posts per day.
    pub posts_per_day: std::num::NonZeroU32,
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
}

/// What the command needs of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Posting (`run`, `backfill` without `--dry-run`): X credentials are required.
    Posting,
    /// Reading only (dry run, `claims`): no X credentials needed.
    NoPosting,
}

/// The longest duration any setting accepts: ten years, far beyond any sensible value, and far
/// from where adding margins or jitter to it could overflow.
pub const MAX_SECS: u64 = 10 * 365 * 24 * 3600;

fn secs(var: &'static str, raw: &str, min: u64) -> Result<Duration, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        var,
        value: raw.to_string(),
        reason,
    };
    let n: u64 = raw
        .trim()
        .parse()
        .map_err(|_| invalid("expected a whole number of seconds".into()))?;
    if n < min {
        return Err(invalid(format!("must be at least {min} seconds")));
    }
    if n > MAX_SECS {
        return Err(invalid(format!("must be at most {MAX_SECS} seconds (ten years)")));
    }
    Ok(Duration::from_secs(n))
}

fn count(var: &'static str, raw: &str) -> Result<u32, ConfigError> {
    raw.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ConfigError::Invalid {
            var,
            value: raw.to_string(),
            reason: "expected a whole number, at least 1".into(),
        })
}

fn nonzero(n: u32) -> std::num::NonZeroU32 {
    std::num::NonZeroU32::new(n).unwrap_or(std::num::NonZeroU32::MIN)
}

/// A comma-separated list, trimmed, empty entries dropped.
fn list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn url(var: &'static str, raw: &str) -> Result<Url, ConfigError> {
    let u = Url::parse(raw.trim()).map_err(|e| ConfigError::Invalid {
        var,
        value: raw.to_string(),
        reason: e.to_string(),
    })?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(ConfigError::Invalid {
            var,
            // It parsed: shown without any credentials it carries.
            value: crate::source::redacted(&u).to_string(),
            reason: "expected an http(s) URL".into(),
        });
    }
    Ok(u)
}

fn secret(var: &'static str, value: &Option<String>, needs: Needs) -> Result<Option<SecretString>, ConfigError> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Ok(Some(SecretString::from(v.to_string()))),
        _ if needs == Needs::Posting => Err(ConfigError::Missing {
            var,
            why: "posting to X needs all four X credentials (use --dry-run to try the bot without them)",
        }),
        _ => Ok(None),
    }
}

/// `REDIS_URL` as the Redis client reads it: `redis://`, `rediss://` (TLS), `unix://` and
/// `redis+sentinel://` (a primary found through Sentinel, see `claim::redis_conn`) as given;
/// Valkey's `valkey://`, `valkeys://` and `valkey+sentinel://` (the same protocol:
/// <https://valkey.io/topics/cli/>) as `redis://`, `rediss://` and `redis+sentinel://`.
///
/// # Errors
/// [`ConfigError::Invalid`] for any other scheme (the value is not shown: it may hold a password).
fn redis_url(raw: &str) -> Result<String, ConfigError> {
    if ["rediss+sentinel://", "valkeys+sentinel://"]
        .iter()
        .any(|s| raw.starts_with(s))
    {
        return Err(ConfigError::Invalid {
            var: "REDIS_URL",
            value: "(hidden)".into(),
            reason: "TLS through Sentinel is not supported yet: use redis+sentinel:// on a private network, or rediss:// to the primary".into(),
        });
    }
    for (given, read_as) in [
        ("valkey://", "redis://"),
        ("valkeys://", "rediss://"),
        ("valkey+sentinel://", "redis+sentinel://"),
    ] {
        if let Some(rest) = raw.strip_prefix(given) {
            return Ok(format!("{read_as}{rest}"));
        }
    }
    if ["redis://", "rediss://", "unix://", "redis+sentinel://"]
        .iter()
        .any(|s| raw.starts_with(s))
    {
        return Ok(raw.to_string());
    }
    Err(ConfigError::Invalid {
        var: "REDIS_URL",
        value: "(hidden)".into(),
        reason: "expected redis://, rediss:// (TLS), valkey://, valkeys:// (TLS), unix:// or redis+sentinel://".into(),
    })
}

/// `REDIS_EVICTION_POLICY_ASSERTED`: only `noeviction` may be asserted.
fn eviction_policy_asserted(raw: Option<&str>) -> Result<bool, ConfigError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(false),
        Some(crate::claim::NO_EVICTION) => Ok(true),
        Some(other) => Err(ConfigError::Invalid {
            var: "REDIS_EVICTION_POLICY_ASSERTED",
            value: other.to_string(),
            reason: "only noeviction can be asserted: any other policy may evict claim keys, and the bot refuses to post under it".into(),
        }),
    }
}

/// The owner name written into claims and shown in every skip line and `claims list`: the
/// setting, or `<hostname>:<pid>` when unset or blank.
///
/// # Errors
/// [`ConfigError::Invalid`] when it holds a control character (a newline or an escape code
/// would forge log lines and break `claims list`'s rows).
fn instance_id(raw: Option<&str>) -> Result<String, ConfigError> {
    let Some(id) = raw.map(str::trim).filter(|i| !i.is_empty()) else {
        return Ok(default_instance_id());
    };
    if let Some(at) = id.chars().position(char::is_control) {
        return Err(ConfigError::Invalid {
            var: "INSTANCE_ID",
            // Shown escaped (`{value:?}`), so the error itself cannot forge a line.
            value: id.to_string(),
            reason: format!("character {} is a control character; use printable text", at + 1),
        });
    }
    Ok(id.to_string())
}

/// `<hostname>:<pid>`, the default owner name in claims.
fn default_instance_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}:{}", std::process::id())
}

impl Config {
    /// Validates `settings`. `extra_sources` (from `--source`) replace `SOURCES` when given.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first variable that is invalid, or missing for `needs`.
    pub fn from_settings(
        s: &Settings,
        extra_sources: &[String],
        needs: Needs,
        dry_run: bool,
        shorten_in_dry_run: bool,
        json: bool,
    ) -> Result<Config, ConfigError> {
        let set = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_string)
        };
        let store = match (set(&s.redis_url), set(&s.database_url)) {
            // Guessing which one the operator meant could announce every match again from an
            // empty store: refuse instead.
            (Some(_), Some(_)) => {
                return Err(ConfigError::Conflict {
                    first: "REDIS_URL",
                    second: "DATABASE_URL",
                    why: "choose one claim store (unset the other)",
                })
            }
            (Some(u), None) => StoreConfig::Redis(SecretString::from(redis_url(&u)?)),
            (None, Some(u)) => {
                if !(u.starts_with("postgres://") || u.starts_with("postgresql://")) {
                    return Err(ConfigError::Invalid {
                        var: "DATABASE_URL",
                        value: "(hidden)".into(),
                        reason: "expected postgres:// or postgresql://".into(),
                    });
                }
                StoreConfig::Postgres(SecretString::from(u))
            }
            (None, None) => StoreConfig::Embedded(s.store_path.clone()),
        };
        let raw_sources: Vec<String> = if extra_sources.is_empty() {
            s.sources
                .split(|c: char| c == ',' || c.is_whitespace())
                .map(str::to_string)
                .collect()
        } else {
            extra_sources.to_vec()
        };
        let sources = raw_sources
            .iter()
            .filter(|r| !r.trim().is_empty())
            .map(|r| {
                r.parse::<SourceSpec>().map_err(|reason| ConfigError::Invalid {
                    var: if extra_sources.is_empty() {
                        "SOURCES"
                    } else {
                        "--source"
                    },
                    value: r.clone(),
                    reason,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cricbuzz_key = match s.cricbuzz_api_key.as_deref().map(str::trim) {
            Some(k) if !k.is_empty() => {
                let name = s.cricbuzz_api_key_header.trim().to_string();
                if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(ConfigError::Invalid {
                        var: "CRICBUZZ_API_KEY_HEADER",
                        value: name,
                        reason: "not a valid HTTP header name".into(),
                    });
                }
                Some(ApiKey::Header {
                    name,
                    value: SecretString::from(k.to_string()),
                })
            }
            _ => None,
        };
        let cricketdata_key = s
            .cricketdata_api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(|k| ApiKey::Query {
                name: "apikey".into(),
                value: SecretString::from(k.to_string()),
            });
        let sources = sources
            .into_iter()
            .map(|mut spec| {
                spec.api_key = match spec.kind {
                    Some(SourceKind::CricbuzzJson) => cricbuzz_key.clone(),
                    Some(SourceKind::Cricketdata) => cricketdata_key.clone(),
                    _ => None,
                };
                spec
            })
            .collect();
        if s.states.0.is_empty() {
            return Err(ConfigError::Invalid {
                var: "STATES",
                value: String::new(),
                reason: "no state given: nothing would ever be announced (default: upcoming,live)".into(),
            });
        }
        let labels = |formats: &EnumList<FormatSetting>| formats.0.iter().map(|f| f.label().to_string()).collect();
        let filter = Filter {
            teams: list(&s.teams),
            exclude_teams: list(&s.exclude_teams),
            series: list(&s.series),
            exclude_series: list(&s.exclude_series),
            formats: labels(&s.formats),
            exclude_formats: labels(&s.exclude_formats),
            states: s.states.0.iter().map(|st| st.state()).collect(),
        };
        let x_credentials = {
            let key = secret("X_API_KEY", &s.x_api_key, needs)?;
            let secret_ = secret("X_API_SECRET", &s.x_api_secret, needs)?;
            let token = secret("X_ACCESS_TOKEN", &s.x_access_token, needs)?;
            let token_secret = secret("X_ACCESS_TOKEN_SECRET", &s.x_access_token_secret, needs)?;
            match (key, secret_, token, token_secret) {
                (Some(api_key), Some(api_secret), Some(access_token), Some(access_token_secret)) => {
                    Some(XCredentials {
                        api_key,
                        api_secret,
                        access_token,
                        access_token_secret,
                    })
                }
                _ => None,
            }
        };
        let shortener = match s.shortener {
            ShortenerSetting::None => None,
            name @ (ShortenerSetting::Isgd | ShortenerSetting::Bitly) => {
                let provider = if name == ShortenerSetting::Bitly {
                    match s.bitly_token.as_deref().map(str::trim) {
                        Some(t) if !t.is_empty() => Provider::Bitly(SecretString::from(t.to_string())),
                        _ => {
                            return Err(ConfigError::Missing {
                                var: "BITLY_TOKEN",
                                why: "SHORTENER=bitly needs a Bitly access token",
                            })
                        }
                    }
                } else {
                    Provider::Isgd
                };
                let base = match &s.shortener_base_url {
                    Some(b) if !b.trim().is_empty() => url("SHORTENER_BASE_URL", b)?,
                    _ => provider.default_base(),
                };
                Some(ShortenerConfig { provider, base })
            }
        };
        let fetch_max_bytes = s
            .fetch_max_bytes
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| ConfigError::Invalid {
                var: "FETCH_MAX_BYTES",
                value: s.fetch_max_bytes.clone(),
                reason: "expected a positive whole number of bytes".into(),
            })?;
        let key_prefix = s.key_prefix.clone();
        if key_prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ConfigError::Invalid {
                var: "KEY_PREFIX",
                value: key_prefix,
                reason: "must not contain whitespace or control characters".into(),
            });
        }
        let poll_interval = match s.poll_interval_ms.as_deref().map(str::trim) {
            Some(ms) if !ms.is_empty() => {
                Duration::from_millis(ms.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    ConfigError::Invalid {
                        var: "POLL_INTERVAL_MS",
                        value: ms.to_string(),
                        reason: "expected a whole number of milliseconds, at least 1".into(),
                    }
                })?)
            }
            _ => secs("POLL_INTERVAL_SECS", &s.poll_interval_secs, 1)?,
        };
        let metrics_addr = match s.metrics_addr.as_deref().map(str::trim) {
            Some(a) if !a.is_empty() => Some(a.parse::<SocketAddr>().map_err(|e| ConfigError::Invalid {
                var: "METRICS_ADDR",
                value: a.to_string(),
                reason: format!("{e}; expected IP:PORT, e.g. 127.0.0.1:9464"),
            })?),
            _ => None,
        };
        // A blank value (`REDIS_CA_FILE=` as `.env.example` has it) is unset.
        let file = |v: &Option<String>| v.as_deref().map(str::trim).filter(|p| !p.is_empty()).map(PathBuf::from);
        let (redis_ca_file, database_ca_file) = (file(&s.redis_ca_file), file(&s.database_ca_file));
        let tls_redis = matches!(&store, StoreConfig::Redis(u) if u.expose_secret().starts_with("rediss://"));
        if let (Some(path), false) = (&redis_ca_file, tls_redis) {
            return Err(ConfigError::Invalid {
                var: "REDIS_CA_FILE",
                value: path.display().to_string(),
                reason: "applies to a TLS REDIS_URL only (rediss:// or valkeys://)".into(),
            });
        }
        let redis = RedisOptions {
            ca_file: redis_ca_file,
            eviction_policy_asserted: eviction_policy_asserted(s.redis_eviction_policy_asserted.as_deref())?,
            min_replicas: match s.claim_min_replicas.as_deref().map(str::trim) {
                Some(n) if !n.is_empty() => Some(count("CLAIM_MIN_REPLICAS", n)?),
                _ => None,
            },
        };
        if redis.min_replicas.is_some() && !matches!(store, StoreConfig::Redis(_)) {
            return Err(ConfigError::Invalid {
                var: "CLAIM_MIN_REPLICAS",
                value: s.claim_min_replicas.clone().unwrap_or_default(),
                reason: "applies to Redis (REDIS_URL) only; PostgreSQL's synchronous replication is the server's setting (synchronous_standby_names)".into(),
            });
        }
        Ok(Config {
            redis,
            database_ca_file,
            metrics_addr,
            health_max_stale_cycles: count("HEALTH_MAX_STALE_CYCLES", &s.health_max_stale_cycles)?,
            shutdown_grace: secs("SHUTDOWN_GRACE_SECS", &s.shutdown_grace_secs, 1)?,
            store,
            key_prefix,
            claim_ttl: secs("CLAIM_TTL_SECS", &s.claim_ttl_secs, MIN_CLAIM_TTL_SECS)?,
            poll_interval,
            sources,
            x_api_base: url("X_API_BASE_URL", &s.x_api_base_url)?,
            x_credentials,
            post_timeout: secs("POST_TIMEOUT_SECS", &s.post_timeout_secs, 1)?,
            max_posts_per_cycle: count("MAX_POSTS_PER_CYCLE", &s.max_posts_per_cycle)?,
            max_post_attempts: count("MAX_POST_ATTEMPTS", &s.max_post_attempts)?,
            shorten_timeout: secs("SHORTEN_TIMEOUT_SECS", &s.shorten_timeout_secs, 1)?,
            posts_per_minute: nonzero(count("POSTS_PER_MINUTE", &s.posts_per_minute)?),
            posts_per_day: nonzero(count("POSTS_PER_DAY", &s.posts_per_day)?),
            shortener,
            template_path: s
                .template_path
                .as_deref()
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            instance_id: instance_id(s.instance_id.as_deref())?,
            fetch_max_bytes,
            fetch_per_host_per_minute: count("FETCH_PER_HOST_PER_MINUTE", &s.fetch_per_host_per_minute)?,
            filter,
            dry_run,
            shorten_in_dry_run,
            json,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{eviction_policy_asserted, instance_id, redis_url, url};

    #[test]
    fn valkey_urls_are_read_as_redis_urls_and_other_schemes_are_refused_without_the_value() {
        assert_eq!(redis_url("valkey://h:6379/0").as_deref(), Ok("redis://h:6379/0"));
        assert_eq!(
            redis_url("valkeys://:pw@h:6380/").as_deref(),
            Ok("rediss://:pw@h:6380/")
        );
        assert_eq!(redis_url("rediss://h/").as_deref(), Ok("rediss://h/"));
        assert_eq!(
            redis_url("valkey+sentinel://:pw@h:26379/m").as_deref(),
            Ok("redis+sentinel://:pw@h:26379/m")
        );
        let tls_sentinel = redis_url("rediss+sentinel://:pw@h/m").unwrap_err().to_string();
        assert!(
            tls_sentinel.contains("TLS through Sentinel is not supported yet"),
            "{tls_sentinel}"
        );
        assert!(!tls_sentinel.contains("pw"), "{tls_sentinel}");
        let e = redis_url("http://:pw_SECRET@h/").unwrap_err().to_string();
        assert!(
            e.starts_with("invalid REDIS_URL=\"(hidden)\": expected redis://"),
            "{e}"
        );
        assert!(!e.contains("pw_SECRET"), "{e}");
    }

    #[test]
    fn only_noeviction_can_be_asserted_as_redis_eviction_policy() {
        assert_eq!(eviction_policy_asserted(None), Ok(false));
        assert_eq!(eviction_policy_asserted(Some(" ")), Ok(false));
        assert_eq!(eviction_policy_asserted(Some("noeviction")), Ok(true));
        let e = eviction_policy_asserted(Some("volatile-lru")).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid REDIS_EVICTION_POLICY_ASSERTED=\"volatile-lru\": only noeviction can be asserted: any other policy may evict claim keys, and the bot refuses to post under it"
        );
    }

    #[test]
    fn an_instance_id_with_a_control_character_is_refused() {
        assert_eq!(instance_id(Some(" replica-1 ")), Ok("replica-1".to_string()));
        assert!(
            instance_id(Some("  ")).is_ok_and(|id| id.contains(':')),
            "blank falls back to host:pid"
        );
        let e = instance_id(Some("evil\nFAKE LINE")).unwrap_err().to_string();
        assert!(
            e.contains("INSTANCE_ID") && e.contains("character 5 is a control character"),
            "{e}"
        );
        assert!(
            e.contains(r#""evil\nFAKE LINE""#) && !e.contains('\n'),
            "shown escaped: {e}"
        );
        assert!(instance_id(Some("x\u{1b}[31m")).is_err());
    }

    #[test]
    fn a_refused_url_setting_is_named_without_its_credentials() {
        let e = url("X_API_BASE_URL", "ftp://u:pw_SECRET@example.com/")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("X_API_BASE_URL") && e.contains("expected an http(s) URL"),
            "{e}"
        );
        assert!(!e.contains("pw_SECRET") && !e.contains("u:"), "{e}");
    }
}
