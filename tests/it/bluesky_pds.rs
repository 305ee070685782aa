//! The bot against the reference Bluesky server (issue 34, item 6): the real binary posting the
//! saved Cricbuzz page's four upcoming matches to `@atproto/pds` on loopback (see `pds.rs`),
//! then what the server holds, read with `com.atproto.repo.listRecords`: one record per match,
//! its exact text (the link shown by its label), link facet and link card, its record key; three processes racing on one store; and an
//! answer lost on the way back (a loopback proxy in front of the server), settled by
//! `claims reconcile` without a second record.

use crate::cli::{bot, page_server, start, text, wait_all, CRICBUZZ_KEYS};
use crate::helpers::{cricbuzz_matches, redis_url, template, unique_prefix, Prefix};
use crate::lossy_proxy::{LossyProxy, Spoil};
use crate::pds::{self, Account, Pds};
use cricket_announcer::cricket::MatchKey;
use cricket_announcer::post::bluesky::{record_key, tid_time};
use cricket_announcer::post::{link_label, Card, LengthRule, SinkKind};
use cricket_announcer::zone::Zone;
use std::collections::BTreeMap;
use wiremock::MockServer;

/// The channel every test posts on.
const CHANNEL: &str = "sky";

/// One deployment of the bot: a channels file with one Bluesky channel on `service` (the server,
/// or a proxy in front of it) for `account`, claims in Redis under a prefix of its own, the
/// saved page served on loopback.
struct Deployment {
    account: Account,
    dir: tempfile::TempDir,
    prefix: Prefix,
    source: String,
    _site: MockServer,
}

impl Deployment {
    async fn new(pds: &Pds, name: &str, service: &str) -> Deployment {
        Deployment::with(pds, name, service, "").await
    }

    /// [`Deployment::new`] with `extra` lines in its channel's table.
    async fn with(pds: &Pds, name: &str, service: &str, extra: &str) -> Deployment {
        let site = page_server().await;
        let account = pds
            .account(&format!("{name}{}", &uuid::Uuid::new_v4().simple().to_string()[..8]))
            .await;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("channels.toml"),
            format!(
                "[[channel]]\nname = \"{CHANNEL}\"\nsink = \"bluesky\"\nservice = \"{service}\"\nhandle = \"{}\"\napp_password_env = \"BLUESKY_APP_PASSWORD\"\n{extra}",
                account.handle
            ),
        )
        .unwrap();
        Deployment {
            account,
            dir,
            prefix: unique_prefix(),
            source: format!("{}/cricket-match/live-scores", site.uri()),
            _site: site,
        }
    }

    /// The bot running `args` as instance `instance`.
    fn bot(&self, instance: &str, args: &[&str]) -> tokio::process::Command {
        let mut cmd = bot(self.dir.path());
        cmd.env("CHANNELS_FILE", self.dir.path().join("channels.toml"))
            .env("BLUESKY_APP_PASSWORD", &self.account.app_password)
            .env("REDIS_URL", redis_url())
            .env("KEY_PREFIX", &*self.prefix)
            .env("INSTANCE_ID", instance)
            .env("POST_TIMEOUT_SECS", "10")
            .env("SOURCES", &self.source)
            .args(args);
        cmd
    }

    /// `args` run to the end: its output.
    async fn run(&self, args: &[&str]) -> std::process::Output {
        self.bot("bot-1", args).output().await.unwrap()
    }

    /// `backfill --init-store`, which must exit with `code` and print the channel's counts
    /// `counts` (`posted 4, skipped 0, failed 0`): its log.
    async fn backfill(&self, code: i32, counts: &str) -> String {
        let o = self.run(&["backfill", "--init-store"]).await;
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{stdout}{stderr}");
        assert!(stdout.contains(&format!("{CHANNEL}: {counts}")), "{stdout}");
        stderr
    }

    /// Each claim's record, by match key (`claims list --json`).
    async fn claims(&self) -> BTreeMap<String, serde_json::Value> {
        let o = self.run(&["claims", "list", "--json"]).await;
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        text(&o)
            .0
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|r| (r["key"].as_str().unwrap().to_string(), r["claim"].clone()))
            .collect()
    }
}

/// Each upcoming match of the saved page: its key, the post the bot makes of it on Bluesky
/// (the built-in template, fitted to 300 graphemes as shown, the match's own link) and its card.
fn expected_posts() -> BTreeMap<String, (String, Card)> {
    let template = template();
    cricbuzz_matches()
        .iter()
        .map(|m| (MatchKey::for_match(m).to_string(), m))
        .filter(|(k, _)| CRICBUZZ_KEYS.contains(&k.as_str()))
        .map(|(k, m)| {
            let text = template
                .render_within(m, &m.url, SinkKind::Bluesky, LengthRule::Bluesky)
                .unwrap();
            (k, (text, Card::of(m, Zone::default())))
        })
        .collect()
}

/// The record the bot should have written for the match of `card` with `text`: the text with
/// its link shown by its label, one link facet on the label's UTF-8 bytes whose URI is the full
/// link, the channel's language (not set: English), the match's link card, and the `createdAt`
/// the server holds (checked apart).
fn expected_record(text: &str, card: &Card, created_at: &serde_json::Value) -> serde_json::Value {
    let link = text.lines().last().unwrap();
    assert!(link.starts_with("https://www.cricbuzz.com/"), "{text}");
    let label = link_label(link);
    assert_eq!(label, "cricbuzz.com/live-cricket-s…");
    let shown = text.replace(link, &label);
    let start = shown.rfind(&label).unwrap();
    serde_json::json!({
        "$type": pds::POSTS,
        "text": shown,
        "createdAt": created_at,
        "langs": ["en"],
        "facets": [{
            "index": {"byteStart": start, "byteEnd": start + label.len()},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": link}],
        }],
        "embed": {
            "$type": "app.bsky.embed.external",
            "external": {"uri": card.page.as_str(), "title": card.title, "description": card.summary()},
        },
    })
}

/// The account's posts by match key, each record at the key the bot derives from its match's
/// claim on [`CHANNEL`] (a TID of the claim's time) and records in the claim (`dedupe_key`).
async fn posts_by_match(pds: &Pds, d: &Deployment) -> BTreeMap<String, (String, serde_json::Value)> {
    let keys: BTreeMap<String, String> = d
        .claims()
        .await
        .into_iter()
        .map(|(k, claim)| {
            let claimed_at = chrono::DateTime::parse_from_rfc3339(claim["claimed_at"].as_str().unwrap()).unwrap();
            let rkey = record_key(&MatchKey::parse(&k).unwrap(), CHANNEL, claimed_at.into());
            assert_eq!(claim["dedupe_key"], rkey.as_str(), "{k}");
            (rkey, k)
        })
        .collect();
    let mut by_match = BTreeMap::new();
    for (rkey, record) in pds.posts(&d.account).await {
        let key = keys
            .get(&rkey)
            .unwrap_or_else(|| panic!("record {rkey} is at no claim's key: {record}"));
        assert!(by_match.insert(key.clone(), (rkey, record)).is_none());
    }
    by_match
}

/// Asserts that the claim of every match is `posted`, with its record's `at://` address as its
/// post's id.
fn assert_each_posted_at_its_record(
    d: &Deployment,
    posts: &BTreeMap<String, (String, serde_json::Value)>,
    claims: &BTreeMap<String, serde_json::Value>,
) {
    assert_eq!(posts.len(), 4, "{posts:?}");
    for key in CRICBUZZ_KEYS {
        let (rkey, _) = &posts[key];
        assert_eq!(claims[key]["state"], "posted", "{key}: {}", claims[key]);
        assert_eq!(
            claims[key]["post_id"],
            format!("at://{}/{}/{rkey}", d.account.did, pds::POSTS),
            "{key}"
        );
    }
}

/// The one match whose claim `pick` picks.
fn the_one(claims: &BTreeMap<String, serde_json::Value>, pick: impl Fn(&serde_json::Value) -> bool) -> String {
    let picked: Vec<&String> = claims.iter().filter(|(_, c)| pick(c)).map(|(k, _)| k).collect();
    assert_eq!(picked.len(), 1, "{claims:?}");
    picked[0].clone()
}

/// A deployment posting through a proxy in front of the server, which spoils its first creates
/// as `how` says, one each.
async fn behind_proxy(pds: &Pds, name: &str, how: &[Spoil]) -> (LossyProxy, Deployment) {
    let proxy = LossyProxy::start(&pds.url, "/xrpc/com.atproto.repo.createRecord").await;
    let d = Deployment::new(pds, name, &proxy.url).await;
    proxy.spoil(how);
    (proxy, d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_match_is_one_record_with_its_exact_text_link_facet_and_card_at_its_record_key() {
    let Some(pds) = pds::shared("bluesky_pds::each_match_is_one_record") else {
        return;
    };
    let d = Deployment::new(pds, "posts", &pds.url).await;
    let before = chrono::Utc::now();
    d.backfill(0, "posted 4, skipped 0, failed 0").await;
    let posts = posts_by_match(pds, &d).await;
    let claims = d.claims().await;
    assert_each_posted_at_its_record(&d, &posts, &claims);
    let expected = expected_posts();
    assert_eq!(posts.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
    for (key, (text, card)) in &expected {
        let (rkey, record) = &posts[key];
        assert_eq!(*record, expected_record(text, card, &record["createdAt"]), "{key}");
        let created = chrono::DateTime::parse_from_rfc3339(record["createdAt"].as_str().unwrap()).unwrap();
        assert!(created >= before - chrono::Duration::seconds(1) && created <= chrono::Utc::now());
        // The record key's time is the claim's, to the microsecond.
        let claimed = chrono::DateTime::parse_from_rfc3339(claims[key]["claimed_at"].as_str().unwrap()).unwrap();
        assert_eq!(
            tid_time(rkey),
            chrono::DateTime::from_timestamp_micros(claimed.timestamp_micros())
        );
    }
    // listRecords lists by record key: the posts in the order their matches were claimed.
    let listed: Vec<String> = pds.posts(&d.account).await.into_iter().map(|(rkey, _)| rkey).collect();
    let mut by_claim: Vec<(chrono::DateTime<chrono::FixedOffset>, &String)> = claims
        .iter()
        .map(|(k, c)| {
            let claimed = chrono::DateTime::parse_from_rfc3339(c["claimed_at"].as_str().unwrap()).unwrap();
            (claimed, &posts[k].0)
        })
        .collect();
    by_claim.sort();
    assert_eq!(
        listed,
        by_claim.into_iter().map(|(_, rkey)| rkey.clone()).collect::<Vec<_>>()
    );
    // One match pinned as a reader sees it: the link shown by its label, whose facet is on
    // the label's UTF-8 bytes (138..168: "cricbuzz.com/live-cricket-s" and the 3-byte "…"),
    // not its characters (132..160: each emoji is one character and four bytes), the full link
    // behind it; and the match's card.
    let zim = &posts["2026-07-17_bangladesh-v-zimbabwe_2nd-t20i"].1;
    let page =
        "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026";
    assert_eq!(
        zim["text"],
        "Coming up: Zimbabwe v Bangladesh, 2nd T20I\nBangladesh tour of Zimbabwe, 2026\n📍 Queens Sports Club, Bulawayo\n\
         🕒 Fri 17 Jul, 10:30 UTC\ncricbuzz.com/live-cricket-s…"
    );
    assert_eq!(
        zim["facets"],
        serde_json::json!([{
            "index": {"byteStart": 138, "byteEnd": 168},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": page}],
        }])
    );
    assert_eq!(
        zim["embed"],
        serde_json::json!({
            "$type": "app.bsky.embed.external",
            "external": {
                "uri": page,
                "title": "Zimbabwe v Bangladesh, 2nd T20I",
                "description": "Bangladesh tour of Zimbabwe, 2026 · Queens Sports Club, Bulawayo · Fri 17 Jul, 10:30 UTC",
            },
        })
    );
}

/// A channel with `hashtags = true`: the server takes the tag facets beside the link's, each on
/// its tag's UTF-8 bytes, and keeps them as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hashtags_are_tag_facets_on_their_utf8_bytes_after_the_links_label() {
    let Some(pds) = pds::shared("bluesky_pds::hashtags_are_tag_facets") else {
        return;
    };
    let d = Deployment::with(pds, "tags", &pds.url, "hashtags = true\n").await;
    d.backfill(0, "posted 4, skipped 0, failed 0").await;
    let posts = posts_by_match(pds, &d).await;
    let zim = &posts["2026-07-17_bangladesh-v-zimbabwe_2nd-t20i"].1;
    let text = zim["text"].as_str().unwrap();
    assert!(
        text.ends_with("🕒 Fri 17 Jul, 10:30 UTC\ncricbuzz.com/live-cricket-s…\n#ZIMvBAN"),
        "{text}"
    );
    assert_eq!(&text[169..177], "#ZIMvBAN");
    assert_eq!(
        zim["facets"][1],
        serde_json::json!({
            "index": {"byteStart": 169, "byteEnd": 177},
            "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "ZIMvBAN"}],
        })
    );
    // Two tags: each its own facet, on its own bytes.
    let women = &posts["2026-07-17_durham-women-v-hampshire-women_2nd-semi-final"].1;
    let text = women["text"].as_str().unwrap();
    assert!(text.ends_with("\n#HSWvDURW #WomensT20Blast"), "{text}");
    let tags: Vec<(String, String)> = women["facets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["features"][0]["$type"] == "app.bsky.richtext.facet#tag")
        .map(|f| {
            let (a, b) = (
                f["index"]["byteStart"].as_u64().unwrap() as usize,
                f["index"]["byteEnd"].as_u64().unwrap() as usize,
            );
            (
                text[a..b].to_string(),
                f["features"][0]["tag"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tags,
        [
            ("#HSWvDURW".to_string(), "HSWvDURW".to_string()),
            ("#WomensT20Blast".to_string(), "WomensT20Blast".to_string())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_racing_on_one_store_make_one_record_per_match() {
    let Some(pds) = pds::shared("bluesky_pds::three_processes_racing") else {
        return;
    };
    let d = Deployment::new(pds, "race", &pds.url).await;
    let children = (0..3)
        .map(|i| start(&mut d.bot(&format!("replica-{i}"), &["backfill", "--init-store"])))
        .collect();
    let outputs = wait_all(children).await;
    let mut posted = 0;
    for o in &outputs {
        let (stdout, stderr) = text(o);
        assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
        posted += crate::cli::number_after(&stdout, "sky: posted ", ',').unwrap();
    }
    assert_eq!(posted, 4, "{outputs:?}");
    assert_each_posted_at_its_record(&d, &posts_by_match(pds, &d).await, &d.claims().await);
}

/// Two creates whose outcome the bot cannot know: one landed and its answer was lost, the other
/// was lost on its way. `claims reconcile` repeats both at their record keys: the first is
/// refused and read back (there already), the second made now; each said so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_whose_outcome_was_lost_are_settled_by_claims_reconcile_with_no_second_record() {
    let Some(pds) = pds::shared("bluesky_pds::creates_whose_outcome_was_lost") else {
        return;
    };
    let (proxy, d) = behind_proxy(pds, "lost", &[Spoil::LoseAnswer, Spoil::LoseRequest]).await;
    d.backfill(5, "posted 2, skipped 0, failed 2").await;
    // The server made three; the bot knows of two. Of its two unknown posts, the one the
    // server holds landed.
    let made = posts_by_match(pds, &d).await;
    assert_eq!(made.len(), 3);
    let claims = d.claims().await;
    let unknown: Vec<&String> = claims
        .iter()
        .filter(|(_, c)| c["state"] == "unknown")
        .map(|(k, _)| k)
        .collect();
    assert_eq!(unknown.len(), 2, "{claims:?}");
    let landed = the_one(&claims, |c| {
        c["state"] == "unknown" && made.values().any(|(rkey, _)| c["dedupe_key"] == rkey.as_str())
    });
    let o = d.run(&["claims", "reconcile", "--json"]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    let decisions: BTreeMap<String, serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|d| (d["key"].as_str().unwrap().to_string(), d))
        .collect();
    assert_eq!(decisions.len(), 2, "{stdout}");
    let posts = posts_by_match(pds, &d).await;
    for key in unknown {
        let (rkey, _) = &posts[key];
        let uri = format!("at://{}/{}/{rkey}", d.account.did, pds::POSTS);
        let how = if *key == landed {
            "the repeat was refused at the post's record key and the record read back: it was there already; nothing posted"
        } else {
            "the first create never landed: the repeat made the post now, once"
        };
        assert_eq!(
            decisions[key],
            serde_json::json!({"key": key, "was": "unknown", "result": "posted", "detail": uri, "how": how}),
        );
        assert!(
            stderr.lines().any(|l| l.contains("reconciled: recorded as posted")
                && l.contains(&format!("how={how}"))
                && l.contains(key.as_str())),
            "{stderr}"
        );
    }
    // No second record: four, each claim posted with its record's address.
    assert_each_posted_at_its_record(&d, &posts, &d.claims().await);
    // Five creates reached the server: three first ones (one lost on its way), two repeats.
    assert_eq!(proxy.sent.load(std::sync::atomic::Ordering::SeqCst), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_at_a_taken_record_key_is_read_back_and_counted_posted_with_its_address() {
    let Some(pds) = pds::shared("bluesky_pds::a_create_at_a_taken_record_key") else {
        return;
    };
    // A front end that sends the first create twice: the server makes the record, then answers
    // the repeat at the same record key with its 500, which is what the bot sees.
    let (proxy, d) = behind_proxy(pds, "taken", &[Spoil::SendTwice]).await;
    let stderr = d.backfill(0, "posted 4, skipped 0, failed 0").await;
    assert!(
        stderr.contains("Bluesky says this was posted before; recorded as posted"),
        "{stderr}"
    );
    let claims = d.claims().await;
    the_one(&claims, |c| {
        c["detail"].as_str().is_some_and(|d| d.contains("InternalServerError"))
    });
    // The address is the record's, kept as the post's id (not only inside the detail).
    assert_each_posted_at_its_record(&d, &posts_by_match(pds, &d).await, &claims);
    assert_eq!(proxy.sent.load(std::sync::atomic::Ordering::SeqCst), 5);
}
