//! Posting: the weighted length the bot gives its real posts, against twitter-text's own
//! conformance cases for the configuration it uses (v3), and X's rate-limit headers read from
//! every answer (wiremock on loopback).

use crate::cli::bot;
use crate::helpers::{self, credentials, root};
use crate::operator::on_fixture;
use chrono::{DateTime, Utc};
use cricket_announcer::claim::ClaimToken;
use cricket_announcer::post::{weighted_length, RateLimits, Sink, SinkError};
use serde::Deserialize;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The conformance file's sections for configuration v3, the one the bot counts with (its
/// v2 section, `WeightedTweetsCounterTest`, counts emoji per code point: not what X does now).
#[derive(Deserialize)]
struct Suite {
    #[serde(rename = "WeightedTweetsWithDiscountedEmojiCounterTest")]
    v3: Vec<Case>,
    #[serde(rename = "UnicodeDirectionalMarkerCounterTest")]
    directional: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    description: String,
    text: String,
    expected: Expected,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Expected {
    weighted_length: usize,
}

fn suite() -> Suite {
    let raw = std::fs::read_to_string(root().join("fixtures/twitter-text/validate-weighted.json")).unwrap();
    serde_json::from_str(&raw).unwrap()
}

#[test]
fn our_weighted_length_matches_every_v3_conformance_case() {
    let s = suite();
    assert_eq!((s.v3.len(), s.directional.len()), (22, 2), "the file lost cases");
    let wrong: Vec<String> =
        s.v3.iter()
            .chain(&s.directional)
            .filter(|c| weighted_length(&c.text) != c.expected.weighted_length)
            .map(|c| {
                format!(
                    "{}: {} ≠ {}",
                    c.description,
                    weighted_length(&c.text),
                    c.expected.weighted_length
                )
            })
            .collect();
    assert_eq!(wrong, Vec::<String>::new());
}

/// X's count of a text of ASCII, emoji and `https://` links, worked out by its rules rather than
/// by the twitter-text crate: a link counts 23 whatever its length, an emoji 2, the rest 1.
/// Documentation: <https://docs.x.com/resources/fundamentals/counting-characters>
fn counted_by_hand(text: &str) -> usize {
    text.split_inclusive(char::is_whitespace)
        .map(|word| match word.trim_end() {
            link if link.starts_with("https://") => 23 + (word.len() - link.len()),
            _ => word.chars().map(|c| if u32::from(c) > 0xFFFF { 2 } else { 1 }).sum(),
        })
        .sum()
}

#[tokio::test]
async fn the_real_posts_of_a_saved_page_carry_the_weighted_length_x_counts_not_their_length() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = on_fixture(&mut bot(dir.path()), &["--dry-run", "backfill"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    // Each post is printed as `--- KEY (ID; weighted length N/280)`, its text, a blank line.
    let posts: Vec<(usize, &str)> = stdout
        .split("--- ")
        .skip(1)
        .map(|block| {
            let (header, body) = block.split_once('\n').unwrap();
            let n = header
                .split("weighted length ")
                .nth(1)
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let body = body.split("\n\n").next().unwrap();
            (n.parse().unwrap(), body)
        })
        .collect();
    let lengths: Vec<usize> = posts.iter().map(|(n, _)| *n).collect();
    assert_eq!(lengths, [153, 157, 153, 159], "{stdout}");
    for (n, body) in &posts {
        assert_eq!(*n, counted_by_hand(body), "{body}");
        assert_eq!(*n, weighted_length(body), "{body}");
        // Each carries a link of 80+ characters (counted 23) and two emoji (counted 2): the
        // weighted length is far below the count of characters.
        assert!(body.chars().count() >= n + 50, "{body}");
    }
}

// ---- X's rate-limit headers, read on every answer ----

async fn client_and_token(x: &MockServer) -> (Sink, ClaimToken, tempfile::TempDir) {
    let (token, dir) = helpers::won_zim_v_ban("post-test").await;
    let base = url::Url::parse(&x.uri()).unwrap();
    let client = Sink::x(&base, credentials(), Duration::from_secs(5), Duration::from_secs(2)).unwrap();
    (client, token, dir)
}

const POST: &str = "Coming up: Zimbabwe v Bangladesh";

fn epoch(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(secs, 0).unwrap()
}

#[tokio::test]
async fn a_429_with_a_reset_header_closes_the_gate_until_that_reset() {
    let x = MockServer::start().await;
    let reset = Utc::now().timestamp() + 600;
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("x-rate-limit-limit", "100")
                .insert_header("x-rate-limit-remaining", "0")
                .insert_header("x-rate-limit-reset", reset.to_string().as_str())
                .set_body_json(serde_json::json!({"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429})),
        )
        .expect(1)
        .mount(&x)
        .await;
    let (client, token, _dir) = client_and_token(&x).await;
    let err = client.post(POST, &token).await.unwrap_err();
    let SinkError::Refused { status, limits, .. } = &err else {
        panic!("expected a refusal, got {err:?}")
    };
    assert_eq!(*status, 429);
    assert_eq!(limits.and_then(|l| l.reset), Some(epoch(reset)));
    assert_eq!(limits.and_then(|l| l.remaining), Some(0));
    assert_eq!(client.gate().closed_until(Utc::now()), Some(epoch(reset)));
    assert_eq!(
        client.gate().closed_until(epoch(reset)),
        None,
        "open again at the reset instant"
    );
    assert!(err.proves_not_posted());
}

#[tokio::test]
async fn a_201_with_no_posts_left_today_closes_the_gate_until_the_24_hour_reset() {
    let x = MockServer::start().await;
    let now = Utc::now().timestamp();
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("x-rate-limit-remaining", "99")
                .insert_header("x-rate-limit-reset", (now + 900).to_string().as_str())
                .insert_header("x-user-limit-24hour-limit", "17")
                .insert_header("x-user-limit-24hour-remaining", "0")
                .insert_header("x-user-limit-24hour-reset", (now + 50_000).to_string().as_str())
                .set_body_json(serde_json::json!({"data": {"id": "1800000000000000001", "text": "ok"}})),
        )
        .expect(1)
        .mount(&x)
        .await;
    let (client, token, _dir) = client_and_token(&x).await;
    let receipt = client.post(POST, &token).await.unwrap();
    assert_eq!(receipt.id, "1800000000000000001");
    assert_eq!(
        receipt.limits,
        Some(RateLimits {
            remaining: Some(99),
            reset: Some(epoch(now + 900)),
            user_24h_remaining: Some(0),
            user_24h_reset: Some(epoch(now + 50_000)),
        })
    );
    assert_eq!(client.gate().closed_until(Utc::now()), Some(epoch(now + 50_000)));
}

#[tokio::test]
async fn a_201_with_remaining_budget_leaves_the_gate_open() {
    let x = MockServer::start().await;
    let now = Utc::now().timestamp();
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("x-rate-limit-remaining", "1")
                .insert_header("x-rate-limit-reset", (now + 900).to_string().as_str())
                .insert_header("x-user-limit-24hour-remaining", "16")
                .insert_header("x-user-limit-24hour-reset", (now + 50_000).to_string().as_str())
                .set_body_json(serde_json::json!({"data": {"id": "1800000000000000002", "text": "ok"}})),
        )
        .expect(1)
        .mount(&x)
        .await;
    let (client, token, _dir) = client_and_token(&x).await;
    let receipt = client.post(POST, &token).await.unwrap();
    assert_eq!(receipt.limits.and_then(|l| l.user_24h_remaining), Some(16));
    assert_eq!(client.gate().closed_until(Utc::now()), None);
    // A clone shares the gate: one process has one view of X's limits.
    assert_eq!(client.clone().gate().closed_until(Utc::now()), None);
}

#[tokio::test]
async fn an_error_answer_carries_its_rate_limit_headers_too() {
    let x = MockServer::start().await;
    let now = Utc::now().timestamp();
    Mock::given(method("POST"))
        .and(path("/2/tweets"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-rate-limit-remaining", "98")
                .insert_header("x-rate-limit-reset", (now + 900).to_string().as_str())
                .set_body_json(serde_json::json!({"detail": "You are not allowed to create a Tweet with duplicate content.", "status": 403})),
        )
        .mount(&x)
        .await;
    let (client, token, _dir) = client_and_token(&x).await;
    let err = client.post(POST, &token).await.unwrap_err();
    let SinkError::Refused { limits, .. } = &err else {
        panic!("expected a refusal, got {err:?}")
    };
    assert_eq!(limits.and_then(|l| l.remaining), Some(98));
    assert_eq!(client.gate().closed_until(Utc::now()), None);
}
