//! The README and `.env.example` agree with `--help` (lychee keeps its README in step with its
//! CLI the same way): every command, flag and variable the binary knows is documented, and the
//! README documents no variable the binary does not know.

use crate::helpers::root;
use std::collections::BTreeSet;

/// Every command path, as typed after `cricket-announcer`.
pub(crate) const COMMANDS: [&[&str]; 9] = [
    &["run"],
    &["backfill"],
    &["seed"],
    &["check-sources"],
    &["claims"],
    &["claims", "list"],
    &["claims", "show"],
    &["claims", "release"],
    &["claims", "reconcile"],
];

fn help(path: &[&str]) -> String {
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("cricket-announcer"))
        .env_clear()
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(o.status.success(), "{path:?} --help failed");
    String::from_utf8(o.stdout).unwrap()
}

/// What `--help` of every command lists.
#[derive(Default)]
struct Help {
    /// Flags (`--dry-run`) that have no environment variable.
    flags: BTreeSet<String>,
    /// Environment variables (`[env: NAME]`).
    vars: BTreeSet<String>,
    /// Subcommands, as paths (`claims list`).
    commands: BTreeSet<String>,
}

fn parse_all_help() -> Help {
    let mut out = Help::default();
    for path in [&[][..]].into_iter().chain(COMMANDS) {
        let text = help(path);
        let mut pending: Option<String> = None;
        let mut in_commands = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed == "Commands:" {
                in_commands = true;
                continue;
            }
            if in_commands {
                match trimmed.split_whitespace().next() {
                    Some(name) if line.starts_with("  ") && !line.starts_with("      ") => {
                        if name != "help" {
                            out.commands.insert([path, &[name]].concat().join(" "));
                        }
                        continue;
                    }
                    _ if trimmed.is_empty() => {
                        in_commands = false;
                        continue;
                    }
                    _ => continue,
                }
            }
            // An option line: `--name …` or `-n, --name …` (not a `- value:` list item).
            if trimmed.starts_with("--") || trimmed.get(2..4) == Some(", ") {
                if let Some(flag) = pending.take() {
                    out.flags.insert(flag);
                }
                pending = trimmed
                    .split(|c: char| c.is_whitespace() || c == ',' || c == '=')
                    .find(|t| t.starts_with("--"))
                    .map(str::to_string);
            }
            if let Some(at) = trimmed.find("[env: ") {
                let rest = &trimmed[at + "[env: ".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                out.vars.insert(name);
                pending = None;
            }
        }
        if let Some(flag) = pending.take() {
            out.flags.insert(flag);
        }
    }
    out.flags.remove("--help");
    out.flags.remove("--version");
    out
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The README's "## Configuration" section.
fn readme_configuration(readme: &str) -> &str {
    let start = readme
        .find("\n## Configuration")
        .expect("README has a Configuration section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

/// Every `NAME` in backticks, in upper snake case, in the first column of the table rows of
/// `section` (the other columns quote defaults and values).
fn table_vars(section: &str) -> BTreeSet<String> {
    section
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| cell.split('`').skip(1).step_by(2))
        .filter(|t| {
            t.len() > 1
                && t.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_flag_and_variable_in_help_is_documented_in_the_readme() {
    let help = parse_all_help();
    let readme = readme();
    assert!(
        help.vars.contains("SHUTDOWN_GRACE_SECS")
            && help.flags.contains("--cycles")
            && help.commands.contains("claims release"),
        "help parsing broke"
    );
    let documented = table_vars(readme_configuration(&readme));
    let missing_vars: Vec<_> = help.vars.difference(&documented).collect();
    assert!(
        missing_vars.is_empty(),
        "variables in --help missing from README's configuration table: {missing_vars:?}"
    );
    let missing_flags: Vec<_> = help
        .flags
        .iter()
        .filter(|f| !readme.contains(&format!("`{f}")))
        .collect();
    assert!(
        missing_flags.is_empty(),
        "flags in --help missing from README: {missing_flags:?}"
    );
    let missing_commands: Vec<_> = help
        .commands
        .iter()
        .filter(|c| !readme.contains(&format!("`cricket-announcer {c}")))
        .collect();
    assert!(
        missing_commands.is_empty(),
        "commands missing from README's command table: {missing_commands:?}"
    );
}

#[test]
fn every_variable_in_the_readme_configuration_table_exists_in_help() {
    let help = parse_all_help();
    let documented = table_vars(readme_configuration(&readme()));
    let unknown: Vec<_> = documented.difference(&help.vars).collect();
    assert!(
        unknown.is_empty(),
        "README documents variables --help does not know: {unknown:?}"
    );
}

#[test]
fn every_variable_in_help_has_an_entry_in_env_example() {
    let help = parse_all_help();
    let example = std::fs::read_to_string(root().join(".env.example")).unwrap();
    let entries: BTreeSet<String> = example
        .lines()
        .map(|l| l.trim_start_matches("# ").trim())
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.to_string()))
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .collect();
    let missing: Vec<_> = help.vars.difference(&entries).collect();
    assert!(missing.is_empty(), ".env.example lacks: {missing:?}");
    let unknown: Vec<_> = entries.difference(&help.vars).collect();
    assert!(
        unknown.is_empty(),
        ".env.example sets variables --help does not know: {unknown:?}"
    );
}
