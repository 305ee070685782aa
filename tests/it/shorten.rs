//! Shorteners against wiremock with the providers' documented answers: is.gd
//! (<https://is.gd/apishorteningreference.php>, errors inside a 200) and Bitly v4
//! (<https://dev.bitly.com/api-reference/#createBitlink>, 201 new / 200 existing); and the
//! shortened link in a live post, which is rendered once (X and Bluesky stand-ins).

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

// ---- The shortened link in the post: rendered once, the link put in place ----

/// A won match's post through a live announcer on `sink`, with is.gd at `shortener` answering
/// `short` for its link: the outcome, and the logs.
async fn announce_shortened(
    sink: cricket_announcer::post::Sink,
    m: &cricket_announcer::cricket::Match,
    shortener_server: &MockServer,
    short: &str,
) -> (cricket_announcer::announcer::Outcome, String) {
    use cricket_announcer::announcer::{Announcer, Memory, Mode};
    use cricket_announcer::cricket::Sighting;
    use cricket_announcer::post::PostPace;
    use std::num::NonZeroU32;
    use tracing::instrument::WithSubscriber;
    Mock::given(method("GET"))
        .and(path("/create.php"))
        .and(query_param("url", m.url.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"shorturl": short})))
        .expect(1)
        .mount(shortener_server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = crate::helpers::unique_prefix();
    let store = crate::helpers::store(
        crate::helpers::Kind::Embedded,
        &prefix,
        "shorten-test",
        &dir.path().join("c.db"),
    )
    .await;
    let pace = PostPace::new(NonZeroU32::new(100).unwrap(), NonZeroU32::new(1_000).unwrap());
    let announcer = Announcer::new(
        store,
        crate::helpers::template(),
        Some(shortener(Provider::Isgd, shortener_server, Duration::from_secs(5))),
        Mode::live(sink, std::sync::Arc::new(pace)),
        crate::helpers::policy(),
    );
    let (logs, buffer) = crate::helpers::capture_logs();
    let outcome = announcer
        .announce(&mut Memory::default(), &Sighting::new(m.clone()), None)
        .with_subscriber(logs)
        .await
        .unwrap();
    (outcome, buffer.text())
}

/// A Bluesky stand-in taking one post: the sink, and the server (whose request holds the text).
async fn bluesky_taking_one_post() -> (cricket_announcer::post::Sink, MockServer) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.server.createSession"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "accessJwt": "access-1", "refreshJwt": "refresh-1", "did": "did:plc:cricketbot",
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/xrpc/com.atproto.repo.createRecord"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "uri": "at://did:plc:cricketbot/app.bsky.feed.post/3kabc", "cid": "bafyrei",
        })))
        .expect(1)
        .mount(&server)
        .await;
    let sink = cricket_announcer::post::Sink::bluesky(
        &Url::parse(&server.uri()).unwrap(),
        "cricket.bsky.social",
        "app-pass".into(),
        "bsky",
        None,
        Duration::from_secs(5),
        Duration::from_secs(2),
    )
    .unwrap();
    (sink, server)
}

/// The text of the one post `server` took (Bluesky's `record.text`, or X's `text`).
async fn posted_text(server: &MockServer, post_path: &str) -> String {
    let requests = server.received_requests().await.unwrap();
    let post = requests.iter().find(|r| r.url.path() == post_path).unwrap();
    let body: serde_json::Value = post.body_json().unwrap();
    body.pointer("/record/text")
        .or_else(|| body.get("text"))
        .and_then(|t| t.as_str())
        .unwrap()
        .to_string()
}

/// Zimbabwe v Bangladesh with a series long enough that Bluesky's 300 graphemes cut it.
fn with_a_long_series() -> cricket_announcer::cricket::Match {
    let mut m = crate::helpers::zim_v_ban();
    m.series = Some(
        "Bangladesh tour of Zimbabwe and the Emerging Nations Cup "
            .repeat(4)
            .into(),
    );
    m
}

/// The post as the announcer renders it for Bluesky, with the match's own link.
fn bluesky_draft(m: &cricket_announcer::cricket::Match) -> String {
    use cricket_announcer::post::{LengthRule, SinkKind};
    crate::helpers::template()
        .render_within(m, &m.url, SinkKind::Bluesky, LengthRule::Bluesky)
        .unwrap()
}

#[tokio::test]
async fn x_posts_the_rendered_text_with_the_short_link_in_place_of_the_long_one() {
    let (site_shortener, x) = (MockServer::start().await, MockServer::start().await);
    crate::helpers::x_accepts(&x, 1).await;
    let m = crate::helpers::zim_v_ban();
    let sink = cricket_announcer::post::Sink::x(
        &Url::parse(&x.uri()).unwrap(),
        crate::helpers::credentials(),
        Duration::from_secs(5),
        Duration::from_secs(2),
    )
    .unwrap();
    let (outcome, logs) = announce_shortened(sink, &m, &site_shortener, "https://is.gd/AbC123").await;
    assert!(
        matches!(outcome, cricket_announcer::announcer::Outcome::Posted(_)),
        "{outcome:?}\n{logs}"
    );
    assert_eq!(
        posted_text(&x, "/2/tweets").await,
        "Coming up: Zimbabwe v Bangladesh, 2nd T20I\nBangladesh tour of Zimbabwe, 2026\n📍 Queens Sports Club, \
         Bulawayo\n🕒 Fri 17 Jul, 10:30 UTC\nhttps://is.gd/AbC123"
    );
    x.verify().await;
    site_shortener.verify().await;
}

/// Rendered once: what the template cut to fit the long link stays cut, though the short link
/// would leave room for more of the series (a second render would have used it).
#[tokio::test]
async fn the_short_link_does_not_make_the_post_render_again() {
    let shortener_server = MockServer::start().await;
    let (sink, bluesky) = bluesky_taking_one_post().await;
    let m = with_a_long_series();
    let draft = bluesky_draft(&m);
    assert!(draft.contains('…'), "the series is cut for Bluesky: {draft}");
    let (outcome, logs) = announce_shortened(sink, &m, &shortener_server, "https://is.gd/AbC123").await;
    assert!(
        matches!(outcome, cricket_announcer::announcer::Outcome::Posted(_)),
        "{outcome:?}\n{logs}"
    );
    let posted = posted_text(&bluesky, "/xrpc/com.atproto.repo.createRecord").await;
    // Bluesky shows a link by its label (the facet carries the link itself).
    let short = "https://is.gd/AbC123";
    assert_eq!(
        posted,
        draft.replace(m.url.as_str(), &cricket_announcer::post::link_label(short))
    );
    assert!(posted.chars().count() < 300 - 50, "{posted}");
    bluesky.verify().await;
}

/// A "short" link longer than the long one would break Bluesky's 300 graphemes: the long link
/// is posted, and the log says why (never silently).
#[tokio::test]
async fn a_short_link_that_would_break_the_sinks_rule_leaves_the_long_one_and_says_so() {
    let shortener_server = MockServer::start().await;
    let (sink, bluesky) = bluesky_taking_one_post().await;
    let m = with_a_long_series();
    let draft = bluesky_draft(&m);
    let longer = format!("https://short.example/{}", "x".repeat(m.url.as_str().len()));
    let (outcome, logs) = announce_shortened(sink, &m, &shortener_server, &longer).await;
    assert!(
        matches!(outcome, cricket_announcer::announcer::Outcome::Posted(_)),
        "{outcome:?}\n{logs}"
    );
    assert_eq!(
        posted_text(&bluesky, "/xrpc/com.atproto.repo.createRecord").await,
        draft.replace(m.url.as_str(), &cricket_announcer::post::link_label(m.url.as_str()))
    );
    assert!(
        logs.contains("the shortened link makes the post too long for the sink; posting the long link"),
        "{logs}"
    );
    bluesky.verify().await;
}
