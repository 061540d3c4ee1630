//! OpenDocument text (.odt) and presentations (.odp), from `content.xml` (and `styles.xml`
//! for list styles, headers and footers). A text document is read as Word is: paragraphs,
//! headings and list items with their numbers, tables where they stand, then footnotes,
//! endnotes, comments, headers and footers under their own markers, with Word's options.
//! A presentation is read as PowerPoint is: `--- Slide N ---`, its frames' text and tables,
//! then `[Notes]`; `pages` selects slides.
//!
//! Its files: `mod.rs` the two extractors and `read_content`; `content.rs` `content.xml`
//! walked into blocks; `styles.rs` list, outline and hiding styles and the counters that
//! number; `text.rs` a text document served (with its headers and footers);
//! `presentation.rs` a presentation served by slide.

mod content;
mod formula;
mod presentation;
mod styles;
mod text;

use super::package::Package;
use crate::error::{ApiError, ErrorCode};
use crate::options::HiddenText;
use content::{parse_content, Content};
use styles::Styles;

pub struct OdtExtractor;

pub struct OdpExtractor;

/// content.xml parsed, with the list styles of both parts.
fn read_content(
    pkg: &mut Package,
    mode: HiddenText,
    markdown: bool,
) -> Result<(Content, Option<Vec<u8>>), ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let content = pkg
        .read("content.xml")?
        .ok_or_else(|| ApiError::new(ErrorCode::Corrupt, "the package has no content.xml"))?;
    let mut styles = Styles::default();
    let styles_xml = pkg.read("styles.xml")?;
    if let Some(x) = &styles_xml {
        styles.parse(x, depth)?;
    }
    styles.parse(&content, depth)?;
    let mut parsed = parse_content(&content, depth, &styles, mode, markdown)?;
    embed_objects(pkg, &mut parsed, depth, mode, markdown)?;
    Ok((parsed, styles_xml))
}

/// At most this many embedded objects are read into a document.
const MAX_OBJECTS: usize = 64;

/// Embedded objects' text where they stand (`draw:object`: a spreadsheet's tables, a
/// chart as a chart block), read from their own `content.xml` in the package with their own styles,
/// one level deep (objects inside objects are not opened). An object outside the package
/// (an address, a path up), or whose parts cannot be read, is left out: it costs its own
/// text, never the document's.
fn embed_objects(
    pkg: &mut Package,
    c: &mut Content,
    depth: usize,
    mode: HiddenText,
    markdown: bool,
) -> Result<(), ApiError> {
    let objects = std::mem::take(&mut c.objects);
    let mut sides: Vec<(Vec<_>, Vec<_>, Vec<_>)> = Vec::new();
    // From the last: an object's blocks do not move the places of those before it.
    for (at, slide, notes, href) in objects.into_iter().take(MAX_OBJECTS).rev() {
        let Some(folder) = super::package::object_folder(&href) else {
            continue;
        };
        let Ok(Some(xml)) = pkg.read(&format!("{folder}/content.xml")) else {
            continue;
        };
        // A formula (LibreOffice Math's MathML): its LaTeX, as Word's equations are.
        if let Some(tex) = formula::latex(&xml, depth) {
            let at = at.min(c.body.len());
            for h in c.hidden.iter_mut().filter(|h| h.0 >= at) {
                h.0 += 1;
            }
            c.body.insert(
                at,
                (
                    slide,
                    notes,
                    super::blocks::Block::Para(format!("$${tex}$$")),
                ),
            );
            continue;
        }
        // A chart: one chart block, as Word's and PowerPoint's charts are (its title and
        // its own table of data, not that table as a table of the document).
        if let Ok(Some(text)) = super::chart::read_odf(&xml, depth) {
            let at = at.min(c.body.len());
            for h in c.hidden.iter_mut().filter(|h| h.0 >= at) {
                h.0 += 1;
            }
            c.body
                .insert(at, (slide, notes, super::blocks::Block::Chart(text)));
            continue;
        }
        // Automatic style names (`T1`, `P1`) are the object's own, not the document's.
        let mut styles = Styles::default();
        if let Ok(Some(x)) = pkg.read(&format!("{folder}/styles.xml")) {
            if styles.parse(&x, depth).is_err() {
                continue;
            }
        }
        if styles.parse(&xml, depth).is_err() {
            continue;
        }
        let Ok(inner) = parse_content(&xml, depth, &styles, mode, markdown) else {
            continue;
        };
        let n = inner.body.len();
        let at = at.min(c.body.len());
        for h in c.hidden.iter_mut().filter(|h| h.0 >= at) {
            h.0 += n;
        }
        c.hidden
            .extend(inner.hidden.into_iter().map(|(k, how, t)| (k + at, how, t)));
        c.body.splice(
            at..at,
            inner.body.into_iter().map(|(_, _, b)| (slide, notes, b)),
        );
        sides.push((inner.footnotes, inner.endnotes, inner.comments));
    }
    // The objects' notes and comments after the document's, in the objects' order.
    for (footnotes, endnotes, comments) in sides.into_iter().rev() {
        c.footnotes.extend(footnotes);
        c.endnotes.extend(endnotes);
        c.comments.extend(comments);
    }
    Ok(())
}
