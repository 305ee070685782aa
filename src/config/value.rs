//! The value parsers clap runs on settings: whole numbers in a range, comma-separated lists of a
//! closed set's values, and values that may be left blank. A refused value is a usage error
//! (exit 2) whose message is the [`ConfigError`] naming the variable, so a typo stops the bot
//! at startup instead of being read as some other number.

use super::{ConfigError, Problem, MAX_SECS};
use clap::builder::TypedValueParser;
use std::ffi::OsStr;
use std::num::NonZeroU32;
use std::time::Duration;

/// What a whole-number setting counts: it says how a refusal reads.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Seconds,
    Milliseconds,
    Count,
    Bytes,
}

impl Unit {
    /// Why `n` (`None`: not a whole number) is refused when its least is `min`.
    fn problem(self, n: Option<u64>, min: u64) -> Problem {
        match (self, n) {
            (Unit::Seconds, None) => Problem::NotSeconds,
            (Unit::Seconds, Some(n)) if n < min => Problem::TooFewSeconds(min),
            (Unit::Seconds, Some(_)) => Problem::TooManySeconds,
            (Unit::Milliseconds, _) => Problem::NotMilliseconds,
            (Unit::Count, _) => Problem::NotCount,
            (Unit::Bytes, _) => Problem::NotBytes,
        }
    }
}

/// A whole number of at least `min`, trimmed first (a `.env` line may pad it), then made a `T`
/// by `into` (`None`: out of `T`'s range).
#[derive(Clone)]
pub struct Whole<T> {
    unit: Unit,
    min: u64,
    into: fn(u64) -> Option<T>,
}

impl Whole<Duration> {
    /// Whole seconds, at least `min` and at most [`MAX_SECS`].
    pub fn seconds(min: u64) -> Whole<Duration> {
        Whole {
            unit: Unit::Seconds,
            min,
            into: |n| (n <= MAX_SECS).then(|| Duration::from_secs(n)),
        }
    }

    /// Whole milliseconds, at least 1.
    pub fn milliseconds() -> Whole<Duration> {
        Whole {
            unit: Unit::Milliseconds,
            min: 1,
            into: |n| Some(Duration::from_millis(n)),
        }
    }
}

impl Whole<u32> {
    /// A count, at least 1.
    pub fn count() -> Whole<u32> {
        Whole {
            unit: Unit::Count,
            min: 1,
            into: |n| u32::try_from(n).ok(),
        }
    }
}

impl Whole<NonZeroU32> {
    /// A count, at least 1, as the rate limiter takes it.
    pub fn nonzero_count() -> Whole<NonZeroU32> {
        Whole {
            unit: Unit::Count,
            min: 1,
            into: |n| u32::try_from(n).ok().and_then(NonZeroU32::new),
        }
    }
}

impl Whole<usize> {
    /// A size in bytes, at least 1.
    pub fn bytes() -> Whole<usize> {
        Whole {
            unit: Unit::Bytes,
            min: 1,
            into: |n| usize::try_from(n).ok(),
        }
    }
}

impl<T> Whole<T> {
    /// `raw` read as this setting's value.
    ///
    /// # Errors
    /// The [`Problem`] with it.
    pub fn read(&self, raw: &str) -> Result<T, Problem> {
        let n = raw.trim().parse::<u64>().ok();
        n.filter(|n| *n >= self.min)
            .and_then(self.into)
            .ok_or_else(|| self.unit.problem(n, self.min))
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Whole<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let raw = value.to_string_lossy();
        self.read(&raw).map_err(|problem| refusal(cmd, arg, &raw, problem))
    }
}

/// A value read by a function of its own (a lead time, a time zone, an instant), trimmed first:
/// a refused one is a usage error naming the variable, as [`Whole`]'s are.
#[derive(Clone)]
pub struct Reads<T>(pub fn(&str) -> Result<T, Problem>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Reads<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let raw = value.to_string_lossy();
        (self.0)(raw.trim()).map_err(|problem| refusal(cmd, arg, &raw, problem))
    }
}

/// A usage error saying what is wrong with the value `raw` of `arg`, naming its variable as
/// every configuration error does (`invalid CLAIM_TTL_SECS="600": …`), flag or variable alike,
/// followed by the command's usage as clap's own usage errors are.
fn refusal(cmd: &clap::Command, arg: Option<&clap::Arg>, raw: &str, problem: Problem) -> clap::Error {
    let var = arg
        .and_then(|a| {
            a.get_env()
                .map(|v| v.to_string_lossy().into_owned())
                .or_else(|| a.get_long().map(|l| format!("--{l}")))
        })
        .unwrap_or_default();
    let error = ConfigError::invalid(var, raw, problem);
    clap::Error::raw(clap::error::ErrorKind::ValueValidation, error).format(&mut cmd.clone())
}

/// A setting that may be left blank: `CLAIM_MIN_REPLICAS=` (as `.env.example` has it) is unset,
/// as if absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blankable<T>(pub Option<T>);

/// `Option<Blankable<T>>`, as clap gives a setting that may be absent or blank, read as an
/// `Option`.
pub(super) fn given<T>(setting: Option<Blankable<T>>) -> Option<T> {
    setting.and_then(|b| b.0)
}

/// Parses a [`Blankable`]: blank (or only whitespace) is unset; anything else is read by `P`.
#[derive(Clone)]
pub struct OrBlank<P>(pub P);

impl<P> TypedValueParser for OrBlank<P>
where
    P: TypedValueParser,
    P::Value: Clone + Send + Sync + 'static,
{
    type Value = Blankable<P::Value>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Blankable<P::Value>, clap::Error> {
        if value.to_string_lossy().trim().is_empty() {
            return Ok(Blankable(None));
        }
        self.0.parse_ref(cmd, arg, value).map(|v| Blankable(Some(v)))
    }
}

/// A comma-separated list of the values of a closed set (`FORMATS=T20I,ODI`), each checked by
/// clap: an unknown one is a usage error (exit 2) listing the accepted values, so a typo
/// (`T20l`) cannot silently announce nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumList<E>(pub Vec<E>);

impl<E: clap::ValueEnum + Clone + Send + Sync + 'static> EnumList<E> {
    /// The clap parser of such a list.
    pub fn parser() -> EnumListParser<E> {
        EnumListParser(std::marker::PhantomData)
    }
}

/// Parses an [`EnumList`]: split on commas, each item trimmed and read case-insensitively.
#[derive(Clone)]
pub struct EnumListParser<E>(std::marker::PhantomData<E>);

impl<E: clap::ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for EnumListParser<E> {
    type Value = EnumList<E>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<EnumList<E>, clap::Error> {
        let one = clap::builder::EnumValueParser::<E>::new();
        let text = value.to_string_lossy();
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                // Case as typed in the docs ("T20I", "List A") is accepted too.
                E::from_str(item, true).or_else(|_| one.parse_ref(cmd, arg, OsStr::new(item)))
            })
            .collect::<Result<Vec<E>, _>>()
            .map(EnumList)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(E::value_variants().iter().filter_map(E::to_possible_value)))
    }
}

/// A comma-separated list, trimmed, empty entries dropped.
pub(super) fn list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// An optional text setting as given: `None` when absent, blank or only whitespace (a blank
/// `.env` line is unset), else trimmed.
pub(super) fn text(raw: &Option<String>) -> Option<&str> {
    raw.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{Problem, Whole};
    use std::time::Duration;

    #[test]
    fn whole_numbers_are_trimmed_and_refused_outside_their_range_saying_why() {
        assert_eq!(Whole::seconds(60).read(" 600 ").ok(), Some(Duration::from_secs(600)));
        assert!(matches!(Whole::seconds(60).read("59"), Err(Problem::TooFewSeconds(60))));
        assert!(matches!(Whole::seconds(1).read("five"), Err(Problem::NotSeconds)));
        assert!(matches!(
            Whole::seconds(1).read("18446744073709551615"),
            Err(Problem::TooManySeconds)
        ));
        assert!(matches!(Whole::count().read("0"), Err(Problem::NotCount)));
        assert!(matches!(Whole::count().read("4294967296"), Err(Problem::NotCount)));
        assert_eq!(Whole::count().read("4294967295").ok(), Some(u32::MAX));
        assert!(matches!(Whole::bytes().read("-1"), Err(Problem::NotBytes)));
        assert!(matches!(Whole::milliseconds().read("0"), Err(Problem::NotMilliseconds)));
        assert_eq!(Whole::milliseconds().read("25").ok(), Some(Duration::from_millis(25)));
    }
}
