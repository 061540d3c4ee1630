//! The style a browser computes for the few properties that decide whether text is seen.
//!
//! Style sheets (`<style>` elements for screens, `@media` blocks that apply to a screen,
//! `@supports` and `@layer` blocks) and `style` attributes are cascaded as a browser does —
//! `!important` first, then specificity, then order — with selectors matched by the
//! `selectors` engine (through scraper): descendant, child, sibling and attribute selectors,
//! `:not`, `:is`, `:nth-child` and the rest of what does not depend on user interaction
//! (a `:hover` rule is not the page as shown, so it is not applied). Comments and escapes
//! are read as CSS reads them (`display:/**/none`, `n\one`).
//!
//! Cost is bounded for hostile pages: rules are bucketed by the id, class or tag of their
//! rightmost compound (an element is matched only against rules that can apply to it),
//! `:has()` is not evaluated, at most [`MAX_RULES`] rules are kept, and elements nested
//! deeper than [`MAX_STYLED_DEPTH`] take their parent's style (as Blink's parser stops
//! nesting at 512).

use std::collections::HashMap;

use scraper::{ElementRef, Selector};

/// Rules kept from a page's style sheets; a page with more is cut here (the first rules
/// are the page's own; framework sheets run long).
pub(super) const MAX_RULES: usize = 20_000;
/// Below this depth an element takes its parent's style without matching rules.
pub(super) const MAX_STYLED_DEPTH: usize = 512;

/// The properties that can hide text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prop {
    Display,
    Visibility,
    Opacity,
    FontSize,
    Color,
    Background,
    BackgroundColor,
    BackgroundImage,
    Position,
    Left,
    Top,
    TextIndent,
    Clip,
    ClipPath,
    Height,
    MaxHeight,
    Width,
    MaxWidth,
    Overflow,
    OverflowX,
    OverflowY,
    Transform,
}

const PROPS: usize = 22;

impl Prop {
    fn of(name: &str) -> Option<Self> {
        Some(match name {
            "display" => Self::Display,
            "visibility" => Self::Visibility,
            "opacity" => Self::Opacity,
            "font-size" => Self::FontSize,
            "color" => Self::Color,
            "background" => Self::Background,
            "background-color" => Self::BackgroundColor,
            "background-image" => Self::BackgroundImage,
            "position" => Self::Position,
            "left" => Self::Left,
            "top" => Self::Top,
            "text-indent" => Self::TextIndent,
            "clip" => Self::Clip,
            "clip-path" | "-webkit-clip-path" => Self::ClipPath,
            "height" => Self::Height,
            "max-height" => Self::MaxHeight,
            "width" => Self::Width,
            "max-width" => Self::MaxWidth,
            "overflow" => Self::Overflow,
            "overflow-x" => Self::OverflowX,
            "overflow-y" => Self::OverflowY,
            "transform" | "-webkit-transform" => Self::Transform,
            _ => return None,
        })
    }
}

/// One declaration: a property we care for, its value (lower case, comments and escapes
/// resolved, `!important` taken off) and whether it was important.
#[derive(Debug, Clone)]
pub(super) struct Decl {
    prop: Prop,
    value: String,
    important: bool,
}

/// Where a declaration stands in the cascade: importance, specificity, order.
type Rank = (bool, u32, u32);

struct Rule {
    selector: Selector,
    specificity: u32,
    order: u32,
    decls: Vec<Decl>,
}

/// A page's style sheets, ready to be matched.
#[derive(Default)]
pub(super) struct Sheet {
    rules: Vec<Rule>,
    by_id: HashMap<String, Vec<usize>>,
    by_class: HashMap<String, Vec<usize>>,
    by_tag: HashMap<String, Vec<usize>>,
    universal: Vec<usize>,
    /// The page links style sheets of its own we do not have: what is behind text is not
    /// known (its colour is not compared with a background assumed white).
    pub external: bool,
}

/// The declared value of each property for one element, after the cascade.
#[derive(Default)]
pub(super) struct Declared {
    values: [Option<(Rank, String)>; PROPS],
}

impl Declared {
    pub(super) fn get(&self, p: Prop) -> Option<&str> {
        self.values[p as usize].as_ref().map(|(_, v)| v.as_str())
    }

    /// Whether a property's value is a presentational hint (an attribute, under every rule).
    pub(super) fn is_hint(&self, p: Prop) -> bool {
        self.values[p as usize]
            .as_ref()
            .is_some_and(|(r, _)| *r == (false, 0, 0))
    }

    fn offer(&mut self, d: &Decl, specificity: u32, order: u32) {
        let rank = (d.important, specificity, order);
        let slot = &mut self.values[d.prop as usize];
        if slot.as_ref().is_none_or(|(r, _)| *r <= rank) {
            *slot = Some((rank, d.value.clone()));
        }
    }
}

/// Specificity of a `style` attribute: above every selector.
const INLINE: u32 = 1 << 24;

impl Sheet {
    /// Add a style sheet's text (the content of a `<style>` for screens).
    pub(super) fn add(&mut self, css: &str) {
        let css = strip_comments(css);
        self.add_block(&css, 0);
    }

    fn add_block(&mut self, css: &str, depth: usize) {
        let mut rest = css;
        while !rest.trim_start().is_empty() && self.rules.len() < MAX_RULES {
            let Some(open) = find_outside(rest, &['{', ';']) else {
                break;
            };
            let prelude = rest[..open].trim();
            if rest.as_bytes()[open] == b';' {
                // `@import …;`, `@charset …;` or a stray declaration.
                rest = &rest[open + 1..];
                continue;
            }
            let body_start = open + 1;
            let close = matching_brace(rest, body_start);
            let body = &rest[body_start..close];
            rest = rest.get(close + 1..).unwrap_or("");
            if let Some(at) = prelude.strip_prefix('@') {
                let (name, query) = at
                    .split_once(|c: char| c.is_whitespace() || c == '(')
                    .map_or((at, ""), |(n, _)| (n, &at[n.len()..]));
                let name = name.to_ascii_lowercase();
                let nested = match name.as_str() {
                    "media" => media_applies(query),
                    "supports" | "layer" | "document" | "-moz-document" | "container" | "scope" => {
                        true
                    }
                    _ => false,
                };
                if nested && depth < 16 {
                    self.add_block(body, depth + 1);
                }
                continue;
            }
            let decls = declarations(body);
            if decls.is_empty() {
                continue;
            }
            for sel in split_outside(prelude, ',') {
                let sel = sel.trim();
                if sel.is_empty() || sel.contains(":has(") || self.rules.len() >= MAX_RULES {
                    continue;
                }
                let Ok(selector) = Selector::parse(sel) else {
                    continue;
                };
                let index = self.rules.len();
                match key(sel) {
                    Key::Id(id) => self.by_id.entry(id).or_default().push(index),
                    Key::Class(c) => self.by_class.entry(c).or_default().push(index),
                    Key::Tag(t) => self.by_tag.entry(t).or_default().push(index),
                    Key::Any => self.universal.push(index),
                }
                self.rules.push(Rule {
                    selector,
                    specificity: specificity(sel),
                    order: index as u32 + 1,
                    decls: decls.clone(),
                });
            }
        }
    }

    /// The cascade for one element: presentational hints (`hidden`, `bgcolor`, `<font
    /// color>`, `background`) under every rule, matched rules, then its `style` attribute.
    pub(super) fn declared(&self, el: ElementRef<'_>) -> Declared {
        let mut out = Declared::default();
        let v = el.value();
        let hint = |out: &mut Declared, prop: Prop, value: String| {
            out.offer(
                &Decl {
                    prop,
                    value,
                    important: false,
                },
                0,
                0,
            )
        };
        if v.attr("hidden").is_some() {
            hint(&mut out, Prop::Display, "none".into());
        }
        if let Some(c) = v.attr("bgcolor") {
            hint(
                &mut out,
                Prop::BackgroundColor,
                c.trim().to_ascii_lowercase(),
            );
        }
        if v.attr("background").is_some_and(|b| !b.trim().is_empty()) {
            hint(&mut out, Prop::BackgroundImage, "url()".into());
        }
        if v.name() == "font" {
            if let Some(c) = v.attr("color") {
                hint(&mut out, Prop::Color, c.trim().to_ascii_lowercase());
            }
        }
        if v.name() == "body" {
            if let Some(c) = v.attr("text") {
                hint(&mut out, Prop::Color, c.trim().to_ascii_lowercase());
            }
        }
        if !self.rules.is_empty() {
            let mut candidates: Vec<usize> = self.universal.clone();
            if let Some(list) = self.by_tag.get(v.name()) {
                candidates.extend_from_slice(list);
            }
            if let Some(id) = v.id() {
                if let Some(list) = self.by_id.get(id) {
                    candidates.extend_from_slice(list);
                }
            }
            for class in v.classes() {
                if let Some(list) = self.by_class.get(class) {
                    candidates.extend_from_slice(list);
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
            for i in candidates {
                let rule = &self.rules[i];
                if rule.selector.matches(&el) {
                    for d in &rule.decls {
                        out.offer(d, rule.specificity, rule.order);
                    }
                }
            }
        }
        if let Some(style) = v.attr("style") {
            for d in declarations(&strip_comments(style)) {
                out.offer(&d, INLINE, u32::MAX);
            }
        }
        out
    }
}

/// Whether a `@media` query applies to a screen: `screen`, `all`, or features alone
/// (`(min-width: 600px)`: some screen has them); not `print`, `speech` or `not screen`.
/// One query of a comma-separated list that applies is enough.
pub(super) fn media_applies(query: &str) -> bool {
    let q = query.trim().to_ascii_lowercase();
    if q.is_empty() {
        return true;
    }
    q.split(',').any(|one| {
        let words: Vec<&str> = one.split_whitespace().collect();
        let (not, rest) = match words.first() {
            Some(&"not") => (true, &words[1..]),
            Some(&"only") => (false, &words[1..]),
            _ => (false, &words[..]),
        };
        let media = rest.first().filter(|w| !w.starts_with('('));
        let screen = match media {
            None => true,
            Some(&m) => matches!(m, "screen" | "all"),
        };
        screen != not
    })
}

/// The `<style>`/`<link>` `media` attribute: no attribute or one that applies to a screen.
pub(super) fn media_attr_applies(media: Option<&str>) -> bool {
    media.is_none_or(media_applies)
}

enum Key {
    Id(String),
    Class(String),
    Tag(String),
    Any,
}

/// The most selective key of a selector's rightmost compound: its id, else a class, else
/// its tag (an element can only match when it has that key).
fn key(sel: &str) -> Key {
    // The rightmost compound: after the last combinator outside brackets and parentheses.
    let mut start = 0;
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in sel.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ' ' | '>' | '+' | '~' | '\t' | '\n') if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let compound = &sel[start..];
    // Only the compound's own simple selectors (not inside `:not(…)` or `[…]`).
    let mut plain = String::new();
    let mut depth = 0i32;
    for c in compound.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let ident = |s: &str| -> Option<String> {
        let id: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        // An escaped or empty name is matched the slow way.
        (!id.is_empty() && !s[id.len()..].starts_with('\\')).then_some(id)
    };
    if let Some(i) = plain.find('#') {
        if let Some(id) = ident(&plain[i + 1..]) {
            return Key::Id(id);
        }
    }
    if let Some(i) = plain.find('.') {
        if let Some(class) = ident(&plain[i + 1..]) {
            return Key::Class(class);
        }
    }
    match ident(&plain) {
        Some(tag) if !plain.contains('|') => Key::Tag(tag.to_ascii_lowercase()),
        _ => Key::Any,
    }
}

/// A selector's specificity, packed (ids, classes/attributes/pseudo-classes, types), each
/// counted outside strings.
fn specificity(sel: &str) -> u32 {
    let (mut ids, mut classes, mut types) = (0u32, 0u32, 0u32);
    let b = sel.as_bytes();
    let mut i = 0;
    let mut quote = 0u8;
    let mut at_compound_start = true;
    while i < b.len() {
        let c = b[i];
        if quote != 0 {
            if c == quote {
                quote = 0;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = c,
            b'#' => ids += 1,
            b'.' | b'[' => classes += 1,
            b':' => {
                if b.get(i + 1) == Some(&b':') {
                    types += 1;
                    i += 1;
                } else {
                    classes += 1;
                }
            }
            b' ' | b'>' | b'+' | b'~' | b'(' | b',' => {
                at_compound_start = true;
                i += 1;
                continue;
            }
            c if at_compound_start && (c.is_ascii_alphabetic() || c >= 0x80) => types += 1,
            _ => {}
        }
        at_compound_start = false;
        i += 1;
    }
    (ids.min(255) << 16) | (classes.min(255) << 8) | types.min(255)
}

/// Declarations of a block we care for: `prop: value [!important]`, split on `;` outside
/// strings and parentheses; names and values unescaped and lower-cased.
pub(super) fn declarations(block: &str) -> Vec<Decl> {
    let mut out = Vec::new();
    for part in split_outside(block, ';') {
        let Some((name, value)) = part.split_once(':') else {
            continue;
        };
        let name = unescape(name.trim()).to_ascii_lowercase();
        let Some(prop) = Prop::of(&name) else {
            continue;
        };
        let mut value = unescape(value.trim()).to_ascii_lowercase();
        let mut important = false;
        if let Some(bang) = value.rfind('!') {
            if value[bang + 1..].trim() == "important" {
                important = true;
                value.truncate(bang);
            }
        }
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        if !value.is_empty() {
            out.push(Decl {
                prop,
                value,
                important,
            });
        }
    }
    out
}

/// CSS without its comments (outside strings), as the tokenizer reads it.
pub(super) fn strip_comments(css: &str) -> String {
    if !css.contains("/*") {
        return css.to_string();
    }
    let mut out = String::with_capacity(css.len());
    let mut chars = css.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == '\\' {
                    if let Some((_, n)) = chars.next() {
                        out.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '/' && css[i + 1..].starts_with('*') => {
                chars.next();
                match css[i + 2..].find("*/") {
                    Some(end) => {
                        let resume = i + 2 + end + 2;
                        while chars.peek().is_some_and(|(j, _)| *j < resume) {
                            chars.next();
                        }
                    }
                    None => break,
                }
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// CSS escapes resolved: `\6e ` (hex, one optional space after) and `\x` (the character).
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let mut hex = String::new();
        while hex.len() < 6 && chars.peek().is_some_and(char::is_ascii_hexdigit) {
            hex.push(chars.next().unwrap_or('0'));
        }
        if hex.is_empty() {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            if chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                chars.next();
            }
            let cp = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
            out.push(
                char::from_u32(cp)
                    .filter(|&c| c != '\0')
                    .unwrap_or('\u{FFFD}'),
            );
        }
    }
    out
}

/// The first of `stops` outside strings, parentheses and brackets.
fn find_outside(s: &str, stops: &[char]) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth = (depth - 1).max(0),
            (None, c) if depth == 0 && stops.contains(&c) => return Some(i),
            _ => {}
        }
    }
    None
}

/// Where the block opened just before `from` closes (its `}`), or the end.
fn matching_brace(s: &str, from: usize) -> usize {
    let mut depth = 1usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s[from..].char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => {
                depth -= 1;
                if depth == 0 {
                    return from + i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// `s` split at `sep` outside strings, parentheses and brackets.
fn split_outside(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = find_outside(rest, &[sep]) {
        out.push(&rest[..i]);
        rest = &rest[i + sep.len_utf8()..];
    }
    out.push(rest);
    out
}

/// An sRGB colour with alpha (0–255).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rgba(pub u8, pub u8, pub u8, pub u8);

impl Rgba {
    pub(super) const WHITE: Rgba = Rgba(255, 255, 255, 255);
    pub(super) const BLACK: Rgba = Rgba(0, 0, 0, 255);

    /// Too close to tell apart on a screen.
    pub(super) fn near(self, other: Rgba) -> bool {
        let d = |a: u8, b: u8| (a as i32 - b as i32).abs();
        d(self.0, other.0)
            .max(d(self.1, other.1))
            .max(d(self.2, other.2))
            <= 8
    }
}

/// A CSS colour value: `#rgb[a]`, `#rrggbb[aa]`, `rgb[a](…)` (commas or spaces, numbers or
/// percentages), `transparent`, or a named colour; anything else (`hsl()`, `var()`,
/// `currentcolor`) is not known.
pub(super) fn colour(v: &str) -> Option<Rgba> {
    let v = v.trim();
    if let Some(hex) = v.strip_prefix('#') {
        let digits: Vec<u8> = hex
            .chars()
            .map(|c| c.to_digit(16).map(|d| d as u8))
            .collect::<Option<Vec<u8>>>()?;
        return match digits.len() {
            3 | 4 => Some(Rgba(
                digits[0] * 17,
                digits[1] * 17,
                digits[2] * 17,
                digits.get(3).map_or(255, |a| a * 17),
            )),
            6 | 8 => Some(Rgba(
                digits[0] * 16 + digits[1],
                digits[2] * 16 + digits[3],
                digits[4] * 16 + digits[5],
                if digits.len() == 8 {
                    digits[6] * 16 + digits[7]
                } else {
                    255
                },
            )),
            _ => None,
        };
    }
    if let Some(args) = v
        .strip_prefix("rgba(")
        .or_else(|| v.strip_prefix("rgb("))
        .and_then(|a| a.strip_suffix(')'))
    {
        let parts: Vec<&str> = args
            .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        let channel = |p: &str| -> Option<u8> {
            let n = match p.strip_suffix('%') {
                Some(pc) => pc.parse::<f32>().ok()? * 2.55,
                None => p.parse::<f32>().ok()?,
            };
            Some(n.round().clamp(0.0, 255.0) as u8)
        };
        let alpha = |p: &str| -> Option<u8> {
            let a = match p.strip_suffix('%') {
                Some(pc) => pc.parse::<f32>().ok()? / 100.0,
                None => p.parse::<f32>().ok()?,
            };
            Some((a.clamp(0.0, 1.0) * 255.0).round() as u8)
        };
        return match parts.as_slice() {
            [r, g, b] => Some(Rgba(channel(r)?, channel(g)?, channel(b)?, 255)),
            [r, g, b, a] => Some(Rgba(channel(r)?, channel(g)?, channel(b)?, alpha(a)?)),
            _ => None,
        };
    }
    let rgb = |x: u32| Rgba((x >> 16) as u8, (x >> 8) as u8, x as u8, 255);
    Some(match v {
        "transparent" => Rgba(0, 0, 0, 0),
        "white" => Rgba::WHITE,
        "black" => Rgba::BLACK,
        "silver" => rgb(0xc0c0c0),
        "gray" | "grey" => rgb(0x808080),
        "red" => rgb(0xff0000),
        "maroon" => rgb(0x800000),
        "yellow" => rgb(0xffff00),
        "olive" => rgb(0x808000),
        "lime" => rgb(0x00ff00),
        "green" => rgb(0x008000),
        "aqua" | "cyan" => rgb(0x00ffff),
        "teal" => rgb(0x008080),
        "blue" => rgb(0x0000ff),
        "navy" => rgb(0x000080),
        "fuchsia" | "magenta" => rgb(0xff00ff),
        "purple" => rgb(0x800080),
        "orange" => rgb(0xffa500),
        "whitesmoke" => rgb(0xf5f5f5),
        "snow" => rgb(0xfffafa),
        "ivory" => rgb(0xfffff0),
        "ghostwhite" => rgb(0xf8f8ff),
        "lightgray" | "lightgrey" => rgb(0xd3d3d3),
        "darkgray" | "darkgrey" => rgb(0xa9a9a9),
        "dimgray" | "dimgrey" => rgb(0x696969),
        "gainsboro" => rgb(0xdcdcdc),
        _ => return None,
    })
}

/// A length in CSS pixels, `em` and `%` taken against `em` pixels (a font size's parent,
/// or the element's own font for other lengths); `None` when not a plain length.
pub(super) fn length(v: &str, em: f32) -> Option<f32> {
    let v = v.trim();
    if v == "0" {
        return Some(0.0);
    }
    // The number: sign, digits, fraction, an exponent only when digits follow its `e`
    // (so `2em` is 2 and `em`).
    let b = v.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && matches!(b[j], b'+' | b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let (num, unit) = v.split_at(i);
    let n: f32 = num.parse().ok()?;
    if !n.is_finite() {
        return None;
    }
    let px = match unit {
        "px" => n,
        "pt" => n * 4.0 / 3.0,
        "pc" => n * 16.0,
        "in" => n * 96.0,
        "cm" => n * 96.0 / 2.54,
        "mm" => n * 96.0 / 25.4,
        "q" => n * 96.0 / 101.6,
        "em" => n * em,
        "ex" | "ch" => n * em / 2.0,
        "rem" => n * 16.0,
        "%" => n * em / 100.0,
        // A 1280 × 800 screen.
        "vw" | "vi" => n * 12.8,
        "vh" | "vb" => n * 8.0,
        "vmin" => n * 8.0,
        "vmax" => n * 12.8,
        _ => return None,
    };
    Some(px)
}

/// A computed font size: a length against the parent's, a keyword, or the parent's when
/// not known (`calc()`, `var()`).
pub(super) fn font_size(v: &str, parent: f32) -> f32 {
    let kw = match v {
        "xx-small" => Some(9.0),
        "x-small" => Some(10.0),
        "small" => Some(13.0),
        "medium" | "initial" => Some(16.0),
        "large" => Some(18.0),
        "x-large" => Some(24.0),
        "xx-large" => Some(32.0),
        "xxx-large" => Some(48.0),
        "smaller" => Some(parent / 1.2),
        "larger" => Some(parent * 1.2),
        _ => None,
    };
    kw.or_else(|| length(v, parent).filter(|n| *n >= 0.0))
        .or_else(|| {
            // `calc(0px)`, `calc(0 * 1em)`: zero whatever the unit.
            let inner = v.strip_prefix("calc(")?.strip_suffix(')')?;
            let zero = inner
                .split(|c: char| c.is_whitespace() || c == '*')
                .any(|t| t.trim_end_matches(|c: char| c.is_alphabetic() || c == '%') == "0");
            (zero && !inner.contains(['+', '-'])).then_some(0.0)
        })
        .unwrap_or(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_escapes_and_importance() {
        let d = declarations(&strip_comments("display:/**/none; color : RED !important"));
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].value, "none");
        assert!(d[1].important && d[1].value == "red");
        let d = declarations("disp\\6c ay: n\\one");
        assert_eq!((d[0].prop, d[0].value.as_str()), (Prop::Display, "none"));
        // A comment's `*/` inside a string is not its end.
        assert_eq!(strip_comments("a{content:'/*'} b{}"), "a{content:'/*'} b{}");
    }

    #[test]
    fn media_for_screens() {
        for q in [
            "",
            "screen",
            "all",
            "only screen and (min-width: 1px)",
            "(min-width:600px)",
            "print, screen",
        ] {
            assert!(media_applies(q), "{q}");
        }
        for q in ["print", "speech", "not screen", "not all and (monochrome)"] {
            assert!(!media_applies(q), "{q}");
        }
    }

    #[test]
    fn lengths_and_sizes() {
        assert_eq!(length("0", 16.0), Some(0.0));
        assert_eq!(length("12pt", 16.0), Some(16.0));
        assert_eq!(length("2em", 10.0), Some(20.0));
        assert_eq!(length("-9999px", 16.0), Some(-9999.0));
        assert_eq!(length("1e1px", 16.0), Some(10.0));
        assert_eq!(length("auto", 16.0), None);
        assert_eq!(font_size("0.1px", 16.0), 0.1);
        assert_eq!(font_size("0em", 16.0), 0.0);
        assert_eq!(font_size("50%", 0.0), 0.0);
        assert_eq!(font_size("calc(0px)", 16.0), 0.0);
        assert_eq!(font_size("var(--x)", 14.0), 14.0);
    }

    #[test]
    fn colours() {
        assert_eq!(colour("#fff"), Some(Rgba::WHITE));
        assert_eq!(
            colour("#FFFFFF00".to_ascii_lowercase().as_str()),
            Some(Rgba(255, 255, 255, 0))
        );
        assert_eq!(colour("rgb(255 255 255)"), Some(Rgba::WHITE));
        assert_eq!(colour("rgba(0,0,0,0)"), Some(Rgba(0, 0, 0, 0)));
        assert_eq!(colour("rgb(100%, 100%, 100%)"), Some(Rgba::WHITE));
        assert_eq!(colour("hsl(0, 0%, 100%)"), None);
        assert!(Rgba(250, 250, 250, 255).near(Rgba::WHITE));
    }

    #[test]
    fn keys_and_specificity() {
        assert!(matches!(key(".wrap .note"), Key::Class(c) if c == "note"));
        assert!(matches!(key("div > p#x.y"), Key::Id(i) if i == "x"));
        assert!(matches!(key("ul li"), Key::Tag(t) if t == "li"));
        assert!(matches!(key("[data-x] *"), Key::Any));
        assert!(matches!(key("p:not(.a)"), Key::Tag(t) if t == "p"));
        assert!(specificity("#a") > specificity(".a.b.c"));
        assert!(specificity(".a") > specificity("div p"));
    }
}
