//! Channels (issue 21): one bot announcing each match once per channel, with a channels file
//! naming X, Mastodon and Discord stand-ins on loopback that follow each platform's documented
//! contract. Three processes × three channels race on one page on each store; a failure on one
//! channel neither blocks nor repeats another; a channel added to a running deployment records
//! what is current instead of posting it.

use crate::cli::{bot, page_server, start, text, wait_all, CRICBUZZ_KEYS};
use crate::helpers::{redis_url, unique_prefix, x_accepts, Kind};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const WEBHOOK: &str = "/api/webhooks/1180000000000000000/tok-secret";

/// A Mastodon instance's limits on `server` (`GET /api/v2/instance`): 500 characters, links
/// weigh 23.
pub(crate) async fn mastodon_instance(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/api/v2/instance"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "configuration": {"statuses": {"max_characters": 500, "characters_reserved_per_url": 23}}
        })))
        .mount(server)
        .await;
}

/// A Mastodon instance on `server`: its limits ([`mastodon_instance`]), and a status
/// created for each post with `Bearer {token}`; exactly `times` of them when given (checked
/// when `server` is verified or dropped).
pub(crate) async fn mastodon_accepts(server: &MockServer, token: &str, times: Option<u64>) {
    mastodon_instance(server).await;
    // A channel that does not set `language` posts in English.
    let statuses = Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .and(header("authorization", format!("Bearer {token}").as_str()))
        .and(body_partial_json(serde_json::json!({"language": "en"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"id": "110000000000000001", "url": "https://mastodon.example/@bot/110000000000000001"}),
        ));
    match times {
        Some(n) => statuses.expect(n).mount(server).await,
        None => statuses.mount(server).await,
    }
}

/// The three platforms' stand-ins.
struct Platforms {
    x: MockServer,
    mastodon: MockServer,
    discord: MockServer,
}

impl Platforms {
    /// X and Mastodon accepting exactly `x` and `mastodon` posts (checked by
    /// [`Platforms::verify`], and when dropped); Discord answering `discord` when given.
    async fn accepting(x: u64, mastodon: u64, discord: Option<ResponseTemplate>) -> Platforms {
        let p = Platforms {
            x: MockServer::start().await,
            mastodon: MockServer::start().await,
            discord: MockServer::start().await,
        };
        x_accepts(&p.x, x).await;
        mastodon_accepts(&p.mastodon, "mastodon-secret", Some(mastodon)).await;
        let answer = discord.unwrap_or_else(|| {
            ResponseTemplate::new(200).set_body_json(
                serde_json::json!({"id": "1181000000000000001", "channel_id": "1170000000000000000", "content": "ok"}),
            )
        });
        Mock::given(method("POST"))
            .and(path(WEBHOOK))
            .and(query_param("wait", "true"))
            .respond_with(answer)
            .mount(&p.discord)
            .await;
        p
    }

    /// Writes the channels file for these stand-ins into `dir`, with `channels` of them.
    fn file(&self, dir: &Path, channels: &[&str]) -> std::path::PathBuf {
        let mut toml = String::new();
        for c in channels {
            toml.push_str(&match *c {
                "x" => format!("[[channel]]\nname = \"x\"\nsink = \"x\"\nbase_url = \"{}\"\n\n", self.x.uri()),
                "mastodon" => format!(
                    "[[channel]]\nname = \"mastodon\"\nsink = \"mastodon\"\ninstance = \"{}\"\ntoken_env = \"MASTODON_TOKEN\"\n\n",
                    self.mastodon.uri()
                ),
                "discord" => "[[channel]]\nname = \"discord\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n\n".to_string(),
                other => panic!("{other}"),
            });
        }
        let file = dir.join("channels.toml");
        std::fs::write(&file, toml).unwrap();
        file
    }

    async fn discord_posts(&self) -> usize {
        self.discord
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path() == WEBHOOK)
            .count()
    }

    async fn verify(&self) {
        self.x.verify().await;
        self.mastodon.verify().await;
    }
}

/// The bot with the channels file `file`, the store `store` (env pairs), reading `source`.
fn bot_with(dir: &Path, p: &Platforms, file: &Path, store: &[(&str, String)], source: &str) -> tokio::process::Command {
    let mut cmd = bot(dir);
    cmd.env("CHANNELS_FILE", file)
        .env("X_API_KEY", "k")
        .env("X_API_SECRET", "s")
        .env("X_ACCESS_TOKEN", "t")
        .env("X_ACCESS_TOKEN_SECRET", "ts")
        .env("MASTODON_TOKEN", "mastodon-secret")
        .env("DISCORD_WEBHOOK_URL", format!("{}{WEBHOOK}", p.discord.uri()))
        .env("SOURCES", source)
        .env("MAX_POSTS_PER_CYCLE", "10");
    for (k, v) in store {
        cmd.env(k, v);
    }
    cmd
}

/// `claims list --channel CHANNEL --json`: (match key, state) sorted.
async fn claims_of(
    dir: &Path,
    p: &Platforms,
    file: &Path,
    store: &[(&str, String)],
    prefix: &str,
    channel: &str,
) -> Vec<(String, String)> {
    let o = bot_with(dir, p, file, store, "x")
        .env("KEY_PREFIX", prefix)
        .args(["claims", "list", "--channel", channel, "--json"])
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let mut rows: Vec<(String, String)> = crate::helpers::listed(&text(&o).0);
    rows.sort();
    rows
}

/// A deployment on Redis under a prefix of its own, reading the saved page, posting to the
/// stand-ins: what most tests here run the bot in, with one channels file or another.
struct OnRedis {
    p: Platforms,
    dir: tempfile::TempDir,
    prefix: crate::helpers::Prefix,
    store: Vec<(&'static str, String)>,
    /// The saved page's address; the server is kept alive with it.
    source: String,
    _site: MockServer,
}

impl OnRedis {
    async fn new(p: Platforms) -> OnRedis {
        let site = page_server().await;
        OnRedis {
            p,
            dir: tempfile::tempdir().unwrap(),
            prefix: unique_prefix(),
            store: vec![("REDIS_URL", redis_url())],
            source: format!("{}/cricket-match/live-scores", site.uri()),
            _site: site,
        }
    }

    /// The channels file naming `channels` of the stand-ins.
    fn file(&self, channels: &[&str]) -> std::path::PathBuf {
        self.p.file(self.dir.path(), channels)
    }

    /// The bot with the channels file `file`, reading `source`, running `args`, to its end.
    async fn run_reading(&self, file: &Path, source: &str, args: &[&str]) -> std::process::Output {
        bot_with(self.dir.path(), &self.p, file, &self.store, source)
            .env("KEY_PREFIX", &*self.prefix)
            .args(args)
            .output()
            .await
            .unwrap()
    }

    /// As [`OnRedis::run_reading`], reading the saved page.
    async fn run(&self, file: &Path, args: &[&str]) -> std::process::Output {
        self.run_reading(file, &self.source, args).await
    }

    /// `claims list --channel CHANNEL --json`: (match key, state) sorted.
    async fn claims_of(&self, file: &Path, channel: &str) -> Vec<(String, String)> {
        claims_of(self.dir.path(), &self.p, file, &self.store, &self.prefix, channel).await
    }
}

async fn three_processes_on_three_channels_post_once_per_match_and_channel(kind: Kind) {
    let site = page_server().await;
    let p = Platforms::accepting(4, 4, None).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let store = crate::helpers::store_env(kind, &prefix, dir.path()).await;
    let file = p.file(dir.path(), &["x", "mastodon", "discord"]);
    let source = format!("{}/cricket-match/live-scores", site.uri());
    let children: Vec<_> = (0..3)
        .map(|i| {
            let mut cmd = bot_with(dir.path(), &p, &file, &store, &source);
            cmd.env("KEY_PREFIX", &*prefix)
                .env("INSTANCE_ID", format!("replica-{i}"))
                .args(["backfill", "--init-store"]);
            start(&mut cmd)
        })
        .collect();
    let outputs = wait_all(children).await;
    // Every process's stdout and log, so a failure below says what each process did.
    let said = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (stdout, stderr) = text(o);
            format!("--- replica-{i} ({}):\n{stdout}{stderr}", o.status)
        })
        .collect::<String>();
    for o in &outputs {
        assert!(o.status.success(), "{said}");
    }
    // Exactly one post per (match, channel): 4 on each platform, 12 in all.
    assert_eq!(p.discord_posts().await, 4, "{said}");
    p.verify().await;
    let posted: usize = outputs
        .iter()
        .map(|o| crate::cli::number_after(&text(o).0, "posted ", ',').unwrap_or(0) as usize)
        .sum();
    assert_eq!(posted, 12, "{said}");
    // Each channel holds its own claim on each match.
    for channel in ["x", "mastodon", "discord"] {
        let listed = claims_of(dir.path(), &p, &file, &store, &prefix, channel).await;
        let want: Vec<(String, String)> = CRICBUZZ_KEYS
            .iter()
            .map(|k| (k.to_string(), "posted".to_string()))
            .collect();
        assert_eq!(listed, want, "{channel}\n{said}");
    }
}

crate::helpers::store_matrix!(three_processes_on_three_channels_post_once_per_match_and_channel);

/// The connection of this test's bot (its application name is `schema`) that waits for a lock on
/// PostgreSQL's `store_keys`, once there is one; fails when `bot` ends first (it never waited).
async fn waiting_in_store_keys(schema: &str, bot: &mut tokio::process::Child) -> i32 {
    let watch = crate::helpers::raw_postgres(schema).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let waiting = watch
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()
                 AND wait_event_type = 'Lock' AND query LIKE '%store_keys%'",
                &[&schema],
            )
            .await
            .unwrap();
        if let Some(row) = waiting {
            return row.get(0);
        }
        assert!(
            bot.try_wait().unwrap().is_none(),
            "the bot ended without waiting for the lock"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the bot never waited for the lock"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A process stopped while it initialises a store, after some channels' first-start markers and
/// before the others', leaves no channel that a later `--init-store` takes for one added since:
/// every match is still announced on every channel. That moment is the one a replica starting
/// beside an initialiser can meet (three `backfill --init-store` at once under load: Discord,
/// the last channel, was recorded `seeded` by a replica that found the deployment initialised
/// and Discord's marker not yet written, and none of its matches was posted while every process
/// exited 0). PostgreSQL holds the moment open: an uncommitted row at Discord's marker key makes
/// the first process wait there until it is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_stopped_while_initialising_the_store_leaves_every_channel_to_announce() {
    let site = page_server().await;
    let p = Platforms::accepting(4, 4, None).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let schema = crate::helpers::schema_for(&prefix);
    // The ledger, made by a store of the test's own, so the row below can be written.
    crate::helpers::store(Kind::Postgres, &prefix, "setup", dir.path()).await;
    let store = crate::helpers::store_env(Kind::Postgres, &prefix, dir.path()).await;
    let file = p.file(dir.path(), &["x", "mastodon", "discord"]);
    let source = format!("{}/cricket-match/live-scores", site.uri());
    let init = |instance: &str| {
        let mut cmd = bot_with(dir.path(), &p, &file, &store, &source);
        cmd.env("KEY_PREFIX", &*prefix)
            .env("INSTANCE_ID", instance)
            .args(["backfill", "--init-store"]);
        cmd
    };
    let mut admin = crate::helpers::raw_postgres(&schema).await;
    let hold = admin.transaction().await.unwrap();
    hold.execute(
        "INSERT INTO store_keys (key, value, expires_at) VALUES ($1, '{}', now() + interval '1 hour')",
        &[&format!("{}ch:discord:store:initialised", &*prefix)],
    )
    .await
    .unwrap();
    let mut first = start(&mut init("first"));
    let waiting = waiting_in_store_keys(&schema, &mut first).await;
    // Stopped there: the process, then its statement, before the row it waits for is let go.
    first.start_kill().unwrap();
    let stopped = first.wait_with_output().await.unwrap();
    let ended: bool = hold
        .query_one("SELECT pg_terminate_backend($1, 5000)", &[&waiting])
        .await
        .unwrap()
        .get(0);
    assert!(ended, "{:?}", text(&stopped));
    hold.rollback().await.unwrap();

    let o = init("second").output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("x: posted 4, skipped 0, failed 0; mastodon: posted 4, skipped 0, failed 0; discord: posted 4, skipped 0, failed 0"),
        "{stdout}{stderr}"
    );
    assert_eq!(p.discord_posts().await, 4, "{stdout}{stderr}");
    p.verify().await;
    let want: Vec<(String, String)> = CRICBUZZ_KEYS
        .iter()
        .map(|k| (k.to_string(), "posted".to_string()))
        .collect();
    for channel in ["x", "mastodon", "discord"] {
        let listed = claims_of(dir.path(), &p, &file, &store, &prefix, channel).await;
        assert_eq!(listed, want, "{channel}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_halts_neither_blocks_nor_repeats_the_others() {
    // Discord says the webhook is gone: that channel halts; X and Mastodon post every match.
    let gone =
        ResponseTemplate::new(404).set_body_json(serde_json::json!({"message": "Unknown Webhook", "code": 10015}));
    let d = OnRedis::new(Platforms::accepting(4, 4, Some(gone)).await).await;
    let file = d.file(&["discord", "x", "mastodon"]);
    let o = d.run(&file, &["backfill", "--init-store"]).await;
    let (stdout, stderr) = text(&o);
    // Exit 4: a channel refused to post and needs the operator, while the others posted.
    assert_eq!(o.status.code(), Some(4), "{stdout}{stderr}");
    assert!(
        stdout.contains("discord: posted 0, skipped 0, failed 1, halted: "),
        "{stdout}"
    );
    assert!(stdout.contains("x: posted 4, skipped 0, failed 0"), "{stdout}");
    assert!(stdout.contains("mastodon: posted 4, skipped 0, failed 0"), "{stdout}");
    // One request reached the dead webhook; the channel then stopped.
    assert_eq!(d.p.discord_posts().await, 1);

    // Again: X and Mastodon skip every match (never repeat), Discord is tried afresh.
    let o = d.run(&file, &["backfill"]).await;
    let (stdout, _) = text(&o);
    assert!(stdout.contains("x: posted 0, skipped 4, failed 0"), "{stdout}");
    assert!(stdout.contains("mastodon: posted 0, skipped 4, failed 0"), "{stdout}");

    // A bounded run ends as the backfill did: exit 4 for the halted channel, not 5 for its
    // failed post, and still nothing repeated elsewhere.
    let o = d.run(&file, &["run", "--cycles", "1"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}{stderr}");
    assert_eq!(d.p.discord_posts().await, 3);
    d.p.verify().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_added_to_a_running_deployment_records_what_is_current_without_posting() {
    let d = OnRedis::new(Platforms::accepting(4, 0, None).await).await;
    // Running with X alone.
    let o = d.run(&d.file(&["x"]), &["backfill", "--init-store"]).await;
    assert!(
        text(&o).0.contains("x: posted 4, skipped 0, failed 0"),
        "{:?}",
        text(&o)
    );
    // Mastodon added: its first cycle records the current matches (as `seed` does: the eight
    // with both teams known, finished ones too) and posts none.
    let with_mastodon = d.file(&["x", "mastodon"]);
    // A dry run first shows just that: Mastodon's eight records, no post on any channel.
    let o = d.run(&with_mastodon, &["--dry-run", "backfill"]).await;
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout.matches("[mastodon] would record ").count(), 8, "{stdout}");
    assert!(!stdout.contains("Coming up"), "{stdout}");
    assert!(stderr.contains("new channel: a real run records"), "{stderr}");
    let o = d.run(&with_mastodon, &["backfill"]).await;
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("x: posted 0, skipped 4, failed 0; mastodon: posted 0, skipped 0, failed 0, seeded 8"),
        "{stdout}"
    );
    assert!(
        stderr.contains("new channel: recording the matches listed now without posting them"),
        "{stderr}"
    );
    let seeded = d.claims_of(&with_mastodon, "mastodon").await;
    assert_eq!(seeded.iter().filter(|(_, s)| s == "seeded").count(), 8);
    let mastodon_posts =
        d.p.mastodon
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path() == "/api/v1/statuses")
            .count();
    assert_eq!(mastodon_posts, 0);
}

/// A channel's own first-start marker is extended while the deployment runs, as the
/// deployment's is: left to expire (three claim TTLs, 30 days by default), it made the next
/// start take a running channel for one just added, recording what was listed then without
/// posting it. The marker is set to expire in 2 s (as if a month had passed), one cycle runs,
/// and after 3 s the next start still posts on the channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_channels_own_marker_is_extended_so_a_restart_after_a_month_still_posts() {
    let d = OnRedis::new(Platforms::accepting(4, 4, None).await).await;
    let file = d.file(&["x", "mastodon"]);
    let o = d.run(&file, &["backfill", "--init-store"]).await;
    assert!(o.status.success(), "{:?}", text(&o));
    let mut conn = crate::helpers::raw_redis().await;
    let markers: Vec<String> = crate::helpers::keys(&d.prefix)
        .await
        .into_iter()
        .filter(|k| k.ends_with("store:initialised"))
        .collect();
    // The deployment's marker and each channel's own.
    assert_eq!(markers.len(), 3, "{markers:?}");
    for key in &markers {
        let _: i64 = redis::cmd("EXPIRE")
            .arg(key)
            .arg(2)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let o = d.run(&file, &["backfill"]).await;
    assert!(o.status.success(), "{:?}", text(&o));
    let ttl_days = 3 * 864_000 / 86_400;
    for key in &markers {
        let ttl: i64 = redis::cmd("TTL").arg(key).query_async(&mut conn).await.unwrap();
        assert!(ttl > (ttl_days - 1) * 86_400, "{key} lives {ttl} s more");
    }
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let o = d.run(&file, &["backfill"]).await;
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("new channel: recording"), "{stderr}");
    assert!(
        stdout.contains("x: posted 0, skipped 4, failed 0; mastodon: posted 0, skipped 4, failed 0"),
        "{stdout}"
    );
}

/// Every key under `prefix` with its value (Redis `DUMP`) and time to live in ms (`PTTL`).
async fn store_snapshot(prefix: &str) -> Vec<(String, Vec<u8>, i64)> {
    let mut conn = crate::helpers::raw_redis().await;
    let mut out = Vec::new();
    for key in crate::helpers::keys(prefix).await {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&key).query_async(&mut conn).await.unwrap();
        let pttl: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut conn).await.unwrap();
        out.push((key, dump, pttl));
    }
    out
}

/// `seed --dry-run` is `seed` writing nothing: it walks every channel of the file, or only
/// `--channel NAME`, and finds each match as its claim would (issue 30: it used to read the
/// first channel alone and ignore `--channel`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_seed_lists_every_channels_records_or_only_the_named_ones_and_writes_nothing() {
    let d = OnRedis::new(Platforms::accepting(0, 0, None).await).await;
    let file = d.file(&["x", "mastodon"]);
    // x seeded for real: its matches are claimed there, and mastodon's are not.
    let o = d.run(&file, &["seed", "--channel", "x"]).await;
    assert!(o.status.success(), "{:?}", text(&o));
    let before = store_snapshot(&d.prefix).await;
    assert!(before.len() > 8, "{before:?}");
    // The keys the lines starting with `start` name (`[x] already claimed KEY  TITLE…`).
    let keys = |stdout: &str, start: &str| -> Vec<String> {
        let mut keys: Vec<String> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(start))
            .map(|rest| rest.split("  ").next().unwrap_or_default().to_string())
            .collect();
        keys.sort();
        keys
    };

    let o = d.run(&file, &["--dry-run", "seed"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let held = keys(&stdout, "[x] already claimed ");
    assert_eq!(held.len(), 8, "{stdout}");
    assert_eq!(keys(&stdout, "[mastodon] would record "), held, "{stdout}");
    assert_eq!(stdout.lines().count(), 8 + 8 + 1, "{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "seed (dry run, nothing written): sources read 1, failed 0; matches seen 9, not announceable 1; \
             would record 8, already claimed 8; x: would record 0, already claimed 8; \
             mastodon: would record 8, already claimed 0; the store is already initialised (by "
        ),
        "{last}"
    );

    let o = d.run(&file, &["--dry-run", "seed", "--channel", "mastodon"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(keys(&stdout, "[mastodon] would record "), held, "{stdout}");
    assert!(!stdout.contains("[x] "), "{stdout}");
    assert_eq!(stdout.lines().count(), 8 + 1, "{stdout}");
    assert!(
        stdout.contains("; would record 8, already claimed 0; mastodon: would record 8, already claimed 0; the store"),
        "{stdout}"
    );

    // Nothing written: the same keys and values, and no claim's time to live refreshed (as a
    // real seed refreshes the claims it finds).
    let after = store_snapshot(&d.prefix).await;
    assert_eq!(
        after.iter().map(|(k, v, _)| (k, v)).collect::<Vec<_>>(),
        before.iter().map(|(k, v, _)| (k, v)).collect::<Vec<_>>()
    );
    for ((key, _, was), (_, _, now)) in before.iter().zip(&after) {
        assert!(now <= was, "{key}: time to live {was} ms before, {now} ms after");
    }
}

#[tokio::test]
async fn a_dry_run_prints_each_channels_post_fitted_to_its_sink() {
    let p = Platforms::accepting(0, 0, None).await;
    let dir = tempfile::tempdir().unwrap();
    let file = p.file(dir.path(), &["x", "mastodon", "discord"]);
    let page = crate::helpers::root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let o = bot_with(dir.path(), &p, &file, &[], &page.display().to_string())
        .env("STORE_PATH", dir.path().join("none.db"))
        .args(["--dry-run", "backfill"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    for (channel, length) in [
        ("x", "weighted length 157/280"),
        ("mastodon", "/500 characters (URLs counted as reserved)"),
        ("discord", "/2000 UTF-16 code units"),
    ] {
        let headers: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with(&format!("--- [{channel}] ")))
            .collect();
        assert_eq!(headers.len(), 4, "{channel}: {stdout}");
        assert!(headers.iter().any(|h| h.contains(length)), "{channel}: {headers:?}");
    }
    assert_eq!(p.discord_posts().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mastodon_posts_that_timed_out_are_settled_by_replaying_the_same_idempotency_key() {
    // A Mastodon that keeps Idempotency-Keys as the real one does (mastodon#21840): a create
    // whose key is stored answers the status made for it and creates nothing; any other makes
    // a status, and its key is stored only once it is saved, which here takes 3 s for a key's
    // first create (too late for the bot, whose POST_TIMEOUT_SECS is 1) and 400 ms after.
    let deployment = TimingOut::start(("MASTODON_TOKEN", "mastodon-secret"), |uri| {
        format!("name = \"toots\"\nsink = \"mastodon\"\ninstance = \"{uri}\"\ntoken_env = \"MASTODON_TOKEN\"\n")
    })
    .await;
    let mastodon = &deployment.platform;
    // Per key: the status made first, when its key is stored, and every status made.
    type Kept = HashMap<String, (String, std::time::Instant, Vec<String>)>;
    let statuses: Arc<Mutex<Kept>> = Arc::default();
    let kept = statuses.clone();
    let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(move |req: &wiremock::Request| {
            let key = req
                .headers
                .get("idempotency-key")
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let mut keys = kept.lock().unwrap();
            let now = std::time::Instant::now();
            if let Some((id, _, _)) = keys.get(&key).filter(|(_, stored, _)| *stored <= now) {
                return ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": id, "url": null}));
            }
            let id = format!("11{:016}", made.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1);
            let save = std::time::Duration::from_millis(if keys.contains_key(&key) { 400 } else { 3000 });
            let entry = keys.entry(key).or_insert_with(|| (id.clone(), now + save, Vec::new()));
            entry.2.push(id.clone());
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"id": id, "url": null}))
                .set_delay(save)
        })
        .mount(mastodon)
        .await;
    let o = deployment.backfill_timing_out().await;
    // The failure names the setting that cut the post off.
    let stderr = text(&o).1;
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no answer from mastodon"))
        .collect();
    assert_eq!(failures.len(), 4, "{stderr}");
    assert!(
        failures.iter().all(|l| l.contains("/api/v1/statuses within POST_TIMEOUT_SECS (the bound on one request: raise it if the platform is often this slow)")),
        "{stderr}"
    );
    assert_eq!(deployment.states().await, vec!["unknown"; 4]);

    let creates = || async {
        let requests = mastodon.received_requests().await.unwrap();
        requests.iter().filter(|r| r.url.path() == "/api/v1/statuses").count()
    };
    assert_eq!(creates().await, 4);
    // At once: the instance may still be saving the first creates (here it is), so a repeat
    // could make a second status. Each claim is left for MASTODON_SETTLE after its send.
    let o = deployment.run(&["claims", "reconcile"]).output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.contains("(unknown): waiting: the platform may still be saving the last send: repeated from "))
            .count(),
        4,
        "{stdout}"
    );
    assert_eq!(creates().await, 4, "nothing repeated");
    // Eleven minutes later (the records' times moved back), two reconcilers at once (two
    // replicas' `run`, or an operator's `claims reconcile` beside one): each claim's post is
    // repeated by one of them only, as two repeats at once could make two statuses.
    deployment.age_claims(chrono::Duration::minutes(11)).await;
    // ...by which time the instance has long saved the first creates.
    let saved = statuses
        .lock()
        .unwrap()
        .values()
        .map(|(_, stored, _)| *stored)
        .max()
        .unwrap();
    tokio::time::sleep(saved.saturating_duration_since(std::time::Instant::now())).await;
    let (a, b) = tokio::join!(
        deployment.run(&["claims", "reconcile"]).output(),
        deployment.run(&["claims", "reconcile"]).output()
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let stdout = format!("{}{}", text(&a).0, text(&b).0);
    assert_eq!(
        (a.status.code(), b.status.code()),
        (Some(0), Some(0)),
        "{:?}{:?}",
        text(&a),
        text(&b)
    );
    assert_eq!(creates().await, 4 + 4, "one repeat per claim: {stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.contains("(unknown): posted: 11")).count(),
        4,
        "{stdout}"
    );
    // Four statuses, each made once: the repeats were answered from the key.
    let statuses = statuses.lock().unwrap().clone();
    assert_eq!(
        statuses.values().map(|(_, _, made)| made.len()).collect::<Vec<_>>(),
        vec![1; 4]
    );
    let made: HashMap<String, String> = statuses.into_iter().map(|(k, (id, _, _))| (k, id)).collect();
    let o = deployment.run(&["claims", "list", "--json"]).output().await.unwrap();
    let mut ids: Vec<String> = text(&o)
        .0
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| {
            assert_eq!(r["claim"]["state"], "posted");
            assert!(r["claim"]["dedupe_key"]
                .as_str()
                .unwrap()
                .starts_with("cricket-announcer-"));
            r["claim"]["post_id"].as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    let mut want: Vec<String> = made.values().cloned().collect();
    want.sort();
    assert_eq!(ids, want, "each claim names the status made for it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_cycle_reads_every_channels_claims_in_one_batch() {
    use crate::helpers::{live_app_on, root, OwnRedis};
    let redis = OwnRedis::start();
    let discord = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(WEBHOOK))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": "1181000000000000001"})))
        .expect(12)
        .mount(&discord)
        .await;
    // The webhook's variable, named for this test alone (the test process shares one environment).
    let var = format!("T_WEBHOOK_{}", uuid::Uuid::new_v4().simple()).to_uppercase();
    std::env::set_var(&var, format!("{}{WEBHOOK}", discord.uri()));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("channels.toml");
    let mut toml = String::new();
    for name in ["club-a", "club-b", "club-c"] {
        toml.push_str(&format!(
            "[[channel]]\nname = \"{name}\"\nsink = \"discord\"\nwebhook_url_env = \"{var}\"\n\n"
        ));
    }
    std::fs::write(&file, toml).unwrap();
    let page = root()
        .join("fixtures/cricbuzz/live-scores_2026-07-17.html")
        .display()
        .to_string();
    let store = [
        "--redis-url".to_string(),
        redis.url(),
        "--channels".to_string(),
        file.display().to_string(),
    ];
    let x = MockServer::start().await;
    let app = live_app_on(&store, "b:", &[page], &x, 10).await.unwrap();
    app.init_store().await.unwrap();
    let (first, ok) = app.backfill().await;
    assert_eq!((first.posted, ok), (12, true), "{}", first.line(false));

    let stats = |section: &'static str| {
        let url = redis.url();
        async move {
            let mut conn = redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            redis::cmd("INFO")
                .arg(section)
                .query_async::<String>(&mut conn)
                .await
                .unwrap()
        }
    };
    let calls =
        |info: &str, cmd: &str| -> u64 { crate::helpers::command_stats_of(info).get(cmd).copied().unwrap_or(0) };
    let before = stats("commandstats").await;
    let (held, ok) = app.backfill().await;
    let after = stats("commandstats").await;
    assert_eq!((held.posted, held.skipped, ok), (0, 12, true), "{}", held.line(false));
    // Twelve claims on three channels, read by one MGET: one round trip, not one per channel.
    let grew: Vec<u64> = ["mget", "get", "getex", "evalsha"]
        .iter()
        .map(|c| calls(&after, c) - calls(&before, c))
        .collect();
    assert_eq!(grew, vec![1, 0, 0, 0], "mget, get, getex, evalsha");
    std::env::remove_var(&var);
    discord.verify().await;
}

#[tokio::test]
async fn a_channels_file_with_credentials_in_a_url_or_that_is_not_a_file_is_refused_without_echoing_them() {
    let p = Platforms::accepting(0, 0, None).await;
    let dir = tempfile::tempdir().unwrap();
    let page = crate::helpers::root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let with_userinfo = dir.path().join("userinfo.toml");
    std::fs::write(
        &with_userinfo,
        "[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"https://bot:SECRETPW@mastodon.example\"\ntoken_env = \"MASTODON_TOKEN\"\n",
    )
    .unwrap();
    for (file, says) in [
        (with_userinfo.as_path(), "holds a user name or password"),
        (Path::new("/dev/zero"), "not a regular file of at most 1048576 bytes"),
    ] {
        let o = bot_with(dir.path(), &p, file, &[], &page.display().to_string())
            .env("STORE_PATH", dir.path().join("none.db"))
            .args(["--dry-run", "backfill"])
            .output()
            .await
            .unwrap();
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains("SECRETPW"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_channel_waits_for_a_cycle_where_every_source_reads_and_init_store_does_not_flood_it() {
    let d = OnRedis::new(Platforms::accepting(4, 0, None).await).await;
    let o = d.run(&d.file(&["x"]), &["backfill", "--init-store"]).await;
    assert!(text(&o).0.contains("x: posted 4"), "{:?}", text(&o));
    let with_mastodon = d.file(&["x", "mastodon"]);
    // A source fails: the new channel records nothing yet (its matches would be posted later).
    let failing = format!(
        "{},cricketdata={}",
        d.source,
        d.dir.path().join("nosuch.json").display()
    );
    let o = d.run_reading(&with_mastodon, &failing, &["backfill"]).await;
    let (stdout, stderr) = text(&o);
    assert!(stdout.contains("mastodon: posted 0, skipped 0, failed 0"), "{stdout}");
    assert!(!stdout.contains("seeded"), "{stdout}");
    assert!(
        stderr.contains("not recording the current matches while a source fails"),
        "{stderr}"
    );
    // `--init-store` on the store already initialised: the new channel seeds itself, posts nothing.
    let o = d.run(&with_mastodon, &["backfill", "--init-store"]).await;
    let (stdout, _) = text(&o);
    assert!(
        stdout.contains("mastodon: posted 0, skipped 0, failed 0, seeded 8"),
        "{stdout}"
    );
    d.p.verify().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bluesky_posts_that_timed_out_are_found_at_their_record_key_or_created_there_once() {
    const DID: &str = "did:plc:cricketbot0000000000000";
    // A PDS as Bluesky runs one: a create at a record key that holds a record fails (500 today,
    // atproto#3718), `getRecord` reads a key. The first two creates land and answer too late;
    // the last two are lost before they land (and also answer too late).
    let deployment = TimingOut::start(("BLUESKY_APP_PASSWORD", "app-pass-secret"), |uri| {
        format!("name = \"sky\"\nsink = \"bluesky\"\nservice = \"{uri}\"\nhandle = \"cricket.bsky.social\"\napp_password_env = \"BLUESKY_APP_PASSWORD\"\n")
    })
    .await;
    let pds = &deployment.platform;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.server.createSession"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "accessJwt": "access-1", "refreshJwt": "refresh-1", "did": DID, "handle": "cricket.bsky.social",
        })))
        .mount(pds)
        .await;
    let records: Arc<Mutex<(HashMap<String, String>, usize)>> = Arc::default();
    let kept = records.clone();
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .respond_with(move |req: &wiremock::Request| {
            let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
            let rkey = body["rkey"].as_str().unwrap().to_string();
            let text = body["record"]["text"].as_str().unwrap().to_string();
            let mut r = kept.lock().unwrap();
            r.1 += 1;
            let uri = format!("at://{DID}/app.bsky.feed.post/{rkey}");
            if r.0.contains_key(&rkey) {
                return ResponseTemplate::new(500).set_body_json(
                    serde_json::json!({"error": "InternalServerError", "message": "Internal Server Error"}),
                );
            }
            let first_time = r.1 <= 4;
            if !first_time || r.1 <= 2 {
                r.0.insert(rkey, text);
            }
            let answer = ResponseTemplate::new(200).set_body_json(serde_json::json!({"uri": uri, "cid": "bafyrei"}));
            if first_time {
                answer.set_delay(std::time::Duration::from_secs(3))
            } else {
                answer
            }
        })
        .mount(pds)
        .await;
    let kept = records.clone();
    Mock::given(method("GET"))
        .and(path("/xrpc/com.atproto.repo.getRecord"))
        .respond_with(move |req: &wiremock::Request| {
            let rkey = req.url.query_pairs().find(|(k, _)| k == "rkey").unwrap().1.to_string();
            match kept.lock().unwrap().0.get(&rkey) {
                Some(text) => ResponseTemplate::new(200).set_body_json(serde_json::json!({
                    "uri": format!("at://{DID}/app.bsky.feed.post/{rkey}"),
                    "cid": "bafyrei",
                    "value": {"$type": "app.bsky.feed.post", "text": text},
                })),
                None => ResponseTemplate::new(400).set_body_json(
                    serde_json::json!({"error": "RecordNotFound", "message": "Could not locate record"}),
                ),
            }
        })
        .mount(pds)
        .await;
    deployment.backfill_timing_out().await;
    let o = deployment
        .run(&["claims", "reconcile", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let results: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results.len(), 4, "{stdout}");
    assert!(results.iter().all(|d| d["result"] == "posted"), "{stdout}");
    // Before: 4 unknown; after: 0. Four records, one per match: two found at their key, two
    // created there once.
    let (made, creates) = records.lock().unwrap().clone();
    assert_eq!(made.len(), 4);
    assert_eq!(
        creates, 8,
        "four first creates, four repeats (two refused: already there)"
    );
    assert_eq!(deployment.states().await, vec!["posted"; 4]);
}

/// A deployment of one channel, on Redis under a prefix of its own, reading the saved page, whose
/// posts time out after 1 s: what the settle-by-replay tests run the bot in.
struct TimingOut {
    /// The channel's platform stand-in, for the test to mount its answers on.
    platform: MockServer,
    dir: tempfile::TempDir,
    file: std::path::PathBuf,
    /// The channel's secret: its variable and value.
    secret: (&'static str, &'static str),
    prefix: crate::helpers::Prefix,
    source: String,
    _site: MockServer,
}

impl TimingOut {
    /// A platform stand-in and the saved page's server started, and the channels file of one
    /// channel, whose settings `channel` writes for the stand-in's address and whose secret is
    /// `secret`.
    async fn start(secret: (&'static str, &'static str), channel: impl FnOnce(&str) -> String) -> TimingOut {
        let (site, platform) = (page_server().await, MockServer::start().await);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("channels.toml");
        std::fs::write(&file, format!("[[channel]]\n{}", channel(&platform.uri()))).unwrap();
        TimingOut {
            platform,
            dir,
            file,
            secret,
            prefix: unique_prefix(),
            source: format!("{}/cricket-match/live-scores", site.uri()),
            _site: site,
        }
    }

    /// Moves every time in this deployment's claim records `by` into the past, as if that
    /// long had gone by (each record keeps its TTL).
    async fn age_claims(&self, by: chrono::Duration) {
        let mut redis = crate::helpers::raw_redis().await;
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}*match:*", &*self.prefix))
            .query_async(&mut redis)
            .await
            .unwrap();
        assert!(!keys.is_empty());
        for key in keys {
            let raw: String = redis::cmd("GET").arg(&key).query_async(&mut redis).await.unwrap();
            let mut record: serde_json::Value = serde_json::from_str(&raw).unwrap();
            for field in ["claimed_at", "updated_at", "deadline", "checked_at"] {
                if let Some(t) = record[field].as_str() {
                    let earlier = chrono::DateTime::parse_from_rfc3339(t).unwrap() - by;
                    record[field] = earlier.to_rfc3339().into();
                }
            }
            redis::cmd("SET")
                .arg(&key)
                .arg(record.to_string())
                .arg("KEEPTTL")
                .exec_async(&mut redis)
                .await
                .unwrap();
        }
    }

    /// The bot running `args`.
    fn run(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = bot(self.dir.path());
        cmd.env("CHANNELS_FILE", &self.file)
            .env(self.secret.0, self.secret.1)
            .env("REDIS_URL", redis_url())
            .env("KEY_PREFIX", &*self.prefix)
            .env("POST_TIMEOUT_SECS", "1")
            .env("SOURCES", &self.source)
            .args(args);
        cmd
    }

    /// `backfill --init-store`, whose every post times out: exit 5.
    async fn backfill_timing_out(&self) -> std::process::Output {
        let o = self.run(&["backfill", "--init-store"]).output().await.unwrap();
        assert_eq!(o.status.code(), Some(5), "{:?}", text(&o));
        o
    }

    /// The state of each claim, as `claims list --json` gives them.
    async fn states(&self) -> Vec<String> {
        let o = self.run(&["claims", "list", "--json"]).output().await.unwrap();
        crate::helpers::listed(&text(&o).0)
            .into_iter()
            .map(|(_, state)| state)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_answer_is_cut_off_and_the_post_kept_unknown() {
    // Three MiB where a few hundred bytes of JSON belong: read up to the cap, then unreadable.
    let huge = ResponseTemplate::new(200).set_body_string("x".repeat(3 << 20));
    let d = OnRedis::new(Platforms::accepting(0, 0, Some(huge)).await).await;
    let file = d.file(&["discord"]);
    let o = d.run(&file, &["backfill", "--init-store"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(5), "{stdout}{stderr}");
    assert!(stdout.contains("discord: posted 0, skipped 0, failed 4"), "{stdout}");
    let listed = d.claims_of(&file, "discord").await;
    assert_eq!(listed.iter().filter(|(_, s)| s == "unknown").count(), 4, "{listed:?}");
}

/// A channels file naming one channel of every sink, each secret in its own variable.
const EVERY_SINK: &str = r#"
[[channel]]
name = "x"
sink = "x"

[[channel]]
name = "toots"
sink = "mastodon"
instance = "https://mastodon.example"
token_env = "MASTODON_TOKEN"

[[channel]]
name = "sky"
sink = "bluesky"
handle = "cricket.bsky.social"
app_password_env = "BLUESKY_APP_PASSWORD"

[[channel]]
name = "club"
sink = "discord"
webhook_url_env = "DISCORD_WEBHOOK_URL"

[[channel]]
name = "tg"
sink = "telegram"
token_env = "TELEGRAM_BOT_TOKEN"
chat_id = "@cricket"
"#;

/// A dry run of one saved page with the channels file `toml` and `env`, on an embedded store in
/// `dir` (never written: a dry run).
async fn dry_run_with(dir: &Path, toml: &str, env: &[(&str, &str)]) -> std::process::Output {
    let file = dir.join("channels.toml");
    std::fs::write(&file, toml).unwrap();
    let page = crate::helpers::root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let mut cmd = bot(dir);
    cmd.env("CHANNELS_FILE", &file)
        .env("STORE_PATH", dir.join("store.db"))
        .args(["--dry-run", "backfill", "--source"])
        .arg(&page);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

#[tokio::test]
async fn a_dry_run_needs_no_secret_and_says_once_which_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let o = dry_run_with(dir.path(), EVERY_SINK, &[("MASTODON_TOKEN", "mastodon-secret")]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    // Every channel's posts are printed, secrets or not.
    for channel in ["x", "toots", "sky", "club", "tg"] {
        assert_eq!(
            stdout.matches(&format!("--- [{channel}] ")).count(),
            4,
            "{channel}: {stdout}"
        );
    }
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("secrets")).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains(
            "this command posts nothing, so it does not need the channels' secrets; those not set are skipped \
             unset=x (X_API_KEY, X_API_SECRET, X_ACCESS_TOKEN, X_ACCESS_TOKEN_SECRET), sky (BLUESKY_APP_PASSWORD), \
             club (DISCORD_WEBHOOK_URL), tg (TELEGRAM_BOT_TOKEN)"
        ),
        "{}",
        said[0]
    );
    assert!(!stderr.contains("mastodon-secret"), "{stderr}");
    // `seed` posts nothing either: it records every channel's matches without the secrets.
    let page = crate::helpers::root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let o = bot(dir.path())
        .env("CHANNELS_FILE", dir.path().join("channels.toml"))
        .env("STORE_PATH", dir.path().join("store.db"))
        .args(["seed", "--source"])
        .arg(&page)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    for channel in ["x", "toots", "sky", "club", "tg"] {
        assert!(
            stdout.contains(&format!("{channel}: posted 0, skipped 0, failed 0, seeded 8")),
            "{channel}: {stdout}"
        );
    }
    // A real pass still needs every secret.
    let file = dir.path().join("channels.toml");
    let o = bot(dir.path())
        .env("CHANNELS_FILE", &file)
        .env("STORE_PATH", dir.path().join("store.db"))
        .env("SOURCES", "https://www.cricbuzz.com/cricket-match/live-scores")
        .arg("backfill")
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("channel \"x\": `api_key_env` names the environment variable X_API_KEY, which is not set"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_dry_run_refuses_a_secret_of_the_wrong_shape_a_blank_filter_plain_http_and_an_oversized_template() {
    let dir = tempfile::tempdir().unwrap();
    let discord = "[[channel]]\nname = \"club\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n";
    let telegram = "[[channel]]\nname = \"tg\"\nsink = \"telegram\"\ntoken_env = \"TELEGRAM_BOT_TOKEN\"\nchat_id = 5\n";
    let hook = (
        "DISCORD_WEBHOOK_URL",
        "https://discord.com/api/webhooks/1180000000000000000/tok-secret",
    );
    let huge = format!("{discord}template = \"{{{{ link }}}}{}\"\n", "x".repeat(64 * 1024));
    // The channels file, its environment, and what the refusal says.
    type Case = (String, Vec<(&'static str, &'static str)>, String);
    let cases: Vec<Case> = vec![
        (
            discord.into(),
            vec![("DISCORD_WEBHOOK_URL", "https://discord.com/channels/1180000000000000000/tok-secret")],
            "channel \"club\": field `webhook_url_env`: the value of DISCORD_WEBHOOK_URL is not a Discord webhook URL: its path is not /api/webhooks/ID/TOKEN".into(),
        ),
        (
            discord.into(),
            vec![("DISCORD_WEBHOOK_URL", "https://discord.com.evil.example/api/webhooks/1180000000000000000/tok-secret")],
            "channel \"club\": field `webhook_url_env`: the value of DISCORD_WEBHOOK_URL is not a Discord webhook URL: its host is not discord.com (or discordapp.com)".into(),
        ),
        (
            discord.into(),
            vec![("DISCORD_WEBHOOK_URL", "tok-secret")],
            "channel \"club\": field `webhook_url_env`: the value of DISCORD_WEBHOOK_URL is not a Discord webhook URL: it is not a URL".into(),
        ),
        (
            telegram.into(),
            vec![("TELEGRAM_BOT_TOKEN", "123456:tok-secret/../../x")],
            "channel \"tg\": field `token_env`: the value of TELEGRAM_BOT_TOKEN is not a Telegram bot token: a bot token is the bot's number, a colon".into(),
        ),
        (
            format!("{discord}teams = [\"\"]\n"),
            vec![hook],
            "channel \"club\": field `teams`: entry 1 is blank: remove it".into(),
        ),
        (
            format!("{discord}states = [\"upcoming\", \"\"]\n"),
            vec![hook],
            "channel \"club\": field `states`: entry 2 is blank: remove it".into(),
        ),
        (
            "[[channel]]\nname = \"toots\"\nsink = \"mastodon\"\ninstance = \"http://mastodon.example\"\ntoken_env = \"T\"\n".into(),
            vec![("T", "tok-secret")],
            "channel \"toots\": field `instance`: \"http://mastodon.example\" is plain http:// to another machine".into(),
        ),
        (
            huge,
            vec![hook],
            "channel \"club\": field `template`: 65546 bytes, over the 65536 a template may hold (as a template file)".into(),
        ),
    ];
    for (toml, env, says) in cases {
        let o = dry_run_with(dir.path(), &toml, &env).await;
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{says}: {stdout}{stderr}");
        assert!(stderr.contains(&says), "{says}: {stderr}");
        assert!(!stderr.contains("tok-secret"), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
    }
}

/// [`EVERY_SINK`] with `hashtags = true` on the X, Bluesky and Telegram channels.
fn with_hashtags() -> String {
    EVERY_SINK
        .replace("sink = \"x\"\n", "sink = \"x\"\nhashtags = true\n")
        .replace("sink = \"bluesky\"\n", "sink = \"bluesky\"\nhashtags = true\n")
        .replace("chat_id = \"@cricket\"\n", "chat_id = \"@cricket\"\nhashtags = true\n")
}

/// The post a dry run prints for `channel` and the match `key`: the lines under its header.
fn dry_post(stdout: &str, channel: &str, key: &str) -> String {
    let header = format!("--- [{channel}] {key} ");
    let from = stdout.find(&header).unwrap_or_else(|| panic!("{header}: {stdout}"));
    let body = &stdout[from..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("\n\n").unwrap()].to_string()
}

#[tokio::test]
async fn a_dry_run_shows_each_channels_post_as_its_readers_see_it_with_hashtags_where_the_channel_sets_them() {
    let dir = tempfile::tempdir().unwrap();
    let toml = with_hashtags();
    let o = dry_run_with(dir.path(), &toml, &[]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let key = "2026-07-17_bangladesh-v-zimbabwe_2nd-t20i";
    let page =
        "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026";
    let head = "Coming up: Zimbabwe v Bangladesh, 2nd T20I\nBangladesh tour of Zimbabwe, 2026\n📍 Queens Sports Club, Bulawayo";
    let utc = "🕒 Fri 17 Jul, 10:30 UTC";
    // X: the hashtags on their own line (the series is a tour: only the fixture's tag).
    assert_eq!(dry_post(&stdout, "x", key), format!("{head}\n{utc}\n{page}\n#ZIMvBAN"));
    // Mastodon does not set them: its post is what it always was.
    assert_eq!(dry_post(&stdout, "toots", key), format!("{head}\n{utc}\n{page}"));
    // Bluesky: the label, not the URL, then the tags, then the link card.
    assert_eq!(
        dry_post(&stdout, "sky", key),
        format!(
            "{head}\n{utc}\ncricbuzz.com/live-cricket-s…\n#ZIMvBAN\n[card] Zimbabwe v Bangladesh, 2nd T20I | \
             Bangladesh tour of Zimbabwe, 2026 · Queens Sports Club, Bulawayo · Fri 17 Jul, 10:30 UTC | cricbuzz.com"
        )
    );
    // Discord (the bot's TEMPLATE_PATH here, and no hashtags setting), then the embed.
    assert_eq!(
        dry_post(&stdout, "club", key),
        format!(
            "{head}\n{utc}\n{page}\n[embed] Zimbabwe v Bangladesh, 2nd T20I → {page}\n        \
             Bangladesh tour of Zimbabwe, 2026 | Venue: Queens Sports Club, Bulawayo | Start: <t:1784284200:F>"
        )
    );
    assert_eq!(
        dry_post(&stdout, "tg", key),
        format!("{head}\n{utc}\n{page}\n#ZIMvBAN\n[preview] {page}")
    );
    // The JSON lines keep the exact text and add what is shown and sent beside it.
    let file = dir.path().join("channels.toml");
    let page_file = crate::helpers::root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let o = bot(dir.path())
        .env("CHANNELS_FILE", &file)
        .env("STORE_PATH", dir.path().join("store.db"))
        .args(["--dry-run", "--json", "backfill", "--source"])
        .arg(&page_file)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let sky: serde_json::Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["channel"] == "sky" && l["match_key"] == key)
        .unwrap();
    assert_eq!(sky["text"], format!("{head}\n{utc}\n{page}\n#ZIMvBAN"));
    assert_eq!(
        sky["shown"],
        format!("{head}\n{utc}\ncricbuzz.com/live-cricket-s…\n#ZIMvBAN")
    );
    assert_eq!(sky["card"]["embed"]["external"]["uri"], page);
    // A channel of a sink that takes no hashtags refuses the field.
    let refused = EVERY_SINK.replace("webhook_url_env", "hashtags = true\nwebhook_url_env");
    let o = dry_run_with(dir.path(), &refused, &[]).await;
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("channel \"club\": field `hashtags`: a discord channel does not take it (it is for x and mastodon and bluesky and telegram channels)"),
        "{stderr}"
    );
}
