//! The store section: which claim store, under which key prefix, for how long a claim lives,
//! whose name claims carry, and the TLS and durability options of Redis and PostgreSQL.

use super::value::{given, text, Blankable, OrBlank, Whole};
use super::{ConfigError, Problem, StoreConfig};
use crate::claim::RedisOptions;
use secrecy::{ExposeSecret, SecretString};
use std::path::PathBuf;
use std::time::Duration;

/// Default claim TTL: ten days, so a five-day Test listed before and after play stays claimed.
pub const DEFAULT_CLAIM_TTL_SECS: u64 = 10 * 24 * 3600;
/// The shortest claim TTL accepted: one day. A shorter one would let a match still on the page
/// expire and be announced again.
pub const MIN_CLAIM_TTL_SECS: u64 = 24 * 3600;
/// The embedded store's file when `STORE_PATH` is not set: in the working directory, or beside
/// the `.env` the bot read.
pub const DEFAULT_STORE_PATH: &str = "cricket-announcer.db";

/// The store's settings, as given.
#[derive(clap::Args, Clone)]
pub struct StoreSettings {
    /// Redis URL, e.g. redis://host:6379/0 or redis://:PASSWORD@host:6379/0. Unset (and no DATABASE_URL): the embedded SQLite store.
    #[arg(long, env = "REDIS_URL", hide_env_values = true, global = true)]
    pub redis_url: Option<String>,
    /// PostgreSQL URL, e.g. postgres://USER:PASSWORD@host:5432/db: the ledger store. Not with REDIS_URL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<String>,
    /// Embedded store file, used when neither REDIS_URL nor DATABASE_URL is set.
    #[arg(long, env = "STORE_PATH", default_value = DEFAULT_STORE_PATH, global = true)]
    pub store_path: PathBuf,
    /// Prefix of every store key (keys are PREFIXmatch:MATCH_KEY); blank: the default.
    #[arg(long, env = "KEY_PREFIX", default_value = DEFAULT_KEY_PREFIX, global = true)]
    pub key_prefix: String,
    /// Claim time to live, seconds (at least 86400).
    // The default is DEFAULT_CLAIM_TTL_SECS (a test checks they agree).
    #[arg(long, env = "CLAIM_TTL_SECS", value_parser = Whole::seconds(MIN_CLAIM_TTL_SECS), default_value = "864000", global = true)]
    pub claim_ttl_secs: Duration,
    /// This instance's name in claim records (default: HOSTNAME:PID).
    #[arg(long, env = "INSTANCE_ID", global = true)]
    pub instance_id: Option<String>,
    /// Redis only, where CONFIG is disabled (managed Redis): noeviction, asserting that the server never evicts keys (checked in the service's settings). Any other policy may evict claims.
    #[arg(long, env = "REDIS_EVICTION_POLICY_ASSERTED", global = true)]
    pub redis_eviction_policy_asserted: Option<String>,
    /// Redis only: replicas that must hold a claim (WAIT) before its post is sent; unset: none.
    #[arg(long, env = "CLAIM_MIN_REPLICAS", value_parser = OrBlank(Whole::count()), global = true)]
    pub claim_min_replicas: Option<Blankable<u32>>,
    /// PEM file of the CA(s) that sign the Redis server's certificate (rediss://); unset: the system's roots.
    #[arg(long, env = "REDIS_CA_FILE", global = true)]
    pub redis_ca_file: Option<String>,
    /// PEM file of the CA(s) that sign the PostgreSQL server's certificate (sslmode=require, verify-ca, verify-full); unset: the system's roots.
    #[arg(long, env = "DATABASE_CA_FILE", global = true)]
    pub database_ca_file: Option<String>,
}

/// The key prefix when `KEY_PREFIX` is unset or blank.
pub const DEFAULT_KEY_PREFIX: &str = "cricket-announcer:";

/// The store section, validated.
#[derive(Clone)]
pub struct Store {
    /// Which store, at which URL or path.
    pub backend: StoreConfig,
    /// Prefix of every key.
    pub key_prefix: String,
    /// Claim lifetime.
    pub claim_ttl: Duration,
    /// Owner name written into claims.
    pub instance_id: String,
    /// Redis options beyond the URL.
    pub redis: RedisOptions,
    /// PEM file of the CAs trusted for PostgreSQL's certificate.
    pub database_ca_file: Option<PathBuf>,
}

impl StoreSettings {
    /// The store section, validated.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first setting that cannot be used: both URLs set, a URL of
    /// another scheme, a key prefix with whitespace, an owner name with a control character,
    /// or a Redis-only option without a (TLS) Redis.
    pub fn validate(&self) -> Result<Store, ConfigError> {
        let store = match (text(&self.redis_url), text(&self.database_url)) {
            // Guessing which one the operator meant could announce every match again from an
            // empty store: refuse instead.
            (Some(_), Some(_)) => {
                return Err(ConfigError::Conflict {
                    first: "REDIS_URL",
                    second: "DATABASE_URL",
                    why: "choose one claim store (unset the other)",
                })
            }
            (Some(u), None) => StoreConfig::Redis(SecretString::from(redis_url(u)?)),
            (None, Some(u)) if u.starts_with("postgres://") || u.starts_with("postgresql://") => {
                // A bad sslmode is a bad setting (exit 2), known before anything connects.
                if let Err(crate::claim::TlsError::SslMode(mode)) = crate::claim::split_sslmode(u) {
                    return Err(ConfigError::hidden(
                        "DATABASE_URL",
                        Problem::SslMode(crate::redact::setting_value("sslmode", &mode)),
                    ));
                }
                StoreConfig::Postgres(SecretString::from(u.to_string()))
            }
            (None, Some(_)) => return Err(ConfigError::hidden("DATABASE_URL", Problem::NotPostgresUrl)),
            (None, None) => StoreConfig::Embedded(self.store_path.clone()),
        };
        // Blank means the default, as every other blank setting does: an empty prefix would
        // write the bot's keys among everything else in the database.
        let key_prefix = match self.key_prefix.trim() {
            "" => DEFAULT_KEY_PREFIX.to_string(),
            _ => self.key_prefix.clone(),
        };
        if key_prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ConfigError::invalid("KEY_PREFIX", &key_prefix, Problem::KeyPrefixChars));
        }
        // A blank value (`REDIS_CA_FILE=` as `.env.example` has it) is unset.
        let redis_ca_file = text(&self.redis_ca_file).map(PathBuf::from);
        let tls_redis = matches!(&store, StoreConfig::Redis(u) if u.expose_secret().starts_with("rediss://"));
        if let (Some(path), false) = (&redis_ca_file, tls_redis) {
            let shown = path.display().to_string();
            return Err(ConfigError::invalid("REDIS_CA_FILE", &shown, Problem::CaFileWithoutTls));
        }
        let min_replicas = given(self.claim_min_replicas);
        if let (Some(n), false) = (min_replicas, matches!(store, StoreConfig::Redis(_))) {
            return Err(ConfigError::invalid(
                "CLAIM_MIN_REPLICAS",
                &n.to_string(),
                Problem::ReplicasWithoutRedis,
            ));
        }
        let redis = RedisOptions {
            ca_file: redis_ca_file,
            eviction_policy_asserted: eviction_policy_asserted(self.redis_eviction_policy_asserted.as_deref())?,
            min_replicas,
        };
        Ok(Store {
            backend: store,
            key_prefix,
            claim_ttl: self.claim_ttl_secs,
            instance_id: instance_id(self.instance_id.as_deref())?,
            redis,
            database_ca_file: text(&self.database_ca_file).map(PathBuf::from),
        })
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
        return Err(ConfigError::hidden("REDIS_URL", Problem::TlsThroughSentinel));
    }
    for (given, read_as) in [
        ("valkey://", "redis://"),
        ("valkeys://", "rediss://"),
        ("valkey+sentinel://", "redis+sentinel://"),
    ] {
        if let Some(rest) = raw.strip_prefix(given) {
            return redis_url(&format!("{read_as}{rest}"));
        }
    }
    if raw.starts_with("redis+sentinel://") {
        // Read now, so a malformed one is a bad setting (exit 2), not a failed connection.
        crate::claim::check_sentinel_url(raw)
            .map_err(|e| ConfigError::hidden("REDIS_URL", Problem::SentinelUrl(e.reason)))?;
        return Ok(raw.to_string());
    }
    if ["redis://", "rediss://", "unix://"].iter().any(|s| raw.starts_with(s)) {
        return Ok(raw.to_string());
    }
    Err(ConfigError::hidden("REDIS_URL", Problem::NotRedisUrl))
}

/// `REDIS_EVICTION_POLICY_ASSERTED`: only `noeviction` may be asserted.
fn eviction_policy_asserted(raw: Option<&str>) -> Result<bool, ConfigError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(false),
        Some(crate::claim::NO_EVICTION) => Ok(true),
        Some(other) => Err(ConfigError::invalid(
            "REDIS_EVICTION_POLICY_ASSERTED",
            other,
            Problem::EvictionPolicy,
        )),
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
        // Shown escaped (`{value:?}`), so the error itself cannot forge a line.
        return Err(ConfigError::invalid(
            "INSTANCE_ID",
            id,
            Problem::ControlCharacter(at + 1),
        ));
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

#[cfg(test)]
mod tests {
    use super::{eviction_policy_asserted, instance_id, redis_url};

    #[test]
    fn valkey_urls_are_read_as_redis_urls_and_other_schemes_are_refused_without_the_value() {
        assert_eq!(redis_url("valkey://h:6379/0").as_deref().ok(), Some("redis://h:6379/0"));
        assert_eq!(
            redis_url("valkeys://:pw@h:6380/").as_deref().ok(),
            Some("rediss://:pw@h:6380/")
        );
        assert_eq!(redis_url("rediss://h/").as_deref().ok(), Some("rediss://h/"));
        assert_eq!(
            redis_url("valkey+sentinel://:pw@h:26379/m").as_deref().ok(),
            Some("redis+sentinel://:pw@h:26379/m")
        );
        let tls_sentinel = redis_url("rediss+sentinel://:pw@h/m").unwrap_err().to_string();
        assert!(
            tls_sentinel.contains("TLS through Sentinel is not supported yet"),
            "{tls_sentinel}"
        );
        assert!(!tls_sentinel.contains("pw"), "{tls_sentinel}");
        // A malformed Sentinel URL is a bad setting, said without its password.
        let no_master = redis_url("redis+sentinel://:pw_SECRET@h:26379")
            .unwrap_err()
            .to_string();
        assert!(no_master.contains("the primary's name"), "{no_master}");
        assert!(!no_master.contains("pw_SECRET"), "{no_master}");
        let e = redis_url("http://:pw_SECRET@h/").unwrap_err().to_string();
        assert!(
            e.starts_with("invalid REDIS_URL=\"(hidden)\": expected redis://"),
            "{e}"
        );
        assert!(!e.contains("pw_SECRET"), "{e}");
    }

    #[test]
    fn only_noeviction_can_be_asserted_as_redis_eviction_policy() {
        assert_eq!(eviction_policy_asserted(None).ok(), Some(false));
        assert_eq!(eviction_policy_asserted(Some(" ")).ok(), Some(false));
        assert_eq!(eviction_policy_asserted(Some("noeviction")).ok(), Some(true));
        let e = eviction_policy_asserted(Some("volatile-lru")).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid REDIS_EVICTION_POLICY_ASSERTED=\"volatile-lru\": only noeviction can be asserted: any other policy may evict claim keys, and the bot refuses to post under it"
        );
    }

    #[test]
    fn an_instance_id_with_a_control_character_is_refused() {
        assert_eq!(instance_id(Some(" replica-1 ")).ok(), Some("replica-1".to_string()));
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
}
