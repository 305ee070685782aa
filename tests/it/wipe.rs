//! A store wiped in the middle of a cycle (`FLUSHALL`, a restart without persistence) never
//! makes the cycle's matches look free: the claim itself checks the first-start marker in its
//! atomic step. A loopback proxy in front of a Redis of the test's own flushes it before the
//! n-th request of a cycle, for every n.

use crate::helpers::{self, unique_prefix, OwnRedis};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use wiremock::MockServer;

/// A TCP proxy to `upstream` counting the client's requests (each read of the client's side is
/// one request or pipeline); when armed with `n`, it runs `FLUSHALL` on `upstream` (on a
/// connection of its own) just before it forwards the n-th request counted from then on.
struct FlushingProxy {
    addr: std::net::SocketAddr,
    seen: Arc<AtomicUsize>,
    flush_at: Arc<AtomicUsize>,
    flushed: Arc<AtomicUsize>,
}

impl FlushingProxy {
    async fn start(upstream: String) -> FlushingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let flush_at = Arc::new(AtomicUsize::new(usize::MAX));
        let flushed = Arc::new(AtomicUsize::new(0));
        let (s, f, d) = (seen.clone(), flush_at.clone(), flushed.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, s, f, d) = (upstream.clone(), s.clone(), f.clone(), d.clone());
                tokio::spawn(async move {
                    let server = TcpStream::connect(&upstream).await.unwrap();
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async {
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            let n = match cr.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            let count = s.fetch_add(1, Ordering::SeqCst) + 1;
                            if count == f.load(Ordering::SeqCst) {
                                flushall(&upstream).await;
                                d.fetch_add(1, Ordering::SeqCst);
                            }
                            if sw.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    };
                    let down = async {
                        let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    };
                    tokio::join!(up, down);
                });
            }
        });
        FlushingProxy {
            addr,
            seen,
            flush_at,
            flushed,
        }
    }

    fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// Flushes before the n-th request from now (1: the next one).
    fn arm(&self, n: usize) {
        self.flush_at
            .store(self.seen.load(Ordering::SeqCst) + n, Ordering::SeqCst);
    }
}

async fn flushall(upstream: &str) {
    let client = redis::Client::open(format!("redis://{upstream}/")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_before_any_request_of_a_cycle_never_posts_a_match_again() {
    let redis = OwnRedis::start();
    let upstream = redis
        .url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string();
    // A cycle over the four matches, all held: the marker refresh, one look-up, then (once the
    // flush made them look free) one claim each. Flushing before each of those requests, and
    // past the end, covers every gap between two round trips.
    let mut flushes = 0;
    for n in 1..=6 {
        let proxy = FlushingProxy::start(upstream.clone()).await;
        let x = MockServer::start().await;
        helpers::x_accepts(&x, 4).await;
        let prefix = unique_prefix();
        let bot = helpers::live_app(&proxy.url(), &prefix, &x).await;
        assert!(bot.init_store().await.unwrap());
        let first = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(first.posted, 4, "{first:?}");
        proxy.arm(n);
        let second = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(second.posted, 0, "flush before request {n}: {second:?}");
        let flushed_in_second = proxy.flushed.load(Ordering::SeqCst) > 0;
        if flushed_in_second {
            assert!(
                second.refused.as_deref().is_some_and(|r| r.contains("lost its data")),
                "flush before request {n}: {second:?}"
            );
        }
        // Until an operator re-seeds, the next cycle refuses too.
        let third = bot.cycle(&CancellationToken::new()).await;
        assert_eq!(third.posted, 0, "after a flush before request {n}: {third:?}");
        if proxy.flushed.load(Ordering::SeqCst) > 0 {
            assert!(third.refused.is_some(), "flush before request {n}: {third:?}");
            flushes += 1;
        }
        x.verify().await;
        flushall(&upstream).await;
    }
    assert_eq!(
        flushes, 4,
        "requests 1-2 of the second cycle and 3-4 of the third were flushed before"
    );
}
