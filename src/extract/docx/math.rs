//! Word equations (OMML, `m:oMath`) as LaTeX, as pandoc, docling and MarkItDown give them:
//! `$…$` in a line of text, `$$…$$` for a display equation (`m:oMathPara`). Fractions
//! `\frac{a+b}{c}`, scripts `x^2`, `a_{i,j}`, roots `\sqrt[3]{x}`, n-ary operators
//! `\sum_{i=1}^{n}`, delimiters, functions `\sin(x)`, limits, accents, matrices and
//! equation arrays. Without this an equation's runs were glued together (`a+bc` for the
//! fraction).
//!
//! The story's parser hands every node inside an equation here first; what structure says
//! is written into the paragraph as text between marks, and [`resolve`] settles the marks
//! (braces where a group needs them, an empty root degree dropped, a function's name as
//! its command) once the equation ends.

use crate::extract::symbols::{latex_bracket, LATEX_FUNCTIONS};
use crate::extract::xml::{attr, Node};

/// A group: bare when it is one character, else in braces.
const GROUP: (char, char) = ('\u{E000}', '\u{E001}');
/// An optional argument (a root's degree): dropped when empty, else in brackets.
const OPTION: (char, char) = ('\u{E002}', '\u{E003}');
/// A function's name: `\sin` for the names LaTeX has, else `\operatorname{…}`.
const NAME: (char, char) = ('\u{E004}', '\u{E005}');
/// A function's argument: as it is when bracketed already, else in parentheses.
const ARGUMENT: (char, char) = ('\u{E006}', '\u{E007}');
/// An equation array: `aligned` when it has more than one line, else its one line.
const ARRAY: (char, char) = ('\u{E008}', '\u{E009}');

#[derive(Debug)]
enum Frame {
    Fraction,
    Script,
    Root,
    Nary {
        chr: Option<String>,
        shown: bool,
    },
    Delimiter {
        beg: String,
        sep: String,
        end: String,
        shown: bool,
    },
    Function,
    Limit {
        upper: bool,
    },
    Array {
        items: usize,
    },
    Matrix {
        rows: usize,
    },
    Row {
        items: usize,
    },
    Accent {
        chr: Option<String>,
        shown: bool,
    },
    Other,
}

/// The structure of the equations being read.
#[derive(Debug, Default)]
pub struct Math {
    stack: Vec<Frame>,
    depth: usize,
    display: usize,
    /// Equations already written in the display block (a line apart).
    in_block: usize,
}

fn s(c: char) -> String {
    c.to_string()
}

impl Math {
    /// Whether the parser is inside an equation.
    pub fn active(&self) -> bool {
        self.depth > 0
    }

    /// A display block (`oMathPara`) opens or closes.
    pub fn display(&mut self, open: bool) {
        if open {
            self.display += 1;
            self.in_block = 0;
        } else {
            self.display = self.display.saturating_sub(1);
        }
    }

    /// An equation starts (`oMath`): the text before it.
    pub fn start(&mut self) -> &'static str {
        self.depth += 1;
        if self.depth > 1 || self.display == 0 {
            return "";
        }
        self.in_block += 1;
        if self.in_block > 1 {
            "\n"
        } else {
            ""
        }
    }

    /// An equation ends: its delimiter, when it was the outermost.
    pub fn end(&mut self) -> Option<&'static str> {
        self.depth = self.depth.saturating_sub(1);
        if self.depth > 0 {
            return None;
        }
        self.stack.clear();
        Some(if self.display > 0 { "$$" } else { "$" })
    }

    /// A structure node inside an equation: the text it stands for (`None`: not structure,
    /// the story handles it).
    pub fn node(&mut self, n: &Node<'_>) -> Option<String> {
        match *n {
            Node::Open(tag, a) => Some(match tag {
                "f" => self.push(Frame::Fraction, "\\frac"),
                "sSup" | "sSub" | "sSubSup" | "sPre" => self.push(Frame::Script, ""),
                "rad" => self.push(Frame::Root, "\\sqrt"),
                "nary" => self.push(
                    Frame::Nary {
                        chr: None,
                        shown: false,
                    },
                    "",
                ),
                "d" => self.push(
                    Frame::Delimiter {
                        beg: "(".into(),
                        sep: "|".into(),
                        end: ")".into(),
                        shown: false,
                    },
                    "",
                ),
                "func" => self.push(Frame::Function, ""),
                "limLow" => self.push(Frame::Limit { upper: false }, ""),
                "limUpp" => self.push(Frame::Limit { upper: true }, ""),
                "eqArr" => self.push(Frame::Array { items: 0 }, &s(ARRAY.0)),
                "m" => self.push(Frame::Matrix { rows: 0 }, "\\begin{matrix}"),
                "mr" => {
                    let sep = match self.stack.last_mut() {
                        Some(Frame::Matrix { rows }) => {
                            *rows += 1;
                            if *rows > 1 {
                                " \\\\ "
                            } else {
                                ""
                            }
                        }
                        _ => "",
                    };
                    self.push(Frame::Row { items: 0 }, sep)
                }
                "acc" => self.push(
                    Frame::Accent {
                        chr: None,
                        shown: false,
                    },
                    "",
                ),
                "bar" => self.push(Frame::Other, "\\overline"),
                "box" | "borderBox" | "groupChr" | "phant" => self.push(Frame::Other, ""),
                "chr" => {
                    let v = attr(a, "val").map(str::to_string);
                    match self.stack.last_mut() {
                        Some(Frame::Nary { chr, .. }) | Some(Frame::Accent { chr, .. }) => *chr = v,
                        _ => {}
                    }
                    String::new()
                }
                "begChr" | "sepChr" | "endChr" => {
                    if let Some(Frame::Delimiter { beg, sep, end, .. }) = self.stack.last_mut() {
                        let v = attr(a, "val").unwrap_or("").to_string();
                        match tag {
                            "begChr" => *beg = v,
                            "sepChr" => *sep = v,
                            _ => *end = v,
                        }
                    }
                    String::new()
                }
                "num" | "den" => "{".into(),
                "deg" => s(OPTION.0),
                "sub" => format!("{}_{}", self.operator(), GROUP.0),
                "sup" => format!("{}^{}", self.operator(), GROUP.0),
                "lim" => match self.stack.last() {
                    Some(Frame::Limit { upper: true }) => format!("^{}", GROUP.0),
                    _ => format!("_{}", GROUP.0),
                },
                "fName" => s(NAME.0),
                "e" => match self.stack.last_mut() {
                    Some(Frame::Root) => "{".into(),
                    Some(Frame::Function) => s(ARGUMENT.0),
                    Some(Frame::Script) => s(GROUP.0),
                    Some(Frame::Delimiter {
                        beg, sep, shown, ..
                    }) => {
                        if !*shown {
                            *shown = true;
                            left(beg)
                        } else {
                            match sep.is_empty() {
                                true => "  ".into(),
                                false => format!(" {} ", latex_bracket(sep)),
                            }
                        }
                    }
                    Some(Frame::Array { items }) => {
                        *items += 1;
                        if *items > 1 {
                            " \\\\ ".into()
                        } else {
                            String::new()
                        }
                    }
                    Some(Frame::Row { items }) => {
                        *items += 1;
                        if *items > 1 {
                            " & ".into()
                        } else {
                            String::new()
                        }
                    }
                    Some(Frame::Nary { .. }) => format!("{} ", self.operator()),
                    Some(Frame::Accent { chr, shown }) if !*shown => {
                        *shown = true;
                        format!("{}{{", accent(chr.as_deref()))
                    }
                    Some(Frame::Other) => "{".into(),
                    _ => String::new(),
                },
                _ => return None,
            }),
            Node::Close(tag) => Some(match tag {
                "f" | "sSup" | "sSub" | "sSubSup" | "sPre" | "rad" | "nary" | "func" | "limLow"
                | "limUpp" | "acc" | "bar" | "box" | "borderBox" | "groupChr" | "phant" | "mr" => {
                    self.stack.pop();
                    String::new()
                }
                "eqArr" => {
                    self.stack.pop();
                    s(ARRAY.1)
                }
                "m" => {
                    self.stack.pop();
                    "\\end{matrix}".into()
                }
                "d" => match self.stack.pop() {
                    Some(Frame::Delimiter {
                        beg, end, shown, ..
                    }) => {
                        if shown {
                            right(&end)
                        } else {
                            format!("{}{}", left(&beg), right(&end))
                        }
                    }
                    _ => String::new(),
                },
                "num" | "den" => "}".into(),
                "deg" => s(OPTION.1),
                "sub" | "sup" | "lim" => s(GROUP.1),
                "fName" => s(NAME.1),
                "e" => match self.stack.last() {
                    Some(Frame::Root) | Some(Frame::Accent { .. }) | Some(Frame::Other) => {
                        "}".into()
                    }
                    Some(Frame::Function) => s(ARGUMENT.1),
                    Some(Frame::Script) => s(GROUP.1),
                    _ => String::new(),
                },
                _ => return None,
            }),
            Node::Text(_) => None,
        }
    }

    fn push(&mut self, f: Frame, text: &str) -> String {
        self.stack.push(f);
        text.to_string()
    }

    /// An n-ary operator's command, written before its first limit or its body.
    fn operator(&mut self) -> String {
        match self.stack.last_mut() {
            Some(Frame::Nary { chr, shown }) if !*shown => {
                *shown = true;
                let op = match chr.as_deref().unwrap_or("∫") {
                    "∑" => "\\sum",
                    "∏" => "\\prod",
                    "∐" => "\\coprod",
                    "∫" => "\\int",
                    "∬" => "\\iint",
                    "∭" => "\\iiint",
                    "∮" => "\\oint",
                    "⋃" => "\\bigcup",
                    "⋂" => "\\bigcap",
                    "⋁" => "\\bigvee",
                    "⋀" => "\\bigwedge",
                    other => return other.to_string(),
                };
                op.into()
            }
            _ => String::new(),
        }
    }
}

/// A delimiter character as LaTeX writes it.
fn left(c: &str) -> String {
    format!("\\left{}", latex_bracket(c))
}

fn right(c: &str) -> String {
    format!("\\right{}", latex_bracket(c))
}

/// An accent's command by its combining character (a hat when none is named).
fn accent(c: Option<&str>) -> &'static str {
    match c.and_then(|c| c.chars().next()) {
        Some('\u{0300}') => "\\grave",
        Some('\u{0301}') => "\\acute",
        Some('\u{0303}') => "\\tilde",
        Some('\u{0304}') | Some('\u{0305}') | Some('¯') => "\\bar",
        Some('\u{0306}') => "\\breve",
        Some('\u{0307}') | Some('˙') => "\\dot",
        Some('\u{0308}') | Some('¨') => "\\ddot",
        Some('\u{030C}') => "\\check",
        Some('\u{20D7}') | Some('→') => "\\vec",
        _ => "\\hat",
    }
}

/// Settle an equation's marks (see the constants), innermost first.
pub fn resolve(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut starts: Vec<(char, usize)> = Vec::new();
    for c in text.chars() {
        if [GROUP.0, OPTION.0, NAME.0, ARGUMENT.0, ARRAY.0].contains(&c) {
            starts.push((c, out.len()));
            continue;
        }
        if ![GROUP.1, OPTION.1, NAME.1, ARGUMENT.1, ARRAY.1].contains(&c) {
            if c == '\u{2061}' {
                // Function application after a name written as text (`sin⁡θ`): the name's
                // command where LaTeX has one.
                let word_start = out
                    .rfind(|c: char| !c.is_ascii_alphabetic())
                    .map_or(0, |i| i + out[i..].chars().next().map_or(1, char::len_utf8));
                let word = &out[word_start..];
                if LATEX_FUNCTIONS.contains(&word) && !out[..word_start].ends_with('\\') {
                    let word = word.to_string();
                    out.truncate(word_start);
                    out.push_str(&format!("\\{word} "));
                }
                continue;
            }
            // A dash written for minus is the minus sign; `π`, `≤`, `⋅` their commands.
            match crate::extract::symbols::latex_command(c) {
                Some(cmd) => {
                    out.push_str(cmd);
                    out.push(' ');
                }
                None => out.push(if matches!(c, '–' | '−') { '-' } else { c }),
            }
            continue;
        }
        let Some((kind, start)) = starts.pop() else {
            continue;
        };
        let inner = out[start..].trim().to_string();
        out.truncate(start);
        let settled = match kind {
            k if k == GROUP.0 => {
                if inner.is_empty() {
                    // An empty script is no script (`s_+^{}` is `s_+`).
                    if out.ends_with(['^', '_']) {
                        out.pop();
                    }
                    continue;
                }
                if LATEX_FUNCTIONS.contains(&inner.as_str()) {
                    format!("\\{inner}")
                } else if inner.chars().count() == 1 {
                    inner
                } else {
                    format!("{{{inner}}}")
                }
            }
            k if k == OPTION.0 => {
                if inner.is_empty() {
                    inner
                } else {
                    format!("[{inner}]")
                }
            }
            k if k == ARRAY.0 => {
                if inner.contains(" \\\\ ") {
                    format!("\\begin{{aligned}}{inner}\\end{{aligned}}")
                } else {
                    inner
                }
            }
            k if k == NAME.0 => {
                if LATEX_FUNCTIONS.contains(&inner.as_str()) {
                    format!("\\{inner}")
                } else if inner.chars().all(char::is_alphabetic) && !inner.is_empty() {
                    format!("\\operatorname{{{inner}}}")
                } else {
                    inner
                }
            }
            _ => {
                if inner.starts_with("\\left") || inner.starts_with('(') && closes_at_end(&inner) {
                    inner
                } else {
                    format!("({inner})")
                }
            }
        };
        // A command's name must not run into a letter after it.
        if out.ends_with(|c: char| c.is_ascii_alphabetic())
            && settled.starts_with(|c: char| c.is_ascii_alphabetic())
            && out
                .rsplit('\\')
                .next()
                .is_some_and(|w| w.chars().all(|c| c.is_ascii_alphabetic()))
            && out.contains('\\')
        {
            out.push(' ');
        }
        out.push_str(&settled);
    }
    out
}

/// Whether a text starting with `(` closes that parenthesis at its very end.
fn closes_at_end(s: &str) -> bool {
    let mut depth = 0i32;
    let n = s.chars().count();
    for (i, c) in s.chars().enumerate() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && i + 1 < n {
            return false;
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> String {
        format!("{}{s}{}", GROUP.0, GROUP.1)
    }

    #[test]
    fn marks_settle_into_latex() {
        assert_eq!(
            resolve(&format!("x^{}+y_{}", g("2"), g("i,j"))),
            "x^2+y_{i,j}"
        );
        assert_eq!(
            resolve(&format!("{}^{}", g("\\frac{(x-c)}{v}"), g("2"))),
            "{\\frac{(x-c)}{v}}^2"
        );
        let deg = |s: &str| format!("{}{s}{}", OPTION.0, OPTION.1);
        assert_eq!(resolve(&format!("\\sqrt{}{{x}}", deg(""))), "\\sqrt{x}");
        assert_eq!(resolve(&format!("\\sqrt{}{{x}}", deg("3"))), "\\sqrt[3]{x}");
        let f = |name: &str, arg: &str| {
            format!(
                "{}{name}{}{}{arg}{}",
                NAME.0, NAME.1, ARGUMENT.0, ARGUMENT.1
            )
        };
        assert_eq!(resolve(&format!("y={}", f("log", "x"))), "y=\\log(x)");
        assert_eq!(
            resolve(&f("sin", "\\left(x\\right)")),
            "\\sin\\left(x\\right)"
        );
        assert_eq!(resolve(&f("erf", "x")), "\\operatorname{erf}(x)");
        // A name written as text before U+2061, and as a script's base.
        assert_eq!(resolve("sin\u{2061}θ=a"), "\\sin \\theta =a");
        assert_eq!(
            resolve(&format!("{}^{}\u{2061}x", g("sin"), g("-1"))),
            "\\sin^{-1}x"
        );
        assert_eq!(resolve("x\u{2061}y"), "xy");
        let a = |s: &str| format!("{}{s}{}", ARRAY.0, ARRAY.1);
        assert_eq!(resolve(&a("a=b")), "a=b");
        assert_eq!(
            resolve(&a("a=b \\\\ c=d")),
            "\\begin{aligned}a=b \\\\ c=d\\end{aligned}"
        );
        assert_eq!(resolve("x – y"), "x - y");
        assert_eq!(resolve(&format!("s_{}^{}", g("+"), g(""))), "s_+");
    }
}
