//! The claim record: what a claim says (owner, since when, state, when its owner gives up, the
//! match's identities), how it is stored (JSON) and read back whatever a store holds, and when a
//! claim is stuck.

use super::label::{labelled, Label};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Where a claimed match is in the announcement protocol, as its record stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimState {
    /// A worker won the claim and is composing or sending the post.
    Claimed,
    /// The post exists on its platform (`post_id` is set when the platform told us its id).
    Posted,
    /// The post was sent but its outcome could not be known (timeout after sending, reset,
    /// 5xx). Never retried automatically: a lost post is acceptable, a duplicate is not.
    Unknown,
    /// Given up after repeated failures that proved nothing was posted.
    Failed,
    /// Recorded by `seed` at first start, without posting: the match was already current.
    Seeded,
}

impl Label for ClaimState {
    const WHAT: &'static str = "a claim state";
    const ALL: &'static [ClaimState] = &[
        ClaimState::Claimed,
        ClaimState::Posted,
        ClaimState::Unknown,
        ClaimState::Failed,
        ClaimState::Seeded,
    ];

    /// Lower-case name, as stored in the record: `claimed`, `posted`, `unknown`, `failed`,
    /// `seeded` (PostgreSQL's `claims.state` allows exactly these, and `released`).
    fn label(self) -> &'static str {
        match self {
            ClaimState::Claimed => "claimed",
            ClaimState::Posted => "posted",
            ClaimState::Unknown => "unknown",
            ClaimState::Failed => "failed",
            ClaimState::Seeded => "seeded",
        }
    }
}

labelled!(ClaimState);

impl ClaimState {
    /// Lower-case name, as stored in the record (see [`Label::label`]).
    pub fn as_str(self) -> &'static str {
        self.label()
    }
}

/// A claim's state as operators see it (`claims list`, `--state`, logs): its stored state, or
/// `stuck`, which no record stores: `claimed` past its owner's deadline (see
/// [`Claim::is_stuck`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShownState {
    /// The stored state, the claim not being stuck.
    Stored(ClaimState),
    /// Claimed and never recorded, past its owner's deadline: its worker died between claim and
    /// post.
    Stuck,
}

impl Label for ShownState {
    const WHAT: &'static str = "a claim state";
    const ALL: &'static [ShownState] = &[
        ShownState::Stored(ClaimState::Claimed),
        ShownState::Stored(ClaimState::Posted),
        ShownState::Stored(ClaimState::Unknown),
        ShownState::Stored(ClaimState::Failed),
        ShownState::Stored(ClaimState::Seeded),
        ShownState::Stuck,
    ];

    /// The stored state's word, or `stuck`.
    fn label(self) -> &'static str {
        match self {
            ShownState::Stored(state) => state.label(),
            ShownState::Stuck => "stuck",
        }
    }
}

labelled!(ShownState);

impl ShownState {
    /// The state's word, as `claims list` prints it (see [`Label::label`]).
    pub fn as_str(self) -> &'static str {
        self.label()
    }
}

/// A claim record: what the store holds at `<prefix>match:<key>`, serialised as JSON.
///
/// It says what it is, so that a loser (and an operator) learns who holds the match, since when
/// and in which state.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// Where the announcement is in its life.
    pub state: ClaimState,
    /// The instance that won the claim (`INSTANCE_ID`, default `<hostname>:<pid>`).
    pub owner: String,
    /// Random per-claim value; transitions compare it. Not shown to losers' logs.
    pub(super) token: String,
    /// When the claim was won (UTC).
    #[serde(deserialize_with = "rfc3339")]
    pub claimed_at: DateTime<Utc>,
    /// When the record last changed state (UTC).
    #[serde(deserialize_with = "rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// The match in words ("Zimbabwe v Bangladesh, 2nd T20I"), for operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Where the match was seen (`cricbuzz:158062`, `espncricinfo:1530000`): each source's
    /// own id for the same match, kept as aliases of the one key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The post's id on its platform (a tweet's, a Mastodon status's, a Bluesky record's
    /// URI, a Discord message's, a Telegram message's), once the platform returned it.
    /// Stored as `post_id`; records of earlier releases name it `tweet_id`, and read the same.
    #[serde(default, alias = "tweet_id", skip_serializing_if = "Option::is_none")]
    pub post_id: Option<String>,
    /// Why the record is in its state (the failure, the note on a duplicate…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Failed attempts behind a `failed` record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// When the owner gives up on its post (UTC): past it, a record still `claimed` is stuck,
    /// whatever the reader's own settings. Written by the winner from its own post timeout;
    /// absent in records of earlier releases (then the reader's `POST_TIMEOUT_SECS` decides).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "opt_rfc3339")]
    pub deadline: Option<DateTime<Utc>>,
    /// The post the owner was about to send, as rendered before the claim (the link may since
    /// have been shortened). What `claims reconcile` looks for on the platform; dropped once the
    /// claim is `posted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The sink's server-side dedupe key for the post (Mastodon's `Idempotency-Key`, Bluesky's
    /// record key), when the sink has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_key: Option<String>,
    /// When `claims reconcile` last asked the platform about this claim and did not settle it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "opt_rfc3339")]
    pub checked_at: Option<DateTime<Utc>>,
    /// What that check found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// A `claims reconcile` repeating this claim's post, until it gives up: while it does, no
    /// other reconciler repeats it (see [`ClaimStore::adopt_for_replay`](super::ClaimStore::adopt_for_replay)).
    /// Cleared by the next change recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
    /// The post's content hash where its platform names a post by address and hash (Bluesky's
    /// record CID), once the platform returned it: what a reply to it must name besides its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_cid: Option<String>,
    /// The post this one replies to (a result under its announcement), written with the claim
    /// so that every repeat of the post (`claims reconcile`) replies to the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<ReplyTo>,
}

/// The post a post replies to, as its platform names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyTo {
    /// Its id on the platform (a tweet's, a Mastodon status's, a Bluesky record's `at://` URI, a
    /// Telegram message's).
    pub post_id: String,
    /// Its content hash, where the platform needs one to reply (Bluesky's CID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cid: Option<String>,
}

/// Who repeats a claim's post in `claims reconcile`, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// The instance repeating it (`INSTANCE_ID`).
    pub by: String,
    /// When it gives up (UTC): its post has ended by then, sent or not.
    #[serde(deserialize_with = "rfc3339")]
    pub until: DateTime<Utc>,
}

/// [`rfc3339`] for an optional field (`null` or absent: `None`).
pub(super) fn opt_rfc3339<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    #[derive(Deserialize)]
    struct Time(#[serde(deserialize_with = "rfc3339")] DateTime<Utc>);
    Ok(Option::<Time>::deserialize(deserializer)?.map(|t| t.0))
}

/// Reads a record's time as chrono writes it (RFC 3339, e.g. `2026-11-30T02:16:20.123Z`) with
/// chrono's dedicated RFC 3339 reader; anything else goes through chrono's general reader, which
/// is what the default deserialiser does, only several times slower. Every held sighting reads two
/// of these (a cycle's batch look-up parses each held record).
pub(super) fn rfc3339<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<DateTime<Utc>, D::Error> {
    struct Time;
    impl serde::de::Visitor<'_> for Time {
        type Value = DateTime<Utc>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an RFC 3339 date and time")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
            DateTime::parse_from_rfc3339(text)
                .or_else(|_| text.parse::<DateTime<chrono::FixedOffset>>())
                .map(|t| t.with_timezone(&Utc))
                .map_err(E::custom)
        }
    }
    deserializer.deserialize_str(Time)
}

impl fmt::Debug for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim")
            .field("state", &self.state)
            .field("owner", &self.owner)
            .field("claimed_at", &self.claimed_at)
            .field("updated_at", &self.updated_at)
            .field("title", &self.title)
            .field("aliases", &self.aliases)
            .field("post_id", &self.post_id)
            .field("detail", &self.detail)
            .field("attempts", &self.attempts)
            .field("deadline", &self.deadline)
            .field("text", &self.text)
            .field("dedupe_key", &self.dedupe_key)
            .field("checked_at", &self.checked_at)
            .field("check", &self.check)
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}

/// The most bytes of an unreadable record quoted in [`Claim::detail`].
const UNREADABLE_QUOTE_BYTES: usize = 120;

/// The largest stored value read as a claim record, bytes. Every record the bot writes is far
/// smaller: its title is cut to [`crate::text::MAX_SHOWN_BYTES`], its post is within a sink's
/// limit (at most 4,096 characters, 16 KiB), its detail a line; an owner name of 64 KiB still
/// reads. A larger value was written by something
/// else: it reads as an unreadable record, held, without being parsed, so a store of hostile
/// 8 MiB values costs a cycle those bytes as read, not a parsed copy of each.
pub const MAX_RECORD_BYTES: usize = 256 * 1024;

impl Claim {
    pub(super) fn with_deadline(
        owner: &str,
        title: &str,
        aliases: &[String],
        now: DateTime<Utc>,
        gives_up_after: Option<Duration>,
    ) -> Claim {
        Claim {
            state: ClaimState::Claimed,
            owner: owner.to_string(),
            token: new_token(),
            claimed_at: now,
            updated_at: now,
            // From a page: bounded as it would be shown, so the record stays a record.
            title: Some(crate::text::bounded(title).into_owned()),
            aliases: aliases.to_vec(),
            post_id: None,
            detail: None,
            attempts: None,
            deadline: gives_up_after
                .and_then(|d| chrono::Duration::from_std(d).ok())
                .and_then(|d| now.checked_add_signed(d)),
            text: None,
            dedupe_key: None,
            checked_at: None,
            check: None,
            replay: None,
            post_cid: None,
            reply_to: None,
        }
    }

    /// Reads a stored record. A value that is not a claim record (written by something else, or
    /// a bare `1` from an older bot) still means "held": it becomes an `unknown` claim whose
    /// detail quotes the value, so the caller never posts over it. A value over
    /// [`MAX_RECORD_BYTES`] is such a value, and is not parsed: its fields (an 8 MiB owner) are
    /// never copied out of it.
    pub(super) fn from_stored(raw: &str) -> Claim {
        if raw.len() > MAX_RECORD_BYTES {
            return Claim::unreadable(raw, &format!("{} bytes, more than a claim record can be", raw.len()));
        }
        serde_json::from_str(raw).unwrap_or_else(|e| {
            // Said in the field's words, not serde's (which name Rust types).
            let what = match e.classify() {
                serde_json::error::Category::Data => "JSON without a claim's fields",
                _ => "not JSON",
            };
            Claim::unreadable(raw, what)
        })
    }

    /// The `unknown` claim a value that is not a claim record reads as: held by
    /// `(unreadable record)`, its detail saying `what` it is and quoting its start.
    fn unreadable(raw: &str, what: &str) -> Claim {
        // Only the start is looked at: the value may be megabytes.
        let mut head = raw.len().min(UNREADABLE_QUOTE_BYTES * 4);
        while !raw.is_char_boundary(head) {
            head -= 1;
        }
        let mut quote: String = raw[..head].chars().filter(|c| !c.is_control()).collect();
        crate::text::cut_to_bytes(&mut quote, UNREADABLE_QUOTE_BYTES);
        Claim {
            state: ClaimState::Unknown,
            owner: "(unreadable record)".to_string(),
            token: String::new(),
            claimed_at: DateTime::<Utc>::UNIX_EPOCH,
            updated_at: DateTime::<Utc>::UNIX_EPOCH,
            title: None,
            aliases: Vec::new(),
            post_id: None,
            detail: Some(format!("not a claim record ({what}): {quote:?}")),
            attempts: None,
            deadline: None,
            text: None,
            dedupe_key: None,
            checked_at: None,
            check: None,
            replay: None,
            post_cid: None,
            reply_to: None,
        }
    }

    pub(super) fn to_stored(&self) -> String {
        // A struct of strings, dates and options always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// How long ago the claim was won, at `now` (zero if the clock went backwards).
    pub fn age(&self, now: DateTime<Utc>) -> Duration {
        age(self.claimed_at, now)
    }

    /// True when the claim is `claimed` and past its owner's deadline (a record without one:
    /// older than `stuck_after`, the reader's own bound): its worker died between claim and
    /// post. Stuck claims are never retried automatically.
    pub fn is_stuck(&self, now: DateTime<Utc>, stuck_after: Duration) -> bool {
        is_stuck(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// The state as operators see it: the stored state, or `stuck`.
    pub fn display_state(&self, now: DateTime<Utc>, stuck_after: Duration) -> ShownState {
        display_state(self.state, self.claimed_at, self.deadline, now, stuck_after)
    }

    /// When a `claimed` record becomes stuck: its owner's deadline, or (a record of an earlier
    /// release) `stuck_after` after it was claimed.
    pub fn stuck_at(&self, stuck_after: Duration) -> DateTime<Utc> {
        stuck_at(self.claimed_at, self.deadline, stuck_after)
    }
}

/// A new claim token: random, so that no other claim's holder can know it.
pub(super) fn new_token() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(super) fn age(claimed_at: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (now - claimed_at).to_std().unwrap_or_default()
}

pub(super) fn stuck_at(
    claimed_at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    stuck_after: Duration,
) -> DateTime<Utc> {
    deadline.unwrap_or_else(|| later_by(claimed_at, stuck_after))
}

/// `t` plus `d`, or the latest time there is when that does not fit (a bound that far off
/// is never reached).
pub fn later_by(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

pub(super) fn is_stuck(
    state: ClaimState,
    claimed_at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    stuck_after: Duration,
) -> bool {
    state == ClaimState::Claimed && now > stuck_at(claimed_at, deadline, stuck_after)
}

pub(super) fn display_state(
    state: ClaimState,
    claimed_at: DateTime<Utc>,
    deadline: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    stuck_after: Duration,
) -> ShownState {
    if is_stuck(state, claimed_at, deadline, now, stuck_after) {
        ShownState::Stuck
    } else {
        ShownState::Stored(state)
    }
}

/// `t` when it is a real time; `None` for the Unix epoch, which is what an unreadable record
/// (no time of its own) reads as, so that it is shown as unknown rather than as 1970.
pub fn known_time(t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    (t != DateTime::<Utc>::UNIX_EPOCH).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_keeps_its_token_out_of_debug() {
        let c = Claim::with_deadline("host:1", "A v B", &["cricbuzz:1".to_string()], Utc::now(), None);
        let back = Claim::from_stored(&c.to_stored());
        assert_eq!(back, c);
        assert!(!format!("{c:?}").contains(&c.token));
    }

    #[test]
    fn record_times_are_read_in_rfc_3339_and_in_the_other_forms_chrono_reads() {
        let record = |at: &str| {
            format!(r#"{{"state":"posted","owner":"h:1","token":"t","claimed_at":"{at}","updated_at":"{at}"}}"#)
        };
        let want = "2026-11-30T02:16:20.5Z".parse::<DateTime<Utc>>().expect("a time");
        for at in [
            "2026-11-30T02:16:20.5Z",
            "2026-11-30T03:16:20.5+01:00",
            "2026-11-30T02:16:20.500000000Z",
            "2026-11-30 02:16:20.5Z",
            "2026-11-30T02:16:20.5z",
        ] {
            let c = Claim::from_stored(&record(at));
            assert_eq!(
                (c.state, c.claimed_at, c.updated_at),
                (ClaimState::Posted, want, want),
                "{at}"
            );
        }
        let c = Claim::from_stored(&record("yesterday"));
        assert_eq!(
            c.state,
            ClaimState::Unknown,
            "an unreadable time is an unreadable record, still held"
        );
    }

    #[test]
    fn a_record_of_an_earlier_release_reads_its_tweet_id_as_the_post_id_and_is_written_back_with_post_id() {
        let old = r#"{"state":"posted","owner":"h:1","token":"t","claimed_at":"2026-07-17T10:30:00Z","updated_at":"2026-07-17T10:30:01Z","tweet_id":"1800000000000000009"}"#;
        let claim = Claim::from_stored(old);
        assert_eq!(
            (claim.state, claim.post_id.as_deref()),
            (ClaimState::Posted, Some("1800000000000000009"))
        );
        let stored = claim.to_stored();
        assert!(stored.contains(r#""post_id":"1800000000000000009""#), "{stored}");
        assert!(!stored.contains("tweet_id"), "{stored}");
        assert_eq!(Claim::from_stored(&stored), claim);
    }

    #[test]
    fn a_value_over_the_record_bound_is_held_as_unreadable_without_being_parsed() {
        let mut c = Claim::with_deadline("h:1", "A v B", &[], Utc::now(), None);
        c.owner = "O".repeat(MAX_RECORD_BYTES);
        let over = c.to_stored();
        assert!(over.len() > MAX_RECORD_BYTES);
        let read = Claim::from_stored(&over);
        assert_eq!(
            (read.state, read.owner.as_str(), read.token.as_str()),
            (ClaimState::Unknown, "(unreadable record)", "")
        );
        let detail = read.detail.unwrap_or_default();
        assert!(
            detail.starts_with(&format!(
                "not a claim record ({} bytes, more than a claim record can be): \"{{\\\"state\\\":\\\"claimed\\\"",
                over.len()
            )),
            "{detail}"
        );
        assert!(detail.len() < 300, "{detail}");
        // A title from a page is bounded when written: the record stays readable.
        let long = Claim::with_deadline("h:1", &"T".repeat(1 << 20), &[], Utc::now(), None);
        assert_eq!(Claim::from_stored(&long.to_stored()).state, ClaimState::Claimed);
        assert!(long.title.unwrap_or_default().ends_with("… (1048576 bytes in all)"));
    }

    #[test]
    fn each_state_is_stored_and_shown_by_its_one_word() {
        for s in ClaimState::ALL {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<ClaimState>(&json).unwrap(), *s);
            assert_eq!(ShownState::Stored(*s).to_string(), s.as_str());
        }
        assert_eq!(ShownState::Stuck.as_str(), "stuck");
        assert_eq!(ShownState::from_label("stuck"), Some(ShownState::Stuck));
        let e = serde_json::from_str::<ClaimState>(r#""lost""#).unwrap_err().to_string();
        assert!(
            e.contains("\"lost\" is not a claim state; expected one of claimed, posted, unknown, failed, seeded"),
            "{e}"
        );
    }
}
