//! Tests' view of the log: what a piece of code logs while it runs, as text, through the
//! bot's own subscriber (`crate::telemetry::subscriber`).

use std::sync::{Arc, Mutex};

/// A log writer keeping every line in memory.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `f` with the log at `filter` ("debug", "warn") and returns its result and the lines it
/// logged on this thread.
pub(crate) fn logged<R>(filter: &str, f: impl FnOnce() -> R) -> (R, String) {
    let lines = Lines::default();
    let sink = lines.clone();
    let subscriber = crate::telemetry::subscriber(filter, move || sink.clone(), false);
    let result = tracing::subscriber::with_default(subscriber, f);
    let text = lines
        .0
        .lock()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    (result, text)
}
