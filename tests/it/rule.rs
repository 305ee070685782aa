//! The claim rule (`src/claim/rule.rs`) checked on every store: random sequences of claims
//! (of random sets of identities, by two workers), releases, recorded posts and initialisations
//! run on a store and on the rule's reference model (`ReferenceStore`) side by side. Every
//! answer of the store must be the model's, and so must, every few steps and at the end, every
//! claim and every identity the store then leads to. A failing sequence is shrunk to a shortest
//! one and printed.

use crate::helpers::{self, store, Kind, DAY};
use cricket_announcer::claim::{
    Checked, ClaimState, ClaimStore, ClaimToken, MarkerOrigin, MatchClaim, ReferenceChange, ReferenceClaim,
    ReferenceStore, Transition,
};
use cricket_announcer::cricket::{Described, Facts, FormatClass, Identities, Identity, MatchKey, Start};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The keys sightings are claimed under: two matches, each on three consecutive days (so that
/// a sighting's key a day either side is often one claimed).
const KEYS: [&str; 6] = [
    "2026-07-17_a-v-b_1st",
    "2026-07-18_a-v-b_1st",
    "2026-07-19_a-v-b_1st",
    "2026-07-17_a-v-b_2nd",
    "2026-07-18_a-v-b_2nd",
    "2026-07-19_a-v-b_2nd",
];

/// The source ids sightings carry: few, so that sightings of different keys share them.
const SOURCES: [&str; 4] = ["cricbuzz:1", "cricbuzz:2", "espncricinfo:1", "web:club-1"];

/// The two workers' names, as their stores write them in records.
const OWNERS: [&str; 2] = ["worker-a", "worker-b"];

/// Sequences tried on each store, and the most steps in one.
const CASES: u32 = 16;
const MOST_STEPS: usize = 20;

crate::helpers::store_matrix!(every_sequence_of_claims_answers_and_leaves_what_the_rule_says);

/// The hours (UTC) sightings start at on their key's date: 10:00 and 11:00 are within the
/// tolerance of each other, 14:00 is another match.
const HOURS: [u32; 3] = [10, 11, 14];

/// What one sighting of a match gives the claim: its key, some source ids, and (as every dated
/// listing gives them) its key as an identity, its fixture and its facts (a start on its key's
/// date at one of [`HOURS`], maybe a match number); the keys a day either side; and the source
/// ids of other matches its sites list at the same time (rivals).
#[derive(Debug, Clone)]
struct Sighting {
    key: usize,
    sources: Vec<usize>,
    dated: bool,
    day_before: bool,
    day_after: bool,
    hour: usize,
    number: Option<u16>,
    rivals: Vec<usize>,
}

impl Sighting {
    fn identities(&self) -> Identities {
        let key = key(KEYS[self.key]);
        let mut ids: Vec<Identity> = self.sources.iter().map(|s| helpers::id(SOURCES[*s])).collect();
        let mut facts = None;
        if self.dated {
            ids.push(Identity::of_key(&key));
            ids.push(Identity::fixture_of(&key).unwrap());
            let date = chrono::NaiveDate::parse_from_str(&KEYS[self.key][..10], "%Y-%m-%d").unwrap();
            let start = date.and_hms_opt(HOURS[self.hour], 0, 0).unwrap().and_utc();
            facts = Some(Facts {
                start: Some(Start::At(start)),
                class: Some(FormatClass::Twenty),
                described: Described {
                    number: self.number,
                    ..Described::default()
                },
            });
        }
        let mut other_keys = Vec::new();
        for (wanted, days) in [(self.day_before, -1), (self.day_after, 1)] {
            if wanted {
                other_keys.push(shifted(&key, days));
            }
        }
        Identities {
            key,
            ids,
            other_keys,
            facts,
            rivals: self.rivals.iter().map(|r| helpers::id(SOURCES[*r])).collect(),
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// Worker `by` claims a sighting.
    Claim {
        by: usize,
        sighting: Sighting,
        require_marker: bool,
    },
    /// The winner of one of the claims won so far (the `nth`, counted round) releases it.
    Release { nth: usize },
    /// The winner of one of the claims won so far records its post.
    Post { nth: usize },
    /// The first-start marker is written.
    Initialise,
}

fn key(s: &str) -> MatchKey {
    MatchKey::parse(s).unwrap()
}

fn shifted(k: &MatchKey, days: i64) -> MatchKey {
    let (date, rest) = k.as_str().split_once('_').unwrap();
    let date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap() + chrono::Duration::days(days);
    key(&format!("{date}_{rest}"))
}

fn sighting() -> impl Strategy<Value = Sighting> {
    (
        0..KEYS.len(),
        proptest::sample::subsequence((0..SOURCES.len()).collect::<Vec<_>>(), 0..=2),
        prop::bool::weighted(0.8),
        any::<bool>(),
        any::<bool>(),
        0..HOURS.len(),
        prop::option::weighted(0.5, 1u16..=2),
        proptest::sample::subsequence((0..SOURCES.len()).collect::<Vec<_>>(), 0..=1),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(key, sources, dated, day_before, day_after, hour, number, rivals, with_rivals)| Sighting {
                // A rival is another match's id: never one of the sighting's own.
                rivals: if with_rivals {
                    rivals.into_iter().filter(|r| !sources.contains(r)).collect()
                } else {
                    Vec::new()
                },
                key,
                sources,
                dated,
                day_before,
                day_after,
                hour,
                number,
            },
        )
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        6 => (0..2usize, sighting(), prop::bool::weighted(0.2)).prop_map(|(by, sighting, require_marker)| Step::Claim {
            by,
            sighting,
            require_marker
        }),
        2 => any::<usize>().prop_map(|nth| Step::Release { nth }),
        1 => any::<usize>().prop_map(|nth| Step::Post { nth }),
        1 => Just(Step::Initialise),
    ];
    prop::collection::vec(step, 1..=MOST_STEPS)
}

/// How often each answer came up over every sequence: the generator must reach each branch of
/// the rule, or agreeing with the model proves little.
type Seen = BTreeMap<&'static str, usize>;

async fn every_sequence_of_claims_answers_and_leaves_what_the_rule_says(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.db");
    let prefix = helpers::unique_prefix();
    let workers = [
        store(kind, &prefix, OWNERS[0], &file).await,
        store(kind, &prefix, OWNERS[1], &file).await,
    ];
    let case = AtomicUsize::new(0);
    let seen = Mutex::new(Seen::new());
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let handle = tokio::runtime::Handle::current();
    let result = tokio::task::block_in_place(|| {
        runner.run(&steps(), |steps| {
            // Every sequence (shrinking's too) on a fresh store: the same one under a prefix
            // of its own.
            let n = case.fetch_add(1, Ordering::Relaxed);
            let stores = workers.clone().map(|s| s.for_channel(&format!("case{n}")));
            let mut counts = Seen::new();
            let outcome = handle.block_on(run(&stores, &steps, &mut counts));
            if outcome.is_ok() {
                let mut seen = seen.lock().unwrap();
                for (what, n) in counts {
                    *seen.entry(what).or_default() += n;
                }
            }
            outcome
        })
    });
    helpers::cleanup(kind, &prefix).await;
    if let Err(e) = result {
        panic!("{kind:?}: the store and the rule disagree: {e}");
    }
    let seen = seen.into_inner().unwrap();
    for what in [
        "won",
        "won beside its key",
        "held under its own key",
        "held via a fixture",
        "held via a source id",
        "held via another key",
        "no marker",
        "released",
        "release not ours",
        "release gone",
        "posted",
    ] {
        assert!(
            seen.get(what).copied().unwrap_or(0) > 0,
            "{kind:?}: no sequence reached {what:?}: {seen:?}"
        );
    }
}

/// Runs `steps` on `stores` (one per worker, one store) and on the model, comparing.
async fn run(stores: &[ClaimStore; 2], steps: &[Step], seen: &mut Seen) -> Result<(), TestCaseError> {
    let mut model = ReferenceStore::default();
    // Each claim won so far: the store's token and the model's.
    let mut won: Vec<(ClaimToken, u64)> = Vec::new();
    let store_error = |e: cricket_announcer::claim::ClaimError| TestCaseError::fail(format!("store error: {e}"));
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Claim {
                by,
                sighting,
                require_marker,
            } => {
                let ids = sighting.identities();
                let real = stores[*by]
                    .claim_match(&ids, "A v B", DAY, DAY, *require_marker)
                    .await
                    .map_err(store_error)?;
                let want = model.claim_match(OWNERS[*by], &ids, *require_marker);
                match (real, want) {
                    (MatchClaim::Won(token), ReferenceClaim::Won { token: t }) => {
                        let stored = model.key_of(t).expect("the model's winner");
                        prop_assert_eq!(token.key(), stored, "step {}: won under", i);
                        let how = if *token.key() == ids.key {
                            "won"
                        } else {
                            "won beside its key"
                        };
                        *seen.entry(how).or_default() += 1;
                        won.push((token, t));
                    }
                    (
                        MatchClaim::Held { key, claim, via, facts },
                        ReferenceClaim::Held {
                            key: k,
                            via: v,
                            facts: f,
                        },
                    ) => {
                        let f = f.map(|f| Facts::from_stored(&f));
                        prop_assert_eq!((&key, &via, &facts), (&k, &v, &f), "step {}: held by", i);
                        let record = model.record(&k).expect("the model's holder");
                        prop_assert_eq!(
                            (claim.owner.as_str(), claim.state, claim.aliases),
                            (record.owner.as_str(), record.state, texts(&record.identities)),
                            "step {}: the holder's record",
                            i
                        );
                        let how = if via.is_key_of(&ids.key) {
                            "held under its own key"
                        } else if via.is_fixture() {
                            "held via a fixture"
                        } else if via.is_key() {
                            "held via another key"
                        } else {
                            "held via a source id"
                        };
                        *seen.entry(how).or_default() += 1;
                    }
                    (MatchClaim::NoMarker, ReferenceClaim::NoMarker) => *seen.entry("no marker").or_default() += 1,
                    (real, want) => {
                        return Err(TestCaseError::fail(format!(
                            "step {i}: the store answered {real:?}, the rule {want:?}"
                        )))
                    }
                }
            }
            Step::Release { nth } | Step::Post { nth } => {
                let Some((token, t)) = won.get(nth % won.len().max(1)) else {
                    continue;
                };
                let (real, want) = if let Step::Release { .. } = step {
                    let real = stores[0].release(token).await.map_err(store_error)?;
                    (real, model.release(token.key(), *t))
                } else {
                    let posted = Transition::Posted {
                        post_id: Some(t.to_string()),
                        detail: None,
                    };
                    let real = stores[0].transition(token, &posted).await.map_err(store_error)?;
                    (real, model.transition(token.key(), *t, ClaimState::Posted))
                };
                let real = match real {
                    Checked::Applied(_) => ReferenceChange::Applied,
                    Checked::NotOurs(_) => ReferenceChange::NotOurs,
                    Checked::Gone => ReferenceChange::Gone,
                };
                prop_assert_eq!(real, want, "step {}: {:?} of {}", i, step, token.key());
                let what = match (step, real) {
                    (Step::Release { .. }, ReferenceChange::Applied) => "released",
                    (Step::Release { .. }, ReferenceChange::NotOurs) => "release not ours",
                    (Step::Release { .. }, ReferenceChange::Gone) => "release gone",
                    (_, ReferenceChange::Applied) => "posted",
                    _ => "post refused",
                };
                *seen.entry(what).or_default() += 1;
            }
            Step::Initialise => {
                let (_, wrote) = stores[0]
                    .initialise(MarkerOrigin::Seed, DAY)
                    .await
                    .map_err(store_error)?;
                prop_assert_eq!(wrote, model.initialise(), "step {}: initialise", i);
            }
        }
        // Every few steps and at the end (a read of every claim and identity is most of the
        // time a sequence takes; what it would catch in between, later answers show too).
        if i % 4 == 3 || i + 1 == steps.len() {
            leads_where_the_model_does(&stores[0], &model, i).await?;
        }
    }
    Ok(())
}

/// Every claim the store holds and every identity it leads to, compared with the model's.
async fn leads_where_the_model_does(
    store: &ClaimStore,
    model: &ReferenceStore,
    step: usize,
) -> Result<(), TestCaseError> {
    let fail = |e: cricket_announcer::claim::ClaimError| TestCaseError::fail(format!("store error: {e}"));
    // Every key a claim may be stored under: the keys, and each key beside one (named by a
    // source id).
    let stored_under = KEYS
        .iter()
        .flat_map(|k| std::iter::once(key(k)).chain(SOURCES.iter().map(move |s| key(k).beside(s))));
    for k in stored_under {
        let real = store.peek(&k).await.map_err(fail)?;
        prop_assert_eq!(
            real.map(|c| (c.owner, c.state, c.aliases)),
            model
                .record(&k)
                .map(|r| (r.owner.clone(), r.state, texts(&r.identities))),
            "after step {}: the claim on {}",
            step,
            k
        );
    }
    let identities = SOURCES
        .iter()
        .map(|s| helpers::id(s))
        .chain(KEYS.iter().map(|k| Identity::of_key(&key(k))));
    for identity in identities {
        let real = store.peek_identity(&identity).await.map_err(fail)?.map(|(k, _)| k);
        prop_assert_eq!(
            real.as_ref(),
            model.holder_of(&identity),
            "after step {}: where {} leads",
            step,
            identity
        );
    }
    // Each fixture's live claims, with the facts listed for each.
    for fixture in KEYS.iter().filter_map(|k| Identity::fixture_of(&key(k))) {
        let real = store.fixture_entries(&fixture).await.map_err(fail)?;
        let want: Vec<(MatchKey, Facts)> = model
            .fixture_entries(&fixture)
            .into_iter()
            .map(|(k, f)| (k, Facts::from_stored(&f)))
            .collect();
        prop_assert_eq!(real, want, "after step {}: the claims on {}", step, fixture);
    }
    Ok(())
}

fn texts(ids: &[Identity]) -> Vec<String> {
    ids.iter().map(ToString::to_string).collect()
}
