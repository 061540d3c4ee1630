//! Word (.docx/.docm): the body in reading order — paragraphs, list items with their
//! bullet or number, and each table where it stands — then headers, footers, footnotes,
//! endnotes and comments under their own markers.
//!
//! Its files: `mod.rs` the extractor and the document's parts in reading order (the body,
//! its charts and SmartArt placed, then the side stories); `story.rs` one story's XML
//! walked into blocks; `numbering.rs` list numbering and paragraph styles; `hiding.rs`
//! the runs that hide, how, and their findings.

mod hiding;
mod math;
mod numbering;
mod story;

use super::blocks::{serve_blocks, Block};
use super::package::Package;
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::ApiError;
use crate::options::{HiddenText, Options};
use hiding::{hidden_findings, HiddenRuns, Hiding};
use numbering::Numbering;
use story::parse_story;

pub struct DocxExtractor;

/// A paragraph `parse_story` writes where a chart stands, with its relationship id.
const CHART_MARK: &str = "\u{1}chart:";

/// A paragraph `parse_story` writes where a SmartArt diagram stands, with the relationship
/// id of its data part.
const DIAGRAM_MARK: &str = "\u{1}diagram:";

/// The parts of a document in reading order: body, then the side stories.
///
/// `markdown`: hyperlinks written as Markdown links, their targets from each part's
/// relationships.
fn read_document(
    pkg: &mut Package,
    hidden_text: HiddenText,
    markdown: bool,
) -> Result<(Vec<Block>, usize, usize, HiddenRuns), ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut numbering = read_numbering(pkg, depth)?;
    let main = main_part(pkg)?;
    let body = pkg.read(&main)?.ok_or_else(|| {
        ApiError::new(
            crate::error::ErrorCode::Corrupt,
            format!("the package has no main document part ({main})"),
        )
        .with_hint("The file is damaged: open it in Word and save it again.")
    })?;
    // A page colour (the body's `w:background`) is behind the headers and notes too.
    let mut page = false;
    let links = hyperlinks(pkg, &main, markdown)?;
    let (mut blocks, mut hidden) = parse_story(
        &body,
        depth,
        &mut numbering,
        hidden_text,
        &mut page,
        links.as_ref(),
    )?;
    place_charts(pkg, &mut blocks, &mut hidden, depth, &main)?;
    let (body_paragraphs, tables) = body_counts(&blocks);
    side_stories(
        pkg,
        depth,
        &mut numbering,
        hidden_text,
        &mut page,
        markdown,
        &mut blocks,
        &mut hidden,
    )?;
    place_past_the_end(&blocks, &mut hidden);
    Ok((blocks, body_paragraphs, tables, hidden))
}

/// Where a part's hyperlinks lead (relationship id → target), read only for Markdown.
fn hyperlinks(
    pkg: &mut Package,
    part: &str,
    markdown: bool,
) -> Result<Option<std::collections::HashMap<String, String>>, ApiError> {
    if !markdown {
        return Ok(None);
    }
    Ok(Some(
        super::package::part_relationships(pkg, part)?
            .into_iter()
            .filter(|(_, (_, kind))| kind == "hyperlink")
            .map(|(id, (target, _))| (id, target))
            .collect(),
    ))
}

/// The body's paragraphs and tables (before the side stories are added).
fn body_counts(blocks: &[Block]) -> (usize, usize) {
    let paragraphs = blocks.iter().filter(|b| b.is_paragraph()).count();
    let tables = blocks
        .iter()
        .filter(|b| matches!(b, Block::Table(_)))
        .count();
    (paragraphs, tables)
}

/// What stands past the last block (a picture alone in the last stories) goes with it;
/// the hidden runs in block order.
fn place_past_the_end(blocks: &[Block], hidden: &mut HiddenRuns) {
    let last = blocks.len().saturating_sub(1);
    for h in hidden.iter_mut() {
        h.0 = h.0.min(last);
    }
    hidden.sort_by_key(|h| h.0);
}

/// The side stories' markers, in the order they follow the body, and a docx's parts of each.
const SIDE_STORIES: [(&str, &str); 5] = [
    ("Headers", "word/header"),
    ("Footers", "word/footer"),
    ("Footnotes", "word/footnotes"),
    ("Endnotes", "word/endnotes"),
    ("Comments", "word/comments"),
];

/// One kind of side story after the body: its marker, then its blocks (each block once);
/// a comment's text is also a `comment` finding.
fn push_side_story(
    blocks: &mut Vec<Block>,
    hidden: &mut HiddenRuns,
    marker: &str,
    seen: Vec<Block>,
) {
    if seen.is_empty() {
        return;
    }
    blocks.push(Block::Marker(marker.to_string()));
    for b in seen {
        if marker == "Comments" {
            hidden.push((blocks.len(), Hiding::Comment, b.plain()));
        }
        blocks.push(b);
    }
}

/// Word 2003 XML (`w:wordDocument`): one XML file with its styles and body inline, read as
/// a docx's body (WordprocessingML 2003 names its paragraphs, runs, text, tables, fields
/// and hidden runs as 2006 does). A list item takes the label Word wrote beside it (`wx:t`);
/// headers, footers, notes and comments stand where Word put them (in the section's
/// properties, in their runs). Pictures' base64 data is never text.
fn read_word_2003(
    path: &std::path::Path,
    limits: &Limits,
    hidden_text: HiddenText,
    markdown: bool,
) -> Result<(Vec<Block>, usize, usize, HiddenRuns), ApiError> {
    let xml = super::xml::read_whole(path, limits.package.max_entry_bytes, "Word 2003 XML file")?;
    let depth = limits.package.max_xml_depth;
    let mut numbering = Numbering::default();
    numbering.parse_styles(&xml, depth)?;
    let (mut blocks, mut hidden, sides) =
        story::parse_word_2003(&xml, depth, &mut numbering, hidden_text, markdown)?;
    let (paragraphs, tables) = body_counts(&blocks);
    // The side stories after the body, in a docx's order, each block once (a header
    // repeated for odd and even pages is one).
    for (marker, _) in SIDE_STORIES {
        let mut seen: Vec<Block> = Vec::new();
        for b in sides
            .iter()
            .filter(|(m, _)| *m == marker)
            .flat_map(|(_, b)| b)
        {
            if !(b.is_paragraph() && b.plain().trim().is_empty()) && !seen.contains(b) {
                seen.push(b.clone());
            }
        }
        push_side_story(&mut blocks, &mut hidden, marker, seen);
    }
    place_past_the_end(&blocks, &mut hidden);
    Ok((blocks, paragraphs, tables, hidden))
}

/// The main document part: `word/document.xml`, or where the package's relationships
/// say it is (`_rels/.rels`: writers may name it otherwise, `word/document2.xml`).
fn main_part(pkg: &mut Package) -> Result<String, ApiError> {
    const USUAL: &str = "word/document.xml";
    if pkg.has(USUAL) {
        return Ok(USUAL.to_string());
    }
    Ok(super::package::relationship_list(pkg, "_rels/.rels", "")?
        .into_iter()
        .find(|(_, kind, _)| kind == "officeDocument")
        .map(|(_, _, target)| target.trim_start_matches('/').to_string())
        .unwrap_or_else(|| USUAL.to_string()))
}

/// The list definitions (numbering.xml) and paragraph styles (styles.xml), either absent.
fn read_numbering(pkg: &mut Package, depth: usize) -> Result<Numbering, ApiError> {
    let mut numbering = match pkg.read("word/numbering.xml")? {
        Some(x) => Numbering::parse(&x, depth)?,
        None => Numbering::default(),
    };
    if let Some(x) = pkg.read("word/styles.xml")? {
        numbering.parse_styles(&x, depth)?;
    }
    Ok(numbering)
}

/// Charts and SmartArt where they stand, from the parts the body's relationships name:
/// each marker paragraph `parse_story` wrote replaced by the chart's blocks or the
/// diagram's lines, and the hidden runs' places moved with the blocks.
fn place_charts(
    pkg: &mut Package,
    blocks: &mut Vec<Block>,
    hidden: &mut HiddenRuns,
    depth: usize,
    main: &str,
) -> Result<(), ApiError> {
    let placed = |b: &Block| matches!(b, Block::Para(p) if p.starts_with(CHART_MARK) || p.starts_with(DIAGRAM_MARK));
    if !blocks.iter().any(placed) {
        return Ok(());
    }
    let rels = super::package::part_relationships(pkg, main)?;
    let mut read = |rid: &str| -> Result<Option<Vec<u8>>, ApiError> {
        match rels.get(rid) {
            Some((part, _)) => pkg.read(part),
            None => Ok(None),
        }
    };
    // Each block's place after the charts and diagrams take theirs (hidden runs are
    // placed by block).
    let mut at = Vec::with_capacity(blocks.len() + 1);
    let mut out = Vec::with_capacity(blocks.len());
    for b in std::mem::take(blocks) {
        at.push(out.len());
        let Block::Para(p) = &b else {
            out.push(b);
            continue;
        };
        if let Some(rid) = p.strip_prefix(CHART_MARK) {
            if let Some(chart) = read(rid)?.map(|x| super::chart::read(&x, depth)) {
                out.extend(chart?.filter(|c| !c.is_empty()).map(Block::Chart));
            }
        } else if let Some(rid) = p.strip_prefix(DIAGRAM_MARK) {
            if let Some(x) = read(rid)? {
                // A damaged diagram loses its own text, not the document's.
                let lines = super::diagram::lines(&x, depth).unwrap_or_default();
                out.extend(lines.into_iter().map(Block::Para));
            }
        } else {
            out.push(b);
        }
    }
    at.push(out.len());
    for h in hidden.iter_mut() {
        h.0 = at[h.0.min(at.len() - 1)];
    }
    *blocks = out;
    Ok(())
}

/// The side stories after the body, each kind under its marker (`Headers`, `Footers`,
/// `Footnotes`, `Endnotes`, `Comments`): a block repeated in another part of the kind
/// once, and their hidden runs placed by the block they are in (a comment is a finding
/// too).
fn side_stories(
    pkg: &mut Package,
    depth: usize,
    numbering: &mut Numbering,
    hidden_text: HiddenText,
    page: &mut bool,
    markdown: bool,
    blocks: &mut Vec<Block>,
    hidden: &mut HiddenRuns,
) -> Result<(), ApiError> {
    let mut names = pkg.names();
    names.sort();
    for (marker, prefix) in SIDE_STORIES {
        let mut seen: Vec<Block> = Vec::new();
        // Hidden runs and pictures' descriptions of these stories, by their block's place
        // in `seen` (a block repeated in another part is one block; a picture alone in an
        // empty paragraph is placed where the stories' marker stands).
        let mut found: Vec<(Option<usize>, Hiding, String)> = Vec::new();
        for name in names
            .iter()
            .filter(|n| n.starts_with(prefix) && n.ends_with(".xml"))
        {
            let Some(xml) = pkg.read(name)? else { continue };
            let links = hyperlinks(pkg, name, markdown)?;
            let (story, story_hidden) =
                parse_story(&xml, depth, numbering, hidden_text, page, links.as_ref())?;
            let mut place: Vec<Option<usize>> = Vec::with_capacity(story.len());
            for b in story {
                let empty = b.is_paragraph() && {
                    let p = b.plain();
                    p.trim().is_empty() || p.starts_with(CHART_MARK) || p.starts_with(DIAGRAM_MARK)
                };
                place.push(if empty {
                    None
                } else if let Some(i) = seen.iter().position(|s| *s == b) {
                    Some(i)
                } else {
                    seen.push(b);
                    Some(seen.len() - 1)
                });
            }
            for (at, how, text) in story_hidden {
                let at = place.get(at).copied().flatten();
                if !found
                    .iter()
                    .any(|(a, h, t)| *a == at && *h == how && *t == text)
                {
                    found.push((at, how, text));
                }
            }
        }
        // The marker's place; the stories' blocks follow it.
        let base = blocks.len();
        for (at, how, text) in found {
            let at = at.map_or(base, |i| base + 1 + i);
            hidden.push((at, how, text));
        }
        push_side_story(blocks, hidden, marker, seen);
    }
    Ok(())
}

impl Extractor for DocxExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let hidden_text = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (blocks, paragraphs, tables, hidden) = if input.format == crate::detect::Format::WordMl
        {
            read_word_2003(&input.path, limits, hidden_text, req.markdown())?
        } else {
            let mut pkg = Package::open(&input.path, limits.package)?;
            read_document(&mut pkg, hidden_text, req.markdown())?
        };
        let mut ex = serve_blocks(&blocks, paragraphs, tables, req)?;
        ex.findings = hidden_findings(blocks.len(), &hidden, req, ex.next.as_ref(), hidden_text)?;
        Ok(ex)
    }
}
