//! What a store receives and answers in the protocol's atomic steps: the claim of a match
//! under all its identities ([`IdentityClaim`], answered by [`IdentityReply`]), and a
//! compare-and-set or compare-and-delete on a record's token ([`Swapped`]). What a store must
//! do with them is the rule (`rule.rs`); how each store does it is its own file's.

use super::error::ClaimError;
use super::key::StoreKey;
use super::outcome::Checked;
use super::record::Claim;
use crate::cricket::{Facts, Identity};

/// Where a claim on a match may be, as a store names it: a record key, an identity's pointer
/// key whose value names a record key, or a fixture's list naming records with their facts.
#[derive(Debug, Clone)]
pub(crate) enum StoredLookup {
    /// `<prefix>match:<key>`: a claim record. `compared`: it holds the match only when its
    /// facts agree and no rival names it (every record key but the one beside ours).
    Record {
        /// The record's key.
        key: StoreKey,
        /// Whether it is compared.
        compared: bool,
    },
    /// `<prefix>id:<identity>`: the key (without `<prefix>match:`) of the claim that recorded
    /// the identity. `compared`: for a key identity (a source's own id holds at once).
    Pointer {
        /// The pointer's key.
        key: StoreKey,
        /// Whether what it leads to is compared.
        compared: bool,
    },
    /// `<prefix>id:fixture:<…>`: the claims on a fixture, each with its facts ([`entries`]):
    /// compared.
    Fixture(StoreKey),
}

impl StoredLookup {
    /// True when what this look-up finds is compared (see the variants).
    pub(super) fn is_compared(&self) -> bool {
        match self {
            StoredLookup::Record { compared, .. } | StoredLookup::Pointer { compared, .. } => *compared,
            StoredLookup::Fixture(_) => true,
        }
    }
}

/// The entries of a fixture's list as stored: one line per claim, `<match key> <facts>`
/// (facts as [`crate::cricket::Facts::to_stored`] writes them, possibly empty), in the order
/// listed. A line that is not one is passed over.
pub(crate) fn entries(list: &str) -> impl Iterator<Item = (&str, &str)> {
    list.split('\n').filter_map(|line| {
        let (key, facts) = line.split_once(' ').unwrap_or((line, ""));
        (!key.is_empty()).then_some((key, facts))
    })
}

/// A fixture's list as stored, from its entries (see [`entries`]).
pub(crate) fn list_text<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (key, facts) in entries {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(key);
        out.push(' ');
        out.push_str(facts);
    }
    out
}

/// The pointer of one identity of the match, `<prefix>id:<identity>`, whose value names the
/// key (without `<prefix>match:`) of the claim that recorded the identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pointer {
    /// Where it is stored.
    pub key: StoreKey,
    /// True for the pointer of the sighting's own key (its key as an identity): not written
    /// when our record is stored under that key (it answers for it), nor when the holder is
    /// stored under that same key (a race lost); written when a claim under another key holds
    /// the match, or ours is stored beside it, so the key leads to it.
    pub own: bool,
}

/// The record a claim writes when it wins.
#[derive(Debug, Clone)]
pub(crate) struct NewRecord {
    /// Where it goes: `<prefix>match:<key>`.
    pub key: StoreKey,
    /// The record, as stored.
    pub text: String,
    /// Its token (also inside `text`), for a store that must take back a claim it won.
    pub token: String,
    /// When it is due for a reconciliation, Unix milliseconds (its owner's deadline): its
    /// score in Redis' index of unsettled claims (`unsettled.rs`), written with it; `None` for
    /// a settled record, which is not.
    pub due_ms: Option<i64>,
}

/// One atomic claim of a match under all its identities, as every store receives it (see the
/// rule in `rule.rs`).
#[derive(Debug, Clone)]
pub(crate) struct IdentityClaim {
    /// Our record.
    pub record: NewRecord,
    /// The key beside ours (`<prefix>match:<key>_<site>-<id>`), where our record goes when a
    /// record lives under ours (another match of the fixture); `None` without a source id.
    pub beside: Option<StoreKey>,
    /// Where a claim may already be, in the order the rule tries them; the first is our own
    /// record's key.
    pub lookups: Vec<StoredLookup>,
    /// The pointer of each identity of the match (not its fixture's list).
    pub pointers: Vec<Pointer>,
    /// The pointers of the sighting's rivals: a record one names is another match.
    pub rivals: Vec<StoreKey>,
    /// Our fixture's list, where our key (or the holder's) is listed with our facts.
    pub fixture: Option<StoreKey>,
    /// Our facts, as stored; `None` when the sighting has no start (nothing to compare).
    pub facts: Option<String>,
    /// The first-start marker's key, when the claim requires it to exist.
    pub marker: Option<StoreKey>,
    /// Time to live of everything written, seconds.
    pub ttl_secs: u64,
}

impl IdentityClaim {
    /// The match key our record is stored under: what our pointers name.
    pub(super) fn match_key(&self) -> &str {
        self.record.key.match_key().unwrap_or_default()
    }

    /// The key of the claim on the match key `m` (a pointer's value), under our prefix.
    pub(super) fn record_key_of(&self, m: &str) -> StoreKey {
        StoreKey::claim_named(self.prefix(), m)
    }

    /// The list of the fixture of the match key `m` (a record's key), under our prefix;
    /// `None` for a key without a date.
    pub(super) fn fixture_list_of(&self, m: &str) -> Option<StoreKey> {
        Identity::fixture_of_text(m).map(|f| StoreKey::identity(self.prefix(), f.as_str()))
    }

    /// The prefix of every key of the claim.
    pub(super) fn prefix(&self) -> &str {
        self.record.key.claim_prefix().unwrap_or_default()
    }

    /// Our own key's pointer, when it is among ours (see [`Pointer::own`]).
    pub(super) fn own_pointer(&self) -> Option<&StoreKey> {
        self.pointers.iter().find(|p| p.own).map(|p| &p.key)
    }

    /// True when the facts `listed` (as stored) agree with ours, or we state none.
    pub(super) fn agrees(&self, listed: &str) -> bool {
        self.facts
            .as_deref()
            .is_none_or(|ours| Facts::stored_agree(ours, listed))
    }
}

/// A store's answer to an [`IdentityClaim`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum IdentityReply {
    /// Our record and pointers were written: under our key, or (`beside`) under the key
    /// beside it.
    Won {
        /// True when our record went under [`IdentityClaim::beside`].
        beside: bool,
    },
    /// A claim holds the match. Our pointers that were absent or named no live record now
    /// name it.
    Held(Found),
    /// The marker was required and absent; nothing was written.
    NoMarker,
}

/// The claim the rule found holding the match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Which lookup found it.
    pub index: usize,
    /// The holder's match key, as stored (the record's key without `<prefix>match:`).
    pub key: String,
    /// The holder's record.
    pub record: String,
    /// The facts listed for the holder that agreed with ours (when compared and listed).
    pub facts: Option<String>,
}

/// What a store's compare-and-set or compare-and-delete on a record's token did. Every store
/// answers with one of these; Redis' scripts answer a status (1 applied, 0 not ours, -1 gone,
/// 2 outside its window) and the record as it was, which [`Swapped::from_script`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Swapped {
    /// The record carried the token and was replaced or deleted; here is what it was.
    Applied(String),
    /// The record carries another token (or is not ours to change); here it is, unchanged.
    NotOurs(String),
    /// No live record under the key.
    Gone,
    /// The record carried the token, but the store's clock read outside the change's
    /// [`super::window::Window`] (too early: not stuck yet, still settling; or too late);
    /// here it is, unchanged.
    NotNow(String),
}

impl Swapped {
    /// A compare-and-set script's reply (`lua/transition.lua`, `lua/release.lua`).
    ///
    /// # Errors
    /// [`ClaimError::Protocol`] for a status the scripts never answer.
    pub(crate) fn from_script(op: &'static str, status: i64, record: String) -> Result<Swapped, ClaimError> {
        match status {
            1 => Ok(Swapped::Applied(record)),
            0 => Ok(Swapped::NotOurs(record)),
            -1 => Ok(Swapped::Gone),
            2 => Ok(Swapped::NotNow(record)),
            other => Err(ClaimError::Protocol {
                op,
                detail: format!("store answered status {other}"),
            }),
        }
    }

    /// As the caller sees it: when applied, the record `applied` makes of the one replaced.
    /// A record left alone because the time was outside the change's window reads as one not
    /// ours to change now (only changes with a window, which callers read themselves, meet it).
    pub(super) fn checked(self, applied: impl FnOnce(String) -> Claim) -> Checked {
        match self {
            Swapped::Applied(before) => Checked::Applied(applied(before)),
            Swapped::NotOurs(now) | Swapped::NotNow(now) => Checked::NotOurs(Claim::from_stored(&now)),
            Swapped::Gone => Checked::Gone,
        }
    }
}
