//! DrawingML paragraphs of text outside a document's main flow: SmartArt (Word and
//! PowerPoint keep it in a diagram data part, `*/diagrams/data*.xml`, not in the document
//! or slide) and the text boxes and shapes of an Excel drawing. Each paragraph (`a:p`) is
//! one line, its runs (`a:t`) joined.

use super::xml::{walk, Node};
use crate::error::ApiError;

/// The lines of a diagram data part (`dgm:dataModel`): each paragraph of each point's text
/// (`dgm:pt/dgm:t/a:p`), in the order of the point list — the order SmartArt lays out most
/// diagrams.
pub fn lines(xml: &[u8], depth: usize) -> Result<Vec<String>, ApiError> {
    let mut text = Paragraphs::default();
    // A point's text body is `dgm:t`; inside a paragraph, `t` is a run's text.
    let mut body = false;
    walk(xml, depth, |n| {
        match n {
            Node::Open("t", _) if !text.in_paragraph() => body = true,
            Node::Close("t") if !text.in_paragraph() => body = false,
            _ => {}
        }
        text.node(&n, body);
    })?;
    Ok(text.lines)
}

/// Paragraphs collected from a walk: fed every node, with whether the walk is inside a
/// text body (`in_body`), it keeps each non-empty paragraph's text, whitespace collapsed.
#[derive(Default)]
pub struct Paragraphs {
    pub lines: Vec<String>,
    para: Option<String>,
    run: bool,
}

impl Paragraphs {
    fn in_paragraph(&self) -> bool {
        self.para.is_some()
    }

    pub fn node(&mut self, n: &Node<'_>, in_body: bool) {
        match n {
            Node::Open("p", _) if in_body => self.para = Some(String::new()),
            Node::Open("t", _) if self.para.is_some() => self.run = true,
            Node::Close("t") => self.run = false,
            Node::Open("br", _) => {
                if let Some(p) = self.para.as_mut() {
                    p.push(' ');
                }
            }
            Node::Text(t) if self.run => {
                if let Some(p) = self.para.as_mut() {
                    p.push_str(t);
                }
            }
            Node::Close("p") => {
                if let Some(p) = self.para.take() {
                    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !p.is_empty() {
                        self.lines.push(p);
                    }
                }
            }
            _ => {}
        }
    }
}
