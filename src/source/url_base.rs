//! Match URLs built on a base URL that is parsed once per page: `https://…/match/` plus an id
//! (and a slug) for every match of the page.
//!
//! Pushing path segments through [`url::PathSegmentsMut`] runs the `url` crate's whole path
//! parser, character by character, with percent-encoding, for every match: 2–4 K instructions
//! a match, the largest single cost of building a [`Match`](crate::cricket::Match) from a JSON
//! API answer (callgrind, docs/benchmarks.md). A path made only of ASCII letters, digits, `-`
//! and `/` is one the parser copies as written (nothing to encode, no `.` or `..` segment), so
//! for such a path the URL is the base's text with the path appended, and its parts (scheme,
//! host and path offsets) are the base's. [`Url::deserialize_internal`], the crate's own
//! documented constructor from those parts, builds it without parsing again. Anything else
//! takes the general path, and a test compares the two on arbitrary text.

use serde::de::value::SeqAccessDeserializer;
use serde::de::{DeserializeSeed, IntoDeserializer, SeqAccess};
use serde_json::Value;
use url::Url;

/// A parsed base URL whose path ends in `/`, onto which match paths are appended.
pub(crate) struct UrlBase {
    base: Url,
    /// The base's parts after its text, as [`Url::serialize_internal`] writes them (offsets,
    /// host kind, port): the same for every URL that only extends the base's path. `None` when
    /// the base cannot be extended that way (a query, a fragment, a path not ending in `/`) or
    /// the `url` crate writes its parts in a form this module does not expect; then every URL
    /// takes the general path.
    parts: Option<Vec<Value>>,
}

/// How many parts `Url::serialize_internal` writes: the text, then nine offsets and kinds, the
/// last two the query's and the fragment's starts.
const INTERNAL_PARTS: usize = 10;

impl UrlBase {
    /// Keeps `base`, and its parts when appended paths can reuse them.
    pub(crate) fn new(base: Url) -> UrlBase {
        let parts = base
            .serialize_internal(serde_json::value::Serializer)
            .ok()
            .and_then(|parts| match parts {
                Value::Array(parts) => Some(parts),
                _ => None,
            })
            .filter(|parts| {
                parts.len() == INTERNAL_PARTS
                    && parts.first().and_then(Value::as_str) == Some(base.as_str())
                    && parts.iter().rev().take(2).all(Value::is_null)
                    && base.query().is_none()
                    && base.fragment().is_none()
                    && !base.cannot_be_a_base()
                    && base.path().ends_with('/')
            })
            .map(|mut parts| parts.split_off(1))
            // One probe, so that a `url` release that reads its parts differently falls back to
            // the general path instead of failing (or building wrong URLs).
            .filter(|parts| {
                let probe = assemble(format!("{base}0/a-1"), parts);
                probe.is_some_and(|probe| {
                    let general = pushed(&base, "0/a-1");
                    general.as_ref() == Some(&probe)
                        && general.as_ref().map(Url::path) == Some(probe.path())
                        && general.as_ref().and_then(Url::host_str) == probe.host_str()
                })
            });
        UrlBase { base, parts }
    }

    /// The base with what `write` appends to its text as further path: `write` gets the base's
    /// text and appends `segment/segment/…`. The same URL as pushing those segments onto the
    /// base's path with [`url::PathSegmentsMut`] (after `pop_if_empty`), which is what is done
    /// when the appended text holds anything but ASCII letters, digits, `-` and `/`, or an empty
    /// segment before its last. `extra` is
    /// the expected length of the appended text (room reserved once).
    pub(crate) fn with_path(&self, extra: usize, write: impl FnOnce(&mut String)) -> Option<Url> {
        let base = self.base.as_str();
        let mut text = String::with_capacity(base.len() + extra);
        text.push_str(base);
        write(&mut text);
        let tail = text.get(base.len()..).unwrap_or_default();
        // Only a segment that ends the path may be empty: the `url` crate treats an empty
        // segment pushed onto a root path (`https://example.com/`) as no segment at all.
        let plain = tail
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'/')
            && !tail.starts_with('/')
            && !tail.contains("//");
        match &self.parts {
            // `new` checked that these parts assemble into the URL the general path gives.
            Some(parts) if plain => assemble(text, parts),
            _ => pushed(&self.base, tail),
        }
    }
}

/// The general path: `tail`'s segments pushed onto `base`'s path, each percent-encoded as the
/// `url` crate does.
fn pushed(base: &Url, tail: &str) -> Option<Url> {
    let mut url = base.clone();
    url.path_segments_mut().ok()?.pop_if_empty().extend(tail.split('/'));
    Some(url)
}

/// The URL whose text is `text` and whose other parts are `parts` (a base's, see
/// [`UrlBase::parts`](UrlBase)).
fn assemble(text: String, parts: &[Value]) -> Option<Url> {
    let parts = Parts {
        text: Some(text),
        rest: parts.iter(),
    };
    Url::deserialize_internal(SeqAccessDeserializer::new(parts)).ok()
}

/// The parts [`Url::deserialize_internal`] reads, in order: the new text, then the base's.
struct Parts<'a> {
    text: Option<String>,
    rest: std::slice::Iter<'a, Value>,
}

impl<'a> SeqAccess<'a> for Parts<'a> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        if let Some(text) = self.text.take() {
            return seed.deserialize(text.into_deserializer()).map(Some);
        }
        self.rest.next().map(|part| seed.deserialize(part)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(url: &Url) -> Value {
        url.serialize_internal(serde_json::value::Serializer)
            .expect("serialisable")
    }

    fn bases() -> Vec<Url> {
        [
            "https://www.cricbuzz.com/live-cricket-scores/",
            "https://cricketdata.org/match/",
            "https://example.com/",
            "http://127.0.0.1:8080/a/b/",
            "https://example.com/a?q=1",
            "https://example.com/a",
        ]
        .iter()
        .filter_map(|b| Url::parse(b).ok())
        .collect()
    }

    #[test]
    fn the_usual_bases_take_the_fast_path() {
        for base in [
            "https://www.cricbuzz.com/live-cricket-scores/",
            "https://cricketdata.org/match/",
        ] {
            let base = UrlBase::new(Url::parse(base).expect("a URL"));
            assert!(base.parts.is_some(), "{}", base.base);
            let url = base.with_path(0, |t| t.push_str("158062/zim-vs-ban")).expect("a URL");
            assert_eq!(url.as_str(), format!("{}158062/zim-vs-ban", base.base));
            assert_eq!(url.path_segments().map(Iterator::count), Some(3));
            assert_eq!(internal(&url), internal(&Url::parse(url.as_str()).expect("a URL")));
        }
        let with_query = UrlBase::new(Url::parse("https://example.com/a/?q=1").expect("a URL"));
        assert!(with_query.parts.is_none());
    }

    proptest::proptest! {
        #[test]
        fn an_appended_path_is_the_same_url_as_pushed_segments(
            tail in "[a-zA-Z0-9/-]{0,24}|[a-z0-9/. %?#\\\\éA-]{0,16}",
            which in 0usize..6
        ) {
            let base = bases().swap_remove(which);
            let fast = UrlBase::new(base.clone()).with_path(0, |t| t.push_str(&tail));
            let general = pushed(&base, &tail);
            proptest::prop_assert_eq!(fast.as_ref().map(Url::as_str), general.as_ref().map(Url::as_str));
            // Every part, not only the text (`Url`'s `==` compares the text alone), and the
            // same as parsing the text afresh.
            let reparsed = general.as_ref().and_then(|u| Url::parse(u.as_str()).ok());
            proptest::prop_assert_eq!(fast.as_ref().map(internal), general.as_ref().map(internal));
            proptest::prop_assert_eq!(fast.as_ref().map(internal), reparsed.as_ref().map(internal));
        }
    }
}
