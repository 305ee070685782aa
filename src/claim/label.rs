//! Closed sets named by a word ([`Label`]): a claim's state, the state operators see, a
//! marker's origin. Each has ONE table of its words (its `label`), from which it is written,
//! read back (`serde`), printed and, for the CLI, offered as a value.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// A closed set whose every value is named by one word.
pub trait Label: Copy + Eq + 'static {
    /// What the words name, for errors ("a claim state").
    const WHAT: &'static str;
    /// Every value, in the order to list them.
    const ALL: &'static [Self];
    /// The value's word: the one table of the set.
    fn label(self) -> &'static str;
    /// The value `word` names, if any.
    fn from_label(word: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.label() == word)
    }
}

/// Reads a [`Label`] from its word without allocating (a cycle's batch look-up reads a state in
/// every held record); an unknown word is an error naming the words there are.
pub(super) fn deserialize<'de, L: Label, D: Deserializer<'de>>(deserializer: D) -> Result<L, D::Error> {
    struct Word<L>(std::marker::PhantomData<L>);
    impl<L: Label> Visitor<'_> for Word<L> {
        type Value = L;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(L::WHAT)
        }
        fn visit_str<E: de::Error>(self, word: &str) -> Result<L, E> {
            L::from_label(word).ok_or_else(|| {
                let words: Vec<&str> = L::ALL.iter().map(|v| v.label()).collect();
                E::custom(format!(
                    "{word:?} is not {}; expected one of {}",
                    L::WHAT,
                    words.join(", ")
                ))
            })
        }
    }
    deserializer.deserialize_str(Word(std::marker::PhantomData))
}

/// Implements `Display`, `Serialize` and `Deserialize` of a [`Label`] type from its table.
macro_rules! labelled {
    ($t:ty) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::claim::Label::label(*self))
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::claim::Label::label(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::claim::label::deserialize(deserializer)
            }
        }
    };
}
pub(super) use labelled;
