//! Type3 fonts' codes as text (issue #43, the PDF text layer). A Type3 font without a
//! `/ToUnicode` map names its glyphs only in its `/Encoding /Differences`, and PDFium hands
//! back its codes as if they were characters (`\u{1}\u{4}…`). PDFium's API gives neither
//! the font dictionary nor a way to tell one Type3 font from another, so the page's fonts
//! are read from the file itself (`objects.rs`): each Type3 font of the page (and of the
//! forms it draws) gives a map code → text through its glyph names (`glyph_names.rs`) and
//! code → advance (its `/Widths` by its `/FontMatrix`), and `fonts.rs` picks, for each text
//! object, the font whose names cover its codes and whose advances match the ones PDFium
//! measured. A code no name explains is not guessed (code 32 is a space only when its
//! name says so); such a page stays garbled and goes to OCR.
//!
//! Read only for pages whose text already looks like codes (`fonts::suspect`), and then
//! once a document.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::glyph_names;
use super::objects::{Dict, Obj, Objects};

/// Pages in a page tree read at most, and forms inside forms followed.
const MAX_PAGES: usize = 1 << 20;
const MAX_FORM_DEPTH: usize = 4;
/// Fonts looked at for one page.
const MAX_FONTS: usize = 256;

/// A Type3 font's codes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CodeMap {
    /// Code → the text its glyph name gives.
    text: Vec<Option<Box<str>>>,
    /// Code → its advance for a font size of 1 (`/Widths` × `/FontMatrix`).
    widths: Vec<Option<f32>>,
}

impl CodeMap {
    pub(super) fn text(&self, code: u32) -> Option<&str> {
        self.text.get(code as usize)?.as_deref()
    }

    pub(super) fn width(&self, code: u32) -> Option<f32> {
        *self.widths.get(code as usize)?
    }

    /// A font dictionary's map, when it is a Type3 font without a Unicode map whose
    /// glyph names give text for at least one code.
    fn of(objects: &Objects, font: &Dict) -> Option<Self> {
        if font.get(b"Subtype").and_then(Obj::as_name) != Some(b"Type3")
            || font.get(b"ToUnicode").is_some()
        {
            return None;
        }
        let mut text: Vec<Option<Box<str>>> = vec![None; 256];
        let encoding = objects.resolve(font.get(b"Encoding")?);
        let (base, differences) = match &encoding {
            Obj::Name(n) => (Some(n.as_slice()), None),
            Obj::Dict(d) => (
                d.get(b"BaseEncoding").and_then(Obj::as_name),
                d.get(b"Differences").map(|o| objects.resolve(o)),
            ),
            _ => return None,
        };
        if let Some(base) = base {
            for (code, slot) in text.iter_mut().enumerate() {
                *slot = base_encoding(base, code as u8).map(Into::into);
            }
        }
        if let Some(Obj::Array(items)) = differences {
            let mut code: Option<usize> = None;
            for item in &items {
                match item {
                    Obj::Num(n) if *n >= 0.0 && *n < 256.0 => code = Some(*n as usize),
                    Obj::Num(_) => code = None,
                    Obj::Name(name) => {
                        if let Some(c) = code.filter(|c| *c < 256) {
                            text[c] = glyph_names::to_text(name).map(Into::into);
                            code = Some(c + 1);
                        }
                    }
                    _ => {}
                }
            }
        }
        if text.iter().all(Option::is_none) {
            return None;
        }
        let scale = match font.get(b"FontMatrix").map(|o| objects.resolve(o)) {
            Some(Obj::Array(m)) => m.first().and_then(Obj::as_num).unwrap_or(0.001),
            _ => 0.001,
        } as f32;
        let first = font.get(b"FirstChar").and_then(Obj::as_num).unwrap_or(0.0);
        let mut widths = vec![None; 256];
        if let (Obj::Array(w), true) = (
            font.get(b"Widths")
                .map(|o| objects.resolve(o))
                .unwrap_or(Obj::Null),
            first >= 0.0,
        ) {
            for (k, v) in w.iter().enumerate() {
                let code = first as usize + k;
                if code >= 256 {
                    break;
                }
                widths[code] = objects
                    .resolve(v)
                    .as_num()
                    .map(|v| (v as f32 * scale).abs());
            }
        }
        Some(Self { text, widths })
    }
}

/// A code's text in one of the standard base encodings a `/BaseEncoding` may name.
fn base_encoding(name: &[u8], code: u8) -> Option<String> {
    let decoder = match name {
        b"WinAnsiEncoding" => encoding_rs::WINDOWS_1252,
        b"MacRomanEncoding" => encoding_rs::MACINTOSH,
        b"StandardEncoding" => {
            return match code {
                0x27 => Some("\u{2019}".into()),
                0x60 => Some("\u{2018}".into()),
                0x20..=0x7E => Some((code as char).to_string()),
                _ => None,
            }
        }
        _ => return None,
    };
    if code < 0x20 || code == 0x7F {
        return None;
    }
    let byte = [code];
    let (s, bad) = decoder.decode_without_bom_handling(&byte);
    (!bad).then(|| s.into_owned())
}

/// A document's page tree, read once.
struct Document {
    objects: Objects,
    /// Each page's resources (its own or inherited: shared, never copied a page), in page
    /// order.
    resources: Vec<Option<Arc<Obj>>>,
    /// Each page's `/Contents` (a stream's reference or an array of them), in page order.
    contents: Vec<Option<Obj>>,
    /// The tree gave as many pages as PDFium counts: page `k` here is PDFium's page `k`.
    aligned: bool,
    /// Where it did not: every page's Type3 fonts, gathered once.
    all: OnceLock<Vec<CodeMap>>,
}

impl Document {
    fn open(path: &std::path::Path, pages: usize) -> Option<Self> {
        let objects = Objects::open(path)?;
        let catalog = objects.resolve(&Obj::Ref(objects.root()?));
        let tree = catalog.as_dict()?.get(b"Pages")?.clone();
        let mut leaves = Leaves::default();
        walk(&objects, &tree, None, 0, &mut HashSet::new(), &mut leaves);
        Some(Self {
            aligned: leaves.resources.len() == pages,
            all: OnceLock::new(),
            objects,
            resources: leaves.resources,
            contents: leaves.contents,
        })
    }

    /// The Type3 fonts (with glyph names) a page draws with, directly or in its forms;
    /// every page's when the tree read here does not match PDFium's (a damaged tree PDFium
    /// repaired its own way): the names and widths still pick each text object's font.
    fn page(&self, index: usize) -> Cow<'_, [CodeMap]> {
        if !self.aligned {
            return Cow::Borrowed(self.all.get_or_init(|| {
                let (mut maps, mut seen) = (Vec::new(), HashSet::new());
                for r in self.resources.iter().flatten() {
                    self.fonts_of(r, 0, &mut seen, &mut maps);
                }
                maps
            }));
        }
        let (mut maps, mut seen) = (Vec::new(), HashSet::new());
        if let Some(Some(r)) = self.resources.get(index) {
            self.fonts_of(r, 0, &mut seen, &mut maps);
        }
        Cow::Owned(maps)
    }

    fn fonts_of(
        &self,
        resources: &Obj,
        depth: usize,
        seen: &mut HashSet<u32>,
        maps: &mut Vec<CodeMap>,
    ) {
        let resources = self.objects.resolve(resources);
        let Some(r) = resources.as_dict() else { return };
        if let Some(Obj::Dict(fonts)) = r.get(b"Font").map(|f| self.objects.resolve(f)) {
            for (_, font) in fonts.iter() {
                if seen.len() >= MAX_FONTS {
                    return;
                }
                if let Obj::Ref(n) = font {
                    if !seen.insert(*n) {
                        continue;
                    }
                }
                if let Some(map) = self
                    .objects
                    .resolve(font)
                    .as_dict()
                    .and_then(|d| CodeMap::of(&self.objects, d))
                {
                    if !maps.contains(&map) {
                        maps.push(map);
                    }
                }
            }
        }
        if depth >= MAX_FORM_DEPTH {
            return;
        }
        if let Some(Obj::Dict(xobjects)) = r.get(b"XObject").map(|x| self.objects.resolve(x)) {
            for (_, x) in xobjects.iter() {
                let Obj::Ref(n) = x else { continue };
                if seen.len() >= MAX_FONTS || !seen.insert(*n) {
                    continue;
                }
                let form = self.objects.get(*n);
                let Some(d) = form.as_dict() else { continue };
                if d.get(b"Subtype").and_then(Obj::as_name) == Some(b"Form") {
                    if let Some(res) = d.get(b"Resources") {
                        self.fonts_of(res, depth + 1, seen, maps);
                    }
                }
            }
        }
    }
}

/// The page tree's leaves, in order.
#[derive(Default)]
struct Leaves {
    /// Each page's resources (inherited where it has none: the same resources for a
    /// million pages are held once).
    resources: Vec<Option<Arc<Obj>>>,
    /// Each page's `/Contents`.
    contents: Vec<Option<Obj>>,
}

/// The page tree's leaves in order.
fn walk(
    objects: &Objects,
    node: &Obj,
    inherited: Option<&Arc<Obj>>,
    depth: usize,
    seen: &mut HashSet<u32>,
    pages: &mut Leaves,
) {
    if depth > 64 || pages.resources.len() >= MAX_PAGES {
        return;
    }
    if let Obj::Ref(n) = node {
        if !seen.insert(*n) {
            return;
        }
    }
    let node = objects.resolve(node);
    let Some(d) = node.as_dict() else { return };
    let own = d.get(b"Resources").map(|r| Arc::new(r.clone()));
    let resources = own.as_ref().or(inherited);
    match d.get(b"Kids").map(|k| objects.resolve(k)) {
        Some(Obj::Array(kids)) if d.get(b"Type").and_then(Obj::as_name) != Some(b"Page") => {
            for kid in &kids {
                walk(objects, kid, resources, depth + 1, seen, pages);
            }
        }
        _ => {
            pages.resources.push(resources.cloned());
            pages.contents.push(d.get(b"Contents").cloned());
        }
    }
}

/// A document's Type3 fonts, read from its file the first time a page asks.
pub(super) struct Lazy {
    path: PathBuf,
    /// Pages PDFium counts.
    pages: usize,
    doc: OnceLock<Option<Document>>,
}

impl Lazy {
    pub(super) fn new(path: &std::path::Path, pages: usize) -> Self {
        Self {
            path: path.to_path_buf(),
            pages,
            doc: OnceLock::new(),
        }
    }
}

/// A page's own objects (`PageFonts::page`).
pub(super) struct PageObjects<'a> {
    pub(super) objects: &'a Objects,
    pub(super) resources: Option<&'a Obj>,
    pub(super) contents: Option<&'a Obj>,
}

/// One page's fonts, when asked.
#[derive(Clone, Copy)]
pub(super) struct PageFonts<'a> {
    doc: &'a Lazy,
    index: usize,
    /// The page's text was judged garbled: its fonts are to be looked at whatever its
    /// text looks like.
    forced: bool,
}

impl<'a> PageFonts<'a> {
    pub(super) fn new(doc: &'a Lazy, index: usize) -> Self {
        Self {
            doc,
            index,
            forced: false,
        }
    }

    /// The same page, its fonts looked at whatever its text looks like.
    pub(super) fn forced(self) -> Self {
        Self {
            forced: true,
            ..self
        }
    }

    pub(super) fn is_forced(&self) -> bool {
        self.forced
    }

    fn document(&self) -> Option<&'a Document> {
        self.doc
            .doc
            .get_or_init(|| Document::open(&self.doc.path, self.doc.pages))
            .as_ref()
    }

    /// The page's Type3 fonts with glyph names (reading the file on the first call).
    pub(super) fn type3(&self) -> Cow<'a, [CodeMap]> {
        self.document()
            .map(|d| d.page(self.index))
            .unwrap_or_default()
    }

    /// The page as the file holds it: the document's objects, the page's resources and its
    /// `/Contents` (reading the file on the first call); `None` when the file cannot be
    /// read or its page tree does not give PDFium's pages.
    pub(super) fn page(&self) -> Option<PageObjects<'a>> {
        let d = self.document().filter(|d| d.aligned)?;
        Some(PageObjects {
            objects: &d.objects,
            resources: d.resources.get(self.index)?.as_deref(),
            contents: d.contents.get(self.index)?.as_ref(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type3_fonts_names_and_widths_make_its_map() {
        let pdf = b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >> endobj
3 0 obj << /Type /Page /Parent 2 0 R >> endobj
5 0 obj << /Type /Font /Subtype /Type3 /FontMatrix [0.001 0 0 0.001 0 0] /FirstChar 1 /Widths [500 7 0 R]
 /Encoding << /Differences [1 /H /g33 32 /a32] >> >> endobj
6 0 obj << /Type /Font /Subtype /Type3 /ToUnicode 9 0 R /Encoding << /Differences [1 /A] >> >> endobj
7 0 obj 250 endobj
trailer << /Root 1 0 R >>";
        let objects = Objects::parse(pdf.to_vec());
        let catalog = objects.resolve(&Obj::Ref(objects.root().unwrap()));
        let mut leaves = Leaves::default();
        walk(
            &objects,
            catalog.as_dict().unwrap().get(b"Pages").unwrap(),
            None,
            0,
            &mut HashSet::new(),
            &mut leaves,
        );
        let doc = Document {
            objects,
            resources: leaves.resources,
            contents: leaves.contents,
            aligned: true,
            all: OnceLock::new(),
        };
        // The font with a ToUnicode map is PDFium's to read; the other one's names.
        let maps = doc.page(0).into_owned();
        assert_eq!(maps.len(), 1, "{maps:?}");
        assert_eq!(maps[0].text(1), Some("H"));
        assert_eq!(maps[0].text(2), None, "g33 is the producer's numbering");
        assert_eq!(maps[0].text(32), None, "code 32 named a32 is no space");
        assert_eq!(maps[0].width(1), Some(0.5));
        assert_eq!(maps[0].width(2), Some(0.25));
        assert!(doc.page(1).is_empty());
        // A tree that does not match PDFium's page count: every page's fonts.
        let doc = Document {
            aligned: false,
            ..doc
        };
        assert_eq!(doc.page(7).as_ref(), maps.as_slice());
        assert!(matches!(doc.page(0), Cow::Borrowed(_)), "gathered once");
    }

    #[test]
    fn inherited_resources_are_held_once_for_every_page() {
        let mut pdf = b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Resources << /Font << /F1 << /Subtype /Type3 >> >> >> /Kids [".to_vec();
        for k in 0..1000 {
            pdf.extend_from_slice(format!("{} 0 R ", 10 + k).as_bytes());
        }
        pdf.extend_from_slice(b"] >> endobj\n");
        for k in 0..1000 {
            pdf.extend_from_slice(
                format!("{} 0 obj << /Type /Page >> endobj\n", 10 + k).as_bytes(),
            );
        }
        pdf.extend_from_slice(b"trailer << /Root 1 0 R >>");
        let objects = Objects::parse(pdf);
        let catalog = objects.resolve(&Obj::Ref(1));
        let mut leaves = Leaves::default();
        walk(
            &objects,
            catalog.as_dict().unwrap().get(b"Pages").unwrap(),
            None,
            0,
            &mut HashSet::new(),
            &mut leaves,
        );
        let pages = leaves.resources;
        assert_eq!(pages.len(), 1000);
        let first = pages[0].as_ref().unwrap();
        assert!(pages
            .iter()
            .all(|p| Arc::ptr_eq(p.as_ref().unwrap(), first)));
    }

    #[test]
    fn base_encodings_give_text_for_codes_without_names() {
        assert_eq!(
            base_encoding(b"WinAnsiEncoding", 0x93).as_deref(),
            Some("\u{201C}")
        );
        assert_eq!(
            base_encoding(b"StandardEncoding", 0x27).as_deref(),
            Some("\u{2019}")
        );
        assert_eq!(base_encoding(b"WinAnsiEncoding", 0x05), None);
        assert_eq!(base_encoding(b"Custom", 0x41), None);
    }
}
