//! A backlog never starves a new match: within the flood cap, a channel's due matches go
//! soonest first, so a match listed behind a backlog of later ones is posted in the next cycle
//! (issue 36).

use crate::helpers::{live_app_with, redis_url, unique_prefix};
use crate::sites::{cricbuzz_page, Edit};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Cyprus v Estonia, 1st T20I, on the saved Cricbuzz API page: each listing below is this one,
/// retold with sides, id and start of its own.
pub(crate) const LISTING: &str = "96744";
/// Its start, 2024-06-17 05:30 UTC, in ms.
const START_MS: i64 = 1_718_602_200_000;
const DAY_MS: i64 = 86_400_000;
/// Words for the sides' names (letters only: "B1" would be a slot code, never a team).
const SIDES: [&str; 21] = [
    "Albatross",
    "Bittern",
    "Curlew",
    "Dunlin",
    "Egret",
    "Fulmar",
    "Gannet",
    "Heron",
    "Ibis",
    "Jackdaw",
    "Kestrel",
    "Lapwing",
    "Merlin",
    "Nightjar",
    "Osprey",
    "Plover",
    "Quail",
    "Redshank",
    "Siskin",
    "Tern",
    "Wigeon",
];

/// The name listing `i` gives its sides before `Hawks` and `Owls`: one word below 21, two or
/// three words of [`SIDES`] above, so that every listing up to 9,260 is a match of its own.
pub(crate) fn side(i: usize) -> String {
    let n = SIDES.len();
    let mut words = vec![SIDES[i % n]];
    if i >= n {
        words.push(SIDES[(i / n) % n]);
    }
    if i >= n * n {
        words.push(SIDES[i / (n * n)]);
    }
    words.join(" ")
}

/// Listing `i`: `<side> Hawks v <side> Owls` (see [`side`]), its own id, starting `day` days
/// after the saved listing.
pub(crate) fn listing(i: usize, day: i64) -> impl Fn(&mut Value) {
    move |m: &mut Value| {
        let word = side(i);
        // Short names of letters alone: one per word of the side's name.
        let short: String = word.split(' ').map(|w| &w[..1]).collect();
        m["matchId"] = (700_000 + i).into();
        m["team1"]["teamName"] = format!("{word} Hawks").into();
        m["team1"]["teamSName"] = format!("{short}H").into();
        m["team2"]["teamName"] = format!("{word} Owls").into();
        m["team2"]["teamSName"] = format!("{short}O").into();
        m["startDate"] = (START_MS + day * DAY_MS).to_string().into();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_listed_behind_a_backlog_of_later_ones_is_posted_in_the_next_cycle() {
    let x = crate::helpers::x_accepting_all().await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    // A backlog of a thousand, two to 1,001 days ahead, listed latest first.
    const BACKLOG: usize = 1_000;
    let backlog: Vec<_> = (0..BACKLOG).map(|i| listing(i, 1_001 - i as i64)).collect();
    let new = listing(BACKLOG, 1);
    let page = |with_new: bool| {
        let mut picks: Vec<(&str, Edit<'_>)> = backlog.iter().map(|l| (LISTING, l as Edit<'_>)).collect();
        if with_new {
            picks.push((LISTING, &new));
        }
        cricbuzz_page(&picks)
    };
    let file = dir.path().join("cricbuzz.json");
    std::fs::write(&file, page(false)).unwrap();
    let source = format!("cricbuzz-json={}", file.display());
    let store = [format!("--redis-url={}", redis_url())];
    // The default flood cap, five a cycle; paced above it.
    let bot = live_app_with(&store, &prefix, &[source], &x, 5, &["--posts-per-minute", "100"])
        .await
        .unwrap();
    bot.init_store().await.unwrap();
    let first = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((first.posted, first.deferred), (5, BACKLOG - 5), "{first:?}");
    // The soonest five of the backlog, soonest first: days 2 to 6 (listings 999 down to 995).
    let texts = crate::helpers::x_texts(&x).await;
    for (post, i) in texts.iter().zip([999, 998, 997, 996, 995]) {
        assert!(post.contains(&format!("{} Hawks v", side(i))), "{texts:#?}");
    }
    // A match a day ahead appears, listed last: it is the next cycle's first post.
    std::fs::write(&file, page(true)).unwrap();
    let second = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((second.posted, second.skipped), (5, 5), "{second:?}");
    let texts = crate::helpers::x_texts(&x).await;
    let want = format!("Coming up: {0} Hawks v {0} Owls", side(BACKLOG));
    assert!(texts[5].starts_with(&want), "{want}: {texts:#?}");
    crate::helpers::cleanup(crate::helpers::Kind::Redis, &prefix).await;
}

/// The calls `INFO commandstats` counts for each of `commands` on the Redis at `url` (0 for one
/// never called).
pub(crate) async fn command_calls(url: &str, commands: &[&str]) -> Vec<u64> {
    let stats = crate::helpers::command_stats(url).await;
    commands.iter().map(|c| stats.get(*c).copied().unwrap_or(0)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_cycle_claims_nothing_it_cannot_post() {
    use crate::helpers::OwnRedis;
    // Its own server: the command counts are of this test's bot alone.
    let redis = OwnRedis::start();
    let x = crate::helpers::x_accepting_all().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cricbuzz.json");
    let listings: Vec<_> = (0..8).map(|i| listing(i, 1 + i as i64)).collect();
    let picks: Vec<(&str, Edit<'_>)> = listings.iter().map(|l| (LISTING, l as Edit<'_>)).collect();
    std::fs::write(&file, cricbuzz_page(&picks)).unwrap();
    let source = format!("cricbuzz-json={}", file.display());
    let store = [format!("--redis-url={}", redis.url())];
    // Three posts a day, five a cycle: the pace, not the cap, stops the first cycle.
    let bot = live_app_with(&store, "p:", &[source], &x, 5, &["--posts-per-day", "3"])
        .await
        .unwrap();
    bot.init_store().await.unwrap();
    // The claim step (and a release) are scripts: EVALSHA (EVAL the first time a script runs).
    let scripts = ["evalsha", "eval"];
    let first = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((first.posted, first.deferred), (3, 5), "{first:?}");
    let before = command_calls(&redis.url(), &scripts).await;
    let keys_before = claim_keys(&redis.url()).await;
    // The day's pace is spent: the next cycle defers every match, and claims none of them.
    let second = bot.cycle(&CancellationToken::new()).await;
    assert_eq!(
        (second.posted, second.deferred, second.skipped),
        (0, 5, 3),
        "{second:?}"
    );
    assert_eq!(
        command_calls(&redis.url(), &scripts).await,
        before,
        "no claim (and no release) in a cycle the pace stops"
    );
    assert_eq!(claim_keys(&redis.url()).await, keys_before);
    assert_eq!(crate::helpers::x_texts(&x).await.len(), 3);
}

/// The names of every key on the Redis at `url`, sorted.
async fn claim_keys(url: &str) -> Vec<String> {
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut conn).await.unwrap();
    keys.sort();
    keys
}
