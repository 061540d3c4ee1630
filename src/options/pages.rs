//! Page and slide ranges: a spec such as `"1,3,5-8"` parsed, resolved against the
//! document's length (clipped with a warning, or out of range), and written back compactly.

use crate::error::{ApiError, ErrorCode};

/// Parse a page/slide spec into inclusive 1-based spans, checking only its syntax.
pub fn parse_spans(spec: &str) -> Result<Vec<(u64, u64)>, ApiError> {
    let invalid = |why: &str| {
        ApiError::new(
            ErrorCode::InvalidRange,
            format!("invalid page range {spec:?}: {why}"),
        )
    };
    let norm: String = spec
        .chars()
        .map(|c| match c {
            '\u{2013}' | '\u{2014}' | '\u{2212}' | '\u{2010}' | '\u{2011}' => '-',
            c => c,
        })
        .collect();
    if norm.trim().is_empty() {
        return Err(invalid("it is empty"));
    }
    let num = |s: &str| -> Result<u64, ApiError> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("expected page numbers such as 5, 1-10 or 1,3,5-8"));
        }
        let n: u64 = s.parse().map_err(|_| invalid("page number too large"))?;
        if n == 0 {
            return Err(invalid("pages are numbered from 1"));
        }
        Ok(n)
    };
    let mut spans = Vec::new();
    for part in norm.split(',') {
        let span = match part.split_once('-') {
            None => {
                let n = num(part)?;
                (n, n)
            }
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(ApiError::new(
                        ErrorCode::InvertedRange,
                        format!("page range {spec:?} runs backwards ({a} > {b})"),
                    )
                    .with_hint(format!("Write it from low to high: \"{b}-{a}\".")));
                }
                (a, b)
            }
        };
        spans.push(span);
    }
    Ok(spans)
}

/// A resolved selection: sorted, deduplicated page numbers, plus a warning when clipped.
#[derive(Debug, PartialEq, Eq)]
pub struct Selection {
    pub pages: Vec<u64>,
    pub warning: Option<String>,
}

/// Resolve parsed spans (`spec` as the client wrote them) against a document of `total`
/// pages (`unit` is "page", "slide" or "chapter").
pub fn resolve_pages(
    spec: &str,
    spans: &[(u64, u64)],
    total: u64,
    unit: &str,
    container: &str,
) -> Result<Selection, ApiError> {
    let mut pages = Vec::new();
    let mut clipped = false;
    for &(a, b) in spans {
        if b > total {
            clipped = true;
        }
        if a <= total {
            pages.extend(a..=b.min(total));
        }
    }
    pages.sort_unstable();
    pages.dedup();
    if pages.is_empty() {
        let asked = if spec.trim().parse::<u64>().is_ok() {
            format!("{unit} {} is", spec.trim())
        } else {
            format!("{unit}s {spec} are")
        };
        return Err(ApiError::out_of_range(format!(
            "{asked} past the end: the {container} has {total} {unit}{}",
            if total == 1 { "" } else { "s" }
        ))
        .with_hint(match total {
            0 => format!("The {container} has no {unit}s to read."),
            1 => format!("Ask for {unit} 1."),
            _ => format!("Ask for {unit}s 1-{total}."),
        }));
    }
    let warning = clipped
        .then(|| format!("{unit} range {spec} clipped to the {container}'s {total} {unit}s"));
    Ok(Selection { pages, warning })
}

/// Write page numbers back as a compact spec: `[1,2,3,5,7,8]` → `"1-3,5,7-8"`.
pub fn format_pages(pages: &[u64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pages.len() {
        let start = pages[i];
        let mut end = start;
        while i + 1 < pages.len() && pages[i + 1] == end + 1 {
            i += 1;
            end = pages[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(spec: &str, total: u64) -> Result<Selection, ApiError> {
        resolve_pages(spec, &parse_spans(spec)?, total, "page", "document")
    }

    #[test]
    fn range_table() {
        let ok = |spec: &str, total: u64| resolve(spec, total).map(|s| s.pages);
        let code = |spec: &str, total: u64| resolve(spec, total).unwrap_err().code;
        assert_eq!(ok("5", 10).unwrap(), vec![5]);
        assert_eq!(ok("1-3", 10).unwrap(), vec![1, 2, 3]);
        assert_eq!(ok("1,3,5-8", 10).unwrap(), vec![1, 3, 5, 6, 7, 8]);
        assert_eq!(
            ok("8-6,1", 10).map_err(|e| e.code),
            Err(ErrorCode::InvertedRange)
        );
        assert_eq!(ok("2\u{2013}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok("2\u{2014}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok("2\u{2212}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok(" 3 , 1-2 ,2", 10).unwrap(), vec![1, 2, 3]);
        assert_eq!(code("5-1", 10), ErrorCode::InvertedRange);
        for bad in [
            "abc", "2-", "-2", "", " ", "1,,2", "0", "1-0", "1.5", "1-2-3",
        ] {
            assert!(
                matches!(
                    code(bad, 10),
                    ErrorCode::InvalidRange | ErrorCode::InvertedRange
                ),
                "{bad:?}"
            );
        }
        assert_eq!(code("11-20", 10), ErrorCode::OutOfRange);
        let e = resolve("11", 10).unwrap_err();
        assert!(e.message.contains("has 10 pages"), "{}", e.message);
        let s = resolve("8-12", 10).unwrap();
        assert_eq!(s.pages, vec![8, 9, 10]);
        assert!(s.warning.is_some());
        // A huge span does not allocate past the document.
        assert_eq!(ok("1-99999999999", 3).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn pages_format_back() {
        assert_eq!(format_pages(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
        assert_eq!(format_pages(&[4]), "4");
        for spec in ["1-3,5,7-8", "2", "1,3"] {
            let s = resolve(spec, 10).unwrap();
            assert_eq!(format_pages(&s.pages), spec);
        }
    }
}
