//! Office charts (DrawingML `c:chartSpace` parts, as PowerPoint, Word and Excel embed
//! them; a legacy .xls's BIFF chart substreams are read in `excel::biff` into the same
//! `Chart`): the title, the series' names, the categories and the values cached in the part
//! (what the chart shows, without its workbook). Written where the chart stands as
//! `[Chart: TITLE]`, then tab-separated rows: a header (the category axis title, or
//! `Category`, then the series names) and one row per category.

use super::xml::{walk, Node};
use crate::error::ApiError;

/// One series: its name and its points' categories and values, by point index.
#[derive(Debug, Default)]
pub(crate) struct Series {
    pub name: String,
    pub cats: Vec<(usize, String)>,
    pub vals: Vec<(usize, String)>,
}

/// What a chart shows, whatever file it came from.
#[derive(Debug, Default)]
pub(crate) struct Chart {
    pub title: String,
    /// The category axis's title.
    pub cat_title: String,
    pub series: Vec<Series>,
}

/// A chart's text, or `None` when the part holds no chart.
pub fn read(xml: &[u8], depth: usize) -> Result<Option<String>, ApiError> {
    let mut path: Vec<String> = Vec::new();
    let mut title = String::new();
    let mut cat_title = String::new();
    let mut series: Vec<Series> = Vec::new();
    let mut pt: Option<usize> = None;
    let mut any_chart = false;
    walk(xml, depth, |n| match n {
        Node::Open(tag, a) => {
            match tag {
                "chart" => any_chart = true,
                "ser" => series.push(Series::default()),
                "pt" => pt = super::xml::attr(a, "idx").and_then(|v| v.parse().ok()),
                _ => {}
            }
            path.push(tag.to_string());
        }
        Node::Close(tag) => {
            if tag == "pt" {
                pt = None;
            }
            if tag == "p" && path.iter().any(|p| p == "title") {
                // Paragraphs of a title are one line.
                let t = if path.iter().any(|p| p == "catAx" || p == "dateAx") {
                    &mut cat_title
                } else {
                    &mut title
                };
                if !t.ends_with(' ') && !t.is_empty() {
                    t.push(' ');
                }
            }
            path.pop();
        }
        Node::Text(t) => {
            let inside = |name: &str| path.iter().any(|p| p == name);
            let leaf = path.last().map(String::as_str);
            if inside("title") && !inside("ser") && matches!(leaf, Some("t" | "v")) {
                let in_axis = ["catAx", "valAx", "dateAx", "serAx"]
                    .iter()
                    .any(|a| inside(a));
                if in_axis {
                    if inside("catAx") || inside("dateAx") {
                        cat_title.push_str(t);
                    }
                } else {
                    title.push_str(t);
                }
                return;
            }
            let Some(s) = series.last_mut() else { return };
            if !inside("ser") || leaf != Some("v") {
                return;
            }
            if inside("tx") {
                s.name.push_str(t);
            } else if inside("cat") || inside("xVal") {
                // Multi-level categories: the first level only.
                if let Some(i) = pt {
                    if !s.cats.iter().any(|(j, _)| *j == i) {
                        s.cats.push((i, t.to_string()));
                    }
                }
            } else if inside("val") || inside("yVal") {
                if let Some(i) = pt {
                    s.vals.push((i, t.to_string()));
                }
            }
        }
    })?;
    if !any_chart {
        return Ok(None);
    }
    Ok(Some(render(&Chart {
        title,
        cat_title,
        series,
    })))
}

/// An OpenDocument chart object's text (its `content.xml`: `chart:chart`, as an
/// OpenDocument spreadsheet embeds it), or `None` when the part holds no chart: the
/// chart's title, the category (x) axis's title, and the series from the chart's own
/// table of data (`local-table`: its header row the series' names, its header column the
/// categories), at most 100,000 rows of 1,024 columns and 1,000,000 cells (a repeat
/// count costs its cells).
pub fn read_odf(xml: &[u8], depth: usize) -> Result<Option<String>, ApiError> {
    const MAX_ROWS: usize = 100_000;
    const MAX_COLS: usize = 1_024;
    const MAX_CELLS: usize = 1_000_000;
    let mut cells = 0usize;
    let mut path: Vec<String> = Vec::new();
    let (mut title, mut cat_title) = (String::new(), String::new());
    let mut any_chart = false;
    // The data table: rows of cells, whether its first row and column are headers.
    let mut rows: Vec<Vec<String>> = Vec::new();
    let (mut header_row, mut header_col) = (false, false);
    // The x axis's title is the category axis's; other axes' titles are not read.
    let mut axis_x: Option<bool> = None;
    // The cell being read: its value when a number, its paragraphs' text, its repeat.
    let mut cell: Option<(Option<String>, String, usize)> = None;
    walk(xml, depth, |n| match n {
        Node::Open(tag, a) => {
            match tag {
                "chart" if path.last().map(String::as_str) == Some("chart") => any_chart = true,
                "axis" => axis_x = Some(super::xml::attr(a, "dimension") == Some("x")),
                "table-header-rows" => header_row = true,
                "table-header-columns" => header_col = true,
                "table-row" if path.iter().any(|p| p == "table") && rows.len() < MAX_ROWS => {
                    rows.push(Vec::new())
                }
                "table-cell" => {
                    let number = matches!(
                        super::xml::attr(a, "value-type"),
                        Some("float" | "percentage" | "currency")
                    );
                    let value = super::xml::attr(a, "value")
                        .filter(|_| number)
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .filter(|f| f.is_finite())
                        .map(super::cell::fmt_num);
                    let repeat = super::xml::attr(a, "number-columns-repeated")
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, MAX_COLS);
                    cell = Some((value, String::new(), repeat));
                }
                _ => {}
            }
            path.push(tag.to_string());
        }
        Node::Close(tag) => {
            path.pop();
            match tag {
                "axis" => axis_x = None,
                "p" if path.iter().any(|p| p == "title") => {
                    let t = match axis_x {
                        Some(true) => &mut cat_title,
                        Some(false) => return,
                        None => &mut title,
                    };
                    if !t.is_empty() && !t.ends_with(' ') {
                        t.push(' ');
                    }
                }
                "p" => {
                    if let Some((_, text, _)) = cell.as_mut() {
                        if !text.is_empty() {
                            text.push(' ');
                        }
                    }
                }
                "table-cell" => {
                    if let (Some((value, text, repeat)), Some(row)) = (cell.take(), rows.last_mut())
                    {
                        let v = value.unwrap_or_else(|| text.trim().to_string());
                        let n = repeat
                            .min(MAX_COLS.saturating_sub(row.len()))
                            .min(MAX_CELLS.saturating_sub(cells));
                        cells += n;
                        row.extend(std::iter::repeat_n(v, n));
                    }
                }
                _ => {}
            }
        }
        Node::Text(t) => {
            // A cell's range note (`draw:g`/`svg:desc`) is no text of the chart.
            if path.iter().any(|p| p == "desc") {
                return;
            }
            if path.iter().any(|p| p == "title") && path.last().map(String::as_str) != Some("title")
            {
                match axis_x {
                    Some(true) => cat_title.push_str(t),
                    Some(false) => {}
                    None => title.push_str(t),
                }
            } else if let Some((_, text, _)) = cell.as_mut() {
                text.push_str(t);
            }
        }
    })?;
    if !any_chart {
        return Ok(None);
    }
    let names: Vec<String> = if header_row && !rows.is_empty() {
        rows.remove(0)
    } else {
        Vec::new()
    };
    let first = usize::from(header_col);
    let width = rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(names.len());
    // The categories once, on the first series (`render` takes them from there).
    let series = (first..width)
        .map(|c| Series {
            name: names.get(c).cloned().unwrap_or_default(),
            cats: if header_col && c == first {
                rows.iter()
                    .enumerate()
                    .filter_map(|(i, r)| Some((i, r.first()?.clone())))
                    .filter(|(_, v)| !v.is_empty())
                    .collect()
            } else {
                Vec::new()
            },
            vals: rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, r.get(c)?.clone())))
                .filter(|(_, v)| !v.is_empty())
                .collect(),
        })
        .collect();
    Ok(Some(render(&Chart {
        title,
        cat_title,
        series,
    })))
}

/// A chart as text: `[Chart: TITLE]`, then its header and one row per category.
pub(crate) fn render(chart: &Chart) -> String {
    let Chart {
        title,
        cat_title,
        series,
    } = chart;
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = one_line(title);
    let mut out = if title.is_empty() {
        "[Chart]\n".to_string()
    } else {
        format!("[Chart: {title}]\n")
    };
    if series.is_empty() {
        return out;
    }
    let n = series
        .iter()
        .flat_map(|s| s.cats.iter().chain(&s.vals).map(|(i, _)| i + 1))
        .max()
        .unwrap_or(0)
        .min(100_000);
    // Points by index, once (a chart of 100,000 points looked up point by point would be
    // quadratic).
    fn by_index(pts: &[(usize, String)], n: usize) -> Vec<Option<&str>> {
        let mut v: Vec<Option<&str>> = vec![None; n];
        for (i, t) in pts {
            if *i < n && v[*i].is_none() {
                v[*i] = Some(t.as_str());
            }
        }
        v
    }
    let cats = series
        .iter()
        .find(|s| !s.cats.is_empty())
        .map(|s| by_index(&s.cats, n))
        .unwrap_or_else(|| vec![None; n]);
    let vals: Vec<Vec<Option<&str>>> = series.iter().map(|s| by_index(&s.vals, n)).collect();
    let cat_title = one_line(cat_title);
    let mut header = vec![if cat_title.is_empty() {
        "Category".to_string()
    } else {
        cat_title
    }];
    header.extend(series.iter().enumerate().map(|(k, s)| {
        let name = one_line(&s.name);
        if name.is_empty() {
            format!("Series {}", k + 1)
        } else {
            name
        }
    }));
    out.push_str(&header.join("\t"));
    out.push('\n');
    let value = |v: &str| match v.trim().parse::<f64>() {
        Ok(f) if f.is_finite() => super::cell::fmt_num(f),
        _ => one_line(v),
    };
    for i in 0..n {
        let cat = cats[i].map(one_line).unwrap_or_else(|| (i + 1).to_string());
        let mut row = vec![cat];
        for v in &vals {
            row.push(v[i].map(value).unwrap_or_default());
        }
        out.push_str(&row.join("\t"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An OpenDocument chart object: its title, the x axis's title (not the y axis's),
    /// names and categories from its table's header row and column, numbers from
    /// `office:value`, a cell's range note left out; a hostile repeat stays bounded.
    #[test]
    fn an_opendocument_chart_with_its_own_table() {
        let xml = br#"<office:document-content xmlns:office="o" xmlns:chart="c" xmlns:table="t" xmlns:text="x" xmlns:draw="d" xmlns:svg="s"><office:body><office:chart><chart:chart>
          <chart:title><text:p>Units</text:p><text:p>sold</text:p></chart:title>
          <chart:plot-area>
            <chart:axis chart:dimension="x"><chart:title><text:p>Quarter</text:p></chart:title></chart:axis>
            <chart:axis chart:dimension="y"><chart:title><text:p>EUR</text:p></chart:title></chart:axis>
          </chart:plot-area>
          <table:table table:name="local-table">
            <table:table-header-columns><table:table-column/></table:table-header-columns>
            <table:table-header-rows><table:table-row><table:table-cell><text:p/></table:table-cell>
              <table:table-cell office:value-type="string"><text:p>North</text:p><draw:g><svg:desc>Sales.B1</svg:desc></draw:g></table:table-cell></table:table-row></table:table-header-rows>
            <table:table-rows>
              <table:table-row><table:table-cell office:value-type="string"><text:p>Q1</text:p></table:table-cell>
                <table:table-cell office:value-type="float" office:value="0.30000000000000004"><text:p>0.3</text:p></table:table-cell></table:table-row>
              <table:table-row><table:table-cell office:value-type="string"><text:p>Q2</text:p></table:table-cell>
                <table:table-cell office:value-type="float" office:value="12.5" table:number-columns-repeated="1000000000"><text:p>12.5</text:p></table:table-cell></table:table-row>
            </table:table-rows></table:table></chart:chart></office:chart></office:body></office:document-content>"#;
        let text = read_odf(xml, 64).unwrap().unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("[Chart: Units sold]"));
        assert_eq!(lines.next().map(|l| l.split('\t').count()), Some(1024));
        assert!(text.contains("Quarter\tNorth\tSeries 2\t"), "{text}");
        assert!(text.contains("\nQ1\t0.3\t\t"), "{text}");
        assert!(text.contains("\nQ2\t12.5\t12.5\t"), "{text}");
        assert!(
            !text.contains("EUR") && !text.contains("Sales.B1"),
            "{text}"
        );
        // Rows of repeated cells stop at the table's bound of cells.
        let row = r#"<table:table-row><table:table-cell office:value-type="float" office:value="1" table:number-columns-repeated="1000000000"/></table:table-row>"#;
        let many = format!(
            r#"<office:document-content xmlns:office="o" xmlns:chart="c" xmlns:table="t"><office:body><office:chart><chart:chart><table:table>{}</table:table></chart:chart></office:chart></office:body></office:document-content>"#,
            row.repeat(2_000)
        );
        let text = read_odf(many.as_bytes(), 64).unwrap().unwrap();
        let cells: usize = text
            .lines()
            .skip(2)
            .map(|l| l.split('\t').skip(1).filter(|v| !v.is_empty()).count())
            .sum();
        assert_eq!(cells, 1_000_000);
        assert_eq!(
            text.lines().count(),
            2 + 977,
            "rows of 1,024 up to 1,000,000 cells"
        );
        // A text document's part is no chart.
        assert_eq!(read_odf(b"<office:document-content><office:body><office:text/></office:body></office:document-content>", 64).unwrap(), None);
    }

    #[test]
    fn a_bar_chart_with_two_series() {
        let xml = br#"<c:chartSpace xmlns:c="c" xmlns:a="a"><c:chart>
          <c:title><c:tx><c:rich><a:p><a:r><a:t>Sales</a:t></a:r><a:r><a:t> by quarter</a:t></a:r></a:p></c:rich></c:tx></c:title>
          <c:plotArea><c:barChart>
            <c:ser><c:tx><c:strRef><c:strCache><c:pt idx="0"><c:v>North</c:v></c:pt></c:strCache></c:strRef></c:tx>
              <c:cat><c:strRef><c:strCache><c:pt idx="0"><c:v>Q1</c:v></c:pt><c:pt idx="1"><c:v>Q2</c:v></c:pt></c:strCache></c:strRef></c:cat>
              <c:val><c:numRef><c:numCache><c:formatCode>General</c:formatCode><c:pt idx="0"><c:v>10</c:v></c:pt><c:pt idx="1"><c:v>12.5</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>
            <c:ser><c:tx><c:v>South</c:v></c:tx>
              <c:val><c:numRef><c:numCache><c:pt idx="1"><c:v>0.30000000000000004</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>
          </c:barChart>
          <c:catAx><c:title><c:tx><c:rich><a:p><a:r><a:t>Quarter</a:t></a:r></a:p></c:rich></c:tx></c:title></c:catAx>
          <c:valAx><c:title><c:tx><c:rich><a:p><a:r><a:t>EUR</a:t></a:r></a:p></c:rich></c:tx></c:title></c:valAx>
          </c:plotArea></c:chart></c:chartSpace>"#;
        assert_eq!(
            read(xml, 64).unwrap().unwrap(),
            "[Chart: Sales by quarter]\nQuarter\tNorth\tSouth\nQ1\t10\t\nQ2\t12.5\t0.3\n"
        );
    }
}
