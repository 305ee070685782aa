//! Each sink against a real HTTP server on loopback (wiremock) answering as the platform's
//! documentation says: the exact request on success (headers, body, the Mastodon
//! Idempotency-Key, the Bluesky record key and facets), each documented error and the verdict it
//! proves, a timeout after the request left (unknown), a refused connection (not posted), and rate
//! limits read from the platform's own headers or body. Claims live in an embedded store in a
//! temporary directory (removed with it); nothing is written to Redis or PostgreSQL.

use crate::helpers::{self, free_port, zim_v_ban};
use chrono::{DateTime, Utc};
use cricket_announcer::claim::ClaimToken;
use cricket_announcer::post::bluesky::{is_valid_tid, record_key, tid_time};
use cricket_announcer::post::mastodon::{idempotency_key, Visibility};
use cricket_announcer::post::telegram::ChatId;
use cricket_announcer::post::{
    Card, LengthRule, Post, RateLimits, Receipt, Sink, SinkError, SinkKind, Verdict, DISCORD_LENGTH,
};
use cricket_announcer::template::SinkLimit;
use cricket_announcer::zone::Zone;
use std::time::Duration;
use url::Url;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// The post every test sends: a line of text and the match's link.
const TEXT: &str = "Coming up: Zimbabwe 🇿🇼 v Bangladesh, 2nd T20I\nhttps://www.cricbuzz.com/live-cricket-scores/158062";

/// [`TEXT`] with the hashtags line a channel with `hashtags = true` gets.
const TAGGED: &str =
    "Coming up: Zimbabwe 🇿🇼 v Bangladesh, 2nd T20I\nhttps://www.cricbuzz.com/live-cricket-scores/158062\n#ZIMvBAN #T20I";

/// A won claim on Zimbabwe v Bangladesh, in a store that goes with the directory.
async fn won() -> (ClaimToken, tempfile::TempDir) {
    helpers::won_zim_v_ban("sinks-test").await
}

fn base(server: &MockServer) -> Url {
    Url::parse(&server.uri()).unwrap()
}

/// A base URL where nothing listens.
fn closed() -> Url {
    Url::parse(&format!("http://127.0.0.1:{}/", free_port())).unwrap()
}

/// Short enough that a delayed answer is a timeout; the connect bound stays generous.
const QUICK: Duration = Duration::from_millis(500);
const CONNECT: Duration = Duration::from_secs(2);
const NORMAL: Duration = Duration::from_secs(5);

/// The classification of a failure: (verdict, halts the channel, rate limited).
fn class(e: &SinkError) -> (Verdict, bool, bool) {
    (e.verdict(), e.halts_channel(), e.is_rate_limited())
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn header_of(r: &Request, name: &str) -> String {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn epoch(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(secs, 0).unwrap()
}

/// True when `t` is within `secs` ± 2 s from now (for resets given as "seconds from now").
fn about_from_now(t: Option<DateTime<Utc>>, secs: i64) -> bool {
    let Some(t) = t else { return false };
    let expected = Utc::now() + chrono::Duration::seconds(secs);
    (t - expected).num_seconds().abs() <= 2
}

// ---- Mastodon ----

/// What every sink proves when no answer comes back: `make`'s client for `server`, whose POST
/// to `post_path` answers `answer` 5 s late (after the client's [`QUICK`] timeout), fails with
/// no answer (unknown: the request left, and reached the server once); its client for a closed
/// port fails as not posted. Returns the two errors, for each sink's own checks.
async fn late_is_unknown_and_refused_is_not_posted(
    server: &MockServer,
    post_path: &str,
    answer: ResponseTemplate,
    make: impl Fn(&Url, Duration) -> Sink,
) -> (SinkError, SinkError) {
    Mock::given(method("POST"))
        .and(path(post_path))
        .respond_with(answer.set_delay(Duration::from_secs(5)))
        .expect(1)
        .mount(server)
        .await;
    let (token, _dir) = won().await;
    let late = make(&base(server), QUICK).post(TEXT, &token).await.unwrap_err();
    assert!(matches!(late, SinkError::NoAnswer { .. }), "{late}");
    assert_eq!(class(&late), (Verdict::Unknown, false, false), "{late}");
    let refused = make(&closed(), NORMAL).post(TEXT, &token).await.unwrap_err();
    assert_eq!(class(&refused), (Verdict::NotPosted, false, false), "{refused}");
    (late, refused)
}

const MASTO_CHANNEL: &str = "masto-main";

fn mastodon(server: &Url, timeout: Duration, channel: &str) -> Sink {
    Sink::mastodon(
        server,
        "masto-token".into(),
        channel,
        Some(Visibility::Unlisted),
        None,
        timeout,
        CONNECT,
    )
    .unwrap()
}

#[tokio::test]
async fn mastodon_posts_with_the_bearer_token_and_the_idempotency_key_of_match_and_channel() {
    let server = MockServer::start().await;
    let (token, _dir) = won().await;
    let key = idempotency_key(token.key(), MASTO_CHANNEL);
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .and(header("authorization", "Bearer masto-token"))
        .and(header("idempotency-key", key.as_str()))
        .and(body_json(serde_json::json!({"status": TEXT, "visibility": "unlisted"})))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-ratelimit-limit", "300")
                .insert_header("x-ratelimit-remaining", "299")
                .insert_header("x-ratelimit-reset", "2026-12-01T15:05:00.000Z")
                .set_body_json(serde_json::json!({
                    "id": "113000000000000001",
                    "url": "https://mastodon.example/@cricket/113000000000000001",
                    "content": "<p>Coming up</p>",
                })),
        )
        .expect(1)
        .mount(&server)
        .await;
    let receipt = mastodon(&base(&server), NORMAL, MASTO_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap();
    assert_eq!(
        receipt,
        Receipt {
            sink: SinkKind::Mastodon,
            id: "113000000000000001".into(),
            url: Some("https://mastodon.example/@cricket/113000000000000001".into()),
            dedupe_key: Some(key.clone()),
            cid: None,
            limits: Some(RateLimits {
                remaining: Some(299),
                reset: Some("2026-12-01T15:05:00Z".parse().unwrap()),
                ..RateLimits::default()
            }),
        }
    );
    assert!(key.starts_with("cricket-announcer-") && key.len() == 18 + 64, "{key}");
}

#[tokio::test]
async fn mastodon_sends_the_same_idempotency_key_for_a_repeat_so_the_server_can_dedupe() {
    let server = MockServer::start().await;
    // A Mastodon server answers a replayed key with the original status.
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": "7", "url": null})))
        .expect(3)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let first = mastodon(&base(&server), NORMAL, MASTO_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap();
    // Another replica (another client, same channel) retrying the same match.
    let again = mastodon(&base(&server), NORMAL, MASTO_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap();
    let other = mastodon(&base(&server), NORMAL, "masto-women")
        .post(TEXT, &token)
        .await
        .unwrap();
    let keys: Vec<String> = requests(&server)
        .await
        .iter()
        .map(|r| header_of(r, "idempotency-key"))
        .collect();
    assert_eq!(keys.len(), 3);
    assert_eq!(keys[0], keys[1], "same match and channel: same key");
    assert_ne!(keys[0], keys[2], "another channel: another key");
    assert_eq!(first.id, again.id);
    assert_eq!(first.dedupe_key.as_deref(), Some(keys[0].as_str()));
    assert_eq!(other.dedupe_key.as_deref(), Some(keys[2].as_str()));
}

#[tokio::test]
async fn mastodon_reads_its_length_rule_from_the_instance_and_refuses_a_longer_post_unsent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/v2/instance"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "domain": "mastodon.example",
            "configuration": {"statuses": {"max_characters": 100, "max_media_attachments": 4, "characters_reserved_per_url": 30}},
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": "1"})))
        .expect(0)
        .mount(&server)
        .await;
    let mut sink = mastodon(&base(&server), NORMAL, MASTO_CHANNEL);
    sink.prepare().await.unwrap();
    let rule = sink.length_rule();
    assert_eq!(
        rule,
        LengthRule::Mastodon {
            max_characters: 100,
            characters_reserved_per_url: 30
        }
    );
    // TEXT: 44 graphemes of text (the flag is one), a newline, and the URL as 30.
    assert_eq!(rule.length(TEXT), 44 + 1 + 30);
    let (token, _dir) = won().await;
    let long = format!("{}\nhttps://www.cricbuzz.com/1", "a".repeat(70));
    let err = sink.post(&long, &token).await.unwrap_err();
    assert!(
        matches!(
            err,
            SinkError::TooLong {
                length: 101,
                max: 100,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(class(&err), (Verdict::NotPosted, false, false));
}

#[tokio::test]
async fn mastodon_refusals_prove_what_its_documentation_says() {
    let until = Utc::now() + chrono::Duration::hours(1);
    let until = until - chrono::Duration::nanoseconds(until.timestamp_subsec_nanos().into());
    let reset = until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let reset = reset.as_str();
    let cases = [
        (
            401,
            r#"{"error":"The access token is invalid"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            403,
            r#"{"error":"This action is outside the authorized scopes"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            422,
            r#"{"error":"Validation failed: Text character limit of 500 exceeded"}"#,
            (Verdict::NotPosted, false, false),
        ),
        (
            429,
            r#"{"error":"Too many requests"}"#,
            (Verdict::NotPosted, false, true),
        ),
        (
            500,
            "<html>We're sorry, but something went wrong</html>",
            (Verdict::Unknown, false, false),
        ),
        (
            503,
            r#"{"error":"Service Unavailable"}"#,
            (Verdict::Unknown, false, false),
        ),
    ];
    let (token, _dir) = won().await;
    for (status, body, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/v1/statuses"))
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("x-ratelimit-remaining", if status == 429 { "0" } else { "12" })
                    .insert_header("x-ratelimit-reset", reset)
                    .set_body_raw(body, "application/json"),
            )
            .expect(1)
            .mount(&server)
            .await;
        let sink = mastodon(&base(&server), NORMAL, MASTO_CHANNEL);
        let err = sink.post(TEXT, &token).await.unwrap_err();
        assert_eq!(class(&err), expected, "{status}: {err}");
        let SinkError::Refused { status: s, detail, .. } = &err else {
            panic!("{status}: expected a refusal, got {err:?}")
        };
        assert_eq!(*s, status);
        if status == 422 {
            assert_eq!(detail, "Validation failed: Text character limit of 500 exceeded");
        }
        if status == 429 {
            assert_eq!(err.limits().and_then(|l| l.reset), Some(until));
            assert_eq!(
                sink.gate().closed_until(Utc::now()),
                Some(until),
                "ISO 8601 reset closes the gate"
            );
        }
    }
}

#[tokio::test]
async fn mastodon_timing_out_after_the_request_left_is_unknown_and_a_refused_connection_is_not_posted() {
    let server = MockServer::start().await;
    let (_, refused) =
        late_is_unknown_and_refused_is_not_posted(&server, "/api/v1/statuses", ResponseTemplate::new(200), |url, t| {
            mastodon(url, t, MASTO_CHANNEL)
        })
        .await;
    assert!(matches!(refused, SinkError::Connect { .. }), "{refused}");
}

// ---- Bluesky ----

const BSKY_CHANNEL: &str = "bsky-main";
const DID: &str = "did:plc:cricketbot";

fn bluesky(server: &Url, timeout: Duration, channel: &str) -> Sink {
    Sink::bluesky(
        server,
        "cricket.bsky.social",
        "app-pass-secret".into(),
        channel,
        None,
        timeout,
        CONNECT,
    )
    .unwrap()
}

async fn bluesky_session(server: &MockServer, access: &str, times: u64) {
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.server.createSession"))
        .and(body_json(
            serde_json::json!({"identifier": "cricket.bsky.social", "password": "app-pass-secret"}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "accessJwt": access, "refreshJwt": "refresh-1", "did": DID, "handle": "cricket.bsky.social",
        })))
        .expect(times)
        .mount(server)
        .await;
}

fn created(rkey: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "uri": format!("at://{DID}/app.bsky.feed.post/{rkey}"),
        "cid": "bafyreib2rxk3rybk3aobmv5cjuql3bm2twh4jo5uxgf5yrh6bidszqw5ie",
        "commit": {"cid": "bafyrei…", "rev": "3lb…"},
        "validationStatus": "valid",
    }))
}

#[tokio::test]
async fn bluesky_logs_in_once_and_creates_the_post_at_its_tid_with_the_link_as_a_label_its_facet_by_utf8_bytes_and_the_match_card(
) {
    let server = MockServer::start().await;
    let (token, _dir) = won().await;
    let rkey = record_key(token.key(), BSKY_CHANNEL, token.claim().claimed_at);
    bluesky_session(&server, "access-1", 1).await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .and(header("authorization", "Bearer access-1"))
        .respond_with(
            created(&rkey)
                .insert_header("ratelimit-remaining", "4997")
                .insert_header("ratelimit-reset", "1764604800"),
        )
        .expect(2)
        .mount(&server)
        .await;
    let sink = bluesky(&base(&server), NORMAL, BSKY_CHANNEL);
    let card = Card::of(&zim_v_ban(), Zone::default());
    let receipt = sink.post(Post::with_card(TAGGED, &card), &token).await.unwrap();
    assert_eq!(
        receipt,
        Receipt {
            sink: SinkKind::Bluesky,
            id: format!("at://{DID}/app.bsky.feed.post/{rkey}"),
            url: None,
            dedupe_key: Some(rkey.clone()),
            cid: Some("bafyreib2rxk3rybk3aobmv5cjuql3bm2twh4jo5uxgf5yrh6bidszqw5ie".into()),
            limits: Some(RateLimits {
                remaining: Some(4997),
                reset: Some(epoch(1_764_604_800)),
                ..RateLimits::default()
            }),
        }
    );
    // The session is kept: a second post does not log in again (createSession expect(1)).
    sink.post(TEXT, &token).await.unwrap();
    let create = requests(&server)
        .await
        .into_iter()
        .find(|r| r.url.path() == "/xrpc/com.atproto.repo.createRecord")
        .unwrap();
    let mut body: serde_json::Value = create.body_json().unwrap();
    let created_at = body["record"]["createdAt"].take();
    assert!(
        DateTime::parse_from_rfc3339(created_at.as_str().unwrap()).is_ok(),
        "{created_at}"
    );
    // "Coming up: Zimbabwe " is 20 bytes, the flag 8, " v Bangladesh, 2nd T20I\n" 24: the
    // label starts at byte 52; "cricbuzz.com/live-cricket-s" is 27 bytes and "…" 3, 28
    // graphemes. The tags follow on the next line.
    let shown = "Coming up: Zimbabwe 🇿🇼 v Bangladesh, 2nd T20I\ncricbuzz.com/live-cricket-s…\n#ZIMvBAN #T20I";
    assert_eq!(&shown[52..82], "cricbuzz.com/live-cricket-s…");
    assert_eq!((&shown[83..91], &shown[92..97]), ("#ZIMvBAN", "#T20I"));
    assert_eq!(
        body,
        serde_json::json!({
            "repo": DID,
            "collection": "app.bsky.feed.post",
            "rkey": rkey,
            "record": {
                "$type": "app.bsky.feed.post",
                "text": shown,
                "createdAt": null,
                "facets": [
                    {
                        "index": {"byteStart": 52, "byteEnd": 82},
                        "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://www.cricbuzz.com/live-cricket-scores/158062"}],
                    },
                    {
                        "index": {"byteStart": 83, "byteEnd": 91},
                        "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "ZIMvBAN"}],
                    },
                    {
                        "index": {"byteStart": 92, "byteEnd": 97},
                        "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "T20I"}],
                    },
                ],
                "embed": {
                    "$type": "app.bsky.embed.external",
                    "external": {
                        "uri": "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026",
                        "title": "Zimbabwe v Bangladesh, 2nd T20I",
                        "description": "Bangladesh tour of Zimbabwe, 2026 · Queens Sports Club, Bulawayo · Fri 17 Jul, 10:30 UTC",
                    },
                },
            },
        })
    );
}

#[tokio::test]
async fn bluesky_counts_a_posts_length_with_each_link_as_its_label() {
    // 299 graphemes of text and the 51-byte link: 350 as written, 299 + 1 + 28 = 328 as
    // shown, still over; 270 + 1 + 28 = 299 as shown fits, though 322 as written would not.
    let link = "https://www.cricbuzz.com/live-cricket-scores/158062";
    let fits = format!("{}\n{link}", "a".repeat(270));
    assert_eq!(LengthRule::Bluesky.length(&fits), 299);
    assert_eq!(
        LengthRule::Bluesky.shown(&fits),
        format!("{}\ncricbuzz.com/live-cricket-s…", "a".repeat(270))
    );
    let over = format!("{}\n{link}", "a".repeat(299));
    let server = MockServer::start().await;
    let (token, _dir) = won().await;
    let err = bluesky(&base(&server), NORMAL, BSKY_CHANNEL)
        .post(&over, &token)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SinkError::TooLong {
                length: 328,
                max: 300,
                ..
            }
        ),
        "{err}"
    );
    assert!(requests(&server).await.is_empty(), "nothing sent");
}

#[tokio::test]
async fn bluesky_record_keys_are_tids_of_the_claims_time_the_same_for_one_claim_and_different_across_channels() {
    let server = MockServer::start().await;
    // Three clients, three sessions.
    bluesky_session(&server, "access-1", 3).await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .respond_with(created("x"))
        .expect(3)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    bluesky(&base(&server), NORMAL, BSKY_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap();
    // Another client (a reconciler repeating the post) posting the same claim on the same channel.
    bluesky(&base(&server), NORMAL, BSKY_CHANNEL)
        .post(TEXT, &token)
        .await
        .ok();
    let sink_b = bluesky(&base(&server), NORMAL, "bsky-women");
    sink_b.post(TEXT, &token).await.ok();
    let rkeys: Vec<String> = requests(&server)
        .await
        .iter()
        .filter(|r| r.url.path() == "/xrpc/com.atproto.repo.createRecord")
        .map(|r| {
            r.body_json::<serde_json::Value>().unwrap()["rkey"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(rkeys.len(), 3);
    for rkey in &rkeys {
        assert_eq!(rkey.len(), 13, "{rkey}");
        assert!(
            rkey.bytes().all(|b| b"234567abcdefghijklmnopqrstuvwxyz".contains(&b)),
            "{rkey}"
        );
        assert!("234567ab".contains(&rkey[..1]), "top bit 0: {rkey}");
        assert!(is_valid_tid(rkey));
    }
    assert_eq!(rkeys[0], rkeys[1], "same claim and channel: same record key");
    assert_ne!(rkeys[0], rkeys[2], "another channel: another record key");
    assert_eq!(
        rkeys[0],
        record_key(token.key(), BSKY_CHANNEL, token.claim().claimed_at)
    );
    // The key's time is the claim's, to the microsecond.
    let claimed = token.claim().claimed_at;
    assert_eq!(
        tid_time(&rkeys[0]),
        chrono::DateTime::from_timestamp_micros(claimed.timestamp_micros())
    );
}

#[tokio::test]
async fn bluesky_refreshes_an_expired_token_and_sends_the_create_once_more() {
    let server = MockServer::start().await;
    bluesky_session(&server, "access-old", 1).await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .and(header("authorization", "Bearer access-old"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(serde_json::json!({"error": "ExpiredToken", "message": "Token has expired"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.server.refreshSession"))
        .and(header("authorization", "Bearer refresh-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "accessJwt": "access-new", "refreshJwt": "refresh-2", "did": DID, "handle": "cricket.bsky.social",
        })))
        .expect(1)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let rkey = record_key(token.key(), BSKY_CHANNEL, token.claim().claimed_at);
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .and(header("authorization", "Bearer access-new"))
        .respond_with(created(&rkey))
        .expect(1)
        .mount(&server)
        .await;
    let receipt = bluesky(&base(&server), NORMAL, BSKY_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap();
    assert_eq!(receipt.id, format!("at://{DID}/app.bsky.feed.post/{rkey}"));
}

/// A Bluesky server whose createRecord answers `create` and whose getRecord answers `read`.
async fn bluesky_after_500(read: ResponseTemplate) -> (MockServer, Result<Receipt, SinkError>, String) {
    let server = MockServer::start().await;
    bluesky_session(&server, "access-1", 1).await;
    // What the PDS answers today for a create at a key that holds a record (atproto#3718).
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_json(serde_json::json!({"error": "InternalServerError", "message": "Internal Server Error"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let rkey = record_key(token.key(), BSKY_CHANNEL, token.claim().claimed_at);
    Mock::given(method("GET"))
        .and(path("/xrpc/com.atproto.repo.getRecord"))
        .and(query_param("repo", DID))
        .and(query_param("collection", "app.bsky.feed.post"))
        .and(query_param("rkey", rkey.as_str()))
        .respond_with(read)
        .expect(1)
        .mount(&server)
        .await;
    let result = bluesky(&base(&server), NORMAL, BSKY_CHANNEL).post(TEXT, &token).await;
    (server, result, rkey)
}

#[tokio::test]
async fn bluesky_a_500_then_a_record_at_our_key_means_already_posted() {
    let uri = format!("at://{DID}/app.bsky.feed.post/");
    let (_server, result, rkey) = bluesky_after_500(ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "uri": format!("{uri}{}", "placeholder"),
        "cid": "bafy…",
        "value": {"$type": "app.bsky.feed.post", "text": TEXT, "createdAt": "2026-12-01T15:00:00.000Z"},
    })))
    .await;
    let err = result.unwrap_err();
    assert_eq!(class(&err), (Verdict::AlreadyPosted, false, false), "{err}");
    let SinkError::AlreadyPosted { id, detail, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(id, &format!("{uri}placeholder"));
    assert!(detail.contains(&format!("the record at {rkey} exists")), "{detail}");
}

#[tokio::test]
async fn bluesky_a_500_then_no_record_at_our_key_means_not_posted() {
    let (_server, result, _) = bluesky_after_500(
        ResponseTemplate::new(400)
            .set_body_json(serde_json::json!({"error": "RecordNotFound", "message": "Could not locate record"})),
    )
    .await;
    let err = result.unwrap_err();
    assert_eq!(class(&err), (Verdict::NotPosted, false, false), "{err}");
    assert!(err.to_string().contains("nothing was created"), "{err}");
}

#[tokio::test]
async fn bluesky_a_500_then_an_unreadable_record_stays_unknown() {
    let (_server, result, _) = bluesky_after_500(ResponseTemplate::new(502)).await;
    let err = result.unwrap_err();
    assert_eq!(class(&err), (Verdict::Unknown, false, false), "{err}");
}

#[tokio::test]
async fn bluesky_refusals_prove_what_its_documentation_says() {
    let reset = Utc::now().timestamp() + 300;
    let cases = [
        (
            400,
            r#"{"error":"InvalidRequest","message":"Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes"}"#,
            (Verdict::NotPosted, false, false),
        ),
        (
            403,
            r#"{"error":"AccountTakedown","message":"Account has been taken down"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            429,
            r#"{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}"#,
            (Verdict::NotPosted, false, true),
        ),
        (504, r#"{"error":"UpstreamTimeout"}"#, (Verdict::Unknown, false, false)),
    ];
    let (token, _dir) = won().await;
    for (status, body, expected) in cases {
        let server = MockServer::start().await;
        bluesky_session(&server, "access-1", 1).await;
        Mock::given(method("POST"))
            .and(path("/xrpc/com.atproto.repo.createRecord"))
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("ratelimit-limit", "5000")
                    .insert_header("ratelimit-remaining", "0")
                    .insert_header("ratelimit-reset", reset.to_string().as_str())
                    .insert_header("ratelimit-policy", "5000;w=3600")
                    .set_body_raw(body, "application/json"),
            )
            .expect(1)
            .mount(&server)
            .await;
        // A 504 is resolved by reading the record back; here it cannot be read either.
        Mock::given(method("GET"))
            .and(path("/xrpc/com.atproto.repo.getRecord"))
            .respond_with(ResponseTemplate::new(504))
            .mount(&server)
            .await;
        let sink = bluesky(&base(&server), NORMAL, BSKY_CHANNEL);
        let err = sink.post(TEXT, &token).await.unwrap_err();
        assert_eq!(class(&err), expected, "{status}: {err}");
        if status == 429 {
            assert_eq!(err.limits().and_then(|l| l.reset), Some(epoch(reset)));
            assert_eq!(sink.gate().closed_until(Utc::now()), Some(epoch(reset)));
        }
    }
}

#[tokio::test]
async fn bluesky_a_refused_login_halts_the_channel_without_any_create() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.server.createSession"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            serde_json::json!({"error": "AuthenticationRequired", "message": "Invalid identifier or password"}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .respond_with(created("x"))
        .expect(0)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let err = bluesky(&base(&server), NORMAL, BSKY_CHANNEL)
        .post(TEXT, &token)
        .await
        .unwrap_err();
    assert_eq!(class(&err), (Verdict::NotPosted, true, false));
    assert_eq!(
        err.to_string(),
        "could not log in to bluesky: AuthenticationRequired: Invalid identifier or password"
    );
    assert!(!format!("{err:?}").contains("app-pass-secret"));
}

#[tokio::test]
async fn bluesky_timing_out_after_the_create_left_is_unknown_and_a_refused_connection_is_not_posted() {
    let server = MockServer::start().await;
    bluesky_session(&server, "access-1", 1).await;
    late_is_unknown_and_refused_is_not_posted(
        &server,
        "/xrpc/com.atproto.repo.createRecord",
        created("x"),
        |url, t| bluesky(url, t, BSKY_CHANNEL),
    )
    .await;
}

// ---- Discord ----

const WEBHOOK_PATH: &str = "/api/webhooks/1180000000000000000/tok-secret";

fn discord(server: &Url, timeout: Duration) -> Sink {
    let url = server.join(WEBHOOK_PATH).unwrap();
    Sink::discord(url.to_string().into(), timeout, CONNECT).unwrap()
}

#[tokio::test]
async fn discord_executes_the_webhook_with_wait_no_mentions_and_the_matchs_embed() {
    let server = MockServer::start().await;
    // The epoch reset is far past the reset-after (1 s), so it is the later one even on a slow run.
    let reset = Utc::now().timestamp() + 60;
    let page =
        "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026";
    Mock::given(method("POST"))
        .and(path(WEBHOOK_PATH))
        .and(query_param("wait", "true"))
        .and(body_json(serde_json::json!({
            "content": TEXT,
            "allowed_mentions": {"parse": []},
            "embeds": [{
                "title": "Zimbabwe v Bangladesh, 2nd T20I",
                "url": page,
                "description": "Bangladesh tour of Zimbabwe, 2026",
                // T20I: purple.
                "color": 0x8E_44_AD,
                "fields": [
                    {"name": "Venue", "value": "Queens Sports Club, Bulawayo", "inline": true},
                    // 2026-07-17 10:30 UTC.
                    {"name": "Start", "value": "<t:1784284200:F>", "inline": true},
                ],
            }],
        })))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-ratelimit-limit", "5")
                .insert_header("x-ratelimit-remaining", "4")
                .insert_header("x-ratelimit-reset", format!("{reset}.000").as_str())
                .insert_header("x-ratelimit-reset-after", "1.000")
                .insert_header("x-ratelimit-bucket", "abcd1234")
                .set_body_json(serde_json::json!({"id": "1181000000000000001", "channel_id": "1170000000000000000", "content": TEXT})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let card = Card::of(&zim_v_ban(), Zone::default());
    let receipt = discord(&base(&server), NORMAL)
        .post(Post::with_card(TEXT, &card), &token)
        .await
        .unwrap();
    assert_eq!(
        (receipt.sink, receipt.id.as_str(), receipt.dedupe_key),
        (SinkKind::Discord, "1181000000000000001", None)
    );
    assert_eq!(receipt.limits.and_then(|l| l.remaining), Some(4));
    assert_eq!(receipt.limits.and_then(|l| l.reset), Some(epoch(reset)));
}

#[tokio::test]
async fn discord_leaves_out_what_the_match_lacks_and_sends_no_embed_without_a_card() {
    let server = MockServer::start().await;
    let ok = ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": "1"}));
    Mock::given(method("POST"))
        .respond_with(ok)
        .expect(2)
        .mount(&server)
        .await;
    let mut m = zim_v_ban();
    (m.series, m.venue, m.start_time) = (None, None, None);
    m.format = cricket_announcer::cricket::Format::Test;
    let card = Card::of(&m, Zone::default());
    let (token, _dir) = won().await;
    let sink = discord(&base(&server), NORMAL);
    sink.post(Post::with_card(TEXT, &card), &token).await.unwrap();
    // A repeat by `claims reconcile` has only the claim's text.
    sink.post(TEXT, &token).await.unwrap();
    let bodies: Vec<serde_json::Value> = requests(&server).await.iter().map(|r| r.body_json().unwrap()).collect();
    assert_eq!(
        bodies[0]["embeds"],
        serde_json::json!([{"title": "Zimbabwe v Bangladesh, 2nd T20I", "url": card.page.as_str(), "color": 0xC0_39_2B}])
    );
    assert_eq!(
        bodies[1],
        serde_json::json!({"content": TEXT, "allowed_mentions": {"parse": []}})
    );
}

#[tokio::test]
async fn discord_refusals_prove_what_its_documentation_says() {
    let cases = [
        (
            400,
            r#"{"code":50035,"message":"Invalid Form Body","errors":{"content":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 2000 or fewer in length."}]}}}"#,
            (Verdict::NotPosted, false, false),
        ),
        (
            401,
            r#"{"code":50027,"message":"Invalid Webhook Token"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            403,
            r#"{"code":50013,"message":"Missing Permissions"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            404,
            r#"{"code":10015,"message":"Unknown Webhook"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            429,
            r#"{"message":"You are being rate limited.","retry_after":64.57,"global":false}"#,
            (Verdict::NotPosted, false, true),
        ),
        (
            500,
            r#"{"message":"500: Internal Server Error","code":0}"#,
            (Verdict::Unknown, false, false),
        ),
        (502, "<html>502 Bad Gateway</html>", (Verdict::Unknown, false, false)),
    ];
    let (token, _dir) = won().await;
    for (status, body, expected) in cases {
        let server = MockServer::start().await;
        let mut answer = ResponseTemplate::new(status).set_body_raw(body, "application/json");
        if status == 429 {
            answer = answer
                .insert_header("retry-after", "65")
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset-after", "64.57")
                .insert_header("x-ratelimit-scope", "user");
        }
        Mock::given(method("POST"))
            .and(path(WEBHOOK_PATH))
            .respond_with(answer)
            .expect(1)
            .mount(&server)
            .await;
        let sink = discord(&base(&server), NORMAL);
        let err = sink.post(TEXT, &token).await.unwrap_err();
        assert_eq!(class(&err), expected, "{status}: {err}");
        assert!(!err.to_string().contains("tok-secret") && !format!("{err:?}").contains("tok-secret"));
        if status == 404 {
            assert_eq!(err.to_string(), "discord answered 404: Unknown Webhook (code 10015)");
        }
        if status == 429 {
            // The latest of Retry-After (65 s), reset-after and the body's retry_after.
            let until = err.limits().and_then(|l| l.reset);
            assert!(about_from_now(until, 65), "{until:?}");
            assert!(sink.gate().closed_until(Utc::now()).is_some());
        }
    }
}

#[tokio::test]
async fn discord_timing_out_after_the_request_left_is_unknown_and_a_refused_connection_is_not_posted() {
    let server = MockServer::start().await;
    let (_, err) =
        late_is_unknown_and_refused_is_not_posted(&server, WEBHOOK_PATH, ResponseTemplate::new(200), discord).await;
    assert!(matches!(err, SinkError::Connect { .. }), "{err}");
    // The webhook token is the credential: no error shows it.
    assert!(
        err.to_string().contains("/api/webhooks/1180000000000000000/[REDACTED]"),
        "{err}"
    );
    assert!(!err.to_string().contains("tok-secret") && !format!("{err:?}").contains("tok-secret"));
}

// ---- Telegram ----

const BOT_PATH: &str = "/bot123456:tok-secret/sendMessage";

fn telegram(server: &Url, timeout: Duration) -> Sink {
    Sink::telegram(
        server,
        &"123456:tok-secret".into(),
        ChatId::Id(-1_001_234_567_890),
        timeout,
        CONNECT,
    )
    .unwrap()
}

#[tokio::test]
async fn telegram_sends_escaped_html_with_a_bold_headline_and_the_match_pages_preview() {
    let server = MockServer::start().await;
    let page =
        "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026";
    Mock::given(method("POST"))
        .and(path(BOT_PATH))
        .and(body_json(serde_json::json!({
            "chat_id": -1_001_234_567_890i64,
            "text": "<b>Coming up: Zimbabwe 🇿🇼 v Bangladesh, 2nd T20I</b>\nhttps://www.cricbuzz.com/live-cricket-scores/158062",
            "parse_mode": "HTML",
            "link_preview_options": {"url": page},
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "ok": true,
            "result": {"message_id": 4242, "chat": {"id": -1_001_234_567_890i64, "type": "channel"}, "date": 1_764_600_000, "text": TEXT},
        })))
        .expect(1)
        .mount(&server)
        .await;
    let (token, _dir) = won().await;
    let card = Card::of(&zim_v_ban(), Zone::default());
    let receipt = telegram(&base(&server), NORMAL)
        .post(Post::with_card(TEXT, &card), &token)
        .await
        .unwrap();
    assert_eq!(
        receipt,
        Receipt {
            sink: SinkKind::Telegram,
            id: "4242".into(),
            url: None,
            dedupe_key: None,
            limits: None,
            cid: None,
        }
    );
}

#[tokio::test]
async fn telegram_escapes_a_hostile_team_name_so_it_makes_no_tag_or_entity() {
    let server = MockServer::start().await;
    let ok =
        serde_json::json!({"ok": true, "result": {"message_id": 1, "chat": {"id": 1, "type": "channel"}, "date": 1}});
    Mock::given(method("POST"))
        .and(path(BOT_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok))
        .expect(1)
        .mount(&server)
        .await;
    let mut m = zim_v_ban();
    m.teams[0].name = "<b>&amp;</b>".into();
    m.venue = None;
    m.series = Some("<a href=\"https://evil.example\">Cup</a> & Co".into());
    let text = helpers::template()
        .render_within(
            &m,
            &m.url,
            SinkKind::Telegram,
            LengthRule::default_for(SinkKind::Telegram),
        )
        .unwrap();
    let card = Card::of(&m, Zone::default());
    let (token, _dir) = won().await;
    telegram(&base(&server), NORMAL)
        .post(Post::with_card(&text, &card), &token)
        .await
        .unwrap();
    let body: serde_json::Value = requests(&server).await[0].body_json().unwrap();
    // The page's `&amp;` is read as `&` (scraped text is decoded once); then every `<`, `>`
    // and `&` goes as an entity: Telegram shows the name as written and makes no bold, no link.
    assert_eq!(
        body["text"].as_str().unwrap().lines().take(2).collect::<Vec<_>>(),
        [
            "<b>Coming up: &lt;b&gt;&amp;&lt;/b&gt; v Bangladesh, 2nd T20I</b>",
            "&lt;a href=\"https://evil.example\"&gt;Cup&lt;/a&gt; &amp; Co",
        ]
    );
    assert_eq!(body["parse_mode"], "HTML");
}

#[tokio::test]
async fn telegram_refusals_prove_what_its_documentation_says() {
    let cases = [
        (
            400,
            r#"{"ok":false,"error_code":400,"description":"Bad Request: message is too long"}"#,
            (Verdict::NotPosted, false, false),
        ),
        (
            400,
            r#"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            400,
            r#"{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1009876543210}}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            401,
            r#"{"ok":false,"error_code":401,"description":"Unauthorized"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            403,
            r#"{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the channel chat"}"#,
            (Verdict::NotPosted, true, false),
        ),
        (
            429,
            r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 34","parameters":{"retry_after":34}}"#,
            (Verdict::NotPosted, false, true),
        ),
        (
            500,
            r#"{"ok":false,"error_code":500,"description":"Internal Server Error"}"#,
            (Verdict::Unknown, false, false),
        ),
        (502, "<html>502 Bad Gateway</html>", (Verdict::Unknown, false, false)),
    ];
    let (token, _dir) = won().await;
    for (status, body, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(BOT_PATH))
            .respond_with(ResponseTemplate::new(status).set_body_raw(body, "application/json"))
            .expect(1)
            .mount(&server)
            .await;
        let sink = telegram(&base(&server), NORMAL);
        let err = sink.post(TEXT, &token).await.unwrap_err();
        assert_eq!(class(&err), expected, "{body}: {err}");
        assert!(!format!("{err} {err:?}").contains("tok-secret"));
        if body.contains("migrate_to_chat_id") {
            assert_eq!(
                err.to_string(),
                "telegram answered 400: Bad Request: group chat was upgraded to a supergroup chat (the group is now \
                 the supergroup -1009876543210: set chat_id = \"-1009876543210\")"
            );
        }
        if status == 429 {
            let until = err.limits().and_then(|l| l.reset);
            assert!(about_from_now(until, 34), "{until:?}");
            assert!(about_from_now(sink.gate().closed_until(Utc::now()), 34));
        }
    }
}

#[tokio::test]
async fn telegram_timing_out_after_the_request_left_is_unknown_and_a_refused_connection_is_not_posted() {
    let server = MockServer::start().await;
    let (late, err) =
        late_is_unknown_and_refused_is_not_posted(&server, BOT_PATH, ResponseTemplate::new(200), telegram).await;
    assert!(!format!("{late} {late:?}").contains("tok-secret"), "{late:?}");
    assert!(matches!(err, SinkError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("/bot[REDACTED]/sendMessage"), "{err}");
    assert!(!format!("{err} {err:?}").contains("tok-secret"), "{err:?}");
}

// ---- Fitting a template to a sink's rule ----

#[test]
fn a_template_is_fitted_to_each_sinks_rule_by_cutting_the_series() {
    let mut m = zim_v_ban();
    m.series = Some("Bangladesh tour of Zimbabwe, 2026, presented by a sponsor with a long name".into());
    let template = helpers::template();
    let link = m.url.clone();
    let rule = LengthRule::Mastodon {
        max_characters: 150,
        characters_reserved_per_url: 23,
    };
    let limit = SinkLimit {
        sink: SinkKind::Mastodon.to_string(),
        max: rule.max(),
        unit: rule.unit().to_string(),
    };
    let text = template.render_for(&m, &link, &limit, |t| rule.fit(t)).unwrap();
    assert_eq!(rule.length(&text), 150, "cut to the limit exactly: {text}");
    assert!(text.contains('…') && text.ends_with(link.as_str()), "{text}");
    // Discord's 2,000 keeps every field whole.
    let whole = template
        .render_for(&m, &link, &limit, |t| DISCORD_LENGTH.fit(t))
        .unwrap();
    assert!(whole.contains(m.series.as_deref().unwrap()), "{whole}");
}

// ---- X through the same Sink ----

/// Hashtags are plain `#tag` text on X and Mastodon: the text goes as it is, tags and all.
#[tokio::test]
async fn x_and_mastodon_send_hashtags_as_plain_text() {
    let (x, masto) = (MockServer::start().await, MockServer::start().await);
    crate::helpers::x_accepts(&x, 1).await;
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": "1", "url": "https://m.example/1"})),
        )
        .expect(1)
        .mount(&masto)
        .await;
    let (token, _dir) = won().await;
    let card = Card::of(&zim_v_ban(), Zone::default());
    let sink = Sink::x(&base(&x), crate::helpers::credentials(), NORMAL, CONNECT).unwrap();
    sink.post(Post::with_card(TAGGED, &card), &token).await.unwrap();
    mastodon(&base(&masto), NORMAL, MASTO_CHANNEL)
        .post(Post::with_card(TAGGED, &card), &token)
        .await
        .unwrap();
    let tweet: serde_json::Value = requests(&x).await[0].body_json().unwrap();
    assert_eq!(tweet, serde_json::json!({"text": TAGGED}));
    let status: serde_json::Value = requests(&masto).await[0].body_json().unwrap();
    assert_eq!(status, serde_json::json!({"status": TAGGED, "visibility": "unlisted"}));
}

#[tokio::test]
async fn x_posts_through_the_sink_unchanged_and_refuses_281_weighted_characters_unsent() {
    let server = MockServer::start().await;
    helpers::x_accepts(&server, 1).await;
    let sink = Sink::x(&base(&server), helpers::credentials(), NORMAL, CONNECT).unwrap();
    let (token, _dir) = won().await;
    let receipt = sink.post(TEXT, &token).await.unwrap();
    assert_eq!(
        (receipt.sink, receipt.id.as_str()),
        (SinkKind::X, "1800000000000000001")
    );
    let err = sink.post(&"a".repeat(281), &token).await.unwrap_err();
    assert!(
        matches!(
            err,
            SinkError::TooLong {
                length: 281,
                max: 280,
                ..
            }
        ),
        "{err}"
    );
}
