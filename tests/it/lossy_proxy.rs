//! A loopback HTTP proxy in front of a real server that can spoil the exchanges of one path:
//! lose the answer (the request reaches the server, which acts on it, and the client's
//! connection is closed before any answer), lose the request (the connection is closed after
//! the client sent it, and the server never sees it), or send the request twice (as a retrying
//! front end would) and give the client the second answer. Everything else passes through
//! unchanged.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What the proxy does to the next exchanges on its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spoil {
    /// Passes them through.
    Nothing,
    /// Sends the request on, then closes the client's connection without an answer.
    LoseAnswer,
    /// Closes the client's connection without sending the request on.
    LoseRequest,
    /// Sends the request on twice and answers the second answer.
    SendTwice,
}

/// The running proxy; stops when dropped.
pub struct LossyProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// What is done to the path's next exchanges, in order.
    plan: Arc<Mutex<VecDeque<Spoil>>>,
    /// Requests to the path the server received (each send counted).
    pub sent: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LossyProxy {
    /// A proxy to `upstream` (`http://host:port`) spoiling requests whose path is `path`.
    pub async fn start(upstream: &str, path: &'static str) -> LossyProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let plan = Arc::new(Mutex::new(VecDeque::new()));
        let sent = Arc::new(AtomicUsize::new(0));
        let (upstream, shared_plan, shared_sent) = (upstream.to_string(), plan.clone(), sent.clone());
        // Plain bodies both ways: the client's Accept-Encoding is not passed on.
        let client = cricket_announcer::http_client::builder().no_gzip().build().unwrap();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (upstream, plan, sent, client) = (
                    upstream.clone(),
                    shared_plan.clone(),
                    shared_sent.clone(),
                    client.clone(),
                );
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let (upstream, plan, sent, client) =
                            (upstream.clone(), plan.clone(), sent.clone(), client.clone());
                        async move { exchange(req, &upstream, path, &plan, &sent, &client).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        LossyProxy { url, plan, sent, task }
    }

    /// Spoils the next exchanges on the path, one each, as `how` says in order.
    pub fn spoil(&self, how: &[Spoil]) {
        *self.plan.lock().unwrap() = how.iter().copied().collect();
    }
}

/// Why the client got no answer (hyper closes the connection on a service's error).
#[derive(Debug)]
struct Lost;

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("answer lost on purpose")
    }
}

impl std::error::Error for Lost {}

async fn exchange(
    req: Request<Incoming>,
    upstream: &str,
    path: &str,
    plan: &Mutex<VecDeque<Spoil>>,
    sent: &AtomicUsize,
    client: &reqwest::Client,
) -> Result<Response<Full<Bytes>>, Lost> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map_err(|_| Lost)?.to_bytes();
    let target = format!("{upstream}{}", parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    let on_path = parts.uri.path() == path;
    let spoil = if on_path {
        plan.lock().unwrap().pop_front().unwrap_or(Spoil::Nothing)
    } else {
        Spoil::Nothing
    };
    if spoil == Spoil::LoseRequest {
        return Err(Lost);
    }
    let send = || {
        let mut request = client.request(parts.method.clone(), &target).body(body.clone());
        for (name, value) in &parts.headers {
            let hop = [
                hyper::header::HOST,
                hyper::header::CONTENT_LENGTH,
                hyper::header::ACCEPT_ENCODING,
            ];
            if !hop.contains(name) {
                request = request.header(name, value);
            }
        }
        if on_path {
            sent.fetch_add(1, Ordering::SeqCst);
        }
        request.send()
    };
    let mut answer = send().await.map_err(|_| Lost)?;
    match spoil {
        Spoil::Nothing | Spoil::LoseRequest => {}
        Spoil::LoseAnswer => {
            // The server has acted on it; wait for its answer so the order is certain.
            let _ = answer.bytes().await;
            return Err(Lost);
        }
        Spoil::SendTwice => {
            let _ = answer.bytes().await;
            answer = send().await.map_err(|_| Lost)?;
        }
    }
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        if name != hyper::header::CONTENT_LENGTH && name != hyper::header::TRANSFER_ENCODING {
            response = response.header(name, value);
        }
    }
    let bytes = answer.bytes().await.map_err(|_| Lost)?;
    Ok(response.body(Full::new(bytes)).unwrap())
}
