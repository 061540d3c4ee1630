//! A small streaming XML walker over quick-xml for the Office parsers: local names,
//! decoded text with only the five predefined and numeric references resolved (no
//! entity expansion), bounded depth.

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::error::{ApiError, ErrorCode};

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

fn local(q: &str) -> String {
    match q.rsplit_once(':') {
        Some((_, l)) => l.to_string(),
        None => q.to_string(),
    }
}

/// Walk an XML document, calling `f` for every element and text node.
pub fn walk(xml: &[u8], max_depth: usize, mut f: impl FnMut(Node<'_>)) -> Result<(), ApiError> {
    refuse_entities(xml)?;
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let corrupt = |e: &dyn std::fmt::Display| {
        ApiError::new(ErrorCode::Corrupt, "a document part is not valid XML").with_cause(e)
    };
    loop {
        let ev = reader.read_event_into(&mut buf).map_err(|e| corrupt(&e))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = local(e.name().as_ref());
                let attrs: Vec<(String, String)> = e
                    .attributes()
                    .flatten()
                    .map(|a| {
                        let v = a
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .map(|v| v.into_owned())
                            .unwrap_or_default();
                        let key: &str = a.key.as_ref();
                        (key.to_string(), v)
                    })
                    .collect();
                f(Node::Open(&name, &attrs));
                if matches!(ev, Event::Empty(_)) {
                    f(Node::Close(&name));
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
                f(Node::Close(&local(e.name().as_ref())));
            }
            Event::Text(ref t) => f(Node::Text(&t.xml10_content())),
            Event::CData(ref t) => {
                let s: &str = t.as_ref();
                f(Node::Text(s))
            }
            Event::GeneralRef(ref r) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => match r.as_ref() {
                        "amp" => Some("&".into()),
                        "lt" => Some("<".into()),
                        "gt" => Some(">".into()),
                        "quot" => Some("\"".into()),
                        "apos" => Some("'".into()),
                        // Anything else would need a DTD: never expanded.
                        _ => None,
                    },
                };
                if let Some(s) = resolved {
                    f(Node::Text(&s));
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
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
    hay.windows(needle.len()).position(|w| w == needle)
}
