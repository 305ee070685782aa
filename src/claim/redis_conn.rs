//! The connection to Redis, whatever its deployment: one server (or a primary with replicas)
//! behind a reconnecting connection manager, a Redis Cluster, or a primary found through Redis
//! Sentinel that is found again after a failover. [`RedisConn`] is what the Redis backend
//! sends its commands down; this module owns which servers those are.
//!
//! - **One server**: `redis://`, `rediss://`, `valkey://`, `valkeys://`. Connecting asks the
//!   server `INFO cluster`; a server with `cluster_enabled:1` makes this a cluster connection
//!   seeded with that one address (any node of a cluster will do).
//! - **Cluster**: every key of a deployment shares one hash slot, because the claim of a match
//!   under all its identities is one Lua script, and a script may only touch keys of one slot
//!   (<https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags>).
//!   [`cluster_prefix`] makes `KEY_PREFIX` that slot's hash tag. Listing claims scans every
//!   primary.
//! - **Sentinel**: `redis+sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]`.
//!   The credentials and database are the primary's; the sentinels are asked without them. The
//!   primary is asked of the sentinels when connecting, and again after any reply that says the
//!   server is no longer it (`READONLY`, a dropped or refused connection, a time-out): the
//!   command that saw it fails (the cycle reports a store error, nothing is posted), and the
//!   next one goes to the new primary (<https://redis.io/docs/latest/develop/reference/sentinel-clients/>).

use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{Cmd, ConnectionAddr, Pipeline, RedisError, RedisFuture, Value};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Which kind of Redis deployment a Redis store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deployment {
    /// One server (perhaps a primary with replicas), at the URL's address.
    Single,
    /// A Redis Cluster, found from one of its nodes.
    Cluster,
    /// The primary that Redis Sentinel names, followed through failovers.
    Sentinel,
}

/// A connection to Redis that reconnects by itself. Cheap to clone: clones share it.
#[derive(Clone)]
pub(super) enum RedisConn {
    /// One server.
    Single(ConnectionManager),
    /// A cluster (redis-rs routes each command by its key's slot, and follows `MOVED`).
    Cluster(ClusterConnection),
    /// The primary Sentinel names.
    Sentinel(SentinelConn),
}

impl RedisConn {
    /// Which deployment this is.
    pub(super) fn deployment(&self) -> Deployment {
        match self {
            RedisConn::Single(_) => Deployment::Single,
            RedisConn::Cluster(_) => Deployment::Cluster,
            RedisConn::Sentinel(_) => Deployment::Sentinel,
        }
    }
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConn::Single(c) => c.req_packed_command(cmd),
            RedisConn::Cluster(c) => c.req_packed_command(cmd),
            RedisConn::Sentinel(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            RedisConn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            RedisConn::Sentinel(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConn::Single(c) => c.get_db(),
            RedisConn::Cluster(c) => c.get_db(),
            RedisConn::Sentinel(c) => c.db,
        }
    }
}

/// The primary that Sentinel names: a multiplexed connection to it, dropped (and the primary
/// asked of the sentinels again) after a reply that says it may no longer be the primary.
#[derive(Clone)]
pub(super) struct SentinelConn {
    inner: Arc<SentinelInner>,
    db: i64,
}

struct SentinelInner {
    /// Asks the sentinels; one question at a time.
    client: Mutex<SentinelClient>,
    /// The connection to the primary as last named, if any.
    current: Mutex<Option<MultiplexedConnection>>,
    config: redis::AsyncConnectionConfig,
}

impl SentinelConn {
    /// Builds the client for `url` (a `redis+sentinel://` URL, see the module doc) and connects
    /// to the primary the sentinels name.
    ///
    /// # Errors
    /// [`SentinelUrlError`] as `Err(Ok(..))` when the URL cannot be read; the client's error as
    /// `Err(Err(..))` when no sentinel answers or the primary cannot be reached.
    pub(super) async fn connect(
        url: &str,
        config: redis::AsyncConnectionConfig,
    ) -> Result<SentinelConn, Result<SentinelUrlError, RedisError>> {
        let parsed = SentinelUrl::parse(url).map_err(Ok)?;
        let addrs = parsed
            .sentinels
            .iter()
            .map(|(host, port)| ConnectionAddr::Tcp(host.clone(), *port));
        let mut builder = SentinelClientBuilder::new(addrs, &parsed.master, SentinelServerType::Master)
            .map_err(Err)?
            .set_client_to_redis_db(parsed.db);
        if let Some(user) = &parsed.username {
            builder = builder.set_client_to_redis_username(user);
        }
        if let Some(password) = &parsed.password {
            builder = builder.set_client_to_redis_password(password);
        }
        let client = builder.build().map_err(Err)?;
        let conn = SentinelConn {
            inner: Arc::new(SentinelInner {
                client: Mutex::new(client),
                current: Mutex::new(None),
                config,
            }),
            db: parsed.db,
        };
        conn.connection().await.map_err(Err)?;
        Ok(conn)
    }

    /// The connection to the primary, asking the sentinels for it when there is none.
    async fn connection(&self) -> Result<MultiplexedConnection, RedisError> {
        let mut current = self.inner.current.lock().await;
        if let Some(conn) = current.as_ref() {
            return Ok(conn.clone());
        }
        let mut client = self.inner.client.lock().await;
        let conn = client.get_async_connection_with_config(&self.inner.config).await?;
        *current = Some(conn.clone());
        Ok(conn)
    }

    /// After `e`: forgets the connection when `e` says the server may no longer be the primary.
    async fn after_error(&self, e: &RedisError) {
        if primary_may_have_moved(e) {
            tracing::warn!(error = %e, "the Redis primary may have changed; asking Sentinel again on the next command");
            *self.inner.current.lock().await = None;
        }
    }

    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let mut conn = self.connection().await?;
            let reply = conn.req_packed_command(cmd).await;
            if let Err(e) = &reply {
                self.after_error(e).await;
            }
            reply
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut conn = self.connection().await?;
            let reply = conn.req_packed_commands(pipeline, offset, count).await;
            if let Err(e) = &reply {
                self.after_error(e).await;
            }
            reply
        })
    }
}

/// True when `e` means the server we talk to may not be the primary any more: the connection
/// failed, or the server answered as a replica (`READONLY`) or as one that lost its primary
/// (`MASTERDOWN`), or is loading a data set (`LOADING`, a restarted server).
fn primary_may_have_moved(e: &RedisError) -> bool {
    const MOVED_ON: [&str; 3] = ["READONLY", "MASTERDOWN", "LOADING"];
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.code().is_some_and(|c| MOVED_ON.contains(&c))
        || e.clone()
            .into_server_errors()
            .is_some_and(|failed| failed.iter().any(|(_, f)| MOVED_ON.contains(&f.code())))
}

/// A `redis+sentinel://` URL that cannot be used. Says what the URL should look like; never
/// repeats a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "REDIS_URL: {reason}; a Sentinel URL is redis+sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]"
)]
pub struct SentinelUrlError {
    /// What is wrong with it.
    pub reason: String,
}

/// The parts of a `redis+sentinel://` URL.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct SentinelUrl {
    /// The sentinels' addresses.
    pub sentinels: Vec<(String, u16)>,
    /// The primary's name, as the sentinels know it (`sentinel monitor <name> …`).
    pub master: String,
    /// The primary's database number.
    pub db: i64,
    /// The primary's ACL user.
    pub username: Option<String>,
    /// The primary's password.
    pub password: Option<String>,
}

impl std::fmt::Debug for SentinelUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentinelUrl")
            .field("sentinels", &self.sentinels)
            .field("master", &self.master)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// The URL schemes that name a Sentinel deployment.
pub(super) const SENTINEL_SCHEMES: [&str; 2] = ["redis+sentinel://", "valkey+sentinel://"];

impl SentinelUrl {
    /// Reads `url` (see the module doc). Host names may be names or IPv4 addresses; the port
    /// defaults to Sentinel's 26379.
    pub(super) fn parse(url: &str) -> Result<SentinelUrl, SentinelUrlError> {
        let bad = |reason: &str| SentinelUrlError {
            reason: reason.to_string(),
        };
        if url.starts_with("rediss+sentinel://") || url.starts_with("valkeys+sentinel://") {
            return Err(bad("TLS through Sentinel is not supported yet (use redis+sentinel:// on a private network, or rediss:// to the primary)"));
        }
        let rest = SENTINEL_SCHEMES
            .iter()
            .find_map(|s| url.strip_prefix(s))
            .ok_or_else(|| bad("not a redis+sentinel:// URL"))?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => {
                let (user, pass) = u.split_once(':').unwrap_or((u, ""));
                let decode = |s: &str, what: &str| -> Result<Option<String>, SentinelUrlError> {
                    if s.is_empty() {
                        return Ok(None);
                    }
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8()
                        .map(|d| Some(d.into_owned()))
                        .map_err(|_| bad(&format!("the {what} is not UTF-8 once percent-decoded")))
                };
                (decode(user, "user name")?, decode(pass, "password")?)
            }
        };
        let mut sentinels = Vec::new();
        for host in hosts.split(',') {
            let host = host.trim();
            if host.is_empty() {
                return Err(bad("a sentinel address is empty"));
            }
            let (name, port) = match host.rsplit_once(':') {
                Some((name, port)) => {
                    let port = port
                        .parse::<u16>()
                        .map_err(|_| bad(&format!("sentinel {host:?} has no valid port")))?;
                    (name, port)
                }
                None => (host, 26379),
            };
            if name.is_empty() {
                return Err(bad(&format!("sentinel {host:?} has no host")));
            }
            sentinels.push((name.to_string(), port));
        }
        let mut segments = path.split('/').filter(|s| !s.is_empty());
        let master = segments
            .next()
            .ok_or_else(|| bad("the primary's name (the path's first part) is missing"))?
            .to_string();
        let db = match segments.next() {
            None => 0,
            Some(db) => db
                .parse::<i64>()
                .ok()
                .filter(|d| *d >= 0)
                .ok_or_else(|| bad(&format!("database {db:?} is not a number")))?,
        };
        if segments.next().is_some() {
            return Err(bad("the path has more than a primary's name and a database"));
        }
        Ok(SentinelUrl {
            sentinels,
            master,
            db,
            username,
            password,
        })
    }
}

/// Checks that `url` is a `redis+sentinel://` URL this bot can use (see the module doc), without
/// connecting.
///
/// # Errors
/// [`SentinelUrlError`] saying what is wrong; it never repeats a password.
pub fn check_sentinel_url(url: &str) -> Result<(), SentinelUrlError> {
    SentinelUrl::parse(url).map(|_| ())
}

/// A `KEY_PREFIX` that cannot be a cluster's hash tag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("KEY_PREFIX={prefix:?} cannot be used on a Redis Cluster: {reason}")]
pub struct ClusterPrefixError {
    /// The prefix.
    pub prefix: String,
    /// Why.
    pub reason: &'static str,
}

/// The key prefix to use on a cluster: `prefix` itself when it already holds a hash tag (a
/// non-empty `{…}`), else `{prefix}`, so that every key of the deployment hashes to one slot.
/// Keys on a cluster therefore differ from keys on one server (`{cricket-announcer:}match:…`
/// instead of `cricket-announcer:match:…`); a deployment moving to a cluster starts as a first
/// start does, or seeds (`seed`).
///
/// # Errors
/// [`ClusterPrefixError`] when `prefix` is empty, or wrapping it would not make a tag (it
/// starts with `}`).
pub fn cluster_prefix(prefix: &str) -> Result<String, ClusterPrefixError> {
    let err = |reason| ClusterPrefixError {
        prefix: prefix.to_string(),
        reason,
    };
    if prefix.is_empty() {
        return Err(err(
            "an empty prefix has no hash tag, so the keys would spread over every slot; set a non-empty KEY_PREFIX",
        ));
    }
    if hash_tag(prefix).is_some() {
        return Ok(prefix.to_string());
    }
    let wrapped = format!("{{{prefix}}}");
    match hash_tag(&wrapped) {
        Some(_) => Ok(wrapped),
        None => Err(err(
            "a prefix starting with '}' cannot be made a hash tag; choose another KEY_PREFIX",
        )),
    }
}

/// The hash tag of `key` as Redis Cluster reads it: what stands between the first `{` and the
/// first `}` after it, when that is not empty.
fn hash_tag(key: &str) -> Option<&str> {
    let open = key.find('{')?;
    let close = key[open + 1..].find('}')?;
    (close > 0).then(|| &key[open + 1..open + 1 + close])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentinel_url_names_its_sentinels_primary_and_database() {
        let url = SentinelUrl::parse("redis+sentinel://:s%40cret@a.example:26380,10.0.0.2/mymaster/3").unwrap();
        assert_eq!(
            url.sentinels,
            vec![("a.example".to_string(), 26380), ("10.0.0.2".to_string(), 26379)]
        );
        assert_eq!(url.master, "mymaster");
        assert_eq!(url.db, 3);
        assert_eq!(url.username, None);
        assert_eq!(url.password.as_deref(), Some("s@cret"));
        assert!(!format!("{url:?}").contains("s@cret"), "{url:?}");
        let user = SentinelUrl::parse("valkey+sentinel://bot:pw@h:1/m").unwrap();
        assert_eq!(
            (user.username.as_deref(), user.password.as_deref(), user.db),
            (Some("bot"), Some("pw"), 0)
        );
    }

    #[test]
    fn a_bad_sentinel_url_says_what_is_wrong_without_its_password() {
        for (url, says) in [
            ("redis+sentinel://:pw@h:26379", "primary's name"),
            ("redis+sentinel://:pw@h:x/m", "no valid port"),
            ("redis+sentinel://:pw@h:1,/m", "empty"),
            ("redis+sentinel://:pw@h:1/m/zero", "not a number"),
            ("redis+sentinel://:pw@h:1/m/0/extra", "more than"),
            ("rediss+sentinel://:pw@h:1/m", "TLS through Sentinel"),
        ] {
            let e = SentinelUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains(":pw"), "{e}");
            assert!(e.contains("redis+sentinel://[[user]:password@]"), "{e}");
        }
    }

    #[test]
    fn a_cluster_prefix_is_one_hash_tag() {
        assert_eq!(cluster_prefix("cricket-announcer:").unwrap(), "{cricket-announcer:}");
        assert_eq!(cluster_prefix("{bot}:").unwrap(), "{bot}:");
        assert_eq!(cluster_prefix("a{}b:").unwrap(), "{a{}b:}");
        assert_eq!(
            hash_tag(&format!("{}match:x", cluster_prefix("a{}b:").unwrap())),
            Some("a{")
        );
        assert!(cluster_prefix("")
            .unwrap_err()
            .to_string()
            .contains("non-empty KEY_PREFIX"));
        assert!(cluster_prefix("}x")
            .unwrap_err()
            .to_string()
            .contains("starting with '}'"));
    }

    #[test]
    fn moved_primaries_are_recognised_by_their_replies() {
        let readonly = RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly),
            "You can't write against a read only replica.",
        ));
        assert!(primary_may_have_moved(&readonly), "{readonly:?}");
        let other = RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError),
            "WRONGTYPE",
        ));
        assert!(!primary_may_have_moved(&other));
    }
}
