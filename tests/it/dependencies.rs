//! The dependency policy is written twice, once for cargo-deny and once for readers: the known
//! duplicates `deny.toml` skips (`[bans] skip`) and the table of duplicates left in
//! `docs/dependencies.md` must name the same crates, so neither drifts when a duplicate comes or
//! goes.

use crate::helpers::root;
use std::collections::BTreeSet;

/// The heading line that opens the doc's table of duplicates left.
const DOC_TABLE_INTRO: &str = "Left in two versions";

/// Crate names `deny.toml` skips in duplicate detection (`name@version` → `name`).
fn deny_skips() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("deny.toml")).unwrap();
    let config: toml::Table = text.parse().expect("deny.toml is valid TOML");
    let skip = config["bans"]["skip"]
        .as_array()
        .expect("deny.toml has [bans] skip = [...]");
    skip.iter()
        .map(|entry| {
            let spec = match entry {
                toml::Value::String(spec) => spec.as_str(),
                toml::Value::Table(t) => t["crate"].as_str().expect("skip entry's crate"),
                other => panic!("unexpected skip entry in deny.toml: {other:?}"),
            };
            spec.split('@').next().unwrap().to_string()
        })
        .collect()
}

/// Crate names (in backticks) in the first column of the doc's table of duplicates left.
fn doc_duplicates() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("docs/dependencies.md")).unwrap();
    let after = text
        .split_once(DOC_TABLE_INTRO)
        .unwrap_or_else(|| panic!("docs/dependencies.md has no line {DOC_TABLE_INTRO:?}"))
        .1;
    let rows = after
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        // The header and the `| --- |` separator.
        .skip(2);
    let mut names = BTreeSet::new();
    for row in rows {
        let first = row.split('|').nth(1).unwrap();
        names.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}

#[test]
fn deny_toml_and_the_dependencies_doc_list_the_same_known_duplicates() {
    let deny = deny_skips();
    let doc = doc_duplicates();
    assert!(!deny.is_empty() && !doc.is_empty());
    assert_eq!(
        deny,
        doc,
        "deny.toml [bans] skip and docs/dependencies.md (\"{DOC_TABLE_INTRO}\") disagree: only in \
         deny.toml: {:?}; only in the doc: {:?}",
        deny.difference(&doc).collect::<Vec<_>>(),
        doc.difference(&deny).collect::<Vec<_>>(),
    );
}
