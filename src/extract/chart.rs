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
