//! Extraction under a profiler: parse one saved page N times with the parser the bot runs, so that
//! `valgrind --tool=callgrind` can count the instructions of one parse as the difference between
//! two runs (`… 11` minus `… 1`, divided by 10). `docs/benchmarks.md` gives the build and the
//! commands; criterion (`benches/parse.rs`) times the same parse.
//!
//! Usage: `parse_loop KIND FIXTURE N` (KIND as `SOURCES` names it: `cricbuzz-json`,
//! `cricketdata`, …). Prints the number of matches the last parse found.

// A measuring harness, not the product: a failed step should stop it loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    unreachable_pub
)]

use cricket_announcer::source::SourceKind;
use std::hint::black_box;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: parse_loop KIND FIXTURE N";
    let kind: SourceKind = args.next().ok_or(usage)?.parse()?;
    let page = std::fs::read_to_string(args.next().ok_or(usage)?)?;
    let n: usize = args.next().ok_or(usage)?.parse()?;
    let mut found = 0;
    for _ in 0..n {
        found = black_box(kind.parse(black_box(&page))?).len();
    }
    println!("{found}");
    Ok(())
}
