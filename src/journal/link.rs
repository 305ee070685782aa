//! Where people see a post on its platform, from what the platform answered: the link the
//! status page puts on each post. Only `http`/`https` links are ever made (a platform's `url`
//! is checked: a `javascript:` one is dropped), and ids are checked before they go in a path.

use crate::post::SinkKind;
use url::Url;

/// The web address of a post made on `sink` with the id `id`, or `url` when the platform gave
/// one (Mastodon's status `url`, checked to be `http` or `https`):
/// - X: `https://x.com/i/web/status/ID` (X's own address form for a post by id);
/// - Bluesky: `https://bsky.app/profile/DID/post/RKEY` from the post's
///   `at://DID/app.bsky.feed.post/RKEY` (the Bluesky app's address form);
/// - Discord, Telegram: `None`: a webhook's answer lacks the server's id, and a Telegram
///   message has a link only in a public chat, which the answer does not say.
pub fn post_link(sink: SinkKind, id: &str, url: Option<&str>) -> Option<String> {
    if let Some(given) = url.and_then(web_url) {
        return Some(given);
    }
    match sink {
        SinkKind::X if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => {
            Some(format!("https://x.com/i/web/status/{id}"))
        }
        SinkKind::Bluesky => {
            let rest = id.strip_prefix("at://")?;
            let (did, rkey) = rest.split_once("/app.bsky.feed.post/")?;
            let did_ok =
                did.starts_with("did:") && did.bytes().all(|b| b.is_ascii_alphanumeric() || b":._-".contains(&b));
            let rkey_ok = !rkey.is_empty() && rkey.bytes().all(|b| b.is_ascii_alphanumeric() || b"._~:-".contains(&b));
            (did_ok && rkey_ok).then(|| format!("https://bsky.app/profile/{did}/post/{rkey}"))
        }
        _ => None,
    }
}

/// `raw` as an absolute `http` or `https` URL, when it is one.
fn web_url(raw: &str) -> Option<String> {
    let u = Url::parse(raw).ok()?;
    matches!(u.scheme(), "http" | "https").then(|| u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_platform_gets_its_own_address_form() {
        assert_eq!(
            post_link(SinkKind::X, "1800000000000000001", None).as_deref(),
            Some("https://x.com/i/web/status/1800000000000000001")
        );
        assert_eq!(
            post_link(
                SinkKind::Bluesky,
                "at://did:plc:abc123/app.bsky.feed.post/3kq2xyz",
                None
            )
            .as_deref(),
            Some("https://bsky.app/profile/did:plc:abc123/post/3kq2xyz")
        );
        assert_eq!(
            post_link(SinkKind::Mastodon, "110", Some("https://mastodon.example/@bot/110")).as_deref(),
            Some("https://mastodon.example/@bot/110")
        );
        assert_eq!(post_link(SinkKind::Discord, "1181000000000000001", None), None);
        assert_eq!(post_link(SinkKind::Telegram, "42", None), None);
    }

    #[test]
    fn a_link_that_is_not_http_or_an_id_that_is_not_one_makes_no_link() {
        assert_eq!(post_link(SinkKind::Mastodon, "1", Some("javascript:alert(1)")), None);
        assert_eq!(post_link(SinkKind::X, "12\"><img", None), None);
        assert_eq!(
            post_link(SinkKind::Bluesky, "at://did:plc:a/app.bsky.feed.post/x\"y", None),
            None
        );
    }
}
