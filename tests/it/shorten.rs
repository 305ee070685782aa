//! Shorteners against wiremock with the providers' documented answers: is.gd
//! (<https://is.gd/apishorteningreference.php>, errors inside a 200) and Bitly v4
//! (<https://dev.bitly.com/api-reference/#createBitlink>, 201 new / 200 existing).

use cricket_announcer::shorten::{Provider, ShortenError, Shortener};
use std::time::Duration;
use url::Url;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const LONG: &str = "https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i?tab=a&b=c d";

fn long() -> Url {
    Url::parse(LONG).unwrap()
}

fn shortener(provider: Provider, server: &MockServer, timeout: Duration) -> Shortener {
    Shortener::new(provider, Url::parse(&format!("{}/", server.uri())).unwrap(), timeout).unwrap()
}

fn bitly() -> Provider {
    Provider::Bitly("test-bitly-token".into())
}

/// A Bitly v4 `BitlinkBody` as `POST /v4/shorten` returns it.
fn bitlink(link: &str) -> serde_json::Value {
    serde_json::json!({
        "created_at": "2026-07-17T09:00:00+0000",
        "id": link.trim_start_matches("https://"),
        "link": link,
        "custom_bitlinks": [],
        "long_url": LONG,
        "archived": false,
        "tags": [],
        "deeplinks": [],
        "references": {"group": "https://api-ssl.bitly.com/v4/groups/Ba1bc23dE4F"}
    })
}

#[tokio::test]
async fn isgd_sends_format_json_and_the_long_url_as_query_and_returns_the_short_link() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .and(query_param("format", "json"))
        .and(query_param("url", long().as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"shorturl": "https://is.gd/AbC123"})))
        .expect(1)
        .mount(&server)
        .await;
    let short = shortener(Provider::Isgd, &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap();
    assert_eq!(short.as_str(), "https://is.gd/AbC123");
    let requests = server.received_requests().await.unwrap();
    let query: Vec<(String, String)> = requests[0].url.query_pairs().into_owned().collect();
    assert_eq!(
        query,
        vec![
            ("format".to_string(), "json".to_string()),
            ("url".to_string(), long().to_string())
        ]
    );
}

#[tokio::test]
async fn an_isgd_error_inside_a_200_is_a_refusal_with_its_code_and_message() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"errorcode": 1, "errormessage": "Please specify a valid URL to shorten."}),
        ))
        .mount(&server)
        .await;
    let err = shortener(Provider::Isgd, &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap_err();
    assert!(matches!(&err, ShortenError::Refused { status: 200, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "shortener refused (200): errorcode 1: Please specify a valid URL to shorten."
    );
}

#[tokio::test]
async fn bitly_sends_a_bearer_token_and_a_long_url_body_and_accepts_201_for_a_new_link() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v4/shorten"))
        .and(header("authorization", "Bearer test-bitly-token"))
        .and(header("content-type", "application/json"))
        .and(body_json(serde_json::json!({"long_url": LONG.replace(' ', "%20")})))
        .respond_with(ResponseTemplate::new(201).set_body_json(bitlink("https://bit.ly/3xNew01")))
        .expect(1)
        .mount(&server)
        .await;
    let short = shortener(bitly(), &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap();
    assert_eq!(short.as_str(), "https://bit.ly/3xNew01");
}

#[tokio::test]
async fn bitly_accepts_200_for_a_link_it_had_already_shortened() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v4/shorten"))
        .respond_with(ResponseTemplate::new(200).set_body_json(bitlink("https://bit.ly/3xOld99")))
        .expect(1)
        .mount(&server)
        .await;
    let short = shortener(bitly(), &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap();
    assert_eq!(short.as_str(), "https://bit.ly/3xOld99");
}

#[tokio::test]
async fn a_bitly_4xx_is_a_refusal_naming_its_status_message_and_description() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v4/shorten"))
        .respond_with(ResponseTemplate::new(403).set_body_json(serde_json::json!({
            "message": "FORBIDDEN",
            "description": "You are currently forbidden to access this resource.",
            "resource": "bitlinks"
        })))
        .mount(&server)
        .await;
    let err = shortener(bitly(), &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "shortener refused (403): FORBIDDEN You are currently forbidden to access this resource."
    );
}

#[tokio::test]
async fn a_shortener_slower_than_its_timeout_is_unreachable_and_fails_fast() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"shorturl": "https://is.gd/late"}))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let err = shortener(Provider::Isgd, &server, Duration::from_millis(200))
        .shorten(&long())
        .await
        .unwrap_err();
    match &err {
        ShortenError::Unreachable(e) => assert!(e.is_timeout(), "{e:?}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_answer_that_is_not_an_http_link_is_refused_as_unreadable() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"shorturl": "javascript:alert(1)"})))
        .mount(&server)
        .await;
    let err = shortener(Provider::Isgd, &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "shortener answered something unreadable: \"javascript:alert(1)\" is not an http(s) link"
    );

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v4/shorten"))
        .respond_with(ResponseTemplate::new(201).set_body_json(bitlink("not a url")))
        .mount(&server)
        .await;
    let err = shortener(bitly(), &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ShortenError::BadAnswer(d) if d.starts_with("\"not a url\": ")),
        "{err:?}"
    );

    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>is.gd is down for maintenance</html>"))
        .mount(&server)
        .await;
    let err = shortener(Provider::Isgd, &server, Duration::from_secs(5))
        .shorten(&long())
        .await
        .unwrap_err();
    assert!(matches!(err, ShortenError::BadAnswer(_)), "{err:?}");
}
