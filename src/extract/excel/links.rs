//! Where a sheet's hyperlinks lead (xlsx, xlsb), when that is outside the workbook: a cell
//! shows only its text (`tika_link`), and an agent reading the sheet would not know the
//! address. Shown as a `[Links]` block after the sheet's charts and shapes
//! (`B12: https://…`), as a PDF's links are under `[Links]`; a drawing's shapes' links follow
//! by the shape's name (`TextBox 1: https://…`, read with the drawing in `comments::charts`).
//!
//! Only a sheet whose relationships hold a hyperlink is read again, as it inflates and
//! without holding its cells: its `hyperlinks` element (found by a byte search at the part's
//! end) or an xlsb's `BrtHLink` records. A link to a place inside the workbook (`location` only) is left out.

use std::collections::HashMap;

use super::super::package::{self, Package};
use super::super::xml::{attr, walk, Node};
use super::cells::col_name;
use crate::error::ApiError;

/// The line over a sheet's links.
pub(super) const LINKS_HEAD: &str = "[Links]";

/// Most links listed for one sheet.
const MAX_LINKS: usize = 1000;

/// The sheet's external hyperlinks as a `[Links]` block, in row then column order, only
/// those of cells inside `window` when one is given and that `shown` keeps (0-based row
/// and column); empty when there are none.
pub(super) fn read(
    pkg: &mut Package,
    part: &str,
    window: Option<((u32, u32), (u32, u32))>,
    shown: impl Fn(u32, u32) -> bool,
) -> Result<String, ApiError> {
    let targets = external_targets(pkg, part)?;
    if targets.is_empty() {
        return Ok(String::new());
    }
    let mut found: Vec<((u32, u32), String)> = if part.ends_with(".bin") {
        xlsb_links(pkg, part)?
    } else {
        xlsx_links(pkg, part)?
    }
    .into_iter()
    .filter_map(|(at, id)| Some((at, targets.get(&id)?.clone())))
    .filter(|((r, c), _)| {
        window.is_none_or(|((r0, c0), (r1, c1))| (r0..=r1).contains(r) && (c0..=c1).contains(c))
            && shown(*r, *c)
    })
    .collect();
    found.sort();
    found.dedup();
    found.truncate(MAX_LINKS);
    if found.is_empty() {
        return Ok(String::new());
    }
    let mut out = format!("{LINKS_HEAD}\n");
    for ((r, c), url) in found {
        out.push_str(&format!("{}{}: {}\n", col_name(c), r + 1, one_line(&url)));
    }
    Ok(out)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The part's hyperlink relationships: Id → the address (as written when it leads outside
/// the package).
fn external_targets(pkg: &mut Package, part: &str) -> Result<HashMap<String, String>, ApiError> {
    let (rels, dir) = package::rels_of(part);
    Ok(package::relationship_list(pkg, &rels, dir)?
        .into_iter()
        .filter(|(_, kind, target)| kind == "hyperlink" && !target.is_empty())
        .map(|(id, _, target)| (id, target))
        .collect())
}

/// An xlsx sheet's `<hyperlink ref="B12" r:id="rId1"/>`s: (first cell of the range, Id).
fn xlsx_links(pkg: &mut Package, part: &str) -> Result<Vec<((u32, u32), String)>, ApiError> {
    let Some(element) = super::print::read_last_element(pkg, part, "hyperlinks")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    walk(&element, pkg.limits().max_xml_depth, |n| {
        if let Node::Open("hyperlink", a) = n {
            let cell = attr(a, "ref")
                .and_then(|r| r.split(':').next())
                .and_then(super::cells::parse_cell);
            if let (Some(cell), Some(id)) = (cell, attr(a, "id")) {
                if out.len() < MAX_LINKS * 4 {
                    out.push((cell, id.to_string()));
                }
            }
        }
    })
    // A damaged tail is no reason to fail the sheet's read.
    .ok();
    Ok(out)
}

/// An xlsb sheet's `BrtHLink` records: a cell range (first and last row, first and last
/// column), then the relationship id.
fn xlsb_links(pkg: &mut Package, part: &str) -> Result<Vec<((u32, u32), String)>, ApiError> {
    let mut out = super::xlsb::hyperlinks(pkg, part)?;
    out.truncate(MAX_LINKS * 4);
    Ok(out)
}
