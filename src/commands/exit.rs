//! How a command ends: the exit codes (one table for every command, README "Exit codes"), the
//! [`Failure`] a command returns, and the one place each error type is given its code.

use cricket_announcer::app::StartError;
use cricket_announcer::channels::ChannelsError;
use cricket_announcer::claim::ClaimError;
use cricket_announcer::config::ConfigError;
use cricket_announcer::status::StatusError;
use cricket_announcer::telemetry::CauseChain;
use cricket_announcer::text::escaped;
use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;

/// A command's exit code (README, "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: every source read, the store answered, nothing refused, every post made (or printed).
    Done,
    /// 1: an error (named on stderr), or a command that ran but did not complete: a source that
    /// could not be read, a store that did not answer, a dry run whose output could not be
    /// written, a `run` or `backfill` whose shutdown grace ran out with work in flight.
    Incomplete,
    /// 2: the command line, `.env`, or the value of an option or variable cannot be used
    /// (clap's own code for usage errors).
    Usage,
    /// 3: an operator command refused (releasing a healthy claim, or a value the bot did not
    /// write).
    Refused,
    /// 4: the bot refused to post: the store was never initialised, it lost its data, or posting
    /// halted on a channel. `run` exits with it at once.
    NotPosting,
    /// 5: a `backfill` (or `run --cycles N`) in which a post failed or its outcome is unknown.
    PostsFailed,
}

impl Exit {
    /// When several codes apply, the first of these wins (README: "the first of 2, 4, 1, 5").
    /// 3 comes from `claims release` alone, which has no other code to meet; it stands beside 2
    /// as the other refusal the caller must act on.
    pub const PRECEDENCE: [Exit; 6] = [
        Exit::Usage,
        Exit::Refused,
        Exit::NotPosting,
        Exit::Incomplete,
        Exit::PostsFailed,
        Exit::Done,
    ];

    /// The number the process exits with.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Incomplete => 1,
            Exit::Usage => 2,
            Exit::Refused => 3,
            Exit::NotPosting => 4,
            Exit::PostsFailed => 5,
        }
    }

    /// The code of a command for which every one of `codes` applies: the first of them in
    /// [`Exit::PRECEDENCE`]; [`Exit::Done`] when none does.
    pub fn first_of(codes: impl IntoIterator<Item = Exit>) -> Exit {
        let rank = |e: &Exit| Exit::PRECEDENCE.iter().position(|p| p == e).unwrap_or(usize::MAX);
        codes.into_iter().min_by_key(rank).unwrap_or(Exit::Done)
    }

    /// [`Exit::Done`] when `ok`, else [`Exit::Incomplete`].
    pub fn done_if(ok: bool) -> Exit {
        if ok {
            Exit::Done
        } else {
            Exit::Incomplete
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

// The one table of errors and their codes: every error a command can meet is one of these
// types, and a new type (or a new variant of `StartError`) needs its line here to compile.

/// A setting that cannot be used: 2.
impl From<&ConfigError> for Exit {
    fn from(_: &ConfigError) -> Exit {
        Exit::Usage
    }
}

/// A channels file that cannot be used: 2.
impl From<&ChannelsError> for Exit {
    fn from(_: &ChannelsError) -> Exit {
        Exit::Usage
    }
}

/// A part of the bot that cannot be made: 2 when the operator's setting is what cannot be used
/// (a template, a channel of the channels file, no source), 1 when a store or a client failed.
impl From<&StartError> for Exit {
    fn from(e: &StartError) -> Exit {
        match e {
            StartError::NoSources
            | StartError::Template(_)
            | StartError::ChannelTemplate { .. }
            | StartError::ChannelSink { .. } => Exit::Usage,
            StartError::Store { .. }
            | StartError::Eviction(_)
            | StartError::Identities(_)
            | StartError::HttpClient { .. }
            | StartError::X(_) => Exit::Incomplete,
        }
    }
}

/// A store that did not answer (or answered what cannot be read): 1.
impl From<&ClaimError> for Exit {
    fn from(_: &ClaimError) -> Exit {
        Exit::Incomplete
    }
}

/// The status endpoint's metrics that cannot be set up: 1.
impl From<&StatusError> for Exit {
    fn from(_: &StatusError) -> Exit {
        Exit::Incomplete
    }
}

/// Output that cannot be written: 1; but a closed stdout (`claims list | head -1`) is not an
/// error: the reader had what it wanted (0, said nowhere).
impl From<&std::io::Error> for Exit {
    fn from(e: &std::io::Error) -> Exit {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Exit::Done
        } else {
            Exit::Incomplete
        }
    }
}

/// A `--json` line that cannot be made: 1.
impl From<&serde_json::Error> for Exit {
    fn from(_: &serde_json::Error) -> Exit {
        Exit::Incomplete
    }
}

/// A command that failed: what went wrong (said on stderr) and the code it exits with.
#[derive(Debug)]
pub(crate) struct Failure {
    exit: Exit,
    error: anyhow::Error,
}

impl Failure {
    /// A usage error found after parsing, a value clap could not check (exit 2): `why` says
    /// what is wrong and what to do.
    pub(crate) fn usage(why: impl Display) -> Failure {
        Failure {
            exit: Exit::Usage,
            error: anyhow::Error::msg(why.to_string()),
        }
    }

    /// A command that could not do what it was asked (exit 1): `why` says what is missing.
    pub(crate) fn incomplete(why: impl Display) -> Failure {
        Failure {
            exit: Exit::Incomplete,
            error: anyhow::Error::msg(why.to_string()),
        }
    }

    /// The same failure, said after `what` was being done (`cannot listen on METRICS_ADDR=…`).
    pub(crate) fn context(self, what: impl Display + Send + Sync + 'static) -> Failure {
        Failure {
            exit: self.exit,
            error: self.error.context(what),
        }
    }
}

/// Every error of the table above becomes a failure with its code.
impl<E> From<E> for Failure
where
    E: std::error::Error + Send + Sync + 'static,
    for<'a> Exit: From<&'a E>,
{
    fn from(e: E) -> Failure {
        Failure {
            exit: Exit::from(&e),
            error: e.into(),
        }
    }
}

/// The exit code of a command's result, saying on stderr what went wrong: one line, the cause
/// chain without repeats, never a backtrace.
pub(crate) fn finish(result: Result<Exit, Failure>) -> ExitCode {
    match result {
        Ok(exit) => exit.into(),
        // Nothing to say: a closed stdout, the reader had what it wanted.
        Err(Failure { exit: Exit::Done, .. }) => ExitCode::SUCCESS,
        Err(Failure { exit, error }) => {
            let text = CauseChain(error.as_ref()).to_string();
            // Written, not `eprintln!`ed: that panics when stderr is a closed pipe
            // (`… 2>&1 | head`).
            let _ = writeln!(std::io::stderr(), "error: {}", escaped(&text));
            exit.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_are_the_readmes_and_so_is_their_precedence() {
        let readme = include_str!("../../README.md");
        for exit in Exit::PRECEDENCE {
            let row = format!("\n| {} | ", exit.code());
            assert!(readme.contains(&row), "README has no row for exit {}", exit.code());
        }
        // README: "when several apply, the first of 2, 4, 1, 5 wins".
        let order: Vec<u8> = Exit::PRECEDENCE
            .iter()
            .map(|e| e.code())
            .filter(|c| ![0, 3].contains(c))
            .collect();
        let said: String = order.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
        assert!(
            readme.replace('\n', " ").contains(&format!("the first of {said} wins")),
            "{said}"
        );
    }

    #[test]
    fn the_first_code_in_precedence_wins_and_none_is_done() {
        assert_eq!(Exit::first_of([]), Exit::Done);
        assert_eq!(Exit::first_of([Exit::PostsFailed, Exit::Incomplete]), Exit::Incomplete);
        assert_eq!(
            Exit::first_of([Exit::PostsFailed, Exit::Incomplete, Exit::NotPosting]),
            Exit::NotPosting
        );
        assert_eq!(Exit::first_of([Exit::NotPosting, Exit::Usage]), Exit::Usage);
        assert_eq!(Exit::first_of([Exit::Done, Exit::PostsFailed]), Exit::PostsFailed);
    }

    #[test]
    fn each_error_type_has_its_code_and_a_closed_stdout_is_not_an_error() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(Exit::from(&pipe), Exit::Done);
        assert_eq!(finish(Err(pipe.into())), ExitCode::SUCCESS);
        let full = std::io::Error::other("disk full");
        assert_eq!(Failure::from(full).exit, Exit::Incomplete);
        assert_eq!(Exit::from(&StartError::NoSources), Exit::Usage);
        assert_eq!(Failure::usage("no").exit, Exit::Usage);
        assert_eq!(Failure::incomplete("no").context("doing").exit, Exit::Incomplete);
    }
}
