//! The `cricket-announcer` binary: parse the command line, set up logging, run a command.

use std::process::ExitCode;

mod commands;
mod tables;

// One thread runs every task. The bot's work is a few dozen page reads and claims every few
// minutes, all I/O-bound but the parsing (milliseconds); a thread per core would add one malloc
// arena per thread, each keeping its own share of a cycle's freed memory (docs/benchmarks.md,
// memory). Blocking store calls (SQLite) still run on tokio's blocking pool.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    if let Err(failure) = commands::load_dotenv() {
        return commands::finish(Err(failure));
    }
    let cli = match cricket_announcer::cli::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        // Help, version, or a usage error (exit 2). Printed without `expect`: a closed stdout
        // (`--help | head -1`) must not panic.
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    cricket_announcer::telemetry::init(&cli.settings.logging.log, cli.settings.logging.log_format);
    commands::finish(commands::dispatch(cli).await)
}
