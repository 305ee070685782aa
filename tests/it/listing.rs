//! `claims list` over a large store (issue 36): the records are read a page at a time, each
//! page filtered as it is read, and the reading stops when `--limit` is reached or the reader
//! closes stdout (`| head -1`), quietly.

use crate::backlog::command_calls;
use crate::cli::{bot, text};
use crate::helpers::{claim_key, Expect, OwnRedis};
use cricket_announcer::claim::{ClaimStore, RedisClaims, LIST_PAGE};
use cricket_announcer::cricket::MatchKey;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How many claims the store holds: six pages.
const CLAIMS: usize = 6 * LIST_PAGE;

/// A Redis of the test's own holding [`CLAIMS`] claims under `l:` (copies of one claimed
/// record under keys of their own), one of them `unknown`.
async fn store_of_many() -> OwnRedis {
    let redis = OwnRedis::start();
    let store = ClaimStore::Redis(RedisClaims::connect(&redis.url(), "l:", "lister").await.unwrap());
    let first = MatchKey::parse("2026-07-17_a0-v-b0").unwrap();
    let day = Duration::from_secs(86_400);
    let _ = claim_key(&store, &first, "A0 v B0", day, day).await.won();
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let record: String = redis::cmd("GET")
        .arg(format!("l:match:{first}"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut pipe = redis::pipe();
    for i in 1..CLAIMS {
        let record = if i == CLAIMS - 1 {
            record.replace("\"claimed\"", "\"unknown\"")
        } else {
            record.clone()
        };
        pipe.cmd("SET")
            .arg(format!("l:match:2026-07-17_a{i}-v-b{i}"))
            .arg(record)
            .arg("EX")
            .arg(86_400)
            .ignore();
    }
    let () = pipe.query_async(&mut conn).await.unwrap();
    redis
}

/// `claims list` with `args` on the Redis at `url`.
fn claims_list(url: &str, args: &[&str]) -> tokio::process::Command {
    let dir = std::env::temp_dir();
    let mut cmd = bot(&dir);
    cmd.env("REDIS_URL", url)
        .env("KEY_PREFIX", "l:")
        .args(["claims", "list"])
        .args(args);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_list_piped_into_head_stops_reading_and_exits_quietly() {
    let redis = store_of_many().await;
    let url = redis.url();
    let before = command_calls(&url, &["get"]).await[0];
    let mut child = claims_list(&url, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first line, then the pipe closed, as `| head -1` does.
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let header = lines.next_line().await.unwrap().unwrap();
    assert!(header.starts_with("MATCH KEY"), "{header}");
    drop(lines);
    let o = child.wait_with_output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        text(&o).1.lines().filter(|l| l.contains("ERROR")).count(),
        0,
        "{:?}",
        text(&o)
    );
    // At most the page printed and the one whose printing found the pipe closed: not six.
    let read = command_calls(&url, &["get"]).await[0] - before;
    assert!(read <= 2 * LIST_PAGE as u64, "{read} records read");

    // The whole list, for comparison: every record, once.
    let before = command_calls(&url, &["get"]).await[0];
    let all = claims_list(&url, &[]).output().await.unwrap();
    assert_eq!(text(&all).0.lines().count(), CLAIMS + 1);
    assert_eq!(command_calls(&url, &["get"]).await[0] - before, CLAIMS as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_list_filters_as_it_reads_and_stops_at_its_limit() {
    let redis = store_of_many().await;
    let url = redis.url();
    // --limit 3: one page read, three rows, in key order.
    let before = command_calls(&url, &["get"]).await[0];
    let o = claims_list(&url, &["--limit", "3", "--json"]).output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let keys: Vec<String> = crate::helpers::listed(&text(&o).0)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        keys,
        ["2026-07-17_a0-v-b0", "2026-07-17_a1-v-b1", "2026-07-17_a10-v-b10"]
    );
    assert_eq!(command_calls(&url, &["get"]).await[0] - before, LIST_PAGE as u64);
    // --state unknown: the one unknown claim, found page by page.
    let o = claims_list(&url, &["--state", "unknown"]).output().await.unwrap();
    let (table, _) = text(&o);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{table}");
    assert!(
        rows[0].starts_with(&format!("2026-07-17_a{0}-v-b{0}  ", CLAIMS - 1)),
        "{table}"
    );
    // --event result: the results' namespace alone, empty here.
    let o = claims_list(&url, &["--event", "result"]).output().await.unwrap();
    assert!(text(&o).0.starts_with("no claims (store"), "{:?}", text(&o));
    // The wide table lines up over every page: each column starts where its heading does.
    let o = claims_list(&url, &["--wide"]).output().await.unwrap();
    let (table, _) = text(&o);
    let header = table.lines().next().unwrap();
    for heading in ["STATE", "OWNER", "SINCE (UTC)"] {
        let at = header.find(heading).unwrap();
        for row in table.lines().skip(1) {
            assert!(
                row[..at].ends_with(' ') && !row[at..].starts_with(' '),
                "{heading} at {at}: {row}"
            );
        }
    }
}

/// A listing read page by page gives what one read of every claim gives, on every store.
async fn a_listing_page_by_page_is_the_whole_list(kind: crate::helpers::Kind) {
    let prefix = crate::helpers::unique_prefix();
    let dir = tempfile::tempdir().unwrap();
    let store = crate::helpers::store(kind, &prefix, "lister", &dir.path().join("c.db")).await;
    let day = Duration::from_secs(86_400);
    for i in [3, 1, 2] {
        let key = MatchKey::parse(&format!("2026-07-17_a{i}-v-b{i}")).unwrap();
        let _ = claim_key(&store, &key, "A v B", day, day).await.won();
    }
    let whole: Vec<String> = store.list().await.unwrap().iter().map(|c| c.key.to_string()).collect();
    let mut listing = store.listing().await.unwrap();
    assert_eq!(listing.keys().collect::<Vec<_>>(), whole);
    let mut paged = Vec::new();
    while let Some(page) = listing.next_page().await.unwrap() {
        paged.extend(
            page.into_iter()
                .map(|c| (c.key.to_string(), c.claim.owner, c.ttl.is_some())),
        );
    }
    let want: Vec<(String, String, bool)> = whole.iter().map(|k| (k.clone(), "lister".into(), true)).collect();
    assert_eq!(paged, want);
    assert_eq!(whole.len(), 3);
    crate::helpers::cleanup(kind, &prefix).await;
}

#[tokio::test]
async fn a_listing_on_redis_page_by_page_is_the_whole_list() {
    a_listing_page_by_page_is_the_whole_list(crate::helpers::Kind::Redis).await;
}

#[tokio::test]
async fn a_listing_on_the_embedded_store_page_by_page_is_the_whole_list() {
    a_listing_page_by_page_is_the_whole_list(crate::helpers::Kind::Embedded).await;
}

#[tokio::test]
async fn a_listing_on_postgres_page_by_page_is_the_whole_list() {
    a_listing_page_by_page_is_the_whole_list(crate::helpers::Kind::Postgres).await;
}
