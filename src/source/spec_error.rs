//! [`SpecError`]: why a configured source (`KIND=LOCATION`) cannot be used.

/// A source as configured (`KIND=LOCATION` or `LOCATION`) that cannot be used. Each names what
/// was written and says what is expected instead.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Nothing between the separators.
    #[error("empty source")]
    Empty,
    /// A kind no parser has.
    #[error("unknown source kind {kind}; known kinds: {}", super::kind_list())]
    UnknownKind {
        /// The kind as written, quoted, or described when it may be a secret
        /// ([`crate::redact::setting_value`]).
        kind: String,
    },
    /// A `css:PROFILE` kind whose profile cannot be read or is not valid.
    #[error(transparent)]
    Profile(#[from] super::css::LoadError),
    /// `KIND=` with nothing after it.
    #[error("source {source_name:?} names no location after the kind")]
    NoLocation {
        /// The source as written, credentials hidden ([`crate::redact::url_text`]).
        source_name: String,
    },
    /// An http(s) location that is not a URL.
    #[error("source {location:?} is not a valid URL: {error}")]
    BadUrl {
        /// The location as written, credentials hidden ([`crate::redact::url_text`]).
        location: String,
        /// Why it is not a URL.
        #[source]
        error: url::ParseError,
    },
    /// A URL of a scheme sources are not read from.
    #[error("source {location:?}: scheme {scheme} is not supported (use http, https or a file path)")]
    Scheme {
        /// The location as written, credentials hidden ([`crate::redact::url_text`]).
        location: String,
        /// The scheme it names, quoted (or described: [`crate::redact::setting_value`]).
        scheme: String,
    },
}
