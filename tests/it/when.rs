//! When and where (issue 33): a lead time before each match's start (`ANNOUNCE_BEFORE`) and the
//! time zone each channel's posts tell the start in (`TIMEZONE`, a channel's `timezone`).
//!
//! The schedule is the real Cricbuzz listing of 16 June 2024 (`matches-v1-upcoming`), read from
//! a file the tests may edit (a match moved, a team renamed), limited to its two bilateral T20I
//! series (eight matches over four days). Time is a manual clock passed to the app
//! ([`Clock::manual`]): a cycle is run at the instants that matter, and `run` sleeps by it, so a
//! day of five-minute polls passes in moments. X is a wiremock server; every store is real.

use crate::cli::{bot, text};
use crate::helpers::{self, root, store_matrix, Buffer, Kind};
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use clap::Parser;
use cricket_announcer::app::{App, Summary};
use cricket_announcer::claim::ClaimState;
use cricket_announcer::cli::Cli;
use cricket_announcer::clock::Clock;
use cricket_announcer::config::{Config, Invocation, Needs};
use cricket_announcer::cricket::MatchKey;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

use wiremock::MockServer;

/// The saved listing: every match of the week from 16 June 2024.
const FIXTURE: &str = "fixtures/cricbuzz/matches-v1-upcoming_2024-06-16.json";

/// The two series the tests announce (`SERIES`).
const SERIES: &str = "Jersey tour of Denmark,Estonia tour of Cyprus";

/// June 2024, UTC.
fn june(day: u32, h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, day, h, m, 0).unwrap()
}

/// The eight matches of [`SERIES`]: key, first line of the post, start (UTC).
fn schedule() -> Vec<(&'static str, &'static str, DateTime<Utc>)> {
    vec![
        (
            "2024-06-16_denmark-v-jersey_2nd-t20i",
            "Coming up: Denmark v Jersey, 2nd T20I",
            june(16, 8, 30),
        ),
        (
            "2024-06-16_denmark-v-jersey_3rd-t20i",
            "Coming up: Denmark v Jersey, 3rd T20I",
            june(16, 13, 0),
        ),
        (
            "2024-06-17_cyprus-v-estonia_1st-t20i",
            "Coming up: Cyprus v Estonia, 1st T20I",
            june(17, 5, 30),
        ),
        (
            "2024-06-17_cyprus-v-estonia_2nd-t20i",
            "Coming up: Cyprus v Estonia, 2nd T20I",
            june(17, 9, 15),
        ),
        (
            "2024-06-18_cyprus-v-estonia_3rd-t20i",
            "Coming up: Cyprus v Estonia, 3rd T20I",
            june(18, 5, 30),
        ),
        (
            "2024-06-18_cyprus-v-estonia_4th-t20i",
            "Coming up: Cyprus v Estonia, 4th T20I",
            june(18, 9, 15),
        ),
        (
            "2024-06-19_cyprus-v-estonia_5th-t20i",
            "Coming up: Cyprus v Estonia, 5th T20I",
            june(19, 5, 30),
        ),
        (
            "2024-06-19_cyprus-v-estonia_6th-t20i",
            "Coming up: Cyprus v Estonia, 6th T20I",
            june(19, 9, 15),
        ),
    ]
}

/// The lead time of these tests: two hours.
fn lead() -> TimeDelta {
    TimeDelta::hours(2)
}

/// A copy of the listing in `dir` that a test may edit.
fn listing(dir: &Path) -> PathBuf {
    let copy = dir.join("upcoming.json");
    std::fs::copy(root().join(FIXTURE), &copy).unwrap();
    copy
}

/// Edits the match `id` of the listing at `file`: `change` gets its `matchInfo`.
fn edit(file: &Path, id: u64, change: impl Fn(&mut serde_json::Value)) {
    let mut page: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut found = 0;
    for kind in page["typeMatches"].as_array_mut().unwrap() {
        for series in kind["seriesMatches"].as_array_mut().unwrap() {
            let Some(matches) = series
                .get_mut("seriesAdWrapper")
                .and_then(|w| w.get_mut("matches"))
                .and_then(|m| m.as_array_mut())
            else {
                continue;
            };
            for m in matches {
                if m["matchInfo"]["matchId"] == id {
                    change(&mut m["matchInfo"]);
                    found += 1;
                }
            }
        }
    }
    assert_eq!(found, 1, "match {id} is listed once");
    std::fs::write(file, serde_json::to_string(&page).unwrap()).unwrap();
}

/// The first line of every post X received, in order.
async fn posted(x: &MockServer) -> Vec<String> {
    x.received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            body["text"].as_str().unwrap().lines().next().unwrap().to_string()
        })
        .collect()
}

/// The whole text of the last post X received.
async fn last_post(x: &MockServer) -> String {
    let requests = x.received_requests().await.unwrap();
    let body: serde_json::Value = serde_json::from_slice(&requests.last().unwrap().body).unwrap();
    body["text"].as_str().unwrap().to_string()
}

/// The bot as `run` builds it, on `clock`: a store of `kind`, the listing at `source` limited
/// to [`SERIES`], a two-hour lead, X at `x`, no pace or flood cap in the way.
async fn app(kind: Kind, prefix: &str, dir: &Path, source: &Path, x: &MockServer, clock: &Clock) -> App {
    let store = helpers::store_flags(kind, prefix, dir).await;
    let flags = [
        "--series",
        SERIES,
        "--announce-before",
        "2h",
        "--poll-interval-secs",
        "300",
        "--posts-per-minute",
        "1000",
        "--posts-per-day",
        "100000",
    ];
    let sources = [source.to_str().unwrap().to_string()];
    let args = helpers::live_args(&store, prefix, &sources, x, 20, &flags, "run");
    let cli = Cli::try_parse_from(args).unwrap();
    let config = Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::Posting)).unwrap();
    App::build_on(&config, Buffer::default().output(), clock.clone())
        .await
        .unwrap()
}

/// One cycle at `at` (the clock moved there first; it never goes back).
async fn cycle_at(app: &App, clock: &Clock, at: DateTime<Utc>) -> Summary {
    clock.sleep_until(at).await;
    assert_eq!(clock.now(), at, "the clock only moves forward in these tests");
    app.cycle(&CancellationToken::new()).await
}

/// The state and claim time of the claim on `key`.
async fn claim_of(app: &App, key: &str) -> Option<(ClaimState, DateTime<Utc>)> {
    app.store()
        .peek(&MatchKey::parse(key).unwrap())
        .await
        .unwrap()
        .map(|c| (c.state, c.claimed_at))
}

async fn a_schedule_listed_five_days_ahead_posts_each_match_once_when_its_window_opens(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = helpers::unique_prefix();
    let x = crate::helpers::x_accepting_all().await;
    let source = listing(dir.path());
    // Five days before the first match.
    let clock = Clock::manual(june(11, 8, 30));
    let app = app(kind, &prefix, dir.path(), &source, &x, &clock).await;
    app.init_store().await.unwrap();
    let first = app.cycle(&CancellationToken::new()).await;
    assert_eq!(
        (first.posted, first.waiting, first.next_window),
        (0, 8, Some(june(16, 6, 30)))
    );
    for (i, (key, line, start)) in schedule().into_iter().enumerate() {
        let opens = start - lead();
        // A minute before its window: nothing new, and nothing claimed.
        let before = cycle_at(&app, &clock, opens - TimeDelta::minutes(1)).await;
        assert_eq!((before.posted, before.waiting), (0, 8 - i), "{key}");
        assert_eq!(claim_of(&app, key).await, None, "{key}: claimed before its window");
        // At its opening: this match, once.
        let at = cycle_at(&app, &clock, opens).await;
        assert_eq!((at.posted, at.skipped, at.waiting), (1, i, 8 - i - 1), "{key}");
        let lines = posted(&x).await;
        assert_eq!(lines.len(), i + 1, "{key}: {lines:?}");
        assert_eq!(lines[i], line);
        assert_eq!(claim_of(&app, key).await, Some((ClaimState::Posted, opens)), "{key}");
    }
    // Days later every match is held: nothing more is posted.
    let after = cycle_at(&app, &clock, june(20, 12, 0)).await;
    assert_eq!((after.posted, after.skipped, after.waiting), (0, 8, 0));
    assert_eq!(posted(&x).await.len(), 8);
    helpers::cleanup(kind, &prefix).await;
}

async fn a_listing_moved_or_renamed_before_its_window_posts_once_at_the_new_time(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = helpers::unique_prefix();
    let x = crate::helpers::x_accepting_all().await;
    let source = listing(dir.path());
    let clock = Clock::manual(june(15, 12, 0));
    let app = app(kind, &prefix, dir.path(), &source, &x, &clock).await;
    app.init_store().await.unwrap();
    assert_eq!(app.cycle(&CancellationToken::new()).await.waiting, 8);
    // A day ahead, the 2nd T20I moves from 08:30 to 11:30, and the 3rd's visitors are
    // renamed (a new key: a claim made the day before would have held the old one).
    edit(&source, 96_910, |m| {
        m["startDate"] = "1718537400000".into();
        m["status"] = "Match starts at Jun 16, 11:30 GMT".into();
    });
    edit(&source, 96_917, |m| m["team2"]["teamName"] = "Jersey Reds".into());
    // The old window opens: nothing, nothing claimed.
    let old = cycle_at(&app, &clock, june(16, 6, 30)).await;
    assert_eq!((old.posted, old.waiting), (0, 8));
    assert_eq!(claim_of(&app, "2024-06-16_denmark-v-jersey_2nd-t20i").await, None);
    // The new window: the moved match once, saying its new time.
    let moved = cycle_at(&app, &clock, june(16, 9, 30)).await;
    assert_eq!(moved.posted, 1);
    assert_eq!(
        last_post(&x).await,
        "Coming up: Denmark v Jersey, 2nd T20I\nJersey tour of Denmark, 2024\n📍 Svanholm Park, Brondby\n🕒 Sun 16 Jun, 11:30 UTC\nhttps://www.cricbuzz.com/live-cricket-scores/96910/den-vs-jer-2nd-t20i-jersey-tour-of-denmark-2024"
    );
    // The renamed one at its window, under its new name and key.
    let renamed = cycle_at(&app, &clock, june(16, 11, 0)).await;
    assert_eq!((renamed.posted, renamed.skipped), (1, 1));
    assert_eq!(
        posted(&x).await,
        [
            "Coming up: Denmark v Jersey, 2nd T20I",
            "Coming up: Denmark v Jersey Reds, 3rd T20I"
        ]
    );
    assert_eq!(
        claim_of(&app, "2024-06-16_denmark-v-jersey-reds_3rd-t20i").await,
        Some((ClaimState::Posted, june(16, 11, 0)))
    );
    assert_eq!(claim_of(&app, "2024-06-16_denmark-v-jersey_3rd-t20i").await, None);
    let later = cycle_at(&app, &clock, june(16, 11, 5)).await;
    assert_eq!((later.posted, later.skipped, later.waiting), (0, 2, 6));
    assert_eq!(posted(&x).await.len(), 2);
    helpers::cleanup(kind, &prefix).await;
}

async fn a_match_first_seen_after_its_window_opened_posts_at_once(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = helpers::unique_prefix();
    let x = crate::helpers::x_accepting_all().await;
    let source = listing(dir.path());
    // 11:30: the 2nd T20I started three hours ago (still listed upcoming), the 3rd's window
    // opened half an hour ago; the Cyprus series waits.
    let clock = Clock::manual(june(16, 11, 30));
    let app = app(kind, &prefix, dir.path(), &source, &x, &clock).await;
    app.init_store().await.unwrap();
    let first = app.cycle(&CancellationToken::new()).await;
    assert_eq!((first.posted, first.waiting), (2, 6));
    assert_eq!(first.next_window, Some(june(17, 3, 30)), "the 1st Cyprus T20I's window");
    assert_eq!(
        posted(&x).await,
        [
            "Coming up: Denmark v Jersey, 2nd T20I",
            "Coming up: Denmark v Jersey, 3rd T20I"
        ]
    );
    let again = cycle_at(&app, &clock, june(16, 11, 35)).await;
    assert_eq!((again.posted, again.skipped, again.waiting), (0, 2, 6));
    helpers::cleanup(kind, &prefix).await;
}

async fn a_first_start_with_seed_posts_the_later_matches_when_their_windows_open(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = helpers::unique_prefix();
    let x = crate::helpers::x_accepting_all().await;
    let source = listing(dir.path());
    // 07:00: the 2nd T20I's window opened at 06:30; the rest wait.
    let clock = Clock::manual(june(16, 7, 0));
    let app = app(kind, &prefix, dir.path(), &source, &x, &clock).await;
    let seeded = app.seed(None).await.unwrap();
    // Seed records every current listing, the bot's filter aside: the three inside their
    // window (India Women and Croatia Women at 08:00, the 2nd T20I at 08:30), none of the 50
    // others (8 more have a team not known yet).
    assert_eq!((seeded.seeded, seeded.waiting, seeded.not_announceable), (3, 50, 8));
    assert_eq!(
        claim_of(&app, "2024-06-16_denmark-v-jersey_2nd-t20i").await,
        Some((ClaimState::Seeded, june(16, 7, 0)))
    );
    assert_eq!(claim_of(&app, "2024-06-16_denmark-v-jersey_3rd-t20i").await, None);
    let now = app.cycle(&CancellationToken::new()).await;
    assert_eq!((now.posted, now.skipped, now.waiting), (0, 1, 7));
    let third = cycle_at(&app, &clock, june(16, 11, 0)).await;
    assert_eq!(third.posted, 1);
    let cyprus = cycle_at(&app, &clock, june(17, 3, 30)).await;
    assert_eq!(cyprus.posted, 1);
    assert_eq!(
        posted(&x).await,
        [
            "Coming up: Denmark v Jersey, 3rd T20I",
            "Coming up: Cyprus v Estonia, 1st T20I"
        ]
    );
    assert_eq!(
        claim_of(&app, "2024-06-16_denmark-v-jersey_2nd-t20i")
            .await
            .map(|c| c.0),
        Some(ClaimState::Seeded)
    );
    helpers::cleanup(kind, &prefix).await;
}

async fn run_with_a_five_minute_poll_announces_within_a_minute_of_each_window(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = helpers::unique_prefix();
    let x = crate::helpers::x_accepting_all().await;
    let source = listing(dir.path());
    // Off the windows' grid: polls at 05:02:17, 05:07:17… never meet an opening.
    let start = june(16, 5, 2) + TimeDelta::seconds(17);
    let clock = Clock::manual(start);
    let app = app(kind, &prefix, dir.path(), &source, &x, &clock).await;
    app.init_store().await.unwrap();
    // 27 hours of five-minute polls, plus the cycles that wake for a window.
    let end = app.run_until_cancelled(CancellationToken::new(), Some(330)).await;
    assert_eq!(end.refused, None);
    assert!(
        clock.now() > june(17, 7, 15),
        "ran past the 4th window: {}",
        clock.now()
    );
    assert!(clock.now() < june(18, 3, 30), "stopped before the 5th: {}", clock.now());
    let lines = posted(&x).await;
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (key, line, start) in schedule().into_iter().take(4) {
        assert!(lines.contains(&line.to_string()), "{line}: {lines:?}");
        let (state, at) = claim_of(&app, key).await.unwrap();
        let opens = start - lead();
        assert_eq!(state, ClaimState::Posted);
        // Within a minute of the opening (a second's margin, and at most 30 s of jitter),
        // never before it.
        assert!(
            at >= opens && at - opens <= TimeDelta::minutes(1),
            "{key}: window {opens}, posted {at}"
        );
    }
    helpers::cleanup(kind, &prefix).await;
}

store_matrix!(
    a_schedule_listed_five_days_ahead_posts_each_match_once_when_its_window_opens,
    a_listing_moved_or_renamed_before_its_window_posts_once_at_the_new_time,
    a_match_first_seen_after_its_window_opened_posts_at_once,
    a_first_start_with_seed_posts_the_later_matches_when_their_windows_open,
    run_with_a_five_minute_poll_announces_within_a_minute_of_each_window,
);

/// A channels file of three channels that post nothing here (a dry run): X in the bot's zone,
/// Mastodon in Sydney's, Discord with its own timestamp markup.
fn channels_file(dir: &Path) -> PathBuf {
    let file = dir.join("channels.toml");
    std::fs::write(
        &file,
        "[[channel]]\nname = \"india\"\nsink = \"x\"\n\n\
         [[channel]]\nname = \"sydney\"\nsink = \"mastodon\"\ninstance = \"https://mastodon.example\"\ntoken_env = \"MASTODON_TOKEN\"\ntimezone = \"Australia/Sydney\"\n\n\
         [[channel]]\nname = \"club\"\nsink = \"discord\"\nwebhook_url_env = \"DISCORD_WEBHOOK_URL\"\n",
    )
    .unwrap();
    file
}

/// The `🕒` line of each dry-run post (`--json`) of `channel` for the match `key`.
fn start_line(stdout: &str, channel: &str, key: &str) -> String {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|p| p["channel"] == channel && p["match_key"] == key)
        .map(|p| {
            p["text"]
                .as_str()
                .unwrap()
                .lines()
                .find(|l| l.starts_with("🕒"))
                .unwrap()
                .to_string()
        })
        .next()
        .unwrap_or_else(|| panic!("no post of {key} on {channel}: {stdout}"))
}

#[tokio::test]
async fn each_channel_tells_the_start_in_its_zone_and_discord_in_each_readers_own() {
    let dir = tempfile::tempdir().unwrap();
    let source = listing(dir.path());
    // Two matches moved to either side of Sydney's clocks going forward (02:00 AEST on Sunday
    // 6 October 2024, 16:00 UTC on the 5th).
    edit(&source, 96_744, |m| m["startDate"] = "1728142200000".into());
    edit(&source, 96_748, |m| m["startDate"] = "1728145800000".into());
    // The built-in templates: Discord's is its own.
    let o = bot(dir.path())
        .env_remove("TEMPLATE_PATH")
        .env("CHANNELS_FILE", channels_file(dir.path()))
        .env("TIMEZONE", "Asia/Kolkata")
        .env("SERIES", "ICC Mens T20 World Cup,Estonia tour of Cyprus")
        .args(["--dry-run", "--json", "--source"])
        .arg(&source)
        .arg("backfill")
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // Pakistan v Ireland, 14:30 UTC on Sunday: Sunday evening in India, Monday in Sydney.
    let pak = "2024-06-16_ireland-v-pakistan_36th-match";
    assert_eq!(start_line(&stdout, "india", pak), "🕒 Sun 16 Jun, 20:00 IST");
    assert_eq!(start_line(&stdout, "sydney", pak), "🕒 Mon 17 Jun, 00:30 AEST");
    assert_eq!(start_line(&stdout, "club", pak), "🕒 <t:1718548200:F>");
    // Bangladesh v Nepal, 23:30 UTC on Sunday: Monday in both.
    let ban = "2024-06-16_bangladesh-v-nepal_37th-match";
    assert_eq!(start_line(&stdout, "india", ban), "🕒 Mon 17 Jun, 05:00 IST");
    assert_eq!(start_line(&stdout, "sydney", ban), "🕒 Mon 17 Jun, 09:30 AEST");
    // Both sides of the change: 15:30 UTC is 01:30 standard time, 16:30 UTC is 03:30 summer
    // time; India keeps one offset all year.
    let before = "2024-10-05_cyprus-v-estonia_1st-t20i";
    let after = "2024-10-05_cyprus-v-estonia_2nd-t20i";
    assert_eq!(start_line(&stdout, "sydney", before), "🕒 Sun 6 Oct, 01:30 AEST");
    assert_eq!(start_line(&stdout, "sydney", after), "🕒 Sun 6 Oct, 03:30 AEDT");
    assert_eq!(start_line(&stdout, "india", before), "🕒 Sat 5 Oct, 21:00 IST");
    assert_eq!(start_line(&stdout, "india", after), "🕒 Sat 5 Oct, 22:00 IST");
}

/// A dry-run `backfill` over `source` with one more variable set: its exit code and stderr.
async fn refused_backfill(
    dir: &std::path::Path,
    source: &std::path::Path,
    var: &str,
    value: &std::ffi::OsStr,
) -> (Option<i32>, String) {
    let o = bot(dir)
        .env(var, value)
        .args(["--dry-run", "--source"])
        .arg(source)
        .arg("backfill")
        .output()
        .await
        .unwrap();
    (o.status.code(), text(&o).1)
}

#[tokio::test]
async fn an_unknown_zone_stops_the_bot_at_start_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let source = listing(dir.path());
    let (code, stderr) = refused_backfill(dir.path(), &source, "TIMEZONE", "India/Mumbai".as_ref()).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid TIMEZONE=\"India/Mumbai\": not an IANA time zone name"),
        "{stderr}"
    );
    // A channel's `timezone`, refused naming the file's channel and field: a name the database
    // lacks, and a blank one (said to be empty, with what to do instead).
    let file = dir.path().join("bad.toml");
    for (zone, said) in [
        ("Sydney", "not an IANA time zone name"),
        (" ", "empty: remove the field to use the bot's TIMEZONE"),
    ] {
        std::fs::write(
            &file,
            format!("[[channel]]\nname = \"sydney\"\nsink = \"x\"\ntimezone = \"{zone}\"\n"),
        )
        .unwrap();
        let (code, stderr) = refused_backfill(dir.path(), &source, "CHANNELS_FILE", file.as_os_str()).await;
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("channel \"sydney\": field `timezone`: {said}")),
            "{zone:?}: {stderr}"
        );
    }
}

#[tokio::test]
async fn check_sources_tells_a_wait_in_the_channels_zone_and_a_state_left_out_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let source = listing(dir.path());
    let check = |states: &'static str| {
        let mut cmd = bot(dir.path());
        cmd.env("STORE_PATH", dir.path().join("claims.db"))
            .env("SERIES", "ICC Mens T20 World Cup")
            .env("STATES", states)
            .env("ANNOUNCE_BEFORE", "2h")
            .env("TIMEZONE", "Asia/Kolkata")
            .args(["--as-of", "2024-06-16T06:00:00Z", "check-sources", "--wide", "--source"])
            .arg(&source);
        cmd
    };
    let o = check("upcoming,live").output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // Pakistan v Ireland starts 14:30 UTC (20:00 IST): its window opens at 18:00 IST.
    assert_eq!(
        lines[2],
        "  Pakistan v Ireland, 36th Match, Group A (upcoming): announce in 6 h 30 min, at Sun 16 Jun, 18:00 IST"
    );
    let o = check("live").output().await.unwrap();
    let (stdout, _) = text(&o);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[2],
        "  Pakistan v Ireland, 36th Match, Group A (upcoming): not announced: state upcoming (announced: live)"
    );
}

#[tokio::test]
async fn check_sources_and_the_dry_run_say_when_each_match_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let source = listing(dir.path());
    let db = dir.path().join("claims.db");
    let x = crate::helpers::x_accepting_all().await;
    // Announce the World Cup's matches for real first (all long begun by the system's clock).
    let mut live = bot(dir.path());
    crate::cli::with_x(&mut live, &x);
    let o = live
        .env("STORE_PATH", &db)
        .env("SERIES", "ICC Mens T20 World Cup")
        .env("ANNOUNCE_BEFORE", "2h")
        .args(["backfill", "--init-store", "--source"])
        .arg(&source)
        .output()
        .await
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let world_cup = posted(&x).await.len();
    assert!(world_cup > 3, "{world_cup}");
    // As of 06:00 on 16 June with a two-hour lead: the first three listed are announced
    // already; a 2h lead on Denmark's series shows the wait.
    let check = |series: &'static str| {
        let mut cmd = bot(dir.path());
        cmd.env("STORE_PATH", &db)
            .env("SERIES", series)
            .env("ANNOUNCE_BEFORE", "2h")
            .args(["--as-of", "2024-06-16T06:00:00Z", "check-sources", "--wide", "--source"])
            .arg(&source);
        cmd
    };
    let o = check("ICC Mens T20 World Cup").output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[2],
        "  Pakistan v Ireland, 36th Match, Group A (upcoming): already announced"
    );
    assert_eq!(
        lines[3],
        "  Bangladesh v Nepal, 37th Match, Group D (upcoming): already announced"
    );
    let o = check("Jersey tour of Denmark").output().await.unwrap();
    let (stdout, _) = text(&o);
    let lines: Vec<&str> = stdout.lines().collect();
    // Not in the series: not announced at all, whatever the time.
    assert_eq!(
        lines[2],
        "  Pakistan v Ireland, 36th Match, Group A (upcoming): not announced: series not included"
    );
    // The dry run, at 06:00: the two 08:00 matches now (not in the series: nothing), the 2nd
    // T20I's window in 30 minutes, the 3rd's in 5 hours.
    let o = bot(dir.path())
        .env("STORE_PATH", &db)
        .env("SERIES", "Jersey tour of Denmark")
        .env("ANNOUNCE_BEFORE", "2h")
        .env("TIMEZONE", "Europe/Copenhagen")
        .args(["--dry-run", "--as-of", "2024-06-16T06:00:00Z", "backfill", "--source"])
        .arg(&source)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let headers: Vec<&str> = stdout.lines().filter(|l| l.starts_with("--- ")).collect();
    assert_eq!(
        headers,
        [
            "--- 2024-06-16_denmark-v-jersey_2nd-t20i (cricbuzz:96910; weighted length 142/280; in 30 min, at Sun 16 Jun, 08:30 CEST)",
            "--- 2024-06-16_denmark-v-jersey_3rd-t20i (cricbuzz:96917; weighted length 142/280; in 5 h, at Sun 16 Jun, 13:00 CEST)",
        ]
    );
    assert!(stdout.contains("🕒 Sun 16 Jun, 10:30 CEST"), "{stdout}");
    assert!(
        stdout.contains("would post 0, skipped 0, failed 0, waiting for their window 2"),
        "{stdout}"
    );
    // An already announced match is said so in a dry run with a lead time.
    let o = bot(dir.path())
        .env("STORE_PATH", &db)
        .env("SERIES", "ICC Mens T20 World Cup")
        .env("ANNOUNCE_BEFORE", "2h")
        .args(["--dry-run", "--as-of", "2024-06-16T06:00:00Z", "backfill", "--source"])
        .arg(&source)
        .output()
        .await
        .unwrap();
    let (stdout, _) = text(&o);
    assert!(
        stdout.lines().any(|l| l.starts_with(
            "=== 2024-06-16_ireland-v-pakistan_36th-match (cricbuzz:87745): already announced (posted, owner "
        )),
        "{stdout}"
    );
    assert_eq!(
        posted(&x).await.len(),
        world_cup,
        "check-sources and dry runs post nothing"
    );
    // --as-of is for what writes nothing.
    let o = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["--as-of", "2024-06-16T06:00:00Z", "seed", "--source"])
        .arg(&source)
        .output()
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[tokio::test]
async fn a_dry_run_seed_with_a_lead_says_which_matches_wait_for_their_window() {
    let dir = tempfile::tempdir().unwrap();
    let source = listing(dir.path());
    let o = bot(dir.path())
        .env("STORE_PATH", dir.path().join("claims.db"))
        .env("ANNOUNCE_BEFORE", "90m")
        .args(["--dry-run", "--as-of", "2024-06-16T07:00:00Z", "seed", "--source"])
        .arg(&source)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // 08:00 starts are inside a 90-minute window at 07:00; the 2nd T20I (08:30) opens at 07:00
    // exactly; the 3rd (13:00) waits.
    assert!(
        lines.contains(&"would record 2024-06-16_denmark-v-jersey_2nd-t20i  Denmark v Jersey, 2nd T20I"),
        "{stdout}"
    );
    assert!(
        lines.contains(
            &"waits 2024-06-16_denmark-v-jersey_3rd-t20i  Denmark v Jersey, 3rd T20I (announced in 4 h 30 min, at Sun 16 Jun, 11:30 UTC)"
        ),
        "{stdout}"
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("would record ")).count(), 3);
    assert_eq!(lines.iter().filter(|l| l.starts_with("waits ")).count(), 50);
}
