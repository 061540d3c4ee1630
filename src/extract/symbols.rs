//! The characters the symbol fonts show for their byte codes: Word's `w:sym`, RTF runs in
//! a `\fcharset2` font, and text in the private-use range those fonts are mapped to
//! (`U+F020`–`U+F0FF`). Symbol after Adobe's Symbol encoding (its lower half is Greek, the
//! upper half mathematics); Wingdings, Wingdings 2/3 and Webdings after the pictographs
//! Unicode has for them, where it has one.

/// A symbol font, by its name (`Symbol`, `Wingdings`, `Wingdings 2`, `Webdings`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolFont {
    Symbol,
    Wingdings,
    /// Another pictograph font (Wingdings 2/3, Webdings, Marlett): only its bullets.
    Pictographs,
}

impl SymbolFont {
    pub fn by_name(name: &str) -> Option<SymbolFont> {
        let lower = name.trim().to_ascii_lowercase();
        if lower == "symbol" || lower.starts_with("symbol ") || lower == "symbolmt" {
            Some(SymbolFont::Symbol)
        } else if lower == "wingdings" {
            Some(SymbolFont::Wingdings)
        } else if lower.starts_with("wingdings") || lower == "webdings" || lower == "marlett" {
            Some(SymbolFont::Pictographs)
        } else {
            None
        }
    }
}

/// What `font` shows for byte `b` (a code from `U+F000` up taken by its low byte). `None`:
/// a pictograph with no character of its own.
pub fn symbol_char(font: SymbolFont, b: u8) -> Option<char> {
    match font {
        SymbolFont::Symbol => symbol(b),
        SymbolFont::Wingdings => wingdings(b),
        SymbolFont::Pictographs => match b {
            0x20 => Some(' '),
            0x97 | 0x98 | 0x99 | 0x9E | 0x9F => Some('•'),
            0xA7 => Some('▪'),
            _ => None,
        },
    }
}

/// A `w:sym`'s character: `char` is hexadecimal, a private-use code (`F0B7`) or, in a font
/// that is not a symbol font, the Unicode character itself.
pub fn sym(font: Option<&str>, code: &str) -> Option<char> {
    let n = u32::from_str_radix(code.trim(), 16).ok()?;
    match font.and_then(SymbolFont::by_name) {
        Some(f) if n <= 0xFF || (0xF000..=0xF0FF).contains(&n) => symbol_char(f, n as u8),
        Some(_) => char::from_u32(n),
        // A private-use code in an unknown font shows its own glyph: no character.
        None if (0xE000..=0xF8FF).contains(&n) => None,
        None => char::from_u32(n),
    }
}

fn symbol(b: u8) -> Option<char> {
    const LOW: &str = " !∀#∃%&∋()∗+,−./0123456789:;<=>?≅ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ[∴]⊥_‾αβχδεφγηιϕκλμνοπθρστυϖωξψζ{|}∼";
    const HIGH: &str = "€ϒ′≤⁄∞ƒ♣♦♥♠↔←↑→↓°±″≥×∝∂•÷≠≡≈…⏐⎯↵ℵℑℜ℘⊗⊕∅∩∪⊃⊇⊄⊂⊆∈∉∠∇®©™∏√⋅¬∧∨⇔⇐⇑⇒⇓◊〈®©™∑⎛⎜⎝⎡⎢⎣⎧⎨⎩⎪\u{F8FF}〉∫⌠⎮⌡⎞⎟⎠⎤⎥⎦⎫⎬⎭";
    match b {
        0x20..=0x7E => LOW.chars().nth((b - 0x20) as usize),
        0xA0..=0xFE => HIGH
            .chars()
            .nth((b - 0xA0) as usize)
            .filter(|c| *c != '\u{F8FF}'),
        _ => None,
    }
}

fn wingdings(b: u8) -> Option<char> {
    Some(match b {
        0x20 => ' ',
        0x21 => '✏',
        0x22 => '✂',
        0x23 => '✁',
        0x28 => '☎',
        0x29 => '✆',
        0x2A => '✉',
        0x36 => '⌛',
        0x37 => '⌨',
        0x3E => '✇',
        0x3F => '✍',
        0x41 => '✌',
        0x43 => '👍',
        0x44 => '👎',
        0x45 => '☜',
        0x46 => '☞',
        0x47 => '☝',
        0x48 => '☟',
        0x4A => '☺',
        0x4B => '😐',
        0x4C => '☹',
        0x4D => '💣',
        0x4E => '☠',
        0x4F => '⚐',
        0x51 => '✈',
        0x52 => '☼',
        0x54 => '❄',
        0x56 => '✞',
        0x58 => '✠',
        0x59 => '✡',
        0x5A => '☪',
        0x5B => '☯',
        0x5C => 'ॐ',
        0x5D => '☸',
        0x5E..=0x69 => char::from_u32(0x2648 + (b - 0x5E) as u32)?,
        0x6C => '●',
        0x6D => '❍',
        0x6E => '■',
        0x6F => '□',
        0x70 => '◻',
        0x71 => '❑',
        0x72 => '❒',
        0x73 => '⬧',
        0x74 => '⧫',
        0x75 => '◆',
        0x76 => '❖',
        0x77 => '⬥',
        0x78 => '⌧',
        0x7A => '⌘',
        0x7B => '❀',
        0x7C => '✿',
        0x7D => '❝',
        0x7E => '❞',
        0x80 => '⓪',
        0x81..=0x8A => char::from_u32(0x2460 + (b - 0x81) as u32)?,
        0x8B => '⓿',
        0x8C..=0x95 => char::from_u32(0x2776 + (b - 0x8C) as u32)?,
        0x9E | 0x9F => '•',
        0xA0 => '▪',
        0xA1 => '○',
        0xA4 => '◉',
        0xA5 => '◎',
        0xA7 => '▪',
        0xA8 => '◻',
        0xAB => '★',
        0xD8 => '➢',
        0xDF => '←',
        0xE0 => '→',
        0xE1 => '↑',
        0xE2 => '↓',
        0xE8 => '➔',
        0xEF => '⇦',
        0xF0 => '⇨',
        0xF1 => '⇧',
        0xF2 => '⇩',
        0xFB => '✗',
        0xFC => '✓',
        0xFD => '☒',
        0xFE => '☑',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_and_wingdings_codes() {
        assert_eq!(sym(Some("Symbol"), "F0B7"), Some('•'));
        assert_eq!(sym(Some("Symbol"), "F061"), Some('α'));
        assert_eq!(sym(Some("Symbol"), "F057"), Some('Ω'));
        assert_eq!(sym(Some("Symbol"), "F0A3"), Some('≤'));
        assert_eq!(sym(Some("Symbol"), "F0E5"), Some('∑'));
        assert_eq!(sym(Some("Symbol"), "F0F2"), Some('∫'));
        assert_eq!(sym(Some("Symbol"), "F0FE"), Some('⎭'));
        assert_eq!(sym(Some("Wingdings"), "F0FC"), Some('✓'));
        assert_eq!(sym(Some("Wingdings"), "F0E0"), Some('→'));
        assert_eq!(sym(Some("Wingdings"), "F08C"), Some('❶'));
        assert_eq!(sym(Some("Wingdings"), "F06A"), None);
        // Not a symbol font: the code is the character.
        assert_eq!(sym(Some("Calibri"), "2192"), Some('→'));
        assert_eq!(sym(None, "F0B7"), None);
        assert_eq!(sym(Some("Symbol"), "zz"), None);
        // Every printable code of the Symbol font has its character.
        for b in (0x20..=0x7Eu8).chain(0xA0..=0xEF).chain(0xF1..=0xFE) {
            assert!(symbol(b).is_some(), "{b:#x}");
        }
        assert_eq!(symbol(0xF0), None);
    }
}

/// The LaTeX command for a mathematical character an equation holds as itself (Word's
/// OMML and LibreOffice's MathML keep `π`, `≤`, `⋅`): what a LaTeX renderer reads
/// everywhere. `None`: the character stands for itself.
pub fn latex_command(c: char) -> Option<&'static str> {
    Some(match c {
        'α' => "\\alpha",
        'β' => "\\beta",
        'γ' => "\\gamma",
        'δ' => "\\delta",
        'ε' => "\\epsilon",
        'ζ' => "\\zeta",
        'η' => "\\eta",
        'θ' => "\\theta",
        'ι' => "\\iota",
        'κ' => "\\kappa",
        'λ' => "\\lambda",
        'μ' => "\\mu",
        'ν' => "\\nu",
        'ξ' => "\\xi",
        'π' => "\\pi",
        'ρ' => "\\rho",
        'σ' => "\\sigma",
        'τ' => "\\tau",
        'υ' => "\\upsilon",
        'φ' | 'ϕ' => "\\phi",
        'χ' => "\\chi",
        'ψ' => "\\psi",
        'ω' => "\\omega",
        'Γ' => "\\Gamma",
        'Δ' => "\\Delta",
        'Θ' => "\\Theta",
        'Λ' => "\\Lambda",
        'Ξ' => "\\Xi",
        'Π' => "\\Pi",
        'Σ' => "\\Sigma",
        'Φ' => "\\Phi",
        'Ψ' => "\\Psi",
        'Ω' => "\\Omega",
        '⋅' | '·' => "\\cdot",
        '×' => "\\times",
        '÷' => "\\div",
        '±' => "\\pm",
        '∓' => "\\mp",
        '≤' => "\\leq",
        '≥' => "\\geq",
        '≠' => "\\neq",
        '≈' => "\\approx",
        '≡' => "\\equiv",
        '∝' => "\\propto",
        '∞' => "\\infty",
        '→' => "\\to",
        '←' => "\\leftarrow",
        '⇒' => "\\Rightarrow",
        '⇔' => "\\Leftrightarrow",
        '∈' => "\\in",
        '∉' => "\\notin",
        '⊂' => "\\subset",
        '⊆' => "\\subseteq",
        '∪' => "\\cup",
        '∩' => "\\cap",
        '∂' => "\\partial",
        '∇' => "\\nabla",
        '∀' => "\\forall",
        '∃' => "\\exists",
        '∘' => "\\circ",
        '…' => "\\ldots",
        '⋯' => "\\cdots",
        '′' => "'",
        _ => return None,
    })
}

/// Function names LaTeX has a command for (`\sin`, `\log`): Word's `m:fName`, a MathML
/// `mi`.
pub const LATEX_FUNCTIONS: &[&str] = &[
    "arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg", "det", "dim",
    "exp", "gcd", "hom", "inf", "ker", "lg", "lim", "liminf", "limsup", "ln", "log", "max", "min",
    "Pr", "sec", "sin", "sinh", "sup", "tan", "tanh",
];

/// A delimiter character as LaTeX writes it after `\left`/`\right` (none: `.`).
pub fn latex_bracket(c: &str) -> String {
    match c {
        "" => ".".into(),
        "{" => "\\{".into(),
        "}" => "\\}".into(),
        "〈" | "⟨" => "\\langle".into(),
        "〉" | "⟩" => "\\rangle".into(),
        "⌈" => "\\lceil".into(),
        "⌉" => "\\rceil".into(),
        "⌊" => "\\lfloor".into(),
        "⌋" => "\\rfloor".into(),
        "‖" => "\\|".into(),
        other => other.into(),
    }
}
