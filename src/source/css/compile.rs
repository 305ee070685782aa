//! The selector compiler: a profile's selectors compiled once for lol_html into a [`Plan`],
//! which says which element each field reads and into which slot its raw value goes. Fields
//! naming the same selector share one handler, and fields reading the same value one slot.

use std::collections::HashMap;

use lol_html::Selector;

use super::schema::{named_fields, Profile};

/// A selector that did not compile, and where it was.
pub(super) struct SelectorFailure {
    /// The field holding it ("card", "fields.team1", "state").
    pub(super) field: &'static str,
    /// The selector as written.
    pub(super) selector: String,
    /// lol_html's complaint, with what is supported.
    pub(super) reason: String,
}

/// What a profile's selectors may use, appended to a refused selector's reason.
pub(super) const SUPPORTED: &str = "(profiles support type, `*`, `#id`, `.class`, `[attr]` selectors, `:nth-child()`, \
                         `:first-child`, `:nth-of-type()`, `:first-of-type`, `:not()`, and the descendant \
                         and `>` combinators; see the README's source kinds)";

/// Index of one raw value among a card's values.
pub(super) type Slot = usize;

/// The name under which the state element's `class` attribute is kept (for `from_class`).
pub(super) const STATE_CLASS: &str = "state.class";

/// What is read from one element: attributes and/or its text content, each into a slot.
/// Fields reading the same thing share a slot, so it is read once.
#[derive(Debug, Clone, Default)]
pub(super) struct Reads {
    /// (attribute name, slot).
    pub(super) attrs: Vec<(String, Slot)>,
    /// Where the text content goes, when some field reads it.
    pub(super) text: Option<Slot>,
}

impl Reads {
    pub(super) fn is_empty(&self) -> bool {
        self.attrs.is_empty() && self.text.is_none()
    }

    /// The slot for `attr` (`None` = the text content), allocating one from `slots` if new.
    fn slot(&mut self, attr: Option<&str>, slots: &mut usize) -> Slot {
        let existing = match attr {
            Some(a) => self.attrs.iter().find(|(name, _)| name == a).map(|(_, s)| *s),
            None => self.text,
        };
        if let Some(slot) = existing {
            return slot;
        }
        let slot = *slots;
        *slots += 1;
        match attr {
            Some(a) => self.attrs.push((a.to_string(), slot)),
            None => self.text = Some(slot),
        }
        slot
    }
}

/// One field selector, shared by every field that names the same selector text.
#[derive(Debug, Clone)]
pub(super) struct Target {
    /// The selector as written in the profile.
    source: String,
    pub(super) selector: Selector,
    pub(super) reads: Reads,
}

/// The profile's selectors compiled for lol_html, and where each field's raw value lands.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) card: Selector,
    /// Read from the card element itself (fields without a selector).
    pub(super) card_reads: Reads,
    pub(super) targets: Vec<Target>,
    /// Number of slots per card.
    pub(super) slots: usize,
    /// Slot of each field read, by dotted name ("fields.team1", "state", [`STATE_CLASS`]).
    pub(super) fields: HashMap<&'static str, Slot>,
}

fn compile_one(field: &'static str, selector: &str) -> Result<Selector, SelectorFailure> {
    // An empty selector would otherwise surface as a confusing CSS parser message.
    if selector.trim().is_empty() {
        return Err(SelectorFailure {
            field,
            selector: selector.to_string(),
            reason: "empty selector".to_string(),
        });
    }
    // lol_html refuses what its streaming matcher cannot do (sibling combinators,
    // `:last-child`, `:has()`…), so an unsupported selector fails here, not on a page. Its
    // message does not always say which part it refused, so the supported subset follows.
    selector.parse::<Selector>().map_err(|e| SelectorFailure {
        field,
        selector: selector.to_string(),
        reason: format!("{e} {SUPPORTED}"),
    })
}

pub(super) fn compile(profile: &Profile) -> Result<Plan, SelectorFailure> {
    let mut plan = Plan {
        card: compile_one("card", &profile.card)?,
        card_reads: Reads::default(),
        targets: Vec::new(),
        slots: 0,
        fields: HashMap::new(),
    };
    // (name, selector, attribute, whether a value is read at all)
    let mut wanted: Vec<(&'static str, Option<&str>, Option<&str>, bool)> = named_fields(&profile.fields)
        .into_iter()
        .map(|(n, f)| (n, f.selector.as_deref(), f.attr.as_deref(), true))
        .collect();
    if let Some(t) = &profile.fields.start_time {
        wanted.push(("fields.start_time", t.selector.as_deref(), t.attr.as_deref(), true));
    }
    // The state selector is always checked, but its element's text is read only when words map
    // to states, and its class only when classes do.
    let state = &profile.state;
    let selector = state.selector.as_deref();
    wanted.push(("state", selector, state.attr.as_deref(), !state.from_text.is_empty()));
    wanted.push((STATE_CLASS, selector, Some("class"), !state.from_class.is_empty()));
    for (name, selector, attr, read) in wanted {
        let reads = match selector {
            None => &mut plan.card_reads,
            Some(source) => {
                let i = match plan.targets.iter().position(|t| t.source == source) {
                    Some(i) => i,
                    None => {
                        let selector = compile_one(name, source)?;
                        plan.targets.push(Target {
                            source: source.to_string(),
                            selector,
                            reads: Reads::default(),
                        });
                        plan.targets.len() - 1
                    }
                };
                let Some(target) = plan.targets.get_mut(i) else {
                    continue;
                };
                &mut target.reads
            }
        };
        if read {
            let slot = reads.slot(attr, &mut plan.slots);
            plan.fields.insert(name, slot);
        }
    }
    Ok(plan)
}
