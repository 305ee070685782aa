//! The status page (issue 38) as an operator opens it: a running `run` posting on three channels
//! (X, Mastodon, Discord stand-ins on loopback) from the saved pages, its page loaded in headless
//! Chromium (Debian's `chromium`; `.ci/run` installs it). The browser's DOM is checked, not the
//! HTML string: no console message (a Content-Security-Policy violation is one), every post made
//! listed with a working link where its platform gives one, hostile team names shown as text,
//! and the page agreeing with `/status.json`. A screenshot goes to `target/status-page.png`.
//!
//! And what the page costs the store: 1,000 fetches of `/` while `run` posts, counted with
//! Redis' `INFO commandstats` on a Redis of the test's own.
//!
//! Without Chromium the browser test fails saying how to install it, unless
//! `CRICKET_TEST_CHROMIUM=skip` says to skip it (then it says so on stderr).

use crate::cli::bot;
use crate::daemon::{get, sample, wait_until, Running};
use crate::helpers::{self, fixture, free_port, root, store_env, unique_prefix, Kind, OwnRedis};
use crate::skew::{age_claims, replica, Instance};
use cricket_announcer::clock::Clock;
use cricket_announcer::journal::PostState;
use cricket_announcer::reconcile::{Decision, Settled};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wiremock::matchers::{method, path, path_regex, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const WEBHOOK: &str = "/api/webhooks/1180000000000000000/tok-secret";
const HOSTILE_SCRIPT: &str = "<script>alert(1)</script>";
const HOSTILE_ATTRIBUTE: &str = "\"><img src=x onerror=alert(2)>";

/// Where Debian's package puts Chromium; `CRICKET_CHROMIUM` names another.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser, or `None` when it is missing and `CRICKET_TEST_CHROMIUM=skip` (said on
/// stderr). Panics, saying how to install it, when it is missing otherwise.
fn chromium(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("CRICKET_CHROMIUM").map_or_else(|| PathBuf::from(CHROMIUM), PathBuf::from);
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "Chromium is not installed at {}: install Debian's package (`apt-get install -y chromium`; .ci/run does) or name the browser in CRICKET_CHROMIUM",
        path.display()
    );
    if std::env::var("CRICKET_TEST_CHROMIUM").as_deref() == Ok("skip") {
        eprintln!("{test}: skipped (CRICKET_TEST_CHROMIUM=skip): {why}");
        return None;
    }
    panic!("{why}");
}

/// What one headless Chromium run gave: its stdout (the DOM, with `--dump-dom`) and the
/// console messages its log carried (`INFO:CONSOLE` lines of `--enable-logging=stderr`).
struct Loaded {
    dom: String,
    console: Vec<String>,
}

/// Runs headless Chromium at `url` with `extra` flags, on a fresh profile and with every
/// background connection off (the machine has no network: only loopback is asked).
async fn browse(browser: &Path, url: &str, extra: &[&str]) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let run = tokio::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("Chromium did not finish within 120 s")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "Chromium failed: {stderr}");
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

/// One table row of the DOM: each cell's text (entities decoded, spaces collapsed) and the
/// links in it.
#[derive(Debug, Default, Clone)]
struct Row {
    cells: Vec<String>,
    hrefs: Vec<String>,
}

/// The rows of `section#ID tbody` in `dom` (the browser's serialised DOM).
fn rows(dom: &str, id: &str) -> Vec<Row> {
    let found: Rc<RefCell<Vec<Row>>> = Rc::default();
    let (r1, r2, r3, r4) = (found.clone(), found.clone(), found.clone(), found.clone());
    let (tr, td, a, text) = (
        format!("section#{id} tbody tr"),
        format!("section#{id} tbody td"),
        format!("section#{id} tbody a[href]"),
        format!("section#{id} tbody td"),
    );
    let settings = lol_html::Settings::new()
        .append_element_content_handler(lol_html::element!(tr, move |_| {
            r1.borrow_mut().push(Row::default());
            Ok(())
        }))
        .append_element_content_handler(lol_html::element!(td, move |_| {
            if let Some(row) = r2.borrow_mut().last_mut() {
                row.cells.push(String::new());
            }
            Ok(())
        }))
        .append_element_content_handler(lol_html::element!(a, move |a| {
            if let Some(row) = r3.borrow_mut().last_mut() {
                row.hrefs
                    .push(htmlize::unescape(a.get_attribute("href").unwrap()).into_owned());
            }
            Ok(())
        }))
        .append_element_content_handler(lol_html::text!(text, move |t| {
            if let Some(cell) = r4.borrow_mut().last_mut().and_then(|r| r.cells.last_mut()) {
                cell.push_str(t.as_str());
            }
            Ok(())
        }));
    let mut rewriter = lol_html::HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(dom.as_bytes()).unwrap();
    rewriter.end().unwrap();
    let mut rows = found.borrow().clone();
    for row in &mut rows {
        for cell in &mut row.cells {
            *cell = htmlize::unescape(cell.as_str())
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
        }
    }
    rows
}

/// The `datetime` of `<time id="generated">`: which snapshot the DOM shows.
fn generated_at(dom: &str) -> String {
    let at = dom
        .find("id=\"generated\"")
        .expect("the page says when its data is from");
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag = &dom[tag_start..tag_start + dom[tag_start..].find('>').unwrap()];
    tag.split("datetime=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string()
}

/// A Mastodon instance answering each status with a new id and a `url` on itself, which it
/// serves (so the page's link to each post can be followed).
struct MastodonStatuses {
    base: String,
    next: AtomicU64,
}

impl Respond for MastodonStatuses {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let id = 110_000_000_000_000_000 + self.next.fetch_add(1, Ordering::SeqCst);
        ResponseTemplate::new(200)
            .set_body_json(serde_json::json!({"id": id.to_string(), "url": format!("{}/@bot/{id}", self.base)}))
    }
}

/// The three platforms' stand-ins, and the channels file naming them.
struct Platforms {
    x: MockServer,
    mastodon: MockServer,
    discord: MockServer,
}

impl Platforms {
    async fn start(x_delay: Duration) -> Platforms {
        let p = Platforms {
            x: MockServer::start().await,
            mastodon: MockServer::start().await,
            discord: MockServer::start().await,
        };
        let x_ids = AtomicU64::new(1);
        Mock::given(method("POST"))
            .and(path("/2/tweets"))
            .respond_with(move |_: &Request| {
                let id = 1_800_000_000_000_000_000u64 + x_ids.fetch_add(1, Ordering::SeqCst);
                ResponseTemplate::new(201)
                    .set_body_json(serde_json::json!({"data": {"id": id.to_string(), "text": "ok"}}))
                    .set_delay(x_delay)
            })
            .mount(&p.x)
            .await;
        crate::channels::mastodon_instance(&p.mastodon).await;
        Mock::given(method("POST"))
            .and(path("/api/v1/statuses"))
            .respond_with(MastodonStatuses {
                base: p.mastodon.uri(),
                next: AtomicU64::new(1),
            })
            .mount(&p.mastodon)
            .await;
        Mock::given(method("GET"))
            .and(path_regex(r"^/@bot/\d+$"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/html; charset=utf-8")
                    .set_body_string("<!doctype html><title>a post</title><p>a post"),
            )
            .mount(&p.mastodon)
            .await;
        let discord_ids = AtomicU64::new(1);
        Mock::given(method("POST"))
            .and(path(WEBHOOK))
            .and(query_param("wait", "true"))
            .respond_with(move |_: &Request| {
                let id = 1_181_000_000_000_000_000u64 + discord_ids.fetch_add(1, Ordering::SeqCst);
                ResponseTemplate::new(200).set_body_json(
                    serde_json::json!({"id": id.to_string(), "channel_id": "1170000000000000000", "content": "ok"}),
                )
            })
            .mount(&p.discord)
            .await;
        p
    }

    fn file(&self, dir: &Path) -> PathBuf {
        let toml = format!(
            "[[channel]]\nname = \"x\"\nsink = \"x\"\nbase_url = \"{}\"\n\n\
             [[channel]]\nname = \"mastodon\"\nsink = \"mastodon\"\ninstance = \"{}\"\ntoken_env = \"MASTODON_TOKEN\"\n\n\
             [[channel]]\nname = \"discord\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n",
            self.x.uri(),
            self.mastodon.uri()
        );
        let file = dir.join("channels.toml");
        std::fs::write(&file, toml).unwrap();
        file
    }

    /// The bot posting on the three channels, reading `sources`.
    fn bot(&self, dir: &Path, sources: &[String]) -> tokio::process::Command {
        let mut cmd = bot(dir);
        cmd.env("CHANNELS_FILE", self.file(dir))
            .env("X_API_KEY", "k")
            .env("X_API_SECRET", "s")
            .env("X_ACCESS_TOKEN", "t")
            .env("X_ACCESS_TOKEN_SECRET", "ts")
            .env("MASTODON_TOKEN", "mastodon-secret")
            .env("DISCORD_WEBHOOK_URL", format!("{}{WEBHOOK}", self.discord.uri()))
            .env("SOURCES", sources.join(","))
            .env("POSTS_PER_MINUTE", "1000")
            .env("POSTS_PER_DAY", "100000")
            .env("MAX_POSTS_PER_CYCLE", "100");
        cmd
    }

    async fn x_posts(&self) -> usize {
        self.x.received_requests().await.unwrap_or_default().len()
    }
}

/// The Cricbuzz JSON fixture's first `n` upcoming matches with both teams known, the first
/// one's teams renamed `team1` and `team2` when given.
fn cricbuzz_json(n: usize, names: Option<(&str, &str)>) -> String {
    let mut page: serde_json::Value =
        serde_json::from_str(&fixture("cricbuzz/matches-v1-upcoming_2024-06-16.json")).unwrap();
    let types = page["typeMatches"].as_array_mut().unwrap();
    types.truncate(1);
    let series = types[0]["seriesMatches"].as_array_mut().unwrap();
    series.retain(|s| s.get("seriesAdWrapper").is_some());
    let mut kept = 0;
    for s in series.iter_mut() {
        let matches = s["seriesAdWrapper"]["matches"].as_array_mut().unwrap();
        let slot = |m: &serde_json::Value, t: &str| {
            ["B1", "D2"].contains(&m["matchInfo"][t]["teamName"].as_str().unwrap_or(""))
        };
        matches.retain(|m| !slot(m, "team1") && !slot(m, "team2"));
        matches.truncate(n - kept);
        kept += matches.len();
    }
    assert_eq!(kept, n, "the fixture has {kept} upcoming matches with both teams known");
    if let Some((one, two)) = names {
        let first = &mut page["typeMatches"][0]["seriesMatches"][0]["seriesAdWrapper"]["matches"][0]["matchInfo"];
        first["team1"]["teamName"] = one.into();
        first["team2"]["teamName"] = two.into();
    }
    page.to_string()
}

/// The two sources [`site`] serves: its saved Cricbuzz live-scores page and its JSON.
fn site_sources(site: &MockServer) -> [String; 2] {
    [
        format!("cricbuzz={}/cricket-match/live-scores", site.uri()),
        format!("cricbuzz-json={}/matches", site.uri()),
    ]
}

/// A site serving the saved Cricbuzz live-scores page and, at `/matches`, `json`.
async fn site(json: String) -> MockServer {
    let site = crate::cli::page_server().await;
    Mock::given(method("GET"))
        .and(path("/matches"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/json")
                .set_body_string(json),
        )
        .mount(&site)
        .await;
    site
}

/// `/status.json`.
async fn status_json(addr: &str) -> serde_json::Value {
    let (code, body) = get(&format!("http://{addr}/status.json")).await.unwrap();
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_chromium_lists_every_post_with_its_link_shows_hostile_names_as_text_and_agrees_with_the_json() {
    let Some(browser) = chromium("status_page::the_page_in_chromium") else {
        return;
    };
    let platforms = Platforms::start(Duration::ZERO).await;
    // The saved Cricbuzz page (4 matches announced) and one JSON match between hostile teams.
    let site = site(cricbuzz_json(1, Some((HOSTILE_SCRIPT, HOSTILE_ATTRIBUTE)))).await;
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let sources = site_sources(&site);
    let mut cmd = platforms.bot(dir.path(), &sources);
    cmd.envs(store_env(Kind::Embedded, &unique_prefix(), dir.path()).await)
        .env("METRICS_ADDR", &addr)
        .args(["run", "--init-store"]);
    let mut running = Running::start(&mut cmd, dir.path(), "run");
    let posts_expected = 5 * 3;
    wait_until("the page's data lists every post of the first cycle", || async {
        get(&format!("http://{addr}/status.json"))
            .await
            .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(&body).ok())
            .is_some_and(|s| s["recent"].as_array().is_some_and(|r| r.len() == posts_expected))
    })
    .await;

    // The DOM and the JSON of the same snapshot (the page is cached a few seconds: fetched
    // again should the two straddle a refresh).
    let url = format!("http://{addr}/");
    let (loaded, json) = {
        let mut tries = 0;
        loop {
            let loaded = browse(&browser, &url, &["--dump-dom"]).await;
            let json = status_json(&addr).await;
            if generated_at(&loaded.dom) == json["generated_at"].as_str().unwrap() {
                break (loaded, json);
            }
            tries += 1;
            assert!(tries < 5, "the page and the JSON never showed the same snapshot");
        }
    };
    assert!(
        loaded.console.is_empty(),
        "the console got messages: {:#?}",
        loaded.console
    );
    // The console is really read: a page that breaks the same policy shows in it.
    let probe = browse(
        &browser,
        "data:text/html,<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><p style=\"color:red\">probe",
        &["--dump-dom"],
    )
    .await;
    assert!(
        probe.console.iter().any(|l| l.contains("Content Security Policy")),
        "a CSP violation did not show in the console as read: {:#?}",
        probe.console
    );

    // Hostile names: text in the DOM, no element made of them.
    assert!(!loaded.dom.contains("<script"), "{}", loaded.dom);
    assert!(!loaded.dom.contains("<img"), "{}", loaded.dom);
    let recent = rows(&loaded.dom, "recent");
    let hostile_title = format!("{HOSTILE_SCRIPT} v {HOSTILE_ATTRIBUTE}");
    assert_eq!(
        recent.iter().filter(|r| r.cells[3].contains(&hostile_title)).count(),
        3,
        "{recent:#?}"
    );

    // Every post made is listed, each row as the JSON has it.
    let listed = json["recent"].as_array().unwrap();
    assert_eq!(recent.len(), listed.len());
    for (row, post) in recent.iter().zip(listed) {
        let (channel, state) = (post["channel"].as_str().unwrap(), post["state"].as_str().unwrap());
        assert_eq!(row.cells[1], channel, "{row:?}");
        assert_eq!(row.cells[2], post["event"].as_str().unwrap(), "{row:?}");
        assert!(row.cells[3].starts_with(post["title"].as_str().unwrap()), "{row:?}");
        assert_eq!(state, "posted", "{post}");
        assert!(row.cells[4].starts_with(state), "{row:?}");
        assert_eq!(row.hrefs[0], post["match_url"].as_str().unwrap(), "{row:?}");
        match channel {
            "x" => {
                let id = post["post_id"].as_str().unwrap();
                assert_eq!(row.hrefs[1], format!("https://x.com/i/web/status/{id}"), "{row:?}");
            }
            "mastodon" => {
                assert_eq!(row.hrefs[1], post["link"].as_str().unwrap(), "{row:?}");
                assert!(row.hrefs[1].starts_with(&platforms.mastodon.uri()), "{row:?}");
                // The link works: the post's page opens.
                assert_eq!(get(&row.hrefs[1]).await.map(|(code, _)| code), Some(200), "{row:?}");
            }
            "discord" => {
                // A webhook's answer lacks the server's id: the post's id, not a link.
                assert_eq!(row.hrefs.len(), 1, "{row:?}");
                assert_eq!(row.cells[5], post["post_id"].as_str().unwrap(), "{row:?}");
            }
            other => panic!("{other}"),
        }
    }
    let mastodon_links = recent.iter().filter(|r| r.cells[1] == "mastodon").count();
    assert_eq!(mastodon_links, 5);

    // The channels and sources tables say what the JSON says.
    let channels = rows(&loaded.dom, "channels");
    let expected: Vec<Vec<String>> = json["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            [
                "channel",
                "event",
                "sink",
                "posts_today",
                "posts_this_week",
                "failed",
                "unknown",
                "waiting",
            ]
            .iter()
            .map(|f| c[f].as_str().map_or_else(|| c[f].to_string(), str::to_string))
            .chain(["no".to_string()])
            .collect()
        })
        .collect();
    let shown: Vec<Vec<String>> = channels.iter().map(|r| r.cells.clone()).collect();
    assert_eq!(shown, expected);
    assert_eq!(expected[0][3], "5", "{expected:?}");
    let sources_shown = rows(&loaded.dom, "sources");
    assert_eq!(sources_shown.len(), 2);
    for (row, s) in sources_shown.iter().zip(json["sources"].as_array().unwrap()) {
        assert_eq!(row.cells[0], s["kind"].as_str().unwrap());
        assert_eq!(row.cells[1], s["host"].as_str().unwrap());
        assert_eq!(row.cells[2], s["location"].as_str().unwrap());
        assert_eq!(row.cells[4], s["matches"].to_string());
    }
    // Two sources on one host tell apart by where they read.
    let locations: Vec<&str> = sources_shown.iter().map(|r| r.cells[2].as_str()).collect();
    assert_eq!(locations, ["/cricket-match/live-scores", "/matches"]);
    // Each post's time ago carries its exact UTC time, shown on hover.
    for post in listed {
        let at = post["at"].as_str().unwrap();
        let utc = chrono::DateTime::parse_from_rfc3339(at)
            .unwrap()
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC");
        let time = format!("<time datetime=\"{at}\" title=\"{utc}\">");
        assert!(loaded.dom.contains(&time), "{time} not in {}", loaded.dom);
    }

    // The headers that keep it safe.
    let response = cricket_announcer::http_client::builder()
        .build()
        .unwrap()
        .get(&url)
        .send()
        .await
        .unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert!(header("content-security-policy").starts_with("default-src 'none'; style-src 'sha256-"));
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert_eq!(header("x-frame-options"), "DENY");

    // A screenshot for a person to look at.
    let shot = root().join("target/status-page.png");
    let _ = std::fs::remove_file(&shot);
    let taken = browse(
        &browser,
        &url,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1280,1700"],
    )
    .await;
    assert!(taken.console.is_empty(), "{:#?}", taken.console);
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());

    running.signal(libc::SIGTERM);
    assert_eq!(running.exit_code().await, Some(0), "{}", running.log());
}

/// Every command Redis ran, by name (`INFO commandstats`), but the test's own (`INFO`, and
/// the connection's `HELLO` and `CLIENT`).
async fn commands(redis: &OwnRedis) -> std::collections::BTreeMap<String, u64> {
    let mut stats = crate::helpers::command_stats(&redis.url()).await;
    stats.retain(|name, _| !matches!(name.as_str(), "info" | "hello") && !name.starts_with("client"));
    stats
}

/// The commands run between `before` and `after`, by name, and their sum.
fn spent(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> (u64, Vec<(String, u64)>) {
    let by_name: Vec<(String, u64)> = after
        .iter()
        .map(|(name, n)| (name.clone(), n - before.get(name).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    (by_name.iter().map(|(_, n)| n).sum(), by_name)
}

/// The most store commands one post costs on Redis (the batch look-up's share, the claim read
/// under each of the match's identities and neighbouring keys, the record), and one cycle besides
/// its posts (marker, readiness, refreshes): generous bounds (measured: 15 to 27 a post), far
/// below the 1,000 a page that read the store once per view would add. The idle part of the
/// test is the exact one: no command at all.
const COMMANDS_PER_POST: u64 = 40;
const COMMANDS_PER_CYCLE: u64 = 40;
/// Posts that may be in flight when a window of the count opens or closes (one per channel
/// turn: the channels take turns).
const IN_FLIGHT: u64 = 2;

/// Fetches `url` 1,000 times, one after the other on one connection; each answers 200.
async fn fetch_a_thousand_times(client: &reqwest::Client, url: &str) -> Duration {
    let started = std::time::Instant::now();
    for _ in 0..1000 {
        let r = client.get(url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_fetches_of_the_page_while_run_posts_cost_the_store_nothing_more() {
    let redis = OwnRedis::start();
    // X answers each post 300 ms late: the first cycle posts for seconds.
    let platforms = Platforms::start(Duration::from_millis(300)).await;
    let site = site(cricbuzz_json(12, None)).await;
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let sources = site_sources(&site);
    let mut cmd = platforms.bot(dir.path(), &sources);
    cmd.env("REDIS_URL", redis.url())
        .env("KEY_PREFIX", unique_prefix().to_string())
        .env("METRICS_ADDR", &addr)
        .args(["run", "--init-store"]);
    let mut running = Running::start(&mut cmd, dir.path(), "run");
    wait_until("X receives the first post", || async { platforms.x_posts().await > 0 }).await;

    let metrics = format!("http://{addr}/metrics");
    let polls = || async {
        let (_, scrape) = get(&metrics).await.unwrap();
        sample(&scrape, "cricket_announcer_polls_total").unwrap_or(0.0) as u64
    };
    let posts = || async {
        let (_, scrape) = get(&metrics).await.unwrap();
        ["x", "mastodon", "discord"]
            .iter()
            .map(|c| {
                sample(
                    &scrape,
                    &format!("cricket_announcer_posts_total{{outcome=\"posted\",channel=\"{c}\"}}"),
                )
                .unwrap_or(0.0) as u64
            })
            .sum::<u64>()
    };
    let client = cricket_announcer::http_client::builder().build().unwrap();
    let url = format!("http://{addr}/");

    // While it posts: what the cycle's posts cost, and nothing for the page. Fetched by the
    // thousand until a post was made meanwhile (a fast machine fetches 1,000 in less than X's
    // 300 ms; the first cycle posts for about 5 s).
    let (commands_before, polls_before, posts_before) = (commands(&redis).await, polls().await, posts().await);
    let (mut fetches, mut took) = (0u64, Duration::ZERO);
    while fetches == 0 || (posts().await == posts_before && fetches < 20_000) {
        took += fetch_a_thousand_times(&client, &url).await;
        fetches += 1000;
    }
    let (commands_after, polls_after, posts_after) = (commands(&redis).await, polls().await, posts().await);
    let ((spent_posting, by_name), cycles, posted) = (
        spent(&commands_before, &commands_after),
        polls_after - polls_before,
        posts_after - posts_before,
    );
    eprintln!(
        "while posting: {fetches} fetches of / in {took:?}: {spent_posting} store commands ({by_name:?}) while {posted} posts were made and {cycles} cycles ended"
    );
    assert!(
        posted > 0,
        "run posted nothing while the page was fetched {fetches} times"
    );
    let bound = COMMANDS_PER_POST * (posted + IN_FLIGHT) + COMMANDS_PER_CYCLE * (cycles + 1);
    assert!(
        spent_posting <= bound,
        "{spent_posting} store commands during {fetches} fetches, {posted} posts and {cycles} cycles (bound {bound})"
    );

    // Once the cycle is over (the next is 300 s away): the page alone, which reads memory only.
    let every_post = 16 * 3;
    wait_until(
        "the first cycle posts every match on every channel and ends",
        || async { posts().await == every_post && polls().await == 1 },
    )
    .await;
    let before = commands(&redis).await;
    let took = fetch_a_thousand_times(&client, &url).await;
    let (spent_idle, by_name) = spent(&before, &commands(&redis).await);
    eprintln!("idle: 1000 fetches of / in {took:?}: {spent_idle} store commands ({by_name:?})");
    assert_eq!(spent_idle, 0, "{by_name:?}");

    running.signal(libc::SIGTERM);
    assert_eq!(running.exit_code().await, Some(0), "{}", running.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_an_address_that_is_not_loopback_the_page_is_off_unless_status_page_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let page = root().join("fixtures/cricbuzz/live-scores_2026-07-17.html");
    // Nothing listens on port 1: the second source fails at each read (connection refused).
    let refused = "cricbuzz=http://127.0.0.1:1/live-scores";
    let sources = format!("{},{refused}", page.display());
    for (setting, served) in [(None, false), (Some("on"), true), (Some("off"), false)] {
        let port = free_port();
        let mut cmd = bot(dir.path());
        cmd.env("SOURCES", &sources)
            .env("STORE_PATH", dir.path().join("bot.db"))
            .env("METRICS_ADDR", format!("0.0.0.0:{port}"))
            .args(["--dry-run", "run"]);
        if let Some(s) = setting {
            cmd.env("STATUS_PAGE", s);
        }
        let mut running = Running::start(&mut cmd, dir.path(), "run");
        let metrics = format!("http://127.0.0.1:{port}/metrics");
        wait_until("the listener answers", || async { get(&metrics).await.is_some() }).await;
        for path in ["/", "/status.json"] {
            let (code, body) = get(&format!("http://127.0.0.1:{port}{path}")).await.unwrap();
            assert_eq!(code == 200, served, "STATUS_PAGE={setting:?} {path}: {code} {body}");
            if !served {
                assert_eq!(code, 404, "{body}");
                assert!(body.contains("STATUS_PAGE"), "{body}");
            }
        }
        assert_eq!(get(&metrics).await.map(|(code, _)| code), Some(200));
        if setting == Some("on") {
            dry_run_page(port).await;
            assert!(
                running
                    .log()
                    .contains("STATUS_PAGE=on on an address that is not loopback"),
                "{}",
                running.log()
            );
        }
        running.signal(libc::SIGTERM);
        assert_eq!(running.exit_code().await, Some(0), "{}", running.log());
    }
}

/// What the status page of the dry run on `port` says once its first cycle is done: its
/// would-be posts are no posts (0 today, this week and in the chart, counted apart as
/// `would_post`), and the source that fails is a warning on the page while `/healthz`, which
/// only counts sources not read for a while, stays ok.
async fn dry_run_page(port: u16) {
    let json_url = format!("http://127.0.0.1:{port}/status.json");
    wait_until("the dry run's first cycle is on the page", || async {
        get(&json_url)
            .await
            .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(&body).ok())
            .is_some_and(|s| s["cycles"].as_u64().is_some_and(|n| n >= 1))
    })
    .await;
    let s: serde_json::Value = serde_json::from_str(&get(&json_url).await.unwrap().1).unwrap();
    assert_eq!(s["dry_run"], true);
    let recent = s["recent"].as_array().unwrap();
    assert!(!recent.is_empty(), "{s:#}");
    assert!(recent.iter().all(|r| r["state"] == "would_post"), "{s:#}");
    let channel = &s["channels"][0];
    assert_eq!(channel["posts_today"], 0, "{s:#}");
    assert_eq!(channel["posts_this_week"], 0, "{s:#}");
    assert!(
        channel["posts_by_day"].as_array().unwrap().iter().all(|n| n == 0),
        "{s:#}"
    );
    assert_eq!(channel["would_post"].as_u64(), Some(recent.len() as u64), "{s:#}");

    let warnings = s["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{s:#}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with("source cricbuzz=http://127.0.0.1:1/live-scores failed "),
        "{warning}"
    );
    assert!(s["problems"].as_array().unwrap().is_empty(), "{s:#}");
    let (_, page) = get(&format!("http://127.0.0.1:{port}/")).await.unwrap();
    assert!(!page.contains("Nothing wrong"), "{page}");
    assert!(page.contains("busiest day: 0 posts (dry run"), "{page}");
    assert_eq!(
        get(&format!("http://127.0.0.1:{port}/healthz"))
            .await
            .map(|(code, _)| code),
        Some(200)
    );
}

/// A Mastodon post whose answer was lost is `unknown` on the page; once the reconciliation finds
/// it (the repeat under its Idempotency-Key answers the status made), the same row says
/// `posted` with its id, the channel's unknown count drops and its posts count it, and the
/// reconciliation's row says it settled it: the page no longer contradicts itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_the_reconciliation_finds_turns_from_unknown_to_posted_on_the_page() {
    let prefix = unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let mastodon = Instance::default();
    let server = mastodon.start().await;
    let owner = replica(Kind::Redis, &prefix, dir.path(), &server, Clock::system()).await;
    owner.init_store().await.unwrap();
    let (summary, _) = owner.backfill().await;
    assert_eq!((summary.posted, summary.failed), (0, 1), "{}", summary.line(false));
    let before = owner.snapshot();
    assert_eq!(before.recent.len(), 1);
    assert_eq!(before.recent[0].state, PostState::Unknown);
    assert_eq!(before.channels[0].unknown, 1);
    assert_eq!(before.channels[0].posts_this_week, 0);

    // Past Mastodon's settling time (the records aged), once the instance saved the status.
    wait_until("the instance saved the status", || async { mastodon.saved() }).await;
    age_claims(Kind::Redis, &prefix, chrono::TimeDelta::minutes(15)).await;
    let decisions = owner.reconcile().await.unwrap();
    let [Decision {
        outcome: Settled::Posted { id, .. },
        ..
    }] = decisions.as_slice()
    else {
        panic!("{decisions:?}");
    };
    assert_eq!(mastodon.made(), 1, "found, not posted again");

    let after = owner.snapshot();
    let row = &after.recent[0];
    assert_eq!(row.key, before.recent[0].key);
    assert_eq!(row.state, PostState::Posted);
    assert_eq!(row.post_id.as_deref(), Some(id.as_str()));
    assert!(row.settled_at.is_some());
    let channel = &after.channels[0];
    assert_eq!((channel.unknown, channel.posts_this_week), (0, 1), "{channel:?}");
    assert_eq!(after.waiting.claims.len(), 1);
    assert!(after.waiting.claims[0].settled, "{:?}", after.waiting.claims);
    let page = cricket_announcer::status::page::html(&after, 5).unwrap();
    assert!(page.contains("settled: posted"), "{page}");
    assert!(!page.contains("<td class=\"state-unknown\">"), "{page}");
    helpers::cleanup(Kind::Redis, &prefix).await;
}
