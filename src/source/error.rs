//! [`ParseError`]: why a page could not be turned into matches (a leaf: every parser and CSS
//! profile returns it, and it names none of them).

/// A page that is not the layout its parser expects.
///
/// Parsers return this instead of an empty list, so that a site redesign is a loud error naming
/// what was missing, never a silent "nothing new".
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// The page is empty (zero bytes or only whitespace).
    #[error("the page is empty")]
    Empty,
    /// The page does not carry the structure the parser reads (`what` names the missing part).
    #[error("layout not recognised: {what}")]
    LayoutNotRecognised {
        /// What was looked for and not found, e.g. "no `__NEXT_DATA__` script".
        what: String,
    },
    /// The page is in a form no source kind reads: JSON wrapped in JavaScript, UTF-16 without a
    /// byte-order mark, binary data, or a known format such as PDF. `what` is one plain sentence
    /// saying what the page is and what to do about it.
    #[error("{what}")]
    Unsupported {
        /// What the page is, and what to do.
        what: String,
    },
    /// The page is an older layout that this parser does not read but a built-in CSS profile
    /// does: the error names the profile to use.
    #[error(
        "{what}; the built-in profile `css:{profile}` reads this page ({matches} match(es)): name the source as css:{profile}=LOCATION"
    )]
    ReadByProfile {
        /// Why this parser refused the page.
        what: String,
        /// The built-in profile that reads it.
        profile: &'static str,
        /// How many matches the profile found on it.
        matches: usize,
    },
    /// The page has the expected structure but it yields no match at all.
    #[error("the page has the expected layout but lists no match ({what})")]
    NoMatches {
        /// Where the parser looked.
        what: String,
    },
}
