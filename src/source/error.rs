//! [`ParseError`]: why a page could not be turned into matches.

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
    /// The page has the expected structure but it yields no match at all.
    #[error("the page has the expected layout but lists no match ({what})")]
    NoMatches {
        /// Where the parser looked.
        what: String,
    },
}
