//! Posting: weighted length against twitter-text's own conformance cases, and X's rate-limit
//! headers read from every answer (wiremock on loopback).

use crate::helpers::{self, credentials, root, unique_prefix, zim_v_ban, Kind};
use chrono::{DateTime, Utc};
use cricket_announcer::claim::{ClaimOutcome, ClaimToken};
use cricket_announcer::cricket::MatchKey;
use cricket_announcer::post::{weighted_length, Post, PostError, RateLimits, XClient};
use serde::Deserialize;
use std::time::Duration;
use twitter_text_config::Configuration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[derive(Deserialize)]
struct Suite {
    #[serde(rename = "WeightedTweetsCounterTest")]
    v2: Vec<Case>,
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

#[derive(Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Expected {
    weighted_length: i32,
    valid: bool,
    permillage: i32,
    display_range_start: i32,
    display_range_end: i32,
    valid_range_start: i32,
    valid_range_end: i32,
}

fn suite() -> Suite {
    let raw = std::fs::read_to_string(root().join("fixtures/twitter-text/validate-weighted.json")).unwrap();
    serde_json::from_str(&raw).unwrap()
}

/// What the crate answers, in the conformance file's shape.
fn actual(text: &str, config: &Configuration) -> Expected {
    let r = twitter_text::parse(text, config, true);
    Expected {
        weighted_length: r.weighted_length,
        valid: r.is_valid,
        permillage: r.permillage,
        display_range_start: r.display_text_range.start(),
        display_range_end: r.display_text_range.end(),
        valid_range_start: r.valid_text_range.start(),
        valid_range_end: r.valid_text_range.end(),
    }
}

/// Descriptions of the cases whose full result differs from upstream's expectation.
fn failures(cases: &[Case], config: &Configuration) -> Vec<String> {
    cases
        .iter()
        .filter_map(|c| {
            let got = actual(&c.text, config);
            (got != c.expected).then(|| format!("{}: expected {:?}, got {:?}", c.description, c.expected, got))
        })
        .collect()
}

#[test]
fn every_conformance_text_has_the_utf16_length_its_display_range_says() {
    let s = suite();
    assert_eq!((s.v2.len(), s.v3.len(), s.directional.len()), (20, 22, 2));
    for c in s.v2.iter().chain(&s.v3).chain(&s.directional) {
        let units = i32::try_from(c.text.encode_utf16().count()).unwrap();
        assert_eq!(units, c.expected.display_range_end + 1, "{}", c.description);
    }
}

#[test]
fn the_crate_passes_all_20_v2_weighted_counter_cases() {
    // Upstream wrote this section for configuration v2 (emoji counted per code point), so it
    // checks the crate, not our v3 setting.
    let s = suite();
    assert_eq!(failures(&s.v2, twitter_text_config::config_v2()), Vec::<String>::new());
}

#[test]
fn the_crate_passes_all_22_v3_discounted_emoji_cases_and_both_directional_marker_cases() {
    let s = suite();
    let config = twitter_text_config::config_v3();
    assert_eq!(failures(&s.v3, config), Vec::<String>::new());
    assert_eq!(failures(&s.directional, config), Vec::<String>::new());
}

#[test]
fn our_weighted_length_matches_every_v3_conformance_case() {
    let s = suite();
    let wrong: Vec<String> =
        s.v3.iter()
            .chain(&s.directional)
            .filter(|c| i32::try_from(weighted_length(&c.text)).ok() != Some(c.expected.weighted_length))
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

// ---- X's rate-limit headers, read on every answer ----

async fn client_and_token(x: &MockServer) -> (XClient, ClaimToken, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = helpers::store(
        Kind::Embedded,
        &unique_prefix(),
        "post-test",
        &dir.path().join("claims.db"),
    )
    .await;
    let key = MatchKey::for_match(&zim_v_ban());
    let ClaimOutcome::Won(token) = store
        .claim(&key, "Zimbabwe v Bangladesh", &[], Duration::from_secs(86_400))
        .await
        .unwrap()
    else {
        panic!("a fresh store must let us win the claim");
    };
    let base = url::Url::parse(&x.uri()).unwrap();
    let client = XClient::new(&base, credentials(), Duration::from_secs(5), Duration::from_secs(2)).unwrap();
    (client, token, dir)
}

fn post() -> Post {
    Post::new("Coming up: Zimbabwe v Bangladesh").unwrap()
}

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
    let err = client.post(&post(), &token).await.unwrap_err();
    let PostError::Refused { status, limits, .. } = &err else {
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
    let receipt = client.post(&post(), &token).await.unwrap();
    assert_eq!(receipt.tweet_id, "1800000000000000001");
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
    let receipt = client.post(&post(), &token).await.unwrap();
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
    let err = client.post(&post(), &token).await.unwrap_err();
    let PostError::Refused { limits, .. } = &err else {
        panic!("expected a refusal, got {err:?}")
    };
    assert_eq!(limits.and_then(|l| l.remaining), Some(98));
    assert_eq!(client.gate().closed_until(Utc::now()), None);
}
