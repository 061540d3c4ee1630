//! Excel 2003 XML (SpreadsheetML 2003: `<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet">`),
//! one XML file calamine does not read: each `Worksheet`'s `Table` of `Row`s and `Cell`s
//! (`ss:Index` skips rows and columns, `ss:MergeAcross` spans), each cell's `Data` by its
//! `ss:Type`, its `Comment`, and sheets hidden by `WorksheetOptions/Visible`. The cells then
//! go through the same sheet rendering, budgets and `next` as any workbook's.

use std::collections::HashMap;

use calamine::Data;

use super::comments::Note;
use crate::error::ApiError;
use crate::extract::xml::{attr, walk, Node};

/// Excel's largest sheet: cells past it are not cells.
const MAX_ROWS: u32 = 1_048_576;
const MAX_COLS: u32 = 16_384;

/// One worksheet: its name, whether it is hidden, its cells in document order, and its
/// comments.
pub(super) struct XmlSheet {
    pub(super) name: String,
    pub(super) hidden: bool,
    pub(super) cells: Vec<((u32, u32), Data)>,
    pub(super) notes: Vec<Note>,
    /// Its number cells in a format of their own (their style's, or their row's).
    pub(super) formats: super::biff::CellFormats,
    /// Its hidden rows (`Row ss:Hidden="1"`) and columns (`Column ss:Hidden="1"`, with
    /// `ss:Span` more), 1-based as an xlsx's.
    pub(super) lines: super::hidden::HiddenLines,
}

/// A named number format of SpreadsheetML 2003 as a format code; other names (the date
/// and time ones) and `General` give `None`; anything else is a code itself.
fn format_code(name: &str) -> Option<&str> {
    Some(match name.trim() {
        "" | "General" | "General Number" | "@" => return None,
        "Fixed" => "0.00",
        "Standard" => "#,##0.00",
        "Percent" => "0.00%",
        "Scientific" => "0.00E+00",
        "Currency" => "\"$\"#,##0.00_);(\"$\"#,##0.00)",
        "Euro Currency" => "[$€-2] #,##0.00",
        "Yes/No" | "True/False" | "On/Off" => return None,
        n if n.contains("Date") || n.contains("Time") => return None,
        code => code,
    })
}

/// The workbook's sheets, in order.
pub(super) fn read(xml: &[u8], depth: usize) -> Result<Vec<XmlSheet>, ApiError> {
    crate::extract::xml::refuse_entities(xml)?;
    let mut sheets: Vec<XmlSheet> = Vec::new();
    // Where the walk stands: the row and column of the open cell (0-based; `None` before
    // the first), the open Data's type and text, the open comment's author and text.
    let (mut row, mut col): (Option<u32>, Option<u32>) = (None, None);
    // The last column a `Column` element described (0-based).
    let mut column: Option<u32> = None;
    let mut data: Option<(String, String)> = None;
    let mut comment: Option<(String, String)> = None;
    let mut visible: Option<String> = None;
    let mut span = 0u32;
    // Styles with a number format of their own, by `ss:ID`; the open style; the open
    // row's and cell's style.
    let mut styles: HashMap<String, std::sync::Arc<super::numfmt::NumFmt>> = HashMap::new();
    let mut style_id: Option<String> = None;
    let (mut row_style, mut cell_style): (Option<String>, Option<String>) = (None, None);
    let index = |a: &[(String, String)]| {
        attr(a, "Index")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|&i| i >= 1)
            .map(|i| i - 1)
    };
    walk(xml, depth, |n| match n {
        Node::Open("Worksheet", a) => {
            sheets.push(XmlSheet {
                name: attr(a, "Name").unwrap_or("Sheet").to_string(),
                hidden: false,
                cells: Vec::new(),
                notes: Vec::new(),
                formats: Default::default(),
                lines: Default::default(),
            });
            (row, col, column) = (None, None, None);
        }
        Node::Open("Style", a) => style_id = attr(a, "ID").map(str::to_string),
        Node::Open("NumberFormat", a) => {
            if let (Some(id), Some(code)) =
                (style_id.as_ref(), attr(a, "Format").and_then(format_code))
            {
                if super::numfmt::is_numeric(code) {
                    styles.insert(
                        id.clone(),
                        std::sync::Arc::new(super::numfmt::NumFmt::new(code)),
                    );
                }
            }
        }
        Node::Open("Row", a) => {
            row_style = attr(a, "StyleID").map(str::to_string);
            row = Some(index(a).unwrap_or_else(|| row.map_or(0, |r| r.saturating_add(1))));
            col = None;
            if let (Some(r), Some(sheet)) = (row, sheets.last_mut()) {
                if attr(a, "Hidden") == Some("1")
                    && r < MAX_ROWS
                    && sheet.lines.rows.len() < 100_000
                {
                    sheet.lines.rows.push(r + 1);
                }
            }
        }
        Node::Open("Column", a) => {
            let first = index(a).unwrap_or_else(|| column.map_or(0, |c| c.saturating_add(1)));
            let span = attr(a, "Span")
                .and_then(|v| v.trim().parse::<u32>().ok())
                .unwrap_or(0)
                .min(MAX_COLS);
            let last = first.saturating_add(span).min(MAX_COLS - 1);
            column = Some(last);
            if let Some(sheet) = sheets.last_mut() {
                if attr(a, "Hidden") == Some("1")
                    && first <= last
                    && sheet.lines.cols.len() < MAX_COLS as usize
                {
                    sheet.lines.cols.push((first + 1, last + 1));
                }
            }
        }
        Node::Open("Cell", a) => {
            cell_style = attr(a, "StyleID")
                .map(str::to_string)
                .or_else(|| row_style.clone());
            col = Some(index(a).unwrap_or_else(|| col.map_or(0, |c| c.saturating_add(1))));
            span = attr(a, "MergeAcross")
                .and_then(|v| v.trim().parse::<u32>().ok())
                .unwrap_or(0)
                .min(MAX_COLS);
        }
        Node::Close("Cell") => col = col.map(|c| c.saturating_add(span)),
        Node::Open("Data", a) if comment.is_none() => {
            data = Some((
                attr(a, "Type").unwrap_or("String").to_string(),
                String::new(),
            ));
        }
        Node::Open("Comment", a) => {
            comment = Some((attr(a, "Author").unwrap_or("").to_string(), String::new()));
        }
        Node::Open("Visible", _) => visible = Some(String::new()),
        Node::Text(t) => {
            if let Some((_, s)) = comment.as_mut() {
                s.push_str(t);
            } else if let Some((_, s)) = data.as_mut() {
                s.push_str(t);
            } else if let Some(v) = visible.as_mut() {
                v.push_str(t);
            }
        }
        Node::Close("Visible") => {
            if let (Some(v), Some(sheet)) = (visible.take(), sheets.last_mut()) {
                sheet.hidden = v.trim() != "SheetVisible";
            }
        }
        Node::Close("Comment") => {
            if let (Some((author, text)), Some(sheet), Some(r), Some(c)) =
                (comment.take(), sheets.last_mut(), row, col)
            {
                if r < MAX_ROWS && c < MAX_COLS && !text.trim().is_empty() {
                    sheet.notes.push(Note::new(r, c, &author, &text));
                }
            }
        }
        Node::Close("Data") if comment.is_none() => {
            if let (Some((kind, text)), Some(sheet), Some(r), Some(c)) =
                (data.take(), sheets.last_mut(), row, col)
            {
                if r < MAX_ROWS && c < MAX_COLS {
                    let v = value(&kind, text);
                    if let (Data::Float(_), Some(f)) =
                        (&v, cell_style.as_ref().and_then(|id| styles.get(id)))
                    {
                        sheet.formats.insert((r, c), f.clone());
                    }
                    sheet.cells.push(((r, c), v));
                }
            }
        }
        _ => {}
    })?;
    Ok(sheets)
}

/// A cell's value by its `ss:Type`: numbers as numbers, booleans, dates as ISO (a date at
/// midnight as the date alone, as other workbooks' dates read), text as it is.
fn value(kind: &str, text: String) -> Data {
    match kind {
        "Number" => match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Data::Float(f),
            _ => Data::String(text),
        },
        "Boolean" => Data::Bool(matches!(text.trim(), "1" | "true" | "TRUE")),
        "DateTime" => {
            let t = text.trim();
            let t = t.strip_suffix(".000").unwrap_or(t);
            let t = t.strip_suffix("T00:00:00").unwrap_or(t);
            // A time of day alone is written on Excel's day zero.
            let t = t.strip_prefix("1899-12-31T").unwrap_or(t);
            Data::DateTimeIso(t.to_string())
        }
        _ => Data::String(text),
    }
}

/// The comments of every sheet, by sheet name, in row then column order.
pub(super) fn notes(sheets: &[XmlSheet]) -> HashMap<String, Vec<Note>> {
    sheets
        .iter()
        .filter(|s| !s.notes.is_empty())
        .map(|s| {
            let mut n = s.notes.clone();
            n.sort_by_key(|n| (n.row, n.col));
            (s.name.clone(), n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_cells_skip_and_span_as_their_indexes_say() {
        let xml = br#"<?xml version="1.0"?>
<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">
 <Styles><Style ss:ID="p"><NumberFormat ss:Format="Percent"/></Style><Style ss:ID="d"><NumberFormat ss:Format="Short Date"/></Style></Styles>
 <Worksheet ss:Name="Costs"><Table>
  <Column ss:Width="40"/><Column ss:Hidden="1" ss:Span="1"/>
  <Row><Cell ss:MergeAcross="1"><Data ss:Type="String">Wide</Data></Cell><Cell ss:StyleID="p"><Data ss:Type="Number">0.055</Data></Cell></Row>
  <Row ss:Index="4" ss:Hidden="1"><Cell ss:Index="2"><Data ss:Type="DateTime">2016-04-27T00:00:00.000</Data>
   <Comment ss:Author="Ann"><ss:Data xmlns="http://www.w3.org/TR/REC-html40"><B>Check</B> it</ss:Data></Comment></Cell>
   <Cell><Data ss:Type="Boolean">1</Data></Cell></Row>
 </Table></Worksheet>
 <Worksheet ss:Name="Old"><Table><Row><Cell><Data ss:Type="String">x</Data></Cell></Row></Table>
  <WorksheetOptions xmlns="urn:schemas-microsoft-com:office:excel"><Visible>SheetHidden</Visible></WorksheetOptions></Worksheet>
</Workbook>"#;
        let sheets = read(xml, 64).unwrap();
        assert_eq!(sheets.len(), 2);
        assert_eq!(
            sheets[0].cells,
            [
                ((0, 0), Data::String("Wide".into())),
                ((0, 2), Data::Float(0.055)),
                ((3, 1), Data::DateTimeIso("2016-04-27".into())),
                ((3, 2), Data::Bool(true)),
            ]
        );
        assert_eq!(
            sheets[0].notes,
            [Note {
                row: 3,
                col: 1,
                author: "Ann".into(),
                text: "Check it".into()
            }]
        );
        assert!(!sheets[0].hidden && sheets[1].hidden);
        assert_eq!(sheets[0].formats.len(), 1);
        assert_eq!(sheets[0].lines.rows, [4]);
        assert_eq!(sheets[0].lines.cols, [(2, 3)]);
        assert_eq!(
            sheets[0].formats[&(0, 2)].apply(0.055).as_deref(),
            Some("5.50%")
        );
    }
}
