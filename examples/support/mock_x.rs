#![allow(dead_code)] // Shared by several examples; each uses part of it.

//! A minimal X API stand-in on loopback for the benchmark examples: answers every request with
//! 201 and a tweet id at once, and reports the instant each request's first bytes arrived (the
//! moment the POST left the bot, give or take a loopback hop). Hand-written over TCP rather than
//! wiremock so that request matching and recording add nothing to what is measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A running mock: its base URL and the arrival instants of the requests, in order.
pub struct MockX {
    pub base: url::Url,
    pub arrivals: mpsc::UnboundedReceiver<Instant>,
    pub requests: Arc<AtomicU64>,
}

/// Runs `bench` with a mock started beside it. The mock runs on a runtime and OS thread of its
/// own, as X is another machine (on the bot's single-thread runtime it would only read a request,
/// and stamp its arrival, when the bot yields); `bench` runs on the runtime `run` itself uses
/// (src/main.rs): one thread, so a connection's replies and the code reading them never cross
/// threads here either.
pub fn run_beside<F: std::future::Future<Output = ()>>(bench: impl FnOnce(MockX) -> F) {
    let mock_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("mock X runtime");
    let mock = mock_runtime.block_on(start());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(bench(mock));
    mock_runtime.shutdown_background();
}

/// Starts the mock on 127.0.0.1 (a free port) in a background task.
pub async fn start() -> MockX {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind mock X");
    let base = url::Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    let (tx, arrivals) = mpsc::unbounded_channel();
    let requests = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&requests);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let tx = tx.clone();
            let count = Arc::clone(&count);
            sock.set_nodelay(true).ok();
            tokio::spawn(async move {
                let mut buf = Vec::with_capacity(4096);
                let mut chunk = [0u8; 4096];
                loop {
                    // One request: headers up to the blank line, then Content-Length bytes.
                    let mut arrived = None;
                    let head_end = loop {
                        if let Some(i) = find(&buf, b"\r\n\r\n") {
                            break i + 4;
                        }
                        let n = match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        arrived.get_or_insert_with(Instant::now);
                        buf.extend_from_slice(&chunk[..n]);
                    };
                    let arrived = arrived.unwrap_or_else(Instant::now);
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + len {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..head_end + len);
                    let id = count.fetch_add(1, Ordering::SeqCst) + 1;
                    let _ = tx.send(arrived);
                    let body = format!(r#"{{"data":{{"id":"{id}","text":"ok"}}}}"#);
                    let answer = format!(
                        "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if sock.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    MockX {
        base,
        arrivals,
        requests,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Credentials the mock accepts (it checks none).
pub fn credentials() -> cricket_announcer::post::XCredentials {
    use secrecy::SecretString;
    cricket_announcer::post::XCredentials {
        api_key: SecretString::from("bench-key"),
        api_secret: SecretString::from("bench-secret"),
        access_token: SecretString::from("bench-token"),
        access_token_secret: SecretString::from("bench-token-secret"),
    }
}
