//! Sources: where score pages come from ([`SourceSpec`]), how they are fetched ([`fetch`]) and
//! which parser reads them ([`SourceKind`]). Parsers are pure functions over page text.

pub mod cricbuzz;
mod error;
pub mod espncricinfo;
pub mod fetch;

pub use error::ParseError;

use crate::cricket::Match;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use url::Url;

/// Which parser reads a page. A closed set: each variant is one layout we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// Cricbuzz live-scores page, 2026 Next.js layout ([`cricbuzz::parse`]).
    Cricbuzz,
    /// ESPNcricinfo pages carrying `__NEXT_DATA__` ([`espncricinfo::parse`]).
    Espncricinfo,
}

/// Every kind, for error messages and `--help`.
pub const KINDS: &[SourceKind] = &[SourceKind::Cricbuzz, SourceKind::Espncricinfo];

impl SourceKind {
    /// The name used in `KIND=LOCATION` (`cricbuzz`, `espncricinfo`).
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Cricbuzz => "cricbuzz",
            SourceKind::Espncricinfo => "espncricinfo",
        }
    }

    /// Parses `page` with this kind's parser.
    ///
    /// # Errors
    /// [`ParseError`] when the page is empty, not this layout, or lists no match.
    pub fn parse(self, page: &str) -> Result<Vec<Match>, ParseError> {
        match self {
            SourceKind::Cricbuzz => cricbuzz::parse(page),
            SourceKind::Espncricinfo => espncricinfo::parse(page),
        }
    }

    /// Guesses the kind of `page` from markers each layout carries. `None` when no known
    /// layout's marker is present.
    pub fn detect(page: &str) -> Option<SourceKind> {
        if page.contains("self.__next_f.push") && page.contains("matchInfo") {
            Some(SourceKind::Cricbuzz)
        } else if page.contains("__NEXT_DATA__") {
            Some(SourceKind::Espncricinfo)
        } else {
            None
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SourceKind {
    type Err = String;
    fn from_str(s: &str) -> Result<SourceKind, String> {
        KINDS
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown source kind {s:?}; known kinds: {}", kind_list()))
    }
}

/// "cricbuzz, espncricinfo".
pub fn kind_list() -> String {
    KINDS.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
}

/// Where a page is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An `http://` or `https://` URL.
    Url(Url),
    /// A local file.
    File(PathBuf),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Url(u) => write!(f, "{u}"),
            Location::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// One configured source: `KIND=LOCATION`, or a bare location whose kind is detected from the
/// page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// The parser, when named; otherwise detected from each fetched page.
    pub kind: Option<SourceKind>,
    /// Where the page is.
    pub location: Location,
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Some(k) => write!(f, "{k}={}", self.location),
            None => write!(f, "{}", self.location),
        }
    }
}

impl FromStr for SourceSpec {
    type Err = String;

    /// Reads `KIND=LOCATION` or `LOCATION`. A location starting `http://` or `https://` is a
    /// URL; anything else is a file path.
    fn from_str(raw: &str) -> Result<SourceSpec, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err("empty source".into());
        }
        let (kind, loc) = match raw.split_once('=') {
            Some((k, rest)) if !k.contains(['/', ':', '.']) => (Some(k.parse::<SourceKind>()?), rest.trim()),
            _ => (None, raw),
        };
        let location = if loc.starts_with("http://") || loc.starts_with("https://") {
            Location::Url(Url::parse(loc).map_err(|e| format!("source {loc:?} is not a valid URL: {e}"))?)
        } else if let Some(scheme) = loc.split_once("://").map(|(s, _)| s) {
            return Err(format!(
                "source {loc:?}: scheme {scheme:?} is not supported (use http, https or a file path)"
            ));
        } else {
            Location::File(PathBuf::from(loc))
        };
        Ok(SourceSpec { kind, location })
    }
}

/// Why one source yielded no matches this cycle. Each names the source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The page could not be fetched.
    #[error("source {source_name}: {error}")]
    Fetch {
        /// The source as configured.
        source_name: String,
        /// What went wrong.
        #[source]
        error: fetch::FetchError,
    },
    /// The page was fetched but is not the layout its parser reads.
    #[error("source {source_name} ({kind}): {error}")]
    Parse {
        /// The source as configured.
        source_name: String,
        /// The parser used.
        kind: SourceKind,
        /// What was missing.
        #[source]
        error: ParseError,
    },
    /// No kind was named and the page carries no known layout's marker.
    #[error(
        "source {source_name}: cannot tell which layout this page is; name it as KIND=LOCATION with one of: {}",
        kind_list()
    )]
    UnknownKind {
        /// The source as configured.
        source_name: String,
    },
}

/// Reads `spec` with `fetcher` and parses it.
///
/// # Errors
/// [`SourceError`] naming the source when the page cannot be fetched, its kind cannot be
/// detected, or it is not the expected layout (including a page that lists no match).
pub async fn read(fetcher: &fetch::Fetcher, spec: &SourceSpec) -> Result<Vec<Match>, SourceError> {
    let source_name = spec.to_string();
    let page = fetcher
        .fetch(&spec.location)
        .await
        .map_err(|error| SourceError::Fetch {
            source_name: source_name.clone(),
            error,
        })?;
    let kind = match spec.kind.or_else(|| SourceKind::detect(&page)) {
        Some(k) => k,
        None if page.trim().is_empty() => {
            return Err(SourceError::Parse {
                source_name,
                kind: SourceKind::Cricbuzz,
                error: ParseError::Empty,
            })
        }
        None => return Err(SourceError::UnknownKind { source_name }),
    };
    kind.parse(&page).map_err(|error| SourceError::Parse {
        source_name,
        kind,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_names_its_kind_or_leaves_it_to_detection() {
        let s: SourceSpec = "cricbuzz=https://www.cricbuzz.com/cricket-match/live-scores"
            .parse()
            .unwrap();
        assert_eq!(s.kind, Some(SourceKind::Cricbuzz));
        let s: SourceSpec = "fixtures/a=b.html".parse().unwrap();
        assert_eq!(s.kind, None);
        assert_eq!(s.location, Location::File("fixtures/a=b.html".into()));
        let s: SourceSpec = "https://x.test/p?a=b".parse().unwrap();
        assert_eq!(s.kind, None);
    }

    #[test]
    fn an_unknown_kind_lists_the_known_ones() {
        let e = "cricinfo=./x.html".parse::<SourceSpec>().unwrap_err();
        assert!(e.contains("cricbuzz, espncricinfo"), "{e}");
        assert!("ftp://x/y".parse::<SourceSpec>().is_err());
    }
}
