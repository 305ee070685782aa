//! Lenient JSON readers for the parsers: a field of the wrong type (a number where a string was
//! expected, an RSC `"$…"` reference where an object was) reads as absent instead of failing the
//! whole listing, and nothing is buffered on the way.
//!
//! Written by hand rather than as `#[serde(untagged)]` enums: untagged enums buffer every value
//! into serde's private `Content` tree and then try each variant against it, which was most of
//! the Cricbuzz parsers' time (measured with `perf` on the criterion benchmark, `benches/parse.rs`).

use crate::cricket::{Match, Text};
use crate::source::ParseError;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

/// A JSON scalar of whatever type the page used: Cricbuzz writes ids and dates as numbers in
/// one place and strings in another, and RSC may replace a value with a `"$…"` reference.
/// A bool is kept ([`Scalar::Bool`]); anything else (object, array, null) reads as
/// [`Scalar::Other`].
///
/// Deserialized by hand rather than as a `#[serde(untagged)]` enum: untagged enums buffer every
/// value into serde's private `Content` tree and then try each variant against it, which was most
/// of the parser's time on a page of 46 listings. Strings without escapes are borrowed.
#[derive(Default)]
pub(crate) enum Scalar<'a> {
    /// A string, borrowed from the input when it had no escapes.
    Text(Cow<'a, str>),
    /// A number.
    Number(serde_json::Number),
    /// `true` or `false` (CricketData's `matchStarted`).
    Bool(bool),
    /// Anything else; also what an absent field reads as.
    #[default]
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ScalarVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for ScalarVisitor<'a> {
            type Value = Scalar<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Text(Cow::Owned(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scalar<'a>, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Scalar::Other, Scalar::Number))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_unit<E>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Other)
            }
            fn visit_none<E>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'a>, D::Error> {
                Scalar::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'a>, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'a>, A::Error> {
                IgnoredAny.visit_map(map).map(|_| Scalar::Other)
            }
        }
        d.deserialize_any(ScalarVisitor(PhantomData))
    }
}

impl Scalar<'_> {
    /// The string as clean text ([`crate::text::plain`]): HTML entities decoded, control and
    /// bidirectional-override characters removed, whitespace trimmed and collapsed. `None` for
    /// a non-string or when nothing is left.
    pub(crate) fn text(&self) -> Option<Text> {
        self.text_cow().map(Text::from)
    }

    /// [`Scalar::text`], borrowed when the string is already clean: for fields that are only
    /// looked at or cut into parts before any of them is kept.
    pub(crate) fn text_cow(&self) -> Option<Cow<'_, str>> {
        match self {
            Scalar::Text(t) => crate::text::plain_cow(t),
            Scalar::Number(_) | Scalar::Bool(_) | Scalar::Other => None,
        }
    }
}

/// An object field that may instead be a reference or junk; such values read as absent.
/// Deserialized by hand for the reason given on [`Scalar`]: an object is read straight into
/// `T`, anything else is skipped.
pub(crate) enum Loose<T> {
    /// The object, read as `T`.
    Object(T),
    /// Anything else; also what an absent field reads as.
    Other,
}

/// An absent field reads as not an object.
impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose::Other
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct LooseVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for LooseVisitor<T> {
            type Value = Loose<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Loose<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Loose::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Loose<T>, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Loose::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Loose<T>, D::Error> {
                Loose::deserialize(d)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E>(self) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_none<E>(self) -> Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
        }
        d.deserialize_any(LooseVisitor(PhantomData))
    }
}

impl<T> Loose<T> {
    /// The object, when it was one.
    pub(crate) fn object(self) -> Option<T> {
        match self {
            Loose::Object(t) => Some(t),
            Loose::Other => None,
        }
    }
}

/// An array field, its elements kept by `C` (a [`FromSeq`]: a `Vec` for [`List`], [`Few`] for
/// [`Pair`]); anything else (object, scalar, absent) reads as [`Array::Other`], so the caller can tell
/// "not a list" from "an empty list".
pub(crate) enum Array<C> {
    /// The array's elements.
    Array(C),
    /// Not an array; also what an absent field reads as.
    Other,
}

/// An absent field reads as not an array.
impl<C> Default for Array<C> {
    fn default() -> Self {
        Array::Other
    }
}

impl<'de, C: FromSeq<'de>> Deserialize<'de> for Array<C> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArrayVisitor::<C>(PhantomData))
            .map(|array| array.map_or(Array::Other, Array::Array))
    }
}

/// An array field whose elements are read as `T`, in a `Vec`.
pub(crate) type List<T> = Array<Vec<T>>;

/// How an [`Array`]'s elements are kept.
trait FromSeq<'de>: Sized {
    /// The elements of the array `seq` reads.
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error>;
}

impl<'de, T: Deserialize<'de>> FromSeq<'de> for Vec<T> {
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        Vec::<T>::deserialize(SeqAccessDeserializer::new(seq))
    }
}

/// An array read as `C`, or `None` for any other value (skipped): the reading shared by
/// [`List`] and [`Pair`].
struct ArrayVisitor<C>(PhantomData<C>);

impl<'de, C: FromSeq<'de>> Visitor<'de> for ArrayVisitor<C> {
    type Value = Option<C>;
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<C>, A::Error> {
        C::from_seq(seq).map(Some)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<C>, A::Error> {
        IgnoredAny.visit_map(map).map(|_| None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<C>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Option<C>, E> {
        Ok(None)
    }
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
}

/// [`List`] for arrays that nearly always hold two elements (a match's `teams` and
/// `teamInfo`): the first two are kept inline, so reading one costs no allocation (a `Vec` per
/// array was two allocations a CricketData match); any further elements go to a `Vec`.
pub(crate) type Pair<T> = Array<Few<T>>;

/// The elements of a [`Pair`], in order: the first two inline, the rest in `rest`.
pub(crate) struct Few<T> {
    /// Filled in order: a `None` is never followed by a `Some`.
    first: [Option<T>; 2],
    /// Elements after the second; empty (not allocated) for a pair.
    rest: Vec<T>,
}

impl<T> Few<T> {
    /// Every element, in the array's order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().flatten().chain(&self.rest)
    }
}

impl<'de, T: Deserialize<'de>> FromSeq<'de> for Few<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut few = Few {
            first: [None, None],
            rest: Vec::new(),
        };
        let mut slots = few.first.iter_mut();
        while let Some(element) = seq.next_element()? {
            match slots.next() {
                Some(slot) => *slot = Some(element),
                None => few.rest.push(element),
            }
        }
        Ok(few)
    }
}

/// How a JSON answer was read by [`read_answer`].
pub(crate) enum Reading<F, S> {
    /// In one pass, every listing straight into its struct (the usual case).
    OnePass(F),
    /// Listing by listing, each kept as its raw text and read on its own.
    Fallback(S),
}

/// Reads a JSON API answer in one pass as `F`; only when that refuses it (a listing repeating a
/// key, say) reads it again as `S`, whose listings are raw text read one by one, so that one
/// malformed listing does not cost the others.
///
/// # Errors
/// [`ParseError::LayoutNotRecognised`] when `page` is not JSON, or not the shape `S` reads;
/// `expected` names the answer ("a Cricbuzz `matches/v1` answer").
pub(crate) fn read_answer<'a, F, S>(page: &'a str, expected: &str) -> Result<Reading<F, S>, ParseError>
where
    F: Deserialize<'a>,
    S: Deserialize<'a>,
{
    if let Ok(answer) = serde_json::from_str(page) {
        return Ok(Reading::OnePass(answer));
    }
    serde_json::from_str(page)
        .map(Reading::Fallback)
        .map_err(|e| ParseError::LayoutNotRecognised {
            what: if e.is_data() {
                format!("the JSON is not {expected} ({e})")
            } else {
                format!("not JSON ({e}); expected {expected}")
            },
        })
}

/// Keeps the first match of each `source_id`, in order: an answer may list a match twice.
/// Done once over the matches read, so that no id is copied.
pub(crate) fn dedupe_by_id(matches: &mut Vec<Match>) {
    let mut seen: HashSet<&str, foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(matches.len(), Default::default());
    // An answer rarely repeats an id: the list of what to keep is built only when one does.
    let Some(first_repeat) = matches.iter().position(|m| !seen.insert(m.source_id.as_str())) else {
        return;
    };
    let keep: Vec<bool> = (0..matches.len())
        .map(|i| i < first_repeat || (i > first_repeat && seen.insert(matches[i].source_id.as_str())))
        .collect();
    let mut keep = keep.into_iter();
    matches.retain(|_| keep.next().unwrap_or(false));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scalar as comparable text.
    fn tag(scalar: &Scalar<'_>) -> String {
        match scalar {
            Scalar::Text(t) => format!("text {t}"),
            Scalar::Number(n) => format!("number {n}"),
            Scalar::Bool(b) => format!("bool {b}"),
            Scalar::Other => "other".to_string(),
        }
    }

    proptest::proptest! {
        #[test]
        fn a_pair_reads_the_elements_a_list_reads(
            json in r#"\[ ?((\"[a-c ]{0,2}\"|1|2.5|true|null|\{\}|\[1\]|\{"a":1\}|x)( ?, ?)?){0,5}\]?|\{\}|"x"|1|null|true|"#
        ) {
            let list = serde_json::from_str::<List<Scalar<'_>>>(&json).map(|list| match list {
                List::Array(items) => Some(items.iter().map(tag).collect::<Vec<_>>()),
                List::Other => None,
            });
            let pair = serde_json::from_str::<Pair<Scalar<'_>>>(&json).map(|pair| match pair {
                Pair::Array(items) => Some(items.iter().map(tag).collect::<Vec<_>>()),
                Pair::Other => None,
            });
            proptest::prop_assert_eq!(list.is_ok(), pair.is_ok());
            proptest::prop_assert_eq!(list.ok(), pair.ok());
        }
    }
}
