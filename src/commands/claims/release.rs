//! `claims release KEY`: delete an unknown, failed or stuck claim (any, with `--force`) so the
//! match may be announced again; never a value the bot did not write.

use super::super::exit::{Exit, Failure};
use super::super::output::write_stdout;
use cricket_announcer::claim::{ClaimState, ClaimStore, OperatorRelease};
use cricket_announcer::cricket::Identity;
use cricket_announcer::text::escaped;
use std::io::Write;
use std::time::Duration;

/// `claims release`: releases the claim on `asked` (as the operator wrote it, and as the
/// identity it names: a match key, or any identity a claim recorded) in `store`; a healthy
/// claim only with `force`. Exit 3 when it refuses.
///
/// # Errors
/// A [`Failure`] when no claim holds `asked`, the store cannot answer or the output cannot be
/// written.
pub(super) async fn release(
    store: &ClaimStore,
    (written, asked): (&str, &Identity),
    force: bool,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    // A fixture names every match of two sides on a date: releasing one of them is the
    // operator's choice, by its key (`claims show fixture:…` lists them).
    if asked.is_fixture() {
        return Err(Failure::usage(format!(
            "{} names every match of its two sides on that date; release one by its match key \
             (`claims show {}` lists them)",
            written.trim(),
            written.trim()
        )));
    }
    // As `show`: a match key, or any identity a claim recorded.
    let Some((key, _)) = store.peek_identity(asked).await? else {
        return Err(Failure::incomplete(format!("no claim on {}", written.trim())));
    };
    let released = store.operator_release(&key, force, stuck_after).await?;
    // Stuck and deadlines as the store's clock tells them, which judged the release.
    let now = store.now().await?;
    match released {
        OperatorRelease::Released(c) => {
            // A posted match that is still listed will be announced again.
            let warning = if c.state == ClaimState::Posted {
                "; it was posted, and will be posted again if a source still lists it"
            } else {
                ""
            };
            write_stdout(&format!(
                "released {key} (was {}, owner {}){warning}\n",
                c.display_state(now, stuck_after),
                escaped(&c.owner)
            ))?;
            Ok(Exit::Done)
        }
        OperatorRelease::Refused(c) => {
            // A live claim becomes releasable at its owner's deadline: say when.
            let when = if c.state == ClaimState::Claimed {
                let at = c.stuck_at(stuck_after);
                let wait = (at - now).num_seconds().max(0);
                format!(
                    "; its owner gives up at {} (in {wait} s), then it is stuck and can be released",
                    at.format("%Y-%m-%dT%H:%M:%SZ")
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                std::io::stderr(),
                "refused: {key} is {} (owner {}); only unknown, failed or stuck claims are released without --force{when}",
                c.display_state(now, stuck_after),
                escaped(&c.owner)
            );
            Ok(Exit::Refused)
        }
        OperatorRelease::Absent => Err(Failure::incomplete(format!("no claim on {key}"))),
        OperatorRelease::NotARecord(c) => {
            let _ = writeln!(
                std::io::stderr(),
                "refused: {key} holds a value cricket-announcer did not write ({}); it deletes only its own records (by their token): remove this one with the store's own tools (Redis: DEL the key ending in match:{key})",
                escaped(c.detail.as_deref().unwrap_or("not a claim record"))
            );
            Ok(Exit::Refused)
        }
    }
}
