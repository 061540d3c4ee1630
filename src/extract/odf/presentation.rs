//! OpenDocument presentations (.odp), read as PowerPoint's are: `--- Slide N ---`, its
//! frames' text and tables, then `[Notes]`; `pages` selects slides; slides hidden in the
//! slide show marked, dropped or kept as `hidden_text` says.

use super::super::blocks::Block;
use super::super::package::Package;
use super::super::{Extractor, Input};
use super::{read_content, OdpExtractor};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::ApiError;
use crate::options::{HiddenText, Options};

impl Extractor for OdpExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let mut pkg = Package::open(&input.path, limits.package)?;
        let mode = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (content, _) = read_content(&mut pkg, mode)?;
        let total = content.slides as u64;
        let mut warnings = Vec::new();
        let selected = req.select_pages(total, "slide", "presentation", &mut warnings)?;
        let line = |b: &Block| match b {
            Block::Para(_) | Block::Heading(..) | Block::Item { .. } => format!("{}\n", b.plain()),
            Block::Table(rows) => rows
                .iter()
                .map(|r| format!("{}\n", r.join(" | ")))
                .collect(),
            Block::Marker(m) => format!("{m}\n"),
            Block::Chart(c) => c.clone(),
        };
        let blocks: Vec<(u64, usize, String)> = selected
            .iter()
            .map(|&n| {
                let on = |notes: bool| {
                    content
                        .body
                        .iter()
                        .filter(move |(s, in_notes, _)| *s as u64 == n && *in_notes == notes)
                        .map(|(_, _, b)| line(b))
                };
                // A slide hidden in the slide show (issue #21): read as any other (keep),
                // `⟦hidden⟧` in its marker line (mark), or only its marker line (drop).
                let hidden = content.hidden_slides.contains(&(n as usize));
                let mark = super::super::slides::hidden_slide_mark(hidden, mode);
                let mut block = format!("--- Slide {n}{mark} ---\n");
                let marker = block.len();
                if hidden && mode == HiddenText::Drop {
                    return (n, marker, block);
                }
                block.extend(on(false));
                let notes: String = on(true).collect();
                if !notes.is_empty() {
                    block.push_str("[Notes]\n");
                    block.push_str(&notes);
                }
                (n, marker, block)
            })
            .collect();
        let mut ex =
            super::super::slides::serve_slides(blocks, &selected, total, warnings, max_chars)?;
        if req.json() {
            let units = selected
                .iter()
                .map(|&n| {
                    let hidden = content.hidden_slides.contains(&(n as usize));
                    let of = |notes: bool| -> Vec<Block> {
                        content
                            .body
                            .iter()
                            .filter(|(s, in_notes, _)| *s as u64 == n && *in_notes == notes)
                            .map(|(_, _, b)| b.clone())
                            .collect()
                    };
                    let mut typed = Vec::new();
                    if !(hidden && mode == HiddenText::Drop) {
                        let main = of(false);
                        typed = super::super::blocks::to_model(&main, 0..main.len());
                        let notes = of(true);
                        typed.extend(
                            super::super::blocks::to_model(&notes, 0..notes.len())
                                .into_iter()
                                .map(|b| {
                                    crate::model::Block::in_part(
                                        crate::model::Content::Note {
                                            text: crate::model::plain_text(&b.content),
                                            author: None,
                                        },
                                        Some("notes"),
                                    )
                                }),
                        );
                    }
                    crate::model::UnitBlocks::new(
                        crate::model::Unit::numbered(crate::model::UnitKind::Slide, n),
                        typed,
                    )
                })
                .collect();
            ex.document = Some(crate::model::Document { units });
        }
        // The hidden slides among those shown.
        let shown = super::super::slides::slides_shown(&ex);
        ex.findings = selected
            .iter()
            .filter(|&&n| content.hidden_slides.contains(&(n as usize)) && shown(n))
            .map(|&n| super::super::slides::hidden_slide_finding(n))
            .collect();
        Ok(ex)
    }
}
