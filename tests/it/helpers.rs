//! Shared test setup: a real Redis with a per-test key prefix, a real PostgreSQL with a schema
//! per test, embedded stores in temporary files, wiremock servers for X and score pages, log
//! capture.

use clap::Parser;
use cricket_announcer::announcer::{Announcer, ClaimPolicy, Mode, Output};
use cricket_announcer::app::App;
use cricket_announcer::claim::{
    Claim, ClaimStore, ClaimToken, EmbeddedClaims, MatchClaim, PostgresClaims, RedisClaims,
};
use cricket_announcer::cli::Cli;
use cricket_announcer::config::{Config, Invocation, Needs};
use cricket_announcer::cricket::{Identities, Identity, Match, MatchKey};
use cricket_announcer::post::{PostPace, Sink, XCredentials};
use cricket_announcer::source::SourceKind;
use cricket_announcer::template::Template;
use std::io::Write;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A day: the claim TTL and post deadline of tests that want neither to run out.
pub const DAY: Duration = Duration::from_secs(86_400);

/// The Redis the tests use: `TEST_REDIS_URL`, default the local server `.ci/run` starts.
pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_string())
}

/// A key prefix no other test uses. Everything written under it (Redis keys, the PostgreSQL
/// schema [`schema_for`] names) is removed when it is dropped, so bind it for the whole test
/// (`let prefix = unique_prefix();`), not as a temporary.
pub fn unique_prefix() -> Prefix {
    Prefix(format!("test:{}:", uuid::Uuid::new_v4().simple()))
}

/// A test's key prefix, read as the `String` it is; dropping it removes what the test wrote to
/// the shared Redis and PostgreSQL, even when the test fails (drops run while a panic unwinds).
pub struct Prefix(String);

impl std::ops::Deref for Prefix {
    type Target = String;
    fn deref(&self) -> &String {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Prefix {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_ref()
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let prefix = self.0.clone();
        // A drop cannot await, and runs inside the test's runtime, which must not be blocked on
        // itself: the cleanup gets a thread and a runtime of its own. A failure there (a server
        // gone) must not turn into a second panic while the test's own unwinds: it is ignored.
        let _ = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            runtime.block_on(async {
                cleanup(Kind::Redis, &prefix).await;
                cleanup(Kind::Postgres, &prefix).await;
            });
        })
        .join();
    }
}

/// A raw connection for inspecting keys. Fails the test loudly when Redis is down.
pub async fn raw_redis() -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(redis_url()).expect("TEST_REDIS_URL is not a valid Redis URL");
    client.get_multiplexed_async_connection().await.unwrap_or_else(|e| {
        panic!(
            "Redis is not reachable at {}: {e}. Start it (see README, `.ci/run`).",
            redis_url()
        )
    })
}

/// Every key under `prefix`.
pub async fn keys(prefix: &str) -> Vec<String> {
    let mut conn = raw_redis().await;
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    keys.sort();
    keys
}

/// The PostgreSQL the tests use: `TEST_DATABASE_URL`, default the local server `.ci/run` starts.
pub fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// The schema of the test whose key prefix is `prefix` (`test:<uuid>:` → `t_<uuid>`): stores
/// opened with one prefix share a schema, and no two tests do.
pub fn schema_for(prefix: &str) -> String {
    let id: String = prefix.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("t_{id}")
}

/// [`database_url`] with `search_path` set to `schema`, and `schema` as the application name so
/// that a test can find (and terminate) its store's connections.
pub fn schema_url(schema: &str) -> String {
    let base = database_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options=-csearch_path%3D{schema}&application_name={schema}")
}

/// A plain connection to the test database, with `search_path` set to `schema`. Fails the test
/// loudly when PostgreSQL is down.
pub async fn raw_postgres(schema: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&schema_url(schema), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PostgreSQL is not reachable at {}: {e}. Start it (see README, `.ci/run`).",
                database_url()
            )
        });
    tokio::spawn(connection);
    client
}

/// Creates `schema` if it does not exist (serialised by an advisory lock: concurrent
/// `CREATE SCHEMA IF NOT EXISTS` can still collide).
pub async fn ensure_schema(schema: &str) {
    let mut client = raw_postgres(schema).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT pg_advisory_xact_lock(7215)", &[]).await.unwrap();
    tx.execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"), &[])
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Removes what a test wrote to the shared Redis or PostgreSQL (the embedded store lives in a
/// temporary directory).
pub async fn cleanup(kind: Kind, prefix: &str) {
    match kind {
        Kind::Redis => {
            let mut conn = raw_redis().await;
            for k in crate::helpers::keys(prefix).await {
                let _: () = redis::cmd("DEL").arg(k).query_async(&mut conn).await.unwrap();
            }
        }
        Kind::Postgres => {
            let schema = schema_for(prefix);
            // Bounded: a connection of the test still holding a lock on the schema must fail
            // the cleanup, not hang the drop that waits for it.
            raw_postgres(&schema)
                .await
                .batch_execute(&format!(
                    "SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS {schema} CASCADE"
                ))
                .await
                .unwrap();
        }
        Kind::Embedded => {}
    }
}

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Redis,
    Embedded,
    Postgres,
}

/// A store of `kind` for `owner`. For the embedded kind, `file` is the SQLite file (several
/// stores opened on one file are separate connections, like separate processes). For
/// PostgreSQL, the schema is [`schema_for`] `prefix`, created on first use.
pub async fn store(kind: Kind, prefix: &str, owner: &str, file: &Path) -> ClaimStore {
    match kind {
        Kind::Redis => ClaimStore::Redis(
            RedisClaims::connect(&redis_url(), prefix, owner)
                .await
                .unwrap_or_else(|e| panic!("Redis is not reachable at {}: {e}", redis_url())),
        ),
        Kind::Embedded => ClaimStore::Embedded(EmbeddedClaims::open(file, prefix, owner).unwrap()),
        Kind::Postgres => {
            let schema = schema_for(prefix);
            ensure_schema(&schema).await;
            ClaimStore::Postgres(
                PostgresClaims::connect(&schema_url(&schema), prefix, owner)
                    .await
                    .unwrap_or_else(|e| panic!("PostgreSQL is not reachable at {}: {e}", database_url())),
            )
        }
    }
}

/// The variables that point the bot at a store of `kind` under `prefix`: Redis, an SQLite file
/// in `dir` (one file that every process of the test shares), or the PostgreSQL schema
/// [`schema_for`] `prefix`, created here.
pub async fn store_env(kind: Kind, prefix: &str, dir: &Path) -> Vec<(&'static str, String)> {
    match kind {
        Kind::Redis => vec![("REDIS_URL", redis_url())],
        Kind::Embedded => vec![("STORE_PATH", dir.join("shared.db").display().to_string())],
        Kind::Postgres => {
            let schema = schema_for(prefix);
            ensure_schema(&schema).await;
            vec![("DATABASE_URL", schema_url(&schema))]
        }
    }
}

/// Makes the TTL of the claim on `key` (stored under `prefix`; `file` for the embedded store)
/// run out now, as if its time to live had passed: the store's own expiry is moved, not waited
/// for. Redis: an expiry time in the past (the key is gone at once); SQLite and PostgreSQL: the
/// row's `expires_at` set in the past (a TTL change, which PostgreSQL's ledger logs no event for).
pub async fn lapse(kind: Kind, prefix: &str, file: &Path, key: &MatchKey) {
    let stored = format!("{prefix}match:{key}");
    match kind {
        Kind::Redis => {
            let gone: i64 = redis::cmd("PEXPIREAT")
                .arg(&stored)
                .arg(1)
                .query_async(&mut raw_redis().await)
                .await
                .unwrap();
            assert_eq!(gone, 1, "no claim at {stored}");
        }
        Kind::Embedded => {
            let db = rusqlite::Connection::open(file).unwrap();
            let changed = db
                .execute("UPDATE claims SET expires_at = 0 WHERE key = ?1", [&stored])
                .unwrap();
            assert_eq!(changed, 1, "no claim at {stored}");
        }
        Kind::Postgres => {
            let db = raw_postgres(&schema_for(prefix)).await;
            let changed = db
                .execute(
                    "UPDATE claims SET expires_at = now() - interval '1 second' WHERE prefix = $1 AND match_key = $2",
                    &[&prefix, &key.as_str()],
                )
                .await
                .unwrap();
            assert_eq!(changed, 1, "no claim at {stored}");
        }
    }
}

/// Claims `key` alone (no source id, no other key, no marker required) through the one
/// production claim path, [`ClaimStore::claim_match`]: what the store contract tests race, hold
/// and move. The record says its owner gives up on the post `gives_up_after` from now.
pub async fn claim_key(
    store: &ClaimStore,
    key: &MatchKey,
    title: &str,
    ttl: Duration,
    gives_up_after: Duration,
) -> MatchClaim {
    let ids = Identities::known_by(key.clone(), Vec::new());
    store
        .claim_match(&ids, title, ttl, gives_up_after, false)
        .await
        .unwrap_or_else(|e| panic!("claiming {key}: {e}"))
}

/// The identity `text` names, as an operator would type it (`site:1`, `key:…`, a bare key).
pub fn id(text: &str) -> Identity {
    Identity::named(text).unwrap_or_else(|| panic!("{text:?} is no identity"))
}

/// What a test expects of a [`MatchClaim`]: won, or held by someone else.
pub trait Expect {
    /// The token of a won claim; panics on any other answer.
    fn won(self) -> ClaimToken;
    /// The holder's record of a held claim; panics on any other answer.
    fn held(self) -> Claim;
}

impl Expect for MatchClaim {
    fn won(self) -> ClaimToken {
        match self {
            MatchClaim::Won(token) => token,
            other => panic!("the claim must be won, not {other:?}"),
        }
    }

    fn held(self) -> Claim {
        match self {
            MatchClaim::Held { claim, .. } => claim,
            other => panic!("the claim must be held by another, not {other:?}"),
        }
    }
}

/// A won claim on Zimbabwe v Bangladesh (the match of [`zim_v_ban`]) in a fresh embedded store
/// owned by `owner`, with the directory that keeps its file: what a sink needs to post.
pub async fn won_zim_v_ban(owner: &str) -> (ClaimToken, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(Kind::Embedded, &unique_prefix(), owner, &dir.path().join("claims.db")).await;
    let key = MatchKey::for_match(&zim_v_ban());
    let token = claim_key(&store, &key, "Zimbabwe v Bangladesh", DAY, DAY).await.won();
    (token, dir)
}

/// The repository root (for fixtures and templates).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(rel: &str) -> String {
    std::fs::read_to_string(root().join("fixtures").join(rel)).unwrap()
}

/// The matches of the Cricbuzz 2026 fixture.
pub fn cricbuzz_matches() -> Vec<Match> {
    SourceKind::Cricbuzz
        .parse(&fixture("cricbuzz/live-scores_2026-07-17.html"))
        .unwrap()
}

/// Zimbabwe v Bangladesh, 2nd T20I (cricbuzz 158062), an upcoming match of the fixture.
pub fn zim_v_ban() -> Match {
    cricbuzz_matches()
        .into_iter()
        .find(|m| m.source_id == "158062")
        .unwrap()
}

pub fn credentials() -> XCredentials {
    XCredentials {
        api_key: "test-consumer-key".into(),
        api_secret: "test-consumer-secret".into(),
        access_token: "test-access-token".into(),
        access_token_secret: "test-access-secret".into(),
    }
}

/// Mounts a `POST /2/tweets` that answers 201 with tweet id `id`, expected `times` times.
/// X on loopback, answering every post with 201 (no count expected).
pub async fn x_accepting_all() -> MockServer {
    let x = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(serde_json::json!({"data": {"id": "1800000000000000001", "text": "ok"}})),
        )
        .mount(&x)
        .await;
    x
}

/// The texts X was sent, in order.
pub async fn x_texts(x: &MockServer) -> Vec<String> {
    x.received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

pub async fn x_accepts(server: &MockServer, times: u64) {
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(serde_json::json!({"data": {"id": "1800000000000000001", "text": "ok"}})),
        )
        .expect(times)
        .mount(server)
        .await;
}

pub fn template() -> Template {
    Template::load(&root().join("templates/announce.txt")).unwrap()
}

/// A live announcer posting to `x` (a wiremock server) and claiming in `store`.
pub fn live_announcer(store: ClaimStore, x: &MockServer) -> Announcer {
    live_announcer_with(store, x, policy())
}

/// [`live_announcer`] under a policy of the test's own.
pub fn live_announcer_with(store: ClaimStore, x: &MockServer, policy: ClaimPolicy) -> Announcer {
    let base = url::Url::parse(&x.uri()).unwrap();
    let client = Sink::x(&base, credentials(), Duration::from_secs(5), Duration::from_secs(2)).unwrap();
    let pace = PostPace::new(NonZeroU32::new(1_000).unwrap(), NonZeroU32::new(100_000).unwrap());
    Announcer::new(store, template(), None, Mode::live(client, Arc::new(pace)), policy)
}

/// One day's TTL, 3 attempts, stuck after 5 s + margin.
pub fn policy() -> ClaimPolicy {
    ClaimPolicy::new(Duration::from_secs(86_400), 3, Duration::from_secs(5))
}

/// Captured output, shared by clones.
#[derive(Clone, Default)]
pub struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Buffer {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
    pub fn output(&self) -> Output {
        Arc::new(Mutex::new(Box::new(self.clone())))
    }
}

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A log dispatcher writing into a buffer (plus stderr when `TEST_LOG` is set).
pub fn capture_logs() -> (tracing::Dispatch, Buffer) {
    let buffer = Buffer::default();
    let sink = buffer.clone();
    let echo = std::env::var_os("TEST_LOG").is_some();
    let subscriber = cricket_announcer::telemetry::subscriber(
        "info",
        move || {
            let b = sink.clone();
            Tee(b, echo)
        },
        false,
    );
    (tracing::Dispatch::new(subscriber), buffer)
}

pub struct Tee(Buffer, bool);

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.1 {
            let _ = std::io::stderr().write_all(buf);
        }
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A Redis server a test owns, on a free port, keeping its data on disk (AOF) so a restart
/// keeps the claims, like a production Redis with persistence.
pub struct OwnRedis {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<std::process::Child>,
    /// Arguments added to every start (`--maxmemory-policy …`, `--replicaof …`, TLS).
    extra: Vec<String>,
}

/// A TCP port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl OwnRedis {
    /// Starts it (blocks until it accepts connections).
    pub fn start() -> OwnRedis {
        OwnRedis::start_with(&[])
    }

    /// Starts it with `extra` arguments, on this and every restart.
    pub fn start_with(extra: &[&str]) -> OwnRedis {
        OwnRedis::start_on(free_port(), extra)
    }

    /// Starts it on `port` (the TCP port it is reached on; with TLS, pass `--tls-port` and
    /// `--port 0` in `extra`).
    pub fn start_on(port: u16, extra: &[&str]) -> OwnRedis {
        let mut r = OwnRedis {
            port,
            dir: tempfile::tempdir().unwrap(),
            child: None,
            extra: extra.iter().map(std::string::ToString::to_string).collect(),
        };
        r.restart();
        r
    }

    /// The port it is reached on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server again on the same port and data directory.
    pub fn restart(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                // Every write on disk before its reply: with the default `everysec`, a busy
                // disk postpones the write (by up to 2 s) and a kill then loses acknowledged
                // writes, which no test of a restart should depend on.
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .args(&self.extra)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server must be installed (see .ci/run)");
        self.child = Some(child);
        // Up to 30 s: a machine busy compiling can take seconds to start a server.
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("own redis-server did not start on port {}", self.port);
    }

    /// Kills the server (its data stays on disk).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An `App` built from flags as `run` builds it: Redis at `redis_url` under `prefix`, the
/// Cricbuzz live-scores fixture as its one source, X at `x`, flood cap 10.
pub async fn live_app(redis_url: &str, prefix: &str, x: &MockServer) -> App {
    build_live_app(&["--redis-url", redis_url], prefix, x).await.unwrap()
}

/// As [`live_app`], with the store named by the flags `store` (`--database-url …`, TLS
/// settings); the error when `App::build` refuses.
pub async fn build_live_app(store: &[&str], prefix: &str, x: &MockServer) -> anyhow::Result<App> {
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let store: Vec<String> = store.iter().map(std::string::ToString::to_string).collect();
    live_app_on(&store, prefix, &[page.display().to_string()], x, 10).await
}

/// An `App` built from flags as `backfill` builds it: the store the flags `store` name, under
/// `prefix`, reading `sources` (`--source` each), posting to X at `x` with flood cap `cap`; the
/// error when `App::build` refuses.
pub async fn live_app_on(
    store: &[String],
    prefix: &str,
    sources: &[String],
    x: &MockServer,
    cap: u32,
) -> anyhow::Result<App> {
    live_app_with(store, prefix, sources, x, cap, &[]).await
}

/// [`live_app_on`] with more flags (`--link-preference espncricinfo`).
pub async fn live_app_with(
    store: &[String],
    prefix: &str,
    sources: &[String],
    x: &MockServer,
    cap: u32,
    flags: &[&str],
) -> anyhow::Result<App> {
    let args = live_args(store, prefix, sources, x, cap, flags, "backfill");
    let cli = Cli::try_parse_from(args).unwrap();
    let config = Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::Posting))?;
    Ok(App::build(&config, Buffer::default().output()).await?)
}

/// The command line of a bot on `store` (its flags) under `prefix`, reading `sources`, posting
/// to the X stand-in `x` at most `cap` posts a cycle, with `flags` more, running `command`.
pub fn live_args(
    store: &[String],
    prefix: &str,
    sources: &[String],
    x: &MockServer,
    cap: u32,
    flags: &[&str],
    command: &str,
) -> Vec<String> {
    let template = root().join("templates/announce.txt");
    let mut args: Vec<String> = vec!["cricket-announcer".into()];
    args.extend_from_slice(store);
    args.extend(flags.iter().map(|f| (*f).to_string()));
    for source in sources {
        args.extend(["--source".to_string(), source.clone()]);
    }
    args.extend(
        [
            "--key-prefix",
            prefix,
            "--template-path",
            template.to_str().unwrap(),
            "--x-api-base-url",
            &x.uri(),
            "--x-api-key",
            "k",
            "--x-api-secret",
            "s",
            "--x-access-token",
            "t",
            "--x-access-token-secret",
            "ts",
            "--max-posts-per-cycle",
            &cap.to_string(),
            command,
        ]
        .map(String::from),
    );
    args
}

/// [`store_env`] as command-line flags (`REDIS_URL` → `--redis-url`, and so on).
pub async fn store_flags(kind: Kind, prefix: &str, dir: &Path) -> Vec<String> {
    store_env(kind, prefix, dir)
        .await
        .into_iter()
        .flat_map(|(var, value)| [format!("--{}", var.to_lowercase().replace('_', "-")), value])
        .collect()
}

/// One test per store: `store_matrix!(a, b)` makes `redis_store::a`, `embedded_store::a`,
/// `postgres_store::a` (and so on), each calling `super::a(Kind::…)`.
macro_rules! store_matrix {
    ($($name:ident),* $(,)?) => {
        mod redis_store {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Kind::Redis).await })*
        }
        mod embedded_store {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Kind::Embedded).await })*
        }
        mod postgres_store {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Kind::Postgres).await })*
        }
    };
}
pub(crate) use store_matrix;

/// `claims list --json`'s rows as (match key, state of the record), in the order printed.
pub fn listed(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["claim"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The store's one batch read ([`ClaimStore::holders_touching`]) as the tests ask it: no
/// identities to refresh, and a fresh or a kept record of the last look-up.
pub trait Holders {
    /// The holder of each of `keys`, read afresh (nothing remembered).
    async fn holders(
        &self,
        keys: &[&cricket_announcer::cricket::MatchKey],
        refresh: Option<Duration>,
    ) -> Result<Vec<Option<cricket_announcer::claim::Holder>>, cricket_announcer::claim::ClaimError>;

    /// The holder of each of `keys`, reusing and then keeping what `last` remembers.
    async fn holders_since(
        &self,
        keys: &[&cricket_announcer::cricket::MatchKey],
        refresh: Option<Duration>,
        last: &mut cricket_announcer::claim::LastRecords,
    ) -> Result<Vec<Option<cricket_announcer::claim::Holder>>, cricket_announcer::claim::ClaimError>;
}

impl Holders for ClaimStore {
    async fn holders(
        &self,
        keys: &[&cricket_announcer::cricket::MatchKey],
        refresh: Option<Duration>,
    ) -> Result<Vec<Option<cricket_announcer::claim::Holder>>, cricket_announcer::claim::ClaimError> {
        self.holders_touching(keys, &[], refresh, &mut Default::default()).await
    }

    async fn holders_since(
        &self,
        keys: &[&cricket_announcer::cricket::MatchKey],
        refresh: Option<Duration>,
        last: &mut cricket_announcer::claim::LastRecords,
    ) -> Result<Vec<Option<cricket_announcer::claim::Holder>>, cricket_announcer::claim::ClaimError> {
        self.holders_touching(keys, &[], refresh, last).await
    }
}

/// Every command `INFO commandstats` counts in `info` (the reply's text), by name in lower case,
/// with its calls (since the server started, or its last `CONFIG RESETSTAT`).
pub fn command_stats_of(info: &str) -> std::collections::BTreeMap<String, u64> {
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(":calls=")?;
            Some((name.to_string(), rest.split(',').next()?.parse().ok()?))
        })
        .collect()
}

/// [`command_stats_of`] the Redis at `url` (its `INFO commandstats` counted too).
pub async fn command_stats(url: &str) -> std::collections::BTreeMap<String, u64> {
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut conn)
        .await
        .unwrap();
    command_stats_of(&info)
}
