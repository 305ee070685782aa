//! Upgrading a deployment: the records an earlier release wrote are read as that release meant
//! them, so an upgraded bot announces nothing a second time.

use crate::cli::{bot, text, with_x};
use crate::helpers::{
    ensure_schema, keys, listed, raw_postgres, raw_redis, root, schema_for, store_env, store_matrix, unique_prefix,
    x_accepts, Kind,
};
use std::path::Path;
use wiremock::MockServer;

store_matrix!(an_x_only_deployment_written_by_the_previous_release_posts_nothing_after_the_upgrade);

/// What the previous release wrote for the X-only configuration (no channels file), read back
/// from each store: see the file's `about`.
fn previous_release() -> serde_json::Value {
    let raw = std::fs::read_to_string(root().join("tests/it/data/previous-release-x-only.json")).unwrap();
    serde_json::from_str(&raw).unwrap()
}

/// Writes the previous release's records into the store of `kind` under `prefix` (the SQLite
/// file in `dir`), exactly as it wrote them, each live for a day.
async fn write_previous_release(kind: Kind, prefix: &str, dir: &Path) {
    let data = previous_release();
    let rows = |name: &str| data[name].as_array().unwrap().clone();
    match kind {
        Kind::Redis => {
            let mut conn = raw_redis().await;
            for row in rows("redis") {
                let _: () = redis::cmd("SET")
                    .arg(format!("{prefix}{}", row["key"].as_str().unwrap()))
                    .arg(row["value"].as_str().unwrap())
                    .arg("EX")
                    .arg(86_400)
                    .query_async(&mut conn)
                    .await
                    .unwrap();
            }
        }
        Kind::Embedded => {
            // The table as the store makes it, then the rows as the previous release wrote them.
            drop(crate::helpers::store(kind, prefix, "upgrade-test:1", &dir.join("shared.db")).await);
            let db = rusqlite::Connection::open(dir.join("shared.db")).unwrap();
            let in_a_day = chrono::Utc::now().timestamp() + 86_400;
            for row in rows("sqlite") {
                db.execute(
                    "INSERT INTO claims (key, record, expires_at) VALUES (?1, ?2, ?3)",
                    rusqlite::params![
                        format!("{prefix}{}", row["key"].as_str().unwrap()),
                        row["record"].as_str().unwrap(),
                        in_a_day
                    ],
                )
                .unwrap();
            }
        }
        Kind::Postgres => {
            let schema = schema_for(prefix);
            ensure_schema(&schema).await;
            // The ledger as the store migrates it, then the rows.
            drop(crate::helpers::store(kind, prefix, "upgrade-test:1", &dir.join("unused.db")).await);
            let db = raw_postgres(&schema).await;
            for row in rows("postgres_claims") {
                db.execute(
                    "INSERT INTO claims (prefix, match_key, state, owner, token, title, attempts, claimed_at, \
                     updated_at, tweet_id, detail, expires_at, record)
                     SELECT $1, r.match_key, r.state, r.owner, r.token, r.title, r.attempts, r.claimed_at,
                            r.updated_at, r.tweet_id, r.detail, now() + interval '1 day', r.record
                     FROM json_populate_record(NULL::claims, $2::text::json) AS r",
                    &[&prefix, &row.to_string()],
                )
                .await
                .unwrap();
            }
            for row in rows("postgres_store_keys") {
                db.execute(
                    "INSERT INTO store_keys (key, value, expires_at) VALUES ($1, $2, now() + interval '1 day')",
                    &[
                        &format!("{prefix}{}", row["key"].as_str().unwrap()),
                        &row["value"].as_str().unwrap(),
                    ],
                )
                .await
                .unwrap();
            }
        }
    }
}

/// Every key (Redis, SQLite) or row key (PostgreSQL) the store of `kind` holds under `prefix`,
/// relative to it, sorted.
async fn stored_keys(kind: Kind, prefix: &str, dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = match kind {
        Kind::Redis => keys(prefix).await,
        Kind::Embedded => {
            let db = rusqlite::Connection::open(dir.join("shared.db")).unwrap();
            let mut q = db.prepare("SELECT key FROM claims").unwrap();
            let rows = q.query_map([], |r| r.get::<_, String>(0)).unwrap();
            rows.map(Result::unwrap).collect()
        }
        Kind::Postgres => {
            let db = raw_postgres(&schema_for(prefix)).await;
            let claims = db
                .query("SELECT prefix || 'match:' || match_key FROM claims", &[])
                .await
                .unwrap();
            let others = db.query("SELECT key FROM store_keys", &[]).await.unwrap();
            claims.iter().chain(&others).map(|r| r.get::<_, String>(0)).collect()
        }
    };
    found.retain(|k| k.starts_with(prefix));
    let mut relative: Vec<String> = found.iter().map(|k| k[prefix.len()..].to_string()).collect();
    relative.sort();
    relative
}

/// A deployment of the previous release posting to X from the environment (no channels file)
/// seeded five matches and posted eight. Upgraded, the bot, configured the same way, reads the
/// same sources: it posts nothing, skips all thirteen, and writes no key of a channel of its own
/// (the environment's X channel keeps the deployment's keys and first-start marker), only the
/// fixture lists of the claims it holds.
async fn an_x_only_deployment_written_by_the_previous_release_posts_nothing_after_the_upgrade(kind: Kind) {
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();
    write_previous_release(kind, &prefix, dir.path()).await;
    let before = stored_keys(kind, &prefix, dir.path()).await;
    assert_eq!(before.len(), 27, "{before:?}");
    let store = store_env(kind, &prefix, dir.path()).await;
    let sources = format!(
        "cricbuzz-json={},{}",
        root()
            .join("fixtures/cricbuzz/matches-v1-live_2024-06-16.json")
            .display(),
        root().join("fixtures/cricbuzz/live-scores_2026-07-17.html").display()
    );
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    cmd.envs(store.iter().map(|(k, v)| (k, v)))
        .env("KEY_PREFIX", &*prefix)
        .env("SOURCES", &sources)
        // Every state: each seeded match would be posted, were its record not found.
        .env("STATES", "upcoming,live,complete,abandoned,other")
        .env("MAX_POSTS_PER_CYCLE", "20")
        .env("POSTS_PER_MINUTE", "100")
        .arg("backfill");
    let o = cmd.output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "backfill: sources read 2, failed 0; matches seen 14, not announceable 1; posted 0, skipped 13, failed 0"
        ),
        "{stdout}\n{stderr}"
    );
    x.verify().await;
    // The same keys as the previous release wrote, and one fixture list per claim: each held
    // sighting lists its claim on its fixture, so that another site's listing of the match
    // finds it there.
    let (lists, others): (Vec<String>, Vec<String>) = stored_keys(kind, &prefix, dir.path())
        .await
        .into_iter()
        .partition(|k| k.starts_with("id:fixture:"));
    assert_eq!(others, before, "the same keys as the previous release wrote");
    let fixtures: Vec<String> = before
        .iter()
        .filter_map(|k| k.strip_prefix("match:"))
        .map(|k| format!("id:fixture:{}", k.rsplit_once('_').unwrap().0))
        .collect();
    assert_eq!(lists, fixtures, "one fixture list per claim");
    let mut cmd = bot(dir.path());
    cmd.envs(store.iter().map(|(k, v)| (k, v)))
        .env("KEY_PREFIX", &*prefix)
        .args(["claims", "list", "--json"]);
    let o = cmd.output().await.unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let mut states: Vec<(String, String)> = listed(&text(&o).0);
    states.sort();
    let mut expected: Vec<(String, String)> = previous_release()["postgres_claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["match_key"].as_str().unwrap().to_string(),
                c["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(states, expected);
    assert_eq!(states.iter().filter(|(_, s)| s == "posted").count(), 8, "{states:?}");
}
