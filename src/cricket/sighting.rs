//! A cycle's sightings: [`Sighting`] (a match as one cycle saw it) and [`Sightings`] (the rule
//! that makes every listing of one match one sighting).

use super::{Identities, Identity, Match, MatchKey};
use std::collections::HashMap;

/// A match as one cycle saw it: the listing of the first source that showed it, and every
/// identity the cycle's sources gave it (see [`Identities`]).
#[derive(Debug, Clone)]
pub struct Sighting {
    /// The match as the first source listed it.
    pub m: Match,
    /// Its key and identities.
    pub ids: Identities,
}

impl Sighting {
    /// The sighting of `m` by its own source.
    pub fn new(m: Match) -> Sighting {
        let ids = Identities::of(&m);
        Sighting { m, ids }
    }

    /// The identities of the sources that listed it (`site:id` each), first one first.
    pub fn source_identities(&self) -> impl Iterator<Item = &Identity> {
        self.ids.sources()
    }
}

/// One cycle's sightings, one per match: listings that share a source identity (one site's
/// page and its API) or a key (two sites) are one match, whatever else they say; the first
/// listing read stands for it, and the others add their source identities to it.
#[derive(Debug, Default)]
pub struct Sightings {
    list: Vec<Sighting>,
    by_key: HashMap<MatchKey, usize>,
    by_source: HashMap<Identity, usize>,
}

impl Sightings {
    /// Adds the listing `m`: a new sighting, or another source's listing of one already here.
    pub fn add(&mut self, m: Match) {
        let source = m.identity();
        // A listing already seen under its own id adds nothing: its identities are not even
        // derived.
        if self.by_source.contains_key(&source) {
            return;
        }
        let sighting = Sighting::new(m);
        match self.by_key.get(&sighting.ids.key).copied() {
            Some(at) => {
                self.list[at].ids.add_source(source.clone());
                self.by_source.insert(source, at);
            }
            None => {
                self.by_source.insert(source, self.list.len());
                self.by_key.insert(sighting.ids.key.clone(), self.list.len());
                self.list.push(sighting);
            }
        }
    }

    /// How many matches were seen.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when no match was seen.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The sightings, in the order their matches were first read.
    pub fn into_vec(self) -> Vec<Sighting> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{sample_match, Site};

    fn listing(site: Site, id: &str, a: &str, b: &str) -> Match {
        sample_match(site, id, a, b, Some("2nd T20I"))
    }

    #[test]
    fn listings_sharing_a_key_or_a_source_id_are_one_sighting_with_every_source_identity() {
        let mut seen = Sightings::default();
        seen.add(listing(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh"));
        // Another site, the sides the other way round: the same key.
        seen.add(listing(Site::Espncricinfo, "1530000", "Bangladesh", "Zimbabwe"));
        // The first site's listing again, edited so that its key differs: its id decides.
        seen.add(listing(Site::Cricbuzz, "158062", "Zimbabwe", "Bangladesh Women"));
        seen.add(listing(Site::Cricbuzz, "158063", "Zimbabwe", "Nepal"));
        assert_eq!(seen.len(), 2);
        let all = seen.into_vec();
        let sources: Vec<Vec<&str>> = all
            .iter()
            .map(|s| s.source_identities().map(Identity::as_str).collect())
            .collect();
        assert_eq!(
            sources,
            [vec!["cricbuzz:158062", "espncricinfo:1530000"], vec!["cricbuzz:158063"]]
        );
        assert_eq!(
            all[0].m.site,
            Site::Cricbuzz,
            "the first listing read stands for the match"
        );
    }
}
