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
            let mut parts = Vec::new();
            for b in &row {
                let joins_cjk = text.chars().last().is_some_and(is_cjk)
                    && b.text.chars().next().is_some_and(is_cjk);
                if !text.is_empty() && !joins_cjk {
                    text.push(' ');
                }
                text.push_str(&b.text);
                parts.push([b.bbox[0], b.bbox[2], text.len() as u32]);
            }
            // The regions of a row, where it is more than one (a table's cells).
            if parts.len() < 2 {
                parts.clear();
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
                reread: row.iter().any(|b| b.reread),
                parts,
                ..Default::default()
            }
        })
        .collect()
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{FF00}'..='\u{FFEF}' | '\u{3000}'..='\u{303F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, bbox: [u32; 4], confidence: f32) -> OcrLine {
        OcrLine {
            text: text.to_string(),
            bbox,
            confidence,
            ..Default::default()
        }
    }

    /// Boxes in (text and box; every band `thick` high), lines' texts out, in reading order.
    #[test]
    fn reading_order_of_boxes() {
        struct Case {
            name: &'static str,
            boxes: &'static [(&'static str, [u32; 4])],
            thick: f32,
            slant: f32,
            want: &'static [&'static str],
        }
        // Two words on each of two lines slanted by 0.1 rad: each word's axis-aligned box
        // is 30 high for a band 20 high, and the right word's centre sits 20 lower.
        const SKEWED: &[(&str, [u32; 4])] = &[
            ("one", [50, 85, 150, 115]),
            ("two", [250, 105, 350, 135]),
            ("three", [50, 145, 150, 175]),
            ("four", [250, 165, 350, 195]),
        ];
        let cases = [
            Case {
                name: "nothing",
                boxes: &[],
                thick: 20.0,
                slant: 0.0,
                want: &[],
            },
            Case {
                name: "one row given out of x-order",
                boxes: &[
                    ("C", [300, 100, 380, 120]),
                    ("A", [0, 102, 80, 122]),
                    ("B", [150, 98, 230, 118]),
                ],
                thick: 20.0,
                slant: 0.0,
                want: &["A B C"],
            },
            Case {
                name: "rows given bottom first",
                boxes: &[
                    ("third", [0, 300, 100, 320]),
                    ("second", [0, 200, 100, 220]),
                    ("first", [0, 100, 100, 120]),
                ],
                thick: 20.0,
                slant: 0.0,
                want: &["first", "second", "third"],
            },
            // No column detection: lines of two columns at the same heights are read
            // across the page, row by row.
            Case {
                name: "two columns at the same heights",
                boxes: &[
                    ("R2", [300, 130, 500, 150]),
                    ("L1", [0, 100, 200, 120]),
                    ("L2", [0, 130, 200, 150]),
                    ("R1", [300, 100, 500, 120]),
                ],
                thick: 20.0,
                slant: 0.0,
                want: &["L1 R1", "L2 R2"],
            },
            Case {
                name: "bands overlapping by more than half share a row",
                boxes: &[("a", [0, 100, 50, 120]), ("b", [60, 106, 110, 126])],
                thick: 20.0,
                slant: 0.0,
                want: &["a b"],
            },
            Case {
                name: "bands overlapping by less than half do not",
                boxes: &[("a", [0, 100, 50, 120]), ("b", [60, 114, 110, 134])],
                thick: 20.0,
                slant: 0.0,
                want: &["a", "b"],
            },
            Case {
                name: "a skewed pair of lines, read level",
                boxes: SKEWED,
                thick: 20.0,
                slant: 0.0,
                want: &["one", "two", "three", "four"],
            },
            Case {
                name: "a skewed pair of lines, read along their slant",
                boxes: SKEWED,
                thick: 20.0,
                slant: 0.1,
                want: &["one two", "three four"],
            },
            Case {
                name: "Latin words, joined by a space",
                boxes: &[("world", [60, 0, 110, 20]), ("Hello", [0, 0, 50, 20])],
                thick: 20.0,
                slant: 0.0,
                want: &["Hello world"],
            },
            Case {
                name: "CJK, joined without one",
                boxes: &[("世界", [50, 0, 90, 20]), ("你好", [0, 0, 40, 20])],
                thick: 20.0,
                slant: 0.0,
                want: &["你好世界"],
            },
            Case {
                name: "kana and kanji, joined without one",
                boxes: &[("こんにちは", [0, 0, 100, 20]), ("世界", [110, 0, 150, 20])],
                thick: 20.0,
                slant: 0.0,
                want: &["こんにちは世界"],
            },
            Case {
                name: "CJK beside Latin or digits, joined by a space",
                boxes: &[
                    ("价格", [0, 0, 40, 20]),
                    ("42", [50, 0, 70, 20]),
                    ("元", [80, 0, 100, 20]),
                ],
                thick: 20.0,
                slant: 0.0,
                want: &["价格 42 元"],
            },
        ];
        for c in cases {
            let boxes = c
                .boxes
                .iter()
                .map(|&(text, bbox)| (line(text, bbox, 0.9), c.thick))
                .collect();
            let got: Vec<String> = reading_order(boxes, c.slant)
                .into_iter()
                .map(|l| l.text)
                .collect();
            assert_eq!(got, c.want, "{}", c.name);
        }
    }

    /// The boxes of one row become one line: its box is theirs together, its confidence
    /// their mean weighted by characters.
    #[test]
    fn reading_order_merges_a_row() {
        let got = reading_order(
            vec![
                (line("cdef", [60, 98, 140, 122], 0.7), 20.0),
                (line("ab", [10, 100, 50, 120], 1.0), 20.0),
            ],
            0.0,
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].text, "ab cdef");
        assert_eq!(got[0].bbox, [10, 98, 140, 122]);
        assert!((got[0].confidence - 0.8).abs() < 1e-4, "{got:?}");
    }

    #[test]
    fn is_cjk_is_cjk_scripts_only() {
        for (c, want) in [
            ('你', true),
            ('世', true),
            ('ひ', true),
            ('カ', true),
            ('한', true),
            ('。', true),
            ('Ａ', true),
            ('a', false),
            ('é', false),
            ('Я', false),
            ('1', false),
            (' ', false),
        ] {
            assert_eq!(is_cjk(c), want, "{c:?}");
        }
    }
}
