//! Reading order: recognised lines grouped into rows across the text direction, left to
//! right within a row, and the words of a row joined by a space (none between two CJK
//! characters).

use crate::ocr::OcrLine;

/// Group boxes into lines (overlap across the text direction `slant`, radians, of bands
/// `thickness` high), left to right within a line; words of one line joined by a space
/// (none between two CJK characters).
pub(super) fn reading_order(boxes: Vec<(OcrLine, f32)>, slant: f32) -> Vec<OcrLine> {
    let (sn, cs) = slant.sin_cos();
    // Each box's centre along (u) and across (v) the text direction, and its band on v.
    let mut placed: Vec<(f32, f32, f32, OcrLine)> = boxes
        .into_iter()
        .map(|(b, thick)| {
            let cx = (b.bbox[0] + b.bbox[2]) as f32 / 2.0;
            let cy = (b.bbox[1] + b.bbox[3]) as f32 / 2.0;
            (cx * cs + cy * sn, -cx * sn + cy * cs, thick.max(1.0), b)
        })
        .collect();
    placed.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut rows: Vec<Vec<(f32, f32, f32, OcrLine)>> = Vec::new();
    for b in placed {
        let (top, bottom) = (b.1 - b.2 / 2.0, b.1 + b.2 / 2.0);
        let fits = rows.last().is_some_and(|row| {
            let rt = row.iter().map(|x| x.1 - x.2 / 2.0).fold(f32::MAX, f32::min);
            let rb = row.iter().map(|x| x.1 + x.2 / 2.0).fold(f32::MIN, f32::max);
            let overlap = rb.min(bottom) - rt.max(top);
            overlap * 2.0 > (bottom - top).min(rb - rt)
        });
        if fits {
            rows.last_mut().expect("checked").push(b);
        } else {
            rows.push(vec![b]);
        }
    }
    let rows: Vec<Vec<OcrLine>> = rows
        .into_iter()
        .map(|mut row| {
            row.sort_by(|a, b| a.0.total_cmp(&b.0));
            row.into_iter().map(|(_, _, _, b)| b).collect()
        })
        .collect();
    rows.into_iter()
        .map(|row| {
            let mut text = String::new();
            for b in &row {
                let joins_cjk = text.chars().last().is_some_and(is_cjk)
                    && b.text.chars().next().is_some_and(is_cjk);
                if !text.is_empty() && !joins_cjk {
                    text.push(' ');
                }
                text.push_str(&b.text);
            }
            let n: usize = row
                .iter()
                .map(|b| b.text.chars().count())
                .sum::<usize>()
                .max(1);
            let conf = row
                .iter()
                .map(|b| b.confidence * b.text.chars().count() as f32)
                .sum::<f32>()
                / n as f32;
            let bbox = [
                row.iter().map(|b| b.bbox[0]).min().unwrap_or(0),
                row.iter().map(|b| b.bbox[1]).min().unwrap_or(0),
                row.iter().map(|b| b.bbox[2]).max().unwrap_or(0),
                row.iter().map(|b| b.bbox[3]).max().unwrap_or(0),
            ];
            OcrLine {
                text,
                bbox,
                confidence: conf,
            }
        })
        .collect()
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{FF00}'..='\u{FFEF}' | '\u{3000}'..='\u{303F}')
}
