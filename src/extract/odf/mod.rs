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
    Ok((parse_content(&content, depth, &styles, mode)?, styles_xml))
}
