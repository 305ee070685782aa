//! The `cricket-announcer` binary: parse the command line, set up logging, run a command.

use clap::Parser;
use cricket_announcer::cli::Cli;
use std::io::Write;
use std::process::ExitCode;

mod commands;

// One thread runs every task. The bot's work is a few dozen page reads and claims every few
// minutes, all I/O-bound but the parsing (milliseconds); a thread per core would add one malloc
// arena per thread, each keeping its own share of a cycle's freed memory (docs/benchmarks.md,
// memory). Blocking store calls (SQLite) still run on tokio's blocking pool.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    if let Err(e) = dotenvy::dotenv() {
        if !e.not_found() {
            // Written, not `eprintln!`ed: that panics when stderr is a closed pipe.
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot read .env: {}",
                commands::describe_env_error(&e)
            );
            return ExitCode::from(2);
        }
    }
    let cli = Cli::parse();
    cricket_announcer::telemetry::init(&cli.settings.log, cli.settings.log_format);
    match commands::dispatch(cli).await {
        Ok(code) => code,
        Err(e) => {
            // One line, on stderr: the cause chain without repeats, never a backtrace.
            // Written, not `eprintln!`ed: that panics when stderr is a closed pipe (`… 2>&1 |
            // head`), and the error may itself be that stdout's pipe closed.
            let _ = writeln!(std::io::stderr(), "error: {}", commands::chain(&e));
            ExitCode::FAILURE
        }
    }
}
