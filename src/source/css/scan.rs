//! The streaming pass: a page goes once through lol_html with the [`Plan`]'s selectors, and each
//! card comes out as its raw values (attributes and text content, decoded as an HTML parser
//! decodes them), in page order. No document tree is built.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use lol_html::html_content::{Element, EndTag, TextChunk, TextType};
use lol_html::{ElementContentHandlers, HtmlRewriter, Settings};

use super::compile::{Plan, Reads, Slot};

/// The most cards open at once (nested in one another, or unclosed and so stacked) before a
/// page is refused. lol_html scans every end-tag handler still waiting before the one an end tag
/// fires, and each open card holds one (plus one per field it is reading text from), so without
/// a bound a hostile page of nested or unclosed cards costs time quadratic in its size (an 8 MiB
/// page of 64,000 unclosed cards took seconds). Listings hold far fewer, closed or not.
pub(super) const MAX_OPEN_CARDS: usize = 1024;

/// One card's raw values while the page streams past.
struct CardScan {
    /// Per slot: the attribute (one level of entities decoded) or the text content so far.
    values: Vec<Option<String>>,
    /// Per target: its first element in this card has been seen; later ones do not count.
    taken: Vec<bool>,
    /// Per target: that first element is still open, so text inside it is its text content.
    capturing: Vec<bool>,
}

/// What the handlers share while one page streams through lol_html.
#[derive(Default)]
struct Scan {
    /// Every card in page order (start tags).
    cards: Vec<CardScan>,
    /// Cards whose element is open, innermost last. Elements and text go to the innermost card
    /// only, so a nested card's content never fills its enclosing card's fields.
    open: Vec<usize>,
    /// Byte offset of the latest card's start tag: an element that is itself a card is no field
    /// of an enclosing card (nor of itself).
    last_card_start: Option<usize>,
    /// Raw text of the current text node, one buffer per text handler (targets by index, then
    /// the card's): entities are decoded per complete node, as an entity can straddle chunks.
    pending: Vec<String>,
}

impl Scan {
    /// Adds one text chunk to `slot` of the innermost open card when that card is reading text
    /// from `target`'s element (`None`: from the card itself).
    fn text(&mut self, buffer: usize, target: Option<usize>, slot: Slot, chunk: &TextChunk<'_>) {
        let Scan {
            cards, open, pending, ..
        } = self;
        let Some(card) = open.last().and_then(|&c| cards.get_mut(c)) else {
            return;
        };
        if let Some(t) = target {
            if card.capturing.get(t) != Some(&true) {
                return;
            }
        }
        let (Some(Some(value)), Some(pending)) = (card.values.get_mut(slot), pending.get_mut(buffer)) else {
            return;
        };
        let last = chunk.last_in_text_node();
        if pending.is_empty() && last {
            value.push_str(&decode_text(chunk.as_str(), chunk.text_type()));
            return;
        }
        pending.push_str(chunk.as_str());
        if last {
            value.push_str(&decode_text(pending, chunk.text_type()));
            pending.clear();
        }
    }
}

/// One text node as an HTML parser gives it: entities decoded in ordinary text and RCDATA
/// (`<title>`, `<textarea>`), script, style and other raw text taken as written; U+0000 dropped
/// from ordinary text (the tree builder ignores it) and replaced by U+FFFD elsewhere.
fn decode_text(raw: &str, kind: TextType) -> Cow<'_, str> {
    match kind {
        TextType::Data => htmlize::unescape(replace_nul(raw, "")),
        TextType::RCData => htmlize::unescape(replace_nul(raw, "\u{FFFD}")),
        _ => replace_nul(raw, "\u{FFFD}"),
    }
}

/// One attribute value as an HTML parser gives it: U+0000 replaced, entities decoded with the
/// attribute rules (`&amp` without `;` before a letter or `=` stays as written).
fn decode_attr(raw: &str) -> String {
    htmlize::unescape_attribute(replace_nul(raw, "\u{FFFD}")).into_owned()
}

/// `raw` with every U+0000 replaced by `with`; lol_html passes it through as written.
fn replace_nul<'a>(raw: &'a str, with: &str) -> Cow<'a, str> {
    if raw.contains('\0') {
        Cow::Owned(raw.replace('\0', with))
    } else {
        Cow::Borrowed(raw)
    }
}

pub(super) type ScanError = Box<dyn std::error::Error + Send + Sync>;

/// Streams `page` through lol_html with the plan's selectors and returns each card's slot
/// values, cards in page order. No tree is built: handlers fire on the card and target start
/// tags, on text inside elements whose text a field reads, and on those elements' end tags.
pub(super) fn scan(plan: &Plan, page: &str) -> Result<Vec<Vec<Option<String>>>, ScanError> {
    let n = plan.targets.len();
    let shared = Rc::new(RefCell::new(Scan {
        pending: vec![String::new(); n + 1],
        ..Scan::default()
    }));
    let state = &shared;
    let mut handlers = Vec::with_capacity(n + 1);

    // The card handler goes first: lol_html runs an element's handlers in this order, and the
    // target handlers must know whether the element is itself a card.
    let mut card = ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
        let mut s = state.try_borrow_mut()?;
        if s.open.len() >= MAX_OPEN_CARDS {
            return Err(format!("more than {MAX_OPEN_CARDS} cards open at once (nested or unclosed)").into());
        }
        let mut values = vec![None; plan.slots];
        plan.card_reads.start(el, &mut values);
        let idx = s.cards.len();
        s.cards.push(CardScan {
            values,
            taken: vec![false; n],
            capturing: vec![false; n],
        });
        s.last_card_start = Some(el.source_location().bytes().start);
        // A void element (`<img>`) has no end tag and no content: it is a card of attributes.
        if let Some(end) = el.end_tag_handlers() {
            s.open.push(idx);
            let state = Rc::clone(state);
            end.push(Box::new(move |_: &mut EndTag<'_>| {
                let mut s = state.try_borrow_mut()?;
                if let Some(at) = s.open.iter().rposition(|&c| c == idx) {
                    s.open.remove(at);
                }
                Ok(())
            }));
        }
        Ok(())
    });
    if let Some(slot) = plan.card_reads.text {
        card = card.text(move |chunk: &mut TextChunk<'_>| {
            state.try_borrow_mut()?.text(n, None, slot, chunk);
            Ok(())
        });
    }
    handlers.push((Cow::Borrowed(&plan.card), card));

    for (t, target) in plan.targets.iter().enumerate() {
        if target.reads.is_empty() {
            continue;
        }
        let mut h = ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
            let mut s = state.try_borrow_mut()?;
            if s.last_card_start == Some(el.source_location().bytes().start) {
                return Ok(());
            }
            let Some(c) = s.open.last().copied() else {
                return Ok(());
            };
            let Some(card) = s.cards.get_mut(c) else {
                return Ok(());
            };
            match card.taken.get_mut(t) {
                Some(taken) if !*taken => *taken = true,
                _ => return Ok(()),
            }
            target.reads.start(el, &mut card.values);
            if target.reads.text.is_none() {
                return Ok(());
            }
            if let (Some(end), Some(capturing)) = (el.end_tag_handlers(), card.capturing.get_mut(t)) {
                *capturing = true;
                let state = Rc::clone(state);
                end.push(Box::new(move |_: &mut EndTag<'_>| {
                    let mut s = state.try_borrow_mut()?;
                    if let Some(capturing) = s.cards.get_mut(c).and_then(|card| card.capturing.get_mut(t)) {
                        *capturing = false;
                    }
                    Ok(())
                }));
            }
            Ok(())
        });
        if let Some(slot) = target.reads.text {
            h = h.text(move |chunk: &mut TextChunk<'_>| {
                state.try_borrow_mut()?.text(t, Some(t), slot, chunk);
                Ok(())
            });
        }
        handlers.push((Cow::Borrowed(&target.selector), h));
    }

    let settings = handlers
        .into_iter()
        .fold(Settings::new(), Settings::append_element_content_handler)
        // Strict mode stops at markup lol_html cannot place without a tree (rare `<select>`
        // and foreign-content cases); a best guess beats refusing a scraped page.
        .with_strict(false);
    // The rewritten page is not wanted: lol_html is used as a parser only.
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(page.as_bytes())?;
    rewriter.end()?;
    let cards = std::mem::take(&mut shared.try_borrow_mut()?.cards);
    Ok(cards.into_iter().map(|card| card.values).collect())
}

// Beside the scan rather than the compiler: reading an element is part of the pass.
impl Reads {
    /// Stores the attributes of `el` (an absent attribute stays `None`) and starts its text empty.
    pub(super) fn start(&self, el: &Element<'_, '_>, values: &mut [Option<String>]) {
        for (name, slot) in &self.attrs {
            if let (Some(raw), Some(value)) = (el.get_attribute(name), values.get_mut(*slot)) {
                // lol_html hands attribute values over as written.
                *value = Some(decode_attr(&raw));
            }
        }
        if let Some(value) = self.text.and_then(|s| values.get_mut(s)) {
            *value = Some(String::new());
        }
    }
}
