//! Sources: where score pages come from ([`SourceSpec`]), how they are fetched ([`fetch`]) and
//! which parser reads them ([`SourceKind`]). Parsers are pure functions over page text.

/// A saved page of `fixtures/` (`fixture!("cricbuzz/….html")`), compiled into a parser's
/// tests. Defined before the parsers' modules, so each of their tests may use it.
#[cfg(test)]
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/", $path))
    };
}

pub mod cricbuzz;
pub mod cricbuzz_json;
pub mod cricketdata;
pub mod css;
mod dropped;
mod error;
mod espn_events;
pub mod espn_rss;
pub mod espncricinfo;
pub mod fetch;
mod lenient;
#[cfg(test)]
mod log_capture;
mod sniff;
mod spec_error;
mod url_base;

pub use css::BUILTIN_PROFILES;
pub use error::ParseError;
pub use spec_error::SpecError;

use crate::cricket::Match;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use url::Url;

/// Which parser reads a page. A closed set of layouts we know, plus operator CSS profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// Cricbuzz live-scores page, 2026 Next.js layout ([`cricbuzz::parse`]).
    Cricbuzz,
    /// Cricbuzz JSON API `matches/v1/live|upcoming|recent` ([`cricbuzz_json::parse`]).
    CricbuzzJson,
    /// ESPNcricinfo pages carrying `__NEXT_DATA__` ([`espncricinfo::parse`]).
    Espncricinfo,
    /// ESPNcricinfo live-scores RSS ([`espn_rss::parse`]).
    EspnRss,
    /// CricketData.org (cricapi) `v1/currentMatches` ([`cricketdata::parse`]).
    Cricketdata,
    /// A page described by an operator's CSS-selector profile, compiled once
    /// ([`css::CompiledProfile::parse`]).
    Css(Arc<css::CompiledProfile>),
}

/// The built-in kinds' names, for error messages and `--help`.
pub const KIND_NAMES: &[&str] = &[
    "cricbuzz",
    "cricbuzz-json",
    "espncricinfo",
    "espn-rss",
    "cricketdata",
    "css:PROFILE",
];

impl SourceKind {
    /// The name used in `KIND=LOCATION` (`cricbuzz`, `espn-rss`, `css:<profile name>`…).
    pub fn name(&self) -> String {
        match self {
            SourceKind::Cricbuzz => "cricbuzz".into(),
            SourceKind::CricbuzzJson => "cricbuzz-json".into(),
            SourceKind::Espncricinfo => "espncricinfo".into(),
            SourceKind::EspnRss => "espn-rss".into(),
            SourceKind::Cricketdata => "cricketdata".into(),
            SourceKind::Css(p) => format!("css:{}", p.profile().name),
        }
    }

    /// Parses `page` with this kind's parser.
    ///
    /// # Errors
    /// [`ParseError`] when the page is empty, not this layout, or lists no match.
    ///
    /// A refused page gets the error that says what to do: one plain sentence when the page is
    /// a form no kind reads ([`ParseError::Unsupported`]: JSON wrapped in JavaScript, UTF-16
    /// without a byte-order mark, binary data, PDF…), or the built-in profile that reads it when
    /// it is an older layout ([`ParseError::ReadByProfile`]).
    pub fn parse(&self, page: &str) -> Result<Vec<Match>, ParseError> {
        // JSON saved as a JavaScript or TypeScript constant: the JSON value is what is read.
        if let Some(wrapped) = sniff::javascript_json(page) {
            return match wrapped.value {
                Ok(json) => self.parse(json),
                Err(_) => Err(ParseError::Unsupported {
                    what: sniff::unsupported(page).unwrap_or_default(),
                }),
            };
        }
        let result = match self {
            SourceKind::Cricbuzz => cricbuzz::parse(page),
            SourceKind::CricbuzzJson => cricbuzz_json::parse(page),
            SourceKind::Espncricinfo => espncricinfo::parse(page),
            SourceKind::EspnRss => espn_rss::parse(page),
            SourceKind::Cricketdata => cricketdata::parse(page),
            SourceKind::Css(profile) => profile.parse(page),
        };
        result.map_err(|error| match error {
            ParseError::Empty => ParseError::Empty,
            error => {
                if let Some(what) = sniff::unsupported(page) {
                    return ParseError::Unsupported { what };
                }
                match (self, builtin_profile_for(page)) {
                    (SourceKind::Css(_), _) => error,
                    (_, None) => match (&error, sniff::saved_without_data(page)) {
                        (ParseError::LayoutNotRecognised { .. }, Some(what)) => ParseError::Unsupported { what },
                        _ => error,
                    },
                    (_, Some((profile, matches))) => ParseError::ReadByProfile {
                        what: error.to_string(),
                        profile,
                        matches,
                    },
                }
            }
        })
    }

    /// Guesses the kind of `page` from markers each layout carries. `None` when no known
    /// layout's marker is present (CSS profiles are never guessed: name them).
    pub fn detect(page: &str) -> Option<SourceKind> {
        if let Some(sniff::Wrapped { value: Ok(json), .. }) = sniff::javascript_json(page) {
            return SourceKind::detect(json);
        }
        let head = page.trim_start();
        // A bare `typeMatches` list, as a Cricbuzz answer's value is sometimes saved.
        if head.starts_with('[') {
            return page.contains("\"seriesMatches\"").then_some(SourceKind::CricbuzzJson);
        }
        if head.starts_with('{') {
            if page.contains("\"typeMatches\"") {
                return Some(SourceKind::CricbuzzJson);
            }
            if page.contains("\"matchStarted\"") || page.contains("\"apikey\"") {
                return Some(SourceKind::Cricketdata);
            }
            return None;
        }
        if page.contains("self.__next_f.push") && page.contains("matchInfo") {
            Some(SourceKind::Cricbuzz)
        } else if page.contains("__NEXT_DATA__") {
            Some(SourceKind::Espncricinfo)
        } else if page.contains("<rss") && page.contains("cricinfo") {
            Some(SourceKind::EspnRss)
        } else {
            None
        }
    }

    /// Reads a CSS profile named `css:<name>`: a built-in profile name
    /// ([`BUILTIN_PROFILES`]) or the path of a TOML file.
    ///
    /// # Errors
    /// [`css::LoadError`] naming the profile when the file cannot be read or the profile is
    /// invalid.
    pub fn css(profile: &str) -> Result<SourceKind, css::LoadError> {
        Ok(SourceKind::Css(Arc::new(css::CompiledProfile::named(profile)?)))
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for SourceKind {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<SourceKind, SpecError> {
        let s = s.trim();
        if let Some(profile) = s.strip_prefix("css:") {
            return Ok(SourceKind::css(profile)?);
        }
        Ok(match s.to_ascii_lowercase().as_str() {
            "cricbuzz" => SourceKind::Cricbuzz,
            "cricbuzz-json" => SourceKind::CricbuzzJson,
            "espncricinfo" => SourceKind::Espncricinfo,
            "espn-rss" => SourceKind::EspnRss,
            "cricketdata" => SourceKind::Cricketdata,
            _ => {
                return Err(SpecError::UnknownKind {
                    kind: crate::redact::setting_value("kind", s).to_string(),
                })
            }
        })
    }
}

/// The built-in CSS profile that reads `page`, with how many matches it found: the first of
/// [`BUILTIN_PROFILES`] that reads at least one. Only asked once a page has been refused, so
/// the cost (one streaming pass per profile) is never on the normal path.
pub fn builtin_profile_for(page: &str) -> Option<(&'static str, usize)> {
    BUILTIN_PROFILES.iter().find_map(|(name, _)| {
        let SourceKind::Css(profile) = SourceKind::css(name).ok()? else {
            return None;
        };
        let found = profile.parse(page).ok()?.len();
        (found > 0).then_some((*name, found))
    })
}

/// "cricbuzz, cricbuzz-json, …".
pub fn kind_list() -> String {
    KIND_NAMES.join(", ")
}

/// Where a page is read from. Shown (`Display` and `Debug`, so in every log line, error and
/// metric label) with any credentials in a URL replaced (see [`redacted`]), and a path's
/// token-like components too ([`crate::redact::path`]).
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// An `http://` or `https://` URL.
    Url(Url),
    /// A local file.
    File(PathBuf),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Url(u) => write!(f, "{}", redacted(u)),
            Location::File(p) => f.write_str(&crate::redact::path(p)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Url(u) => f.debug_tuple("Url").field(&redacted(u).as_str()).finish(),
            Location::File(p) => f.debug_tuple("File").field(&crate::redact::path(p)).finish(),
        }
    }
}

/// `url` as it may be shown: see [`crate::redact::url`] (credentials in userinfo, query values,
/// the fragment and token-like path segments read `REDACTED`).
pub use crate::redact::url as redacted;

/// One configured source: `KIND=LOCATION`, or a bare location whose kind is detected from the
/// page.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    /// The parser, when named; otherwise detected from each fetched page.
    pub kind: Option<SourceKind>,
    /// Where the page is.
    pub location: Location,
    /// The API key sent with each request (set from configuration by kind, never parsed).
    pub api_key: Option<fetch::ApiKey>,
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Some(k) => write!(f, "{k}={}", self.location),
            None => write!(f, "{}", self.location),
        }
    }
}

impl FromStr for SourceSpec {
    type Err = SpecError;

    /// Reads `KIND=LOCATION` or `LOCATION`. A location starting `http://` or `https://` is a
    /// URL; anything else is a file path.
    fn from_str(raw: &str) -> Result<SourceSpec, SpecError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(SpecError::Empty);
        }
        let (kind, loc) = match raw.split_once('=') {
            Some((k, rest)) if k.starts_with("css:") || !k.contains(['/', ':', '.']) => {
                (Some(k.parse::<SourceKind>()?), rest.trim())
            }
            _ => (None, raw),
        };
        if loc.is_empty() {
            return Err(SpecError::NoLocation {
                source_name: crate::redact::url_text(raw),
            });
        }
        let lower = loc.to_ascii_lowercase();
        let location = if lower.starts_with("http://") || lower.starts_with("https://") {
            Location::Url(Url::parse(loc).map_err(|error| SpecError::BadUrl {
                location: crate::redact::url_text(loc),
                error,
            })?)
        } else if let Some(scheme) = loc.split_once("://").map(|(s, _)| s) {
            return Err(SpecError::Scheme {
                location: crate::redact::url_text(loc),
                scheme: crate::redact::setting_value("scheme", scheme).to_string(),
            });
        } else {
            Location::File(PathBuf::from(loc))
        };
        Ok(SourceSpec {
            kind,
            location,
            api_key: None,
        })
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
        "source {source_name}: cannot tell which layout this page is; name it as KIND=LOCATION with one of: {}{hint}",
        kind_list()
    )]
    UnknownKind {
        /// The source as configured.
        source_name: String,
        /// Empty, or a sentence naming the built-in profile that reads the page, when one of
        /// [`BUILTIN_PROFILES`] does.
        hint: String,
    },
    /// No kind was named and the page is a form no kind reads (JSON wrapped in JavaScript,
    /// UTF-16 without a byte-order mark, binary data, PDF…).
    #[error("source {source_name}: {what}")]
    Unsupported {
        /// The source as configured.
        source_name: String,
        /// One plain sentence: what the page is, and what to do.
        what: String,
    },
    /// No kind was named and the page is empty, so there is nothing to detect a kind from.
    #[error("source {source_name}: the page is empty")]
    EmptyPage {
        /// The source as configured.
        source_name: String,
    },
}

/// Reads sources: fetches, detects the kind, parses, and remembers each source's last matches
/// so that a 304 Not Modified skips parsing. Cheap to clone (clones share the memory).
#[derive(Clone, Debug)]
pub struct SourceReader {
    fetcher: fetch::Fetcher,
    last: Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<Match>>>>,
}

impl SourceReader {
    /// A reader fetching with `fetcher`.
    pub fn new(fetcher: fetch::Fetcher) -> SourceReader {
        SourceReader {
            fetcher,
            last: Arc::default(),
        }
    }

    /// Reads `spec` and parses it (or returns its last matches when the server says the page
    /// has not changed).
    ///
    /// # Errors
    /// [`SourceError`] naming the source when the page cannot be fetched, its kind cannot be
    /// detected, or it is not the expected layout (including a page that lists no match).
    pub async fn read(&self, spec: &SourceSpec) -> Result<Vec<Match>, SourceError> {
        let source_name = spec.to_string();
        let fetched = self
            .fetcher
            .fetch(&spec.location, spec.api_key.as_ref())
            .await
            .map_err(|error| SourceError::Fetch {
                source_name: source_name.clone(),
                error,
            })?;
        let page = match fetched {
            fetch::Fetched::NotModified => {
                let last = self
                    .last
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&source_name)
                    .cloned();
                if let Some(matches) = last {
                    tracing::debug!(source = %source_name, "not modified; reusing the last matches");
                    return Ok(matches);
                }
                // A 304 for a page we could not parse says nothing; ask again unconditionally.
                self.fetcher.forget(&spec.location, spec.api_key.as_ref());
                match self.fetcher.fetch(&spec.location, spec.api_key.as_ref()).await {
                    Ok(fetch::Fetched::Fresh(page)) => page,
                    Ok(fetch::Fetched::NotModified) => String::new(),
                    Err(error) => return Err(SourceError::Fetch { source_name, error }),
                }
            }
            fetch::Fetched::Fresh(page) => page,
        };
        let result = parse_page(spec, &source_name, &page);
        match &result {
            Ok(matches) => {
                self.last
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(source_name, matches.clone());
            }
            Err(_) => self.fetcher.forget(&spec.location, spec.api_key.as_ref()),
        }
        result
    }
}

fn parse_page(spec: &SourceSpec, source_name: &str, page: &str) -> Result<Vec<Match>, SourceError> {
    let source_name = source_name.to_string();
    let kind = match spec.kind.clone().or_else(|| SourceKind::detect(page)) {
        Some(k) => k,
        None if page.trim().is_empty() => return Err(SourceError::EmptyPage { source_name }),
        None => {
            if let Some(what) = sniff::unsupported(page) {
                return Err(SourceError::Unsupported { source_name, what });
            }
            let profile = builtin_profile_for(page);
            if profile.is_none() {
                if let Some(what) = sniff::saved_without_data(page) {
                    return Err(SourceError::Unsupported { source_name, what });
                }
            }
            let hint = profile.map_or_else(String::new, |(profile, found)| {
                format!(
                    ". It is an older layout that the built-in profile `css:{profile}` reads \
                     ({found} match(es)): name it as css:{profile}=LOCATION"
                )
            });
            return Err(SourceError::UnknownKind { source_name, hint });
        }
    };
    kind.parse(page).map_err(|error| SourceError::Parse {
        source_name,
        kind,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_source_url_are_never_shown() {
        let spec: SourceSpec = "cricbuzz=https://me:pw@example.com/live?API_Key=k1&offset=2&access_token=t1"
            .parse()
            .expect("a source with credentials parses");
        let shown = "cricbuzz=https://REDACTED@example.com/live?API_Key=REDACTED&offset=2&access_token=REDACTED";
        assert_eq!(spec.to_string(), shown);
        let debug = format!("{spec:?}");
        assert!(
            !debug.contains("pw") && !debug.contains("k1") && !debug.contains("t1"),
            "{debug}"
        );
        // Query values other than a few harmless names, and tokens in the path, are hidden.
        let tokened: SourceSpec =
            "https://example.com/feed/a1b2c3d4e5f6a7b8c9d0/live-scores/158062/zim-vs-ban-2nd-t20i?hash=h1&k=k2&page=3&Match_Id=7"
                .parse()
                .expect("a source with a token in its path parses");
        assert_eq!(
            tokened.to_string(),
            "https://example.com/feed/REDACTED/live-scores/158062/zim-vs-ban-2nd-t20i?hash=REDACTED&k=REDACTED&page=3&Match_Id=7"
        );
        // Nothing to hide: shown as given.
        let plain: SourceSpec = "https://example.com/live?offset=2"
            .parse()
            .expect("a plain source parses");
        assert_eq!(plain.to_string(), "https://example.com/live?offset=2");
        // What is fetched keeps its credentials.
        let Location::Url(u) = &spec.location else { panic!() };
        assert_eq!(u.password(), Some("pw"));
    }

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
    fn a_css_source_names_its_profile_file_or_a_builtin() {
        let s: SourceSpec = "css:cricbuzz-2018=./page.html".parse().unwrap();
        assert_eq!(s.kind.map(|k| k.name()), Some("css:cricbuzz-2018".to_string()));
        assert_eq!(s.location, Location::File("./page.html".into()));
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/espncricinfo-2020.toml");
        let s: SourceSpec = format!("css:{path}=https://x.test/a").parse().unwrap();
        assert_eq!(s.kind.map(|k| k.name()), Some("css:espncricinfo-2020".to_string()));
        let e = "css:nope.toml=./x".parse::<SourceSpec>().unwrap_err().to_string();
        assert!(
            e.contains("nope.toml") && e.contains("cricbuzz-2018, espncricinfo-2020"),
            "{e}"
        );
    }

    #[test]
    fn each_fixture_kind_is_detected_from_its_content() {
        let f = |p: &str| std::fs::read_to_string(format!("{}/fixtures/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let cases = [
            ("cricbuzz/live-scores_2026-07-17.html", "cricbuzz"),
            ("cricbuzz/matches-v1-live_2024-06-16.json", "cricbuzz-json"),
            ("cricbuzz/matches-v1-upcoming_2024-06-16.json", "cricbuzz-json"),
            (
                "espncricinfo/series-match-results_ipl-2022_2022-07-27.html",
                "espncricinfo",
            ),
            (
                "espncricinfo/match-page_1478914_2026-02-21_rendered.html",
                "espncricinfo",
            ),
            ("espncricinfo/rss-livescores_2019-01-31.xml", "espn-rss"),
            ("cricketdata/current-matches_2026-05-18.json", "cricketdata"),
        ];
        for (file, kind) in cases {
            assert_eq!(
                SourceKind::detect(&f(file)).map(|k| k.name()).as_deref(),
                Some(kind),
                "{file}"
            );
        }
        assert_eq!(SourceKind::detect("<html>hello</html>"), None);
    }

    #[test]
    fn an_unknown_kind_lists_the_known_ones() {
        let e = "cricinfo=./x.html".parse::<SourceSpec>().unwrap_err().to_string();
        assert!(
            e.contains("cricbuzz, cricbuzz-json, espncricinfo, espn-rss, cricketdata, css:PROFILE"),
            "{e}"
        );
        assert!("ftp://x/y".parse::<SourceSpec>().is_err());
    }
}
