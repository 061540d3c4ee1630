//! What a page's annotations say (`include_annotations`, on by default): the text that
//! FreeText boxes (typewriter text, callouts) draw on the page, under `[Annotations]`, and
//! the comments of sticky notes, highlights, stamps and every other markup annotation with
//! their author, under `[Comments]`, after the page's text as Word's comments are.
//! Then, under `[Links]`, where a web or mail link leads when its text does not say it
//! (`here → https://…`): a link whose address the page shows is not listed again, nor one
//! inside the document (a page, a footnote). Popups only show their parent's comment,
//! form widgets are not text, and an annotation flagged never to show is a
//! `hidden_annotation` finding (its text kept, marked or dropped as `hidden_text` says);
//! each comment is a `comment` finding, as PowerPoint's are.

use pdfium_render::prelude::*;

use super::hidden::PageHidden;
use crate::options::HiddenText;

/// One page's annotations: their section text (empty when there is none) and their
/// findings.
#[derive(Default)]
pub(super) struct Notes {
    pub text: String,
    pub found: Vec<PageHidden>,
    /// The same as typed blocks (`output: "json"`): notes in the `annotations` part (what
    /// FreeText boxes draw) and the `comments` part (with their author).
    pub blocks: Vec<crate::model::Block>,
}

/// What one annotation shows or says.
enum Said {
    /// Drawn on the page (a FreeText box's text).
    Shown(String),
    /// Shown beside the page on request: its author, if named, and text.
    Comment(Option<String>, String),
}

/// The page's annotations as sections under its text, with `hidden_text` applied to the
/// ones that never show.
pub(super) fn read(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    page_text: &str,
    hidden_text: HiddenText,
) -> Notes {
    let mut shown: Vec<String> = Vec::new();
    let mut comments: Vec<String> = Vec::new();
    let mut links = Links::new(page_text, page.width().value * page.height().value);
    let mut found = Vec::new();
    let mut blocks = Vec::new();
    for annot in page.annotations().iter() {
        if let Some(link) = annot.as_link_annotation() {
            if !(annot.is_hidden() || annot.is_printable_but_not_viewable()) {
                links.add(layer, &annot, link);
            }
            continue;
        }
        let Some(said) = said(&annot) else { continue };
        let never_shown = annot.is_hidden() || annot.is_printable_but_not_viewable();
        let (list, line, comment) = match said {
            Said::Shown(t) => {
                blocks.push((false, None, t.clone()));
                (&mut shown, t, false)
            }
            Said::Comment(author, t) => {
                blocks.push((true, author.clone(), t.clone()));
                let line = match author {
                    Some(a) => format!("{a}: {t}"),
                    None => t,
                };
                (&mut comments, line, true)
            }
        };
        if never_shown && hidden_text == HiddenText::Drop {
            blocks.pop();
        }
        if never_shown {
            found.push(PageHidden {
                kind: crate::findings::FindingKind::HiddenAnnotation,
                text: line.clone(),
                boxes: Vec::new(),
            });
            let mut out = String::new();
            crate::findings::push_hidden(&mut out, &line, hidden_text, false);
            if !out.is_empty() {
                list.push(out);
            }
        } else {
            if comment {
                found.push(PageHidden {
                    kind: crate::findings::FindingKind::Comment,
                    text: line.clone(),
                    boxes: Vec::new(),
                });
            }
            list.push(line);
        }
    }
    let links = links.listed;
    let link_lines: Vec<String> = links
        .iter()
        .map(|(anchor, uri)| {
            if anchor.is_empty() {
                uri.clone()
            } else {
                format!("{anchor} → {uri}")
            }
        })
        .collect();
    let mut text = String::new();
    for (head, lines) in [
        ("[Annotations]", &shown),
        ("[Comments]", &comments),
        ("[Links]", &link_lines),
    ] {
        if lines.is_empty() {
            continue;
        }
        text.push_str(head);
        text.push('\n');
        for l in lines.iter() {
            text.push_str(l);
            text.push('\n');
        }
    }
    // In the order the text gives them: what is drawn, then the comments.
    blocks.sort_by_key(|(comment, _, _)| *comment);
    let blocks = blocks
        .into_iter()
        .map(|(comment, author, text)| {
            crate::model::Block::in_part(
                crate::model::Content::Note { text, author },
                Some(if comment { "comments" } else { "annotations" }),
            )
        })
        .chain(links.into_iter().map(|(name, value)| {
            crate::model::Block::in_part(
                crate::model::Content::Field { name, value },
                Some("links"),
            )
        }))
        .collect();
    Notes {
        text,
        found,
        blocks,
    }
}

/// What an annotation shows or says, if it holds text: a FreeText box's text is on the
/// page; any other markup annotation's `/Contents` is its comment.
fn said(annot: &PdfPageAnnotation<'_>) -> Option<Said> {
    use PdfPageAnnotationType as T;
    let kind = annot.annotation_type();
    if matches!(
        kind,
        T::Popup | T::Link | T::Widget | T::XfaWidget | T::Unknown | T::Redacted
    ) {
        return None;
    }
    let contents = annot.contents()?;
    if kind == T::FreeText {
        // Its lines as drawn.
        let lines: Vec<&str> = contents
            .split(['\r', '\n'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        return (!lines.is_empty()).then(|| Said::Shown(lines.join("\n")));
    }
    let text = contents.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return None;
    }
    let author = annot
        .creator()
        .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|a| !a.is_empty());
    Some(Said::Comment(author, text))
}

/// At most this many links are looked at a page (a page can carry any number).
const MAX_LINKS: usize = 200;

/// A link's text is cut at this many characters, its address at `MAX_URI`.
const MAX_ANCHOR: usize = 200;
const MAX_URI: usize = 2048;

/// A page's links worth listing: (the text under the link, where it leads).
struct Links<'t> {
    listed: Vec<(String, String)>,
    /// The page's text, lowercased without whitespace, made when a link first asks.
    squashed: Option<String>,
    page_text: &'t str,
    /// The page's area: a link's rectangle over a tenth of it is no anchor's.
    page_area: f32,
    seen: usize,
}

impl<'t> Links<'t> {
    fn new(page_text: &'t str, page_area: f32) -> Self {
        Self {
            listed: Vec::new(),
            squashed: None,
            page_text,
            page_area,
            seen: 0,
        }
    }

    /// A link annotation: listed when it leads to a web or mail address the page does not
    /// show. Two in a row to one address (a link over two lines) are one, their texts
    /// joined.
    fn add(
        &mut self,
        layer: &PdfPageText<'_>,
        annot: &PdfPageAnnotation<'_>,
        link: &PdfPageLinkAnnotation<'_>,
    ) {
        self.seen += 1;
        if self.seen > MAX_LINKS {
            return;
        }
        let Some(uri) = link
            .link()
            .ok()
            .and_then(|l| l.action())
            .and_then(|a| a.as_uri_action().and_then(|u| u.uri().ok()))
        else {
            return;
        };
        let mut uri: String = uri.trim().chars().filter(|c| !c.is_control()).collect();
        if let Some((cut, _)) = uri.char_indices().nth(MAX_URI) {
            uri.truncate(cut);
            uri.push('…');
        }
        if !outside(&uri) {
            return;
        }
        // The text under it, the rectangle narrowed a little: PDFium gives every character
        // whose box the rectangle touches, and a link's rectangle touches its neighbours.
        let anchor = annot
            .bounds()
            .ok()
            .filter(|r| r.width().value * r.height().value <= 0.1 * self.page_area)
            .map(|r| {
                let (dx, dy) = (0.2 * r.height().value, 0.25 * r.height().value);
                layer.inside_rect(PdfRect::new_from_values(
                    r.bottom().value + dy,
                    r.left().value + dx,
                    r.top().value - dy,
                    r.right().value - dx,
                ))
            })
            .unwrap_or_default();
        let mut anchor = anchor.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some((cut, _)) = anchor.char_indices().nth(MAX_ANCHOR) {
            anchor.truncate(cut);
            anchor.push('…');
        }
        if let Some((a, u)) = self.listed.last_mut() {
            if *u == uri {
                if !anchor.is_empty() && !a.contains(&anchor) && a.len() < 4 * MAX_ANCHOR {
                    if !a.is_empty() {
                        a.push(' ');
                    }
                    a.push_str(&anchor);
                }
                return;
            }
        }
        let squashed = self.squashed.get_or_insert_with(|| {
            self.page_text
                .chars()
                .filter(|c| !c.is_whitespace() && !c.is_control())
                .flat_map(char::to_lowercase)
                .collect()
        });
        if squashed.contains(&bare(&uri)) {
            return;
        }
        self.listed.push((anchor, uri));
    }
}

/// Whether an address leads out of the document: a web, mail, ftp or phone address.
fn outside(uri: &str) -> bool {
    let lower = uri.to_ascii_lowercase();
    ["http://", "https://", "mailto:", "ftp://", "tel:", "www."]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// An address as a page would show it: lowercased, without its scheme, `www.` and a
/// trailing `/`, no whitespace.
fn bare(uri: &str) -> String {
    let lower: String = uri
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let mut s = lower.as_str();
    for p in ["https://", "http://", "ftp://", "mailto:", "tel:"] {
        if let Some(rest) = s.strip_prefix(p) {
            s = rest;
            break;
        }
    }
    s = s.strip_prefix("www.").unwrap_or(s);
    s.trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_as_a_page_shows_it() {
        assert_eq!(bare("http://www.mozilla.org/"), "mozilla.org");
        assert_eq!(bare("mailto:Press@Example.org"), "press@example.org");
        assert_eq!(
            bare("https://layout-parser.github.io"),
            "layout-parser.github.io"
        );
        assert!(outside("HTTPS://example.org"));
        assert!(!outside("#page=3"));
        assert!(!outside("javascript:alert(1)"));
    }
}
