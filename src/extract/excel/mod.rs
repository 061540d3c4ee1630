//! Spreadsheets (xlsx, xlsm, xls, ods) through calamine: a `## Sheets` list first (the
//! end of the output is what gets cut), then each sheet's cells within a cell budget;
//! sheets the budget never reached are `not_read`, the partly read one names its last cell.
//!
//! A read opens the workbook within the caps (`workbook`), streams each worksheet into a
//! rendered `Sheet` (`sheet`, with cell text from `cells`), shows rows while the budgets
//! last, and writes the sheet list and `next` from what was shown.

mod biff;
mod cells;
mod comments;
mod hidden;
mod links;
mod numfmt;
mod ods;
mod print;
mod sheet;
mod styles;
mod workbook;
mod xlsb;
mod xml2003;

pub use cells::{col_name, fmt_num, parse_range};

use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, Extraction, Next};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Span, Unit, UnitKind};
use crate::options::{HiddenText, Options};
use crate::report::{Report, SheetInfo};
use sheet::{Keep, Sheet};
use workbook::Workbook;

pub struct ExcelExtractor;

impl Extractor for ExcelExtractor {
    /// calamine indexes records by the lengths they claim, and panics on some damaged
    /// files (a formula's `cce` past its record, fuzzing found): such a file is corrupt,
    /// said as such, not a crashed extractor.
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            extract_workbook(input, req, limits)
        }))
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(ApiError::new(
                ErrorCode::Corrupt,
                "the spreadsheet is damaged: a record points past its own end",
            )
            .with_cause(format!("the spreadsheet reader panicked: {what}")))
        })
    }
}

fn extract_workbook(input: &Input, req: &Options, limits: &Limits) -> Result<Extraction, ApiError> {
    let max_chars = req.max_chars;
    let budget = req.max_cells;
    let window = req.range.as_deref().map(parse_range).transpose()?;
    let (mut wb, hidden_lines, numbers) = Workbook::open(input, limits)?;
    let meta = wb.sheets();
    if req.sheets_after == Some(true) && req.sheet.is_none() {
        return Err(ApiError::invalid_option("sheets_after needs sheet")
            .with_hint("Give the sheet to start from in `sheet` (what `next` says), or leave sheets_after out for the whole workbook."));
    }
    let scope = Scope {
        onward: req.sheets_after == Some(true),
        chosen: choose_sheet(&meta, req.sheet.as_deref(), window.is_some())?,
        window,
        cells: budget,
        max_chars,
        profile: req.profile == Some(true),
        markdown: req.markdown(),
        json: req.json(),
        hidden_text: req.hidden_text.unwrap_or(HiddenText::Keep),
    };
    // Cell comments (xlsx): shown after each sheet's rows, for the rows shown. And charts:
    // a worksheet's after its last row, a chart sheet's as its content.
    // The package is opened once for what calamine does not read.
    let xlsb = input.format == crate::detect::Format::Xlsb;
    let mut pkg = match input.format {
        crate::detect::Format::Xlsx { .. } | crate::detect::Format::Xlsb => {
            Some(super::package::Package::open(&input.path, limits.package)?)
        }
        _ => None,
    };
    let (parts, mut notes, drawn) = match pkg.as_mut() {
        Some(pkg) => {
            let parts = match wb.xlsb_parts() {
                Some(parts) => parts,
                None => comments::sheet_parts(pkg)?,
            };
            let notes = comments::read(pkg, &parts)?;
            let drawn = comments::charts(pkg, &parts)?;
            (parts, notes, drawn)
        }
        // Excel 2003 XML is one part: each sheet's name stands for its part.
        None if input.format == crate::detect::Format::SpreadsheetMl => (
            meta.iter().map(|(n, _)| (n.clone(), n.clone())).collect(),
            Default::default(),
            Default::default(),
        ),
        None => Default::default(),
    };
    let comments::Drawn {
        mut charts,
        described,
        links: mut shape_links,
    } = drawn;
    // An OpenDocument spreadsheet's charts and shapes, and its print headers and footers on request
    // (after its charts and shapes, of the sheets in scope): calamine reads its cells only.
    let mut shown = std::collections::HashMap::new();
    if input.format == crate::detect::Format::Ods {
        let mut ods_pkg = super::package::Package::open(&input.path, limits.package)?;
        let ods::Extras {
            charts: drawn,
            shapes,
            mut printed,
            shown: ods_shown,
        } = ods::extras(&mut ods_pkg, req.include_headers_footers == Some(true))?;
        shown = ods_shown
            .into_iter()
            .map(|(name, cells)| (name, std::sync::Arc::new(cells)))
            .collect();
        // Its charts first, then its shapes (as an xlsx's drawing reads).
        for (name, texts) in drawn {
            charts.entry(name).or_default().extend(texts);
        }
        for (name, text) in shapes {
            charts.entry(name).or_default().push(text);
        }
        for (i, (name, _)) in meta.iter().enumerate() {
            if let Some(text) = printed.remove(name).filter(|_| scope.includes(i)) {
                charts.entry(name.clone()).or_default().push(text);
            }
        }
    }
    // Excel 2003 XML's comments, read with its cells.
    notes.extend(wb.notes());
    // Hidden rows and columns by sheet name.
    let hidden = parts
        .iter()
        .filter_map(|(name, part)| hidden_lines.get(part).map(|h| (name.clone(), h.clone())))
        .collect();
    // White or tiny text: the cells in such formats, of the sheets in scope (only when the
    // workbook has such a format at all).
    let mut unseen = std::collections::HashMap::new();
    if let Some(pkg) = pkg.as_mut() {
        let formats = if xlsb {
            xlsb::unseen_formats(pkg)?
        } else {
            styles::unseen_formats(pkg)?
        };
        if !formats.is_empty() {
            for (i, (name, _)) in meta.iter().enumerate() {
                if !scope.includes(i) {
                    continue;
                }
                if let Some((_, part)) = parts.iter().find(|(n, _)| n == name) {
                    let cells = if xlsb {
                        xlsb::unseen_cells(pkg, part, &formats)?
                    } else {
                        styles::unseen_cells(pkg, part, &formats)?
                    };
                    unseen.insert(name.clone(), cells);
                }
            }
        }
    }
    // Where each sheet's hyperlinks lead (xlsx, xlsb), after its charts and shapes, of the
    // sheets in scope (inside `range` for the sheet it applies to).
    if let Some(pkg) = pkg.as_mut() {
        for (i, (name, _)) in meta.iter().enumerate() {
            if !scope.includes(i) {
                continue;
            }
            if let Some((_, part)) = parts.iter().find(|(n, _)| n == name) {
                let window = if scope.windowed(i) {
                    scope.window
                } else {
                    None
                };
                // `hidden_text: "drop"`: no link of a cell that hides (in a hidden row or
                // column, or white or tiny).
                let drop = scope.hidden_text == HiddenText::Drop;
                let lines = hidden_lines.get(part).filter(|_| drop);
                let faint = unseen.get(name).filter(|_| drop);
                let mut text = links::read(pkg, part, window, |r, c| {
                    lines.is_none_or(|h| {
                        !h.rows.contains(&(r + 1))
                            && !h.cols.iter().any(|&(a, b)| (a..=b).contains(&(c + 1)))
                    }) && faint.is_none_or(|u| !u.iter().any(|&(ur, uc, _)| (ur, uc) == (r, c)))
                })?;
                // Its shapes' links after its cells' (by the shape's name); a `range`
                // keeps only its cells'.
                if let Some(lines) = shape_links.remove(name).filter(|_| window.is_none()) {
                    if text.is_empty() {
                        text = format!("{}\n", links::LINKS_HEAD);
                    }
                    for l in lines {
                        text.push_str(&l);
                        text.push('\n');
                    }
                }
                if !text.is_empty() {
                    charts.entry(name.clone()).or_default().push(text);
                }
            }
        }
    }
    // `include_headers_footers`: each sheet's print headers and footers, after its charts,
    // shapes and links, of the sheets in scope.
    if let (Some(true), Some(pkg)) = (req.include_headers_footers, pkg.as_mut()) {
        for (i, (name, _)) in meta.iter().enumerate() {
            if !scope.includes(i) {
                continue;
            }
            if let Some((_, part)) = parts.iter().find(|(n, _)| n == name) {
                let text = if xlsb {
                    xlsb::headers_footers(pkg, part, name)?
                } else {
                    print::read(pkg, part, name)?
                };
                if !text.is_empty() {
                    charts.entry(name.clone()).or_default().push(text);
                }
            }
        }
    }
    // Numbers in formats of their own (`1,599.99`, `2.50%`): .xls from its BIFF records
    // (with its charts, read in the same pass), xlsx from the cells' styles (found while the
    // package check inflated the sheets).
    let formats: biff::Formats = match input.format {
        crate::detect::Format::Xls => {
            let legacy = biff::read(&input.path);
            // A chart's series by reference (LibreOffice caches none of them) read from
            // the cells, each sheet's cells fetched once.
            let mut ranges: std::collections::HashMap<
                String,
                Option<calamine::Range<calamine::Data>>,
            > = std::collections::HashMap::new();
            let mut budget = biff::MAX_POINTS;
            for (name, pending) in legacy.charts {
                for p in pending {
                    let text = p.text(&mut budget, |sheet, row, col| {
                        let range = ranges
                            .entry(sheet.to_string())
                            .or_insert_with(|| wb.range(sheet))
                            .as_ref()?;
                        let d = range.get_value((row, col))?;
                        let mut out = String::new();
                        cells::push_data(&mut out, d);
                        (!out.is_empty()).then_some(out)
                    });
                    charts.entry(name.clone()).or_default().push(text);
                }
            }
            // Cell comments, and the text of text boxes after the sheet's charts (as an
            // xlsx's drawing reads).
            notes.extend(legacy.notes);
            for (name, lines) in legacy.shapes {
                let mut t = String::from(comments::SHAPES_HEAD);
                for l in lines {
                    t.push_str(&l);
                    t.push('\n');
                }
                charts.entry(name).or_default().push(t);
            }
            // `include_headers_footers`: the print header and footer, after the shapes.
            if req.include_headers_footers == Some(true) {
                let mut printed = legacy.printed;
                for (i, (name, _)) in meta.iter().enumerate() {
                    let Some(codes) = printed.remove(name).filter(|_| scope.includes(i)) else {
                        continue;
                    };
                    let text = print::blocks(codes, name);
                    if !text.is_empty() {
                        charts.entry(name.clone()).or_default().push(text);
                    }
                }
            }
            legacy.formats
        }
        crate::detect::Format::SpreadsheetMl => wb.sheet_formats(),
        _ => parts
            .iter()
            .filter_map(|(name, part)| numbers.get(part).map(|n| (name.clone(), n.clone())))
            .collect(),
    };
    let extras = Extras {
        notes,
        charts,
        chart_sheets: wb.chart_sheets(),
        hidden,
        unseen,
        described,
        formats,
        shown,
    };
    let mut read = read_sheets(&mut wb, &meta, &scope, &extras)?;
    // `include_styles`: each sheet shown, for the rows and columns shown.
    let mut sheet_styles = Vec::new();
    if let (Some(true), Some(pkg)) = (req.include_styles, pkg.as_mut()) {
        let formats = styles::Formats::read(pkg)?;
        for &(i, rows) in &read.plan {
            let s = &read.sheets[i];
            let Some((_, part)) = parts.iter().find(|(n, _)| *n == s.name) else {
                continue;
            };
            let bounds = (
                s.origin,
                (
                    s.origin.0.saturating_add(rows.max(1) - 1),
                    s.origin.1.saturating_add(s.cols.max(1) - 1),
                ),
            );
            if rows > 0 && !s.chart {
                let st = styles::sheet(pkg, part, &formats, bounds, scope.cells)?;
                sheet_styles.push((i, st));
            }
        }
    }
    let lines_found = std::mem::take(&mut read.findings);
    let mut ex = make_report(read, &scope);
    ex.findings.extend(lines_found);
    if let Some(infos) = ex.report.sheets.as_mut() {
        for (i, st) in sheet_styles {
            if let Some(info) = infos.get_mut(i) {
                info.styles = Some(st);
            }
        }
    }
    Ok(ex)
}

/// Findings of `kind` for text on a sheet (see `findings::hidden`), placed by the sheet.
fn on_sheet(
    sheet: &str,
    kind: crate::findings::FindingKind,
    how: &str,
    text: &str,
    line: u64,
    left_out: bool,
) -> impl Iterator<Item = crate::findings::Finding> {
    let sheet = sheet.to_string();
    crate::findings::hidden(
        kind,
        Some(how),
        crate::findings::Severity::Low,
        text,
        line,
        left_out,
    )
    .into_iter()
    .map(move |mut f| {
        f.place.sheet = Some(sheet.clone());
        f
    })
}

/// What a sheet hides from a person (xlsx, issue #21) — hidden rows and columns, cells in
/// a white font on no fill or under 1.5 pt — for the read to keep, mark or drop as the
/// cells stream in; `None` when it hides nothing (or is a hidden sheet: the sheet is the
/// finding, and what is marked or dropped).
fn unseen_of(
    name: &str,
    hidden_sheet: bool,
    extras: &Extras,
    mode: HiddenText,
) -> Option<sheet::Unseen> {
    if hidden_sheet {
        return None;
    }
    let lines = extras.hidden.get(name);
    let u = sheet::Unseen {
        rows: lines
            .map(|h| h.rows.iter().map(|r| r - 1).collect())
            .unwrap_or_default(),
        cols: lines
            .map(|h| h.cols.iter().map(|&(lo, hi)| (lo - 1, hi - 1)).collect())
            .unwrap_or_default(),
        cells: extras
            .unseen
            .get(name)
            .map(|v| v.iter().map(|&(r, c, kind)| ((r, c), kind)).collect())
            .unwrap_or_default(),
        mode,
        met: Vec::new(),
    };
    (!u.is_empty()).then_some(u)
}

/// The findings of what a sheet hid in the rows a read showed (its first `shown`): one a
/// hidden row (placed by its line among the sheet's rows shown), one a hidden column range
/// (`how`: `column E hidden`, `line` 0), one a cell in a white or tiny font (its line) —
/// each with the text the workbook holds there, whatever `hidden_text` made of it.
fn unseen_findings(s: &Sheet, shown: u32, left_out: bool) -> Vec<crate::findings::Finding> {
    let mut out = Vec::new();
    let Some(u) = s.unseen.as_ref() else {
        return out;
    };
    let (r0, c0) = s.origin;
    let met: Vec<&sheet::UnseenCell> = u
        .met
        .iter()
        .filter(|m| m.row.checked_sub(r0).is_some_and(|k| k < shown))
        .collect();
    let mut push = |kind: crate::findings::FindingKind, how: String, text: &str, line: u64| {
        out.extend(on_sheet(&s.name, kind, &how, text, line, left_out));
    };
    // Rows, in order: their cells are consecutive.
    let mut i = 0;
    while i < met.len() {
        let row = met[i].row;
        let mut j = i;
        let mut text: Vec<&str> = Vec::new();
        while j < met.len() && met[j].row == row {
            if met[j].in_row {
                text.push(&met[j].text);
            }
            j += 1;
        }
        if !text.is_empty() {
            let line = (row - r0) as u64 + 1;
            push(
                crate::findings::FindingKind::HiddenRow,
                format!("row {} hidden", row + 1),
                &text.join(" "),
                line,
            );
        }
        i = j;
    }
    for (k, &(lo, hi)) in u.cols.iter().enumerate() {
        let text: Vec<&str> = met
            .iter()
            .filter(|m| m.in_cols == Some(k))
            .map(|m| m.text.as_str())
            .collect();
        if text.is_empty() {
            continue;
        }
        let (from, to) = (lo.max(c0), hi.min(c0 + s.cols.max(1) - 1));
        let name = if from == to {
            col_name(from)
        } else {
            format!("{}:{}", col_name(from), col_name(to))
        };
        push(
            crate::findings::FindingKind::HiddenColumn,
            format!("column {name} hidden"),
            &text.join(" "),
            0,
        );
    }
    for m in &met {
        let Some(kind) = m.font else { continue };
        let how = match kind {
            crate::findings::FindingKind::TinyText => {
                format!("cell {}{}: font under 1.5 pt", col_name(m.col), m.row + 1)
            }
            _ => format!(
                "cell {}{}: white font on no fill",
                col_name(m.col),
                m.row + 1
            ),
        };
        push(kind, how, &m.text, (m.row - r0) as u64 + 1);
    }
    out
}

/// What an xlsx holds besides cells: comments and charts by sheet, and which sheets are
/// chart sheets.
struct Extras {
    notes: std::collections::HashMap<String, Vec<comments::Note>>,
    charts: std::collections::HashMap<String, Vec<String>>,
    chart_sheets: std::collections::HashSet<String>,
    /// Hidden rows and columns (xlsx) by sheet.
    hidden: std::collections::HashMap<String, hidden::HiddenLines>,
    /// Cells in a white font on no fill, or in a font under 1.5 pt (xlsx), by sheet.
    unseen: std::collections::HashMap<String, Vec<(u32, u32, crate::findings::FindingKind)>>,
    /// The descriptions (alt text) of the pictures and shapes drawn on each sheet (xlsx).
    described: std::collections::HashMap<String, Vec<String>>,
    /// The number formats of formatted number cells (.xls), by sheet.
    formats: biff::Formats,
    /// Number cells as the spreadsheet wrote them where that is not their value (ods), by
    /// sheet.
    shown: std::collections::HashMap<String, std::sync::Arc<ods::Shown>>,
}

/// Data cells of chart text (the header and the rows' fields), for the cell budget.
fn chart_cells(text: &str) -> u64 {
    text.lines()
        .filter(|l| {
            !l.starts_with("[Chart")
                && ![
                    comments::SHAPES_HEAD.trim_end(),
                    links::LINKS_HEAD,
                    print::HEADERS_HEAD,
                    print::FOOTERS_HEAD,
                ]
                .contains(l)
        })
        .map(|l| l.split('\t').count() as u64)
        .sum()
}

/// What a read covers: one sheet or all of them, a window of cells, and the budgets.
struct Scope {
    /// `sheets_after`: the chosen sheet and every sheet after it.
    onward: bool,
    /// `output: "markdown"`: each sheet's rows a GFM pipe table.
    markdown: bool,
    /// `output: "json"`: each sheet's rows as cells.
    json: bool,
    /// The sheet `sheet` named (its index in workbook order); `None`: every sheet.
    chosen: Option<usize>,
    /// `range`, inclusive and 0-based; applies to the chosen sheet.
    window: Option<((u32, u32), (u32, u32))>,
    /// `max_cells`.
    cells: u64,
    max_chars: usize,
    /// `profile`: each sheet in scope is profiled as it streams.
    profile: bool,
    /// `hidden_text`: a hidden sheet is read as any other (`keep`), with `⟦hidden⟧` in its
    /// heading (`mark`), or left out (`drop`).
    hidden_text: HiddenText,
}

impl Scope {
    fn includes(&self, sheet: usize) -> bool {
        self.chosen
            .is_none_or(|c| c == sheet || (self.onward && sheet > c))
    }

    /// Whether sheet `i`, hidden or not, is left out by `hidden_text: "drop"`.
    fn dropped(&self, sheet: usize, hidden: bool) -> bool {
        hidden && self.hidden_text == HiddenText::Drop && self.includes(sheet)
    }

    /// Whether `range` applies to this sheet: the chosen one (the only one, without `sheet`).
    fn windowed(&self, sheet: usize) -> bool {
        self.includes(sheet) && self.chosen.is_none_or(|c| c == sheet)
    }

    /// Whether a read on from sheet `i` still has sheets in scope after it (then `next`
    /// says `sheets_after`, so that following it reads them too).
    fn more_after(&self, i: usize, sheets: usize) -> bool {
        (self.chosen.is_none() || self.onward) && i + 1 < sheets
    }
}

/// The index of the sheet named `sheet`, or `None` for the whole workbook. A `range`
/// needs a sheet unless the workbook has only one.
fn choose_sheet(
    meta: &[(String, bool)],
    sheet: Option<&str>,
    ranged: bool,
) -> Result<Option<usize>, ApiError> {
    let listed = || {
        meta.iter()
            .map(|(n, _)| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Option<usize> = match sheet {
        Some(s) => Some(meta.iter().position(|(n, _)| n == s).ok_or_else(|| {
            ApiError::invalid_option(format!("no sheet named {s:?}"))
                .with_hint(format!("The sheets are: {}.", listed()))
        })?),
        None => None,
    };
    if ranged && chosen.is_none() && meta.len() > 1 {
        return Err(ApiError::invalid_option(format!(
            "range needs sheet: the workbook has {} sheets",
            meta.len()
        ))
        .with_hint(format!("Add `sheet`, one of: {}.", listed())));
    }
    Ok(chosen)
}

/// The workbook as read: every worksheet (its size; its kept lines are spent), the rows
/// shown of each sheet that was shown, and the body text.
struct SheetsRead {
    sheets: Vec<Sheet>,
    /// Hidden rows and columns holding text in what was shown.
    findings: Vec<crate::findings::Finding>,
    /// (sheet, rows shown), in workbook order.
    plan: Vec<(usize, u32)>,
    /// The shown sheets' headings and rows.
    body: String,
    /// Where each sheet shown stands in `body`.
    units: Vec<Span>,
    /// `output: "json"`: each sheet shown as blocks (its rows shown a table, its comments
    /// shown, its charts).
    typed: Vec<crate::model::UnitBlocks>,
    /// char_count: the whole selection, as if both budgets were unlimited.
    all_chars: u64,
    /// Which budget stopped the read ("" when none did).
    stopped_by: &'static str,
    /// When `max_chars` stopped the read before any row was shown, the budget that shows
    /// the sheet list and the sheet (else `next` would ask for the same again forever).
    needed: Option<u64>,
    /// The same for `max_cells`: the cells of the first row (with its comments and charts).
    needed_cells: Option<u64>,
}

impl SheetsRead {
    /// How far sheet `i` was read (`full`, `partial`, `not_read`, `not_selected`,
    /// `hidden_left_out`) and, when
    /// partly, its last cell shown.
    fn status(&self, i: usize, scope: &Scope) -> (&'static str, Option<String>) {
        match self.plan.iter().find(|(p, _)| *p == i) {
            Some((_, rows)) if *rows >= self.sheets[i].rows => ("full", None),
            Some((_, rows)) => {
                let s = &self.sheets[i];
                let last = (*rows > 0)
                    .then(|| format!("{}{}", col_name(s.origin.1 + s.cols - 1), s.origin.0 + rows));
                ("partial", last)
            }
            None if scope.dropped(i, self.sheets[i].hidden) => ("hidden_left_out", None),
            None if scope.includes(i) => ("not_read", None),
            None => ("not_selected", None),
        }
    }
}

/// Each sheet is streamed in workbook order; the rows of a sheet in scope are shown until
/// the cell budget or the character budget runs out, and the sheet list (written first)
/// then states exactly what was read.
fn read_sheets(
    wb: &mut Workbook,
    meta: &[(String, bool)],
    scope: &Scope,
    extras: &Extras,
) -> Result<SheetsRead, ApiError> {
    let notes = &extras.notes;
    // Room for the sheet list, with the longest status every sheet could get.
    let reserve: usize = 12
        + meta
            .iter()
            .map(|(n, _)| n.chars().count() + 64)
            .sum::<usize>();
    let char_room = scope.max_chars.saturating_sub(reserve);

    let mut cells_left = scope.cells;
    let mut body_chars = 0usize;
    let mut read = SheetsRead {
        sheets: Vec::with_capacity(meta.len()),
        findings: Vec::new(),
        plan: Vec::new(),
        body: String::new(),
        units: Vec::new(),
        typed: Vec::new(),
        all_chars: 0,
        stopped_by: "",
        needed: None,
        needed_cells: None,
    };
    // Whether this read shows a row, or all of a sheet (an empty one): then `next` moves on.
    let mut moved = false;
    for (i, (name, hidden)) in meta.iter().enumerate() {
        let dropped = scope.dropped(i, *hidden);
        let reading = scope.includes(i) && read.stopped_by.is_empty() && !dropped;
        let keep = reading.then(|| Keep {
            cells: cells_left,
            chars: char_room.saturating_sub(body_chars),
        });
        let w = if scope.windowed(i) {
            scope.window
        } else {
            None
        };
        let mut s = Sheet::new(name.clone(), *hidden, w, keep);
        s.chart = extras.chart_sheets.contains(name);
        s.marked = *hidden && scope.hidden_text == HiddenText::Mark;
        s.markdown = scope.markdown;
        s.typed = scope.json.then(Vec::new);
        s.formats = extras.formats.get(name).cloned();
        s.shown = extras.shown.get(name).cloned();
        if scope.includes(i) {
            s.unseen = unseen_of(name, *hidden, extras, scope.hidden_text);
        }
        if scope.profile && scope.includes(i) && !s.chart {
            s.profiler = Some(super::profile::Profiler::new(true));
        }
        if !s.chart {
            wb.read(&mut s)?;
        }
        let heading = s.heading();
        // Markdown: the first row shown is the table's header, padded to the sheet's
        // columns and followed by the separator row; what follows the table (comments,
        // charts) starts a new block.
        let md_head = if scope.markdown && s.rows > 0 {
            s.line(0)
                .map(|l| s.table_head(l).1.chars().count())
                .unwrap_or(0)
        } else {
            0
        };
        // A blank line between the table and its charts (none without a table: the
        // heading ends in one).
        let after_table = usize::from(scope.markdown && s.rows > 0);
        // Its charts, shown with the end of what is read of it (its last row, or its
        // heading when it has no rows), so reading on with `next` shows them once. They
        // cost their data cells, but never more than the budget leaves beside a row: a
        // chart larger than `max_cells` would otherwise never be read.
        let charts: String = if scope.includes(i) {
            extras
                .charts
                .get(name)
                .map(|v| v.concat())
                .unwrap_or_default()
        } else {
            String::new()
        };
        let tail_chars = charts.chars().count() + if charts.is_empty() { 0 } else { after_table };
        let tail_cells = chart_cells(&charts).min(scope.cells.saturating_sub(s.cols as u64));
        let hn = heading.chars().count() + md_head;
        // The comments on cells of what this sheet shows (its rows and columns, or the
        // window), each a line and a cell of the budget.
        let (r0, c0) = s.origin;
        let sheet_notes: Vec<(u32, String)> = notes
            .get(name)
            .map(|v| {
                v.iter()
                    .filter(|n| {
                        (r0..r0.saturating_add(s.rows)).contains(&n.row)
                            && (c0..c0.saturating_add(s.cols)).contains(&n.col)
                    })
                    .map(|n| (n.row, n.line()))
                    .collect()
            })
            .unwrap_or_default();
        let notes_head = if scope.markdown {
            "\n[Comments]\n\n"
        } else {
            "[Comments]\n"
        };
        if scope.includes(i) && !dropped {
            read.all_chars += hn as u64 + s.line_chars + tail_chars as u64;
            if !sheet_notes.is_empty() {
                read.all_chars += notes_head.len() as u64
                    + sheet_notes
                        .iter()
                        .map(|(_, l)| l.chars().count() as u64)
                        .sum::<u64>();
            }
        }
        if reading {
            let (head_chars, head_cells) = if s.rows == 0 {
                (tail_chars, tail_cells)
            } else {
                (0, 0)
            };
            let cells_short = (cells_left == 0 && s.rows > 0) || cells_left < head_cells;
            if body_chars + hn + head_chars > char_room || cells_short {
                read.stopped_by = if cells_short {
                    "cell budget (max_cells)"
                } else {
                    "character budget (max_chars)"
                };
                if cells_short && !moved {
                    // Not even this sheet's first row (or its chart) fits `max_cells`.
                    read.needed_cells =
                        Some(head_cells.max(s.cols as u64 + sheet_notes.len() as u64 + tail_cells));
                }
            } else {
                let mut shown = 0u32;
                let mut shown_bytes = 0usize;
                let mut notes_shown = 0usize;
                while shown < s.rows {
                    // A line not kept is one the budgets cannot show (`Keep`). A row's
                    // comments are shown with it, or the row waits for `next`.
                    let row_notes = &sheet_notes[notes_shown..];
                    let k = row_notes
                        .iter()
                        .take_while(|(r, _)| *r == r0.saturating_add(shown))
                        .count();
                    let note_chars: usize = row_notes[..k]
                        .iter()
                        .map(|(_, l)| l.chars().count())
                        .sum::<usize>()
                        + if k > 0 && notes_shown == 0 {
                            notes_head.len()
                        } else {
                            0
                        };
                    let last = shown + 1 == s.rows;
                    let need_cells = s.cols as u64 + k as u64 + if last { tail_cells } else { 0 };
                    let n = s.line(shown as usize).map(|l| {
                        l.chars().count() + note_chars + if last { tail_chars } else { 0 }
                    });
                    let fits = n.is_some_and(|n| body_chars + hn + n <= char_room);
                    if cells_left < need_cells || !fits {
                        read.stopped_by = if cells_left < need_cells {
                            "cell budget (max_cells)"
                        } else {
                            "character budget (max_chars)"
                        };
                        if cells_left < need_cells && shown == 0 && !moved {
                            read.needed_cells = Some(need_cells);
                        }
                        break;
                    }
                    body_chars += n.unwrap_or(0);
                    cells_left -= need_cells;
                    shown_bytes = s.ends[shown as usize];
                    shown += 1;
                    notes_shown += k;
                }
                body_chars += hn + head_chars;
                cells_left -= head_cells;
                moved |= shown > 0 || shown == s.rows;
                read.plan.push((i, shown));
                read.findings.extend(unseen_findings(
                    &s,
                    shown,
                    scope.hidden_text == HiddenText::Drop,
                ));
                // Pictures' descriptions: never in the text; listed with the sheet.
                let seen = shown > 0 || s.rows == 0;
                for d in extras
                    .described
                    .get(name)
                    .into_iter()
                    .flatten()
                    .filter(|_| seen)
                {
                    read.findings.extend(on_sheet(
                        name,
                        crate::findings::FindingKind::AltText,
                        "picture or shape description (xdr:cNvPr descr), not in the text",
                        d,
                        0,
                        true,
                    ));
                }
                // The first sheet's lines become the body in place (no copy of a
                // text that can be most of max_chars).
                let mut text = std::mem::take(&mut s.text);
                text.truncate(shown_bytes);
                if md_head > 0 && shown > 0 {
                    let first = text.find('\n').map_or(text.len(), |i| i + 1);
                    let (head, _) = s.table_head(&text[..first]);
                    text.replace_range(..first, &head);
                }
                if notes_shown > 0 {
                    text.push_str(notes_head);
                    for (_, l) in &sheet_notes[..notes_shown] {
                        text.push_str(l);
                        // In the text, and listed: a person sees a comment only on request.
                        read.findings.extend(on_sheet(
                            name,
                            crate::findings::FindingKind::Comment,
                            "a cell comment, shown on request",
                            l,
                            0,
                            false,
                        ));
                    }
                }
                if shown == s.rows {
                    if after_table > 0 && !charts.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&charts);
                }
                let head = read.body.len();
                if read.body.is_empty() {
                    text.insert_str(0, &heading);
                    read.body = text;
                } else {
                    read.body.push_str(&heading);
                    read.body.push_str(&text);
                }
                if scope.json {
                    use crate::model::{Block, Content};
                    let mut blocks = Vec::new();
                    let mut rows = s.typed.take().unwrap_or_default();
                    rows.truncate(shown as usize);
                    while rows.last().is_some_and(|r| r.iter().all(|c| c.is_empty())) {
                        rows.pop();
                    }
                    if !rows.is_empty() {
                        blocks.push(Block::new(Content::Table {
                            rows,
                            header_rows: 0,
                            spans: Vec::new(),
                        }));
                    }
                    for (_, l) in &sheet_notes[..notes_shown] {
                        blocks.push(Block::in_part(
                            Content::Note {
                                text: l.trim().to_string(),
                                author: None,
                            },
                            Some("comments"),
                        ));
                    }
                    if shown == s.rows {
                        for c in extras.charts.get(name).into_iter().flatten() {
                            let text = c.trim().to_string();
                            let part = if text.starts_with("[Chart") {
                                None
                            } else if text.starts_with(comments::SHAPES_HEAD.trim_end()) {
                                Some("shapes")
                            } else if text.starts_with(links::LINKS_HEAD) {
                                Some("links")
                            } else {
                                Some("print_headers_footers")
                            };
                            blocks.push(match part {
                                None => Block::new(Content::Chart { text }),
                                p => Block::in_part(Content::Paragraph { text }, p),
                            });
                        }
                    }
                    read.typed.push(crate::model::UnitBlocks {
                        unit: Unit::named(UnitKind::Sheet, name.as_str()),
                        // A sheet `next` reads on in is not all here.
                        complete: shown == s.rows,
                        blocks,
                    });
                }
                read.units.push(Span {
                    unit: Unit::named(UnitKind::Sheet, name.as_str()),
                    head,
                    body: head + heading.len(),
                    end: read.body.len(),
                });
            }
        }
        if reading && !moved && read.stopped_by.starts_with("character") {
            let notes: u64 = sheet_notes
                .iter()
                .map(|(_, l)| l.chars().count() as u64)
                .sum::<u64>()
                + notes_head.len() as u64;
            read.needed = Some(
                (reserve as u64 + (hn + tail_chars) as u64 + s.line_chars + notes)
                    .min(crate::options::MAX_CHARS as u64),
            );
        }
        s.text = String::new();
        s.ends = Vec::new();
        read.sheets.push(s);
    }
    Ok(read)
}

/// The sheet list, then the body; `sheets` in the report; and, when a budget stopped the
/// read, the cut text with `next` at the partly read sheet or else the first sheet not read.
fn make_report(mut read: SheetsRead, scope: &Scope) -> Extraction {
    let mut profiles: Vec<_> = read
        .sheets
        .iter_mut()
        .map(|s| s.profiler.take().and_then(super::profile::Profiler::finish))
        .collect();
    let sheets = &read.sheets;
    let mut head = String::from("## Sheets\n");
    let mut infos = Vec::new();
    for (i, s) in sheets.iter().enumerate() {
        let (st, last) = read.status(i, scope);
        let size = if s.chart {
            "chart".to_string()
        } else {
            format!("{} rows × {} cols", s.rows, s.cols)
        };
        head.push_str(&format!(
            "- {} ({size}){}: {}\n",
            s.name,
            if s.hidden { ", hidden" } else { "" },
            st.replace('_', " ")
        ));
        infos.push(SheetInfo {
            name: s.name.clone(),
            rows: s.rows as u64,
            cols: s.cols as u64,
            read: st.to_string(),
            hidden: s.hidden,
            last_cell: last,
            kind: s.chart.then(|| "chart".to_string()),
            profile: profiles[i].take(),
            styles: None,
        });
    }

    // Hidden sheets holding cells a read showed (or left out): a person opening the
    // workbook does not see them (issue #21).
    let findings = sheets
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            s.hidden
                && s.rows > 0
                && (scope.dropped(*i, true)
                    || read.plan.iter().any(|(p, shown)| p == i && *shown > 0))
        })
        .map(|(_, s)| {
            let mut f = crate::findings::finding(
                crate::findings::FindingKind::HiddenSheet,
                crate::findings::Severity::Low,
                0,
                format!("{} ({} rows × {} cols)", s.name, s.rows, s.cols),
                s.line_chars,
            );
            f.place.sheet = Some(s.name.clone());
            f
        })
        .collect();
    let mut ex = Extraction {
        report: Report {
            sheets: Some(infos),
            ..Default::default()
        },
        findings,
        document: scope.json.then(|| crate::model::Document {
            units: std::mem::take(&mut read.typed),
        }),
        ..Default::default()
    };
    // Only the sheets' marker lines: no charts, shapes or headers to show either.
    let nothing_drawn = || {
        read.body
            .lines()
            .all(|l| l.is_empty() || l.starts_with("--- Sheet: "))
    };
    if sheets.iter().all(|s| s.rows == 0) && nothing_drawn() {
        // No cell holds anything: empty text, said plainly (the sheets are still listed).
        ex.report.note = Some("the workbook has no cell values".into());
        return ex;
    }
    // Where reading on starts: the partly read sheet, else the first sheet not read.
    let next = (0..sheets.len()).find_map(|i| match read.status(i, scope).0 {
        "partial" => {
            let s = &sheets[i];
            let rows = read
                .plan
                .iter()
                .find(|(p, _)| *p == i)
                .map(|p| p.1)
                .unwrap_or(0);
            let r0 = s.origin.0 + rows;
            Some(Next {
                sheet: Some(s.name.clone()),
                sheets_after: scope.more_after(i, sheets.len()).then_some(true),
                range: Some(format!(
                    "{}{}:{}{}",
                    col_name(s.origin.1),
                    r0 + 1,
                    col_name(s.origin.1 + s.cols - 1),
                    s.origin.0 + s.rows
                )),
                ..Default::default()
            })
        }
        "not_read" => Some(Next {
            sheet: Some(sheets[i].name.clone()),
            sheets_after: scope.more_after(i, sheets.len()).then_some(true),
            ..Default::default()
        }),
        _ => None,
    });
    ex.char_count = head.chars().count() as u64 + read.all_chars;
    let mut text = read.body;
    text.insert_str(0, &head);
    ex.units = read
        .units
        .into_iter()
        .map(|s| Span {
            head: s.head + head.len(),
            body: s.body + head.len(),
            end: s.end + head.len(),
            ..s
        })
        .collect();
    match next {
        Some(mut n) => {
            ex.truncated = true;
            match (read.needed, read.needed_cells) {
                (None, None) => ex.warnings.push(format!(
                    "stopped at the {}; the sheet list says what was read and `next` reads on",
                    read.stopped_by
                )),
                (chars, cells) => {
                    n.max_chars = chars;
                    n.max_cells = cells;
                    ex.warnings.push(format!(
                        "{} cannot hold the sheet list and a row; `next` reads on with a budget that does",
                        if cells.is_some() { "max_cells" } else { "max_chars" }
                    ));
                }
            }
            ex.text = close_truncated(text, ex.char_count);
            ex.next = Some(n);
        }
        None => ex.text = text,
    }
    ex
}
