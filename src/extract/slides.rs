//! Documents read by slides (PowerPoint, OpenDocument presentations): the selected slides'
//! blocks served within `max_chars` with `next` naming the slides still to read, their
//! units, and what a slide hidden in the slide show adds to its marker line.

use crate::envelope::{close_truncated, take_blocks, Extraction, Next, Taken};
use crate::error::ApiError;
use crate::options::format_pages;
use crate::report::Report;

/// A read of the selected slides' blocks (`--- Slide N ---` and their text), in order,
/// within `max_chars`, with `next` naming the slides still to read.
/// What a slide hidden in the slide show adds to its marker line: nothing (keep: read as
/// any other), ` ⟦hidden⟧` (mark) or ` ⟦hidden: left out⟧` (drop: only that line is kept).
pub fn hidden_slide_mark(hidden: bool, mode: crate::options::HiddenText) -> &'static str {
    use crate::options::HiddenText;
    match (hidden, mode) {
        (false, _) | (true, HiddenText::Keep) => "",
        (true, HiddenText::Mark) => " ⟦hidden⟧",
        (true, HiddenText::Drop) => " ⟦hidden: left out⟧",
    }
}

/// The finding of slide `n`, hidden in the slide show.
pub fn hidden_slide_finding(n: u64) -> crate::findings::Finding {
    let mut f = crate::findings::finding(
        crate::findings::FindingKind::HiddenSlide,
        crate::findings::Severity::Low,
        0,
        format!("slide {n} is hidden in the slide show"),
        0,
    );
    f.place.slide = Some(n);
    f
}

/// Whether slide `n` was shown by a read that `serve_slides` answered: every selected
/// slide before those its `next` names.
pub fn slides_shown(ex: &Extraction) -> impl Fn(u64) -> bool {
    let rest = ex
        .next
        .as_ref()
        .and_then(|n| n.pages.clone())
        .unwrap_or_default();
    let unread = crate::options::parse_spans(&rest).unwrap_or_default();
    move |n| !unread.iter().any(|&(a, b)| (a..=b).contains(&n))
}

pub fn serve_slides(
    blocks: Vec<(u64, usize, String)>,
    selected: &[u64],
    total: u64,
    mut warnings: Vec<String>,
    max_chars: usize,
) -> Result<Extraction, ApiError> {
    {
        let char_count: usize = blocks.iter().map(|(_, _, b)| b.chars().count()).sum();
        let mut ex = Extraction {
            char_count: char_count as u64,
            ..Default::default()
        };
        let texts: Vec<&str> = blocks.iter().map(|(_, _, b)| b.as_str()).collect();
        let Taken {
            text,
            count,
            oversize,
        } = take_blocks(&texts, max_chars, usize::MAX);
        ex.units = crate::model::block_spans(
            blocks.iter().map(|(n, marker, b)| {
                let unit = crate::model::Unit::numbered(crate::model::UnitKind::Slide, *n);
                (unit, *marker, b.len())
            }),
            text.len(),
        );
        let shown: Vec<u64> = selected[..count].to_vec();
        let rest: Vec<u64> = selected[count..].to_vec();
        let extra = Report {
            total_slides: Some(total as u64),
            slides: Some(shown.len() as u64),
            slide_range_read: Some(format_pages(&shown)),
            ..Default::default()
        };
        if rest.is_empty() {
            ex.text = text;
        } else {
            let mut next = Next::default();
            next.pages = Some(format_pages(&rest));
            if let Some(needed) = oversize {
                next.max_chars = Some(needed as u64);
                warnings.push(format!(
                    "slide {} alone is longer than max_chars; `next` reads it whole",
                    blocks[0].0
                ));
            }
            ex.truncated = true;
            ex.text = close_truncated(text, char_count as u64);
            ex.next = Some(next);
        }
        ex.warnings = warnings;
        ex.report = extra;
        Ok(ex)
    }
}
