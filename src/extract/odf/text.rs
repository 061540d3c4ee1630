//! OpenDocument text (.odt): the body's blocks, then headers and footers (from
//! `styles.xml`'s master pages), footnotes, endnotes and comments under their markers,
//! served with Word's options; hidden text as findings placed by block.

use super::super::blocks::{serve_blocks, Block};
use super::super::package::Package;
use super::super::xml::{walk, Node};
use super::super::{Extractor, Input};
use super::{read_content, OdtExtractor};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::ApiError;
use crate::options::{HiddenText, Options};

/// Paragraphs of the page headers and footers in styles.xml (master pages).
fn headers_footers(xml: &[u8], depth: usize) -> Result<(Vec<Block>, Vec<Block>), ApiError> {
    let (mut headers, mut footers) = (Vec::new(), Vec::new());
    let mut within: Option<bool> = None; // Some(true) in a header, Some(false) in a footer
    let mut para: Option<String> = None;
    walk(xml, depth, |n| match n {
        Node::Open("header" | "header-left" | "header-first", _) => within = Some(true),
        Node::Open("footer" | "footer-left" | "footer-first", _) => within = Some(false),
        Node::Close(
            "header" | "header-left" | "header-first" | "footer" | "footer-left" | "footer-first",
        ) => within = None,
        Node::Open("p" | "h", _) if within.is_some() => para = Some(String::new()),
        Node::Text(t) => {
            if let Some(p) = para.as_mut() {
                p.push_str(t);
            }
        }
        Node::Open("tab", _) => {
            if let Some(p) = para.as_mut() {
                p.push('\t');
            }
        }
        Node::Close("p" | "h") => {
            if let (Some(p), Some(h)) = (para.take(), within) {
                let b = Block::Para(p.trim().to_string());
                let list = if h { &mut headers } else { &mut footers };
                if !p.trim().is_empty() && !list.contains(&b) {
                    list.push(b);
                }
            }
        }
        _ => {}
    })?;
    Ok((headers, footers))
}

impl Extractor for OdtExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let mut pkg = Package::open(&input.path, limits.package)?;
        let mode = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (content, styles_xml) = read_content(&mut pkg, mode, req.markdown())?;
        let hidden = content.hidden;
        let mut blocks: Vec<Block> = content.body.into_iter().map(|(_, _, b)| b).collect();
        let paragraphs = blocks.iter().filter(|b| b.is_paragraph()).count();
        let tables = blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        let (headers, footers) = match &styles_xml {
            Some(x) => headers_footers(x, limits.package.max_xml_depth)?,
            None => (Vec::new(), Vec::new()),
        };
        for (marker, side) in [
            ("Headers", headers),
            ("Footers", footers),
            ("Footnotes", content.footnotes),
            ("Endnotes", content.endnotes),
            ("Comments", content.comments),
        ] {
            if !side.is_empty() {
                blocks.push(Block::Marker(marker.to_string()));
                blocks.extend(side);
            }
        }
        let mut ex = serve_blocks(&blocks, paragraphs, tables, req)?;
        ex.findings = super::super::blocks::block_findings(
            blocks.len(),
            hidden.iter().map(|(at, how, text)| {
                (
                    *at,
                    crate::findings::FindingKind::HiddenRun,
                    *how,
                    text.as_str(),
                    false,
                )
            }),
            req,
            ex.next.as_ref(),
            mode,
        )?;
        Ok(ex)
    }
}
