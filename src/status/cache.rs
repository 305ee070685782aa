//! The status page's cache: the page and its JSON, rendered from one snapshot and kept for
//! [`CACHE_FOR`], so that however often the page is refreshed the bot makes at most one
//! snapshot (memory reads only) per that time, and `/` and `/status.json` fetched within it
//! show the same data.

use super::page;
use crate::app::App;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a rendered page is served before the next request renders a new one.
pub const CACHE_FOR: Duration = Duration::from_secs(5);

/// The page and the JSON of one snapshot.
#[derive(Debug)]
pub struct Rendered {
    /// `GET /`: the HTML page, or why it could not be rendered.
    pub html: Result<String, String>,
    /// `GET /status.json`.
    pub json: Result<String, String>,
}

/// The last rendering and when it was made.
#[derive(Debug, Default)]
pub struct PageCache {
    last: tokio::sync::Mutex<Option<(Instant, Arc<Rendered>)>>,
}

impl PageCache {
    /// The page and JSON of `app` as of at most [`CACHE_FOR`] ago; rendered now when older.
    pub async fn get(&self, app: &App) -> Arc<Rendered> {
        let mut last = self.last.lock().await;
        if let Some((at, r)) = last.as_ref() {
            if at.elapsed() < CACHE_FOR {
                return Arc::clone(r);
            }
        }
        let s = app.snapshot();
        let r = Arc::new(Rendered {
            html: page::html(&s, CACHE_FOR.as_secs()).map_err(|e| e.to_string()),
            json: page::json(&s).map_err(|e| e.to_string()),
        });
        *last = Some((Instant::now(), Arc::clone(&r)));
        r
    }
}
