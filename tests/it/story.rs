//! The match's story (issue 32): its result, once per channel, under its announcement.
//!
//! One real Cricbuzz listing (Denmark v Jersey, 2nd T20I, from the saved `matches-v1` answer of
//! 16 June 2024), moved to the present and edited from cycle to cycle as the match goes from
//! upcoming to live to complete, read by the bot as a file. Five channels (X, Mastodon, Bluesky,
//! Telegram, Discord) post to loopback stand-ins that answer as each platform documents, with
//! ids of their own for each post, so a reply can be checked at the wire against the
//! announcement's id (and Bluesky's CID). Every test runs on every store.

use crate::cli::{bot, start, text, wait_all};
use crate::helpers::{self, ensure_schema, redis_url, root, schema_for, schema_url, store_matrix, Kind};
use chrono::{DateTime, TimeDelta, Utc};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const FIXTURE: &str = "fixtures/cricbuzz/matches-v1-upcoming_2024-06-16.json";
const MATCH_ID: u64 = 96_910;
const WEBHOOK: &str = "/api/webhooks/1180000000000000000/tok-secret";
const TELEGRAM: &str = "/bot123456:tok-secret/sendMessage";
const DID: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";

/// Answers each post with an id of its own: `first + n` for the n-th post, as `answer` shapes
/// it from the request.
struct Numbered {
    next: AtomicU64,
    answer: fn(u64, &Request) -> ResponseTemplate,
}

impl Respond for Numbered {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        (self.answer)(self.next.fetch_add(1, Ordering::SeqCst), request)
    }
}

fn numbered(first: u64, answer: fn(u64, &Request) -> ResponseTemplate) -> Numbered {
    Numbered {
        next: AtomicU64::new(first),
        answer,
    }
}

/// Bluesky's `createRecord` answer for the n-th create: the record's URI at its record key, and
/// a CID of its own.
fn created(n: u64, r: &Request) -> ResponseTemplate {
    let rkey = json(r)["rkey"].as_str().unwrap().to_string();
    ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "uri": format!("at://{DID}/app.bsky.feed.post/{rkey}"),
        "cid": format!("bafyreicid{n}"),
        "commit": {"cid": "bafyreicommit", "rev": "3lb"},
        "validationStatus": "valid",
    }))
}

/// As [`created`], the second create answered after five seconds.
fn created_slowly_second(n: u64, r: &Request) -> ResponseTemplate {
    let answer = created(n, r);
    if n == 2 {
        answer.set_delay(std::time::Duration::from_secs(5))
    } else {
        answer
    }
}

fn json(r: &Request) -> serde_json::Value {
    serde_json::from_slice(&r.body).unwrap()
}

/// The five stand-ins.
struct Platforms {
    x: MockServer,
    mastodon: MockServer,
    bluesky: MockServer,
    telegram: MockServer,
    discord: MockServer,
}

impl Platforms {
    async fn new() -> Platforms {
        Platforms::answering(false).await
    }

    /// The stand-ins; with `slow_second_bluesky`, Bluesky answers its second create only after
    /// five seconds (past a `POST_TIMEOUT_SECS` of 1: its outcome unknown to the bot).
    async fn answering(slow_second_bluesky: bool) -> Platforms {
        let p = Platforms {
            x: MockServer::start().await,
            mastodon: MockServer::start().await,
            bluesky: MockServer::start().await,
            telegram: MockServer::start().await,
            discord: MockServer::start().await,
        };
        // X API v2: 201 {"data": {"id", "text"}}.
        Mock::given(method("POST"))
            .and(path("/2/tweets"))
            .respond_with(numbered(1_800_000_000_000_000_001, |id, r| {
                ResponseTemplate::new(201)
                    .set_body_json(serde_json::json!({"data": {"id": id.to_string(), "text": json(r)["text"]}}))
            }))
            .mount(&p.x)
            .await;
        crate::channels::mastodon_instance(&p.mastodon).await;
        Mock::given(method("POST"))
            .and(path("/api/v1/statuses"))
            .respond_with(numbered(110_000_000_000_000_001, |id, _| {
                ResponseTemplate::new(200).set_body_json(
                    serde_json::json!({"id": id.to_string(), "url": format!("https://mastodon.example/@bot/{id}")}),
                )
            }))
            .mount(&p.mastodon)
            .await;
        Mock::given(method("POST"))
            .and(path("/xrpc/com.atproto.server.createSession"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "accessJwt": "access-1", "refreshJwt": "refresh-1", "did": DID, "handle": "cricket.bsky.social",
            })))
            .mount(&p.bluesky)
            .await;
        // createRecord answers the record's URI (at its record key) and CID; the second create
        // (the result's, in these tests) answers after `bluesky_second_delay`.
        Mock::given(method("POST"))
            .and(path("/xrpc/com.atproto.repo.createRecord"))
            .respond_with(numbered(
                1,
                if slow_second_bluesky {
                    created_slowly_second
                } else {
                    created
                },
            ))
            .mount(&p.bluesky)
            .await;
        Mock::given(method("POST"))
            .and(path(TELEGRAM))
            .respond_with(numbered(4_201, |id, r| {
                ResponseTemplate::new(200).set_body_json(serde_json::json!({
                    "ok": true,
                    "result": {"message_id": id, "chat": {"id": -1_001_234_567_890i64, "type": "channel"}, "date": 1_764_600_000, "text": json(r)["text"]},
                }))
            }))
            .mount(&p.telegram)
            .await;
        Mock::given(method("POST"))
            .and(path(WEBHOOK))
            .and(query_param("wait", "true"))
            .respond_with(numbered(1_181_000_000_000_000_001, |id, _| {
                ResponseTemplate::new(200).set_body_json(
                    serde_json::json!({"id": id.to_string(), "channel_id": "1170000000000000000", "content": "ok"}),
                )
            }))
            .mount(&p.discord)
            .await;
        p
    }

    /// The channels file: every stand-in, each posting `events`.
    fn file(&self, dir: &Path, events: &str) -> PathBuf {
        let toml = format!(
            r#"[[channel]]
name = "x"
sink = "x"
base_url = "{x}"
events = {events}

[[channel]]
name = "mastodon"
sink = "mastodon"
instance = "{mastodon}"
token_env = "MASTODON_TOKEN"
events = {events}

[[channel]]
name = "bluesky"
sink = "bluesky"
service = "{bluesky}"
handle = "cricket.bsky.social"
app_password_env = "BLUESKY_APP_PASSWORD"
events = {events}

[[channel]]
name = "telegram"
sink = "telegram"
api_base = "{telegram}"
token_env = "TELEGRAM_BOT_TOKEN"
chat_id = -1001234567890
events = {events}

[[channel]]
name = "discord"
sink = "discord"
webhook_url_env = "DISCORD_WEBHOOK_URL"
events = {events}
"#,
            x = self.x.uri(),
            mastodon = self.mastodon.uri(),
            bluesky = self.bluesky.uri(),
            telegram = self.telegram.uri(),
        );
        let file = dir.join("channels.toml");
        std::fs::write(&file, toml).unwrap();
        file
    }

    /// The bodies of every post each platform received, in order: X, Mastodon, Bluesky (the
    /// records), Telegram, Discord.
    async fn posts(&self) -> [Vec<serde_json::Value>; 5] {
        [
            bodies(&self.x, "/2/tweets").await,
            bodies(&self.mastodon, "/api/v1/statuses").await,
            bodies(&self.bluesky, "/xrpc/com.atproto.repo.createRecord").await,
            bodies(&self.telegram, TELEGRAM).await,
            bodies(&self.discord, WEBHOOK).await,
        ]
    }
}

/// The JSON bodies of the posts `server` received at `on`, in order.
async fn bodies(server: &MockServer, on: &str) -> Vec<serde_json::Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path() == on)
        .map(json)
        .collect()
}

/// The store's environment for `kind`.
async fn store_env(kind: Kind, prefix: &str, dir: &Path) -> Vec<(&'static str, String)> {
    match kind {
        Kind::Redis => vec![("REDIS_URL", redis_url())],
        Kind::Embedded => vec![("STORE_PATH", dir.join("claims.db").display().to_string())],
        Kind::Postgres => {
            let schema = schema_for(prefix);
            ensure_schema(&schema).await;
            vec![("DATABASE_URL", schema_url(&schema))]
        }
    }
}

/// A deployment: its stand-ins, its store, the listing it reads, its channels file.
struct Deployment {
    p: Platforms,
    dir: tempfile::TempDir,
    prefix: helpers::Prefix,
    store: Vec<(&'static str, String)>,
    listing: PathBuf,
    file: PathBuf,
}

impl Deployment {
    async fn new(kind: Kind, events: &str) -> Deployment {
        Deployment::on(kind, events, Platforms::new().await).await
    }

    async fn on(kind: Kind, events: &str, p: Platforms) -> Deployment {
        let dir = tempfile::tempdir().unwrap();
        let prefix = helpers::unique_prefix();
        let store = store_env(kind, &prefix, dir.path()).await;
        let file = p.file(dir.path(), events);
        let listing = dir.path().join("listing.json");
        Deployment {
            p,
            dir,
            prefix,
            store,
            listing,
            file,
        }
    }

    /// The bot reading the listing, with `env` besides, running `args`.
    fn bot(&self, env: &[(&str, &str)], args: &[&str]) -> tokio::process::Command {
        let mut cmd = bot(self.dir.path());
        cmd.env("CHANNELS_FILE", &self.file)
            .env("KEY_PREFIX", &*self.prefix)
            .env("X_API_KEY", "k")
            .env("X_API_SECRET", "s")
            .env("X_ACCESS_TOKEN", "t")
            .env("X_ACCESS_TOKEN_SECRET", "ts")
            .env("MASTODON_TOKEN", "mastodon-secret")
            .env("BLUESKY_APP_PASSWORD", "app-pass-secret")
            .env("TELEGRAM_BOT_TOKEN", "123456:tok-secret")
            .env("DISCORD_WEBHOOK_URL", format!("{}{WEBHOOK}", self.p.discord.uri()))
            .env("SOURCES", &self.listing);
        for (k, v) in &self.store {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args);
        cmd
    }

    /// One `backfill` (with `args` after it), which must succeed; its output.
    async fn backfill(&self, env: &[(&str, &str)], args: &[&str]) -> (String, String) {
        let args: Vec<&str> = ["backfill"].into_iter().chain(args.iter().copied()).collect();
        let o = self.bot(env, &args).output().await.unwrap();
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stdout}\n{stderr}");
        (stdout, stderr)
    }

    /// Writes the listing: the match in `state`, with `status`, started `started` ago and
    /// ending `ends` from now (negative: ended), and, when given, each side's innings.
    fn listing(&self, state: &str, status: &str, started: TimeDelta, ends: TimeDelta, scores: Option<[(u32, u8); 2]>) {
        write_listing(&self.listing, Utc::now(), state, status, started, ends, scores);
    }
}

/// The listing of the one match, its times moved to `now`.
fn write_listing(
    file: &Path,
    now: DateTime<Utc>,
    state: &str,
    status: &str,
    started: TimeDelta,
    ends: TimeDelta,
    scores: Option<[(u32, u8); 2]>,
) {
    let page: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(FIXTURE)).unwrap()).unwrap();
    let mut listing = page["typeMatches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["seriesMatches"].as_array().unwrap())
        .filter_map(|s| s.get("seriesAdWrapper"))
        .flat_map(|w| w["matches"].as_array().unwrap())
        .find(|m| m["matchInfo"]["matchId"] == MATCH_ID)
        .unwrap()
        .clone();
    let info = &mut listing["matchInfo"];
    info["startDate"] = (now - started).timestamp_millis().to_string().into();
    info["endDate"] = (now + ends).timestamp_millis().to_string().into();
    info["state"] = state.into();
    info["status"] = status.into();
    if let Some([(r1, w1), (r2, w2)]) = scores {
        listing["matchScore"] = serde_json::json!({
            "team1Score": {"inngs1": {"runs": r1, "wickets": w1, "overs": 20}},
            "team2Score": {"inngs1": {"runs": r2, "wickets": w2, "overs": 20}},
        });
    }
    let page = serde_json::json!({"typeMatches": [{"matchType": "International", "seriesMatches": [
        {"seriesAdWrapper": {"seriesId": 8260, "seriesName": "Jersey tour of Denmark, 2024", "matches": [listing]}}
    ]}]});
    std::fs::write(file, page.to_string()).unwrap();
}

/// The text of a post, whichever platform's body it is.
fn text_of(body: &serde_json::Value) -> &str {
    body["text"]
        .as_str()
        .or_else(|| body["status"].as_str())
        .or_else(|| body["record"]["text"].as_str())
        .or_else(|| body["content"].as_str())
        .unwrap()
}

/// `text` as the platform `name` is sent it: Bluesky shows the link by its label (its facet
/// carries the link), Telegram gets HTML (escaped, the headline bold).
fn shown(name: &str, text: &str) -> String {
    const LINK: &str =
        "https://www.cricbuzz.com/live-cricket-scores/96910/den-vs-jer-2nd-t20i-jersey-tour-of-denmark-2024";
    match name {
        "bluesky" => text.replace(LINK, &cricket_announcer::post::link_label(LINK)),
        "telegram" => cricket_announcer::post::telegram::html(text),
        _ => text.to_string(),
    }
}

const RESULT: &str = "🏏 Denmark beat Jersey by 7 runs\nDenmark v Jersey, 2nd T20I\nDEN 150/6 (20 ov)\nJER 143/8 (20 ov)\nJersey tour of Denmark, 2024\nhttps://www.cricbuzz.com/live-cricket-scores/96910/den-vs-jer-2nd-t20i-jersey-tour-of-denmark-2024";

async fn a_match_upcoming_then_live_then_complete_posts_one_announcement_and_one_reply_per_channel(kind: Kind) {
    let d = Deployment::new(kind, r#"["announce", "result"]"#).await;
    let hours = TimeDelta::hours;
    d.listing("Upcoming", "Match starts soon", hours(-1), hours(4), None);
    d.backfill(&[], &["--init-store"]).await;
    d.listing("In Progress", "Jersey opt to bowl", hours(1), hours(2), None);
    d.backfill(&[], &[]).await;
    let after_live = d.p.posts().await;
    assert!(after_live.iter().all(|posts| posts.len() == 1), "{after_live:?}");
    // Finished: three processes race on it.
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    let racers = (0..3).map(|_| start(&mut d.bot(&[], &["backfill"]))).collect();
    for o in wait_all(racers).await {
        assert!(o.status.success(), "{:?}", text(&o));
    }
    // The line edited afterwards: nothing more.
    d.listing(
        "Complete",
        "Denmark won by 7 runs (DLS method)",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    let (stdout, _) = d.backfill(&[], &[]).await;
    assert!(stdout.contains("; result: posted 0"), "{stdout}");
    let [x, mastodon, bluesky, telegram, discord] = d.p.posts().await;
    for (name, posts) in [
        ("x", &x),
        ("mastodon", &mastodon),
        ("bluesky", &bluesky),
        ("telegram", &telegram),
        ("discord", &discord),
    ] {
        assert_eq!(posts.len(), 2, "{name}: one announcement and one result: {posts:?}");
        // Telegram's headline is bold (HTML parse mode).
        let headline = text_of(&posts[0]).trim_start_matches("<b>");
        assert!(
            headline.starts_with("LIVE: Denmark v Jersey") || headline.starts_with("Coming up: Denmark v Jersey"),
            "{name}: {posts:?}"
        );
        if name != "discord" {
            assert_eq!(text_of(&posts[1]), shown(name, RESULT), "{name}");
        }
    }
    // Each result replies to its channel's announcement, by the id the platform gave it.
    assert_eq!(
        x[1]["reply"],
        serde_json::json!({"in_reply_to_tweet_id": "1800000000000000001"})
    );
    assert_eq!(mastodon[1]["in_reply_to_id"], "110000000000000001");
    let announcement = format!("at://{DID}/app.bsky.feed.post/{}", bluesky[0]["rkey"].as_str().unwrap());
    let parent = serde_json::json!({"uri": announcement, "cid": "bafyreicid1"});
    assert_eq!(
        bluesky[1]["record"]["reply"],
        serde_json::json!({"root": parent, "parent": parent})
    );
    assert_ne!(bluesky[1]["rkey"], bluesky[0]["rkey"]);
    assert_eq!(
        telegram[1]["reply_parameters"],
        serde_json::json!({"message_id": 4201, "allow_sending_without_reply": true})
    );
    // A webhook cannot reply: the result on its own, with the match's link.
    assert!(discord[1].get("message_reference").is_none());
    assert!(text_of(&discord[1]).starts_with("🏏 Denmark beat Jersey by 7 runs\n"));
    assert!(text_of(&discord[1]).ends_with("den-vs-jer-2nd-t20i-jersey-tour-of-denmark-2024"));
    // No announcement carries a reply.
    assert!(x[0].get("reply").is_none() && mastodon[0].get("in_reply_to_id").is_none());
    assert!(bluesky[0]["record"].get("reply").is_none() && telegram[0].get("reply_parameters").is_none());
    // The result's claim: posted, in the result's namespace of the channel.
    let o = d
        .bot(&[], &["claims", "list", "--channel", "x", "--json"])
        .output()
        .await
        .unwrap();
    let rows: Vec<serde_json::Value> = text(&o).0.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let events: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["event"].as_str().unwrap(), r["claim"]["state"].as_str().unwrap()))
        .collect();
    assert_eq!(events, [("announce", "posted"), ("result", "posted")], "{rows:?}");
    helpers::cleanup(kind, &d.prefix).await;
}

async fn a_first_start_on_a_page_of_finished_matches_posts_no_result(kind: Kind) {
    for first in [&["--init-store"][..], &[]] {
        let d = Deployment::new(kind, r#"["announce", "result"]"#).await;
        let hours = TimeDelta::hours;
        d.listing(
            "Complete",
            "Denmark won by 7 runs",
            hours(4),
            hours(-1),
            Some([(150, 6), (143, 8)]),
        );
        if first.is_empty() {
            let o = d.bot(&[], &["seed"]).output().await.unwrap();
            assert!(o.status.success(), "{:?}", text(&o));
        }
        let (stdout, _) = d.backfill(&[], first).await;
        let (again, _) = d.backfill(&[], &[]).await;
        assert_eq!(
            d.p.posts().await.map(|p| p.len()),
            [0; 5],
            "{first:?}: {stdout}\n{again}"
        );
        helpers::cleanup(kind, &d.prefix).await;
    }
}

async fn a_result_older_than_result_max_age_posts_none(kind: Kind) {
    let d = Deployment::new(kind, r#"["result"]"#).await;
    let hours = TimeDelta::hours;
    d.listing("In Progress", "Jersey opt to bowl", hours(30), hours(-27), None);
    d.backfill(&[], &["--init-store"]).await;
    // Finished 26 hours ago as the page shows: past the default day.
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(30),
        hours(-26),
        Some([(150, 6), (143, 8)]),
    );
    d.backfill(&[], &[]).await;
    assert_eq!(d.p.posts().await.map(|p| p.len()), [0; 5]);
    // Within a RESULT_MAX_AGE of two days it is posted, on its own: no announcement there.
    d.backfill(&[("RESULT_MAX_AGE", "2d")], &[]).await;
    let posts = d.p.posts().await;
    assert_eq!(posts.clone().map(|p| p.len()), [1; 5]);
    assert!(posts[0][0].get("reply").is_none());
    assert_eq!(text_of(&posts[0][0]), RESULT);
    helpers::cleanup(kind, &d.prefix).await;
}

async fn a_result_whose_post_timed_out_is_settled_by_claims_reconcile_under_its_announcement(kind: Kind) {
    let d = Deployment::on(kind, r#"["announce", "result"]"#, Platforms::answering(true).await).await;
    let hours = TimeDelta::hours;
    let quick = [("POST_TIMEOUT_SECS", "1")];
    d.listing("In Progress", "Jersey opt to bowl", hours(1), hours(2), None);
    d.backfill(&quick, &["--init-store"]).await;
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    // Bluesky's answer to the result does not come in time: unknown, exit 5.
    let o = d.bot(&quick, &["backfill"]).output().await.unwrap();
    assert_eq!(o.status.code(), Some(5), "{:?}", text(&o));
    let listed = |o: std::process::Output| -> Vec<(String, String)> {
        text(&o)
            .0
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|r| {
                (
                    r["event"].as_str().unwrap().into(),
                    r["claim"]["state"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let list = || {
        d.bot(&[], &["claims", "list", "--channel", "bluesky", "--json"])
            .output()
    };
    assert_eq!(
        listed(list().await.unwrap()),
        [
            ("announce".into(), "posted".into()),
            ("result".into(), "unknown".into())
        ]
    );
    let show = |event: &'static str| {
        d.bot(
            &[],
            &[
                "--json",
                "claims",
                "show",
                "cricbuzz:96910",
                "--channel",
                "bluesky",
                "--event",
                event,
            ],
        )
        .output()
    };
    for (event, state) in [("announce", "posted"), ("result", "unknown")] {
        let o = show(event).await.unwrap();
        let row: serde_json::Value = serde_json::from_str(text(&o).0.lines().next().unwrap()).unwrap();
        assert_eq!(
            (row["event"].as_str(), row["claim"]["state"].as_str()),
            (Some(event), Some(state))
        );
    }
    // Reconciled like an announcement: the create repeated at the result's own record key,
    // still a reply to the announcement.
    let o = d
        .bot(&[], &["claims", "reconcile", "--channel", "bluesky"])
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        listed(list().await.unwrap()),
        [("announce".into(), "posted".into()), ("result".into(), "posted".into())]
    );
    let bluesky = &d.p.posts().await[2];
    assert_eq!(bluesky.len(), 3, "{bluesky:?}");
    assert_eq!(bluesky[2]["rkey"], bluesky[1]["rkey"]);
    let announcement = format!("at://{DID}/app.bsky.feed.post/{}", bluesky[0]["rkey"].as_str().unwrap());
    let parent = serde_json::json!({"uri": announcement, "cid": "bafyreicid1"});
    for repeat in &bluesky[1..] {
        assert_eq!(
            repeat["record"]["reply"],
            serde_json::json!({"root": parent, "parent": parent})
        );
        assert_eq!(text_of(repeat), shown("bluesky", RESULT));
    }
    // Nothing more on a later cycle, on any channel.
    d.backfill(&[], &[]).await;
    assert_eq!(d.p.posts().await.map(|p| p.len()), [2, 2, 3, 2, 2]);
    helpers::cleanup(kind, &d.prefix).await;
}

async fn a_dry_run_prints_the_result_saying_which_post_it_replies_to(kind: Kind) {
    let d = Deployment::new(kind, r#"["announce", "result"]"#).await;
    let hours = TimeDelta::hours;
    d.listing("In Progress", "Jersey opt to bowl", hours(1), hours(2), None);
    d.backfill(&[], &["--init-store"]).await;
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    let o = d.bot(&[], &["--dry-run", "backfill"]).output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    for (channel, parent) in [
        ("x", "in reply to 1800000000000000001"),
        ("mastodon", "in reply to 110000000000000001"),
        ("telegram", "in reply to 4201"),
        ("bluesky", "in reply to at://"),
        ("discord", "on its own"),
    ] {
        let head = stdout
            .lines()
            .find(|l| l.starts_with(&format!("--- [{channel}] ")))
            .unwrap_or_else(|| panic!("{channel}: {stdout}"));
        assert!(
            head.contains(&format!("; result, {parent}")) && head.ends_with(')'),
            "{head}"
        );
    }
    assert!(stdout.contains(&format!("\n{RESULT}\n")), "{stdout}");
    // Nothing was posted or written.
    assert_eq!(d.p.posts().await.map(|p| p.len()), [1; 5]);
    assert!(stdout.contains("result: would post 5"), "{stdout}");
    helpers::cleanup(kind, &d.prefix).await;
}

async fn the_environment_x_account_posts_results_with_events(kind: Kind) {
    let d = Deployment::new(kind, r#"["announce"]"#).await;
    let hours = TimeDelta::hours;
    let x_only = |args: &[&str]| {
        let mut cmd = d.bot(&[("EVENTS", "announce,result"), ("X_API_BASE_URL", &d.p.x.uri())], args);
        cmd.env_remove("CHANNELS_FILE");
        cmd
    };
    d.listing("In Progress", "Jersey opt to bowl", hours(1), hours(2), None);
    let o = x_only(&["backfill", "--init-store"]).output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    for _ in 0..2 {
        let o = x_only(&["backfill"]).output().await.unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let [x, others @ ..] = d.p.posts().await;
    assert!(others.iter().all(Vec::is_empty));
    assert_eq!(x.len(), 2, "{x:?}");
    assert!(text_of(&x[0]).starts_with("LIVE: Denmark v Jersey, 2nd T20I"));
    assert_eq!(text_of(&x[1]), RESULT);
    assert_eq!(
        x[1]["reply"],
        serde_json::json!({"in_reply_to_tweet_id": "1800000000000000001"})
    );
    // The announcement under the deployment's own keys, as before events; the result beside it.
    let o = x_only(&["claims", "list", "--json"]).output().await.unwrap();
    let rows: Vec<serde_json::Value> = text(&o).0.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (rows[0]["event"].as_str(), rows[1]["event"].as_str()),
        (Some("announce"), Some("result"))
    );
    if kind == Kind::Redis {
        let keys = helpers::keys(&d.prefix).await;
        let under = |segment: &str| {
            keys.iter()
                .filter(|k| {
                    k.strip_prefix(&format!("{}{segment}", *d.prefix))
                        .is_some_and(|key| key.ends_with("_denmark-v-jersey_2nd-t20i"))
                })
                .count()
        };
        assert_eq!((under("match:"), under("ev:result:match:")), (1, 1), "{keys:?}");
    }
    helpers::cleanup(kind, &d.prefix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_seed_lists_the_results_it_would_record_beside_the_announcements() {
    let d = Deployment::new(Kind::Embedded, r#"["announce", "result"]"#).await;
    let hours = TimeDelta::hours;
    d.listing(
        "Complete",
        "Denmark won by 7 runs",
        hours(4),
        hours(-1),
        Some([(150, 6), (143, 8)]),
    );
    let o = d
        .bot(&[("STATES", "upcoming,live,complete")], &["--dry-run", "seed"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    for channel in ["x", "mastodon", "bluesky", "telegram", "discord"] {
        for event in ["", "(result) "] {
            let line = format!("[{channel}] {event}would record ");
            assert_eq!(
                stdout.lines().filter(|l| l.starts_with(&line)).count(),
                1,
                "{line}: {stdout}"
            );
        }
    }
    assert_eq!(d.p.posts().await.map(|p| p.len()), [0; 5]);
}

store_matrix!(
    the_environment_x_account_posts_results_with_events,
    a_result_whose_post_timed_out_is_settled_by_claims_reconcile_under_its_announcement,
    a_dry_run_prints_the_result_saying_which_post_it_replies_to,
    a_match_upcoming_then_live_then_complete_posts_one_announcement_and_one_reply_per_channel,
    a_first_start_on_a_page_of_finished_matches_posts_no_result,
    a_result_older_than_result_max_age_posts_none,
);

/// A held cycle with results enabled costs what it cost without them on Redis: the marker's
/// refresh and one batch read, the result's namespace adding no round trip of its own (the
/// matches of this saved page finished months ago: none is due a result).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_cycle_with_results_enabled_is_still_the_marker_refresh_and_one_batch() {
    use tokio_util::sync::CancellationToken;
    let redis = helpers::OwnRedis::start();
    let x = MockServer::start().await;
    helpers::x_accepts(&x, 4).await;
    let prefix = helpers::unique_prefix();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    let bot = helpers::live_app_with(
        &["--redis-url".to_string(), redis.url()],
        &prefix,
        &[page.display().to_string()],
        &x,
        10,
        &["--events", "announce,result"],
    )
    .await
    .unwrap();
    let events: Vec<_> = bot
        .channels()
        .iter()
        .map(cricket_announcer::app::ChannelRun::event)
        .collect();
    assert_eq!(
        events,
        [
            cricket_announcer::event::Event::Announce,
            cricket_announcer::event::Event::Result
        ]
    );
    assert!(bot.init_store().await.unwrap());
    let conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let reads = || {
        let conn = conn.clone();
        async move {
            let mut conn = conn;
            let stats: String = redis::cmd("INFO").arg("stats").query_async(&mut conn).await.unwrap();
            redis::cmd("CONFIG")
                .arg("RESETSTAT")
                .exec_async(&mut conn)
                .await
                .unwrap();
            // Less the INFO itself (RESETSTAT's read came before its reset).
            stats
                .lines()
                .find_map(|l| l.strip_prefix("total_reads_processed:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap()
                - 1
        }
    };
    let first = bot.cycle(&CancellationToken::new()).await;
    assert_eq!(first.posted, 4, "{first:?}");
    reads().await;
    let held = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((held.posted, held.skipped), (0, 4), "{held:?}");
    assert_eq!(reads().await, 2);
    x.verify().await;
}
