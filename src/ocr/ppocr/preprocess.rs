//! Images into model inputs: normalised tensors of a page (`to_tensor`, `shrunk_tensor`)
//! and of a line (`line_tensor`), and the pixels lines are cut from (`Crop`, `crop`, `warp`,
//! `sample`) or a skewed page levelled into (`deskew`).

use std::borrow::Cow;

use image::imageops;
use image::RgbImage;
use ndarray::Array4;

use super::detect::Region;

/// Normalised NCHW tensor of an RGB image, channels in BGR order (as the models were
/// trained), `(x/255 - 0.5) / 0.5`, padded with zeros to `width`.
pub(super) fn to_tensor(imgs: &[&RgbImage], height: u32, width: u32) -> Array4<f32> {
    let (h, w) = (height as usize, width as usize);
    let mut t = Array4::<f32>::zeros((imgs.len(), 3, h, w));
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let plane = h * w;
    for (n, img) in imgs.iter().enumerate() {
        let (iw, ih) = (img.width() as usize, img.height() as usize);
        let raw = img.as_raw();
        let base = n * 3 * plane;
        for y in 0..ih.min(h) {
            for x in 0..iw.min(w) {
                let p = (y * iw + x) * 3;
                let o = base + y * w + x;
                // BGR planes, (v/255 - 0.5) / 0.5.
                buf[o] = raw[p + 2] as f32 / 127.5 - 1.0;
                buf[o + plane] = raw[p + 1] as f32 / 127.5 - 1.0;
                buf[o + 2 * plane] = raw[p] as f32 / 127.5 - 1.0;
            }
        }
    }
    t
}

/// `img` shrunk to `width` × `height` and normalised as `to_tensor` does, in one pass on
/// `threads` threads. Each output pixel is the rounded mean of the whole source pixels its
/// area starts in: exactly `imageops::thumbnail` (its integer block average) followed by
/// `to_tensor`, at a fifth of the time (thumbnail reads pixel by pixel through a generic
/// view; on an A4 scan it took 50–90 ms on the reading's critical path, this 12–20 ms).
/// Shrinking only: `width` ≤ the image's width and `height` ≤ its height.
pub(super) fn shrunk_tensor(
    img: &RgbImage,
    width: u32,
    height: u32,
    threads: usize,
) -> Array4<f32> {
    // Output pixel `o` averages source pixels `ceil(o·r) .. ceil((o+1)·r)`, r = src/dst,
    // with thumbnail's f32 arithmetic.
    fn spans(src: u32, dst: u32) -> Vec<(usize, usize)> {
        let ratio = src as f32 / dst as f32;
        (0..dst)
            .map(|o| {
                let from = o as f32 * ratio;
                let start = (from.ceil() as u32).min(src - 1);
                let end = ((from + ratio).ceil() as u32).clamp(start + 1, src);
                (start as usize, end as usize)
            })
            .collect()
    }
    let (w, h) = img.dimensions();
    let (dw, dh) = (width as usize, height as usize);
    let mut t = Array4::<f32>::zeros((1, 3, dh, dw));
    if dw == 0 || dh == 0 || w == 0 || h == 0 {
        return t;
    }
    let (cols, rows) = (spans(w, width), spans(h, height));
    let raw = img.as_raw();
    let stride = w as usize * 3;
    let plane = dw * dh;
    // Output rows `first ..` into the three planes' matching slices (B, G, R).
    let fill = |first: usize, b: &mut [f32], g: &mut [f32], r: &mut [f32]| {
        let mut sum = vec![0u32; dw * 3];
        for (k, &(top, bottom)) in rows[first..first + b.len() / dw].iter().enumerate() {
            sum.fill(0);
            for line in raw[top * stride..bottom * stride].chunks_exact(stride) {
                for (acc, &(left, right)) in sum.chunks_exact_mut(3).zip(&cols) {
                    for p in line[left * 3..right * 3].chunks_exact(3) {
                        acc[0] += p[0] as u32;
                        acc[1] += p[1] as u32;
                        acc[2] += p[2] as u32;
                    }
                }
            }
            let o = k * dw;
            for (x, (acc, &(left, right))) in sum.chunks_exact(3).zip(&cols).enumerate() {
                let n = ((right - left) * (bottom - top)) as u32;
                let mean = |s: u32| ((s + n / 2) / n).min(255) as f32 / 127.5 - 1.0;
                r[o + x] = mean(acc[0]);
                g[o + x] = mean(acc[1]);
                b[o + x] = mean(acc[2]);
            }
        }
    };
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let (b, rest) = buf.split_at_mut(plane);
    let (g, r) = rest.split_at_mut(plane);
    let per = dh.div_ceil(threads.clamp(1, dh)) * dw;
    let fill = &fill;
    std::thread::scope(|s| {
        let parts = b
            .chunks_mut(per)
            .zip(g.chunks_mut(per))
            .zip(r.chunks_mut(per));
        let mut parts: Vec<_> = parts.enumerate().collect();
        // The last part on this thread, the others on their own.
        let (i, ((b, g), r)) = parts.pop().expect("at least one output row");
        for (j, ((b, g), r)) in parts {
            s.spawn(move || fill(j * per / dw, b, g, r));
        }
        fill(i * per / dw, b, g, r);
    });
    t
}

/// The parallelogram at `p0` spanned by `p1 - p0` (along) and `p3 - p0` (across), cut out
/// as an upright rectangle (bilinear; outside the image is white).
fn warp(img: &RgbImage, p0: (f32, f32), p1: (f32, f32), p3: (f32, f32)) -> RgbImage {
    let len = ((p1.0 - p0.0).hypot(p1.1 - p0.1)).round().max(1.0);
    let thick = ((p3.0 - p0.0).hypot(p3.1 - p0.1)).round().max(1.0);
    let (ux, uy) = ((p1.0 - p0.0) / len, (p1.1 - p0.1) / len);
    let (vx, vy) = ((p3.0 - p0.0) / thick, (p3.1 - p0.1) / thick);
    RgbImage::from_fn(len as u32, thick as u32, |u, v| {
        let (fu, fv) = (u as f32 + 0.5, v as f32 + 0.5);
        let sx = p0.0 + fu * ux + fv * vx - 0.5;
        let sy = p0.1 + fu * uy + fv * vy - 0.5;
        sample(img, sx, sy)
    })
}

/// The image at a fractional position, bilinear; white outside it.
fn sample(img: &RgbImage, sx: f32, sy: f32) -> image::Rgb<u8> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if !(sx >= 0.0 && sy >= 0.0 && sx <= (w - 1) as f32 && sy <= (h - 1) as f32) {
        return image::Rgb([255, 255, 255]);
    }
    let (x0, y0) = (sx as usize, sy as usize);
    // Offsets to the right and lower neighbours (none at the last column or row).
    let dx = if x0 + 1 < w { 3 } else { 0 };
    let dy = if y0 + 1 < h { 3 * w } else { 0 };
    let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
    let (w00, w01) = ((1.0 - fx) * (1.0 - fy), fx * (1.0 - fy));
    let (w10, w11) = ((1.0 - fx) * fy, fx * fy);
    let raw = img.as_raw();
    let at = 3 * (y0 * w + x0);
    let (r0, r1) = (&raw[at..at + 3 + dx], &raw[at + dy..at + dy + 3 + dx]);
    let mut out = [0u8; 3];
    for (ch, o) in out.iter_mut().enumerate() {
        let v = r0[ch] as f32 * w00
            + r0[ch + dx] as f32 * w01
            + r1[ch] as f32 * w10
            + r1[ch + dx] as f32 * w11;
        *o = (v + 0.5).min(255.0) as u8;
    }
    image::Rgb(out)
}

/// Rotate an image so that lines at `angle` (radians, image coordinates: positive runs
/// down to the right) become level; the canvas grows to keep every pixel, filled white.
pub(super) fn deskew(img: &RgbImage, angle: f32) -> RgbImage {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let (s, c) = angle.sin_cos();
    let nw = (w * c.abs() + h * s.abs()).ceil() as u32;
    let nh = (w * s.abs() + h * c.abs()).ceil() as u32;
    let (cx, cy, ncx, ncy) = (w / 2.0, h / 2.0, nw as f32 / 2.0, nh as f32 / 2.0);
    RgbImage::from_fn(nw, nh, |x, y| {
        let (dx, dy) = (x as f32 - ncx, y as f32 - ncy);
        sample(img, cx + c * dx - s * dy, cy + s * dx + c * dy)
    })
}

/// A line's pixels: a rectangle of the page (borrowed, not copied), or a levelled copy of
/// a slanted line.
pub(super) struct Crop<'a> {
    img: Cow<'a, RgbImage>,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

impl Crop<'_> {
    pub(super) fn whole(img: RgbImage) -> Crop<'static> {
        let (w, h) = img.dimensions();
        Crop {
            img: Cow::Owned(img),
            x: 0,
            y: 0,
            w,
            h,
        }
    }
    pub(super) fn width(&self) -> u32 {
        self.w
    }
    pub(super) fn height(&self) -> u32 {
        self.h
    }
    /// Columns `x .. x + w` of this crop.
    pub(super) fn columns(&self, x: u32, w: u32) -> Crop<'_> {
        Crop {
            img: Cow::Borrowed(&*self.img),
            x: self.x + x,
            y: self.y,
            w,
            h: self.h,
        }
    }
    /// A copy turned 180°.
    pub(super) fn turned(&self) -> Crop<'static> {
        Crop::whole(imageops::rotate180(&self.to_image()))
    }
    /// A copy of these pixels alone.
    pub(super) fn to_image(&self) -> RgbImage {
        imageops::crop_imm(&*self.img, self.x, self.y, self.w, self.h).to_image()
    }
}

pub(super) fn crop<'a>(img: &'a RgbImage, r: &Region) -> Crop<'a> {
    if let Some([p0, p1, _, p3]) = r.quad {
        return Crop::whole(warp(img, p0, p1, p3));
    }
    let (x, y) = (r.x0 as u32, r.y0 as u32);
    let w = (r.x1 as u32)
        .saturating_sub(x)
        .max(1)
        .min(img.width() - x.min(img.width() - 1));
    let h = (r.y1 as u32)
        .saturating_sub(y)
        .max(1)
        .min(img.height() - y.min(img.height() - 1));
    Crop {
        img: Cow::Borrowed(img),
        x: x.min(img.width() - 1),
        y: y.min(img.height() - 1),
        w,
        h,
    }
}

/// `src` resized to `width` × `height` and normalised into a tensor `pad_to` wide (zeros
/// beyond `width`): exactly `imageops::resize(.., FilterType::Triangle)` then `to_tensor`,
/// the same arithmetic in the same order, without copying the crop out of the page, the
/// generic per-pixel access and the intermediate RGBA image.
pub(super) fn line_tensor(src: &Crop, width: u32, height: u32, pad_to: u32) -> Array4<f32> {
    /// Per output pixel: its first source pixel and the normalised weights, as image's
    /// `vertical_sample` and `horizontal_sample` compute them for the triangle filter.
    fn taps(src: u32, dst: u32) -> Vec<(usize, Vec<f32>)> {
        let ratio = src as f32 / dst as f32;
        let sratio = if ratio < 1.0 { 1.0 } else { ratio };
        (0..dst)
            .map(|o| {
                let centre = (o as f32 + 0.5) * ratio;
                let left = ((centre - sratio).floor() as i64).clamp(0, src as i64 - 1);
                let right = ((centre + sratio).ceil() as i64).clamp(left + 1, src as i64);
                let centre = centre - 0.5;
                let mut ws: Vec<f32> = (left..right)
                    .map(|i| {
                        let d = ((i as f32 - centre) / sratio).abs();
                        if d < 1.0 {
                            1.0 - d
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let mut sum = 0.0;
                for w in &ws {
                    sum += w;
                }
                for w in ws.iter_mut() {
                    *w /= sum;
                }
                (left as usize, ws)
            })
            .collect()
    }
    let (sw, dw, dh) = (src.w as usize, width as usize, height as usize);
    let pw = pad_to.max(width) as usize;
    let mut t = Array4::<f32>::zeros((1, 3, dh, pw));
    if sw == 0 || src.h == 0 || dw == 0 || dh == 0 {
        return t;
    }
    let raw = src.img.as_raw();
    let stride = src.img.width() as usize * 3;
    let first = src.y as usize * stride + src.x as usize * 3;
    // Vertical pass, into f32 rows as wide as the source.
    let mut tmp = vec![0f32; sw * 3 * dh];
    for (row, (top, ws)) in tmp.chunks_exact_mut(sw * 3).zip(taps(src.h, height)) {
        let lines: Vec<&[u8]> = (0..ws.len())
            .map(|i| {
                let at = first + (top + i) * stride;
                &raw[at..at + sw * 3]
            })
            .collect();
        for (x, acc) in row.chunks_exact_mut(3).enumerate() {
            let (mut r, mut g, mut b) = (0f32, 0f32, 0f32);
            for (line, w) in lines.iter().zip(&ws) {
                let p = &line[x * 3..x * 3 + 3];
                r += p[0] as f32 * w;
                g += p[1] as f32 * w;
                b += p[2] as f32 * w;
            }
            acc.copy_from_slice(&[r, g, b]);
        }
    }
    // Horizontal pass, rounded to 8 bits as image does, into the BGR planes.
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let plane = dh * pw;
    // Rounded half away from zero, as `f32::round` (a libm call on baseline x86-64).
    let level = |v: f32| {
        let v = v.clamp(0.0, 255.0);
        let t = v as u8;
        let r = if v - t as f32 >= 0.5 { t + 1 } else { t };
        r as f32 / 127.5 - 1.0
    };
    for (x, (left, ws)) in taps(src.w, width).into_iter().enumerate() {
        for (y, row) in tmp.chunks_exact(sw * 3).enumerate() {
            let (mut r, mut g, mut b) = (0f32, 0f32, 0f32);
            for (p, w) in row[left * 3..].chunks_exact(3).zip(&ws) {
                r += p[0] * w;
                g += p[1] * w;
                b += p[2] * w;
            }
            let o = y * pw + x;
            buf[o] = level(b);
            buf[o + plane] = level(g);
            buf[o + 2 * plane] = level(r);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use image::imageops::FilterType;

    use super::super::hello_png;
    use super::*;

    /// The detection input made in one pass is exactly thumbnail's block average then
    /// `to_tensor`, whatever the ratio (1 included) and however many threads share it.
    #[test]
    fn shrunk_tensors_are_thumbnails() {
        let img = hello_png();
        for (w, h) in [(448, 96), (900, 192), (301, 67), (899, 200), (1, 1)] {
            let slow = to_tensor(&[&imageops::thumbnail(&img, w, h)], h, w);
            for threads in [1, 2, 3] {
                assert!(
                    shrunk_tensor(&img, w, h, threads) == slow,
                    "{w}×{h} on {threads} threads differs"
                );
            }
        }
    }

    /// A line's tensor made in one pass is exactly `imageops::resize` (triangle) then
    /// `to_tensor`: crops anywhere on the page, shrunk, enlarged, kept at size, padded.
    #[test]
    fn line_tensors_are_resized_crops() {
        let img = hello_png();
        let cases = [
            // (x, y, w, h) of the crop, output width and height, padded width
            (0, 0, 900, 200, 216, 48, 216),
            (37, 61, 611, 57, 515, 48, 515),
            (100, 80, 30, 20, 72, 48, 160),
            (5, 9, 400, 48, 400, 48, 400),
            (899, 199, 1, 1, 16, 48, 160),
            (300, 50, 120, 30, 120, 48, 192),
        ];
        for (x, y, w, h, dw, dh, pad) in cases {
            let c = Crop {
                img: Cow::Borrowed(&img),
                x,
                y,
                w,
                h,
            };
            let slow = to_tensor(
                &[&imageops::resize(
                    &c.to_image(),
                    dw,
                    dh,
                    FilterType::Triangle,
                )],
                dh,
                pad,
            );
            assert!(
                line_tensor(&c, dw, dh, pad) == slow,
                "crop {x},{y} {w}×{h} to {dw}×{dh} (pad {pad}) differs"
            );
        }
    }
}
