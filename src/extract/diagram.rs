//! SmartArt text (Word and PowerPoint keep it in a diagram data part, `*/diagrams/data*.xml`,
//! not in the document or slide): each point's paragraphs, one line each, in the order of
//! the point list — the order SmartArt lays out most diagrams.

use super::xml::{walk, Node};
use crate::error::ApiError;

/// The lines of a diagram data part (`dgm:dataModel`): each paragraph of each point's text
/// (`dgm:pt/dgm:t/a:p`), its runs joined, empty ones left out.
pub fn lines(xml: &[u8], depth: usize) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::new();
    // Inside a point's text body (`dgm:t`), a paragraph of it (`a:p`), a run's text (`a:t`).
    let (mut body, mut para, mut run) = (false, None::<String>, false);
    walk(xml, depth, |n| match n {
        Node::Open("t", _) if para.is_some() => run = true,
        Node::Close("t") if run => run = false,
        Node::Open("t", _) => body = true,
        Node::Close("t") => body = false,
        Node::Open("p", _) if body => para = Some(String::new()),
        Node::Open("br", _) => {
            if let Some(p) = para.as_mut() {
                p.push(' ');
            }
        }
        Node::Close("p") => {
            if let Some(p) = para.take() {
                let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                if !p.is_empty() {
                    out.push(p);
                }
            }
        }
        Node::Text(t) if run => {
            if let Some(p) = para.as_mut() {
                p.push_str(t);
            }
        }
        _ => {}
    })?;
    Ok(out)
}
