//! A backlog never starves a new match: within the flood cap, a channel's due matches go
//! soonest first, so a match listed behind a backlog of later ones is posted in the next cycle
//! (issue 36).

use crate::helpers::{live_app_with, redis_url, unique_prefix};
use crate::sites::{cricbuzz_page, Edit};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Cyprus v Estonia, 1st T20I, on the saved Cricbuzz API page: each listing below is this one,
/// retold with sides, id and start of its own.
const LISTING: &str = "96744";
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

/// Listing `i`: `<word> Hawks v <word> Owls`, its own id, starting `day` days after the saved
/// listing.
fn listing(i: usize, day: i64) -> impl Fn(&mut Value) {
    move |m: &mut Value| {
        let word = SIDES[i];
        m["matchId"] = (700_000 + i).into();
        m["team1"]["teamName"] = format!("{word} Hawks").into();
        m["team1"]["teamSName"] = format!("{}H", &word[..2].to_uppercase()).into();
        m["team2"]["teamName"] = format!("{word} Owls").into();
        m["team2"]["teamSName"] = format!("{}O", &word[..2].to_uppercase()).into();
        m["startDate"] = (START_MS + day * DAY_MS).to_string().into();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_listed_behind_a_backlog_of_later_ones_is_posted_in_the_next_cycle() {
    let x = crate::helpers::x_accepting_all().await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    // A backlog of twenty, ten to twenty-nine days ahead, listed latest first.
    let backlog: Vec<_> = (0..20).map(|i| listing(i, 29 - i as i64)).collect();
    let new = listing(20, 1);
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
    assert_eq!((first.posted, first.deferred), (5, 15), "{first:?}");
    // The soonest five of the backlog, soonest first: days 10 to 14 (listings 19 down to 15).
    let texts = crate::helpers::x_texts(&x).await;
    for (post, i) in texts.iter().zip([19, 18, 17, 16, 15]) {
        assert!(post.contains(&format!("{} Hawks", SIDES[i])), "{texts:#?}");
    }
    // A match a day ahead appears, listed last: it is the next cycle's first post.
    std::fs::write(&file, page(true)).unwrap();
    let second = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((second.posted, second.skipped), (5, 5), "{second:?}");
    let texts = crate::helpers::x_texts(&x).await;
    assert!(
        texts[5].starts_with("Coming up: Wigeon Hawks v Wigeon Owls"),
        "{texts:#?}"
    );
    crate::helpers::cleanup(crate::helpers::Kind::Redis, &prefix).await;
}
