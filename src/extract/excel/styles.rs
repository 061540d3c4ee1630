//! `include_styles` (xlsx): what a sheet's look says about its data, compactly, for the
//! cells read: merged ranges, hidden rows and columns, number formats by range (a column's
//! run of cells with one format), and whether the header row(s) are bold or filled. Read
//! from the sheet's XML and `xl/styles.xml` (calamine gives values, not formats).

use std::collections::HashMap;

use super::super::package::Package;
use super::super::xml::{attr, walk, Node};
use crate::error::ApiError;
use crate::report::{HeaderStyle, NumberFormatRange, SheetStyles};

/// Entries of one kind at most (each also costs a cell of the budget).
const MAX_ENTRIES: usize = 1000;

/// One cell format (`cellXfs` entry): number format, bold font, solid fill colour.
#[derive(Debug, Clone, Default)]
struct Xf {
    num_fmt: Option<String>,
    bold: bool,
    fill: Option<String>,
}

/// The workbook's cell formats, by style index.
pub(super) struct Formats(Vec<Xf>);

/// Built-in number formats (ECMA-376 §18.8.30) other than General.
fn builtin(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        12 => "# ?/?",
        13 => "# ??/??",
        14 => "mm-dd-yy",
        15 => "d-mmm-yy",
        16 => "d-mmm",
        17 => "mmm-yy",
        18 => "h:mm AM/PM",
        19 => "h:mm:ss AM/PM",
        20 => "h:mm",
        21 => "h:mm:ss",
        22 => "m/d/yy h:mm",
        37 => "#,##0 ;(#,##0)",
        38 => "#,##0 ;[Red](#,##0)",
        39 => "#,##0.00;(#,##0.00)",
        40 => "#,##0.00;[Red](#,##0.00)",
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        47 => "mmss.0",
        48 => "##0.0E+0",
        49 => "@",
        // The currency and accounting built-ins (5–8, 41–44) as Excel's en-US writes them.
        _ => return super::numfmt::builtin(id as u16),
    })
}

impl Formats {
    pub(super) fn read(pkg: &mut Package) -> Result<Self, ApiError> {
        let Some(xml) = pkg.read("xl/styles.xml")? else {
            return Ok(Self(Vec::new()));
        };
        let depth = pkg.limits().max_xml_depth;
        let mut custom: HashMap<u32, String> = HashMap::new();
        let mut fonts: Vec<bool> = Vec::new();
        let mut fills: Vec<Option<String>> = Vec::new();
        let mut raw: Vec<(u32, usize, usize)> = Vec::new(); // numFmtId, fontId, fillId
        let mut section = "";
        walk(&xml, depth, |n| match n {
            Node::Open(tag @ ("fonts" | "fills" | "cellXfs" | "cellStyleXfs" | "numFmts"), _) => {
                section = match tag {
                    "fonts" => "fonts",
                    "fills" => "fills",
                    "cellXfs" => "cellXfs",
                    "numFmts" => "numFmts",
                    _ => "other",
                }
            }
            Node::Close("fonts" | "fills" | "cellXfs" | "cellStyleXfs" | "numFmts") => section = "",
            Node::Open("numFmt", a) if section == "numFmts" => {
                if let (Some(id), Some(code)) = (
                    attr(a, "numFmtId").and_then(|v| v.parse().ok()),
                    attr(a, "formatCode"),
                ) {
                    custom.insert(id, code.to_string());
                }
            }
            Node::Open("font", _) if section == "fonts" => fonts.push(false),
            Node::Open("b", a) if section == "fonts" => {
                if let Some(f) = fonts.last_mut() {
                    *f = attr(a, "val").is_none_or(|v| !matches!(v, "0" | "false"));
                }
            }
            Node::Open("fill", _) if section == "fills" => fills.push(None),
            Node::Open("patternFill", a) if section == "fills" => {
                if attr(a, "patternType") != Some("solid") {
                    if let Some(f) = fills.last_mut() {
                        *f = Some(String::new()); // a pattern, not a colour: not reported
                    }
                }
            }
            Node::Open("fgColor", a) if section == "fills" => {
                if let Some(f) = fills.last_mut() {
                    if f.is_none() {
                        *f = attr(a, "rgb")
                            .map(str::to_string)
                            .or_else(|| attr(a, "theme").map(|t| format!("theme {t}")))
                            .or_else(|| attr(a, "indexed").map(|t| format!("indexed {t}")));
                    }
                }
            }
            Node::Open("xf", a) if section == "cellXfs" => {
                let num = |k: &str| attr(a, k).and_then(|v| v.parse().ok()).unwrap_or(0);
                raw.push((num("numFmtId") as u32, num("fontId"), num("fillId")));
            }
            _ => {}
        })?;
        Ok(Self(
            raw.into_iter()
                .map(|(nf, font, fill)| Xf {
                    num_fmt: custom
                        .get(&nf)
                        .cloned()
                        .or_else(|| builtin(nf).map(str::to_string)),
                    bold: fonts.get(font).copied().unwrap_or(false),
                    fill: fills.get(fill).cloned().flatten().filter(|f| !f.is_empty()),
                })
                .collect(),
        ))
    }
}

impl Formats {
    /// Each style's number format, where it shows numbers other than General does
    /// (`numfmt::is_numeric`); empty when no style does.
    pub(super) fn numeric(&self) -> Vec<Option<std::sync::Arc<super::numfmt::NumFmt>>> {
        // One compiled format a code, however many styles share it.
        let mut compiled: HashMap<&str, std::sync::Arc<super::numfmt::NumFmt>> = HashMap::new();
        let codes: Vec<Option<std::sync::Arc<super::numfmt::NumFmt>>> = self
            .0
            .iter()
            .map(|xf| {
                let c = xf
                    .num_fmt
                    .as_deref()
                    .filter(|c| super::numfmt::is_numeric(c))?;
                Some(
                    compiled
                        .entry(c)
                        .or_insert_with(|| std::sync::Arc::new(super::numfmt::NumFmt::new(c)))
                        .clone(),
                )
            })
            .collect();
        if codes.iter().all(Option::is_none) {
            Vec::new()
        } else {
            codes
        }
    }
}

fn a1(r: u32, c: u32) -> String {
    format!("{}{}", super::col_name(c), r + 1)
}

/// The styles of the cells of `part` inside `bounds` (inclusive, 0-based rows and
/// columns: what was read), within `budget` entries.
pub(super) fn sheet(
    pkg: &mut Package,
    part: &str,
    formats: &Formats,
    bounds: ((u32, u32), (u32, u32)),
    budget: u64,
) -> Result<SheetStyles, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let Some(xml) = pkg.read(part)? else {
        return Ok(SheetStyles::default());
    };
    let ((r0, c0), (r1, c1)) = bounds;
    let inside = |r: u32, c: u32| (r0..=r1).contains(&r) && (c0..=c1).contains(&c);
    let mut merged = Vec::new();
    let mut hidden_rows = Vec::new();
    let mut hidden_cols = Vec::new();
    // Per column, runs of (first row, last row, format).
    let mut runs: HashMap<u32, Vec<(u32, u32, String)>> = HashMap::new();
    // Per header-candidate row (the first three read): (cells, bold, fills).
    let mut head: HashMap<u32, (usize, usize, Vec<Option<String>>)> = HashMap::new();
    let mut cur: Option<((u32, u32), usize, bool)> = None; // cell, style, has a value
    walk(&xml, depth, |n| match n {
        Node::Open("mergeCell", a) => {
            if let Some((from, to)) = attr(a, "ref").and_then(|r| r.split_once(':')) {
                if let (Some(f), Some(t)) =
                    (super::cells::parse_cell(from), super::cells::parse_cell(to))
                {
                    if inside(f.0, f.1) || inside(t.0, t.1) {
                        merged.push(format!("{}:{}", a1(f.0, f.1), a1(t.0, t.1)));
                    }
                }
            }
        }
        Node::Open("row", a) => {
            let hidden = attr(a, "hidden").is_some_and(|v| matches!(v, "1" | "true"));
            if let Some(r) = attr(a, "r").and_then(|v| v.parse::<u32>().ok()) {
                if hidden && (r0..=r1).contains(&(r - 1)) {
                    hidden_rows.push(r as u64);
                }
            }
        }
        Node::Open("col", a) => {
            let hidden = attr(a, "hidden").is_some_and(|v| matches!(v, "1" | "true"));
            let (Some(min), Some(max)) = (
                attr(a, "min").and_then(|v| v.parse::<u32>().ok()),
                attr(a, "max").and_then(|v| v.parse::<u32>().ok()),
            ) else {
                return;
            };
            if hidden {
                let (lo, hi) = ((min - 1).max(c0), (max.min(16384) - 1).min(c1));
                if lo <= hi {
                    hidden_cols.push(if lo == hi {
                        super::col_name(lo)
                    } else {
                        format!("{}:{}", super::col_name(lo), super::col_name(hi))
                    });
                }
            }
        }
        Node::Open("c", a) => {
            let at = attr(a, "r").and_then(super::cells::parse_cell);
            let style = attr(a, "s").and_then(|v| v.parse().ok()).unwrap_or(0);
            cur = at.map(|at| (at, style, false));
        }
        Node::Open("v" | "is", _) => {
            if let Some(c) = cur.as_mut() {
                c.2 = true;
            }
        }
        Node::Close("c") => {
            let Some(((r, c), style, has_value)) = cur.take() else {
                return;
            };
            if !inside(r, c) || !has_value {
                return;
            }
            let xf = formats.0.get(style).cloned().unwrap_or_default();
            if let Some(f) = xf.num_fmt.filter(|f| f != "General") {
                let col = runs.entry(c).or_default();
                match col.last_mut() {
                    Some((_, last, g)) if *g == f && *last + 1 == r => *last = r,
                    _ => col.push((r, r, f)),
                }
            }
            if r < r0.saturating_add(3) {
                let h = head.entry(r).or_default();
                h.0 += 1;
                h.1 += usize::from(xf.bold);
                h.2.push(xf.fill);
            }
        }
        _ => {}
    })?;
    let mut number_formats: Vec<NumberFormatRange> = Vec::new();
    let mut cols: Vec<_> = runs.into_iter().collect();
    cols.sort_by_key(|(c, _)| *c);
    for (c, col) in cols {
        for (from, to, format) in col {
            number_formats.push(NumberFormatRange {
                range: if from == to {
                    a1(from, c)
                } else {
                    format!("{}:{}", a1(from, c), a1(to, c))
                },
                format,
            });
        }
    }
    // Header rows: among the first three read (a title may stand above), the first run of
    // rows whose every cell is bold, or filled alike.
    let mut header: Option<HeaderStyle> = None;
    for r in r0..r0.saturating_add(3) {
        let styled = head.get(&r).and_then(|(cells, bold, fills)| {
            let all_bold = *cells > 0 && bold == cells;
            let fill = fills
                .first()
                .cloned()
                .flatten()
                .filter(|f| fills.iter().all(|g| g.as_ref() == Some(f)));
            (all_bold || fill.is_some()).then_some((all_bold, fill))
        });
        match (styled, header.as_mut()) {
            (Some((bold, fill)), None) => {
                header = Some(HeaderStyle {
                    row: r as u64 + 1,
                    rows: 1,
                    bold,
                    fill,
                })
            }
            (Some((bold, fill)), Some(h)) => {
                h.rows += 1;
                h.bold &= bold;
                if h.fill != fill {
                    h.fill = None;
                }
            }
            (None, Some(_)) => break,
            (None, None) => {}
        }
    }
    let cap = (budget as usize).min(MAX_ENTRIES);
    let truncated = merged.len() > cap || number_formats.len() > cap;
    merged.truncate(cap);
    number_formats.truncate(cap);
    hidden_rows.truncate(cap);
    hidden_cols.truncate(cap);
    Ok(SheetStyles {
        merged,
        hidden_rows,
        hidden_cols,
        number_formats,
        header,
        truncated: truncated.then_some(true),
    })
}

/// Cell formats whose text no one sees (issue #21), by style index: a white font (`FFFFFF`
/// or the theme's background colour, `theme="0"`) on no fill (`white_text`), or a font under
/// 1.5 pt (`tiny_text`). Empty for almost every workbook, and then no sheet is looked at
/// again.
pub(super) fn unseen_formats(
    pkg: &mut Package,
) -> Result<HashMap<usize, crate::findings::FindingKind>, ApiError> {
    let Some(xml) = pkg.read("xl/styles.xml")? else {
        return Ok(HashMap::new());
    };
    let depth = pkg.limits().max_xml_depth;
    let theme = match pkg.read("xl/theme/theme1.xml")? {
        Some(t) => theme_colors(&t, depth)?,
        None => Vec::new(),
    };
    // Per font: (white, tiny); per fill: whether it paints a colour.
    let mut fonts: Vec<(bool, bool)> = Vec::new();
    let mut fills: Vec<bool> = Vec::new();
    let mut xfs: Vec<(usize, usize)> = Vec::new();
    let mut section = "";
    walk(&xml, depth, |n| match n {
        Node::Open(tag @ ("fonts" | "fills" | "cellXfs" | "cellStyleXfs" | "dxfs"), _) => {
            section = match tag {
                "fonts" => "fonts",
                "fills" => "fills",
                "cellXfs" => "cellXfs",
                _ => "other",
            }
        }
        Node::Close("fonts" | "fills" | "cellXfs" | "cellStyleXfs" | "dxfs") => section = "",
        Node::Open("font", _) if section == "fonts" => fonts.push((false, false)),
        Node::Open("color", a) if section == "fonts" => {
            if let Some(f) = fonts.last_mut() {
                f.0 = color_is_white(a, &theme);
            }
        }
        Node::Open("sz", a) if section == "fonts" => {
            if let Some(f) = fonts.last_mut() {
                f.1 = attr(a, "val")
                    .and_then(|v| v.parse::<f32>().ok())
                    .is_some_and(|pt| pt < 1.5);
            }
        }
        Node::Open("fill", _) if section == "fills" => fills.push(false),
        Node::Open("patternFill", a) if section == "fills" => {
            if let Some(f) = fills.last_mut() {
                *f = attr(a, "patternType").is_some_and(|t| t != "none");
            }
        }
        Node::Open("gradientFill", _) if section == "fills" => {
            if let Some(f) = fills.last_mut() {
                *f = true;
            }
        }
        Node::Open("xf", a) if section == "cellXfs" => {
            let num = |k: &str| attr(a, k).and_then(|v| v.parse().ok()).unwrap_or(0);
            xfs.push((num("fontId"), num("fillId")));
        }
        _ => {}
    })?;
    Ok(unseen_styles(&xfs, &fonts, &fills))
}

/// The cell styles (by index: each one's font and fill) whose text no one sees: a font under
/// 1.5 pt (`tiny_text`), or a white one on a fill that paints nothing (`white_text`). Each
/// font is (white, tiny); each fill whether it paints. Shared by xlsx and xlsb.
pub(super) fn unseen_styles(
    xfs: &[(usize, usize)],
    fonts: &[(bool, bool)],
    fills: &[bool],
) -> HashMap<usize, crate::findings::FindingKind> {
    xfs.iter()
        .enumerate()
        .filter_map(|(i, &(font, fill))| {
            let (white, tiny) = fonts.get(font).copied().unwrap_or_default();
            if tiny {
                Some((i, crate::findings::FindingKind::TinyText))
            } else if white && !fills.get(fill).copied().unwrap_or(false) {
                Some((i, crate::findings::FindingKind::WhiteText))
            } else {
                None
            }
        })
        .collect()
}

/// The theme's colours in the order SpreadsheetML's `theme="N"` counts them: `lt1`, `dk1`,
/// `lt2`, `dk2` (the first two pairs swapped from their order in the theme part), then the
/// accents and the hyperlink colours; each as RGB.
pub(super) fn theme_colors(xml: &[u8], depth: usize) -> Result<Vec<[u8; 3]>, ApiError> {
    let names = [
        "dk1", "lt1", "dk2", "lt2", "accent1", "accent2", "accent3", "accent4", "accent5",
        "accent6", "hlink", "folHlink",
    ];
    let mut found: HashMap<&str, [u8; 3]> = HashMap::new();
    let mut current: Option<&str> = None;
    walk(xml, depth, |n| match n {
        Node::Open(tag, _) if names.contains(&tag) => {
            current = names.iter().copied().find(|t| *t == tag)
        }
        Node::Open("srgbClr", a) => {
            if let (Some(c), Some(rgb)) = (current, attr(a, "val").and_then(hex_rgb)) {
                found.entry(c).or_insert(rgb);
            }
        }
        Node::Open("sysClr", a) => {
            if let (Some(c), Some(rgb)) = (current, attr(a, "lastClr").and_then(hex_rgb)) {
                found.entry(c).or_insert(rgb);
            }
        }
        Node::Close(tag) if current == Some(tag) => current = None,
        _ => {}
    })?;
    let order = [
        "lt1", "dk1", "lt2", "dk2", "accent1", "accent2", "accent3", "accent4", "accent5",
        "accent6", "hlink", "folHlink",
    ];
    Ok(order
        .iter()
        .map(|n| found.get(n).copied().unwrap_or([0, 0, 0]))
        .collect())
}

/// `RRGGBB` or `AARRGGBB` (the alpha is ignored: Excel draws fonts opaque whatever it says).
fn hex_rgb(v: &str) -> Option<[u8; 3]> {
    let v = v.trim().trim_start_matches('#');
    let v = match v.len() {
        8 => &v[2..],
        6 => v,
        _ => return None,
    };
    let n = u32::from_str_radix(v, 16).ok()?;
    Some([(n >> 16) as u8, (n >> 8) as u8, n as u8])
}

/// Whether a font's `<color>` draws white (on a sheet whose background is white): `rgb` in
/// any alpha, the legacy palette's whites (`indexed` 1 and 9), or a theme colour that is
/// white once its `tint` is applied (a tint lightens towards white, a negative one darkens).
fn color_is_white(a: &[(String, String)], theme: &[[u8; 3]]) -> bool {
    let base = if let Some(rgb) = attr(a, "rgb") {
        hex_rgb(rgb)
    } else if let Some(i) = attr(a, "indexed") {
        match i.trim() {
            "1" | "9" => Some([255, 255, 255]),
            _ => None,
        }
    } else if let Some(t) = attr(a, "theme").and_then(|t| t.trim().parse::<usize>().ok()) {
        // No theme part: Office's default theme, whose `lt1` (0) is white.
        theme
            .get(t)
            .copied()
            .or((t == 0).then_some([255, 255, 255]))
    } else {
        None
    };
    let Some(rgb) = base else { return false };
    let tint = attr(a, "tint")
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0);
    is_white(rgb, tint)
}

/// Whether a colour is white once its tint is applied (a tint lightens towards white, a
/// negative one darkens).
pub(super) fn is_white(rgb: [u8; 3], tint: f64) -> bool {
    rgb.iter().all(|&c| {
        let c = c as f64;
        let tinted = if tint >= 0.0 {
            c + (255.0 - c) * tint
        } else {
            c * (1.0 + tint)
        };
        tinted >= 250.0
    })
}

/// The cells of a worksheet part in one of `unseen` formats, with a value: (row, column,
/// kind), 0-based, at most 10,000.
pub(super) fn unseen_cells(
    pkg: &mut Package,
    part: &str,
    unseen: &HashMap<usize, crate::findings::FindingKind>,
) -> Result<Vec<(u32, u32, crate::findings::FindingKind)>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let Some(xml) = pkg.read(part)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut cur: Option<(u32, u32, crate::findings::FindingKind, bool)> = None;
    walk(&xml, depth, |n| match n {
        Node::Open("c", a) => {
            cur = attr(a, "s")
                .and_then(|v| v.parse::<usize>().ok())
                .and_then(|s| unseen.get(&s).copied())
                .and_then(|kind| {
                    let (r, c) = attr(a, "r").and_then(super::cells::parse_cell)?;
                    Some((r, c, kind, false))
                });
        }
        Node::Open("v" | "is", _) => {
            if let Some(c) = cur.as_mut() {
                c.3 = true;
            }
        }
        Node::Close("c") => {
            if let Some((r, c, kind, true)) = cur.take() {
                if out.len() < 10_000 {
                    out.push((r, c, kind));
                }
            }
        }
        _ => {}
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn white_fonts_in_every_spelling() {
        // Issue #41 item 6: ARGB with any alpha, the palette's whites, theme colours
        // through the theme part and their tint.
        let theme = vec![
            [255, 255, 255],
            [0, 0, 0],
            [0xE7, 0xE6, 0xE6],
            [0x44, 0x54, 0x6A],
        ];
        for white in [
            &[("rgb", "FFFFFFFF")][..],
            &[("rgb", "00FFFFFF")],
            &[("rgb", "FFFFFF")],
            &[("indexed", "9")],
            &[("theme", "0")],
            &[("theme", "2"), ("tint", "0.9")],
        ] {
            assert!(color_is_white(&attrs(white), &theme), "{white:?}");
        }
        for seen in [
            &[("rgb", "FF000000")][..],
            &[("theme", "1")],
            &[("theme", "2")],
            &[("theme", "0"), ("tint", "-0.15")],
            &[("indexed", "8")],
        ] {
            assert!(!color_is_white(&attrs(seen), &theme), "{seen:?}");
        }
    }

    #[test]
    fn theme_colours_come_in_spreadsheet_order() {
        let xml = br#"<a:theme xmlns:a="x"><a:themeElements><a:clrScheme name="Office">
<a:dk1><a:sysClr val="windowText" lastClr="000000"/></a:dk1>
<a:lt1><a:sysClr val="window" lastClr="FFFFFF"/></a:lt1>
<a:dk2><a:srgbClr val="44546A"/></a:dk2><a:lt2><a:srgbClr val="E7E6E6"/></a:lt2>
<a:accent1><a:srgbClr val="4472C4"/></a:accent1></a:clrScheme></a:themeElements></a:theme>"#;
        let t = theme_colors(xml, 64).unwrap();
        assert_eq!(t[0], [255, 255, 255]);
        assert_eq!(t[1], [0, 0, 0]);
        assert_eq!(t[2], [0xE7, 0xE6, 0xE6]);
        assert_eq!(t[4], [0x44, 0x72, 0xC4]);
    }
}
