//! Text in an optional-content layer that is off in the default view (issue #41): no
//! viewer draws it, yet PDFium's text layer holds it. PDFium's renderer follows the
//! document's default layer configuration (`/OCProperties /D`, membership dictionaries
//! too), but pdfium-render shows neither content marks nor the catalog, so:
//!
//! - a document is looked at only when it has optional content: `/OCProperties` in its
//!   bytes, or in one of its compressed object streams (`may_have_layers`, a byte search
//!   and the object streams inflated, up to a cap);
//! - then it is opened a second time through PDFium's own calls (the file mapped, not
//!   read), and each page read is loaded there too: objects inside a `/OC … BDC` section
//!   (their own mark, or a form drawn inside one) are found by their content marks;
//! - a page with such text is rendered twice — as a viewer shows it, then with the marks
//!   taken off that copy of the page — and a text object whose box gains ink in the
//!   second rendering was hidden by its layer: `hidden_layer`.
//!
//! A form XObject made optional by an `/OC` entry in its own dictionary (not a mark) is not
//! seen by this check.

use std::os::fd::AsRawFd;

use pdfium_render::prelude::*;

use super::hidden::PageHidden;

/// Objects walked on one page at most (forms included), and forms nested deeper than this
/// are not walked: as the other checks do.
const MAX_OBJECTS: usize = 50_000;
const MAX_DEPTH: usize = 8;
/// Object-stream bytes inflated while looking for `/OCProperties`; past it the document is
/// taken to have layers (looked at page by page).
const MAX_INFLATED: u64 = 64 << 20;
/// Rendering: a pixel a point (a 10 pt line is 10 pixels tall, its glyphs' ink plain) and
/// at most four megapixels a page.
const MAX_SCALE: f32 = 1.0;
const MAX_PIXELS: f32 = 4.0e6;
/// A pixel changed by more than this (largest channel difference) is ink the layer hid.
const INK: u8 = 48;

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
                walk.visit(b, o, None, false, 0);
            }
        }
        if !walk.texts.iter().any(|t| t.in_layer) {
            return Vec::new();
        }
        let (w, h) = (b.FPDF_GetPageWidthF(page), b.FPDF_GetPageHeightF(page));
        if !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
            return Vec::new();
        }
        let scale = MAX_SCALE.min((MAX_PIXELS / (w * h)).sqrt());
        let (pw, ph) = (
            ((w * scale).round() as i32).max(1),
            ((h * scale).round() as i32).max(1),
        );
        let Some(shown) = render(b, page, pw, ph) else {
            return Vec::new();
        };
        for &o in &walk.marked {
            remove_layer_marks(b, o);
        }
        let Some(all) = render(b, page, pw, ph) else {
            return Vec::new();
        };
        let text_page = b.FPDFText_LoadPage(page);
        if text_page.is_null() {
            return Vec::new();
        }
        let mut found: Option<PageHidden> = None;
        for t in walk.texts.iter().filter(|t| t.in_layer) {
            let Some(r) = t.page_rect() else { continue };
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
            let (Some(p), Some(q)) = (to_device(r[0], r[1]), to_device(r[2], r[3])) else {
                continue;
            };
            if !gained_ink(&shown, &all, pw, ph, p, q) {
                continue;
            }
            let text = object_text(b, t.handle, text_page);
            if text.trim().is_empty() {
                continue;
            }
            let found = found.get_or_insert_with(|| PageHidden {
                kind: "hidden_layer",
                text: String::new(),
                boxes: Vec::new(),
            });
            if !found.text.is_empty() {
                found.text.push(' ');
            }
            found.text.push_str(text.trim());
            found.boxes.push(t.bounds);
        }
        b.FPDFText_ClosePage(text_page);
        found.into_iter().collect()
    }
}

/// A text object met on the walk.
struct Text {
    handle: FPDF_PAGEOBJECT,
    /// Its bounds as PDFium gives them (a form's objects in the form's space).
    bounds: [f32; 4],
    /// The forms' matrix onto the page.
    form: Option<[f32; 6]>,
    /// Inside a `/OC` marked section, its own or a form's it is drawn in.
    in_layer: bool,
}

impl Text {
    /// Its box on the page: left, bottom, right, top.
    fn page_rect(&self) -> Option<[f32; 4]> {
        let [l, bo, r, t] = self.bounds;
        let r = match self.form {
            None => [l, bo, r, t],
            Some([a, b, c, d, e, f]) => {
                let pts = [(l, bo), (l, t), (r, bo), (r, t)]
                    .map(|(x, y)| (a * x + c * y + e, b * x + d * y + f));
                let xs = pts.map(|p| p.0);
                let ys = pts.map(|p| p.1);
                [
                    xs.iter().copied().fold(f32::MAX, f32::min),
                    ys.iter().copied().fold(f32::MAX, f32::min),
                    xs.iter().copied().fold(f32::MIN, f32::max),
                    ys.iter().copied().fold(f32::MIN, f32::max),
                ]
            }
        };
        r.iter().all(|v| v.is_finite()).then_some(r)
    }
}

#[derive(Default)]
struct Walk {
    texts: Vec<Text>,
    /// Objects carrying a `/OC` mark.
    marked: Vec<FPDF_PAGEOBJECT>,
    seen: usize,
}

const FPDF_PAGEOBJ_TEXT: i32 = 1;
const FPDF_PAGEOBJ_FORM: i32 = 5;

impl Walk {
    unsafe fn visit(
        &mut self,
        b: &dyn PdfiumLibraryBindings,
        o: FPDF_PAGEOBJECT,
        form: Option<[f32; 6]>,
        in_layer: bool,
        depth: usize,
    ) {
        if self.seen >= MAX_OBJECTS {
            return;
        }
        self.seen += 1;
        let marked = has_layer_mark(b, o);
        if marked {
            self.marked.push(o);
        }
        let in_layer = in_layer || marked;
        match b.FPDFPageObj_GetType(o) {
            FPDF_PAGEOBJ_TEXT => {
                let (mut l, mut bo, mut r, mut t) = (0f32, 0f32, 0f32, 0f32);
                if b.FPDFPageObj_GetBounds(o, &mut l, &mut bo, &mut r, &mut t) != 0 {
                    self.texts.push(Text {
                        handle: o,
                        bounds: [l, bo, r, t],
                        form,
                        in_layer,
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
                    .then_some([m.a, m.b, m.c, m.d, m.e, m.f]);
                let place = match (form, own) {
                    (Some(outer), Some(inner)) => Some(compose(outer, inner)),
                    (None, inner) => inner,
                    (outer, None) => outer,
                };
                for j in 0..b.FPDFFormObj_CountObjects(o).max(0) {
                    let k = b.FPDFFormObj_GetObject(o, j as libc::c_ulong);
                    if !k.is_null() {
                        self.visit(b, k, place, in_layer, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `inner` then `outer`, as PDF matrices `[a b c d e f]`.
fn compose(outer: [f32; 6], inner: [f32; 6]) -> [f32; 6] {
    let [a, b, c, d, e, f] = outer;
    let [p, q, r, s, t, u] = inner;
    [
        a * p + c * q,
        b * p + d * q,
        a * r + c * s,
        b * r + d * s,
        a * t + c * u + e,
        b * t + d * u + f,
    ]
}

unsafe fn mark_name(b: &dyn PdfiumLibraryBindings, mark: FPDF_PAGEOBJECTMARK) -> String {
    let mut buf = [0u16; 16];
    let mut len: libc::c_ulong = 0;
    if b.FPDFPageObjMark_GetName(
        mark,
        buf.as_mut_ptr(),
        std::mem::size_of_val(&buf) as libc::c_ulong,
        &mut len,
    ) == 0
    {
        return String::new();
    }
    // `len` counts bytes with the terminating NUL; a longer name is not `OC` anyway.
    let n = ((len as usize) / 2).min(buf.len());
    String::from_utf16_lossy(&buf[..n])
        .trim_end_matches('\0')
        .to_string()
}

unsafe fn has_layer_mark(b: &dyn PdfiumLibraryBindings, o: FPDF_PAGEOBJECT) -> bool {
    (0..b.FPDFPageObj_CountMarks(o).max(0)).any(|i| {
        let m = b.FPDFPageObj_GetMark(o, i as libc::c_ulong);
        !m.is_null() && mark_name(b, m) == "OC"
    })
}

unsafe fn remove_layer_marks(b: &dyn PdfiumLibraryBindings, o: FPDF_PAGEOBJECT) {
    for i in (0..b.FPDFPageObj_CountMarks(o).max(0)).rev() {
        let m = b.FPDFPageObj_GetMark(o, i as libc::c_ulong);
        if !m.is_null() && mark_name(b, m) == "OC" {
            b.FPDFPageObj_RemoveMark(o, m);
        }
    }
}

/// The page drawn on white, as a viewer shows it (annotations left out), BGRx rows of
/// `pw` pixels.
unsafe fn render(
    b: &dyn PdfiumLibraryBindings,
    page: FPDF_PAGE,
    pw: i32,
    ph: i32,
) -> Option<Vec<u8>> {
    let bitmap = b.FPDFBitmap_Create(pw, ph, 0);
    if bitmap.is_null() {
        return None;
    }
    b.FPDFBitmap_FillRect(bitmap, 0, 0, pw, ph, 0xFFFF_FFFF);
    b.FPDF_RenderPageBitmap(bitmap, page, 0, 0, pw, ph, 0, 0);
    let stride = b.FPDFBitmap_GetStride(bitmap).max(0) as usize;
    let buffer = b.FPDFBitmap_GetBuffer(bitmap) as *const u8;
    let row = pw as usize * 4;
    let out = (!buffer.is_null() && stride >= row).then(|| {
        let mut out = Vec::with_capacity(row * ph as usize);
        for y in 0..ph as usize {
            out.extend_from_slice(std::slice::from_raw_parts(buffer.add(y * stride), row));
        }
        out
    });
    b.FPDFBitmap_Destroy(bitmap);
    out
}

/// Whether the box between two device points holds ink in `all` that `shown` lacks: 2 %
/// of its pixels or more (a glyph line covers a fifth of its box or so).
fn gained_ink(shown: &[u8], all: &[u8], pw: i32, ph: i32, p: (i32, i32), q: (i32, i32)) -> bool {
    let (x0, x1) = (p.0.min(q.0).clamp(0, pw), p.0.max(q.0).clamp(0, pw));
    let (y0, y1) = (p.1.min(q.1).clamp(0, ph), p.1.max(q.1).clamp(0, ph));
    if x1 - x0 < 1 || y1 - y0 < 1 {
        return false;
    }
    let (mut changed, mut total) = (0u64, 0u64);
    for y in y0..y1 {
        for x in x0..x1 {
            let i = (y as usize * pw as usize + x as usize) * 4;
            let (Some(a), Some(z)) = (shown.get(i..i + 3), all.get(i..i + 3)) else {
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
/// in its bytes, or in an object stream inflated (up to `MAX_INFLATED` bytes in all; past
/// that, or an object stream that does not inflate — an encrypted one — it may).
fn may_have_layers(bytes: &[u8]) -> bool {
    use std::io::Read;
    const KEY: &[u8] = b"/OCProperties";
    if memchr::memmem::find(bytes, KEY).is_some() {
        return true;
    }
    let mut budget = MAX_INFLATED;
    // Where the last stream looked at ended: a name inside it is no dictionary's, and
    // every byte is searched once (a file of a million `/ObjStm stream` before one
    // `endstream` would otherwise be scanned a million times).
    let mut past = 0;
    for at in memchr::memmem::find_iter(bytes, b"/ObjStm") {
        if at < past {
            continue;
        }
        // The stream of the dictionary naming /ObjStm.
        let head = &bytes[at..bytes.len().min(at + 4096)];
        let Some(s) = memchr::memmem::find(head, b"stream") else {
            continue;
        };
        let mut start = at + s + b"stream".len();
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let Some(end) = memchr::memmem::find(&bytes[start..], b"endstream") else {
            // No stream ends after this one: none to inflate.
            break;
        };
        past = start + end;
        let mut out = Vec::new();
        let read = flate2::read::ZlibDecoder::new(&bytes[start..start + end])
            .take(budget + 1)
            .read_to_end(&mut out);
        if memchr::memmem::find(&out, KEY).is_some() {
            return true;
        }
        if read.is_err() && out.is_empty() {
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
        // A hostile run of dictionaries before one stream end (or none) is searched
        // once, not once per name (which would take this test minutes, not milliseconds).
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
        let mut open_ended = b"/ObjStm stream ".repeat(200_000);
        open_ended.extend_from_slice(b"no end");
        assert!(!may_have_layers(&open_ended));
    }
}
