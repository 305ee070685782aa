//! The identities of a match, typed: [`Identity`] (one source's own id for its listing, or the
//! match key as an identity) and [`Identities`] (every identity one sighting gives its match,
//! and where a claim on it may already be). This module is the one place an identity's text is
//! written or read: the `key:` mark of a key used as an identity is known here only.

use super::{Match, MatchKey, Site};
use serde::{Serialize, Serializer};
use std::fmt;

/// What marks a match key used as an identity (`key:2026-07-17_…`), so that it can never be
/// confused with a source's own id (`cricbuzz:158062`).
const KEY_MARK: &str = "key:";

/// One identity of a match, as claims record it: a source's own id for its listing
/// (`cricbuzz:158062`: the site, then its id, stable for the life of that listing on that
/// site), or the match key as an identity (`key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i`).
///
/// Its text ([`Identity::as_str`]) is what a store keeps: a claim record's `aliases`, and the
/// pointer `<prefix>id:<identity>` naming the key of the claim that recorded it. Built from a
/// match ([`Match::identity`], [`Identity::of_key`]) or parsed once from what an operator typed
/// ([`Identity::named`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity(String);

impl Identity {
    /// The identity under which the site `site` knows its listing `id`: `site:id`.
    pub fn source(site: Site, id: &str) -> Identity {
        let site = site.as_str();
        let mut text = String::with_capacity(site.len() + 1 + id.len());
        text.push_str(site);
        text.push(':');
        text.push_str(id);
        Identity(text)
    }

    /// The match key `key` as an identity: `key:<key>`.
    pub fn of_key(key: &MatchKey) -> Identity {
        Identity(format!("{KEY_MARK}{key}"))
    }

    /// Reads an identity written out: `key:<match key>`, or `<site>:<id>` where the site is a
    /// name of lower-case letters, digits and `-` starting with a letter (any site's, also one
    /// this release does not read) and the id is not empty. `None` for anything else, and for
    /// text with whitespace or control characters (no identity an operator can name has them).
    pub fn parse(raw: &str) -> Option<Identity> {
        let raw = raw.trim();
        if let Some(key) = raw.strip_prefix(KEY_MARK) {
            return MatchKey::parse(key)
                .filter(|k| k.as_str() == key)
                .map(|k| Identity::of_key(&k));
        }
        let (site, id) = raw.split_once(':')?;
        let site_ok = site.starts_with(|c: char| c.is_ascii_lowercase())
            && site
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        let id_ok = !id.is_empty() && !id.chars().any(|c| c.is_whitespace() || c.is_control());
        (site_ok && id_ok).then(|| Identity(raw.to_string()))
    }

    /// Reads what an operator typed to name a claim (`claims show`, `claims release`): an
    /// identity as [`Identity::parse`] reads it, else a bare match key, which names the claim
    /// as its key identity does (the claim stored under that key, or the claim that recorded
    /// it). `None` when it is neither.
    pub fn named(raw: &str) -> Option<Identity> {
        Identity::parse(raw).or_else(|| MatchKey::parse(raw).map(|k| Identity::of_key(&k)))
    }

    /// The identity's text, as stores keep it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The match key of a key identity (`key:<key>`); `None` for a source's id.
    pub fn key(&self) -> Option<MatchKey> {
        self.0.strip_prefix(KEY_MARK).and_then(MatchKey::parse)
    }

    /// True for a key identity (`key:<key>`), false for a source's own id.
    pub fn is_key(&self) -> bool {
        self.0.starts_with(KEY_MARK)
    }

    /// True when this is `key` as an identity.
    pub fn is_key_of(&self, key: &MatchKey) -> bool {
        self.0.strip_prefix(KEY_MARK) == Some(key.as_str())
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Written as its text (`"cricbuzz:158062"`), as stores and `--json` output show it.
impl Serialize for Identity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl PartialEq<str> for Identity {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Identity {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Identity {
    fn eq(&self, other: &String) -> bool {
        self.0 == *other
    }
}

/// Every identity one sighting gives its match, and where a claim on it may already be.
///
/// - [`Identities::key`]: the cross-source key of this sighting ([`MatchKey::for_match`]); a
///   claim won on this sighting is stored under it.
/// - [`Identities::ids`]: what the claim records as the match's identities: each listing
///   source's own id (`cricbuzz:158062`, stable for the life of a listing on that site) and
///   the cross-source key as an identity.
/// - [`Identities::lookups`]: where a claim on this match may already be, in the order they
///   are tried: the key itself, each identity, then the key one day earlier and one day later
///   (a start moved across UTC midnight, a reserve day), then the previous release's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identities {
    /// The cross-source key of this sighting.
    pub key: MatchKey,
    /// Each source's own id, then the key as an identity when the match has a start time.
    pub ids: Vec<Identity>,
    /// The other keys a claim on this match may be stored under (±1 day, the legacy key).
    pub other_keys: Vec<MatchKey>,
}

/// One place a claim on a match may be found: a claim stored under a key, or an identity
/// recorded by a claim (which names the key its claim is stored under).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The claim stored under this key.
    Key(MatchKey),
    /// The claim that recorded this identity.
    Id(Identity),
}

impl Lookup {
    /// The identity this look-up finds a claim through: the key's, or the identity itself.
    pub fn via(&self) -> Identity {
        match self {
            Lookup::Key(k) => Identity::of_key(k),
            Lookup::Id(i) => i.clone(),
        }
    }
}

impl Identities {
    /// The identities the listing `m` gives its match: its source's own id, and (when it has
    /// a start time) its key as an identity; with the keys a day either side and the previous
    /// release's key as other places a claim may be. This is the one place a match's
    /// identities are derived.
    pub fn of(m: &Match) -> Identities {
        let key = MatchKey::for_match(m);
        let mut ids = vec![m.identity()];
        let mut other_keys = Vec::new();
        if m.start_time.is_some() {
            ids.push(Identity::of_key(&key));
            other_keys.extend([key.shifted(-1), key.shifted(1)].into_iter().flatten());
            let legacy = MatchKey::legacy_for_match(m);
            if legacy != key {
                other_keys.push(legacy);
            }
        }
        Identities { key, ids, other_keys }
    }

    /// Adds the source identity `id` (another source listing the same match this cycle).
    pub fn add_source(&mut self, id: Identity) {
        if !self.ids.contains(&id) {
            // Source ids first, the key last: kept in that order for people.
            let at = self.ids.iter().position(Identity::is_key).unwrap_or(self.ids.len());
            self.ids.insert(at, id);
        }
    }

    /// The identities of the sources that listed the match (`site:id` each), first one first.
    pub fn sources(&self) -> impl Iterator<Item = &Identity> {
        self.ids.iter().filter(|i| !i.is_key())
    }

    /// Where a claim on this match may be, in the order to try them (see the type's doc).
    pub fn lookups(&self) -> Vec<Lookup> {
        let mut out = Vec::with_capacity(1 + self.ids.len() + 2 * self.other_keys.len());
        out.push(Lookup::Key(self.key.clone()));
        out.extend(self.ids.iter().cloned().map(Lookup::Id));
        for k in &self.other_keys {
            out.push(Lookup::Key(k.clone()));
            // A claim stored under another key may have recorded this one as an identity.
            out.push(Lookup::Id(Identity::of_key(k)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::sample_match as m;

    fn texts(ids: &[Identity]) -> Vec<&str> {
        ids.iter().map(Identity::as_str).collect()
    }

    #[test]
    fn a_match_without_start_time_has_its_source_id_alone() {
        let mut x = m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", None);
        x.start_time = None;
        let ids = Identities::of(&x);
        assert_eq!(texts(&ids.ids), ["cricbuzz:158062"]);
        assert!(ids.other_keys.is_empty());
    }

    #[test]
    fn identities_are_each_source_id_then_the_key_and_lookups_try_a_day_either_side() {
        let x = m(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh", Some("2nd T20I"));
        let mut ids = Identities::of(&x);
        ids.add_source(Identity::source(Site::Espncricinfo, "1530000"));
        ids.add_source(x.identity());
        assert_eq!(
            texts(&ids.ids),
            [
                "cricbuzz:158062",
                "espncricinfo:1530000",
                "key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
            ]
        );
        assert_eq!(
            ids.sources().map(Identity::as_str).collect::<Vec<_>>(),
            ["cricbuzz:158062", "espncricinfo:1530000"]
        );
        let keys: Vec<String> = ids
            .lookups()
            .into_iter()
            .map(|l| match l {
                Lookup::Key(k) => format!("K {k}"),
                Lookup::Id(i) => format!("I {i}"),
            })
            .collect();
        assert_eq!(
            keys,
            [
                "K 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
                "I cricbuzz:158062",
                "I espncricinfo:1530000",
                "I key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
                "K 2026-07-16_bangladesh-v-zimbabwe_2nd-t20i",
                "I key:2026-07-16_bangladesh-v-zimbabwe_2nd-t20i",
                "K 2026-07-18_bangladesh-v-zimbabwe_2nd-t20i",
                "I key:2026-07-18_bangladesh-v-zimbabwe_2nd-t20i",
            ]
        );
        assert_eq!(
            ids.lookups()[4].via().as_str(),
            "key:2026-07-16_bangladesh-v-zimbabwe_2nd-t20i"
        );
    }

    #[test]
    fn an_operator_names_a_claim_by_a_source_id_a_key_identity_or_a_bare_key() {
        let key = MatchKey::parse("2026-07-17_a-v-b_final").unwrap();
        let source = Identity::named(" cricbuzz:158062 ").unwrap();
        assert_eq!(
            (source.as_str(), source.is_key(), source.key()),
            ("cricbuzz:158062", false, None)
        );
        for typed in ["key:2026-07-17_a-v-b_final", "2026-07-17_a-v-b_final"] {
            let named = Identity::named(typed).unwrap();
            assert_eq!(named, Identity::of_key(&key), "{typed}");
            assert_eq!(named.key(), Some(key.clone()));
            assert!(named.is_key_of(&key));
        }
        // A site unknown to this release is still a site; a key's date is no site.
        assert_eq!(Identity::parse("cricapi-2:x").unwrap().as_str(), "cricapi-2:x");
        assert_eq!(Identity::parse("2026-07-17:india:zimbabwe"), None);
        assert_eq!(
            Identity::named("2026-07-17:india:zimbabwe")
                .unwrap()
                .key()
                .unwrap()
                .as_str(),
            "2026-07-17:india:zimbabwe"
        );
        for bad in ["", "Bad Key", "key:", "key:a b", "cricbuzz:", "Cricbuzz:1", "a:b\u{0}"] {
            assert_eq!(Identity::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Identity::named("Bad Key"), None);
        assert_eq!(
            serde_json::to_string(&[Identity::of_key(&key)]).unwrap(),
            r#"["key:2026-07-17_a-v-b_final"]"#
        );
    }
}
