//! The cycle refreshes what changed (issue 36): a new match costs its own claim and its own
//! refresh, nothing for the matches already held; each held key's TTL is set again once per
//! TTL / `REFRESHES_PER_TTL`, a slice of the keys per cycle; and a listed match's TTL never
//! lapses.

use crate::backlog::{listing, LISTING};
use crate::helpers::{self, OwnRedis};
use crate::sites::{cricbuzz_page, Edit};
use chrono::{DateTime, TimeDelta, Utc};
use clap::Parser;
use cricket_announcer::announcer::{ClaimPolicy, Memory, Outcome, REFRESHES_PER_TTL};
use cricket_announcer::app::App;
use cricket_announcer::cli::Cli;
use cricket_announcer::clock::Clock;
use cricket_announcer::config::{Config, Invocation, Needs};
use cricket_announcer::cricket::Sighting;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The default claim TTL, as the bot is run with (`CLAIM_TTL_SECS`).
const TTL: Duration = Duration::from_secs(864_000);

/// Every command `INFO commandstats` counts on the Redis at `url`, by name, with its calls.
async fn commands(url: &str) -> BTreeMap<String, u64> {
    crate::helpers::command_stats(url).await
}

/// The commands sent between `before` and `after` (the `INFO` that read them left out).
fn sent(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(name, _)| *name != "info")
        .map(|(name, n)| (name.clone(), n - before.get(name).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// A page of listings `0..n` (each `day` days ahead of the saved listing: `1 + i`).
fn page(n: usize) -> String {
    let listings: Vec<_> = (0..n).map(|i| listing(i, 1 + i as i64)).collect();
    let picks: Vec<(&str, Edit<'_>)> = listings.iter().map(|l| (LISTING, l as Edit<'_>)).collect();
    cricbuzz_page(&picks)
}

/// A bot on the Redis at `url` reading the page at `file`, posting to `x`, judging time by
/// `clock` (the refresh instants with it).
async fn bot(url: &str, file: &Path, x: &wiremock::MockServer, clock: &Clock) -> App {
    let store = [format!("--redis-url={url}")];
    let sources = [format!("cricbuzz-json={}", file.display())];
    let flags = ["--posts-per-minute", "1000", "--posts-per-day", "100000"];
    let args = helpers::live_args(&store, "r:", &sources, x, 20, &flags, "run");
    let cli = Cli::try_parse_from(args).unwrap();
    let config = Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::Posting)).unwrap();
    App::build_on(&config, helpers::Buffer::default().output(), clock.clone())
        .await
        .unwrap()
}

/// Every key on the Redis at `url` that expires (claims and identities; the marker is
/// refreshed on its own), with its TTL in ms.
async fn ttls(url: &str) -> BTreeMap<String, i64> {
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("r:*").query_async(&mut conn).await.unwrap();
    let keys: Vec<String> = keys.into_iter().filter(|k| !k.starts_with("r:store:")).collect();
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("PTTL").arg(k);
    }
    let ttls: Vec<i64> = pipe.query_async(&mut conn).await.unwrap();
    keys.into_iter().zip(ttls).collect()
}

/// Sets every key of `keys` to expire in `ttl` (by hand: a key the next cycle refreshes is
/// then told apart by its TTL).
async fn expire_all(url: &str, keys: impl Iterator<Item = &String>, ttl: Duration) {
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut pipe = redis::pipe();
    for k in keys {
        pipe.cmd("PEXPIRE").arg(k).arg(ttl.as_millis() as u64).ignore();
    }
    let () = pipe.query_async(&mut conn).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_match_among_held_ones_costs_its_own_claim_and_refresh_and_nothing_for_the_others() {
    // Its own server: the command counts are of this test's bot alone.
    let redis = OwnRedis::start();
    let url = redis.url();
    let x = helpers::x_accepting_all().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cricbuzz.json");
    const HELD: usize = 300;
    std::fs::write(&file, page(HELD)).unwrap();
    // A clock of its own: no refresh instant passes between the cycles below.
    let clock = Clock::manual(Utc::now());
    let bot = bot(&url, &file, &x, &clock).await;
    let seeded = bot.seed(None).await.unwrap();
    assert_eq!(seeded.seeded, HELD, "{seeded:?}");
    let held_keys = ttls(&url).await;
    // Each held match: its claim, its Cricbuzz id and its fixture's list.
    assert_eq!(held_keys.len(), 3 * HELD);

    // The process's first cycle: every held key's TTL is set again (it cannot know how long
    // they went without), one EXPIRE per key, in pipelines of 1,000; and, as every cycle, the
    // first-start marker's.
    let before = commands(&url).await;
    let first = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((first.posted, first.skipped), (0, HELD), "{first:?}");
    let first_sent = sent(&before, &commands(&url).await);
    assert_eq!(first_sent.get("expire"), Some(&(3 * HELD as u64 + 1)), "{first_sent:?}");
    assert_eq!(first_sent.get("mget"), Some(&1), "{first_sent:?}");

    // A steady cycle: the marker's refresh and one read; no claim's refresh (no refresh
    // instant passed).
    let before = commands(&url).await;
    let steady = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((steady.posted, steady.skipped), (0, HELD), "{steady:?}");
    let steady_sent = sent(&before, &commands(&url).await);
    let named =
        |pairs: &[(&str, u64)]| -> BTreeMap<String, u64> { pairs.iter().map(|(n, c)| (n.to_string(), *c)).collect() };
    assert_eq!(steady_sent, named(&[("expire", 1), ("mget", 1)]));

    // One new match among them: its own refresh (its key, its id and its fixture's list: 3
    // EXPIREs, of keys not there yet), its claim and its post's record; nothing for the 300
    // others.
    std::fs::write(&file, page(HELD + 1)).unwrap();
    let before = commands(&url).await;
    let new = bot.cycle(&CancellationToken::new()).await;
    assert_eq!((new.posted, new.skipped), (1, HELD), "{new:?}");
    let new_sent = sent(&before, &commands(&url).await);
    let mut want = steady_sent.clone();
    *want.entry("expire".into()).or_default() += 3;
    for (name, n) in claim_and_post_commands() {
        *want.entry(name.into()).or_default() += n;
    }
    assert_eq!(new_sent, want, "steady: {steady_sent:?}");
    assert_eq!(helpers::x_texts(&x).await.len(), 1);
}

/// The commands one new match's claim and post send besides the batch read: two scripts (the
/// claim, and the post's record), and the calls the claim script makes inside (Redis counts
/// them too): its reads of the match's identities, of its fixture's lists and of the marker,
/// and its writes of the claim, its identities and its fixture's list; the claim's entry in
/// the index of unsettled claims (`ZADD`), taken out when the post is recorded (`ZREM`). The
/// same whatever the number of matches held.
fn claim_and_post_commands() -> [(&'static str, u64); 6] {
    [
        ("evalsha", 2),
        ("exists", 1),
        ("get", 15),
        ("set", 4),
        ("zadd", 1),
        ("zrem", 1),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_held_key_is_refreshed_once_per_share_of_the_ttl_a_slice_per_cycle() {
    let redis = OwnRedis::start();
    let url = redis.url();
    let x = helpers::x_accepting_all().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cricbuzz.json");
    const HELD: usize = 240;
    std::fs::write(&file, page(HELD)).unwrap();
    let start = Utc::now();
    let clock = Clock::manual(start);
    let bot = bot(&url, &file, &x, &clock).await;
    bot.seed(None).await.unwrap();
    // The first cycle refreshes all; then cycles a twelfth of the period apart, for two
    // periods and a bit.
    let _ = bot.cycle(&CancellationToken::new()).await;
    let every = TTL / REFRESHES_PER_TTL;
    let step = every / 12;
    let long = TTL * 10;
    let keys: Vec<String> = ttls(&url).await.into_keys().collect();
    let mut refreshed: BTreeMap<String, Vec<DateTime<Utc>>> = keys.iter().map(|k| (k.clone(), vec![start])).collect();
    let mut slices = Vec::new();
    for n in 1..=30 {
        // Every key made long by hand: one the cycle refreshes comes back to the policy TTL.
        expire_all(&url, keys.iter(), long).await;
        let now = start + TimeDelta::from_std(step * n).unwrap();
        clock.sleep_until(now).await;
        let cycle = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(cycle.skipped, HELD, "{cycle:?}");
        let mut slice = 0;
        for (k, ttl) in ttls(&url).await {
            assert!(ttl > 0, "{k} expires");
            if Duration::from_millis(ttl as u64) <= TTL {
                refreshed.get_mut(&k).unwrap().push(now);
                slice += 1;
            }
        }
        slices.push(slice);
    }
    // Each key refreshed at least once per period plus one step (the time between two
    // cycles), and no more often than once per period less a step.
    let bound = TimeDelta::from_std(every + step).unwrap();
    for (k, times) in &refreshed {
        let gaps: Vec<TimeDelta> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| *g <= bound), "{k}: {gaps:?}");
        // (The first refresh after the first cycle's comes at the key's own instant.)
        assert!(
            gaps.iter()
                .skip(1)
                .all(|g| *g >= TimeDelta::from_std(every - step).unwrap()),
            "{k}: {gaps:?}"
        );
        let last = *times.last().unwrap();
        assert!(start + TimeDelta::from_std(step * 30).unwrap() - last < bound, "{k}");
    }
    // A slice per cycle: a twelfth of the keys on average, never the lot.
    let keys_n = keys.len();
    let total: usize = slices.iter().sum();
    assert!(slices.iter().all(|s| *s < keys_n / 4), "{slices:?} of {keys_n}");
    assert!(total >= keys_n * 2, "{slices:?}");
}

/// With a policy TTL of a few seconds and look-ups every 200 ms, for twice the TTL, no held
/// claim or identity of a listed match ever expires: the refreshes come well before expiry.
#[tokio::test]
async fn a_listed_matchs_claim_never_expires_between_refreshes() {
    let x = helpers::x_accepting_all().await;
    let prefix = helpers::unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let s = helpers::store(helpers::Kind::Redis, &prefix, "us", &dir.path().join("c.db")).await;
    let ttl = Duration::from_secs(3);
    let announcer = helpers::live_announcer_with(s, &x, ClaimPolicy::new(ttl, 3, Duration::from_secs(5)));
    let sightings: Vec<Sighting> = helpers::cricbuzz_matches().into_iter().map(Sighting::new).collect();
    let refs: Vec<&Sighting> = sightings.iter().collect();
    let mut memory = Memory::default();
    let mut posted = 0;
    for s in &sightings {
        if let Outcome::Posted(_) = announcer.announce(&mut memory, s, None).await.unwrap() {
            posted += 1;
        }
    }
    assert!(posted >= 3, "{posted}");
    let held = |found: &[Option<cricket_announcer::claim::Holder>]| found.iter().filter(|h| h.is_some()).count();
    let first = held(&announcer.holders_of(&mut memory, &refs).await.unwrap());
    let keys = helpers::keys(&prefix).await;
    let started = std::time::Instant::now();
    while started.elapsed() < ttl * 2 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(held(&announcer.holders_of(&mut memory, &refs).await.unwrap()), first);
        assert_eq!(helpers::keys(&prefix).await, keys, "no claim or identity expired");
    }
}
