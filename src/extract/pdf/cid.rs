//! CID fonts without a Unicode map, whose characters lie outside Unicode's Basic
//! Multilingual Plane (issue #43, the PDF text layer). A CJK font that names its glyphs by
//! CID in one of Adobe's character collections (Adobe-Japan1, -GB1, -CNS1) and carries no
//! `/ToUnicode` is read through the collection's CID → Unicode table. PDFium's tables hold
//! 16-bit values, so a CID whose character is supplementary comes out as a look-alike or
//! not at all: Adobe-Japan1 CID 13706 is 𠮷 (U+20BB7), PDFium reads 吉 (U+5409); Hong Kong
//! characters of Adobe-CNS1 the same. Adobe's own tables hold 2,269 such CIDs
//! (`cid_supplementary.tsv`, generated from its CMaps by `scripts/gen_adobe_cid.py`).
//!
//! PDFium's API does not hand out a character's code, so the codes are read from the
//! page's content streams (`objects.rs`): for each such font written with `Identity-H` or
//! `Identity-V` (the code is the CID), the CIDs it shows in drawing order. PDFium's own
//! characters of that font, in its order, pair with them one to one; where the counts
//! differ (PDFium dropped a fake-bold copy, a form drew the font differently) the page is
//! left as PDFium read it; so is a page whose lines were mended or put in right-to-left
//! order (its text is no longer PDFium's characters in order). What it costs: a PDF with
//! CJK text has its objects read from the file once (as for Type3 fonts: `differences.rs`),
//! each page with CJK text has its fonts looked at (each font object once), and only a page
//! drawing with such a font has its content streams walked (bounded: `MAX_CONTENT`,
//! `MAX_PARTS`, forms by `MAX_FORMS` and `MAX_FORM_DEPTH`).

use std::collections::HashMap;
use std::sync::OnceLock;

use pdfium_render::prelude::*;

use super::differences::{PageFonts, PageObjects};
use super::objects::{Content, Dict, Obj, Objects, Token};

/// Content stream bytes read for one page, its forms' included.
const MAX_CONTENT: usize = 32 << 20;
/// Forms inside forms followed, and forms read for one page.
const MAX_FORM_DEPTH: usize = 4;
const MAX_FORMS: usize = 256;
/// Graphics states saved inside each other (`q`).
const MAX_SAVED: usize = 256;
/// Streams of a page's `/Contents` read, and fonts and forms of one resources dictionary
/// looked at.
const MAX_PARTS: usize = 1024;
const MAX_FONTS: usize = 256;
const MAX_NAMES: usize = 65_536;

/// A character collection with supplementary characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Collection {
    Japan1,
    Gb1,
    Cns1,
}

impl Collection {
    fn of(ordering: &[u8]) -> Option<Self> {
        match ordering {
            b"Japan1" => Some(Self::Japan1),
            b"GB1" => Some(Self::Gb1),
            b"CNS1" => Some(Self::Cns1),
            _ => None,
        }
    }
}

/// (collection, CID) → its supplementary character, as Adobe maps it.
fn table() -> &'static HashMap<(Collection, u16), char> {
    static TABLE: OnceLock<HashMap<(Collection, u16), char>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("cid_supplementary.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split('\t');
                let c = Collection::of(f.next()?.as_bytes())?;
                let cid = f.next()?.parse().ok()?;
                let ch = char::from_u32(u32::from_str_radix(f.next()?, 16).ok()?)?;
                Some(((c, cid), ch))
            })
            .collect()
    })
}

/// Whether a page's text may hold such characters: it has CJK ideographs (ordinary text
/// pays one ASCII check).
pub(super) fn may_apply(text: &str) -> bool {
    !text.is_ascii()
        && text
            .chars()
            .any(|c| matches!(c, '\u{2E80}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'))
}

/// The page's text with its CID fonts' supplementary characters put back; `None` when
/// there are none, or they cannot be placed with certainty.
pub(super) fn restore(layer: &PdfPageText<'_>, fonts: PageFonts<'_>, text: &str) -> Option<String> {
    let page = fonts.page()?;
    let shown = shown(&page)?;
    let table = table();
    if !shown.values().any(|s| {
        s.collection
            .is_some_and(|c| s.cids.iter().any(|cid| table.contains_key(&(c, *cid))))
    }) {
        return None;
    }
    // PDFium's characters: each one's value, and for the fonts above, which they are.
    let chars = layer.chars();
    let mut values = Vec::with_capacity(chars.len());
    let mut of_font: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (i, c) in chars.iter().enumerate() {
        values.push(c.unicode_value());
        if c.is_generated().unwrap_or(true) {
            continue;
        }
        let name = c.font_name();
        if let Some((base, _)) = shown.get_key_value(base_name(name.as_bytes())) {
            of_font.entry(base.as_slice()).or_default().push(i);
        }
    }
    // Character index → the character it is.
    let mut fixes: HashMap<usize, char> = HashMap::new();
    for (base, s) in &shown {
        let Some(c) = s.collection else { continue };
        let Some(at) = of_font.get(base.as_slice()) else {
            continue;
        };
        if at.len() != s.cids.len() {
            tracing::debug!(
                "CID font {}: {} codes drawn, PDFium has {} characters; left as read",
                String::from_utf8_lossy(base),
                s.cids.len(),
                at.len()
            );
            continue;
        }
        for (i, cid) in at.iter().zip(&s.cids) {
            if let Some(ch) = table.get(&(c, *cid)) {
                fixes.insert(*i, *ch);
            }
        }
    }
    replace(&values, &fixes, text)
}

/// `text` (PDFium's characters `values` in order, with its own line breaks) with the
/// characters at `fixes` replaced: the n-th occurrence of a value among the characters is
/// its n-th occurrence in the text. `None` when nothing changes, or when a value's count
/// differs between the two (the text is then not PDFium's characters in order).
fn replace(values: &[u32], fixes: &HashMap<usize, char>, text: &str) -> Option<String> {
    // (value, its occurrence) → the character it is.
    let mut wanted: HashMap<(char, usize), char> = HashMap::new();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        let n = seen.entry(*v).or_insert(0);
        if let Some(ch) = fixes.get(&i) {
            match char::from_u32(*v) {
                Some(old) if old != *ch && !old.is_whitespace() && !old.is_control() => {
                    wanted.insert((old, *n), *ch);
                }
                _ => {}
            }
        }
        *n += 1;
    }
    if wanted.is_empty() {
        return None;
    }
    // Each replaced value's count in the text, in one pass.
    let mut in_text: HashMap<char, usize> = wanted.keys().map(|(old, _)| (*old, 0)).collect();
    for c in text.chars() {
        if let Some(n) = in_text.get_mut(&c) {
            *n += 1;
        }
    }
    if in_text
        .iter()
        .any(|(old, n)| seen.get(&(*old as u32)) != Some(n))
    {
        return None;
    }
    let mut count: HashMap<char, usize> = HashMap::new();
    let mut out = String::with_capacity(text.len() + 4 * wanted.len());
    for c in text.chars() {
        let n = count.entry(c).or_insert(0);
        out.push(wanted.get(&(c, *n)).copied().unwrap_or(c));
        *n += 1;
    }
    Some(out)
}

/// A font name without its subset tag (`RRHYLO+`).
fn base_name(name: &[u8]) -> &[u8] {
    match name.iter().position(|b| *b == b'+') {
        Some(6) if name[..6].iter().all(u8::is_ascii_uppercase) => &name[7..],
        _ => name,
    }
}

/// What one font (by its base name) drew on the page.
#[derive(Default)]
struct Shown {
    /// Its collection when it is a CID font without a Unicode map, written with an
    /// Identity encoding; `None` for any other font of that name.
    collection: Option<Collection>,
    cids: Vec<u16>,
}

/// Every font the page draws with, by base name: the CIDs drawn with the ones this module
/// reads. Two fonts of one name that are not both such fonts make the name unread. `None`
/// when the page's fonts (its own and its forms') include none this module reads: its
/// content streams are walked only otherwise.
fn shown(page: &PageObjects<'_>) -> Option<HashMap<Vec<u8>, Shown>> {
    let mut walk = Walk::new(page.objects);
    let resources = page.resources.map(|r| page.objects.resolve(r));
    if !walk.has_one(resources.as_ref(), 0, &mut std::collections::HashSet::new()) {
        return None;
    }
    let mut data = Vec::new();
    let parts = match page.contents.map(|c| page.objects.resolve(c)) {
        Some(Obj::Array(a)) => a,
        _ => page.contents.cloned().into_iter().collect(),
    };
    // Each stream once, a bounded number of them, within the page's budget (what a stream
    // cost to read counts, also when it was cut).
    let mut seen = std::collections::HashSet::new();
    for part in parts.into_iter().take(MAX_PARTS) {
        let Obj::Ref(n) = part else { continue };
        if !seen.insert(n) {
            continue;
        }
        let left = MAX_CONTENT.saturating_sub(walk.read);
        let Some((_, d, cost)) = page.objects.stream(n, left) else {
            continue;
        };
        walk.read = walk.read.saturating_add(cost.max(1));
        if d.len() > left {
            break;
        }
        data.extend_from_slice(&d);
        data.push(b'\n');
    }
    walk.content(&data, resources.as_ref().and_then(Obj::as_dict), 0);
    Some(walk.out)
}

struct Walk<'a> {
    objects: &'a Objects,
    out: HashMap<Vec<u8>, Shown>,
    /// Content bytes read so far (raw or inflated, the larger), and forms.
    read: usize,
    forms: usize,
    /// Font dictionaries already looked at, by object number.
    keys: std::cell::RefCell<HashMap<u32, Option<FontKey>>>,
}

/// A font as this module sees it: its base name, and its collection when its codes are
/// CIDs of one with supplementary characters and it has no Unicode map.
type FontKey = (Vec<u8>, Option<Collection>);

/// A resources dictionary's entries by name (a bounded number: a hostile one holds
/// millions, and each name of the content would scan them).
fn by_name(d: Option<&Obj>) -> HashMap<&[u8], &Obj> {
    d.and_then(Obj::as_dict)
        .map(|d| d.iter().take(MAX_NAMES).collect())
        .unwrap_or_default()
}

impl<'a> Walk<'a> {
    fn new(objects: &'a Objects) -> Self {
        Self {
            objects,
            out: HashMap::new(),
            read: 0,
            forms: 0,
            keys: Default::default(),
        }
    }

    fn content(&mut self, data: &[u8], resources: Option<&Dict>, depth: usize) {
        let fonts = resources
            .and_then(|r| r.get(b"Font"))
            .map(|f| self.objects.resolve(f));
        let xobjects = resources
            .and_then(|r| r.get(b"XObject"))
            .map(|x| self.objects.resolve(x));
        let (fonts, xobjects) = (by_name(fonts.as_ref()), by_name(xobjects.as_ref()));
        let mut known: HashMap<Vec<u8>, Option<FontKey>> = HashMap::new();
        let mut font: Option<FontKey> = None;
        let mut saved: Vec<Option<FontKey>> = Vec::new();
        let mut operands: Vec<Obj> = Vec::new();
        for token in Content::new(data) {
            let op = match token {
                Token::Operand(o) => {
                    if operands.len() < 64 {
                        operands.push(o);
                    }
                    continue;
                }
                Token::Operator(op) => op,
            };
            match op {
                b"q" if saved.len() < MAX_SAVED => saved.push(font.clone()),
                b"Q" => {
                    if let Some(f) = saved.pop() {
                        font = f;
                    }
                }
                b"Tf" => {
                    if let Some(Obj::Name(name)) = operands.first() {
                        font = known
                            .entry(name.clone())
                            .or_insert_with(|| {
                                fonts.get(name.as_slice()).and_then(|f| self.font(f))
                            })
                            .clone();
                        if let Some((base, c)) = &font {
                            let s = self.out.entry(base.clone()).or_insert_with(|| Shown {
                                collection: *c,
                                cids: Vec::new(),
                            });
                            if s.collection != *c {
                                // Two fonts of one name, not both read here.
                                s.collection = None;
                            }
                        }
                    }
                }
                b"Tj" | b"'" | b"\"" | b"TJ" => {
                    if let Some((base, Some(_))) = &font {
                        let strings: Vec<&[u8]> = match operands.last() {
                            Some(Obj::Str(s)) => vec![s.as_slice()],
                            Some(Obj::Array(a)) if op == b"TJ" => a
                                .iter()
                                .filter_map(|o| match o {
                                    Obj::Str(s) => Some(s.as_slice()),
                                    _ => None,
                                })
                                .collect(),
                            _ => Vec::new(),
                        };
                        if let Some(s) = self.out.get_mut(base) {
                            for st in strings {
                                s.cids.extend(
                                    st.chunks_exact(2).map(|p| u16::from_be_bytes([p[0], p[1]])),
                                );
                            }
                        }
                    }
                }
                b"Do" if depth < MAX_FORM_DEPTH && self.forms < MAX_FORMS => {
                    let form = match operands.first() {
                        Some(Obj::Name(name)) => match xobjects.get(name.as_slice()) {
                            Some(Obj::Ref(n)) => Some(*n),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some(n) = form.filter(|_| self.read < MAX_CONTENT) {
                        self.forms += 1;
                        let left = MAX_CONTENT.saturating_sub(self.read);
                        if let Some((d, data, cost)) = self.objects.stream(n, left) {
                            self.read = self.read.saturating_add(cost.max(1));
                            let form = d.get(b"Subtype").and_then(Obj::as_name) == Some(b"Form");
                            if form && data.len() <= left {
                                let own = d.get(b"Resources").map(|r| self.objects.resolve(r));
                                let res = own.as_ref().and_then(Obj::as_dict).or(resources);
                                self.content(&data, res, depth + 1);
                            }
                        }
                    }
                }
                _ => {}
            }
            operands.clear();
        }
    }

    /// Whether these resources (and the forms they hold) have a font this module reads.
    fn has_one(
        &self,
        resources: Option<&Obj>,
        depth: usize,
        seen: &mut std::collections::HashSet<u32>,
    ) -> bool {
        let Some(r) = resources.and_then(Obj::as_dict) else {
            return false;
        };
        if let Some(Obj::Dict(fonts)) = r.get(b"Font").map(|f| self.objects.resolve(f)) {
            if fonts
                .iter()
                .take(MAX_FONTS)
                .any(|(_, f)| self.font(f).is_some_and(|(_, c)| c.is_some()))
            {
                return true;
            }
        }
        if depth >= MAX_FORM_DEPTH {
            return false;
        }
        let Some(Obj::Dict(x)) = r.get(b"XObject").map(|x| self.objects.resolve(x)) else {
            return false;
        };
        let found = x.iter().any(|(_, x)| {
            let Obj::Ref(n) = x else { return false };
            if seen.len() >= MAX_FORMS || !seen.insert(*n) {
                return false;
            }
            let form = self.objects.get(*n);
            let Some(d) = form.as_dict() else {
                return false;
            };
            d.get(b"Subtype").and_then(Obj::as_name) == Some(b"Form")
                && self.has_one(
                    d.get(b"Resources")
                        .map(|r| self.objects.resolve(r))
                        .as_ref(),
                    depth + 1,
                    seen,
                )
        });
        found
    }

    /// A font dictionary's key (see `FontKey`); `None` when it is not a font. Each font
    /// object is looked at once a page.
    fn font(&self, font: &Obj) -> Option<FontKey> {
        if let Obj::Ref(n) = font {
            if let Some(k) = self.keys.borrow().get(n) {
                return k.clone();
            }
            let k = self.font_of(font);
            let mut keys = self.keys.borrow_mut();
            if keys.len() < MAX_NAMES {
                keys.insert(*n, k.clone());
            }
            return k;
        }
        self.font_of(font)
    }

    fn font_of(&self, font: &Obj) -> Option<FontKey> {
        let font = self.objects.resolve(font);
        let d = font.as_dict()?;
        let base = base_name(d.get(b"BaseFont").and_then(Obj::as_name)?).to_vec();
        let collection = (|| {
            if d.get(b"Subtype").and_then(Obj::as_name) != Some(b"Type0")
                || d.get(b"ToUnicode").is_some()
            {
                return None;
            }
            let encoding = self.objects.resolve(d.get(b"Encoding")?);
            if !matches!(encoding.as_name()?, b"Identity-H" | b"Identity-V") {
                return None;
            }
            let descendants = self.objects.resolve(d.get(b"DescendantFonts")?);
            let cid_font = match descendants {
                Obj::Array(a) => self.objects.resolve(a.first()?),
                _ => return None,
            };
            let info = self
                .objects
                .resolve(cid_font.as_dict()?.get(b"CIDSystemInfo")?);
            let info = info.as_dict()?;
            let registry = match info.get(b"Registry")? {
                Obj::Str(s) => s.clone(),
                _ => return None,
            };
            let ordering = match info.get(b"Ordering")? {
                Obj::Str(s) => s.clone(),
                _ => return None,
            };
            (registry == b"Adobe").then(|| Collection::of(&ordering))?
        })();
        Some((base, collection))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adobes_supplementary_cids_are_tabled() {
        let t = table();
        assert_eq!(t.len(), 2269);
        assert_eq!(t.get(&(Collection::Japan1, 13706)), Some(&'\u{20BB7}'));
        assert!(t.values().all(|c| *c as u32 > 0xFFFF));
    }

    #[test]
    fn the_nth_look_alike_is_replaced_and_counts_must_agree() {
        // PDFium's characters: 吉 (a true one), \r\n generated, 吉 (CID 13706).
        let values = ['吉', '\r', '\n', '吉', 'a'].map(|c| c as u32);
        let fixes = HashMap::from([(3, '\u{20BB7}')]);
        assert_eq!(
            replace(&values, &fixes, "吉\r\n吉a").as_deref(),
            Some("吉\r\n\u{20BB7}a")
        );
        // A text that is not the characters in order is left alone.
        assert_eq!(replace(&values, &fixes, "吉a"), None);
        // Nothing to change.
        assert_eq!(replace(&values, &HashMap::new(), "吉\r\n吉a"), None);
    }

    #[test]
    fn subset_tags_are_not_part_of_the_name() {
        assert_eq!(base_name(b"RRHYLO+UDShinGoPro-Light"), b"UDShinGoPro-Light");
        assert_eq!(base_name(b"MS-Gothic+X"), b"MS-Gothic+X");
    }

    #[test]
    fn a_pages_cids_are_read_through_forms_and_saved_states() {
        let pdf = b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /Resources << /Font << /C0 5 0 R /F1 8 0 R >> /XObject << /X1 9 0 R >> >> /Contents 4 0 R >> endobj
4 0 obj << /Length 89 >>
stream
BT /C0 7 Tf <358A0001> Tj q /F1 9 Tf (ab) Tj Q [<358A> -20 <0002>] TJ ET /X1 Do BI /W 1 ID \x00EI EI
endstream
endobj
5 0 obj << /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Mincho /Encoding /Identity-H /DescendantFonts [6 0 R] >> endobj
6 0 obj << /Type /Font /Subtype /CIDFontType0 /CIDSystemInfo 7 0 R >> endobj
7 0 obj << /Registry (Adobe) /Ordering (Japan1) /Supplement 4 >> endobj
8 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj
9 0 obj << /Type /XObject /Subtype /Form /Length 19 >>
stream
BT /C0 5 Tf <0003> Tj ET
endstream
endobj
trailer << /Root 1 0 R >>";
        let objects = Objects::parse(pdf.to_vec());
        let contents = Obj::Ref(4);
        let resources = objects.get(3).as_dict().unwrap().get(b"Resources").cloned();
        let page = PageObjects {
            objects: &objects,
            resources: resources.as_ref(),
            contents: Some(&contents),
        };
        let shown = shown(&page).expect("the page draws with such a font");
        let mincho = &shown[b"Mincho".as_slice()];
        assert_eq!(mincho.collection, Some(Collection::Japan1));
        assert_eq!(mincho.cids, [13706, 1, 13706, 2, 3]);
        assert_eq!(shown[b"Helvetica".as_slice()].collection, None);
    }
}
