//! The claim protocol on the Redis deployments people run beside one server: a Redis Cluster
//! of three primaries, and a primary with a replica behind Redis Sentinel, failed over in the
//! test. Each test starts its own `redis-server`s on free ports and removes them.

use crate::cli::{bot, page_server, start, text, wait_all, with_x, CRICBUZZ_KEYS};
use crate::durable::replication;
use crate::helpers::{free_port, live_app, root, x_accepts, OwnRedis};
use cricket_announcer::claim::{cluster_prefix, ClaimStore, Deployment, RedisClaims};
use std::path::Path;
use std::process::Output;
use std::time::Duration;
use wiremock::MockServer;

/// A cluster of three primaries (no replicas) on loopback, each a `redis-server` of its own.
struct OwnCluster {
    nodes: Vec<OwnRedis>,
}

impl OwnCluster {
    /// Starts three nodes, joins them (`redis-cli --cluster create`), and waits until every
    /// node says `cluster_state:ok` and knows all 16,384 slots.
    async fn start() -> OwnCluster {
        let nodes: Vec<OwnRedis> = (0..3)
            .map(|_| OwnRedis::start_with(&["--cluster-enabled", "yes", "--appendonly", "no"]))
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port())).collect();
        let created = std::process::Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli must be installed (see .ci/run)");
        assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stdout));
        let cluster = OwnCluster { nodes };
        for node in &cluster.nodes {
            for attempt in 0.. {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query_async(&mut connect(&node.url()).await)
                    .await
                    .unwrap();
                if info.contains("cluster_state:ok") && info.contains("cluster_slots_assigned:16384") {
                    break;
                }
                assert!(attempt < 200, "the cluster never became ok: {info}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        cluster
    }

    /// The node that serves `key`'s slot (`CLUSTER KEYSLOT`, then `CLUSTER NODES`' ranges),
    /// by index.
    async fn node_of(&self, key: &str) -> usize {
        let mut conn = connect(&self.nodes[0].url()).await;
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query_async(&mut conn)
            .await
            .unwrap();
        let shards: Vec<redis::Value> = redis::cmd("CLUSTER").arg("SLOTS").query_async(&mut conn).await.unwrap();
        for shard in shards {
            let redis::Value::Array(shard) = shard else {
                panic!("{shard:?}")
            };
            let (redis::Value::Int(lo), redis::Value::Int(hi), redis::Value::Array(primary)) =
                (&shard[0], &shard[1], &shard[2])
            else {
                panic!("{shard:?}")
            };
            if (*lo..=*hi).contains(&i64::from(slot)) {
                let redis::Value::Int(port) = primary[1] else {
                    panic!("{primary:?}")
                };
                return self.nodes.iter().position(|n| i64::from(n.port()) == port).unwrap();
            }
        }
        panic!("no node serves slot {slot}")
    }
}

async fn connect(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

/// Every key on one server (`KEYS *`: these servers are the test's own), sorted.
async fn all_keys(url: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut connect(url).await)
        .await
        .unwrap();
    keys.sort();
    keys
}

/// The calls a server has counted for `command` (`INFO commandstats`).
async fn calls(url: &str, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut connect(url).await)
        .await
        .unwrap();
    crate::helpers::command_stats_of(&info)
        .get(command)
        .copied()
        .unwrap_or(0)
}

/// `backfill --init-store` of the Cricbuzz fixture against `redis_url` with `env`, as its own
/// process, against X at `x`.
fn backfill(dir: &Path, redis_url: &str, x: &MockServer, env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = bot(dir);
    with_x(&mut cmd, x);
    cmd.env("REDIS_URL", redis_url)
        .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
        .env("MAX_POSTS_PER_CYCLE", "10")
        .envs(env.iter().copied())
        .args(["backfill", "--init-store"]);
    cmd
}

/// `claims list --json` against `redis_url`: each claim's match key and state.
async fn claims_list(dir: &Path, redis_url: &str, env: &[(&str, &str)]) -> Vec<(String, String)> {
    let o: Output = bot(dir)
        .env("REDIS_URL", redis_url)
        .envs(env.iter().copied())
        .args(["claims", "list", "--json"])
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let mut rows: Vec<(String, String)> = crate::helpers::listed(&stdout);
    rows.sort();
    rows
}

fn all_posted() -> Vec<(String, String)> {
    CRICBUZZ_KEYS
        .iter()
        .map(|k| (k.to_string(), "posted".to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_three_processes_post_each_match_once_and_every_claim_is_listed() {
    let cluster = OwnCluster::start().await;
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let dir = tempfile::tempdir().unwrap();

    // Three processes, each seeded with a different node, race on one page.
    let children: Vec<_> = cluster
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let id = format!("replica-{i}");
            start(&mut backfill(dir.path(), &node.url(), &x, &[("INSTANCE_ID", &id)]))
        })
        .collect();
    let outputs = wait_all(children).await;
    for o in &outputs {
        assert!(o.status.success(), "{:?}", text(o));
    }
    x.verify().await;
    let summaries: Vec<String> = outputs
        .iter()
        .map(|o| {
            text(o)
                .0
                .lines()
                .find(|l| l.contains("posted"))
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let posted: usize = summaries
        .iter()
        .map(|s| {
            s.split("posted ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(posted, 4, "{summaries:?}");

    // Every key of the deployment hashes to one slot (the prefix is the hash tag), on one
    // node; `claims list` through any node finds every claim.
    let prefix = cluster_prefix("cricket-announcer:").unwrap();
    assert_eq!(prefix, "{cricket-announcer:}");
    let home = cluster.node_of(&prefix).await;
    let on_home = all_keys(&cluster.nodes[home].url()).await;
    assert_eq!(
        on_home
            .iter()
            .filter(|k| k.starts_with("{cricket-announcer:}match:"))
            .count(),
        4,
        "{on_home:?}"
    );
    assert!(on_home.iter().all(|k| k.starts_with(&prefix)), "{on_home:?}");
    for (i, node) in cluster.nodes.iter().enumerate() {
        if i != home {
            assert_eq!(all_keys(&node.url()).await, Vec::<String>::new(), "node {i}");
        }
        assert_eq!(
            claims_list(dir.path(), &node.url(), &[]).await,
            all_posted(),
            "through node {i}"
        );
    }

    // A held cycle reads every claim in one batch, on the home node: one MGET (this new
    // process's first cycle then refreshes every claim's TTL, and its identities', with
    // EXPIRE), no claim script and no GET of its own.
    let home_url = cluster.nodes[home].url();
    let count = |cmds: [&'static str; 4]| {
        let url = home_url.clone();
        async move {
            let mut out = Vec::new();
            for c in cmds {
                out.push(calls(&url, c).await);
            }
            out
        }
    };
    let watched = ["mget", "get", "evalsha", "eval"];
    let app = live_app(&cluster.nodes[(home + 1) % 3].url(), "cricket-announcer:", &x).await;
    let before = count(watched).await;
    let (summary, ok) = app.backfill().await;
    assert_eq!((summary.posted, summary.skipped, ok), (0, 4, true));
    let after = count(watched).await;
    let grew: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(grew, vec![1, 0, 0, 0], "{watched:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_list_on_a_cluster_reaches_every_primary() {
    let cluster = OwnCluster::start().await;
    // Two deployments whose prefixes hash to slots on two different primaries.
    let mut prefixes: Vec<(String, usize)> = Vec::new();
    for i in 0.. {
        let prefix = format!("bot-{i}:");
        let node = cluster.node_of(&cluster_prefix(&prefix).unwrap()).await;
        if prefixes.iter().all(|(_, n)| *n != node) {
            prefixes.push((prefix, node));
        }
        if prefixes.len() == 2 {
            break;
        }
    }
    let x = MockServer::start().await;
    x_accepts(&x, 8).await;
    let dir = tempfile::tempdir().unwrap();
    for (prefix, _) in &prefixes {
        let o = backfill(dir.path(), &cluster.nodes[0].url(), &x, &[("KEY_PREFIX", prefix)])
            .output()
            .await
            .unwrap();
        assert!(text(&o).0.contains("posted 4, skipped 0, failed 0"), "{:?}", text(&o));
    }
    x.verify().await;
    for (prefix, node) in &prefixes {
        let listed = claims_list(dir.path(), &cluster.nodes[0].url(), &[("KEY_PREFIX", prefix)]).await;
        assert_eq!(listed, all_posted(), "{prefix} on node {node}");
        let tagged = cluster_prefix(prefix).unwrap();
        let keys = all_keys(&cluster.nodes[*node].url()).await;
        assert_eq!(
            keys.iter()
                .filter(|k| k.starts_with(&format!("{tagged}match:")))
                .count(),
            4
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_store_connects_from_any_node_and_says_so() {
    let cluster = OwnCluster::start().await;
    for node in &cluster.nodes {
        let claims = RedisClaims::connect(&node.url(), "a:", "me").await.unwrap();
        assert_eq!(
            (claims.deployment(), claims.key_prefix()),
            (Deployment::Cluster, "{a:}")
        );
    }
    let one = OwnRedis::start();
    let claims = RedisClaims::connect(&one.url(), "a:", "me").await.unwrap();
    assert_eq!((claims.deployment(), claims.key_prefix()), (Deployment::Single, "a:"));
    let empty = RedisClaims::connect(&cluster.nodes[0].url(), "", "me")
        .await
        .err()
        .unwrap();
    assert!(empty.to_string().contains("set a non-empty KEY_PREFIX"), "{empty}");
    // The store answers through the cluster as it does on one server.
    let store = ClaimStore::Redis(RedisClaims::connect(&cluster.nodes[1].url(), "b:", "me").await.unwrap());
    assert_eq!(store.list().await.unwrap().len(), 0);
}

/// A Sentinel on a free port watching the primary at `primary_port` as `mymaster`.
struct OwnSentinel {
    port: u16,
    _dir: tempfile::TempDir,
    child: std::process::Child,
}

impl OwnSentinel {
    fn start(primary_port: u16) -> OwnSentinel {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = dir.path().join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\nsentinel monitor mymaster 127.0.0.1 {primary_port} 1\n\
                 sentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 10000\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let child = std::process::Command::new("redis-server")
            .arg(&conf)
            .arg("--sentinel")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server must be installed (see .ci/run)");
        // From here the Drop kills and waits for it, whatever happens.
        let sentinel = OwnSentinel { port, _dir: dir, child };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return sentinel;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("sentinel did not start on port {port}");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The sentinel's answer to `SENTINEL <command> mymaster`.
    async fn ask<T: redis::FromRedisValue>(&self, command: &str) -> T {
        redis::cmd("SENTINEL")
            .arg(command)
            .arg("mymaster")
            .query_async(&mut connect(&self.url()).await)
            .await
            .unwrap()
    }

    /// The port of the primary the sentinel names now.
    async fn primary_port(&self) -> u16 {
        let (_, port): (String, u16) = self.ask("get-master-addr-by-name").await;
        port
    }

    /// How many replicas of `mymaster` the sentinel knows and counts as up.
    async fn replicas_up(&self) -> usize {
        let replicas: Vec<Vec<String>> = self.ask("replicas").await;
        replicas
            .iter()
            .filter(|r| {
                r.windows(2)
                    .any(|w| w[0] == "flags" && w[1] == "slave" || w[0] == "master-link-status" && w[1] == "ok")
            })
            .count()
    }
}

impl Drop for OwnSentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (up to `secs`) until `check` holds.
async fn wait_until<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_sentinel_a_failover_keeps_every_claim_and_the_bot_follows_the_new_primary() {
    let primary = OwnRedis::start();
    let replica = OwnRedis::start_with(&["--replicaof", "127.0.0.1", &primary.port().to_string()]);
    wait_until(10, "replication", || async {
        replication(&replica, "master_link_status").await == "up"
    })
    .await;
    let sentinel = OwnSentinel::start(primary.port());
    wait_until(20, "the sentinel to find the replica", || async {
        sentinel.replicas_up().await == 1
    })
    .await;
    let url = format!("redis+sentinel://127.0.0.1:{}/mymaster", sentinel.port);
    let dir = tempfile::tempdir().unwrap();

    // Before the failover: posted once, each claim acknowledged by the replica before posting.
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let min_replicas = [("CLAIM_MIN_REPLICAS", "1")];
    let o = backfill(dir.path(), &url, &x, &min_replicas).output().await.unwrap();
    assert!(text(&o).0.contains("posted 4, skipped 0, failed 0"), "{:?}", text(&o));
    x.verify().await;

    // One long-running bot, connected through Sentinel to the old primary.
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let mut run = bot(dir.path());
    with_x(&mut run, &x);
    let site = page_server().await;
    run.env("REDIS_URL", &url)
        .env("SOURCES", format!("{}/cricket-match/live-scores", site.uri()))
        .env("POLL_INTERVAL_SECS", "1")
        .arg("run");
    let running = start(&mut run);

    sentinel.ask::<()>("FAILOVER").await;
    wait_until(30, "the failover", || async {
        sentinel.primary_port().await == replica.port()
    })
    .await;
    wait_until(30, "the new primary", || async {
        replication(&replica, "role").await == "master"
    })
    .await;
    wait_until(30, "the old primary to follow it", || async {
        replication(&primary, "role").await == "slave"
    })
    .await;

    // After it: the new primary holds every claim; nothing is posted again, by a new process
    // or by the one that was running through the failover.
    assert_eq!(claims_list(dir.path(), &url, &[]).await, all_posted());
    let o = backfill(dir.path(), &url, &x, &[]).output().await.unwrap();
    assert!(text(&o).0.contains("posted 0, skipped 4, failed 0"), "{:?}", text(&o));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut running = running;
    let _ = running.start_kill();
    let out = running.wait_with_output().await.unwrap();
    x.verify().await;
    let (_, log) = text(&out);
    let cycles: Vec<&str> = log.lines().filter(|l| l.contains("cycle done")).collect();
    assert!(cycles.iter().all(|l| l.contains("posted=0")), "{cycles:?}");
    // It saw the old primary go, asked Sentinel again, and went on skipping every match.
    let moved = log
        .lines()
        .position(|l| l.contains("the Redis primary may have changed"))
        .unwrap_or_else(|| panic!("never noticed the failover: {log}"));
    assert!(
        log.lines()
            .skip(moved)
            .any(|l| l.contains("cycle done") && l.contains("skipped=4")),
        "{log}"
    );

    // And it writes to the new primary: a claim released through Sentinel is gone from it.
    let released = bot(dir.path())
        .env("REDIS_URL", &url)
        .args(["claims", "release", "--force", CRICBUZZ_KEYS[0]])
        .output()
        .await
        .unwrap();
    assert!(released.status.success(), "{:?}", text(&released));
    let left = all_keys(&replica.url()).await;
    assert!(!left.iter().any(|k| k.ends_with(CRICBUZZ_KEYS[0])), "{left:?}");
    assert_eq!(left.iter().filter(|k| k.contains(":match:")).count(), 3, "{left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_the_eviction_policy_read_is_the_one_of_the_primary_holding_the_claims() {
    let cluster = OwnCluster::start().await;
    let home = cluster.node_of(&cluster_prefix("cricket-announcer:").unwrap()).await;
    let set = |i: usize, policy: &'static str| {
        let url = cluster.nodes[i].url();
        async move {
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory-policy")
                .arg(policy)
                .exec_async(&mut connect(&url).await)
                .await
                .unwrap();
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let check = |url: String| {
        let dir = dir.path().to_path_buf();
        async move {
            let o = bot(&dir)
                .env("REDIS_URL", url)
                .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
                .arg("check-sources")
                .output()
                .await
                .unwrap();
            text(&o).0.lines().last().unwrap_or_default().to_string()
        }
    };
    // Every other primary may evict: they hold none of the deployment's keys.
    for i in (0..3).filter(|i| *i != home) {
        set(i, "allkeys-lru").await;
    }
    for node in &cluster.nodes {
        assert_eq!(check(node.url()).await, "store redis: ok (maxmemory-policy noeviction)");
    }
    set(home, "volatile-lru").await;
    for node in &cluster.nodes {
        let line = check(node.url()).await;
        assert!(
            line.starts_with("store redis: ERROR: Redis maxmemory-policy is volatile-lru"),
            "{line}"
        );
    }
}

/// On a cluster, the index of unsettled claims shares the deployment's slot: claims made
/// `unknown` or stuck on two channels are found through it in one pass, the one-time fill of
/// claims written without it scans every primary once, and a later reconciliation sends no
/// `SCAN` to any node (issue 36).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_reconciliation_reads_the_index_in_the_claims_slot_and_scans_no_node() {
    use cricket_announcer::claim::{MarkerOrigin, MatchClaim, Transition};
    use cricket_announcer::cricket::{Identities, Identity, MatchKey};
    let cluster = OwnCluster::start().await;
    let url = cluster.nodes[0].url();
    let base = ClaimStore::Redis(RedisClaims::connect(&url, "bot:", "worker-a").await.unwrap());
    base.initialise(MarkerOrigin::Seed, crate::helpers::DAY).await.unwrap();
    let (x, mastodon) = (base.for_channel("x"), base.for_channel("mastodon"));
    for (store, key, gives_up) in [
        (&x, "2026-07-17_a-v-b", Duration::from_secs(1)),
        (&mastodon, "2026-07-17_c-v-d", crate::helpers::DAY),
    ] {
        let key = MatchKey::parse(key).unwrap();
        let ids = Identities::known_by(key.clone(), vec![Identity::of_key(&key)]);
        let MatchClaim::Won(token) = store
            .claim_match(&ids, "A v B", crate::helpers::DAY, gives_up, false)
            .await
            .unwrap()
        else {
            panic!("won")
        };
        if gives_up == crate::helpers::DAY {
            let unknown = Transition::Unknown {
                reason: "no answer".into(),
            };
            store.transition(&token, &unknown).await.unwrap();
        }
    }
    let tagged = cluster_prefix("bot:").unwrap();
    let home = cluster.node_of(&tagged).await;
    assert!(
        all_keys(&cluster.nodes[home].url())
            .await
            .contains(&format!("{tagged}store:unsettled")),
        "the index lives on the node of the claims' slot"
    );
    let later = base.now().await.unwrap() + chrono::Duration::seconds(5);
    let keys_of = |found: &[(MatchKey, cricket_announcer::claim::Claim)]| -> Vec<String> {
        found.iter().map(|(k, _)| k.to_string()).collect()
    };
    let found = base.unsettled_across(&[&x, &mastodon], later).await.unwrap();
    assert_eq!(
        found.iter().map(|f| keys_of(f)).collect::<Vec<_>>(),
        [vec!["2026-07-17_a-v-b"], vec!["2026-07-17_c-v-d"]]
    );

    // As an earlier release left them (no index, a marker that says nothing of it): a new
    // process fills it, scanning each primary.
    let mut conn = connect(&cluster.nodes[home].url()).await;
    let _: () = redis::cmd("DEL")
        .arg(format!("{tagged}store:unsettled"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let marker: String = redis::cmd("GET")
        .arg(format!("{tagged}store:initialised"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut marker: serde_json::Value = serde_json::from_str(&marker).unwrap();
    assert_eq!(marker["unsettled_indexed"], true, "the first reconciliation filled it");
    marker.as_object_mut().unwrap().remove("unsettled_indexed");
    let _: () = redis::cmd("SET")
        .arg(format!("{tagged}store:initialised"))
        .arg(marker.to_string())
        .arg("KEEPTTL")
        .query_async(&mut conn)
        .await
        .unwrap();
    let scans = |_: ()| async {
        let mut n = Vec::new();
        for node in &cluster.nodes {
            n.push(calls(&node.url(), "scan").await);
        }
        n
    };
    let before = scans(()).await;
    let filled = ClaimStore::Redis(RedisClaims::connect(&url, "bot:", "worker-b").await.unwrap());
    assert_eq!(filled.index_unsettled().await.unwrap(), Some(2));
    let after_fill = scans(()).await;
    assert!(
        before.iter().zip(&after_fill).all(|(b, a)| a > b),
        "every primary scanned once: {before:?} {after_fill:?}"
    );
    let later_process = ClaimStore::Redis(RedisClaims::connect(&url, "bot:", "worker-c").await.unwrap());
    assert_eq!(later_process.index_unsettled().await.unwrap(), None, "filled already");
    let found = later_process
        .unsettled_across(
            &[&later_process.for_channel("x"), &later_process.for_channel("mastodon")],
            later,
        )
        .await
        .unwrap();
    assert_eq!(found.iter().map(Vec::len).sum::<usize>(), 2);
    assert_eq!(scans(()).await, after_fill, "no SCAN after the fill");
}
