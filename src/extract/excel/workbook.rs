//! The calamine workbook behind one enum (xlsx, xls, ods): opened only once its package is
//! proven within the caps (no zip bomb, no shared-string output bomb), its worksheets
//! listed, and each sheet's cells streamed into a `Sheet`.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;

use calamine::{open_workbook_from_rs, Data, DataRef, Ods, Reader, SheetVisible, Xls, Xlsx};

use super::cells::push_ref;
use super::sheet::{feed_range, Sheet};
use crate::config::Limits;
use crate::detect::Format;
use crate::error::{ApiError, ErrorCode};
use crate::extract::package::Package;
use crate::extract::Input;

/// Most text a workbook could expand to: cells that reference shared strings, times the
/// longest shared string. calamine copies the string into every such cell, so 12,000
/// references to one 1 MB string would take 12 GB; refuse that before it is read.
fn refuse_output_bomb(pkg: &mut Package, max_expanded: u64) -> Result<(), ApiError> {
    let Some(sst) = pkg.read("xl/sharedStrings.xml")? else {
        return Ok(());
    };
    let longest = longest_between(&sst, b"<si>", b"</si>") as u64;
    if longest < 4096 {
        return Ok(());
    }
    let mut refs = 0u64;
    for name in pkg
        .names()
        .into_iter()
        .filter(|n| n.starts_with("xl/worksheets/") && n.ends_with(".xml"))
    {
        if let Some(xml) = pkg.read(&name)? {
            refs += count(&xml, b"t=\"s\"") as u64;
        }
    }
    if refs.saturating_mul(longest) > max_expanded {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{refs} cells reference a shared string of {longest} bytes: the text would exceed {max_expanded} bytes (an output bomb)"),
        )
        .with_hint("Real workbooks do not repeat megabyte strings in thousands of cells; this one is not read."));
    }
    Ok(())
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn longest_between(hay: &[u8], open: &[u8], close: &[u8]) -> usize {
    let mut best = 0;
    let mut i = 0;
    while let Some(a) = hay[i..].windows(open.len()).position(|w| w == open) {
        let start = i + a;
        match hay[start..].windows(close.len()).position(|w| w == close) {
            Some(b) => {
                best = best.max(b);
                i = start + b + close.len();
            }
            None => {
                best = best.max(hay.len() - start);
                break;
            }
        }
    }
    best
}

fn calamine_error(e: calamine::Error) -> ApiError {
    match e {
        calamine::Error::Xls(calamine::XlsError::Password) => {
            ApiError::new(ErrorCode::Encrypted, "the workbook is password-protected").with_hint(
                "Remove the password in Excel (or save an unprotected copy) and upload that.",
            )
        }
        calamine::Error::Io(e) => ApiError::internal(e),
        other => ApiError::new(
            ErrorCode::Corrupt,
            "the workbook cannot be read: it is damaged or not really a spreadsheet",
        )
        .with_cause(other),
    }
}

/// By worksheet part (xlsx, xlsb): its cells in a number format of their own.
pub(super) type Numbers = HashMap<String, std::sync::Arc<super::biff::CellFormats>>;

/// An open workbook of any of the formats calamine reads.
pub(super) enum Workbook {
    Xlsx(Xlsx<BufReader<File>>),
    Xls(Xls<BufReader<File>>),
    /// Read here (`xlsb::Book`), not by calamine.
    Xlsb(Box<super::xlsb::Book>),
    Ods(Ods<BufReader<File>>),
    /// Excel 2003 XML, read whole (`xml2003`): its sheets as calamine lists them, and their
    /// cells.
    Xml2003(Vec<calamine::Sheet>, Vec<super::xml2003::XmlSheet>),
}

impl Workbook {
    /// Open a workbook once its package is proven within the caps (calamine inflates the
    /// package itself). Opening an xlsx reads only the small parts (workbook, shared
    /// strings, styles), so the worksheets are checked on a second thread meanwhile; they
    /// are read only after. The check of an xlsx's worksheets also finds their hidden rows
    /// and columns (`hidden.rs`), by part.
    pub(super) fn open(
        input: &Input,
        limits: &Limits,
    ) -> Result<(Self, super::hidden::ByPart, Numbers), ApiError> {
        Ok(match input.format {
            Format::Xls => (
                Self::open_unchecked(input)?,
                Default::default(),
                Default::default(),
            ),
            Format::Ods => {
                Package::open(&input.path, limits.package)?.check_all()?;
                (
                    Self::open_unchecked(input)?,
                    Default::default(),
                    Default::default(),
                )
            }
            Format::SpreadsheetMl => {
                let xml = crate::extract::xml::read_whole(
                    &input.path,
                    limits.package.max_entry_bytes,
                    "Excel 2003 XML file",
                )?;
                let sheets = super::xml2003::read(&xml, limits.package.max_xml_depth)?;
                let meta = sheets
                    .iter()
                    .map(|s| calamine::Sheet {
                        name: s.name.clone(),
                        typ: calamine::SheetType::WorkSheet,
                        visible: if s.hidden {
                            SheetVisible::Hidden
                        } else {
                            SheetVisible::Visible
                        },
                    })
                    .collect();
                // Hidden lines by "part": a sheet's name stands for its part here.
                let hidden = sheets
                    .iter()
                    .filter(|s| !s.lines.rows.is_empty() || !s.lines.cols.is_empty())
                    .map(|s| (s.name.clone(), s.lines.clone()))
                    .collect();
                (Self::Xml2003(meta, sheets), hidden, Default::default())
            }
            Format::Xlsb => {
                let mut pkg = Package::open(&input.path, limits.package)?;
                let mut checked = super::xlsb::check(&mut pkg, limits.max_expanded_text_bytes)?;
                let book = super::xlsb::Book::open(pkg, &mut checked)?;
                (Self::Xlsb(Box::new(book)), checked.hidden, checked.numbers)
            }
            _ => {
                let mut pkg = Package::open(&input.path, limits.package)?;
                let is_sheet = |n: &str| n.starts_with("xl/worksheets/");
                pkg.check_where(|n| !is_sheet(n))?;
                // The styles with a number format of their own, for the scan to find their
                // cells (none: the scan looks for hidden lines only).
                // Best effort: a styles part the walker refuses leaves numbers as General
                // (calamine reports what it cannot read itself).
                let numeric = super::styles::Formats::read(&mut pkg)
                    .map(|f| f.numeric())
                    .unwrap_or_default();
                let numeric = (!numeric.is_empty()).then(|| std::sync::Arc::new(numeric));
                let (checked, wb) = std::thread::scope(|scope| {
                    let check = scope.spawn(|| {
                        let mut scans: HashMap<String, super::hidden::Scan> = HashMap::new();
                        pkg.check_where_visiting(is_sheet, |name, piece| {
                            match scans.get_mut(name) {
                                Some(s) => s.feed(piece),
                                None => scans
                                    .entry(name.to_string())
                                    .or_insert_with(|| {
                                        super::hidden::Scan::with_numbers(numeric.clone())
                                    })
                                    .feed(piece),
                            }
                        })?;
                        let mut hidden = super::hidden::ByPart::new();
                        let mut numbers = Numbers::new();
                        for (part, scan) in scans {
                            let (h, n) = scan.finish();
                            if !h.rows.is_empty() || !h.cols.is_empty() {
                                hidden.insert(part.clone(), h);
                            }
                            if !n.is_empty() {
                                numbers.insert(part, std::sync::Arc::new(n));
                            }
                        }
                        Ok::<_, ApiError>((hidden, numbers))
                    });
                    let wb = Self::open_unchecked(input);
                    (check.join(), wb)
                });
                let (hidden, numbers) =
                    checked.map_err(|_| ApiError::internal("the package check panicked"))??;
                let wb = wb?;
                pkg.reset_count();
                refuse_output_bomb(&mut pkg, limits.max_expanded_text_bytes)?;
                (wb, hidden, numbers)
            }
        })
    }

    /// Open the file with calamine, as the format says.
    fn open_unchecked(input: &Input) -> Result<Self, ApiError> {
        let f = File::open(&input.path)
            .map(BufReader::new)
            .map_err(ApiError::internal)?;
        let err = |e: calamine::Error| calamine_error(e);
        Ok(match input.format {
            Format::Xls => {
                Self::Xls(open_workbook_from_rs(f).map_err(|e: calamine::XlsError| err(e.into()))?)
            }
            Format::Ods => {
                Self::Ods(open_workbook_from_rs(f).map_err(|e: calamine::OdsError| err(e.into()))?)
            }
            _ => Self::Xlsx(
                open_workbook_from_rs(f).map_err(|e: calamine::XlsxError| err(e.into()))?,
            ),
        })
    }

    fn metadata(&self) -> &[calamine::Sheet] {
        match self {
            Self::Xlsx(w) => w.sheets_metadata(),
            Self::Xls(w) => w.sheets_metadata(),
            Self::Xlsb(b) => b.metadata(),
            Self::Ods(w) => w.sheets_metadata(),
            Self::Xml2003(meta, _) => meta,
        }
    }

    /// Worksheets, and an xlsx's or xls's chart sheets, in workbook order: (name, hidden).
    pub(super) fn sheets(&self) -> Vec<(String, bool)> {
        let charts = matches!(self, Self::Xlsx(_) | Self::Xls(_) | Self::Xlsb(_));
        self.metadata()
            .iter()
            .filter(|s| {
                s.typ == calamine::SheetType::WorkSheet
                    || (charts && s.typ == calamine::SheetType::ChartSheet)
            })
            .map(|s| (s.name.clone(), s.visible != SheetVisible::Visible))
            .collect()
    }

    /// The chart sheets' names (they have no cells; `charts` reads them).
    pub(super) fn chart_sheets(&self) -> std::collections::HashSet<String> {
        self.metadata()
            .iter()
            .filter(|s| s.typ == calamine::SheetType::ChartSheet)
            .map(|s| s.name.clone())
            .collect()
    }

    /// An xlsb's sheets and their parts, as its workbook part lists them (other kinds:
    /// `None`, their parts are found from the package).
    pub(super) fn xlsb_parts(&self) -> Option<Vec<(String, String)>> {
        match self {
            Self::Xlsb(b) => Some(b.sheet_parts()),
            _ => None,
        }
    }

    /// Excel 2003 XML's comments by sheet name (other kinds: none here).
    pub(super) fn notes(&self) -> HashMap<String, Vec<super::comments::Note>> {
        match self {
            Self::Xml2003(_, sheets) => super::xml2003::notes(sheets),
            _ => HashMap::new(),
        }
    }

    /// Excel 2003 XML's number cells in formats of their own, by sheet name.
    pub(super) fn sheet_formats(&mut self) -> super::biff::Formats {
        match self {
            Self::Xml2003(_, sheets) => sheets
                .iter_mut()
                .filter(|s| !s.formats.is_empty())
                .map(|s| {
                    (
                        s.name.clone(),
                        std::sync::Arc::new(std::mem::take(&mut s.formats)),
                    )
                })
                .collect(),
            _ => Default::default(),
        }
    }

    /// A legacy workbook's sheet as calamine holds it (its cells, for what a chart
    /// refers to); `None` for other kinds or a sheet that cannot be read.
    pub(super) fn range(&mut self, name: &str) -> Option<calamine::Range<Data>> {
        match self {
            Self::Xls(w) => w.worksheet_range(name).ok(),
            _ => None,
        }
    }

    /// Stream one sheet's cells into `sheet`. xlsx cells come straight from the XML
    /// (no grid, shared strings borrowed); xls and ods are parsed whole by calamine.
    pub(super) fn read(&mut self, sheet: &mut Sheet) -> Result<(), ApiError> {
        const BATCH: usize = 4096;
        let sheet_name = sheet.name.clone();
        let range = match self {
            Self::Xlsx(w) => {
                // calamine parses on this thread while a second one renders the rows: the
                // XML parse and the text are each about half the work of a big sheet.
                let parsed: Result<(), ApiError> = std::thread::scope(|scope| {
                    type Batch<'a> = Vec<((u32, u32), DataRef<'a>)>;
                    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch<'_>>(4);
                    let render = scope.spawn(|| {
                        for batch in rx {
                            for (pos, v) in batch {
                                // A number in a format of its own: as it shows.
                                let shown = match &v {
                                    DataRef::Float(f) => sheet.formatted(pos, *f),
                                    DataRef::Int(i) => sheet.formatted(pos, *i as f64),
                                    _ => None,
                                };
                                match shown {
                                    Some(s) => sheet.cell(pos, |out| out.push_str(&s)),
                                    None => sheet.cell(pos, |out| push_ref(out, v)),
                                }
                            }
                            if sheet.unordered {
                                break; // dropping rx stops the parser
                            }
                        }
                    });
                    let mut cells = w
                        .worksheet_cells_reader(&sheet_name)
                        .map_err(|e| calamine_error(e.into()))?;
                    let mut batch: Batch<'_> = Vec::with_capacity(BATCH);
                    let mut result = Ok(());
                    loop {
                        match cells.next_cell() {
                            Ok(Some(cell)) => {
                                batch.push((cell.get_position(), cell.get_value().clone()));
                                if batch.len() == BATCH
                                    && tx
                                        .send(std::mem::replace(
                                            &mut batch,
                                            Vec::with_capacity(BATCH),
                                        ))
                                        .is_err()
                                {
                                    break;
                                }
                            }
                            Ok(None) => {
                                let _ = tx.send(batch);
                                break;
                            }
                            Err(e) => {
                                result = Err(calamine_error(e.into()));
                                break;
                            }
                        }
                    }
                    drop(tx);
                    if render.join().is_err() {
                        return Err(ApiError::internal("the sheet renderer panicked"));
                    }
                    result
                });
                parsed?;
                if !sheet.unordered {
                    sheet.finish();
                    return Ok(());
                }
                // Rows out of order (rare writers): read the cells again and sort them.
                // Not calamine's grid: that is rows × cols of the used area, so two cells
                // at A1 and XFD1048576 would allocate 17 billion; this holds only the cells
                // the sheet has (bounded by the package's decompression limits).
                sheet.restart();
                let mut cells = w
                    .worksheet_cells_reader(&sheet.name)
                    .map_err(|e| calamine_error(e.into()))?;
                let mut all: Vec<((u32, u32), Data)> = Vec::new();
                while let Some(cell) = cells.next_cell().map_err(|e| calamine_error(e.into()))? {
                    all.push((cell.get_position(), Data::from(cell.get_value().clone())));
                }
                feed_sorted(sheet, all);
                return Ok(());
            }
            Self::Xls(w) => w
                .worksheet_range(&sheet.name)
                .map_err(|e| calamine_error(e.into()))?,
            Self::Xlsb(b) => {
                // The cells the sheet has, never a grid of its used area (cells at A1 and
                // XFD1048576 would make 17 billion): sorted, then fed in order.
                feed_sorted(sheet, b.cells(&sheet_name)?);
                return Ok(());
            }
            Self::Ods(w) => w
                .worksheet_range(&sheet.name)
                .map_err(|e| calamine_error(e.into()))?,
            Self::Xml2003(_, sheets) => {
                let cells = sheets
                    .iter_mut()
                    .find(|s| s.name == sheet_name)
                    .map(|s| std::mem::take(&mut s.cells))
                    .unwrap_or_default();
                feed_sorted(sheet, cells);
                return Ok(());
            }
        };
        feed_range(sheet, &range);
        Ok(())
    }
}

/// Cells gathered from a streaming reader (positions in any order), fed to the sheet in
/// order: only the cells the sheet has, never a grid of its used area.
fn feed_sorted(sheet: &mut Sheet, mut cells: Vec<((u32, u32), Data)>) {
    cells.sort_by_key(|(pos, _)| *pos);
    for (pos, v) in &cells {
        super::sheet::feed_cell(sheet, *pos, v);
    }
    sheet.finish();
}
