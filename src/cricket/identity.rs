//! The identities of a match, typed: [`Identity`] (one source's own id for its listing, the
//! match key as an identity, or the fixture: the two sides on a date) and [`Identities`]
//! (every identity one sighting gives its match, what it says of the match, and where a claim
//! on it may already be). This module is the one place an identity's text is written or read:
//! the `key:` and `fixture:` marks are known here only.

use super::{Facts, Match, MatchKey, Site};
use serde::{Serialize, Serializer};
use std::fmt;

/// What marks a match key used as an identity (`key:2026-07-17_…`), so that it can never be
/// confused with a source's own id (`cricbuzz:158062`).
const KEY_MARK: &str = "key:";

/// What marks a fixture identity (`fixture:2024-06-19_south-africa-v-united-states`).
const FIXTURE_MARK: &str = "fixture:";

/// One identity of a match, as claims record it: a source's own id for its listing
/// (`cricbuzz:158062`: the site, then its id, stable for the life of that listing on that
/// site), the match key as an identity (`key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i`), or
/// the fixture (`fixture:2026-07-17_bangladesh-v-zimbabwe`: the two sides, normalised and
/// sorted, on the start's UTC date), which every listing of the match on any site shares, and
/// a double-header's two matches too: a fixture is compared on facts, never taken as the match.
///
/// Its text ([`Identity::as_str`]) is what a store keeps: a claim record's `aliases`, and the
/// pointer `<prefix>id:<identity>` naming the key of the claim that recorded it (for a
/// fixture: the list of the claims on it, each with its facts). Built from a match
/// ([`Match::identity`], [`Identity::of_key`], [`Identity::fixture_of`]) or parsed once from
/// what an operator typed ([`Identity::named`]).
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

    /// The fixture the match key `key` names, as an identity: `fixture:<date>_<teams>`
    /// ([`MatchKey::fixture`]); `None` for a key without a date.
    pub fn fixture_of(key: &MatchKey) -> Option<Identity> {
        Identity::fixture_of_text(key.as_str())
    }

    /// As [`Identity::fixture_of`], for a match key as a store gave it back (not checked as a
    /// [`MatchKey`]).
    pub fn fixture_of_text(key: &str) -> Option<Identity> {
        super::key::fixture_of(key).map(|f| Identity(format!("{FIXTURE_MARK}{f}")))
    }

    /// The same fixture `days` later (earlier when negative); `None` when this is not a
    /// fixture identity.
    pub fn fixture_shifted(&self, days: i64) -> Option<Identity> {
        let fixture = self.0.strip_prefix(FIXTURE_MARK)?;
        let moved = MatchKey::parse(fixture)?.shifted(days)?;
        Some(Identity(format!("{FIXTURE_MARK}{moved}")))
    }

    /// Reads an identity written out: `key:<match key>`, `fixture:<date>_<teams>` (exactly as
    /// [`Identity::fixture_of`] writes one), or `<site>:<id>` where the site is a
    /// name of lower-case letters, digits and `-` starting with a letter (any site's, also one
    /// this release does not read) and the id is not empty. `None` for anything else, and for
    /// text with whitespace or control characters (no identity an operator can name has them).
    pub fn parse(raw: &str) -> Option<Identity> {
        let raw = raw.trim();
        if let Some(fixture) = raw.strip_prefix(FIXTURE_MARK) {
            let clean = !fixture.chars().any(|c| c.is_whitespace() || c.is_control());
            return Identity::fixture_of_text(fixture).filter(|f| clean && f.0 == raw);
        }
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

    /// True for a fixture identity (`fixture:<date>_<teams>`).
    pub fn is_fixture(&self) -> bool {
        self.0.starts_with(FIXTURE_MARK)
    }

    /// True for a source's own id (`cricbuzz:158062`): neither a key nor a fixture.
    pub fn is_source(&self) -> bool {
        !self.is_key() && !self.is_fixture()
    }

    /// The site of a source's own id (`cricbuzz` of `cricbuzz:158062`); `None` for a key or
    /// a fixture.
    pub fn site_name(&self) -> Option<&str> {
        if !self.is_source() {
            return None;
        }
        self.0.split_once(':').map(|(site, _)| site)
    }

    /// True for a source's own id on `site`.
    pub fn is_of_site(&self, site: Site) -> bool {
        self.site_name() == Some(site.as_str())
    }

    /// True when both are source ids of one site (`cricbuzz:1` and `cricbuzz:2`).
    pub fn same_site(&self, other: &Identity) -> bool {
        self.site_name().is_some() && self.site_name() == other.site_name()
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

/// Every identity one sighting gives its match, what it says of the match, and where a claim
/// on it may already be.
///
/// - [`Identities::key`]: the cross-source key of this sighting ([`MatchKey::for_match`]); a
///   claim won on this sighting is stored under it (or, when another match of its fixture
///   holds that key, under [`Identities::alternate`]).
/// - [`Identities::ids`]: what the claim records as the match's identities: each listing
///   source's own id (`cricbuzz:158062`, stable for the life of a listing on that site), the
///   cross-source key as an identity, and the fixture.
/// - [`Identities::facts`]: what the listings say of the match ([`Facts`]), compared with a
///   claim found through anything but the match's own source ids.
/// - [`Identities::rivals`]: the source ids of other matches that the same sites list at the
///   same time on the same fixture: a claim holding one of them is another match, whatever
///   its facts say (a site's own ids decide within that site).
/// - [`Identities::lookups`]: where a claim on this match may already be, in the order they
///   are tried: the key itself, each source id, the key beside it
///   ([`Identities::alternate`]), each key identity, then the key one day earlier and one
///   day later (a start moved across UTC midnight, a reserve day) and the previous release's
///   key, then the claims on the fixture and on the fixture a day either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identities {
    /// The cross-source key of this sighting.
    pub key: MatchKey,
    /// Each source's own id, then the key as an identity and the fixture when the match has a
    /// start time.
    pub ids: Vec<Identity>,
    /// The other keys a claim on this match may be stored under (±1 day, the legacy key).
    pub other_keys: Vec<MatchKey>,
    /// What the listings say of the match; `None` without a start (no fixture to compare on).
    pub facts: Option<Facts>,
    /// Source ids of other matches the same sites list at the same time on the same fixture.
    pub rivals: Vec<Identity>,
}

/// One place a claim on a match may be found: a claim stored under a key, a claim that
/// recorded an identity (which names the key its claim is stored under), or the claims on a
/// fixture (each with its facts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The claim stored under this key: compared on facts.
    Key(MatchKey),
    /// The claim that recorded this identity: held at once for a source's own id, compared
    /// on facts for a key identity.
    Id(Identity),
    /// The claim stored under the key beside the sighting's own, named by its source id (the
    /// second of it): held at once.
    Beside(MatchKey, Identity),
    /// The claims on this fixture, in the order they were recorded: compared on facts.
    Fixture(Identity),
}

impl Lookup {
    /// The identity this look-up finds a claim through: the key's, or the identity itself.
    pub fn via(&self) -> Identity {
        match self {
            Lookup::Key(k) => Identity::of_key(k),
            Lookup::Id(i) | Lookup::Beside(_, i) | Lookup::Fixture(i) => i.clone(),
        }
    }

    /// True when a claim this look-up finds holds the match only if its facts agree with the
    /// sighting's and no rival holds it: everything but the match's own source ids.
    pub fn is_compared(&self) -> bool {
        match self {
            Lookup::Key(_) | Lookup::Fixture(_) => true,
            Lookup::Id(i) => !i.is_source(),
            Lookup::Beside(..) => false,
        }
    }
}

impl Identities {
    /// The identities of a match known by its key and `ids` alone, not from a listing (a claim
    /// made by key: an operator's command, a test, a bench): no other keys, no facts, no rivals.
    pub fn known_by(key: MatchKey, ids: Vec<Identity>) -> Identities {
        Identities {
            key,
            ids,
            other_keys: Vec::new(),
            facts: None,
            rivals: Vec::new(),
        }
    }

    /// The identities the listing `m` gives its match: its source's own id, and (when it has
    /// a start time) its key as an identity and its fixture, with what it says of the match;
    /// the keys a day either side and the previous release's key as other places a claim may
    /// be. This is the one place a match's identities are derived.
    pub fn of(m: &Match) -> Identities {
        let key = MatchKey::for_match(m);
        let mut ids = vec![m.identity()];
        let mut other_keys = Vec::new();
        let mut facts = None;
        if m.start_time.is_some() {
            ids.push(Identity::of_key(&key));
            ids.extend(Identity::fixture_of(&key));
            other_keys.extend([key.shifted(-1), key.shifted(1)].into_iter().flatten());
            let legacy = MatchKey::legacy_for_match(m);
            if legacy != key {
                other_keys.push(legacy);
            }
            facts = Some(Facts::of(m));
        }
        Identities {
            key,
            ids,
            other_keys,
            facts,
            rivals: Vec::new(),
        }
    }

    /// Adds the source identity `id` (another source listing the same match this cycle).
    pub fn add_source(&mut self, id: Identity) {
        if !self.ids.contains(&id) {
            // Source ids first, then keys and the fixture: kept in that order for people.
            let at = self.ids.iter().position(|i| !i.is_source()).unwrap_or(self.ids.len());
            self.ids.insert(at, id);
        }
    }

    /// Adds what another listing of the same match gives it: its source ids, its key as an
    /// identity (before the fixture), and the facts it states that these do not.
    pub fn merge(&mut self, other: &Identities) {
        for id in other.sources() {
            self.add_source(id.clone());
        }
        for key_id in other.ids.iter().filter(|i| i.is_key()) {
            if !self.ids.contains(key_id) {
                let at = self.ids.iter().position(Identity::is_fixture).unwrap_or(self.ids.len());
                self.ids.insert(at, key_id.clone());
            }
        }
        self.facts = match (self.facts, other.facts) {
            (Some(a), Some(b)) => Some(a.merged(&b)),
            (a, b) => a.or(b),
        };
    }

    /// The identities of the sources that listed the match (`site:id` each), first one first.
    pub fn sources(&self) -> impl Iterator<Item = &Identity> {
        self.ids.iter().filter(|i| i.is_source())
    }

    /// The fixture of the match (`fixture:<date>_<teams>`), when it has a start time.
    pub fn fixture(&self) -> Option<&Identity> {
        self.ids.iter().find(|i| i.is_fixture())
    }

    /// The key the match is stored under when another match of its fixture holds
    /// [`Identities::key`] (a double-header's two listings derive one key): the key beside it,
    /// named by the first source id ([`MatchKey::beside`]); `None` without a source id.
    pub fn alternate(&self) -> Option<MatchKey> {
        let first = self.sources().next()?;
        Some(self.key.beside(first.as_str())).filter(|k| *k != self.key)
    }

    /// Where a claim on this match may be, in the order to try them (see the type's doc).
    pub fn lookups(&self) -> Vec<Lookup> {
        let mut out = Vec::with_capacity(4 + self.ids.len() + 2 * self.other_keys.len());
        out.push(Lookup::Key(self.key.clone()));
        out.extend(self.sources().cloned().map(Lookup::Id));
        if let (Some(beside), Some(first)) = (self.alternate(), self.sources().next()) {
            out.push(Lookup::Beside(beside, first.clone()));
        }
        out.extend(self.ids.iter().filter(|i| i.is_key()).cloned().map(Lookup::Id));
        for k in &self.other_keys {
            out.push(Lookup::Key(k.clone()));
            // A claim stored under another key may have recorded this one as an identity.
            out.push(Lookup::Id(Identity::of_key(k)));
        }
        if let Some(fixture) = self.fixture() {
            out.push(Lookup::Fixture(fixture.clone()));
            out.extend(
                [-1, 1]
                    .iter()
                    .filter_map(|d| fixture.fixture_shifted(*d))
                    .map(Lookup::Fixture),
            );
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
                "fixture:2026-07-17_bangladesh-v-zimbabwe",
            ]
        );
        assert_eq!(
            ids.fixture().map(Identity::as_str),
            Some("fixture:2026-07-17_bangladesh-v-zimbabwe")
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
                Lookup::Beside(k, i) => format!("B {k} ({i})"),
                Lookup::Fixture(f) => format!("F {f}"),
            })
            .collect();
        assert_eq!(
            keys,
            [
                "K 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
                "I cricbuzz:158062",
                "I espncricinfo:1530000",
                "B 2026-07-17_bangladesh-v-zimbabwe_2nd-t20i_cricbuzz-158062 (cricbuzz:158062)",
                "I key:2026-07-17_bangladesh-v-zimbabwe_2nd-t20i",
                "K 2026-07-16_bangladesh-v-zimbabwe_2nd-t20i",
                "I key:2026-07-16_bangladesh-v-zimbabwe_2nd-t20i",
                "K 2026-07-18_bangladesh-v-zimbabwe_2nd-t20i",
                "I key:2026-07-18_bangladesh-v-zimbabwe_2nd-t20i",
                "F fixture:2026-07-17_bangladesh-v-zimbabwe",
                "F fixture:2026-07-16_bangladesh-v-zimbabwe",
                "F fixture:2026-07-18_bangladesh-v-zimbabwe",
            ]
        );
        let lookups = ids.lookups();
        assert_eq!(
            lookups[5].via().as_str(),
            "key:2026-07-16_bangladesh-v-zimbabwe_2nd-t20i"
        );
        // The match's own source ids (and the key beside its key) hold it at once; the rest
        // are compared on facts.
        let compared: Vec<bool> = lookups.iter().map(Lookup::is_compared).collect();
        assert_eq!(
            compared,
            [true, false, false, false, true, true, true, true, true, true, true, true]
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
        let fixture = Identity::parse("fixture:2026-07-17_a-v-b").unwrap();
        assert!(fixture.is_fixture() && !fixture.is_source() && !fixture.is_key());
        assert_eq!(fixture, Identity::fixture_of(&key).unwrap());
        assert_eq!(
            fixture.fixture_shifted(-1).unwrap().as_str(),
            "fixture:2026-07-16_a-v-b"
        );
        for bad in [
            "fixture:",
            "fixture:a-v-b",
            "fixture:2026-07-17_a-v-b_final",
            "fixture:2026-07-17_a b",
        ] {
            assert_eq!(Identity::parse(bad), None, "{bad:?}");
        }
        assert_eq!(source.site_name(), Some("cricbuzz"));
        assert!(source.same_site(&Identity::parse("cricbuzz:2").unwrap()));
        assert!(!source.same_site(&fixture) && fixture.site_name().is_none());
        assert_eq!(
            serde_json::to_string(&[Identity::of_key(&key)]).unwrap(),
            r#"["key:2026-07-17_a-v-b_final"]"#
        );
    }
}
