//! A small streaming XML walker over quick-xml for the Office parsers: local names,
//! decoded text with only the five predefined and numeric references resolved (no
//! entity expansion), bounded depth.

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::error::{ApiError, ErrorCode};

#[derive(Clone, Copy)]
pub enum Node<'a> {
    /// An element opens: local name, attributes as (qualified name, value).
    Open(&'a str, &'a [(String, String)]),
    /// An element closes.
    Close(&'a str),
    /// Character data.
    Text(&'a str),
}

/// An element a walker passes over whole: `start` at its `Open`, then `passes` says of
/// each node up to its `Close` (included) that it is inside and is to be ignored.
#[derive(Default)]
pub struct Skip(usize);

impl Skip {
    /// The element just opened is passed over, with all it holds.
    pub fn start(&mut self) {
        self.0 = 1;
    }

    /// Whether `n` is inside the element being passed over (its own `Close` included).
    pub fn passes(&mut self, n: &Node<'_>) -> bool {
        if self.0 == 0 {
            return false;
        }
        match n {
            Node::Open(..) => self.0 += 1,
            Node::Close(..) => self.0 -= 1,
            Node::Text(_) => {}
        }
        true
    }
}

/// An element's local name (`w:p` → `p`), borrowed.
fn local(q: &str) -> &str {
    q.rsplit_once(':').map_or(q, |(_, l)| l)
}

/// Walk an XML document, calling `f` for every element and text node.
///
/// Read in place (quick-xml's slice reader: no copy of each event), the element names
/// borrowed, and the attributes written into strings kept from one element to the next:
/// a walk allocates about nothing per node (it allocated a name and every attribute's key
/// and value before, which was most of a PPTX read's time).
pub fn walk(xml: &[u8], max_depth: usize, mut f: impl FnMut(Node<'_>)) -> Result<(), ApiError> {
    refuse_entities(xml)?;
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut depth = 0usize;
    // The open element's attributes: the first `n` of `attrs`, their strings reused.
    let mut attrs: Vec<(String, String)> = Vec::new();
    let corrupt = |e: &dyn std::fmt::Display| {
        ApiError::new(ErrorCode::Corrupt, "a document part is not valid XML").with_cause(e)
    };
    loop {
        let ev = reader.read_event().map_err(|e| corrupt(&e))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let qname = e.name();
                let name = local(qname.as_ref());
                let mut n = 0;
                for a in e.attributes().flatten() {
                    if n == attrs.len() {
                        attrs.push(Default::default());
                    }
                    let (k, v) = &mut attrs[n];
                    k.clear();
                    k.push_str(a.key.as_ref());
                    v.clear();
                    if let Ok(value) = a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                        v.push_str(&value);
                    }
                    n += 1;
                }
                f(Node::Open(name, &attrs[..n]));
                if matches!(ev, Event::Empty(_)) {
                    f(Node::Close(name));
                } else {
                    depth += 1;
                    if depth > max_depth {
                        return Err(ApiError::new(
                            ErrorCode::Corrupt,
                            format!("XML nested deeper than {max_depth} levels"),
                        ));
                    }
                }
            }
            Event::End(ref e) => {
                depth = depth.saturating_sub(1);
                f(Node::Close(local(e.name().as_ref())));
            }
            Event::Text(ref t) => f(Node::Text(&t.xml10_content())),
            Event::CData(ref t) => {
                let s: &str = t.as_ref();
                f(Node::Text(s))
            }
            Event::GeneralRef(ref r) => {
                let mut one = [0u8; 4];
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(&*c.encode_utf8(&mut one)),
                    _ => match r.as_ref() {
                        "amp" => Some("&"),
                        "lt" => Some("<"),
                        "gt" => Some(">"),
                        "quot" => Some("\""),
                        "apos" => Some("'"),
                        // Anything else would need a DTD: never expanded.
                        _ => None,
                    },
                };
                if let Some(s) = resolved {
                    f(Node::Text(s));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(())
}

/// The value of an attribute by local name (`w:val` → `val`).
pub fn attr<'a>(attrs: &'a [(String, String)], local_name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == local_name || k.rsplit_once(':').is_some_and(|(_, l)| l == local_name))
        .map(|(_, v)| v.as_str())
}

/// A document that is one XML file (Word and Excel 2003 XML), read whole: held to the cap
/// of one package part (`--package-max-entry-bytes`), as a docx's body would be.
pub fn read_whole(path: &std::path::Path, cap: u64, what: &str) -> Result<Vec<u8>, ApiError> {
    let len = std::fs::metadata(path).map_err(ApiError::internal)?.len();
    if len > cap {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("this {what} is {len} bytes: over the {cap} bytes one document part may hold"),
        )
        .with_hint("Save it as .docx or .xlsx (zipped, read part by part), or raise DOCREADER_PACKAGE_MAX_ENTRY_BYTES."));
    }
    let xml = std::fs::read(path).map_err(ApiError::internal)?;
    refuse_entities(&xml)?;
    Ok(xml)
}

/// Office parts never need a DTD; one that declares entities is an expansion bomb.
pub fn refuse_entities(xml: &[u8]) -> Result<(), ApiError> {
    let head = &xml[..xml.len().min(64 * 1024)];
    if let Some(p) = find(head, b"<!DOCTYPE") {
        if find(&head[p..], b"<!ENTITY").is_some() {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                "an XML part declares entities (an entity-expansion bomb)",
            )
            .with_hint(
                "Office documents never declare XML entities; re-save the file from its program.",
            ));
        }
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}
