//! The command line: global flags, the settings (each also an environment variable) and the
//! commands.

use crate::claim::{ClaimState, Label, ShownState};
use crate::config::Settings;
use crate::event::Event;
use crate::redact::ShownValue;
use clap::builder::PossibleValue;
use clap::{CommandFactory, Parser, Subcommand};

/// Watches cricket score pages and announces each match exactly once on X.
#[derive(Parser)]
#[command(name = "cricket-announcer", version, about, long_about = None)]
pub struct Cli {
    /// Print each post exactly as it would be sent, with its weighted length; write nothing to
    /// any store and send nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Machine-readable output: one JSON object per line.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print every field of a table in full (by default a table fits 100 columns, long fields
    /// cut with "…"): `check-sources`, `claims list`, `claims show`. Accepted before or after
    /// the command, as `--json` is.
    #[arg(long, global = true)]
    pub wide: bool,
    /// A source, KIND=LOCATION or LOCATION (repeatable); replaces SOURCES.
    #[arg(long = "source", value_name = "SOURCE", global = true)]
    pub source: Vec<String>,
    /// In dry run, shorten links too (calls the configured shortener). Only with --dry-run.
    #[arg(long, global = true)]
    pub shorten: bool,
    /// Settings, each also readable from the environment or .env.
    #[command(flatten)]
    pub settings: Settings,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Poll every source every POLL_INTERVAL_SECS until SIGINT or SIGTERM (a post in flight
    /// finishes and is recorded first, for at most SHUTDOWN_GRACE_SECS).
    Run {
        /// On a store never initialised, initialise it and announce what is current (instead
        /// of refusing). Use once, on first deployment; not in a service definition.
        #[arg(long)]
        init_store: bool,
        /// Stop after this many cycles (bounded runs: soak tests, one-off catch-ups).
        #[arg(long, value_name = "N")]
        cycles: Option<u64>,
    },
    /// Read every source once, announce what is new, print a summary and exit (0 only if every
    /// source was read and nothing stopped posting). SIGINT or SIGTERM stops it between
    /// matches, as for `run`.
    Backfill {
        /// As for `run`: initialise a never-initialised store and announce what is current.
        #[arg(long)]
        init_store: bool,
    },
    /// Record every match currently on the sources without posting, and mark the store
    /// initialised. Run it on first start, and again after the store lost its data.
    /// With --dry-run, print what it would record and write nothing. Needs no X credentials.
    Seed {
        /// Only this channel of the channels file (a channel added to a running deployment).
        #[arg(long)]
        channel: Option<String>,
    },
    /// Fetch every configured source once and print a table: source, status, matches found,
    /// the first few matches (with a lead time, when each is announced), then the store's
    /// line. Exit 1 if any source or the store failed.
    CheckSources,
    /// Inspect the claims in the store.
    Claims {
        /// The channel of the channels file whose claims to read (without a channels file, the
        /// one channel is `x`); `claims reconcile` without it goes through every channel.
        #[arg(long, global = true)]
        channel: Option<String>,
        /// What to do with claims.
        #[command(subcommand)]
        action: ClaimsCommand,
    },
}

/// An event named on the command line (`--event result`).
fn read_event(raw: &str) -> Result<Event, String> {
    Event::parse(raw).ok_or_else(|| format!("{raw:?} is not an event: one of {}", Event::names()))
}

/// A `--limit` on the command line: a whole number of at least 1 (clap's own words for 0 name
/// a Rust type).
fn read_limit(raw: &str) -> Result<std::num::NonZeroUsize, String> {
    raw.trim()
        .parse::<usize>()
        .ok()
        .and_then(std::num::NonZeroUsize::new)
        .ok_or_else(|| format!("{raw:?} is not a number of claims: write a whole number, at least 1"))
}

/// Operator commands on claims.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ClaimsCommand {
    /// List every live claim.
    List {
        /// Only claims in this state.
        #[arg(long, value_enum, ignore_case = true)]
        state: Option<ShownState>,
        /// At most N claims (after --state): the first N by match key, the announcements'
        /// before the results'.
        #[arg(long, value_name = "N", value_parser = read_limit)]
        limit: Option<std::num::NonZeroUsize>,
        /// Only the claims of this event: announce or result (default: both).
        #[arg(long, value_parser = read_event)]
        event: Option<Event>,
    },
    /// Show the claim on one match key.
    Show {
        /// The match key, as `claims list` prints it.
        key: String,
        /// The claim of this event: announce (the default) or result.
        #[arg(long, value_parser = read_event, default_value = "announce")]
        event: Event,
    },
    /// Settle each unknown or stuck claim with its platform, each channel the way its platform
    /// allows, and record what it says.
    ///
    /// X: searches the account's recent posts for the claim's post; found: posted, with its
    /// id; not found: the time of the check. Never posts.
    ///
    /// Mastodon and Bluesky: REPEAT the create under the post's own dedupe key (Mastodon's
    /// Idempotency-Key, within the hour it is kept; Bluesky's record key), so the platform
    /// answers with the post that exists or makes it once; the report and the log say which
    /// (Bluesky: there already, or made now by the repeat; Mastodon cannot tell the two apart).
    ///
    /// Discord and Telegram: cannot be asked; their claims are listed for the operator.
    Reconcile,
    /// Delete the claim on one match key so it may be announced again. Refused unless the
    /// claim is unknown, failed or stuck, or --force is given.
    Release {
        /// The match key, as `claims list` prints it.
        key: String,
        /// Release whatever the state (may cause a second post of a match already posted).
        #[arg(long)]
        force: bool,
        /// The claim of this event: announce (the default) or result.
        #[arg(long, value_parser = read_event, default_value = "announce")]
        event: Event,
    },
}

/// A claim state as `claims list --state` names it: the words are [`ShownState`]'s one table;
/// what each means is said here, for `--help`.
impl clap::ValueEnum for ShownState {
    fn value_variants<'a>() -> &'a [Self] {
        ShownState::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            ShownState::Stored(ClaimState::Claimed) => "A worker is on it",
            ShownState::Stored(ClaimState::Posted) => "Posted (tweet id known, or X said it was posted before)",
            ShownState::Stored(ClaimState::Unknown) => "The post's outcome could not be known",
            ShownState::Stored(ClaimState::Failed) => "Given up after MAX_POST_ATTEMPTS failures",
            ShownState::Stored(ClaimState::Seeded) => "Recorded by `seed`, never posted",
            ShownState::Stuck => "Claimed and never recorded, for longer than a post can take",
        };
        Some(PossibleValue::new(self.as_str()).help(help))
    }
}

/// Options shown for every command (and the top level).
const EVERYWHERE: &[&str] = &["log", "log_format", "json"];
/// The claim store.
const STORE: &[&str] = &[
    "redis_url",
    "database_url",
    "store_path",
    "key_prefix",
    "claim_ttl_secs",
    "instance_id",
    "redis_ca_file",
    "database_ca_file",
    "redis_eviction_policy_asserted",
    "claim_min_replicas",
];
/// What `check-sources` reads of the store, read only: whether a Redis may evict claims, whether
/// a PostgreSQL schema holds a ledger, where the embedded file is, and (with a lead time) which
/// matches the channels' claims hold already.
const STORE_CHECK: &[&str] = &[
    "redis_url",
    "database_url",
    "store_path",
    "key_prefix",
    "redis_ca_file",
    "database_ca_file",
    "redis_eviction_policy_asserted",
];
/// Reading the sources.
const SOURCES: &[&str] = &[
    "source",
    "sources",
    "fetch_max_bytes",
    "fetch_per_host_per_minute",
    "cricbuzz_api_key",
    "cricbuzz_api_key_header",
    "cricketdata_api_key",
];
/// Which matches are announced.
const FILTER: &[&str] = crate::filter::FIELDS;
/// Making and sending posts.
const POSTING: &[&str] = &[
    "dry_run",
    "shorten",
    "template_path",
    "shortener",
    "shortener_base_url",
    "bitly_token",
    "shorten_timeout_secs",
    "link_preference",
    "link_fallback",
    "x_api_base_url",
    "x_api_key",
    "x_api_secret",
    "x_access_token",
    "x_access_token_secret",
    "post_timeout_secs",
    "max_posts_per_cycle",
    "max_post_attempts",
    "posts_per_minute",
    "posts_per_day",
    "channels_file",
];
/// Only the long-running `run` uses these.
const SERVICE: &[&str] = &[
    "poll_interval_secs",
    "metrics_addr",
    "status_page",
    "health_max_stale_cycles",
    "shutdown_grace_secs",
];
/// When matches are announced, the zone their start is told in, and the time a dry run judges
/// by.
const SCHEDULE: &[&str] = &["announce_before", "timezone", "as_of", "events", "result_max_age"];
/// What `claims` reads besides the store: when a claim counts as stuck.
const CLAIM_POLICY: &[&str] = &["post_timeout_secs", "max_post_attempts"];

/// The options shown in short help (`-h`), so it fits a screen: what a newcomer sets first.
/// `--help` shows every option the command uses.
const SHORT_HELP: &[&str] = &[
    "log",
    "log_format",
    "json",
    "dry_run",
    "source",
    "sources",
    "redis_url",
    "database_url",
    "store_path",
    "template_path",
    "poll_interval_secs",
    "metrics_addr",
];

/// The global options each command uses, by command path (`claims list`).
fn uses(path: &str) -> Vec<&'static str> {
    let groups: &[&[&str]] = match path {
        "run" => &[STORE, SOURCES, FILTER, POSTING, SCHEDULE, SERVICE],
        "backfill" => &[STORE, SOURCES, FILTER, POSTING, SCHEDULE, &["shutdown_grace_secs"]],
        "seed" => &[STORE, SOURCES, SCHEDULE, &["dry_run", "channels_file"]],
        "check-sources" => &[
            SOURCES,
            STORE_CHECK,
            FILTER,
            &["announce_before", "timezone", "as_of", "wide", "channels_file"],
        ],
        "claims reconcile" => &[
            STORE,
            CLAIM_POLICY,
            &[
                "channels_file",
                "x_api_base_url",
                "x_api_key",
                "x_api_secret",
                "x_access_token",
                "x_access_token_secret",
            ],
        ],
        "claims list" | "claims show" => &[STORE, CLAIM_POLICY, &["channels_file", "wide"]],
        p if p.starts_with("claims") => &[STORE, CLAIM_POLICY, &["channels_file"]],
        _ => &[],
    };
    groups
        .iter()
        .flat_map(|g| g.iter().copied())
        .chain(EVERYWHERE.iter().copied())
        .collect()
}

/// The command line as the binary parses it: [`Cli`], with each command's help listing only
/// the options it uses (the rest are still accepted, as they are global, but hidden), and `-h`
/// listing only the commonest of those (see `SHORT_HELP`).
pub fn command() -> clap::Command {
    let root = env_values_shown(Cli::command());
    let globals: Vec<clap::Arg> = root.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    // Each command gets its own copy of every global option, shown or hidden for it; clap then
    // propagates nothing more (a command that has the option keeps its own copy).
    fn tailor(cmd: clap::Command, path: &str, globals: &[clap::Arg]) -> clap::Command {
        let used = uses(path);
        let mut cmd = globals.iter().fold(cmd, |cmd, arg| {
            let id = arg.get_id().as_str();
            let shown = used.contains(&id);
            cmd.arg(
                arg.clone()
                    .hide(!shown || id == "poll_interval_ms")
                    .hide_short_help(!SHORT_HELP.contains(&id)),
            )
        });
        let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
        for name in names {
            let sub_path = format!("{path} {name}");
            cmd = cmd.mut_subcommand(&name, |sub| tailor(sub, &sub_path, globals));
        }
        cmd
    }
    let names: Vec<String> = root.get_subcommands().map(|s| s.get_name().to_string()).collect();
    let mut root = names.into_iter().fold(root, |root, name| {
        root.mut_subcommand(&name, |sub| tailor(sub, &name, &globals))
    });
    for arg in &globals {
        let id = arg.get_id().as_str();
        if !EVERYWHERE.contains(&id) && id != "dry_run" {
            root = root.mut_arg(id, |a| a.hide(true));
        }
    }
    root.after_help("Each command's --help lists the options it uses; every option is also an environment variable.")
}

/// `cmd` and its commands with each variable's value shown in help (`[env: NAME=value]`) only
/// when [`crate::redact::setting_value`] would echo it as it is: never a secret's, a URL's with
/// credentials, or a long value's (a path, a pasted token), which help lists by name alone.
fn env_values_shown(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let Some(var) = arg.get_env().map(|v| v.to_string_lossy().into_owned()) else {
            return arg;
        };
        match std::env::var_os(&var).map(|v| v.to_string_lossy().into_owned()) {
            Some(value) if crate::redact::setting_value(&var, &value) != ShownValue::Echoed(value.clone()) => {
                arg.hide_env_values(true)
            }
            _ => arg,
        }
    })
    .mut_subcommands(env_values_shown)
}

/// Parses `args` (the program's name first) and the environment as [`command`] defines them,
/// into a [`Cli`].
///
/// # Errors
/// clap's error (help and version included), with a refused value or stray argument shown as
/// [`crate::redact::setting_value`] allows: clap's own errors echo a value outside a closed set
/// (`FORMATS`, `LOG_FORMAT`, `--state`), and a pasted secret must not come back on stderr.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    command()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m))
        .map_err(guarded)
}

/// `e` with the value it refused (or the argument it did not expect) described instead of
/// echoed when that value may be a secret; `e` itself otherwise.
fn guarded(e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg).unwrap_or_default();
    let refused = match text(ContextKind::InvalidValue) {
        // A value refused for an option: named by the option's long name.
        Some(value) => {
            let var = arg.split_whitespace().next().unwrap_or_default();
            Some((value.clone(), crate::redact::setting_value(var, &value)))
        }
        // An argument nothing expects: a stray value, or a flag (a pasted secret after `--`).
        None if !arg.is_empty() => Some((arg.clone(), crate::redact::argument(&arg))),
        None => None,
    };
    match refused {
        Some((raw, shown)) if shown != ShownValue::Echoed(raw.clone()) => {
            let rendered = e.render().to_string();
            let rendered = rendered.strip_prefix("error: ").unwrap_or(&rendered);
            let quoted = format!("{raw:?}");
            let described = shown.to_string();
            let scrubbed = rendered
                .replace(&quoted[1..quoted.len() - 1], &described)
                .replace(&raw, &described);
            clap::Error::raw(e.kind(), scrubbed)
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
        super::command().debug_assert();
    }

    #[test]
    fn each_command_shows_only_the_options_it_uses() {
        let mut cmd = super::command();
        cmd.build();
        let shown = |path: &[&str]| -> Vec<String> {
            let mut c = &cmd;
            for p in path {
                c = c.find_subcommand(p).unwrap();
            }
            c.get_arguments()
                .filter(|a| !a.is_hide_set())
                .map(|a| a.get_id().to_string())
                .collect()
        };
        let seed = shown(&["seed"]);
        assert!(seed.contains(&"dry_run".to_string()) && seed.contains(&"redis_url".to_string()));
        for absent in ["shorten", "x_api_key", "template_path", "poll_interval_secs"] {
            assert!(!seed.contains(&absent.to_string()), "seed shows {absent}");
        }
        let check = shown(&["check-sources"]);
        assert!(!check.contains(&"dry_run".to_string()) && !check.contains(&"x_api_key".to_string()));
        // It looks at whichever store is configured, and tells a lead time's wait by each
        // channel's filter, lead and zone.
        for used in [
            "redis_url",
            "database_url",
            "store_path",
            "series",
            "channels_file",
            "timezone",
        ] {
            assert!(check.contains(&used.to_string()), "check-sources hides {used}");
        }
        let list = shown(&["claims", "list"]);
        assert!(!list.contains(&"dry_run".to_string()) && !list.contains(&"shorten".to_string()));
        assert!(list.contains(&"state".to_string()) && list.contains(&"wide".to_string()));
        assert!(shown(&["run"]).contains(&"metrics_addr".to_string()));
        assert!(!shown(&["backfill"]).contains(&"metrics_addr".to_string()));
        for path in [&["run"][..], &["backfill"], &["seed"]] {
            let shown = shown(path);
            for used in ["announce_before", "timezone", "as_of"] {
                assert!(shown.contains(&used.to_string()), "{path:?} hides {used}");
            }
        }
        assert!(check.contains(&"announce_before".to_string()) && check.contains(&"as_of".to_string()));
        assert!(!list.contains(&"announce_before".to_string()));
    }
}
