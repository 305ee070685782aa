//! The Bluesky (AT Protocol) sink: an app-password session (`com.atproto.server.createSession`,
//! kept and refreshed, never a login per post), then `com.atproto.repo.createRecord` of an
//! `app.bsky.feed.post` at a record key derived from the claim and the channel; the match's link
//! shown by a short label (`cricbuzz.com/live-cricket-s…`) with a link facet to the full URL,
//! hashtags as tag facets, the match's link card (`app.bsky.embed.external`, no thumbnail); and
//! the table of what each refusal proves.
//!
//! **Create-once.** The record key is a valid TID made of the claim's time and (match key,
//! channel) ([`record_key`]), so a second create of the same claim's post on the same account
//! fails on the server ("There is already a value at key", answered today as a 500). After a 5xx (or 409) the
//! client reads the record back (`com.atproto.repo.getRecord`): found means the post exists
//! ([`SinkError::AlreadyPosted`]); not found means the create wrote nothing (and any later retry
//! is still create-once); anything else stays unknown.
//!
//! Documentation: <https://docs.bsky.app/docs/api/com-atproto-repo-create-record>,
//! <https://docs.bsky.app/docs/api/com-atproto-server-create-session>,
//! <https://docs.bsky.app/docs/api/com-atproto-server-refresh-session>,
//! <https://docs.bsky.app/docs/api/com-atproto-repo-get-record>,
//! <https://docs.bsky.app/docs/advanced-guides/post-richtext>, <https://atproto.com/specs/xrpc>;
//! the 500 on an existing key: bluesky-social/atproto#3718.

use super::card::{Card, Post};
use super::dedupe::match_channel_digest;
use super::error::{ClientError, Refusal, SinkError};
use super::http;
use super::kind::SinkKind;
use super::length::LengthRule;
use super::pace::{RateGate, RateLimits};
use super::receipt::Receipt;
use super::urls::{labelled, Labelled};
use crate::claim::ClaimToken;
use crate::cricket::MatchKey;
use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::header::HeaderMap;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

const SINK: SinkKind = SinkKind::Bluesky;

/// The collection of posts.
const POST_COLLECTION: &str = "app.bsky.feed.post";

/// The base32-sortable alphabet of TIDs.
///
/// Documentation: <https://atproto.com/specs/tid>
const TID_ALPHABET: &[u8; 32] = b"234567abcdefghijklmnopqrstuvwxyz";

/// The largest timestamp a TID holds: 53 bits of microseconds since the Unix epoch (the year
/// 2255).
const TID_MAX_MICROS: u64 = (1 << 53) - 1;

/// The record key of the post of `key` on `channel` claimed at `claimed_at`: a valid TID (13
/// characters of the base32-sortable alphabet, top bit 0) whose timestamp is the claim's time in
/// microseconds and whose 10-bit clock identifier comes from the SHA-256 of (match key,
/// channel).
///
/// Everything it is made of is in the claim record (its key, its `claimed_at`) and the channel,
/// so every repeat of the post of one claim (a retry after a refreshed token, `claims
/// reconcile`) lands on the same key, and a second create there fails on the server. The time
/// is the claim's, as apps make TIDs from their clock when they post: `listRecords`, which lists
/// by record key, lists the bot's posts in the order they were claimed, and the clock
/// identifier keeps two matches claimed in the same microsecond apart.
///
/// Documentation: <https://atproto.com/specs/tid>, <https://atproto.com/specs/record-key#record-key-type-tid>
pub fn record_key(key: &MatchKey, channel: &str, claimed_at: DateTime<Utc>) -> String {
    let digest = match_channel_digest(key, channel);
    let clock = u64::from(u16::from_be_bytes([digest[0], digest[1]]) & 0x3ff);
    // Before 1970 (a clock gone wrong) is 0; past the year 2255, the largest time a TID holds.
    let micros = u64::try_from(claimed_at.timestamp_micros())
        .unwrap_or(0)
        .min(TID_MAX_MICROS);
    encode_tid((micros << 10) | clock)
}

/// The record key of the post `claim` won: the one its record holds (`dedupe_key`, written
/// with the claim, by this release or an earlier one whose keys were derived otherwise), else
/// the one [`record_key`] derives from the record.
pub fn claim_record_key(claim: &ClaimToken, channel: &str) -> String {
    match &claim.claim().dedupe_key {
        Some(kept) if is_valid_tid(kept) => kept.clone(),
        _ => record_key(claim.key(), channel, claim.claim().claimed_at),
    }
}

/// The time a TID holds, when `s` is one.
///
/// Documentation: <https://atproto.com/specs/tid#tid-structure>
pub fn tid_time(s: &str) -> Option<DateTime<Utc>> {
    if !is_valid_tid(s) {
        return None;
    }
    let value = s.bytes().try_fold(0u64, |acc, c| {
        let digit = TID_ALPHABET.iter().position(|a| *a == c)?;
        Some((acc << 5) | u64::try_from(digit).ok()?)
    })?;
    DateTime::from_timestamp_micros(i64::try_from(value >> 10).ok()?)
}

/// `value` (top bit 0) as 13 base32-sortable characters, most significant first.
fn encode_tid(value: u64) -> String {
    (0..13)
        .rev()
        .map(|i| char::from(TID_ALPHABET[((value >> (5 * i)) & 0x1f) as usize]))
        .collect()
}

/// True when `s` is a syntactically valid TID: 13 characters of the base32-sortable alphabet,
/// the first one of `234567abcdefghij` (the top bit is 0). The specification's reference regex:
/// `^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$`.
///
/// Documentation: <https://atproto.com/specs/tid#tid-syntax>
pub fn is_valid_tid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 13 && b"234567abcdefghij".contains(&b[0]) && b.iter().all(|c| TID_ALPHABET.contains(c))
}

/// The longest tag a tag facet may carry, in graphemes (the lexicon's `tag`: `maxGraphemes:
/// 64`).
///
/// Documentation: <https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/richtext/facet.json>
const MAX_TAG_GRAPHEMES: usize = 64;

/// The facets of a post's text as shown (`labelled`): one `app.bsky.richtext.facet#link` per
/// link, over its label, whose `uri` is the full link; and one `app.bsky.richtext.facet#tag`
/// per hashtag ([`tag_spans`]), whose `tag` is the word without its `#`. Indexed by UTF-8 byte
/// offsets of the text as posted (`byteStart` inclusive, `byteEnd` exclusive), as Bluesky
/// requires, in text order.
///
/// Documentation: <https://docs.bsky.app/docs/advanced-guides/post-richtext>
pub fn facets(labelled: &Labelled) -> Vec<serde_json::Value> {
    let text = &labelled.text;
    let mut found: Vec<(usize, serde_json::Value)> = labelled
        .links
        .iter()
        .map(|l| {
            let facet = serde_json::json!({
                "index": { "byteStart": l.start, "byteEnd": l.end },
                "features": [{ "$type": "app.bsky.richtext.facet#link", "uri": l.uri }],
            });
            (l.start, facet)
        })
        .collect();
    for (start, end) in tag_spans(text) {
        // A `#` inside a label (a link's fragment) belongs to the link.
        if labelled.links.iter().any(|l| start < l.end && l.start < end) {
            continue;
        }
        // The span starts with `#` or `＃`, both one character.
        let Some(tag) = text
            .get(start..end)
            .and_then(|t| t.char_indices().nth(1))
            .map(|(i, _)| &text[start + i..end])
        else {
            continue;
        };
        let facet = serde_json::json!({
            "index": { "byteStart": start, "byteEnd": end },
            "features": [{ "$type": "app.bsky.richtext.facet#tag", "tag": tag }],
        });
        found.push((start, facet));
    }
    found.sort_by_key(|(start, _)| *start);
    found.into_iter().map(|(_, f)| f).collect()
}

/// The byte ranges (end exclusive) of the hashtags in `text`: a `#` (or the full-width `＃`)
/// at the start or after white space, then a run of word characters (letters, digits, `_`)
/// with at least one that is not a digit, at most [`MAX_TAG_GRAPHEMES`] of them, ended by
/// white space, punctuation or the end. This is the shape the `hashtags` field writes
/// (`#INDvAUS`); the official app's rule (`RichText.detectFacets` in `@atproto/api`) also takes
/// a few other characters inside a tag, which no post of ours holds. A `#` that scraped text
/// had was made a look-alike by [`crate::text::clean`] and is not one.
pub fn tag_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut previous: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let starts = matches!(c, '#' | '＃') && previous.is_none_or(char::is_whitespace);
        previous = Some(c);
        if !starts {
            continue;
        }
        let mut end = at + c.len_utf8();
        let mut count = 0;
        let mut letters = false;
        while let Some(&(i, w)) = chars.peek() {
            if !(w.is_alphanumeric() || w == '_') {
                break;
            }
            letters |= !w.is_numeric();
            count += 1;
            end = i + w.len_utf8();
            previous = Some(w);
            chars.next();
        }
        // Ended by a sentence's punctuation; a tag glued to anything else (`#a-b`) is not ours.
        let ended = chars.peek().is_none_or(|&(_, n)| {
            n.is_whitespace() || matches!(n, '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '"' | '\'')
        });
        if letters && count <= MAX_TAG_GRAPHEMES && ended {
            spans.push((at, end));
        }
    }
    spans
}

/// The link card of a match: an `app.bsky.embed.external` whose `uri` is the match page,
/// `title` the match (`Zimbabwe v Bangladesh, 2nd T20I`) and `description` its series, venue and
/// start ([`Card::summary`]).
///
/// No `thumb`: a thumbnail is a blob the bot would have to fetch from the score site and upload
/// (`com.atproto.repo.uploadBlob`) before the create, inside the post's time-out; the score
/// pages' images are site furniture rather than the match's, a failed fetch or upload would
/// have to be told apart from a failed post, and a card without one shows the title, the
/// description and the host. The lexicon makes `thumb` optional.
///
/// Documentation: <https://docs.bsky.app/docs/advanced-guides/posts#website-card-embeds>,
/// <https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/external.json>
pub fn external_embed(card: &Card) -> serde_json::Value {
    serde_json::json!({
        "$type": "app.bsky.embed.external",
        "external": {
            "uri": card.page.as_str(),
            "title": card.title,
            "description": card.summary(),
        },
    })
}

/// A logged-in session.
struct Session {
    access: SecretString,
    refresh: SecretString,
    did: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionAnswer {
    access_jwt: String,
    refresh_jwt: String,
    did: String,
}

#[derive(Deserialize)]
struct Created {
    uri: String,
    /// The record's CID, which a reply to it names (absent from some servers' answers).
    #[serde(default)]
    cid: Option<String>,
}

/// Posts to one Bluesky account.
#[derive(Clone)]
pub(crate) struct BlueskyClient {
    http: reqwest::Client,
    /// The PDS or entryway (`https://bsky.social`), for the `/xrpc/…` methods.
    service: Url,
    /// The handle or DID that logs in.
    identifier: String,
    /// The account's app password (never the main password).
    app_password: SecretString,
    /// The channel this client posts for: half of every record key.
    channel: String,
    /// `langs` of each post, when set.
    language: Option<String>,
    /// The session, shared by clones; a lock held across a login, so replicas' tasks in one
    /// process log in once, not once each (createSession is limited to 30 per 5 minutes).
    session: Arc<tokio::sync::Mutex<Option<Session>>>,
    /// Shared by clones: one view of the account's limits per process.
    gate: RateGate,
}

impl std::fmt::Debug for BlueskyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlueskyClient")
            .field("service", &self.service.as_str())
            .field("identifier", &self.identifier)
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// Which XRPC call an answer came from.
#[derive(Clone, Copy)]
enum Call {
    CreateSession,
    RefreshSession,
}

impl BlueskyClient {
    /// The channel this client posts for.
    /// This client, deriving its dedupe keys from `channel` instead (an event's namespace of
    /// the channel, see [`super::Sink::for_event`]).
    pub(crate) fn with_dedupe_channel(&self, channel: String) -> Self {
        let mut c = self.clone();
        c.channel = channel;
        c
    }

    pub(crate) fn channel(&self) -> &str {
        &self.channel
    }

    /// A client for `identifier` (handle or DID) logging in with `app_password` at `service`
    /// (`https://bsky.social`, or the account's PDS), posting for `channel`.
    ///
    /// # Errors
    /// [`ClientError`] naming the service URL when it cannot take the XRPC paths, or when the
    /// HTTP client cannot be built.
    pub(crate) fn new(
        service: &Url,
        identifier: &str,
        app_password: SecretString,
        channel: &str,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<BlueskyClient, ClientError> {
        http::join(service, "xrpc/com.atproto.repo.createRecord", "the Bluesky service URL")?;
        Ok(BlueskyClient {
            http: http::http_client(timeout, connect_timeout)?,
            service: service.clone(),
            identifier: identifier.to_string(),
            app_password,
            channel: channel.to_string(),
            language: None,
            session: Arc::new(tokio::sync::Mutex::new(None)),
            gate: RateGate::new(),
        })
    }

    /// Tags each post with this language (`langs`).
    pub(crate) fn with_language(mut self, language: Option<String>) -> BlueskyClient {
        self.language = language;
        self
    }

    /// The account's rate-limit gate as of the last answer.
    pub(crate) fn gate(&self) -> &RateGate {
        &self.gate
    }

    fn xrpc(&self, method: &str) -> Url {
        // `new` checked that the service takes a path; this cannot fail for a method name.
        http::join(&self.service, &format!("xrpc/{method}"), "the Bluesky service URL")
            .unwrap_or_else(|_| self.service.clone())
    }

    /// Posts `post` for the match `claim` won at the record key [`claim_record_key`] of that
    /// claim and this client's channel (derived from the claim, so no argument can name another
    /// match): its text with each link shown by its label ([`labelled`]), the link and tag
    /// [`facets`], and (when the post has its match's card) the [`external_embed`]. Logs in first when there is no session; an expired or refused access
    /// token is refreshed (or the client logs in again) and the create is sent once more, which
    /// is safe: the refusal wrote nothing, and the record key is create-once anyway.
    ///
    /// # Errors
    /// [`SinkError::TooLong`] before sending; [`SinkError::Login`] when no session could be had
    /// (nothing posted); [`SinkError::AlreadyPosted`] when a record is at the key already;
    /// otherwise the answer classified by [`classify`].
    pub(crate) async fn post(&self, post: Post<'_>, claim: &ClaimToken) -> Result<Receipt, SinkError> {
        // Counted as shown: each link by its label (see `LengthRule::Bluesky`).
        LengthRule::Bluesky.check(SINK, post.text)?;
        let rkey = claim_record_key(claim, &self.channel);
        let shown = labelled(post.text);
        let mut record = serde_json::json!({
            "$type": POST_COLLECTION,
            "text": shown.text,
            "createdAt": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
        });
        let facets = facets(&shown);
        if !facets.is_empty() {
            record["facets"] = serde_json::Value::Array(facets);
        }
        if let Some(l) = &self.language {
            record["langs"] = serde_json::json!([l]);
        }
        if let Some(card) = post.card {
            record["embed"] = external_embed(card);
        }
        // A result under its announcement: `reply` names the thread's root and the parent by
        // URI and CID, both the announcement here
        // (<https://docs.bsky.app/docs/advanced-guides/posts#replies>).
        if let Some(parent) = &claim.claim().reply_to {
            if let Some(cid) = &parent.cid {
                let at = serde_json::json!({ "uri": parent.post_id, "cid": cid });
                record["reply"] = serde_json::json!({ "root": at, "parent": at });
            }
        }
        let mut session = self.session.lock().await;
        if session.is_none() {
            *session = Some(self.login(Call::CreateSession, None).await?);
        }
        let mut renewed = false;
        loop {
            let Some(s) = session.as_ref() else {
                return Err(login_error(None, "no session".into(), Refusal::Unknown, None));
            };
            let body = serde_json::json!({
                "repo": s.did,
                "collection": POST_COLLECTION,
                "rkey": rkey,
                "record": record,
            });
            let url = self.xrpc("com.atproto.repo.createRecord");
            let request = self
                .http
                .post(url.clone())
                .bearer_auth(s.access.expose_secret())
                .json(&body);
            let answer = http::send(SINK, url.as_str(), request).await?;
            let limits = limits(&answer.headers);
            http::observe(&self.gate, answer.status, limits.as_ref());
            if (200..300).contains(&answer.status) {
                let created: Created = answer.json(SINK)?;
                return Ok(Receipt {
                    sink: SINK,
                    id: created.uri,
                    url: None,
                    dedupe_key: Some(rkey),
                    limits,
                    cid: created.cid,
                });
            }
            let (name, detail) = error_detail(&answer.body);
            if !renewed && token_refused(answer.status, &name) {
                renewed = true;
                let refresh = s.refresh.expose_secret().to_string();
                let fresh = match self.login(Call::RefreshSession, Some(&refresh)).await {
                    Ok(fresh) => fresh,
                    Err(_) => self.login(Call::CreateSession, None).await?,
                };
                *session = Some(fresh);
                continue;
            }
            let refusal = classify(answer.status, &name);
            if refusal != Refusal::Unknown || !may_have_written(answer.status) {
                return Err(SinkError::Refused {
                    sink: SINK,
                    status: answer.status,
                    detail,
                    refusal,
                    limits,
                });
            }
            return Err(self.resolve(&s.did, &rkey, answer.status, detail, limits).await);
        }
    }

    /// After a create that may have written (5xx, 409): reads the record at `rkey` back.
    async fn resolve(
        &self,
        did: &str,
        rkey: &str,
        status: u16,
        detail: String,
        limits: Option<RateLimits>,
    ) -> SinkError {
        let mut url = self.xrpc("com.atproto.repo.getRecord");
        url.query_pairs_mut()
            .append_pair("repo", did)
            .append_pair("collection", POST_COLLECTION)
            .append_pair("rkey", rkey);
        let unknown = |why: String| SinkError::Refused {
            sink: SINK,
            status,
            detail: format!("{detail} (then the record could not be read back: {why})"),
            refusal: Refusal::Unknown,
            limits,
        };
        let answer = match http::send(SINK, url.as_str(), self.http.get(url.clone())).await {
            Ok(a) => a,
            Err(e) => return unknown(e.to_string()),
        };
        if (200..300).contains(&answer.status) {
            return match serde_json::from_slice::<Created>(&answer.body) {
                Ok(found) => SinkError::AlreadyPosted {
                    sink: SINK,
                    id: found.uri,
                    detail: format!("the create answered {status}: {detail}; the record at {rkey} exists"),
                },
                Err(e) => unknown(format!("unreadable getRecord answer: {e}")),
            };
        }
        let (name, not_found) = error_detail(&answer.body);
        if answer.status == 400 && name == "RecordNotFound" {
            return SinkError::Refused {
                sink: SINK,
                status,
                detail: format!("{detail} (no record at {rkey} afterwards: nothing was created)"),
                refusal: Refusal::Rejected,
                limits,
            };
        }
        unknown(format!("getRecord answered {}: {not_found}", answer.status))
    }

    /// `createSession` with the app password, or `refreshSession` with `refresh`.
    async fn login(&self, call: Call, refresh: Option<&str>) -> Result<Session, SinkError> {
        let (method, request) = match (call, refresh) {
            (Call::RefreshSession, Some(token)) => {
                let url = self.xrpc("com.atproto.server.refreshSession");
                (url.clone(), self.http.post(url).bearer_auth(token))
            }
            _ => {
                let url = self.xrpc("com.atproto.server.createSession");
                let body = serde_json::json!({
                    "identifier": self.identifier,
                    "password": self.app_password.expose_secret(),
                });
                (url.clone(), self.http.post(url).json(&body))
            }
        };
        let answer = match http::send(SINK, method.as_str(), request).await {
            Ok(a) => a,
            Err(SinkError::Connect { endpoint, source, .. } | SinkError::NoAnswer { endpoint, source, .. }) => {
                return Err(login_error(
                    None,
                    format!("{endpoint}: {source}"),
                    Refusal::Unknown,
                    None,
                ))
            }
            Err(other) => return Err(other),
        };
        let limits = limits(&answer.headers);
        http::observe(&self.gate, answer.status, limits.as_ref());
        if !(200..300).contains(&answer.status) {
            let (name, detail) = error_detail(&answer.body);
            return Err(login_error(
                Some(answer.status),
                detail,
                classify_login(answer.status, &name),
                limits,
            ));
        }
        let s: SessionAnswer = serde_json::from_slice(&answer.body).map_err(|e| {
            login_error(
                Some(answer.status),
                format!("unreadable session: {e}"),
                Refusal::Unknown,
                None,
            )
        })?;
        Ok(Session {
            access: s.access_jwt.into(),
            refresh: s.refresh_jwt.into(),
            did: s.did,
        })
    }
}

fn login_error(status: Option<u16>, detail: String, refusal: Refusal, limits: Option<RateLimits>) -> SinkError {
    SinkError::Login {
        sink: SINK,
        status,
        detail,
        refusal,
        limits,
    }
}

/// True when the access token was refused (expired, invalid, or not accepted): worth one
/// refresh or new login. XRPC names `ExpiredToken` and `InvalidToken` (400) and answers 401 when
/// authentication is required.
///
/// Documentation: <https://atproto.com/specs/xrpc#summary-of-http-status-codes>
fn token_refused(status: u16, name: &str) -> bool {
    status == 401 || (status == 400 && matches!(name, "ExpiredToken" | "InvalidToken"))
}

/// True when a create answered with `status` may have written the record: a 5xx (the PDS answers
/// a create at an existing key with a 500 today, bluesky-social/atproto#3718) or a 409.
fn may_have_written(status: u16) -> bool {
    status == 409 || (500..600).contains(&status)
}

/// What a `createRecord` refusal with HTTP `status` and XRPC error `name` proves (after one
/// token refresh for an expired or refused token).
///
/// Sources: <https://atproto.com/specs/xrpc#summary-of-http-status-codes> (400 invalid request,
/// 401 authentication required, 403 forbidden, 429 rate limited, 5xx server error),
/// <https://docs.bsky.app/docs/api/com-atproto-repo-create-record> (`InvalidSwap`),
/// <https://docs.bsky.app/docs/advanced-guides/rate-limits>. A 5xx or 409 is resolved by
/// reading the record back (see the module doc) before it counts as unknown.
pub fn classify(status: u16, name: &str) -> Refusal {
    match status {
        // The token was refused even after a refresh and a new login.
        400 if matches!(name, "ExpiredToken" | "InvalidToken") => Refusal::Halt,
        // Lexicon validation (text over 300 graphemes, a bad facet), InvalidSwap: refused
        // before the write.
        400 => Refusal::Rejected,
        // Authentication refused after a new login, or the account is taken down or
        // deactivated: no later post on this account can succeed.
        401 | 403 => Refusal::Halt,
        429 => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

/// What a `createSession` refusal proves about later logins (nothing was ever posted).
///
/// Sources: <https://docs.bsky.app/docs/api/com-atproto-server-create-session> (401
/// `AuthenticationRequired` for a wrong identifier or password, `AccountTakedown`,
/// `AuthFactorTokenRequired`), <https://docs.bsky.app/docs/advanced-guides/rate-limits>
/// (createSession: 30 per 5 minutes, 300 per day, per account).
pub fn classify_login(status: u16, _name: &str) -> Refusal {
    match status {
        400 | 401 | 403 => Refusal::Halt,
        429 => Refusal::RateLimited,
        _ => Refusal::Unknown,
    }
}

/// The PDS's rate-limit headers: `RateLimit-Remaining`, and `RateLimit-Reset` in Unix epoch
/// seconds (the PDS's `setStatusHeaders`); on a 429 a `Retry-After` in seconds may come too.
/// The reset is the later of the two.
///
/// Documentation: <https://docs.bsky.app/docs/advanced-guides/rate-limits>,
/// <https://atproto.com/specs/xrpc#summary-of-http-status-codes> (429: "There may be a
/// `Retry-After` header"); the header values: bluesky-social/atproto
/// `packages/xrpc-server/src/rate-limiter.ts`.
pub fn limits(headers: &HeaderMap) -> Option<RateLimits> {
    let reset = http::header(headers, "ratelimit-reset").and_then(http::epoch_instant);
    let retry_after = http::header(headers, "retry-after")
        .and_then(|r| r.parse::<f64>().ok())
        .and_then(http::after_secs);
    http::some_limits(RateLimits {
        remaining: http::header_count(headers, "ratelimit-remaining"),
        reset: reset.max(retry_after),
        ..RateLimits::default()
    })
}

/// The XRPC error name and a printable detail (`Name: message`) from an error body.
fn error_detail(body: &[u8]) -> (String, String) {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let name = value.get("error").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let message = value.get("message").and_then(|v| v.as_str());
    let detail = match (name.as_str(), message) {
        ("", None) => http::preview(body),
        (n, None) => http::preview(n.as_bytes()),
        ("", Some(m)) => http::preview(m.as_bytes()),
        (n, Some(m)) => http::preview(format!("{n}: {m}").as_bytes()),
    };
    (name, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> MatchKey {
        MatchKey::parse(s).unwrap()
    }

    #[test]
    fn zero_and_the_largest_value_encode_as_the_spec_says() {
        // "The TID corresponding to integer zero is 2222222222222."
        assert_eq!(encode_tid(0), "2222222222222");
        // 13 digits hold 65 bits: the first digit carries the top 4 bits of the 64, so with
        // the top bit 0 it is one of `234567ab`.
        assert_eq!(encode_tid(i64::MAX as u64), "bzzzzzzzzzzzz");
        assert!(is_valid_tid("3jzfcijpj2z2a"));
        assert!(!is_valid_tid("kzzzzzzzzzzzz"), "top bit set");
        assert!(!is_valid_tid("3jzfcijpj2z2"), "12 characters");
        assert!(!is_valid_tid("3jzfcijpj2z21"), "1 is not in the alphabet");
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_record_key_holds_the_claims_time_to_the_microsecond_and_a_clock_per_match_and_channel() {
        let k = key("2026-07-17_bangladesh-v-zimbabwe_2nd-t20i");
        let claimed = at("2026-07-17T08:30:00.123456789Z");
        let rkey = record_key(&k, "bsky-main", claimed);
        assert!(is_valid_tid(&rkey), "{rkey}");
        assert_eq!(tid_time(&rkey), Some(at("2026-07-17T08:30:00.123456Z")));
        assert_eq!(rkey, record_key(&k, "bsky-main", claimed));
        // Same microsecond, another channel or match: another clock identifier.
        assert_ne!(rkey, record_key(&k, "bsky-women", claimed));
        assert_ne!(rkey, record_key(&key("2026-07-17_a-v-b_1st-odi"), "bsky-main", claimed));
        // Claimed later: a later key (record-key order is claim order).
        assert!(record_key(&k, "bsky-main", at("2026-07-17T08:30:00.123457Z")) > rkey);
        assert!(
            record_key(
                &key("2026-07-17_a-v-b_1st-odi"),
                "bsky-main",
                at("2026-07-17T08:30:01Z")
            ) > rkey
        );
    }

    #[test]
    fn a_claims_record_key_is_the_one_its_record_keeps_else_the_derived_one() {
        use crate::claim::{ClaimStore, EmbeddedClaims, MatchClaim, PostIntent};
        use crate::cricket::Identities;
        let dir = tempfile::tempdir().unwrap();
        let store = ClaimStore::Embedded(EmbeddedClaims::open(&dir.path().join("c.db"), "t:", "host:1").unwrap());
        let claimed = at("2026-07-17T08:30:00.5Z");
        let claim = |k: &str, kept: Option<&str>| {
            let ids = Identities::known_by(key(k), Vec::new());
            let intent = PostIntent {
                text: "t",
                dedupe_key: kept,
                claimed_at: claimed,
                reply_to: None,
            };
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let day = std::time::Duration::from_secs(86_400);
            match runtime
                .block_on(store.claim_match_to_post(&ids, "A v B", Some(&intent), day, day, false))
                .unwrap()
            {
                MatchClaim::Won(token) => token,
                other => panic!("{other:?}"),
            }
        };
        // Kept by an earlier release (derived from the match and channel alone): kept.
        assert_eq!(
            claim_record_key(&claim("a-v-b", Some("3jzfcijpj2z2a")), "sky"),
            "3jzfcijpj2z2a"
        );
        let derived = claim_record_key(&claim("c-v-d", None), "sky");
        assert_eq!(derived, record_key(&key("c-v-d"), "sky", claimed));
        assert_eq!(tid_time(&derived), Some(claimed));
        // Not a TID (another sink's key): derived.
        assert_eq!(
            claim_record_key(&claim("e-v-f", Some("not-a-tid")), "sky"),
            record_key(&key("e-v-f"), "sky", claimed)
        );
    }

    proptest::proptest! {
        #[test]
        fn every_derived_record_key_is_a_valid_tid_holding_its_time(
            key_text in "[a-z0-9_-]{1,80}",
            channel in "[a-z0-9_-]{1,64}",
            micros in 0i64..(1i64 << 53),
        ) {
            let claimed = DateTime::from_timestamp_micros(micros).unwrap();
            let rkey = record_key(&key(&key_text), &channel, claimed);
            proptest::prop_assert!(is_valid_tid(&rkey), "{}", rkey);
            proptest::prop_assert_eq!(tid_time(&rkey), Some(claimed));
        }
    }

    #[test]
    fn the_app_password_never_shows_in_debug() {
        let c = BlueskyClient::new(
            &Url::parse("https://bsky.social").unwrap(),
            "cricket.bsky.social",
            "app-pass-secret".into(),
            "bsky",
            Duration::from_secs(1),
            Duration::from_secs(1),
        )
        .unwrap();
        let debug = format!("{c:?}");
        assert!(!debug.contains("app-pass-secret"), "{debug}");
        assert!(debug.contains("cricket.bsky.social"), "{debug}");
    }

    #[test]
    fn facets_index_the_labels_utf8_bytes_and_link_the_full_url() {
        let text = "🏏 Zimbabwe v Bangladesh #ZIMvBAN\nhttps://www.cricbuzz.com/live-cricket-scores/158062 #T20I";
        let shown = labelled(text);
        assert_eq!(
            shown.text,
            "🏏 Zimbabwe v Bangladesh #ZIMvBAN\ncricbuzz.com/live-cricket-s… #T20I"
        );
        assert_eq!(
            facets(&shown),
            vec![
                serde_json::json!({
                    "index": {"byteStart": 27, "byteEnd": 35},
                    "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "ZIMvBAN"}],
                }),
                serde_json::json!({
                    "index": {"byteStart": 36, "byteEnd": 66},
                    "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://www.cricbuzz.com/live-cricket-scores/158062"}],
                }),
                serde_json::json!({
                    "index": {"byteStart": 67, "byteEnd": 72},
                    "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "T20I"}],
                }),
            ]
        );
        assert_eq!(&shown.text[27..35], "#ZIMvBAN");
        assert_eq!(&shown.text[36..66], "cricbuzz.com/live-cricket-s…");
        assert_eq!(&shown.text[67..72], "#T20I");
    }

    #[test]
    fn tag_facets_fall_on_the_bytes_the_reference_library_finds() {
        // `RichText.detectFacetsWithoutResolution` of @atproto/api 0.20.44 (the PDS's
        // install, tests/pds) on this text: the label at 138..168, tags at 169..178,
        // 179..194, 202..206 (`#AUS`, not `(#IND`) and 215..227 (`＃全日本`); `#2026` none.
        let text =
            "Coming up: Zimbabwe v Bangladesh, 2nd T20I\nBangladesh tour of Zimbabwe, 2026\n📍 Queens Sports Club, \
                    Bulawayo\n🕒 Fri 17 Jul, 10:30 UTC\nhttps://www.cricbuzz.com/live-cricket-scores/158062\n#HSWvDURW \
                    #WomensT20Blast (#IND, #AUS.) #2026 ＃全日本";
        let shown = labelled(text);
        let ranges: Vec<(u64, u64)> = facets(&shown)
            .iter()
            .map(|f| {
                (
                    f["index"]["byteStart"].as_u64().unwrap(),
                    f["index"]["byteEnd"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ranges, [(138, 168), (169, 178), (179, 194), (202, 206), (215, 227)]);
    }

    #[test]
    fn only_a_whole_word_after_space_is_a_tag() {
        let spans = |t: &str| -> Vec<String> { tag_spans(t).into_iter().map(|(s, e)| t[s..e].to_string()).collect() };
        assert_eq!(spans("#INDvAUS #T20WorldCup"), ["#INDvAUS", "#T20WorldCup"]);
        assert_eq!(spans("＃全日本 go"), ["＃全日本"]);
        // Digits only, glued to a word, a bare sign, or scraped text's look-alike: none.
        assert!(spans("#2026 a#b # ﹟IND").is_empty());
        // Punctuation ends one; a dash in the middle makes no tag of the part before.
        assert_eq!(spans("(#IND, #AUS.) #a-b"), ["#AUS"]);
        assert!(spans(&format!("#{}", "a".repeat(65))).is_empty());
    }

    #[test]
    fn each_documented_refusal_has_its_class() {
        assert_eq!(classify(400, "InvalidRequest"), Refusal::Rejected);
        assert_eq!(classify(400, "ExpiredToken"), Refusal::Halt);
        assert_eq!(classify(401, "AuthRequired"), Refusal::Halt);
        assert_eq!(classify(429, "RateLimitExceeded"), Refusal::RateLimited);
        assert_eq!(classify(500, "InternalServerError"), Refusal::Unknown);
        assert_eq!(classify_login(401, "AuthenticationRequired"), Refusal::Halt);
        assert_eq!(classify_login(429, "RateLimitExceeded"), Refusal::RateLimited);
    }
}
