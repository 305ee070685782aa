//! Which page a post links to ([`Links`]): of the listings of one match, the one whose site the
//! operator prefers (`LINK_PREFERENCE`), and for a match no site with match pages lists (a
//! CricketData-only match: cricapi publishes no page per match, and the
//! `cricketdata.org/match/<id>` its parser builds opens nothing) the page `LINK_FALLBACK`
//! names.

use super::{Match, Site};
use url::Url;

/// Where the link of a post goes by default when no site with match pages lists the match:
/// Cricbuzz's live-scores page, which lists the current, recent and upcoming matches (the
/// page of `fixtures/cricbuzz/live-scores_2026-07-17.html`).
pub const DEFAULT_FALLBACK: &str = "https://www.cricbuzz.com/cricket-match/live-scores";

/// The operator's preference of links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    /// Sites whose match pages to link to, most preferred first; sites not named come after
    /// them, in the order the sources are configured.
    preferred: Vec<Site>,
    /// The page linked to when no listing has a match page.
    fallback: Url,
}

/// A `LINK_PREFERENCE` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// A name that is no site.
    #[error("{0:?} is not a site: name cricbuzz, espncricinfo or web (most preferred first)")]
    Unknown(String),
    /// CricketData, whose listings have no page to link to.
    #[error("cricketdata publishes no match pages, so its link is never preferred: a match only it lists links to LINK_FALLBACK")]
    NoPages,
}

impl Default for Links {
    /// No preference: the first listing read (the sources' configured order), and
    /// [`DEFAULT_FALLBACK`].
    fn default() -> Links {
        Links {
            preferred: Vec::new(),
            fallback: Url::parse(DEFAULT_FALLBACK).unwrap_or_else(|_| unreachable!("a valid URL")),
        }
    }
}

impl Site {
    /// True when the site's listings link to a page a reader can open: every site's but
    /// CricketData's (cricapi has no page per match).
    pub fn has_match_pages(self) -> bool {
        self != Site::Cricketdata
    }

    /// The site named `name` (`cricbuzz`, `espncricinfo`, `cricketdata`, `web`; any case).
    pub fn named(name: &str) -> Option<Site> {
        [Site::Cricbuzz, Site::Espncricinfo, Site::Cricketdata, Site::Web]
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

impl Links {
    /// Links to the sites `preferred` names (comma- or space-separated, most preferred first),
    /// else to `fallback`.
    ///
    /// # Errors
    /// [`LinkError`] for a name that is no site, or CricketData's.
    pub fn new(preferred: &str, fallback: Url) -> Result<Links, LinkError> {
        let mut sites = Vec::new();
        for name in preferred.split([',', ' ']).map(str::trim).filter(|n| !n.is_empty()) {
            let site = Site::named(name).ok_or_else(|| LinkError::Unknown(name.to_string()))?;
            if !site.has_match_pages() {
                return Err(LinkError::NoPages);
            }
            if !sites.contains(&site) {
                sites.push(site);
            }
        }
        Ok(Links {
            preferred: sites,
            fallback,
        })
    }

    /// The page linked to when no listing has a match page.
    pub fn fallback(&self) -> &Url {
        &self.fallback
    }

    /// How much `m`'s link is wanted: lower is better; `None` when it opens no page.
    pub(super) fn rank(&self, m: &Match) -> Option<usize> {
        if !m.site.has_match_pages() {
            return None;
        }
        Some(
            self.preferred
                .iter()
                .position(|s| *s == m.site)
                .unwrap_or(self.preferred.len()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preference_names_sites_with_match_pages_only() {
        let fallback = Url::parse(DEFAULT_FALLBACK).unwrap();
        let links = Links::new(" ESPNcricinfo, cricbuzz ", fallback.clone()).unwrap();
        assert_eq!(links.preferred, [Site::Espncricinfo, Site::Cricbuzz]);
        assert_eq!(Links::new("", fallback.clone()).unwrap(), Links::default());
        assert_eq!(
            Links::new("cricbuzz,cricinfo", fallback.clone()),
            Err(LinkError::Unknown("cricinfo".into()))
        );
        assert_eq!(Links::new("cricketdata", fallback), Err(LinkError::NoPages));
    }
}
