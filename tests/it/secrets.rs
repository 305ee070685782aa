//! Issue 35, item 1: one marker secret planted in every variable, file and URL position the bot
//! reads, and every output searched for it: stdout and stderr at `trace` of every command, on
//! each store, `/metrics`, every `--help`, the errors of refused settings, and the `claims`
//! tables. The stand-ins check that the marker was really sent where it belongs (the X key in
//! the OAuth header, the Mastodon token as a bearer, the Telegram token in the path, …), so a
//! planting that silently failed would fail the test too.

use crate::channels::mastodon_accepts;
use crate::cli::{bot, text};
use crate::daemon::{get, sample, wait_until, Running};
use crate::helpers::{
    cleanup, ensure_schema, fixture, free_port, schema_for, schema_url, unique_prefix, Kind, OwnRedis,
};
use crate::readme::COMMANDS;
use std::path::{Path, PathBuf};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The one secret: random-looking, as a real token is (the redaction rule has to recognise it
/// in a URL's path, where nothing names it a secret).
const MARKER: &str = "Qm7ZxR2pLk9WvT4nB8cJ3hYd";

/// Telegram's token shape (`<bot id>:<secret>`), the marker as its secret.
fn telegram_token() -> String {
    format!("123456:{MARKER}")
}

/// The Discord webhook's path: the marker is its token.
fn webhook_path() -> String {
    format!("/api/webhooks/1180000000000000000/{MARKER}")
}

/// Stand-ins for every peer: the score site (three sources), the five platforms and Bitly.
/// Telegram refuses the token (401), so an error naming its endpoint is printed too.
struct Peers {
    site: MockServer,
    x: MockServer,
    mastodon: MockServer,
    bluesky: MockServer,
    discord: MockServer,
    telegram: MockServer,
    bitly: MockServer,
}

impl Peers {
    async fn start() -> Peers {
        let p = Peers {
            site: MockServer::start().await,
            x: MockServer::start().await,
            mastodon: MockServer::start().await,
            bluesky: MockServer::start().await,
            discord: MockServer::start().await,
            telegram: MockServer::start().await,
            bitly: MockServer::start().await,
        };
        let page = |body: String, kind: &str| {
            ResponseTemplate::new(200)
                .insert_header("content-type", kind)
                .set_body_string(body)
        };
        Mock::given(method("GET"))
            .and(path(format!("/p/{MARKER}/live-scores")))
            .respond_with(page(fixture("cricbuzz/live-scores_2026-07-17.html"), "text/html"))
            .mount(&p.site)
            .await;
        Mock::given(method("GET"))
            .and(path("/json"))
            .and(header("X-RapidAPI-Key", MARKER))
            .respond_with(page(
                fixture("cricbuzz/matches-v1-upcoming_2024-06-16.json"),
                "application/json",
            ))
            .mount(&p.site)
            .await;
        Mock::given(method("GET"))
            .and(path("/currentMatches"))
            .and(query_param("apikey", MARKER))
            .respond_with(page(
                fixture("cricketdata/current-matches_2026-05-18.json"),
                "application/json",
            ))
            .mount(&p.site)
            .await;
        Mock::given(method("POST"))
            .and(path("/2/tweets"))
            .respond_with(
                ResponseTemplate::new(201)
                    .set_body_json(serde_json::json!({"data": {"id": "1800000000000000001", "text": "t"}})),
            )
            .mount(&p.x)
            .await;
        mastodon_accepts(&p.mastodon, MARKER, None).await;
        Mock::given(method("POST"))
            .and(path("/xrpc/com.atproto.server.createSession"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "accessJwt": "access-1", "refreshJwt": "refresh-1",
                "did": "did:plc:cricketbot0000000000000", "handle": "cricket.bsky.social",
            })))
            .mount(&p.bluesky)
            .await;
        Mock::given(method("POST"))
            .and(path("/xrpc/com.atproto.repo.createRecord"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "uri": "at://did:plc:cricketbot0000000000000/app.bsky.feed.post/3k", "cid": "bafyrei",
            })))
            .mount(&p.bluesky)
            .await;
        Mock::given(method("POST"))
            .and(path(webhook_path()))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                serde_json::json!({"id": "1181000000000000001", "channel_id": "1170000000000000000", "content": "ok"}),
            ))
            .mount(&p.discord)
            .await;
        Mock::given(method("POST"))
            .and(path(format!("/bot{}/sendMessage", telegram_token())))
            .respond_with(
                ResponseTemplate::new(401)
                    .set_body_json(serde_json::json!({"ok": false, "error_code": 401, "description": "Unauthorized"})),
            )
            .mount(&p.telegram)
            .await;
        Mock::given(method("POST"))
            .and(path("/v4/shorten"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "link": "https://bit.ly/3xYzAbC", "id": "bit.ly/3xYzAbC", "long_url": "https://www.cricbuzz.com/"
            })))
            .mount(&p.bitly)
            .await;
        p
    }

    /// A channels file naming all five platforms' stand-ins (secrets by variable name only).
    fn channels_file(&self, dir: &Path) -> PathBuf {
        let channels = format!(
            "[[channel]]\nname = \"x\"\nsink = \"x\"\nbase_url = \"{x}\"\n\n\
             [[channel]]\nname = \"toots\"\nsink = \"mastodon\"\ninstance = \"{mastodon}\"\ntoken_env = \"MASTODON_TOKEN\"\n\n\
             [[channel]]\nname = \"sky\"\nsink = \"bluesky\"\nservice = \"{bluesky}\"\nhandle = \"cricket.bsky.social\"\napp_password_env = \"BLUESKY_APP_PASSWORD\"\n\n\
             [[channel]]\nname = \"club\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n\n\
             [[channel]]\nname = \"tg\"\nsink = \"telegram\"\napi_base = \"{telegram}\"\ntoken_env = \"TELEGRAM_BOT_TOKEN\"\nchat_id = \"@cricket_scores_live\"\n",
            x = self.x.uri(),
            mastodon = self.mastodon.uri(),
            bluesky = self.bluesky.uri(),
            telegram = self.telegram.uri(),
        );
        let file = dir.join("channels.toml");
        std::fs::write(&file, channels).unwrap();
        file
    }

    /// Every variable the bot reads that may hold a secret, each holding the marker (in a URL:
    /// as user name, password, query value, path segment and fragment), and the settings that
    /// make the bot use them all.
    fn env(&self, dir: &Path) -> Vec<(&'static str, String)> {
        let site = self.site.uri();
        let with_userinfo = |uri: &str| uri.replacen("http://", &format!("http://{MARKER}:{MARKER}@"), 1);
        vec![
            (
                "SOURCES",
                format!(
                    "cricbuzz={}/p/{MARKER}/live-scores?key={MARKER}&page=1#{MARKER},cricbuzz-json={site}/json,cricketdata={site}/currentMatches",
                    with_userinfo(&site)
                ),
            ),
            ("CRICBUZZ_API_KEY", MARKER.into()),
            ("CRICKETDATA_API_KEY", MARKER.into()),
            ("X_API_BASE_URL", with_userinfo(&self.x.uri())),
            ("X_API_KEY", MARKER.into()),
            ("X_API_SECRET", MARKER.into()),
            ("X_ACCESS_TOKEN", MARKER.into()),
            ("X_ACCESS_TOKEN_SECRET", MARKER.into()),
            ("MASTODON_TOKEN", MARKER.into()),
            ("BLUESKY_APP_PASSWORD", MARKER.into()),
            ("DISCORD_WEBHOOK_URL", format!("{}{}", self.discord.uri(), webhook_path())),
            ("TELEGRAM_BOT_TOKEN", telegram_token()),
            ("SHORTENER", "bitly".into()),
            ("SHORTENER_BASE_URL", format!("{}/", with_userinfo(&self.bitly.uri()))),
            ("BITLY_TOKEN", MARKER.into()),
            ("TEAMS", "Zimbabwe".into()),
            ("MAX_POSTS_PER_CYCLE", "20".into()),
            ("RUST_LOG", "trace".into()),
            ("TEMPLATE_PATH", dir.join("announce.txt").display().to_string()),
        ]
    }
}

/// Where a store's secret goes: Redis's password (a server of the test's own requiring it),
/// PostgreSQL's (the test server trusts loopback, so any password connects), or none
/// (the embedded store has no credential).
struct Store {
    kind: Kind,
    prefix: crate::helpers::Prefix,
    env: Vec<(&'static str, String)>,
    _redis: Option<OwnRedis>,
}

impl Store {
    async fn new(kind: Kind, dir: &Path) -> Store {
        let prefix = unique_prefix();
        let mut redis = None;
        let mut env = vec![("KEY_PREFIX", prefix.to_string())];
        match kind {
            Kind::Redis => {
                let own = OwnRedis::start_with(&["--requirepass", MARKER]);
                env.push(("REDIS_URL", format!("redis://:{MARKER}@127.0.0.1:{}/", own.port())));
                redis = Some(own);
            }
            Kind::Postgres => {
                let schema = schema_for(&prefix);
                ensure_schema(&schema).await;
                let url = schema_url(&schema).replacen("postgres@", &format!("postgres:{MARKER}@"), 1);
                assert!(url.contains(MARKER), "{url}");
                env.push(("DATABASE_URL", url));
            }
            Kind::Embedded => env.push(("STORE_PATH", dir.join("claims.db").display().to_string())),
        }
        Store {
            kind,
            prefix,
            env,
            _redis: redis,
        }
    }
}

/// Variables set for one run: (name, value).
type Env = Vec<(&'static str, String)>;

/// What the bot printed, labelled by the command that printed it.
#[derive(Default)]
struct Outputs(Vec<(String, String)>);

impl Outputs {
    fn add(&mut self, label: impl Into<String>, o: &std::process::Output) {
        let (stdout, stderr) = text(o);
        let label = label.into();
        self.0
            .push((format!("{label} (exit {:?}) stdout", o.status.code()), stdout));
        self.0
            .push((format!("{label} (exit {:?}) stderr", o.status.code()), stderr));
    }

    /// Fails naming every output that holds the marker, with the line that does.
    fn assert_clean(&self) {
        let leaks: Vec<String> = self
            .0
            .iter()
            .flat_map(|(label, out)| {
                out.lines()
                    .filter(|l| l.contains(MARKER))
                    .map(move |l| format!("{label}: {}", l.chars().take(600).collect::<String>()))
            })
            .collect();
        assert!(leaks.is_empty(), "the marker was printed:\n{}", leaks.join("\n"));
    }

    /// The text of the output labelled `label` (stdout or stderr), for the checks that the run
    /// did what it had to.
    fn of(&self, label: &str) -> &str {
        self.0
            .iter()
            .find(|(l, _)| l.starts_with(label))
            .map(|(_, o)| o.as_str())
            .unwrap_or_else(|| panic!("no output labelled {label}"))
    }
}

/// The bot in `dir` with `env` (variables and `.env` lines both: half of them are written to
/// the `.env` file, the bot's file position for secrets, the rest set in its environment).
fn planted(dir: &Path, env: &[(&'static str, String)]) -> tokio::process::Command {
    let mut cmd = bot(dir);
    let mut dotenv = String::new();
    for (i, (k, v)) in env.iter().enumerate() {
        if i % 2 == 0 {
            dotenv.push_str(&format!("{k}='{v}'\n"));
        } else {
            cmd.env(k, v);
        }
    }
    std::fs::write(dir.join(".env"), dotenv).unwrap();
    cmd.env_remove("TEMPLATE_PATH");
    cmd
}

async fn run(outputs: &mut Outputs, dir: &Path, env: &[(&'static str, String)], args: &[&str]) -> std::process::Output {
    let o = planted(dir, env).args(args).output().await.unwrap();
    outputs.add(args.join(" "), &o);
    o
}

/// Every command and output on one store: a dry run, seed's dry run, check-sources (text and
/// JSON), the backfill that posts on five channels, the claims tables and refusals, and a `run`
/// scraped for `/metrics`.
async fn every_output_on(kind: Kind, peers: &Peers) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        crate::helpers::root().join("templates/announce.txt"),
        dir.path().join("announce.txt"),
    )
    .unwrap();
    let store = Store::new(kind, dir.path()).await;
    let mut env = peers.env(dir.path());
    env.extend(store.env.iter().cloned());
    env.push(("CHANNELS_FILE", peers.channels_file(dir.path()).display().to_string()));
    let mut out = Outputs::default();
    for args in [
        &["--dry-run", "backfill"][..],
        &["--dry-run", "--json", "backfill"],
        &["--dry-run", "seed"],
        &["check-sources"],
        &["--json", "check-sources"],
    ] {
        run(&mut out, dir.path(), &env, args).await;
    }
    let o = run(&mut out, dir.path(), &env, &["backfill", "--init-store"]).await;
    // Four channels post the one Zimbabwe match; Telegram refuses its token (exit 5 would be a
    // post of unknown outcome; a refused token is a failed backfill).
    assert_eq!(o.status.code(), Some(4), "{:?}", text(&o).0);
    let key = "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i";
    for channel in ["x", "toots", "sky", "club", "tg"] {
        run(&mut out, dir.path(), &env, &["claims", "list", "--channel", channel]).await;
        run(
            &mut out,
            dir.path(),
            &env,
            &["--json", "claims", "list", "--channel", channel],
        )
        .await;
        run(
            &mut out,
            dir.path(),
            &env,
            &["claims", "show", "--channel", channel, key],
        )
        .await;
        run(
            &mut out,
            dir.path(),
            &env,
            &["claims", "release", "--channel", channel, key],
        )
        .await;
    }
    run(&mut out, dir.path(), &env, &["claims", "reconcile"]).await;
    let listed = out.of("--json claims list --channel x (exit Some(0)) stdout");
    assert!(
        listed.contains(&format!("\"key\":\"{key}\"")) && listed.contains("\"state\":\"posted\""),
        "{listed}"
    );

    // `run` until its first cycle shows in /metrics; the scrape is an output too.
    let addr = format!("127.0.0.1:{}", free_port());
    let mut env_run = env.clone();
    env_run.push(("METRICS_ADDR", addr.clone()));
    let mut cmd = planted(dir.path(), &env_run);
    cmd.arg("run");
    let mut running = Running::start(&mut cmd, dir.path(), "run");
    let metrics = format!("http://{addr}/metrics");
    wait_until("the first cycle shows in /metrics", || async {
        get(&metrics)
            .await
            .is_some_and(|(_, body)| sample(&body, "cricket_announcer_polls_total") == Some(1.0))
    })
    .await;
    let (_, scrape) = get(&metrics).await.unwrap();
    let (_, health) = get(&format!("http://{addr}/healthz")).await.unwrap();
    // The status page and its JSON: every source, channel, post and error it shows.
    let (_, page) = get(&format!("http://{addr}/")).await.unwrap();
    let (_, status) = get(&format!("http://{addr}/status.json")).await.unwrap();
    assert!(status.contains("/p/REDACTED/live-scores"), "{status}");
    running.signal(libc::SIGTERM);
    let code = running.exit_code().await;
    out.0.push((format!("run (exit {code:?}) stderr"), running.log()));
    out.0.push(("/metrics".into(), scrape));
    out.0.push(("/healthz".into(), health));
    out.0.push(("/".into(), page));
    out.0.push(("/status.json".into(), status));
    cleanup(store.kind, &store.prefix).await;
    out
}

/// `--help` of every command, with every variable set to the marker (clap shows a variable's
/// value in `[env: …]` unless told not to).
async fn every_help(peers: &Peers) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let mut env = peers.env(dir.path());
    env.push(("REDIS_URL", format!("redis://:{MARKER}@127.0.0.1:1/")));
    env.push(("DATABASE_URL", format!("postgres://u:{MARKER}@127.0.0.1:1/db")));
    env.push(("CHANNELS_FILE", format!("/etc/{MARKER}/channels.toml")));
    let mut out = Outputs::default();
    for command in std::iter::once(&[][..]).chain(COMMANDS) {
        let mut args = command.to_vec();
        args.push("--help");
        let o = run(&mut out, dir.path(), &env, &args).await;
        assert_eq!(o.status.code(), Some(0), "{args:?}: {:?}", text(&o));
    }
    out
}

/// Settings refused at startup, each with the marker where a pasted secret would be: the
/// error must say what is wrong without echoing it.
async fn every_refusal() -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let m = MARKER;
    // (variables, arguments, what the error says): each refused as a bad setting or usage
    // (exit 2), the value described or its credentials hidden.
    let described = "(24 bytes, not shown)";
    let cases: Vec<(Env, Vec<String>, String)> = vec![
        (
            vec![("CLAIM_TTL_SECS", m.into())],
            vec![],
            format!("invalid CLAIM_TTL_SECS={described}: expected a whole number of seconds"),
        ),
        (
            vec![("POLL_INTERVAL_SECS", m.into())],
            vec![],
            format!("invalid POLL_INTERVAL_SECS={described}"),
        ),
        (
            vec![("POSTS_PER_DAY", format!("1{m}"))],
            vec![],
            "invalid POSTS_PER_DAY=(25 bytes, not shown)".into(),
        ),
        (
            vec![("METRICS_ADDR", m.into())],
            vec![],
            format!("invalid METRICS_ADDR={described}"),
        ),
        (
            vec![("FORMATS", format!("t20i,{m}"))],
            vec![],
            format!("invalid value '{described}' for '--formats <FORMATS>'"),
        ),
        (
            vec![("STATES", m.into())],
            vec![],
            format!("invalid value '{described}' for '--states <STATES>'"),
        ),
        (
            vec![("LOG_FORMAT", m.into())],
            vec![],
            format!("invalid value '{described}' for '--log-format <LOG_FORMAT>'"),
        ),
        (
            vec![("RUST_LOG", m.into())],
            vec![],
            format!("invalid value '{described}' for '--log <LOG>'"),
        ),
        (
            vec![("SHORTENER", m.into())],
            vec![],
            format!("invalid value '{described}' for '--shortener <SHORTENER>'"),
        ),
        (
            vec![("INSTANCE_ID", format!("{m}\u{1b}"))],
            vec![],
            "invalid INSTANCE_ID=(25 bytes, not shown): character 25 is a control character".into(),
        ),
        (
            vec![("X_API_BASE_URL", format!("http://u:{m}@[bad"))],
            vec![],
            "invalid X_API_BASE_URL=\"http://REDACTED@[bad\": invalid IPv6 address".into(),
        ),
        (
            vec![("X_API_BASE_URL", format!("ftp://u:{m}@host/{m}?k={m}"))],
            vec![],
            "invalid X_API_BASE_URL=\"ftp://REDACTED@host/REDACTED?k=REDACTED\": expected an http(s) URL".into(),
        ),
        (
            vec![
                ("SHORTENER", "isgd".into()),
                ("SHORTENER_BASE_URL", format!("http://{m}@[::1")),
            ],
            vec![],
            "invalid SHORTENER_BASE_URL=\"http://REDACTED@[::1\"".into(),
        ),
        (
            vec![("REDIS_URL", format!("http://u:{m}@host/"))],
            vec![],
            "invalid REDIS_URL=\"(hidden)\": expected redis://".into(),
        ),
        (
            vec![("DATABASE_URL", format!("postgres://u:{m}@host/db?sslmode={m}"))],
            vec![],
            format!("invalid DATABASE_URL=\"(hidden)\": sslmode={described} is not one of disable"),
        ),
        (
            vec![("SOURCES", format!("{m}=https://example.com/"))],
            vec![],
            format!("invalid SOURCES=\"{described}=https://example.com/\": unknown source kind {described}"),
        ),
        (
            vec![("SOURCES", format!("cricbuzz=ftp://u:{m}@host/{m}"))],
            vec![],
            "source \"ftp://REDACTED@host/REDACTED\": scheme \"ftp\" is not supported".into(),
        ),
        (
            vec![("SOURCES", format!("cricbuzz=http://u:{m}@[bad/{m}"))],
            vec![],
            "source \"http://REDACTED@[bad/REDACTED\" is not a valid URL".into(),
        ),
        (
            vec![
                ("CRICBUZZ_API_KEY", m.into()),
                ("CRICBUZZ_API_KEY_HEADER", format!("{m} x")),
            ],
            vec![],
            "invalid CRICBUZZ_API_KEY_HEADER=(26 bytes, not shown): not a valid HTTP header name".into(),
        ),
        (
            vec![],
            vec!["claims".into(), "list".into(), "--state".into(), m.into()],
            format!("invalid value '{described}' for '--state <STATE>'"),
        ),
        (
            vec![],
            vec!["backfill".into(), m.into()],
            format!("unexpected argument '{described}' found"),
        ),
        (
            vec![],
            vec![format!("--{m}")],
            "unexpected argument '(26 bytes, not shown)' found".into(),
        ),
        (
            vec![],
            vec!["backfill".into(), format!("--api-key={m}")],
            // clap names the flag alone.
            "unexpected argument '--api-key' found".into(),
        ),
    ];
    let mut out = Outputs::default();
    for (env, args, says) in cases {
        let mut cmd = bot(dir.path());
        cmd.env("KEY_PREFIX", prefix.to_string()).env("SOURCES", "x.html");
        if !env.iter().any(|(k, _)| *k == "DATABASE_URL") {
            cmd.env("REDIS_URL", crate::helpers::redis_url());
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let args = if args.is_empty() {
            ["--dry-run", "backfill"].map(String::from).to_vec()
        } else {
            args
        };
        let o = cmd.args(&args).output().await.unwrap();
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{env:?} {args:?}: {stderr}");
        assert!(stderr.contains(&says), "{env:?} {args:?}: {stderr}");
        out.add(format!("{env:?} {args:?}"), &o);
    }

    // A source given without its scheme is a file path: read, failed, and named without the
    // parts that look like a credential.
    let o = bot(dir.path())
        .env("STORE_PATH", dir.path().join("s.db"))
        .env("SOURCES", format!("{m}:{m}@host"))
        .args(["--dry-run", "backfill"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error=source REDACTED: cannot read REDACTED: No such file"),
        "{stderr}"
    );
    out.add("a source without its scheme", &o);

    // The `.env` file: a line left open and a line that is not `NAME=value`.
    for dotenv in [
        format!("X_API_SECRET=\"{m}\n"),
        format!("{m}\n"),
        format!("X_API_KEY {m}\n"),
    ] {
        std::fs::write(dir.path().join(".env"), &dotenv).unwrap();
        let o = bot(dir.path()).args(["--dry-run", "backfill"]).output().await.unwrap();
        assert_eq!(o.status.code(), Some(2), "{dotenv:?}: {:?}", text(&o));
        out.add(format!(".env {dotenv:?}"), &o);
    }
    std::fs::remove_file(dir.path().join(".env")).unwrap();

    // The channels file: a secret written inline, a URL holding one, a secret of the wrong shape.
    let channels = dir.path().join("channels.toml");
    for (toml, env) in [
        (
            format!("[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"https://mastodon.example\"\ntoken = \"{m}\"\n"),
            vec![],
        ),
        (
            format!("[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"https://u:{m}@mastodon.example\"\ntoken_env = \"T\"\n"),
            vec![],
        ),
        (
            format!("[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"ftp://mastodon.example/{m}\"\ntoken_env = \"T\"\n"),
            vec![],
        ),
        (
            "[[channel]]\nname = \"d\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n".into(),
            vec![("DISCORD_WEBHOOK_URL", format!("https://example.com/hooks/{m}"))],
        ),
        (
            "[[channel]]\nname = \"t\"\nsink = \"telegram\"\ntoken_env = \"TELEGRAM_BOT_TOKEN\"\nchat_id = \"@c\"\n".into(),
            vec![("TELEGRAM_BOT_TOKEN", m.to_string())],
        ),
        (format!("[[channel]]\nname = \"{m}\"\nsink = \"{m}\"\n"), vec![]),
    ] {
        std::fs::write(&channels, &toml).unwrap();
        let o = bot(dir.path())
            .env("CHANNELS_FILE", &channels)
            .env("STORE_PATH", dir.path().join("s.db"))
            .envs(env)
            .args(["--dry-run", "backfill", "--source", "x.html"])
            .output()
            .await
            .unwrap();
        assert_ne!(o.status.code(), Some(0), "{toml}: {:?}", text(&o));
        out.add(format!("channels file {toml:?}"), &o);
    }
    out
}

async fn received(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_marker_secret_planted_everywhere_is_never_printed() {
    assert!(cricket_announcer::redact::looks_like_token(MARKER));
    let peers = Peers::start().await;
    let mut all = Outputs::default();
    for kind in [Kind::Redis, Kind::Postgres, Kind::Embedded] {
        let out = every_output_on(kind, &peers).await;
        // The runs did what they had to: the posting backfill reached every platform and the
        // tables list its claims.
        assert!(
            out.of("backfill --init-store").contains("posted 4"),
            "{kind:?}: {}",
            out.of("backfill --init-store")
        );
        all.0.extend(out.0);
    }
    all.0.extend(every_help(&peers).await.0);
    all.0.extend(every_refusal().await.0);
    all.assert_clean();

    // The marker really went where it belongs: every platform was reached with it.
    let oauth_keys = received(&peers.x)
        .await
        .iter()
        .filter(|r| {
            r.headers.get("authorization").is_some_and(|a| {
                a.to_str()
                    .unwrap_or("")
                    .contains(&format!("oauth_consumer_key=\"{MARKER}\""))
            })
        })
        .count();
    assert_eq!(oauth_keys, 3, "one post on X per store");
    for (name, server, want) in [
        ("mastodon", &peers.mastodon, format!("Bearer {MARKER}")),
        ("bitly", &peers.bitly, format!("Bearer {MARKER}")),
    ] {
        assert!(
            received(server).await.iter().any(|r| r
                .headers
                .get_all("authorization")
                .iter()
                .any(|a| a.to_str().unwrap_or("") == want)),
            "{name} never got the marker"
        );
    }
    for (name, server, want) in [
        ("discord", &peers.discord, webhook_path()),
        (
            "telegram",
            &peers.telegram,
            format!("/bot{}/sendMessage", telegram_token()),
        ),
        ("site", &peers.site, format!("/p/{MARKER}/live-scores")),
    ] {
        assert!(
            received(server).await.iter().any(|r| r.url.path() == want),
            "{name} never got the marker"
        );
    }
}
