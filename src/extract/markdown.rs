//! Markdown pieces every format renders with: GFM pipe tables and their cells.

/// A cell's text on one line, its pipes escaped.
pub(crate) fn cell_text(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A GFM pipe table: the first row is the header, every row as wide as the widest.
pub(crate) fn pipe_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&pipe_row(r, cols));
        if i == 0 {
            out.push_str(&separator(cols));
        }
    }
    out
}

/// One row of a pipe table `cols` wide, line end included.
pub(crate) fn pipe_row(r: &[String], cols: usize) -> String {
    let mut out = String::from("|");
    for c in 0..cols {
        out.push(' ');
        out.push_str(r.get(c).map_or("", String::as_str));
        out.push_str(" |");
    }
    out.push('\n');
    out
}

/// A pipe table's separator row for `cols` columns, line end included.
pub(crate) fn separator(cols: usize) -> String {
    format!("|{}\n", "---|".repeat(cols.max(1)))
}
