//! What a page's annotations say (`include_annotations`, on by default): the text that
//! FreeText boxes (typewriter text, callouts) draw on the page, under `[Annotations]`, and
//! the comments of sticky notes, highlights, stamps and every other markup annotation with
//! their author, under `[Comments]`, after the page's text as Word's comments are.
//! Popups only show their parent's comment, links and form widgets are not text, and an
//! annotation flagged never to show is a `hidden_annotation` finding (its text kept,
//! marked or dropped as `hidden_text` says); each comment is a `comment` finding, as
//! PowerPoint's are.

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
pub(super) fn read(page: &PdfPage<'_>, hidden_text: HiddenText) -> Notes {
    let mut shown: Vec<String> = Vec::new();
    let mut comments: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut blocks = Vec::new();
    for annot in page.annotations().iter() {
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
    let mut text = String::new();
    for (head, lines) in [("[Annotations]", &shown), ("[Comments]", &comments)] {
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
