//! A page's native text: its whole text layer (rebuilt character by character when a lone
//! surrogate blanks it; right-to-left runs in logical order), its filled-in form fields,
//! and whether it draws images.

use pdfium_render::prelude::*;

use super::differences::PageFonts;
use super::hidden::PageHidden;
use super::{cid, fonts, lines};
use crate::error::{ApiError, ErrorCode};

/// A page's text layer, loaded once a page for its text and for the hidden-text checks.
pub(super) fn layer<'a>(page: &'a PdfPage<'_>) -> Result<PdfPageText<'a>, ApiError> {
    page.text().map_err(|e| {
        ApiError::new(ErrorCode::Corrupt, "a page's text cannot be read").with_cause(e)
    })
}

/// A page's native text: its text layer, then its filled-in form fields under
/// `[Form fields]`; and its lines as `lines::mend` mended them, where it did. `turned`: the
/// page's text is drawn turned for its `/Rotate` to set upright (`upright`).
pub(super) fn native_text(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    type3: PageFonts<'_>,
    turned: bool,
) -> (String, Option<Vec<lines::Line>>) {
    let (text, mended) = page_text(layer, type3, turned);
    (with_fields(page, text), mended)
}

/// The text, then the page's filled-in form fields under `[Form fields]`.
fn with_fields(page: &PdfPage<'_>, text: String) -> String {
    let fields = form_values(page);
    if fields.is_empty() {
        return text;
    }
    format!(
        "{}\n[Form fields]\n{}\n",
        text.trim_end(),
        fields.join("\n")
    )
}

/// Which hidden finding of a page a character belongs to (its index in the page's
/// findings), by its text object's bounds: PDFium gives them alike for the object and for
/// its characters' object. By their bits: one lookup a character, however many objects
/// are hidden.
pub(super) struct HiddenBoxes(std::collections::HashMap<[u32; 4], usize>);

/// A character's hidden finding, if any (see `HiddenBoxes`).
pub(super) type Owner = Option<usize>;

impl HiddenBoxes {
    /// The boxes of the findings `which` accepts.
    pub(super) fn new(found: &[PageHidden], which: impl Fn(&PageHidden) -> bool) -> Self {
        let mut map = std::collections::HashMap::new();
        for (k, h) in found.iter().enumerate().filter(|(_, h)| which(h)) {
            for b in &h.boxes {
                map.entry(b.map(f32::to_bits)).or_insert(k);
            }
        }
        Self(map)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn of(&self, c: &PdfPageTextChar<'_>) -> Owner {
        let q = c.text_object().ok()?.bounds().ok()?;
        let b = [
            q.left().value,
            q.bottom().value,
            q.right().value,
            q.top().value,
        ];
        self.0.get(&b.map(f32::to_bits)).copied()
    }
}

/// The page's characters, each with its hidden finding, repaired as `page_text` repairs
/// the text (a font without a Unicode map read through its cmap, right-to-left runs put
/// in logical order).
fn owned_chars(
    layer: &PdfPageText<'_>,
    boxes: &HiddenBoxes,
    type3: PageFonts<'_>,
) -> Vec<(char, Owner)> {
    let owner = |c: &PdfPageTextChar<'_>| boxes.of(c);
    let plain = layer.inside_rect(everywhere());
    if fonts::suspect(&plain) || type3.is_forced() {
        if let Some(chars) = fonts::recover_with(layer, &owner, type3) {
            return chars;
        }
    }
    if plain.chars().any(is_rtl) {
        return logical_order_with(layer, &owner);
    }
    // UTF-16 units, then characters (a pair takes its first unit's owner; a lone
    // surrogate becomes U+FFFD).
    let units: Vec<(u32, Owner)> = layer
        .chars()
        .iter()
        .map(|c| (c.unicode_value(), owner(&c)))
        .collect();
    let mut chars: Vec<(char, Owner)> = Vec::with_capacity(units.len());
    let mut k = 0;
    while k < units.len() {
        let (u, h) = units[k];
        let c = match u {
            0xD800..=0xDBFF
                if k + 1 < units.len() && (0xDC00..=0xDFFF).contains(&units[k + 1].0) =>
            {
                k += 1;
                char::from_u32(0x10000 + ((u - 0xD800) << 10) + (units[k].0 - 0xDC00))
            }
            _ => char::from_u32(u),
        };
        chars.push((c.unwrap_or('\u{FFFD}'), h));
        k += 1;
    }
    chars
}

/// On a page whose font has no Unicode map, the findings' text as the cmap repair reads
/// it (PDFium's text of their objects is the font's codes): each finding's characters, a
/// space between runs.
pub(super) fn repair_hidden_texts(
    layer: &PdfPageText<'_>,
    found: &mut [PageHidden],
    type3: PageFonts<'_>,
) {
    // Two texts on one spot are listed as `a | b`; the others are runs of characters.
    let boxes = HiddenBoxes::new(found, PageHidden::unseen);
    if boxes.is_empty() || !(type3.is_forced() || fonts::suspect(&layer.inside_rect(everywhere())))
    {
        return;
    }
    let Some(chars) = fonts::recover_with(layer, &|c| boxes.of(c), type3) else {
        return;
    };
    let mut texts = vec![String::new(); found.len()];
    let mut last: Owner = None;
    for (c, owner) in chars {
        if let Some(k) = owner {
            if last != owner && !texts[k].is_empty() {
                texts[k].push(' ');
            }
            texts[k].push(c);
        }
        last = owner;
    }
    for (h, t) in found.iter_mut().zip(texts) {
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if !t.is_empty() {
            h.text = t;
        }
    }
}

/// A page's native text with the characters of the `hidden` findings' text objects
/// between `⟦hidden: …⟧` (`mark`) or left out (`drop`; a line that held only hidden text
/// goes with it). Built from the characters one by one, with the repairs of `page_text`
/// made on them as on any page.
pub(super) fn native_text_hiding(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    hidden: &HiddenBoxes,
    mark: bool,
    type3: PageFonts<'_>,
) -> String {
    let chars = owned_chars(layer, hidden, type3)
        .into_iter()
        .map(|(c, owner)| (c, owner.is_some()));
    let mut out = String::with_capacity(chars.len());
    let mut span = String::new();
    // Whitespace PDFium put after a hidden span: part of it when more hidden text follows.
    let mut gap = String::new();
    let close = |out: &mut String, span: &mut String, gap: &mut String| {
        if span.is_empty() {
            return;
        }
        let line_start = out.is_empty() || out.ends_with('\n');
        if mark {
            out.push_str("⟦hidden: ");
            out.push_str(span.trim_end());
            out.push('⟧');
        } else if line_start && gap.contains('\n') {
            // The line held only hidden text: it goes, with its break.
            gap.clear();
        }
        span.clear();
    };
    for (c, h) in chars {
        if h {
            // A span ends with its line: each line's hidden text is marked on its own.
            if gap.contains('\n') {
                close(&mut out, &mut span, &mut gap);
                out.push_str(&gap);
                gap.clear();
            }
            span.push_str(&gap);
            gap.clear();
            span.push(c);
        } else if !span.is_empty() && c.is_whitespace() {
            gap.push(c);
        } else {
            close(&mut out, &mut span, &mut gap);
            out.push_str(&gap);
            gap.clear();
            out.push(c);
        }
    }
    close(&mut out, &mut span, &mut gap);
    out.push_str(&gap);
    with_fields(page, lf_only(&out))
}

/// A page's text without control characters. PDFium writes U+0002 where a word was
/// hyphenated at a line end (and joins the two lines there): the word is joined again
/// (`com\u{2}pile` → `compile`) when letters stand on both sides and a lowercase one
/// follows, unless the page writes the same word with a hyphen elsewhere and never
/// without; else it was a hyphen that stays (`Schwarz-Weiß`, `D.3-4`). Any other control
/// character (a code of a font without a Unicode map) is U+FFFD: an unknown character,
/// said so, never a byte a terminal or a JSON consumer trips on.
pub(super) fn without_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let stray = |c: char| c.is_control() && !matches!(c, '\n' | '\t');
    // Every page pays this: a byte scan first (C0 and DEL are single bytes, C1 controls
    // start with 0xC2), the characters only when it finds a candidate.
    let candidate = text
        .bytes()
        .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7F || b == 0xC2);
    if !candidate || !text.chars().any(stray) {
        return std::borrow::Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    // The page's words as written, once: `a-b` forms and plain words.
    let mut hyphenated = std::collections::HashSet::new();
    let mut words = std::collections::HashSet::new();
    for w in text.split(|c: char| !(c.is_alphabetic() || c == '-')) {
        if w.contains('-') {
            hyphenated.insert(w);
        } else if !w.is_empty() {
            words.insert(w);
        }
    }
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if c != '\u{2}' {
            out.push(if stray(c) { '\u{FFFD}' } else { c });
            continue;
        }
        let left: String = {
            let start = chars[..i]
                .iter()
                .rposition(|c| !c.is_alphabetic())
                .map_or(0, |p| p + 1);
            chars[start..i].iter().collect()
        };
        let right: String = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_alphabetic())
            .collect();
        let join = !left.is_empty()
            && right.chars().next().is_some_and(char::is_lowercase)
            && !(hyphenated.contains(format!("{left}-{right}").as_str())
                && !words.contains(format!("{left}{right}").as_str()));
        if !join {
            out.push('-');
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A rectangle holding any page.
fn everywhere() -> PdfRect {
    PdfRect::new_from_values(-1.0e7, -1.0e7, 1.0e7, 1.0e7)
}

/// The page's text layer, all of it, with `\n` line breaks; and its lines as
/// `lines::mend` mended them (none where nothing needed mending: PDFium's text is it).
/// A page of `turned` text is read as PDFium lays out its characters (its line breaks
/// where its lines are): the text of a rectangle breaks a line only where the baseline's
/// height moved, and turned lines stand side by side at one height, so they ran together
/// (`des Innern11014 Berlin`).
fn page_text(
    layer: &PdfPageText<'_>,
    type3: PageFonts<'_>,
    turned: bool,
) -> (String, Option<Vec<lines::Line>>) {
    // `all()` keeps only text inside the page-size rectangle anchored at the origin, which
    // drops whole pages whose MediaBox starts elsewhere; ask for everything instead.
    let mut text = if turned {
        char_by_char(layer)
    } else {
        layer.inside_rect(everywhere())
    };
    if text.is_empty() && layer.len() > 0 {
        // pdfium-render turns the whole page into "" when PDFium's UTF-16 holds one lone
        // surrogate; rebuild it character by character instead.
        text = char_by_char(layer);
    }
    if type3.is_forced() || fonts::suspect(&text) {
        if let Some(recovered) = fonts::recover(layer, type3) {
            tracing::debug!("text of a font without a Unicode map recovered from its cmap");
            return (recovered.replace('\0', "\n"), None);
        }
    }
    let rtl = text.chars().any(is_rtl);
    if rtl {
        text = logical_order_with(layer, &|_| None)
            .into_iter()
            .map(|c| c.0)
            .collect();
    }
    // PDFium separates lines with CRLF; NULs can appear from broken fonts.
    let text = lf_only(&text);
    let suspect = !rtl && lines::suspect(&text);
    if suspect || (!rtl && lines::overprinted(&text)) {
        // Mended only where the characters read one by one give PDFium's text exactly:
        // a page whose lines need no mending reads as before, whatever its characters.
        if let Some(read) = lines::read(layer).filter(|l| lf_only(&lines::text(l)) == text) {
            if let (mended, true) = lines::mend(read, suspect) {
                return (lf_only(&lines::text(&mended)), Some(mended));
            }
        }
    }
    // Supplementary characters of CID fonts put back last: the checks above compare the
    // text with PDFium's characters, and a page in logical order (right to left) or with
    // mended lines no longer has them in PDFium's order (such a page keeps PDFium's).
    if !rtl && cid::may_apply(&text) {
        if let Some(restored) = cid::restore(layer, type3, &text) {
            tracing::debug!("supplementary characters of a CID font without a Unicode map");
            return (restored, None);
        }
    }
    (text, None)
}

/// Text with `\n` line breaks only (PDFium writes `\r\n`; NULs come from broken fonts).
pub(super) fn lf_only(text: &str) -> String {
    text.replace("\r\n", "\n").replace(['\r', '\0'], "\n")
}

/// The page's text from its characters one by one: surrogate pairs joined, lone
/// surrogates replaced by U+FFFD.
fn char_by_char(layer: &PdfPageText<'_>) -> String {
    let units: Vec<u32> = layer.chars().iter().map(|c| c.unicode_value()).collect();
    let mut out = String::with_capacity(units.len());
    let mut utf16 = Vec::with_capacity(units.len());
    for u in units {
        match char::from_u32(u) {
            Some(c) if u > 0xFFFF => {
                out.extend(char::decode_utf16(utf16.drain(..)).map(|r| r.unwrap_or('\u{FFFD}')));
                out.push(c);
            }
            _ if u <= 0xFFFF => utf16.push(u as u16),
            _ => utf16.push(0xFFFD),
        }
    }
    out.extend(char::decode_utf16(utf16).map(|r| r.unwrap_or('\u{FFFD}')));
    out
}

pub(super) fn is_rtl(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
}

/// Whether one glyph's characters come out in visual order: the lam-alef ligature, which
/// PDFium decomposes alef-first, and whole-word glyphs (they hold a space, which no
/// ligature does) whose ToUnicode strings producers write visually.
fn cluster_is_visual(chars: &[char]) -> bool {
    match chars {
        ['\u{0622}' | '\u{0623}' | '\u{0625}' | '\u{0627}', '\u{0644}'] => true,
        _ => chars.len() > 2 && chars.contains(&' ') && chars.iter().copied().any(is_rtl),
    }
}

/// Rebuild a page's text with right-to-left runs in logical order, each character with
/// its `owner` (the hidden finding it belongs to, if any). Two things go wrong in real files (both seen in the
/// corpus): a ligature glyph whose ToUnicode string lists its characters in visual order
/// (all share one origin), and RTL glyphs drawn left to right in stream order (origins
/// advance rightwards). Runs already logical are kept.
fn logical_order_with(
    layer: &PdfPageText<'_>,
    owner: &dyn Fn(&PdfPageTextChar<'_>) -> Owner,
) -> Vec<(char, Owner)> {
    // Clusters: consecutive characters that come from one glyph (same origin).
    type Cluster = (Vec<(char, Owner)>, Option<f32>);
    let mut clusters: Vec<Cluster> = Vec::new();
    for c in layer.chars().iter() {
        let Some(ch) = c.unicode_char() else { continue };
        let x = c.origin_x().ok().map(|x| x.value);
        let item = (ch, owner(&c));
        match clusters.last_mut() {
            Some((chars, Some(px)))
                if x == Some(*px)
                    && !matches!(ch, '\r' | '\n')
                    && chars.last().is_none_or(|l| l.0 != '\n') =>
            {
                chars.push(item)
            }
            _ => clusters.push((vec![item], x)),
        }
    }
    for (chars, _) in clusters.iter_mut() {
        let plain: Vec<char> = chars.iter().map(|c| c.0).collect();
        if cluster_is_visual(&plain) {
            chars.reverse();
        }
    }
    let rtl = |c: &Cluster| c.0.iter().any(|ch| is_rtl(ch.0));
    let space = |c: &Cluster| c.0.iter().all(|ch| ch.0 == ' ');
    let mut out = Vec::new();
    let mut i = 0;
    while i < clusters.len() {
        if !rtl(&clusters[i]) {
            out.extend(clusters[i].0.iter().copied());
            i += 1;
            continue;
        }
        // A run of RTL clusters, with the spaces between them.
        let mut j = i;
        let mut last = i;
        while j < clusters.len() && (rtl(&clusters[j]) || space(&clusters[j])) {
            if rtl(&clusters[j]) {
                last = j;
            }
            j += 1;
        }
        let run = &clusters[i..=last];
        let xs: Vec<f32> = run.iter().filter_map(|c| c.1).collect();
        let visual =
            xs.len() >= 2 && xs.windows(2).filter(|w| w[1] > w[0]).count() * 2 > xs.len() - 1;
        if visual {
            run.iter()
                .rev()
                .for_each(|c| out.extend(c.0.iter().copied()));
        } else {
            run.iter().for_each(|c| out.extend(c.0.iter().copied()));
        }
        i = last + 1;
    }
    out
}

/// Filled-in AcroForm values on a page (`name: value`), which are not part of its text
/// layer: a form's answers are often the point of reading it.
pub(super) fn form_values(page: &PdfPage<'_>) -> Vec<String> {
    form_fields(page)
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

/// The page's filled-in form fields whose widget is never shown (`/F` flags Hidden or
/// NoView), as hidden findings: their values are in `[Form fields]` but on no screen.
pub(super) fn hidden_form_fields(page: &PdfPage<'_>) -> Vec<super::hidden::PageHidden> {
    form_fields(page)
        .into_iter()
        .filter(|(_, unseen)| *unseen)
        .map(|(line, _)| super::hidden::PageHidden {
            kind: crate::findings::FindingKind::HiddenFormField,
            text: line,
            boxes: Vec::new(),
        })
        .collect()
}

/// Every filled-in field's `name: value`, and whether its widget is hidden from view.
fn form_fields(page: &PdfPage<'_>) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for annot in page.annotations().iter() {
        let unseen = annot.is_hidden() || annot.is_printable_but_not_viewable();
        let Some(field) = annot.as_form_field() else {
            continue;
        };
        let value = match field {
            PdfFormField::Text(f) => f.value(),
            PdfFormField::ComboBox(f) => f.value(),
            PdfFormField::ListBox(f) => f.value(),
            PdfFormField::Checkbox(f) => f
                .is_checked()
                .ok()
                .filter(|c| *c)
                .map(|_| "[x]".to_string()),
            PdfFormField::RadioButton(f) => f
                .is_checked()
                .ok()
                .filter(|c| *c)
                .map(|_| "(selected)".to_string()),
            _ => None,
        };
        let Some(value) = value
            .map(|v| v.trim().replace(['\r', '\n'], " "))
            .filter(|v| !v.is_empty())
        else {
            continue;
        };
        let line = match field.name() {
            Some(name) if !name.trim().is_empty() => format!("{}: {value}", name.trim()),
            _ => value,
        };
        match out.iter_mut().find(|(l, _)| *l == line) {
            // Shown by any of its widgets: seen.
            Some(seen) => seen.1 &= unseen,
            None => out.push((line, unseen)),
        }
    }
    out
}

/// Whether a page draws an image (directly or inside a form XObject).
pub(super) fn has_images(page: &PdfPage<'_>) -> bool {
    page.objects().iter().any(|o| {
        matches!(o.object_type(), PdfPageObjectType::Image)
            || o.as_x_object_form_object().is_some_and(|f| {
                f.iter()
                    .any(|i| i.object_type() == PdfPageObjectType::Image)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::without_controls;

    #[test]
    fn line_end_hyphens_and_control_characters() {
        // As PDFium gives them (tracemonkey.pdf, GeoTopo-komprimiert.pdf).
        assert_eq!(
            without_controls("difficult to com\u{2}pile than statically"),
            "difficult to compile than statically"
        );
        assert_eq!(
            without_controls("(Schwarz\u{2}Weiß, Ringbindung)"),
            "(Schwarz-Weiß, Ringbindung)"
        );
        assert_eq!(
            without_controls("D.3.4\u{2}5 and end\u{2}"),
            "D.3.4-5 and end-"
        );
        // Written with a hyphen elsewhere on the page, never without: a real hyphen.
        assert_eq!(
            without_controls("a mixed-mode run; then mixed\u{2}mode again"),
            "a mixed-mode run; then mixed-mode again"
        );
        assert_eq!(
            without_controls("x\u{1}y\u{7f}z\n\tok"),
            "x\u{FFFD}y\u{FFFD}z\n\tok"
        );
        assert!(matches!(
            without_controls("plain\ntext"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
