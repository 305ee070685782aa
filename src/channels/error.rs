//! What cannot be used in a channels file.

use std::path::PathBuf;

/// A channels file that cannot be used. Every message names the file, the channel and the field,
/// says what to do, and never contains a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum ChannelsError {
    /// The file cannot be read.
    #[error("cannot read the channels file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not TOML of the channels shape.
    #[error("the channels file {path} cannot be read as channels (line {line}): {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line of the problem (1-based; 0 when unknown).
        line: usize,
        /// TOML's message, without the quoted source line (which could hold a secret).
        message: String,
    },
    /// No `[[channel]]` at all.
    #[error("the channels file {path} defines no channel: add a [[channel]] table (see deploy/channels.example.toml)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// Two channels share a name.
    #[error("{path}: two channels are named {channel:?}: each channel needs its own name")]
    DuplicateName {
        /// The file.
        path: PathBuf,
        /// The name.
        channel: String,
    },
    /// A secret was written into the file.
    #[error(
        "{path}: channel {channel:?}: field `{field}` would hold a secret in the file, which is refused: \
         remove it, put the value in an environment variable and name that variable with `{suggested} = \"NAME\"`"
    )]
    InlineSecret {
        /// The file.
        path: PathBuf,
        /// The channel.
        channel: String,
        /// The field.
        field: String,
        /// The field to use instead.
        suggested: String,
    },
    /// A referenced environment variable is not set.
    #[error("{path}: channel {channel:?}: `{field}` names the environment variable {var}, which is not set or empty: set it (or .env), or name another variable")]
    MissingEnv {
        /// The file.
        path: PathBuf,
        /// The channel.
        channel: String,
        /// The `_env` field.
        field: String,
        /// The variable.
        var: String,
    },
    /// Any other field problem: unknown, missing, or a value that cannot be used.
    #[error("{path}: channel {channel:?}: field `{field}`: {problem}")]
    Field {
        /// The file.
        path: PathBuf,
        /// The channel (its position, `#2`, when it has no usable name).
        channel: String,
        /// The field.
        field: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A channel cannot post: its secrets were not read (the file was read for a command
    /// that posts nothing).
    #[error("channel {channel:?}: {problem}")]
    Client {
        /// The channel.
        channel: String,
        /// Why.
        problem: String,
    },
    /// A channel's client cannot be built.
    #[error("channel {channel:?}: {source}")]
    Sink {
        /// The channel.
        channel: String,
        /// The sink's reason.
        source: crate::post::ClientError,
    },
}
