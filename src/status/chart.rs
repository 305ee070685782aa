//! The status page's chart: posts per day per channel over the snapshot's days, as the
//! geometry of an inline SVG of stacked bars (no script, no style attribute: the page's
//! Content-Security-Policy allows neither). Pure: numbers in, shapes out.

use crate::journal::Snapshot;
use serde::Serialize;

/// Width of the chart's drawing, SVG user units (pixels at 100 %).
pub const WIDTH: u32 = 720;
/// Height of the bars' area, SVG user units; the day labels go below it.
pub const BARS_HEIGHT: u32 = 160;
/// Height below the bars for the day labels.
const LABELS_HEIGHT: u32 = 20;

/// One colour per channel row, in order, repeating after the last (colour-blind safe: the
/// Okabe–Ito palette).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];

/// The chart as the template draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// The SVG's width.
    pub width: u32,
    /// The SVG's height (bars and labels).
    pub height: u32,
    /// The largest day's posts (all channels): the top of the scale.
    pub max: u32,
    /// One rectangle per channel and day with posts.
    pub bars: Vec<Bar>,
    /// One label per day (`12-03`), centred under its bars.
    pub labels: Vec<Label>,
    /// Which colour is which channel.
    pub legend: Vec<Legend>,
}

/// One channel's posts of one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
    /// Fill colour (`#RRGGBB`).
    pub fill: &'static str,
    /// Its tooltip: `x, 2026-12-03: 4 posts`.
    pub title: String,
}

/// A day's label under its bars.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Label {
    /// Centre of the text.
    pub x: u32,
    /// Baseline.
    pub y: u32,
    /// `MM-DD`.
    pub text: String,
}

/// One channel's colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Legend {
    /// The channel's run (`x`, `x (result)`).
    pub name: String,
    /// Its colour.
    pub fill: &'static str,
}

/// The chart of `s`: each day a column of bars stacked bottom-up in channel order, scaled so
/// the busiest day fills the height.
pub fn chart(s: &Snapshot) -> Chart {
    let days = u32::try_from(s.days.len().max(1)).unwrap_or(u32::MAX);
    let slot = WIDTH / days;
    let bar_w = slot.saturating_sub(6).max(2);
    let totals: Vec<u32> = (0..s.days.len())
        .map(|d| {
            s.channels
                .iter()
                .map(|c| c.posts_by_day.get(d).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    let max = totals.iter().copied().max().unwrap_or(0);
    let mut bars = Vec::new();
    let mut labels = Vec::with_capacity(s.days.len());
    for (d, day) in s.days.iter().enumerate() {
        let x = u32::try_from(d).unwrap_or(0) * slot + (slot - bar_w) / 2;
        let mut top = BARS_HEIGHT;
        for (c, row) in s.channels.iter().enumerate() {
            let n = row.posts_by_day.get(d).copied().unwrap_or(0);
            if n == 0 || max == 0 {
                continue;
            }
            let h = (u64::from(n) * u64::from(BARS_HEIGHT) / u64::from(max)).max(1);
            let h = u32::try_from(h).unwrap_or(BARS_HEIGHT).min(top);
            top -= h;
            bars.push(Bar {
                x,
                y: top,
                w: bar_w,
                h,
                fill: PALETTE[c % PALETTE.len()],
                title: format!(
                    "{}, {}: {n} post{}",
                    name(&row.channel, &row.event),
                    day,
                    if n == 1 { "" } else { "s" }
                ),
            });
        }
        labels.push(Label {
            x: u32::try_from(d).unwrap_or(0) * slot + slot / 2,
            y: BARS_HEIGHT + LABELS_HEIGHT - 6,
            text: day.format("%m-%d").to_string(),
        });
    }
    Chart {
        width: WIDTH,
        height: BARS_HEIGHT + LABELS_HEIGHT,
        max,
        bars,
        labels,
        legend: s
            .channels
            .iter()
            .enumerate()
            .map(|(c, row)| Legend {
                name: name(&row.channel, &row.event),
                fill: PALETTE[c % PALETTE.len()],
            })
            .collect(),
    }
}

/// A channel's run as the chart names it: `x`, or `x (result)` for its results.
fn name(channel: &str, event: &str) -> String {
    if event == "announce" {
        channel.to_string()
    } else {
        format!("{channel} ({event})")
    }
}
