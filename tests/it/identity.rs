//! One match, one announcement, for the whole life of a listing: the edits a score site really
//! makes to one listing between two polls (a start moved across UTC midnight or to the reserve
//! day, a team's spelling, a placeholder filled in, the description reworded, the start time
//! missing then given), replayed on every store, each ending with exactly one post; two versions
//! of one listing claimed at once by three processes; and a store written by the previous
//! release still protecting its matches.
//!
//! Every page here is the shipped Cricbuzz API fixture (`matches-v1-upcoming_2024-06-16.json`),
//! cut to the matches a test needs and edited as the site edits a listing.

use crate::cli::{bot, text, with_x};
use crate::helpers::{raw_redis, unique_prefix, x_accepts, Kind};
use cricket_announcer::app::App;
use cricket_announcer::claim::ClaimState;
use cricket_announcer::cricket::MatchKey;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;
use wiremock::MockServer;

/// The fixture's matches whose `matchId` is in `ids`, each `matchInfo` passed through `edit`.
fn listing(ids: &[&str], edit: impl Fn(&mut Value)) -> String {
    let picks: Vec<(&str, crate::sites::Edit<'_>)> =
        ids.iter().map(|id| (*id, &edit as crate::sites::Edit<'_>)).collect();
    crate::sites::cricbuzz_page(&picks)
}

/// `startDate` moved by `minutes`.
fn moved(info: &mut Value, minutes: i64) {
    let ms: i64 = info["startDate"].as_str().unwrap().parse().unwrap();
    info["startDate"] = Value::String((ms + minutes * 60_000).to_string());
}

/// One bot on a store of `kind`, reading one page file that the test rewrites between cycles.
struct Bot {
    app: App,
    page: PathBuf,
    prefix: crate::helpers::Prefix,
    _dir: tempfile::TempDir,
}

impl Bot {
    async fn new(kind: Kind, x: &MockServer, first: &str) -> Bot {
        let dir = tempfile::tempdir().unwrap();
        let prefix = unique_prefix();
        let page = dir.path().join("matches.json");
        std::fs::write(&page, first).unwrap();
        let app = app(kind, &prefix, dir.path(), &[&page], x).await;
        assert!(app.init_store().await.unwrap());
        Bot {
            app,
            page,
            prefix,
            _dir: dir,
        }
    }

    /// One cycle over the page `text`: (posted, skipped).
    async fn cycle(&self, text: &str) -> (usize, usize) {
        std::fs::write(&self.page, text).unwrap();
        let s = self.app.cycle(&CancellationToken::new()).await;
        assert_eq!((s.sources_failed, s.store_errors, s.failed), (0, 0, 0), "{s:?}");
        (s.posted, s.skipped)
    }
}

/// An `App` as `backfill` builds it, on a store of `kind` under `prefix`, reading `page`.
async fn app(kind: Kind, prefix: &str, dir: &Path, pages: &[&Path], x: &MockServer) -> App {
    let store = crate::helpers::store_flags(kind, prefix, dir).await;
    let sources: Vec<String> = pages.iter().map(|p| format!("cricbuzz-json={}", p.display())).collect();
    crate::helpers::live_app_on(&store, prefix, &sources, x, 50)
        .await
        .unwrap()
}

/// The posts X received.
async fn posts(x: &MockServer) -> usize {
    x.received_requests().await.unwrap_or_default().len()
}

/// Replays `versions` of one listing (cycle by cycle) on a bot of `kind`: the posts each cycle
/// made, and the claim on the match at the end with the identities it recorded.
async fn replay(kind: Kind, ids: &[&str], versions: &[&dyn Fn(&mut Value)]) -> (Vec<usize>, Vec<String>) {
    let x = MockServer::start().await;
    x_accepts(&x, 1).await;
    let first = listing(ids, versions[0]);
    let bot = Bot::new(kind, &x, &first).await;
    let mut per_cycle = Vec::new();
    for edit in versions {
        let before = posts(&x).await;
        bot.cycle(&listing(ids, edit)).await;
        per_cycle.push(posts(&x).await - before);
    }
    x.verify().await;
    let claims = bot.app.announcer().store().list().await.unwrap();
    assert_eq!(claims.len(), 1, "one claim for the match: {claims:?}");
    assert_eq!(claims[0].claim.state, ClaimState::Posted);
    let identities = claims[0].claim.aliases.clone();
    crate::helpers::cleanup(kind, &bot.prefix).await;
    (per_cycle, identities)
}

fn same(_: &mut Value) {}

crate::helpers::store_matrix!(
    a_start_moved_across_utc_midnight_is_the_same_match,
    a_move_to_the_reserve_day_is_the_same_match,
    a_team_spelled_another_way_is_the_same_side,
    a_placeholder_filled_in_is_announced_once_when_the_team_is_known,
    a_reworded_description_is_the_same_match,
    a_start_time_missing_then_given_or_the_reverse_is_the_same_match,
    one_sites_page_and_api_wording_one_listing_differently_in_one_cycle_post_once,
);

/// Bangladesh v Nepal, 37th Match, Group D: listed for 2024-06-16 23:30 UTC.
const BAN_V_NEP: &str = "87752";

async fn a_start_moved_across_utc_midnight_is_the_same_match(kind: Kind) {
    // 23:30 → 00:30 the next day, and back.
    let (posts, ids) = replay(kind, &[BAN_V_NEP], &[&same, &|m| moved(m, 60), &same]).await;
    assert_eq!(posts, [1, 0, 0]);
    assert!(ids.contains(&"cricbuzz:87752".to_string()), "{ids:?}");
    assert!(
        ids.contains(&"key:2024-06-17_bangladesh-v-nepal_37th-match".to_string()),
        "the moved listing's key was recorded too: {ids:?}"
    );
}

async fn a_move_to_the_reserve_day_is_the_same_match(kind: Kind) {
    let reserve = |m: &mut Value| {
        moved(m, 24 * 60);
        m["matchDesc"] = "37th Match, Group D (Reserve Day)".into();
    };
    let (posts, _) = replay(kind, &[BAN_V_NEP], &[&same, &reserve]).await;
    assert_eq!(posts, [1, 0]);
}

async fn a_team_spelled_another_way_is_the_same_side(kind: Kind) {
    // (match, side, its names in later versions): Bangladesh v Nepal, United States v South
    // Africa, Sri Lanka v Netherlands (an entity-encoded name too; NFC and NFD spellings are
    // the unit tests' of `src/cricket/names.rs`).
    let cases: [(&str, &str, [&str; 2]); 4] = [
        (BAN_V_NEP, "team2", ["Nepal Men", "Nepal"]),
        ("87780", "team1", ["USA", "United States of America"]),
        ("87759", "team2", ["The Netherlands", "Netherlands"]),
        ("87759", "team1", ["Sri&#32;Lanka", "Sri Lanka"]),
    ];
    for (id, side, [first, second]) in cases {
        let (posts, _) = replay(
            kind,
            &[id],
            &[&same, &|m| m[side]["teamName"] = first.into(), &|m| {
                m[side]["teamName"] = second.into();
            }],
        )
        .await;
        assert_eq!(posts, [1, 0, 0], "{id}: {first}, {second}");
    }
}

async fn a_placeholder_filled_in_is_announced_once_when_the_team_is_known(kind: Kind) {
    // "B1 v West Indies" (87787) is not a match yet; once B1 is known it is announced, once.
    let (posts, ids) = replay(
        kind,
        &["87787"],
        &[&same, &|m| m["team1"]["teamName"] = "United States".into(), &|m| {
            m["team1"]["teamName"] = "USA".into();
        }],
    )
    .await;
    assert_eq!(posts, [0, 1, 0]);
    assert!(ids.contains(&"cricbuzz:87787".to_string()), "{ids:?}");
    // "Winner SF1 v Winner SF2" likewise: nothing until both sides are known.
    let winners = |m: &mut Value| {
        m["team1"]["teamName"] = "Winner SF1".into();
        m["team2"]["teamName"] = "Winner SF2".into();
    };
    let (posts, _) = replay(
        kind,
        &["87780"],
        &[&winners, &|m| m["team2"]["teamName"] = "Winner SF2".into(), &same],
    )
    .await;
    assert_eq!(posts, [0, 0, 1]);
}

async fn a_reworded_description_is_the_same_match(kind: Kind) {
    let (posts, _) = replay(
        kind,
        &[BAN_V_NEP],
        &[
            &same,
            &|m| m["matchDesc"] = "37th Match (Group D)".into(),
            &|m| m["matchDesc"] = "37th Match, Group D (D/N)".into(),
            &|m| {
                m.as_object_mut().unwrap().remove("matchDesc");
            },
        ],
    )
    .await;
    assert_eq!(posts, [1, 0, 0, 0]);
    // "Super 8 Group 2" → "43rd Match, Super 8 Group 2": another key, the same listing.
    let (posts, _) = replay(
        kind,
        &["87780"],
        &[&same, &|m| m["matchDesc"] = "43rd Match, Super 8 Group 2".into()],
    )
    .await;
    assert_eq!(posts, [1, 0]);
}

async fn a_start_time_missing_then_given_or_the_reverse_is_the_same_match(kind: Kind) {
    let missing = |m: &mut Value| {
        m.as_object_mut().unwrap().remove("startDate");
    };
    let (posts, _) = replay(kind, &[BAN_V_NEP], &[&missing, &same, &missing]).await;
    assert_eq!(posts, [1, 0, 0]);
    let (posts, _) = replay(kind, &[BAN_V_NEP], &[&same, &missing]).await;
    assert_eq!(posts, [1, 0]);
}

async fn one_sites_page_and_api_wording_one_listing_differently_in_one_cycle_post_once(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    // The site's page and its API, one listing each, worded differently: they share the
    // listing's id. (Two sites sharing no id: `sites.rs`.)
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, listing(&["87780"], same)).unwrap();
    std::fs::write(
        &b,
        listing(&["87780"], |m| {
            m["matchDesc"] = "42nd Match, Super Eights, Group 2".into();
        }),
    )
    .unwrap();
    let app = app(kind, &prefix, dir.path(), &[&a, &b], &x).await;
    assert!(app.init_store().await.unwrap());
    let s = app.cycle(&CancellationToken::new()).await;
    assert_eq!(s.posted, 1, "{s:?}");
    x.verify().await;
    crate::helpers::cleanup(kind, &prefix).await;
}

/// Three processes, each seeing another version of one listing (moved across midnight,
/// renamed, reworded), claim it at the same instant: one post.
async fn three_processes_seeing_three_versions_of_one_listing_post_once(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let versions: [&dyn Fn(&mut Value); 3] = [&same, &|m| moved(m, 60), &|m| {
        m["team2"]["teamName"] = "Nepal Men".into();
        m["matchDesc"] = "37th Match (Group D)".into();
    }];
    let store_env = crate::helpers::store_env(kind, &prefix, dir.path()).await;
    let mut children = Vec::new();
    for (i, edit) in versions.iter().enumerate() {
        let page = dir.path().join(format!("v{i}.json"));
        std::fs::write(&page, listing(&[BAN_V_NEP], edit)).unwrap();
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        for (k, v) in &store_env {
            cmd.env(k, v);
        }
        cmd.env("KEY_PREFIX", &prefix)
            .env("INSTANCE_ID", format!("replica-{i}"))
            .env("SOURCES", format!("cricbuzz-json={}", page.display()))
            .args(["backfill", "--init-store"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        children.push(cmd.spawn().unwrap());
    }
    let mut summaries = Vec::new();
    for c in children {
        let o = c.wait_with_output().await.unwrap();
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stdout}\n{stderr}");
        summaries.push(stdout);
    }
    assert_eq!(posts(&x).await, 1);
    let count = |what: &str| summaries.iter().filter(|s| s.contains(what)).count();
    assert_eq!(
        (count("posted 1, skipped 0"), count("posted 0, skipped 1")),
        (1, 2),
        "one process posted, the two others skipped the match: {summaries:?}"
    );
    x.verify().await;
    crate::helpers::cleanup(kind, &prefix).await;
}

mod race {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_redis() {
        three_processes_seeing_three_versions_of_one_listing_post_once(Kind::Redis).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_the_embedded_store() {
        three_processes_seeing_three_versions_of_one_listing_post_once(Kind::Embedded).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_postgres() {
        three_processes_seeing_three_versions_of_one_listing_post_once(Kind::Postgres).await;
    }
}

/// A store written by the previous release (one record per match at its old key, the source
/// ids only inside the record, no identity recorded apart) still holds its matches after the
/// upgrade, through an edit of the listing made after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_written_by_the_previous_release_still_protects_its_matches() {
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    let mut conn = raw_redis().await;
    // What the previous release wrote for "Bangladesh v Nepal" seen as "Nepal Men": its key
    // kept "men"; its record listed the page's id as an alias.
    let old_key = "2024-06-16_bangladesh-v-nepal-men_37th-match";
    let record = serde_json::json!({
        "state": "posted", "owner": "old-bot:1", "token": "5f1c0a4e-0000-4000-8000-000000000001",
        "claimed_at": "2024-06-15T10:00:00Z", "updated_at": "2024-06-15T10:00:01Z",
        "title": "Bangladesh v Nepal Men, 37th Match, Group D", "aliases": ["cricbuzz:87752"],
        "tweet_id": "1800000000000000009"
    });
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}match:{old_key}"))
        .arg(record.to_string())
        .arg("EX")
        .arg(86_400)
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}store:initialised"))
        .arg(r#"{"by":"old-bot:1","at":"2024-06-15T09:00:00Z","how":"seed"}"#)
        .arg("EX")
        .arg(86_400)
        .query_async(&mut conn)
        .await
        .unwrap();
    let page = dir.path().join("matches.json");
    // The listing as the site shows it after the upgrade: renamed and moved across midnight.
    std::fs::write(
        &page,
        listing(&[BAN_V_NEP], |m| {
            m["team2"]["teamName"] = "Nepal".into();
            moved(m, 60);
        }),
    )
    .unwrap();
    let app = app(Kind::Redis, &prefix, dir.path(), &[&page], &x).await;
    let s = app.cycle(&CancellationToken::new()).await;
    assert_eq!((s.posted, s.skipped, s.refused.as_deref()), (0, 1, None), "{s:?}");
    x.verify().await;
    let (key, claim) = app
        .announcer()
        .store()
        .peek_identity(&crate::helpers::id("cricbuzz:87752"))
        .await
        .unwrap()
        .expect("the old claim is found through the page's id");
    assert_eq!(key, MatchKey::parse(old_key).unwrap());
    assert_eq!(claim.state, ClaimState::Posted);
    assert_eq!(claim.owner, "old-bot:1");
    crate::helpers::cleanup(Kind::Redis, &prefix).await;
}

/// `claims show` lists every identity of a claim (as JSON and as text), and finds it by any.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_show_lists_every_identity_and_finds_the_claim_by_any_of_them() {
    let x = MockServer::start().await;
    x_accepts(&x, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let page = dir.path().join("p.json");
    for edit in [&same as &dyn Fn(&mut Value), &|m| moved(m, 60)] {
        std::fs::write(&page, listing(&[BAN_V_NEP], edit)).unwrap();
        let mut cmd = bot(dir.path());
        with_x(&mut cmd, &x);
        let o = cmd
            .env("STORE_PATH", &db)
            .env("SOURCES", format!("cricbuzz-json={}", page.display()))
            .args(["backfill", "--init-store"])
            .output()
            .await
            .unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
    }
    x.verify().await;
    let shown = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "show", "cricbuzz:87752", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&shown);
    assert!(shown.status.success(), "{stderr}");
    let row: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(row["key"], "2024-06-16_bangladesh-v-nepal_37th-match");
    assert_eq!(
        row["claim"]["aliases"],
        serde_json::json!([
            "cricbuzz:87752",
            "key:2024-06-16_bangladesh-v-nepal_37th-match",
            "fixture:2024-06-16_bangladesh-v-nepal",
            "key:2024-06-17_bangladesh-v-nepal_37th-match",
            "fixture:2024-06-17_bangladesh-v-nepal"
        ])
    );
    // As people read it, found by the key the edited listing gave it.
    let shown = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "show", "key:2024-06-17_bangladesh-v-nepal_37th-match"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&shown);
    assert!(shown.status.success(), "{stderr}");
    assert!(
        stdout.ends_with(
            "identities: cricbuzz:87752, key:2024-06-16_bangladesh-v-nepal_37th-match, \
             fixture:2024-06-16_bangladesh-v-nepal, key:2024-06-17_bangladesh-v-nepal_37th-match, \
             fixture:2024-06-17_bangladesh-v-nepal\n\
             fixture:2024-06-16_bangladesh-v-nepal lists 2024-06-16_bangladesh-v-nepal_37th-match (this claim): \
             starts 2024-06-16 23:30 UTC, 20-over, match 37, group D\n\
             fixture:2024-06-17_bangladesh-v-nepal lists 2024-06-16_bangladesh-v-nepal_37th-match (this claim): \
             starts 2024-06-17 00:30 UTC, 20-over, match 37, group D\n"
        ),
        "{stdout}"
    );
    // The result's claims hold nothing yet: the answer says which claims were read.
    let shown = bot(dir.path())
        .env("STORE_PATH", &db)
        .args(["claims", "show", "cricbuzz:87752", "--event", "result"])
        .output()
        .await
        .unwrap();
    let (_, stderr) = text(&shown);
    assert_eq!(shown.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "no claim on cricbuzz:87752 (as a match key or an identity) among the result claims (without --event: the announcement's)"
        ),
        "{stderr}"
    );
}
