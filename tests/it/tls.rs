//! TLS to the stores, against real servers each test starts: `redis-server` serving only TLS
//! (`--tls-port`), and a PostgreSQL cluster of its own (`initdb`, `ssl = on`), with a CA and a
//! server certificate (for `localhost` only) the test makes with the openssl CLI.

use crate::helpers::{build_live_app, capture_logs, free_port, x_accepts, OwnRedis};
use cricket_announcer::claim::{ClaimError, PostgresClaims};
use std::path::{Path, PathBuf};
use std::process::Command;
use tracing::instrument::WithSubscriber;
use wiremock::MockServer;

/// A throwaway CA and a server certificate it signed, naming `localhost` (not `127.0.0.1`, so
/// connecting by address shows what host name verification does).
struct Certs {
    dir: tempfile::TempDir,
}

impl Certs {
    fn generate() -> Certs {
        let dir = tempfile::tempdir().unwrap();
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            dir.path(),
            &[
                &["req", "-x509"],
                &ec[..],
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=cricket-announcer test CA",
                ],
            ]
            .concat(),
        );
        openssl(
            dir.path(),
            &[
                &["req"],
                &ec[..],
                &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
            ]
            .concat(),
        );
        std::fs::write(
            dir.path().join("server.ext"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            dir.path(),
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "server.pem",
                "-days",
                "2",
                "-extfile",
                "server.ext",
            ],
        );
        Certs { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn ca(&self) -> String {
        self.path("ca.pem").display().to_string()
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl CLI must be installed (see .ci/run)");
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every message of `e`'s chain, joined: what an operator reads.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    cricket_announcer::telemetry::CauseChain(e).to_string()
}

#[tokio::test]
async fn a_redis_serving_only_tls_is_claimed_in_through_rediss_and_valkeys_urls_with_the_ca_file() {
    let certs = Certs::generate();
    let port = free_port();
    let p = port.to_string();
    let (cert, key, ca) = (certs.path("server.pem"), certs.path("server.key"), certs.ca());
    let _redis = OwnRedis::start_on(
        port,
        &[
            "--port",
            "0",
            "--tls-port",
            &p,
            "--tls-cert-file",
            cert.to_str().unwrap(),
            "--tls-key-file",
            key.to_str().unwrap(),
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ],
    );
    let rediss = format!("rediss://localhost:{port}/");
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;

    // The test CA is in no system store: without the CA file the server is not trusted.
    let refused = build_live_app(&["--redis-url", &rediss], "tls:", &x)
        .await
        .err()
        .expect("an untrusted server");
    let refused = chain(refused.as_ref());
    assert!(
        refused.starts_with("cannot connect to REDIS_URL: ")
            && refused.contains("invalid peer certificate: UnknownIssuer"),
        "{refused}"
    );

    let app = build_live_app(&["--redis-url", &rediss, "--redis-ca-file", &ca], "tls:", &x)
        .await
        .unwrap();
    app.init_store().await.unwrap();
    let (summary, ok) = app.backfill().await;
    assert_eq!((summary.posted, summary.skipped, ok), (4, 0, true));

    let valkeys = format!("valkeys://localhost:{port}/");
    let again = build_live_app(&["--redis-url", &valkeys, "--redis-ca-file", &ca], "tls:", &x)
        .await
        .unwrap();
    let (summary, ok) = again.backfill().await;
    assert_eq!(
        (summary.posted, summary.skipped, ok),
        (0, 4, true),
        "the same store, every match held"
    );
    x.verify().await;
}

/// A PostgreSQL cluster a test owns: `initdb` in a temporary directory (as the `postgres` user
/// when the tests run as root, which initdb refuses), `ssl = on` with [`Certs`]' server
/// certificate, listening on 127.0.0.1 on a free port. Stopped (immediate) on drop.
struct OwnPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl OwnPostgres {
    fn start(certs: &Certs) -> OwnPostgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL server binaries in /usr/lib/postgresql (see .ci/run)")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").exists())
            .max_by_key(|b| b.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()))
            .expect("no /usr/lib/postgresql/*/bin/initdb");
        // SAFETY: geteuid reads the process' effective user id; it cannot fail.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let pg = OwnPostgres {
            dir: tempfile::tempdir().unwrap(),
            bin,
            port: free_port(),
            as_postgres,
        };
        let data = pg.data();
        for (name, to) in [("server.pem", "server.crt"), ("server.key", "server.key")] {
            std::fs::create_dir_all(pg.dir.path().join("certs")).unwrap();
            std::fs::copy(certs.path(name), pg.dir.path().join("certs").join(to)).unwrap();
        }
        if as_postgres {
            run(Command::new("chown").args(["-R", "postgres:", pg.dir.path().to_str().unwrap()]));
        }
        run(Command::new("chmod").args(["0600", pg.dir.path().join("certs/server.key").to_str().unwrap()]));
        run(pg
            .command("initdb")
            .args(["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync"]));
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\nfsync = off\nssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
            pg.port,
            pg.dir.path().display(),
            pg.dir.path().join("certs/server.crt").display(),
            pg.dir.path().join("certs/server.key").display(),
        );
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(Path::new(&data).join("postgresql.conf"))
            .unwrap();
        std::io::Write::write_all(&mut file, conf.as_bytes()).unwrap();
        let log = pg.dir.path().join("server.log");
        run(pg
            .command("pg_ctl")
            .args(["-D", &data, "-l", log.to_str().unwrap(), "-w", "start"]));
        pg
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// `tool` from the server's bin directory, as the `postgres` user when running as root.
    fn command(&self, tool: &str) -> Command {
        let tool = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(tool);
            c
        } else {
            Command::new(tool)
        }
    }

    fn url(&self, host: &str, sslmode: &str) -> String {
        format!(
            "postgres://postgres@{host}:{}/postgres?sslmode={sslmode}&application_name={}",
            self.port,
            sslmode.replace('-', "_")
        )
    }

    /// Whether the connections named `application_name` are encrypted, asked of the server.
    async fn encrypted(&self, application_name: &str) -> Vec<bool> {
        self.session()
            .await
            .query(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1",
                &[&application_name],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// A plain-text session as the superuser.
    async fn session(&self) -> tokio_postgres::Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable", self.port);
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client
    }

    /// Turns TLS off (a reload), and waits until new sessions see it.
    async fn ssl_off(&self) {
        let session = self.session().await;
        // Two statements: ALTER SYSTEM refuses to run in the implicit transaction of a batch.
        session.batch_execute("ALTER SYSTEM SET ssl = off").await.unwrap();
        session.batch_execute("SELECT pg_reload_conf()").await.unwrap();
        for _ in 0..100 {
            let row = self.session().await.query_one("SHOW ssl", &[]).await.unwrap();
            if row.get::<_, String>(0) == "off" {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("ssl still on after the reload");
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .output();
    }
}

fn run(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[tokio::test]
async fn postgres_sslmodes_encrypt_and_verify_as_libpq_does_and_prefer_says_when_it_falls_back_to_plain_text() {
    let certs = Certs::generate();
    let pg = OwnPostgres::start(&certs);
    let ca = certs.path("ca.pem");
    let connect = |host: &'static str, mode: &'static str, ca: Option<&Path>| {
        let url = pg.url(host, mode);
        let ca = ca.map(Path::to_path_buf);
        async move { PostgresClaims::connect_with(&url, "tls:", "tester", ca.as_deref()).await }
    };
    let refusal = |r: Result<PostgresClaims, ClaimError>| chain(&r.err().expect("refused"));

    // Encrypted, and checked as far as each mode promises.
    for (host, mode, ca) in [
        ("localhost", "verify-full", Some(ca.as_path())),
        ("127.0.0.1", "verify-ca", Some(ca.as_path())),
        ("127.0.0.1", "require", None),
        ("127.0.0.1", "prefer", None),
    ] {
        let store = connect(host, mode, ca)
            .await
            .unwrap_or_else(|e| panic!("{mode}: {}", chain(&e)));
        let sessions = pg.encrypted(&mode.replace('-', "_")).await;
        assert!(
            !sessions.is_empty() && sessions.iter().all(|s| *s),
            "{mode}: {sessions:?}"
        );
        drop(store);
    }
    let store = connect("127.0.0.1", "disable", None).await.unwrap();
    let sessions = pg.encrypted("disable").await;
    assert!(!sessions.is_empty() && sessions.iter().all(|s| !*s), "{sessions:?}");
    drop(store);

    // The certificate names localhost, not 127.0.0.1; and the test CA is in no system store.
    let wrong_name = refusal(connect("127.0.0.1", "verify-full", Some(ca.as_path())).await);
    assert!(
        wrong_name.contains("invalid peer certificate: certificate not valid for name \"127.0.0.1\""),
        "{wrong_name}"
    );
    let unknown_ca = refusal(connect("localhost", "verify-ca", None).await);
    assert!(
        unknown_ca.contains("invalid peer certificate: UnknownIssuer"),
        "{unknown_ca}"
    );
    let unknown_sslmode = refusal(connect("localhost", "allow", None).await);
    assert_eq!(
        unknown_sslmode,
        "sslmode=\"allow\" in DATABASE_URL is not one of disable, prefer, require, verify-ca, verify-full"
    );

    // The whole bot on verify-full: each match posted once.
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let url = pg.url("localhost", "verify-full");
    let app = build_live_app(
        &["--database-url", &url, "--database-ca-file", ca.to_str().unwrap()],
        "tls:",
        &x,
    )
    .await
    .unwrap();
    app.init_store().await.unwrap();
    let (summary, ok) = app.backfill().await;
    assert_eq!((summary.posted, ok), (4, true));
    x.verify().await;

    // A server without TLS: prefer connects in plain text and says so; require refuses.
    pg.ssl_off().await;
    let (logs, buffer) = capture_logs();
    connect("127.0.0.1", "prefer", None)
        .with_subscriber(logs)
        .await
        .unwrap();
    assert!(
        buffer.text().contains("DATABASE_URL sslmode=prefer (the default): the server offers no TLS, so the connection is plain text; set sslmode=require (or verify-full) to refuse plain text"),
        "{}",
        buffer.text()
    );
    let plain = refusal(connect("127.0.0.1", "require", None).await);
    assert!(plain.contains("server does not support TLS"), "{plain}");
}
