//! Text in an optional-content layer that is off in the default view (issue #41): no
//! viewer draws it, yet PDFium's text layer holds it. PDFium's renderer follows the
//! document's default layer configuration (`/OCProperties /D`, membership dictionaries
//! too), but pdfium-render shows neither content marks nor the catalog, so:
//!
//! - a document is looked at only when it may have optional content (`may_have_layers`:
//!   `/OCProperties` in its bytes or in one of its object streams inflated, up to a cap;
//!   also when the bytes could hide the name);
//! - then it is opened a second time through PDFium's own calls (the file mapped, not
//!   read), and each page read is loaded there too: objects inside a `/OC … BDC` section
//!   (their own mark, or a form drawn inside one) are found by their content marks, and
//!   the layers by their group's `Name`;
//! - a page with text in layers is rendered as a viewer shows it, then again each time
//!   one more layer's marks are taken off that copy of the page; a text object of that
//!   layer whose box gains ink against the rendering before was hidden by it:
//!   `hidden_layer`. A layer that is on changes nothing, so its text is never listed,
//!   whatever other layer's ink lies on the same spot.
//!
//! A form XObject made optional by an `/OC` entry in its own dictionary (not a mark) is not
//! seen by this check.

use std::os::fd::AsRawFd;

use pdfium_render::prelude::*;

use super::geometry::{Affine, Rect};
use super::hidden::PageHidden;

/// Objects walked on one page at most (forms included), and forms nested deeper than this
/// are not walked: as the other checks do.
const MAX_OBJECTS: usize = 50_000;
const MAX_DEPTH: usize = 8;
/// Object-stream bytes inflated while looking for `/OCProperties`; past it the document is
/// taken to have layers (looked at page by page).
const MAX_INFLATED: u64 = 64 << 20;
/// Rendering: a pixel a point (a 10 pt line is 10 pixels tall, its glyphs' ink plain), at
/// most four megapixels a page (and `render::bitmap_size`'s cap a side).
const MAX_SCALE: f32 = 1.0;
const MAX_PIXELS: f32 = 4.0e6;
/// A pixel changed by more than this (largest channel difference) is ink the layer hid:
/// both drawings are PDFium's of the same page, so any real change is ink (light gray
/// small print too).
const INK: u8 = 16;
/// Layers looked at one by one on a page (the rest together), text objects in layers
/// looked at, and pixels compared, on one page at most.
const MAX_STEPS: usize = 8;
const MAX_TEXTS: usize = 5_000;
const MAX_VISITS: u64 = 64_000_000;

/// The file, mapped read-only for PDFium's second handle (the pages are read on demand,
/// not copied).
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn open(path: &std::path::Path) -> Option<Mapped> {
        let file = std::fs::File::open(path).ok()?;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: a private read-only mapping of a file open for reading; unmapped on drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapped { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped at `ptr` for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// A document with optional content, opened a second time for the layer check.
pub(super) struct Layers {
    bindings: &'static dyn PdfiumLibraryBindings,
    doc: FPDF_DOCUMENT,
    // Declared after `doc`: PDFium reads the mapping until the document is closed (in
    // `drop`, before the fields are dropped).
    _file: Mapped,
}

impl Drop for Layers {
    fn drop(&mut self) {
        // SAFETY: the document opened in `open`, closed once; no page of it is left open
        // (`hidden` closes what it loads).
        unsafe { self.bindings.FPDF_CloseDocument(self.doc) }
    }
}

impl Layers {
    /// `None` unless the document has optional content (and opens again).
    pub(super) fn open(
        pdfium: &'static Pdfium,
        path: &std::path::Path,
        passwords: &[String],
    ) -> Option<Layers> {
        if !super::hidden::checks_on() {
            return None;
        }
        let file = Mapped::open(path)?;
        if !may_have_layers(file.bytes()) {
            return None;
        }
        let bindings: &'static dyn PdfiumLibraryBindings = pdfium.bindings();
        let mut tries: Vec<Option<&str>> = passwords.iter().map(|p| Some(p.as_str())).collect();
        if tries.is_empty() {
            tries.push(None);
        }
        for pw in tries {
            // SAFETY: the bytes outlive the document (both held by `Layers`, the document
            // closed first).
            let doc = unsafe { bindings.FPDF_LoadMemDocument(file.bytes(), pw) };
            if !doc.is_null() {
                return Some(Layers {
                    bindings,
                    doc,
                    _file: file,
                });
            }
        }
        None
    }

    /// The text objects of page `index` (0-based) that a layer off in the default view
    /// hides, as `hidden_layer`, their boxes as PDFium gives them (a form's objects in
    /// the form's space), as the page's other findings give them.
    pub(super) fn hidden(&self, index: i32) -> Vec<PageHidden> {
        let b = self.bindings;
        // SAFETY: every handle comes from PDFium for this document and is used while its
        // page is loaded; the page (and its text page) are closed before returning.
        unsafe {
            let page = b.FPDF_LoadPage(self.doc, index);
            if page.is_null() {
                return Vec::new();
            }
            let out = self.page_hidden(page);
            b.FPDF_ClosePage(page);
            out
        }
    }

    unsafe fn page_hidden(&self, page: FPDF_PAGE) -> Vec<PageHidden> {
        let b = self.bindings;
        let mut walk = Walk::default();
        for i in 0..b.FPDFPage_CountObjects(page).max(0) {
            let o = b.FPDFPage_GetObject(page, i);
            if !o.is_null() {
                walk.visit(b, o, None, &[], 0);
            }
        }
        if walk.texts.is_empty() {
            return Vec::new();
        }
        let (w, h) = (b.FPDF_GetPageWidthF(page), b.FPDF_GetPageHeightF(page));
        let Some((pw, ph)) = super::render::bitmap_size(w, h, MAX_SCALE, MAX_PIXELS) else {
            return Vec::new();
        };
        // Each text's box in the page's pixels, and the region holding them all: only that
        // region is drawn (a layer's words on a map are a small part of it).
        let to_device = |x: f32, y: f32| {
            let (mut dx, mut dy) = (0, 0);
            (b.FPDF_PageToDevice(
                page,
                0,
                0,
                pw,
                ph,
                0,
                f64::from(x),
                f64::from(y),
                &mut dx,
                &mut dy,
            ) != 0)
                .then_some((dx, dy))
        };
        let boxes: Vec<Option<[i32; 4]>> = walk
            .texts
            .iter()
            .map(|t| {
                let r = t.page_rect()?;
                let (p, q) = (to_device(r[0], r[1])?, to_device(r[2], r[3])?);
                let (x0, x1) = (p.0.min(q.0).clamp(0, pw), p.0.max(q.0).clamp(0, pw));
                let (y0, y1) = (p.1.min(q.1).clamp(0, ph), p.1.max(q.1).clamp(0, ph));
                (x1 > x0 && y1 > y0).then_some([x0, y0, x1, y1])
            })
            .collect();
        let Some(clip) = boxes.iter().flatten().copied().reduce(|a, c| {
            [
                a[0].min(c[0]),
                a[1].min(c[1]),
                a[2].max(c[2]),
                a[3].max(c[3]),
            ]
        }) else {
            return Vec::new();
        };
        let Some(mut before) = render(b, page, pw, ph, clip) else {
            return Vec::new();
        };
        // Layer by layer: its marks taken off, the page drawn again, and its text whose box
        // gains ink against the drawing before was hidden by it. A layer that is on
        // changes nothing; another layer's ink (a second language set on the same spot)
        // is not this layer's. Layers past MAX_STEPS go in one last step.
        // Only layers holding text are taken off (the others stay as shown in every
        // rendering, so they change none of the differences).
        let mut texty: Vec<usize> = walk.texts.iter().flat_map(|t| t.groups.clone()).collect();
        texty.sort_unstable();
        texty.dedup();
        let steps = texty.len().min(MAX_STEPS);
        let mut hidden = vec![false; walk.texts.len()];
        let mut budget = MAX_VISITS;
        for step in 0..steps {
            let now: &[usize] = if step + 1 == steps {
                &texty[step..]
            } else {
                &texty[step..=step]
            };
            let in_step = |g: usize| now.contains(&g);
            for (o, groups) in &walk.marked {
                if groups.iter().any(|&g| in_step(g)) {
                    remove_layer_marks(b, *o, &walk.groups, &in_step);
                }
            }
            let Some(after) = render(b, page, pw, ph, clip) else {
                break;
            };
            for (k, t) in walk.texts.iter().enumerate() {
                if hidden[k] || !t.groups.iter().any(|&g| in_step(g)) {
                    continue;
                }
                let Some([x0, y0, x1, y1]) = boxes[k] else {
                    continue;
                };
                // In the region's pixels.
                let (p, q) = ((x0 - clip[0], y0 - clip[1]), (x1 - clip[0], y1 - clip[1]));
                let (cw, ch) = (clip[2] - clip[0], clip[3] - clip[1]);
                hidden[k] = gained_ink(&before, &after, cw, ch, p, q, &mut budget);
            }
            before = after;
        }
        if !hidden.contains(&true) {
            return Vec::new();
        }
        let text_page = b.FPDFText_LoadPage(page);
        if text_page.is_null() {
            return Vec::new();
        }
        let mut found = PageHidden {
            kind: crate::findings::FindingKind::HiddenLayer,
            text: String::new(),
            boxes: Vec::new(),
        };
        for (t, _) in walk.texts.iter().zip(&hidden).filter(|(_, h)| **h) {
            let text = object_text(b, t.handle, text_page);
            if text.trim().is_empty() {
                continue;
            }
            if !found.text.is_empty() {
                found.text.push(' ');
            }
            found.text.push_str(text.trim());
            found.boxes.push(t.bounds);
        }
        b.FPDFText_ClosePage(text_page);
        if found.text.is_empty() {
            return Vec::new();
        }
        vec![found]
    }
}

/// A text object in an optional-content section, met on the walk.
struct Text {
    handle: FPDF_PAGEOBJECT,
    /// Its bounds as PDFium gives them (a form's objects in the form's space).
    bounds: [f32; 4],
    /// The forms' matrix onto the page.
    form: Option<Affine>,
    /// The layers it is drawn in (its own marks and those of the forms around it), as
    /// indexes of `Walk::groups`.
    groups: Vec<usize>,
}

impl Text {
    /// Its box on the page: left, bottom, right, top.
    fn page_rect(&self) -> Option<[f32; 4]> {
        let [l, b, r, t] = self.bounds;
        let r = Rect { l, b, r, t };
        let r = self.form.map_or(r, |m| m.rect(r));
        let out = [r.l, r.b, r.r, r.t];
        out.iter().all(|v| v.is_finite()).then_some(out)
    }
}

#[derive(Default)]
struct Walk {
    /// Text objects drawn in some layer (at most MAX_TEXTS).
    texts: Vec<Text>,
    /// Objects carrying `/OC` marks, with the layers those marks name.
    marked: Vec<(FPDF_PAGEOBJECT, Vec<usize>)>,
    /// The layers met, by the `Name` of their group (an unnamed one, a membership
    /// dictionary, is "").
    groups: Vec<String>,
    seen: usize,
}

const FPDF_PAGEOBJ_TEXT: i32 = 1;
const FPDF_PAGEOBJ_FORM: i32 = 5;

impl Walk {
    unsafe fn visit(
        &mut self,
        b: &dyn PdfiumLibraryBindings,
        o: FPDF_PAGEOBJECT,
        form: Option<Affine>,
        outer: &[usize],
        depth: usize,
    ) {
        if self.seen >= MAX_OBJECTS {
            return;
        }
        self.seen += 1;
        let own = self.layer_marks(b, o);
        let mut groups = outer.to_vec();
        for &g in &own {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        if !own.is_empty() {
            self.marked.push((o, own));
        }
        match b.FPDFPageObj_GetType(o) {
            FPDF_PAGEOBJ_TEXT if !groups.is_empty() && self.texts.len() < MAX_TEXTS => {
                let (mut l, mut bo, mut r, mut t) = (0f32, 0f32, 0f32, 0f32);
                if b.FPDFPageObj_GetBounds(o, &mut l, &mut bo, &mut r, &mut t) != 0 {
                    self.texts.push(Text {
                        handle: o,
                        bounds: [l, bo, r, t],
                        form,
                        groups,
                    });
                }
            }
            FPDF_PAGEOBJ_FORM if depth < MAX_DEPTH => {
                let mut m = FS_MATRIX {
                    a: 1.0,
                    b: 0.0,
                    c: 0.0,
                    d: 1.0,
                    e: 0.0,
                    f: 0.0,
                };
                let own = (b.FPDFPageObj_GetMatrix(o, &mut m) != 0)
                    .then_some(Affine([m.a, m.b, m.c, m.d, m.e, m.f]));
                let place = match (form, own) {
                    (Some(outer), Some(inner)) => Some(outer.then(&inner)),
                    (None, inner) => inner,
                    (outer, None) => outer,
                };
                for j in 0..b.FPDFFormObj_CountObjects(o).max(0) {
                    let k = b.FPDFFormObj_GetObject(o, j as libc::c_ulong);
                    if !k.is_null() {
                        self.visit(b, k, place, &groups, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// The layers an object's own `/OC` marks name.
    unsafe fn layer_marks(
        &mut self,
        b: &dyn PdfiumLibraryBindings,
        o: FPDF_PAGEOBJECT,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for i in 0..b.FPDFPageObj_CountMarks(o).max(0) {
            let m = b.FPDFPageObj_GetMark(o, i as libc::c_ulong);
            if m.is_null() || mark_name(b, m) != "OC" {
                continue;
            }
            let key = layer_name(b, m);
            let g = match self.groups.iter().position(|k| *k == key) {
                Some(g) => g,
                None => {
                    self.groups.push(key);
                    self.groups.len() - 1
                }
            };
            if !out.contains(&g) {
                out.push(g);
            }
        }
        out
    }
}

/// A string PDFium writes as UTF-16 with its length in bytes (`get(buffer, bytes, &mut
/// written)`, false when it has none), cut at `N` characters.
unsafe fn utf16<const N: usize>(
    get: impl FnOnce(*mut FPDF_WCHAR, libc::c_ulong, *mut libc::c_ulong) -> FPDF_BOOL,
) -> String {
    let mut buf = [0u16; N];
    let mut len: libc::c_ulong = 0;
    if get(
        buf.as_mut_ptr(),
        std::mem::size_of_val(&buf) as libc::c_ulong,
        &mut len,
    ) == 0
    {
        return String::new();
    }
    // `len` counts bytes with the terminating NUL.
    let n = ((len as usize) / 2).min(N);
    String::from_utf16_lossy(&buf[..n])
        .trim_end_matches('\0')
        .to_string()
}

/// A content mark's name (one longer than 16 characters is not `OC` anyway).
unsafe fn mark_name(b: &dyn PdfiumLibraryBindings, mark: FPDF_PAGEOBJECTMARK) -> String {
    utf16::<16>(|buf, n, out| b.FPDFPageObjMark_GetName(mark, buf, n, out))
}

/// The `Name` of the optional-content group an `/OC` mark refers to ("" when it has none:
/// a membership dictionary).
unsafe fn layer_name(b: &dyn PdfiumLibraryBindings, mark: FPDF_PAGEOBJECTMARK) -> String {
    utf16::<128>(|buf, n, out| b.FPDFPageObjMark_GetParamStringValue(mark, "Name", buf, n, out))
}

/// Takes off an object's `/OC` marks of the layers `which` picks.
unsafe fn remove_layer_marks(
    b: &dyn PdfiumLibraryBindings,
    o: FPDF_PAGEOBJECT,
    groups: &[String],
    which: &dyn Fn(usize) -> bool,
) {
    for i in (0..b.FPDFPageObj_CountMarks(o).max(0)).rev() {
        let m = b.FPDFPageObj_GetMark(o, i as libc::c_ulong);
        if m.is_null() || mark_name(b, m) != "OC" {
            continue;
        }
        let key = layer_name(b, m);
        if groups.iter().position(|k| *k == key).is_some_and(which) {
            b.FPDFPageObj_RemoveMark(o, m);
        }
    }
}

/// The region `clip` (left, top, right, bottom, in the pixels of the page drawn `pw` ×
/// `ph`) of the page drawn on white, as a viewer shows it (annotations left out): BGRx
/// rows of the region's width.
unsafe fn render(
    b: &dyn PdfiumLibraryBindings,
    page: FPDF_PAGE,
    pw: i32,
    ph: i32,
    clip: [i32; 4],
) -> Option<Vec<u8>> {
    let (cw, ch) = (clip[2] - clip[0], clip[3] - clip[1]);
    if cw <= 0 || ch <= 0 {
        return None;
    }
    let bitmap = b.FPDFBitmap_Create(cw, ch, 0);
    if bitmap.is_null() {
        return None;
    }
    b.FPDFBitmap_FillRect(bitmap, 0, 0, cw, ch, 0xFFFF_FFFF);
    // The whole page placed so that the region falls on the bitmap; PDFium draws what
    // lands on it.
    b.FPDF_RenderPageBitmap(bitmap, page, -clip[0], -clip[1], pw, ph, 0, 0);
    let stride = b.FPDFBitmap_GetStride(bitmap).max(0) as usize;
    let buffer = b.FPDFBitmap_GetBuffer(bitmap) as *const u8;
    let row = cw as usize * 4;
    let out = (!buffer.is_null() && stride >= row).then(|| {
        let mut out = Vec::with_capacity(row * ch as usize);
        for y in 0..ch as usize {
            out.extend_from_slice(std::slice::from_raw_parts(buffer.add(y * stride), row));
        }
        out
    });
    b.FPDFBitmap_Destroy(bitmap);
    out
}

/// Whether the box between two device points holds ink in `after` that `before` lacks:
/// 2 % of its pixels or more (a glyph line covers a fifth of its box or so). `budget`:
/// pixels left to look at on the page (a page of a million overlapping page-sized boxes
/// is looked at up to it, then no more).
fn gained_ink(
    before: &[u8],
    after: &[u8],
    pw: i32,
    ph: i32,
    p: (i32, i32),
    q: (i32, i32),
    budget: &mut u64,
) -> bool {
    let (x0, x1) = (p.0.min(q.0).clamp(0, pw), p.0.max(q.0).clamp(0, pw));
    let (y0, y1) = (p.1.min(q.1).clamp(0, ph), p.1.max(q.1).clamp(0, ph));
    if x1 - x0 < 1 || y1 - y0 < 1 {
        return false;
    }
    let area = (x1 - x0) as u64 * (y1 - y0) as u64;
    if area > *budget {
        *budget = 0;
        return false;
    }
    *budget -= area;
    let (mut changed, mut total) = (0u64, 0u64);
    for y in y0..y1 {
        let row = y as usize * pw as usize * 4;
        for x in x0..x1 {
            let i = row + x as usize * 4;
            let (Some(a), Some(z)) = (before.get(i..i + 3), after.get(i..i + 3)) else {
                continue;
            };
            total += 1;
            if a.iter().zip(z).any(|(u, v)| u.abs_diff(*v) > INK) {
                changed += 1;
            }
        }
    }
    total > 0 && changed >= 4 && changed * 50 >= total
}

unsafe fn object_text(
    b: &dyn PdfiumLibraryBindings,
    o: FPDF_PAGEOBJECT,
    text_page: FPDF_TEXTPAGE,
) -> String {
    let n = b.FPDFTextObj_GetText(o, text_page, std::ptr::null_mut(), 0);
    if n == 0 || n > 1 << 20 {
        return String::new();
    }
    let mut buf = vec![0u16; (n as usize).div_ceil(2)];
    let got = b.FPDFTextObj_GetText(o, text_page, buf.as_mut_ptr(), n);
    let k = ((got as usize) / 2).min(buf.len());
    String::from_utf16_lossy(&buf[..k])
        .trim_end_matches('\0')
        .to_string()
}

/// Whether the document may have optional content: `/OCProperties` (the catalog's entry)
/// in its bytes, or in an object stream inflated (up to `MAX_INFLATED` bytes in all). It
/// may too — and is looked at page by page — when the bytes could hide the name: a name
/// beginning `/O` written with `#` escapes (`/OCPropert#69es` is the same name to a PDF
/// reader), an object stream with decode parameters (a predictor scrambles the inflated
/// bytes), whose data is not found, or that does not inflate (encrypted), or more object
/// streams than the cap.
fn may_have_layers(bytes: &[u8]) -> bool {
    use std::io::Read;
    const KEY: &[u8] = b"/OCProperties";
    if memchr::memmem::find(bytes, KEY).is_some() {
        return true;
    }
    // A name's characters: printable ASCII but the delimiters (binary stream data rarely
    // runs so long in them, and an escape is `#` and two hex digits).
    let is_name_char = |c: u8| c.is_ascii_graphic() && !b"/[]<>(){}%".contains(&c);
    for at in memchr::memmem::find_iter(bytes, b"/O") {
        let name: Vec<u8> = bytes[at + 1..]
            .iter()
            .take(64)
            .take_while(|&&c| is_name_char(c))
            .copied()
            .collect();
        if name
            .windows(3)
            .any(|w| w[0] == b'#' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
        {
            return true;
        }
    }
    let mut budget = MAX_INFLATED;
    // Where the last stream inflated ended: a name inside its data is no dictionary's, and
    // each byte is inflated once.
    let mut past = 0;
    for at in memchr::memmem::find_iter(bytes, b"/ObjStm") {
        if at < past {
            continue;
        }
        // The stream of the dictionary naming /ObjStm.
        let head = &bytes[at..bytes.len().min(at + 4096)];
        let Some(s) = memchr::memmem::find(head, b"stream") else {
            return true;
        };
        if memchr::memmem::find(&head[..s], b"/DecodeParms").is_some() {
            return true;
        }
        let mut start = at + s + b"stream".len();
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let mut out = Vec::new();
        let mut inflate = flate2::read::ZlibDecoder::new(&bytes[start.min(bytes.len())..]);
        let read = (&mut inflate).take(budget + 1).read_to_end(&mut out);
        past = start + inflate.total_in() as usize;
        if memchr::memmem::find(&out, KEY).is_some() || (read.is_err() && out.is_empty()) {
            return true;
        }
        budget = budget.saturating_sub(out.len() as u64);
        if budget == 0 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_content_is_found_plain_and_in_object_streams() {
        use std::io::Write;
        assert!(may_have_layers(
            b"1 0 obj << /Type /Catalog /OCProperties 5 0 R >> endobj"
        ));
        assert!(!may_have_layers(b"1 0 obj << /Type /Catalog >> endobj"));
        let pack = |body: &[u8]| {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(body).unwrap();
            let data = z.finish().unwrap();
            let mut pdf =
                b"5 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\r\n"
                    .to_vec();
            pdf.extend_from_slice(&data);
            pdf.extend_from_slice(b"\nendstream endobj");
            pdf
        };
        assert!(may_have_layers(&pack(
            b"1 0 << /Type /Catalog /OCProperties << >> >>"
        )));
        assert!(!may_have_layers(&pack(b"1 0 << /Type /Catalog >>")));
        // An object stream that does not inflate (encrypted) may hide it.
        assert!(may_have_layers(
            b"5 0 obj << /Type /ObjStm >>\nstream\n\x01\x02\x03\nendstream"
        ));
        // A hostile run of object streams is inflated once each, not searched to the end
        // of the file once per name (which would take this test minutes, not milliseconds).
        let small = {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(b"1 0 << >>").unwrap();
            z.finish().unwrap()
        };
        let mut unit = b"/ObjStm stream\n".to_vec();
        unit.extend_from_slice(&small);
        let mut hostile = unit.repeat(200_000);
        hostile.extend_from_slice(b"endstream");
        assert!(!may_have_layers(&hostile));
        // Names a reader decodes, and streams whose bytes could hide it: it may.
        assert!(may_have_layers(
            b"<< /Type /Catalog /OCPropert#69es 5 0 R >>"
        ));
        assert!(may_have_layers(b"<< /Type /Obj#53tm >> stream x endstream"));
        assert!(may_have_layers(
            b"<< /Type /ObjStm /DecodeParms << /Predictor 12 >> >>\nstream\nx\nendstream"
        ));
        // A decoy object stream in a comment does not make the search skip the real one.
        let mut decoy = b"%/ObjStm stream\n".to_vec();
        decoy.extend_from_slice(&small);
        decoy.extend_from_slice(b"\n");
        decoy.extend_from_slice(&pack(b"1 0 << /Type /Catalog /OCProperties << >> >>"));
        assert!(may_have_layers(&decoy));
    }
}
