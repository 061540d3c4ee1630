//! Detection: the DBNet model run over a page (`PpOcr::detect`), and its post-processing
//! (`regions`) from probability map to text regions, with the skew of the page's lines.

use image::imageops::{self, FilterType};
use image::RgbImage;

use super::models::{threads, Models};
use super::preprocess::{shrunk_tensor, to_tensor};
use super::recognize::run;
use super::{past_deadline, PpOcr, MAX_SKEW};
use crate::error::ApiError;

/// Detection works on images whose long side is at most this (speed vs small text: an A4
/// page at 1280 px still shows 8 pt type 12 px high; 1280 read the bench pages as well as
/// 1600 did, in two thirds of the time; 1024 lost characters).
const DET_MAX_SIDE: u32 = 1280;
/// And whose short side is at least this (RapidOCR's `limit_side_len`).
const DET_MIN_SIDE: u32 = 736;
const DET_THRESH: f32 = 0.3;
const BOX_THRESH: f32 = 0.5;
const UNCLIP_RATIO: f32 = 1.6;
/// Lines slanted by more than this are cut out along their own direction.
const MIN_SLANT: f32 = 0.0035; // 0.2°

/// A detected text region, axis-aligned, in original image pixels.
#[derive(Debug, Clone, Copy)]
pub(super) struct Region {
    pub(super) x0: f32,
    pub(super) y0: f32,
    pub(super) x1: f32,
    pub(super) y1: f32,
    /// A slanted line's rotated rectangle (top-left, top-right, bottom-right, bottom-left
    /// in image pixels): it is cut out level, not as its axis-aligned box, which for a long
    /// line at 1° already takes in half of the lines above and below.
    pub(super) quad: Option<[(f32, f32); 4]>,
}

impl Region {
    /// The height of the text band, across its own direction.
    pub(super) fn thickness(&self) -> f32 {
        match self.quad {
            Some([p0, _, _, p3]) => (p3.0 - p0.0).hypot(p3.1 - p0.1),
            None => self.h(),
        }
    }
    /// The length of the text band, along its own direction.
    pub(super) fn length(&self) -> f32 {
        match self.quad {
            Some([p0, p1, _, _]) => (p1.0 - p0.0).hypot(p1.1 - p0.1),
            None => self.w(),
        }
    }
    pub(super) fn h(&self) -> f32 {
        self.y1 - self.y0
    }
    pub(super) fn w(&self) -> f32 {
        self.x1 - self.x0
    }
}

/// DBNet post-processing: threshold the probability map, label connected components,
/// keep those whose mean probability passes `BOX_THRESH`, and grow each box by the
/// unclip distance (area × ratio ÷ perimeter).
pub(super) fn regions(
    prob: &ndarray::ArrayD<f32>,
    scale_x: f32,
    scale_y: f32,
    orig: (u32, u32),
) -> (Vec<Region>, Option<f32>) {
    let shape = prob.shape();
    let (h, w) = (shape[2], shape[3]);
    let flat = prob.as_slice().expect("detection output is contiguous");
    let p = |y: usize, x: usize| flat[y * w + x];
    // Dilate the mask by one pixel (RapidOCR's use_dilation).
    let mut mask = vec![false; h * w];
    for y in 0..h {
        for x in 0..w {
            if p(y, x) > DET_THRESH {
                for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    if y + dy < h && x + dx < w {
                        mask[(y + dy) * w + x + dx] = true;
                    }
                }
            }
        }
    }
    let mut seen = vec![false; h * w];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    let mut pix: Vec<u32> = Vec::new();
    // Angles (radians, image coordinates) of long thin components: text lines.
    let mut angles: Vec<(f32, usize)> = Vec::new();
    for start in 0..h * w {
        if !mask[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        pix.clear();
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        let (mut sum, mut n) = (0f32, 0usize);
        let (mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0f64, 0f64, 0f64, 0f64, 0f64);
        while let Some(i) = stack.pop() {
            pix.push(i as u32);
            let (y, x) = (i / w, i % w);
            let (fx, fy) = (x as f64, y as f64);
            sx += fx;
            sy += fy;
            sxx += fx * fx;
            syy += fy * fy;
            sxy += fx * fy;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
            sum += p(y, x);
            n += 1;
            let mut push = |j: usize| {
                if mask[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                push(i - 1);
            }
            if x + 1 < w {
                push(i + 1);
            }
            if y > 0 {
                push(i - w);
            }
            if y + 1 < h {
                push(i + w);
            }
        }
        let (bw, bh) = ((x1 - x0 + 1) as f32, (y1 - y0 + 1) as f32);
        if bw.min(bh) < 3.0 || n < 6 || sum / (n as f32) < BOX_THRESH {
            continue;
        }
        let mut slant = None;
        if n >= 60 {
            let nf = n as f64;
            let (mx, my) = (sx / nf, sy / nf);
            let (mu20, mu02, mu11) = (sxx / nf - mx * mx, syy / nf - my * my, sxy / nf - mx * my);
            let common = ((mu20 - mu02).powi(2) + 4.0 * mu11 * mu11).sqrt();
            let (l1, l2) = ((mu20 + mu02 + common) / 2.0, (mu20 + mu02 - common) / 2.0);
            if l2 > 0.0 && l1 / l2 > 16.0 {
                let a = (0.5 * (2.0 * mu11).atan2(mu20 - mu02)) as f32;
                angles.push((a, n));
                if a.abs() >= MIN_SLANT && a.abs() <= MAX_SKEW {
                    slant = Some(a);
                }
            }
        }
        let r = match slant {
            Some(a) => {
                // The component's extent along and across its own direction.
                let (sn, cs) = a.sin_cos();
                let (mut umin, mut umax, mut vmin, mut vmax) =
                    (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
                for &i in &pix {
                    let (x, y) = ((i as usize % w) as f32 + 0.5, (i as usize / w) as f32 + 0.5);
                    let (u, v) = (x * cs + y * sn, -x * sn + y * cs);
                    umin = umin.min(u);
                    umax = umax.max(u);
                    vmin = vmin.min(v);
                    vmax = vmax.max(v);
                }
                let (len, thick) = (umax - umin + 1.0, vmax - vmin + 1.0);
                let d = len * thick * UNCLIP_RATIO / (2.0 * (len + thick));
                let (u0, u1, v0, v1) = (
                    umin - 0.5 - d,
                    umax + 0.5 + d,
                    vmin - 0.5 - d,
                    vmax + 0.5 + d,
                );
                let at =
                    |u: f32, v: f32| ((u * cs - v * sn) * scale_x, (u * sn + v * cs) * scale_y);
                let quad = [at(u0, v0), at(u1, v0), at(u1, v1), at(u0, v1)];
                let xs = quad.map(|q| q.0);
                let ys = quad.map(|q| q.1);
                Region {
                    x0: xs.iter().copied().fold(f32::MAX, f32::min).max(0.0),
                    y0: ys.iter().copied().fold(f32::MAX, f32::min).max(0.0),
                    x1: xs
                        .iter()
                        .copied()
                        .fold(f32::MIN, f32::max)
                        .min(orig.0 as f32),
                    y1: ys
                        .iter()
                        .copied()
                        .fold(f32::MIN, f32::max)
                        .min(orig.1 as f32),
                    quad: Some(quad),
                }
            }
            None => {
                let d = bw * bh * UNCLIP_RATIO / (2.0 * (bw + bh));
                Region {
                    x0: ((x0 as f32 - d) * scale_x).max(0.0),
                    y0: ((y0 as f32 - d) * scale_y).max(0.0),
                    x1: ((x1 as f32 + 1.0 + d) * scale_x).min(orig.0 as f32),
                    y1: ((y1 as f32 + 1.0 + d) * scale_y).min(orig.1 as f32),
                    quad: None,
                }
            }
        };
        if r.w() >= 4.0 && r.h() >= 4.0 {
            out.push(r);
        }
    }
    // The median line angle, when enough lines agree on one.
    angles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let skew = (angles.len() >= 3).then(|| angles[angles.len() / 2].0);
    (out, skew)
}

impl PpOcr {
    fn detect(&self, m: &Models, img: &RgbImage) -> Result<(Vec<Region>, Option<f32>), ApiError> {
        let (w, h) = img.dimensions();
        let long = w.max(h) as f32;
        let short = w.min(h) as f32;
        let mut scale = if short < DET_MIN_SIDE as f32 {
            DET_MIN_SIDE as f32 / short
        } else {
            1.0
        };
        if long * scale > DET_MAX_SIDE as f32 {
            scale = DET_MAX_SIDE as f32 / long;
        }
        let round32 = |v: f32| (((v / 32.0).round() as u32).max(1)) * 32;
        let (dw, dh) = (round32(w as f32 * scale), round32(h as f32 * scale));
        // Shrinking: a block average, straight into the tensor; enlarging: the triangle
        // filter.
        let input = if dw <= w && dh <= h {
            shrunk_tensor(img, dw, dh, threads())
        } else {
            to_tensor(
                &[&imageops::resize(img, dw, dh, FilterType::Triangle)],
                dh,
                dw,
            )
        };
        // Detection is one run per page, and its arena the largest: released at once.
        let prob = run(&m.det, &input, true)?;
        Ok(regions(
            &prob,
            w as f32 / dw as f32,
            h as f32 / dh as f32,
            (w, h),
        ))
    }

    pub(super) fn detect_timed(
        &self,
        m: &Models,
        img: &RgbImage,
    ) -> Result<(Vec<Region>, Option<f32>), ApiError> {
        past_deadline()?;
        let t0 = std::time::Instant::now();
        let found = self.detect(m, img)?;
        tracing::debug!(
            width = img.width(),
            height = img.height(),
            regions = found.0.len(),
            detect_ms = t0.elapsed().as_millis() as u64,
            "ocr detection"
        );
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array4, ArrayD};

    use super::*;

    /// A detection output (1 × 1 × `h` × `w`) of `background`, with rectangles
    /// `(x, y, w, h, probability)` painted on.
    fn map(
        (w, h): (usize, usize),
        background: f32,
        rects: &[(usize, usize, usize, usize, f32)],
    ) -> ArrayD<f32> {
        let mut m = Array4::<f32>::from_elem((1, 1, h, w), background);
        for &(x, y, rw, rh, p) in rects {
            for yy in y..y + rh {
                for xx in x..x + rw {
                    m[[0, 0, yy, xx]] = p;
                }
            }
        }
        m.into_dyn()
    }

    /// Painted maps in, regions out: which rectangles become regions and in what order
    /// (top to bottom as the map is scanned), each region holding its rectangle in image
    /// pixels, grown by the unclip distance (at most the rectangle's short side and two map
    /// pixels each way) and kept within the image; too few lines to call a skew.
    #[test]
    fn regions_of_painted_maps() {
        struct Case {
            name: &'static str,
            /// Map width and height.
            size: (usize, usize),
            background: f32,
            /// `(x, y, w, h, probability)` in map pixels.
            rects: &'static [(usize, usize, usize, usize, f32)],
            /// Image pixels per map pixel.
            scale: f32,
            /// The rectangles (indexes into `rects`) the regions come from, in order.
            want: &'static [usize],
        }
        let cases = [
            Case {
                name: "an empty map",
                size: (64, 32),
                background: 0.0,
                rects: &[],
                scale: 1.0,
                want: &[],
            },
            Case {
                name: "one rectangle",
                size: (100, 50),
                background: 0.0,
                rects: &[(20, 20, 60, 10, 0.9)],
                scale: 1.0,
                want: &[0],
            },
            Case {
                name: "two separated rectangles, the upper first",
                size: (100, 60),
                background: 0.0,
                rects: &[(50, 35, 40, 10, 0.9), (5, 5, 40, 10, 0.9)],
                scale: 1.0,
                want: &[1, 0],
            },
            Case {
                name: "two rectangles on a map half the image's size",
                size: (100, 50),
                background: 0.0,
                rects: &[(10, 10, 30, 8, 1.0), (60, 30, 30, 8, 1.0)],
                scale: 2.0,
                want: &[0, 1],
            },
            Case {
                name: "rectangles touching the edges, clamped to the image",
                size: (100, 50),
                background: 0.0,
                rects: &[(0, 0, 40, 10, 1.0), (60, 40, 40, 10, 1.0)],
                scale: 1.0,
                want: &[0, 1],
            },
            Case {
                name: "a blob above DET_THRESH but below BOX_THRESH",
                size: (100, 50),
                background: 0.0,
                rects: &[(20, 20, 60, 10, 0.45)],
                scale: 1.0,
                want: &[],
            },
            Case {
                name: "a single pixel",
                size: (40, 40),
                background: 0.0,
                rects: &[(10, 10, 1, 1, 1.0)],
                scale: 1.0,
                want: &[],
            },
            // A background at DET_THRESH is not text but lifts the mean: only the size
            // rules drop these.
            Case {
                name: "a strip one pixel high",
                size: (60, 30),
                background: DET_THRESH,
                rects: &[(10, 10, 30, 1, 1.0)],
                scale: 1.0,
                want: &[],
            },
            Case {
                name: "a speck, kept at full scale",
                size: (40, 40),
                background: DET_THRESH,
                rects: &[(10, 10, 2, 2, 1.0)],
                scale: 1.0,
                want: &[0],
            },
            Case {
                name: "the same speck, under 4 image pixels once scaled back",
                size: (40, 40),
                background: DET_THRESH,
                rects: &[(10, 10, 2, 2, 1.0)],
                scale: 0.5,
                want: &[],
            },
        ];
        for c in cases {
            let name = c.name;
            let orig = (
                (c.size.0 as f32 * c.scale) as u32,
                (c.size.1 as f32 * c.scale) as u32,
            );
            let (found, skew) =
                regions(&map(c.size, c.background, c.rects), c.scale, c.scale, orig);
            assert_eq!(found.len(), c.want.len(), "{name}: {found:?}");
            assert_eq!(skew, None, "{name}");
            for (r, &i) in found.iter().zip(c.want) {
                let (x, y, w, h, _) = c.rects[i];
                let ink = [x, y, x + w, y + h].map(|v| v as f32 * c.scale);
                let margin = (w.min(h) as f32 + 2.0) * c.scale;
                let got = [r.x0, r.y0, r.x1, r.y1];
                assert!(r.quad.is_none(), "{name}: {r:?}");
                for k in 0..2 {
                    // Top-left: at or before the ink, by at most the margin, not below 0.
                    assert!(
                        got[k] <= ink[k] && got[k] >= (ink[k] - margin).max(0.0),
                        "{name}: region {got:?} for rectangle {ink:?}"
                    );
                    // Bottom-right: at or past the ink, by at most the margin, in the image.
                    let limit = [orig.0, orig.1][k] as f32;
                    assert!(
                        got[k + 2] >= ink[k + 2] && got[k + 2] <= (ink[k + 2] + margin).min(limit),
                        "{name}: region {got:?} for rectangle {ink:?}"
                    );
                }
            }
        }
    }

    /// A map of `lines` parallel lines, 120 × 8 map pixels, slanted by `angle` (radians,
    /// positive running down to the right).
    fn slanted(angle: f32, lines: usize) -> ArrayD<f32> {
        let (w, h) = (200, 220);
        let mut m = Array4::<f32>::zeros((1, 1, h, w));
        let drop = 120.0 * angle.tan();
        for l in 0..lines {
            let top = 20.0 + (-drop).max(0.0) + 40.0 * l as f32;
            for x in 40..160 {
                let y = top + (x - 40) as f32 * angle.tan();
                for yy in y.round() as usize..(y + 8.0).round() as usize {
                    m[[0, 0, yy, x]] = 1.0;
                }
            }
        }
        m.into_dyn()
    }

    /// Slanted lines: one region each, cut along their own direction (a quad whose top edge
    /// runs at the lines' angle) unless level; three lines or more give the page's skew,
    /// within a hundredth of a radian; two are too few to call one.
    #[test]
    fn regions_of_slanted_lines() {
        // (angle, lines, quads expected)
        let cases = [
            (0.0, 3, false),
            (0.08, 3, true),
            (-0.08, 3, true),
            (0.3, 3, true),
            (0.08, 2, true),
        ];
        for (angle, lines, quads) in cases {
            let name = format!("{lines} lines at {angle} rad");
            let (found, skew) = regions(&slanted(angle, lines), 1.0, 1.0, (200, 220));
            assert_eq!(found.len(), lines, "{name}: {found:?}");
            match skew {
                Some(s) if lines >= 3 => assert!((s - angle).abs() < 0.01, "{name}: skew {s}"),
                None if lines < 3 => {}
                other => panic!("{name}: skew {other:?}"),
            }
            for r in &found {
                assert_eq!(r.quad.is_some(), quads, "{name}: {r:?}");
                if let Some([p0, p1, _, _]) = r.quad {
                    let edge = (p1.1 - p0.1).atan2(p1.0 - p0.0);
                    assert!((edge - angle).abs() < 0.01, "{name}: top edge at {edge}");
                    assert!(r.thickness() < r.h(), "{name}: {r:?}");
                    assert!(r.length() > 120.0, "{name}: {r:?}");
                }
            }
        }
    }
}
