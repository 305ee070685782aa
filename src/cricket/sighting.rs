//! A cycle's sightings: [`Sighting`] (a match as one cycle saw it) and [`Sightings`] (the rule
//! that makes every listing of one match one sighting, and the one that says which listing
//! stands for it).

use super::{Identities, Identity, Links, Match, Site};
use std::collections::HashMap;

/// A match as one cycle saw it: the listing that stands for it (of the site the operator
/// prefers to link to), and every identity the cycle's sources gave it (see [`Identities`]).
#[derive(Debug, Clone)]
pub struct Sighting {
    /// The match as the listing that stands for it describes it; its `url` is the page the
    /// post links to.
    pub m: Match,
    /// Its key, identities and facts.
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

    /// True when a listing of `site` is among this sighting's.
    fn lists_on(&self, site: Site) -> bool {
        self.ids.sources().any(|i| i.is_of_site(site))
    }
}

/// One cycle's sightings, one per match. Two listings are one match when they share a source
/// identity (one site's page and its API), or when they are listed by different sites, name
/// the same two sides (the fixture's teams) and their facts agree ([`super::Facts`]: the
/// start within the tolerance, the same format class, no conflicting fact). Two ids of ONE
/// site are two matches, whatever their facts: within a site, its ids decide. The listing of
/// the site the operator prefers ([`Links`]) stands for the match, the first read among
/// equals; the others add their identities and facts to it.
#[derive(Debug, Default)]
pub struct Sightings {
    list: Vec<Sighting>,
    /// How much each sighting's standing listing is wanted as the link ([`Links`]).
    ranks: Vec<Option<usize>>,
    by_source: HashMap<Identity, usize>,
    /// The sightings of each pair of sides (the fixture's teams, whatever the date).
    by_teams: HashMap<String, Vec<usize>>,
    links: Links,
}

impl Sightings {
    /// No sightings yet; the listing that stands for a match is chosen by `links`.
    pub fn linking(links: Links) -> Sightings {
        Sightings {
            links,
            ..Sightings::default()
        }
    }

    /// Adds the listing `m`: a new sighting, or another source's listing of one already here.
    pub fn add(&mut self, m: Match) {
        let source = m.identity();
        // A listing already seen under its own id adds nothing: its identities are not even
        // derived.
        if self.by_source.contains_key(&source) {
            return;
        }
        let ids = Identities::of(&m);
        let teams = ids.fixture().map(|f| teams_of(f).to_string());
        let same = teams.as_ref().and_then(|t| self.same_match(t, &ids, m.site));
        let rank = self.links.rank(&m);
        match same {
            Some(at) => {
                self.by_source.insert(source, at);
                let seen = &mut self.list[at];
                seen.ids.merge(&ids);
                // A better link stands for the match: lower rank, and any page before none.
                let better = match (rank, self.ranks[at]) {
                    (Some(r), Some(was)) => r < was,
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                if better {
                    seen.m = m;
                    self.ranks[at] = rank;
                }
            }
            None => {
                let at = self.list.len();
                self.by_source.insert(source, at);
                if let Some(t) = teams {
                    self.by_teams.entry(t).or_default().push(at);
                }
                self.list.push(Sighting { m, ids });
                self.ranks.push(rank);
            }
        }
    }

    /// The sighting of the sides `teams` that the listing of `site` with `ids` is one match
    /// with: no listing of `site` among its own (another id of that site is another match),
    /// and its facts agree.
    fn same_match(&self, teams: &str, ids: &Identities, site: Site) -> Option<usize> {
        let facts = ids.facts?;
        self.by_teams.get(teams)?.iter().copied().find(|&at| {
            let seen = &self.list[at];
            !seen.lists_on(site) && seen.ids.facts.is_none_or(|f| f.agrees(&facts))
        })
    }

    /// How many matches were seen.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when no match was seen.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The sightings, in the order their matches were first read: each knowing its rivals
    /// (the source ids of the other matches its sites list on its fixture, see
    /// [`Identities::rivals`]), and linking to the fallback page when no listing of it has a
    /// page of its own.
    pub fn into_vec(mut self) -> Vec<Sighting> {
        for group in self.by_teams.values().filter(|g| g.len() > 1) {
            for &at in group {
                let rivals: Vec<Identity> = group
                    .iter()
                    .filter(|&&other| other != at)
                    .filter(|&&other| {
                        self.list[other]
                            .ids
                            .sources()
                            .any(|i| self.list[at].ids.sources().any(|mine| mine.same_site(i)))
                    })
                    .flat_map(|&other| self.list[other].ids.sources().cloned().collect::<Vec<_>>())
                    .collect();
                self.list[at].ids.rivals = rivals;
            }
        }
        for (s, rank) in self.list.iter_mut().zip(&self.ranks) {
            if rank.is_none() {
                s.m.url = self.links.fallback().clone();
            }
        }
        self.list
    }
}

/// The teams of a fixture identity (`fixture:<date>_<teams>` → `<teams>`).
fn teams_of(fixture: &Identity) -> &str {
    let text = fixture.as_str();
    text.split_once('_').map_or(text, |(_, teams)| teams)
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

    /// `m` on `site` with its own page, described as `desc`, starting `minutes` after 10:30.
    fn described(site: Site, id: &str, desc: &str, minutes: i64) -> Match {
        let mut m = sample_match(site, id, "Sri Lanka", "England", Some(desc));
        m.start_time = m.start_time.map(|t| t + chrono::Duration::minutes(minutes));
        m.url = format!("https://{site}.example/{id}").parse().expect("a URL");
        m
    }

    #[test]
    fn three_sites_wording_one_match_differently_are_one_sighting_linking_to_the_preferred_site() {
        let links = Links::new("espncricinfo", Links::default().fallback().clone()).expect("a preference");
        let mut seen = Sightings::linking(links);
        seen.add(described(Site::Cricketdata, "cd-42", "Super 8, Match 42", -30));
        seen.add(described(Site::Cricbuzz, "87780", "Super 8 Group 2", 0));
        seen.add(described(
            Site::Espncricinfo,
            "1512760",
            "42nd Match, Super Eights, Group 2",
            0,
        ));
        // Another match of the same sides that day: its number conflicts.
        seen.add(described(
            Site::Espncricinfo,
            "1512761",
            "43rd Match, Super Eights, Group 2",
            0,
        ));
        let all = seen.into_vec();
        assert_eq!(all.len(), 2);
        let ids: Vec<&str> = all[0].ids.ids.iter().map(Identity::as_str).collect();
        assert_eq!(
            ids,
            [
                "cricketdata:cd-42",
                "cricbuzz:87780",
                "espncricinfo:1512760",
                "key:2026-07-17_england-v-sri-lanka_42nd-match",
                "key:2026-07-17_england-v-sri-lanka_super-8-group-2",
                "fixture:2026-07-17_england-v-sri-lanka",
            ]
        );
        assert_eq!(all[0].m.url.as_str(), "https://espncricinfo.example/1512760");
        // What the three state, merged: the number is ESPNcricinfo's and CricketData's, the
        // group Cricbuzz's and ESPNcricinfo's, the start the first listing's.
        assert_eq!(
            all[0].ids.facts.map(|f| f.to_string()).as_deref(),
            Some("starts 2026-07-17 10:00 UTC, 20-over, match 42, Super 8, group 2")
        );
        // Each of the two ESPNcricinfo matches knows the other's id as a rival.
        assert_eq!(all[0].ids.rivals, [Identity::source(Site::Espncricinfo, "1512761")]);
        assert_eq!(
            all[1].ids.rivals.iter().map(Identity::as_str).collect::<Vec<_>>(),
            ["cricketdata:cd-42", "cricbuzz:87780", "espncricinfo:1512760"]
        );
    }

    #[test]
    fn a_match_only_cricketdata_lists_links_to_the_fallback_page() {
        let mut seen = Sightings::default();
        seen.add(described(Site::Cricketdata, "cd-42", "Super 8, Match 42", 0));
        let all = seen.into_vec();
        assert_eq!(
            all[0].m.url.as_str(),
            "https://www.cricbuzz.com/cricket-match/live-scores"
        );
    }

    #[test]
    fn two_ids_of_one_site_are_two_matches_whatever_their_facts() {
        let mut seen = Sightings::default();
        seen.add(described(Site::Cricbuzz, "1", "", 0));
        seen.add(described(Site::Cricbuzz, "2", "", 60));
        // Another site's listing half an hour after the first agrees with both (each is
        // within the tolerance): it joins the first read.
        seen.add(described(Site::Espncricinfo, "9", "", 30));
        let all = seen.into_vec();
        assert_eq!(all.len(), 2);
        fn sources(s: &Sighting) -> Vec<&str> {
            s.source_identities().map(Identity::as_str).collect()
        }
        assert_eq!(sources(&all[0]), ["cricbuzz:1", "espncricinfo:9"]);
        assert_eq!(sources(&all[1]), ["cricbuzz:2"]);
        assert_eq!(
            all[1].ids.rivals,
            [
                Identity::source(Site::Cricbuzz, "1"),
                Identity::source(Site::Espncricinfo, "9")
            ]
        );
    }
}
