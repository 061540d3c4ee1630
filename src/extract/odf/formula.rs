//! An OpenDocument formula object (`Object N/content.xml` holding MathML, as LibreOffice
//! Math writes it) as LaTeX, as Word's equations are (`docx/math.rs`): `\frac{a}{b}`,
//! `x^{2}`, `\sqrt[3]{x}`, `\sum_{i=1}^{n}`, `\left(…\right)`, matrices. Before, such an
//! object was dropped, and a document's formulas were missing from its text.

use crate::extract::symbols::{latex_bracket, LATEX_FUNCTIONS};
use crate::extract::xml::{attr, walk, Node};

#[derive(Debug, Default)]
struct El {
    name: String,
    attrs: Vec<(String, String)>,
    kids: Vec<Kid>,
}

#[derive(Debug)]
enum Kid {
    El(El),
    Text(String),
}

/// The formula's LaTeX, when `xml` is a formula object (a `math` root); `None` otherwise.
pub(super) fn latex(xml: &[u8], depth: usize) -> Option<String> {
    let mut stack: Vec<El> = vec![El::default()];
    walk(xml, depth, |n| match n {
        Node::Open(name, a) => stack.push(El {
            name: name.to_string(),
            attrs: a.to_vec(),
            kids: Vec::new(),
        }),
        Node::Close(_) => {
            if stack.len() > 1 {
                let el = stack.pop().expect("checked");
                if let Some(parent) = stack.last_mut() {
                    parent.kids.push(Kid::El(el));
                }
            }
        }
        Node::Text(t) => {
            if let Some(el) = stack.last_mut() {
                el.kids.push(Kid::Text(t.to_string()));
            }
        }
    })
    .ok()?;
    let root = stack.into_iter().next()?;
    let math = root.kids.into_iter().find_map(|k| match k {
        Kid::El(e) if e.name == "math" => Some(e),
        _ => None,
    })?;
    let tex = render(&math).trim().to_string();
    (!tex.is_empty()).then_some(tex)
}

fn elements(el: &El) -> Vec<&El> {
    el.kids
        .iter()
        .filter_map(|k| match k {
            Kid::El(e) => Some(e),
            Kid::Text(_) => None,
        })
        .collect()
}

fn text(el: &El) -> String {
    let mut out = String::new();
    for k in &el.kids {
        match k {
            Kid::Text(t) => out.push_str(t.trim()),
            Kid::El(e) => out.push_str(&text(e)),
        }
    }
    out
}

/// A group as an argument: bare when one character, else in braces.
fn group(el: Option<&&El>) -> String {
    let inner = el.map(|e| render(e)).unwrap_or_default();
    if inner.chars().count() == 1 {
        inner
    } else {
        format!("{{{inner}}}")
    }
}

/// A row's pieces in order; two names side by side stay apart (`classic example`).
fn all(el: &El) -> String {
    let mut out = String::new();
    for piece in elements(el).into_iter().map(render) {
        if out.ends_with(|c: char| c.is_alphanumeric())
            && piece.starts_with(|c: char| c.is_alphabetic())
            && (out.chars().rev().take_while(|c| c.is_alphabetic()).count() > 1
                || piece.chars().take_while(|c| c.is_alphabetic()).count() > 1)
        {
            out.push(' ');
        }
        out.push_str(&piece);
    }
    out
}

fn render(el: &El) -> String {
    let kids = elements(el);
    match el.name.as_str() {
        // The presentation, not its annotations (StarMath source, content MathML).
        "semantics" => kids.first().map(|e| render(e)).unwrap_or_default(),
        "annotation" | "annotation-xml" => String::new(),
        // A letter or operator LaTeX writes as a command (`π`, `⋅`, `≤`).
        "mo" | "mi" if text(el).chars().count() == 1 => {
            let t = text(el);
            let c = t.chars().next().expect("one");
            match crate::extract::symbols::latex_command(c) {
                Some(cmd) => format!("{cmd} "),
                None => match c {
                    '−' | '–' => "-".into(),
                    '∑' => "\\sum ".into(),
                    '∏' => "\\prod ".into(),
                    '∫' => "\\int ".into(),
                    '{' => "\\{".into(),
                    '}' => "\\}".into(),
                    '\u{2061}' | '\u{2062}' | '\u{2063}' => String::new(),
                    c => c.to_string(),
                },
            }
        }
        "mi" => {
            let t = text(el);
            if t.chars().count() > 1 && LATEX_FUNCTIONS.contains(&t.as_str()) {
                format!("\\{t} ")
            } else {
                t
            }
        }
        "mn" => text(el),
        // An operator of several characters (`lim`, `mod`) as it is written.
        "mo" => text(el),
        "mtext" => {
            let t = text(el);
            if t.trim().is_empty() {
                " ".into()
            } else {
                format!("\\text{{{t}}}")
            }
        }
        "mspace" => " ".into(),
        "mfrac" => format!(
            "\\frac{{{}}}{{{}}}",
            kids.first().map(|e| render(e)).unwrap_or_default(),
            kids.get(1).map(|e| render(e)).unwrap_or_default()
        ),
        "msqrt" => format!("\\sqrt{{{}}}", all(el)),
        "mroot" => format!(
            "\\sqrt[{}]{{{}}}",
            kids.get(1).map(|e| render(e)).unwrap_or_default(),
            kids.first().map(|e| render(e)).unwrap_or_default()
        ),
        "msup" | "mover" => format!("{}^{}", base(kids.first()), group(kids.get(1))),
        "msub" | "munder" => format!("{}_{}", base(kids.first()), group(kids.get(1))),
        "msubsup" | "munderover" => format!(
            "{}_{}^{}",
            base(kids.first()),
            group(kids.get(1)),
            group(kids.get(2))
        ),
        "mfenced" => {
            let open = attr(&el.attrs, "open").unwrap_or("(");
            let close = attr(&el.attrs, "close").unwrap_or(")");
            let sep = attr(&el.attrs, "separators").unwrap_or(",");
            let items: Vec<String> = kids.iter().map(|e| render(e)).collect();
            format!(
                "\\left{}{}\\right{}",
                latex_bracket(open),
                items.join(sep),
                latex_bracket(close)
            )
        }
        "mtable" => {
            let rows: Vec<String> = kids
                .iter()
                .map(|r| {
                    elements(r)
                        .into_iter()
                        .map(render)
                        .collect::<Vec<_>>()
                        .join(" & ")
                })
                .collect();
            format!("\\begin{{matrix}}{}\\end{{matrix}}", rows.join(" \\\\ "))
        }
        _ => all(el),
    }
}

/// A script's base: in braces unless one character or one name.
fn base(el: Option<&&El>) -> String {
    let inner = el.map(|e| render(e)).unwrap_or_default();
    let trimmed = inner.trim_end();
    if trimmed.chars().count() == 1
        || (trimmed.starts_with('\\') && trimmed[1..].chars().all(|c| c.is_ascii_alphabetic()))
    {
        trimmed.to_string()
    } else {
        format!("{{{trimmed}}}")
    }
}

#[cfg(test)]
mod tests {
    use super::latex;

    #[test]
    fn mathml_as_latex() {
        let xml = br#"<math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow>
            <mi>x</mi><mo>=</mo><mfrac><mrow><mo>-</mo><mi>b</mi><mo>&#xB1;</mo>
            <msqrt><mrow><msup><mi>b</mi><mn>2</mn></msup><mo>-</mo><mn>4</mn><mi>a</mi><mi>c</mi></mrow></msqrt></mrow>
            <mrow><mn>2</mn><mi>a</mi></mrow></mfrac></mrow>
            <annotation encoding="StarMath 5.0">x = {-b +- sqrt{b^2 - 4ac}} over {2a}</annotation></semantics></math>"#;
        assert_eq!(
            latex(xml, 64).unwrap(),
            "x=\\frac{-b\\pm \\sqrt{b^2-4ac}}{2a}"
        );
        let sum = br#"<math><munderover><mo>&#x2211;</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></munderover><msub><mi>x</mi><mi>i</mi></msub></math>"#;
        assert_eq!(latex(sum, 64).unwrap(), "\\sum_{i=1}^nx_i");
        assert_eq!(latex(b"<office:document-content/>", 64), None);
        let pandoc = br#"<math><semantics><mrow><mrow><mi>E</mi><mo stretchy="false">=</mo><mrow><mi>m</mi><mo stretchy="false">&#x22C5;</mo><msup><mi>c</mi><mn>2</mn></msup></mrow></mrow></mrow></semantics></math>"#;
        assert_eq!(latex(pandoc, 64).unwrap(), "E=m\\cdot c^2");
        let words = br#"<math><mrow><mi>A</mi><mi>classic</mi><mi>example</mi><mi>:</mi><mi>a</mi><mi>b</mi></mrow></math>"#;
        assert_eq!(latex(words, 64).unwrap(), "A classic example:ab");
    }
}
