//! Runs that hide in Word, and how: `w:vanish` (on the run, its styles or the document
//! defaults, resolved in `story`), white text on nothing shaded, a font under 1.5 pt, a
//! picture's description, a comment; and the findings they make.

use super::super::blocks::block_findings;
use super::super::xml::attr;
use crate::envelope::Next;
use crate::error::ApiError;
use crate::options::{HiddenText, Options};

/// Hidden runs found in a story: the block they are in, how they hide, and their text.
pub(super) type HiddenRuns = Vec<(usize, Hiding, String)>;

/// How a run hides: `w:vanish`, white text with no shading or highlight under it (on the
/// run, its paragraph or its table cell) and no page colour, or a font under 1.5 pt. Direct
/// formatting only (a character style's colour is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hiding {
    Vanish,
    White,
    Tiny,
    /// A picture's description (`wp:docPr descr`): not in the text, shown on request.
    AltText,
    /// A comment: in the text under `--- Comments ---`, shown beside the page on request.
    Comment,
}

impl Hiding {
    fn kind(self) -> crate::findings::FindingKind {
        match self {
            Self::Vanish => crate::findings::FindingKind::HiddenRun,
            Self::White => crate::findings::FindingKind::WhiteText,
            Self::Tiny => crate::findings::FindingKind::TinyText,
            Self::AltText => crate::findings::FindingKind::AltText,
            Self::Comment => crate::findings::FindingKind::Comment,
        }
    }

    fn why(self) -> &'static str {
        match self {
            Self::Vanish => "w:vanish (on the run, its style or the document defaults)",
            Self::White => "white text (w:color FFFFFF) on no shading",
            Self::Tiny => "font under 1.5 pt (w:sz)",
            Self::AltText => "picture description (wp:docPr descr), not in the text",
            Self::Comment => "a comment, shown beside the text on request",
        }
    }
}

/// A toggle property (`w:vanish`, `w:b`…): on unless `w:val` says 0, false or off.
pub(super) fn on(a: &[(String, String)]) -> bool {
    attr(a, "val").is_none_or(|v| !matches!(v, "0" | "false" | "off"))
}

/// A fill or highlight that shows something behind the text (not none, auto or white).
pub(super) fn shows_colour(v: Option<&str>) -> bool {
    v.is_some_and(|v| {
        !matches!(
            v.to_ascii_lowercase().as_str(),
            "" | "auto" | "none" | "ffffff" | "white"
        )
    })
}

/// Word's hidden runs in the blocks the read returned (from `paragraph_offset` to where
/// `next` goes on, or all it searched for a query) as findings, placed by block
/// (`paragraph`, as `paragraph_offset` counts).
pub(super) fn hidden_findings(
    blocks: usize,
    hidden: &[(usize, Hiding, String)],
    req: &Options,
    next: Option<&Next>,
    mode: HiddenText,
) -> Result<Vec<crate::findings::Finding>, ApiError> {
    block_findings(
        blocks,
        hidden.iter().map(|(at, how, text)| {
            (
                *at,
                how.kind(),
                how.why(),
                text.as_str(),
                // Not in the text returned: a picture's description.
                *how == Hiding::AltText,
            )
        }),
        req,
        next,
        mode,
    )
}
