//! A PDF's own objects, read for what PDFium's API does not hand out (a font's
//! `/Encoding` dictionary: `differences.rs`). Read only when a page needs it, and never
//! trusted further than a lookup: a damaged or hostile file gives fewer objects, not an
//! error.
//!
//! Objects are found by scanning the file for `N G obj`, as PDFium rebuilds a broken
//! cross-reference table, so the table itself is never needed; objects inside object
//! streams (`/Type /ObjStm`, Flate) are read too. Of two definitions of one number, the
//! later in the file wins (an incremental update). Bounded: files up to `MAX_FILE`,
//! `MAX_INFLATED` of object streams in all, nesting to `MAX_DEPTH`.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

/// Larger files are not read again (PDFium has them already; a worker's memory is capped).
const MAX_FILE: u64 = 64 << 20;
/// Object streams inflated, in all.
const MAX_INFLATED: usize = 64 << 20;
/// Arrays and dictionaries inside each other.
const MAX_DEPTH: usize = 64;

/// A PDF object (streams as their dictionary; their data only where an object stream
/// needs it).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Obj {
    Null,
    Bool(bool),
    Num(f64),
    Name(Vec<u8>),
    Str(Vec<u8>),
    Array(Vec<Obj>),
    Dict(Dict),
    Ref(u32),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Dict(Vec<(Vec<u8>, Obj)>);

impl Dict {
    pub(super) fn get(&self, key: &[u8]) -> Option<&Obj> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], &Obj)> {
        self.0.iter().map(|(k, v)| (k.as_slice(), v))
    }
}

impl Obj {
    pub(super) fn as_dict(&self) -> Option<&Dict> {
        match self {
            Obj::Dict(d) => Some(d),
            _ => None,
        }
    }

    pub(super) fn as_name(&self) -> Option<&[u8]> {
        match self {
            Obj::Name(n) => Some(n),
            _ => None,
        }
    }

    pub(super) fn as_num(&self) -> Option<f64> {
        match self {
            Obj::Num(n) => Some(*n),
            _ => None,
        }
    }
}

/// Where an object stands.
#[derive(Clone, Copy)]
enum Loc {
    /// Its value starts at this offset of the file.
    File(usize),
    /// The `index`-th object stream read, its value at `offset` of the inflated data.
    Stream { stream: usize, offset: usize },
}

/// A PDF file's objects, found by number.
pub(super) struct Objects {
    bytes: Vec<u8>,
    at: HashMap<u32, Loc>,
    streams: Vec<Vec<u8>>,
    root: Option<u32>,
}

impl Objects {
    /// The file's objects; `None` when it is too large or cannot be read.
    pub(super) fn open(path: &std::path::Path) -> Option<Self> {
        let size = std::fs::metadata(path).ok()?.len();
        if size > MAX_FILE {
            return None;
        }
        Some(Self::parse(std::fs::read(path).ok()?))
    }

    pub(super) fn parse(bytes: Vec<u8>) -> Self {
        static HEAD: OnceLock<regex::bytes::Regex> = OnceLock::new();
        let head = HEAD.get_or_init(|| {
            regex::bytes::Regex::new(
                r"(?-u)([0-9]{1,10})[\x00\t\n\x0c\r ]+[0-9]{1,5}[\x00\t\n\x0c\r ]+obj",
            )
            .expect("a valid pattern")
        });
        // Number → (where in the file, where its value is).
        let mut found: HashMap<u32, (usize, Loc)> = HashMap::new();
        let mut object_streams = Vec::new();
        for m in head.captures_iter(&bytes) {
            let whole = m.get(0).expect("the match");
            // A number glued to one before it (`12 0 obj` inside `112 0 obj` is the same).
            if whole.start() > 0 && bytes[whole.start() - 1].is_ascii_digit() {
                continue;
            }
            if bytes
                .get(whole.end())
                .is_some_and(|b| !is_delimiter(*b) && !is_space(*b))
            {
                continue;
            }
            let Some(n) = std::str::from_utf8(&m[1]).ok().and_then(|s| s.parse().ok()) else {
                continue;
            };
            found.insert(n, (whole.start(), Loc::File(whole.end())));
            let window = &bytes[whole.end()..bytes.len().min(whole.end() + 512)];
            if window.windows(6).any(|w| w == b"ObjStm") {
                object_streams.push(whole.end());
            }
        }
        let mut me = Self {
            bytes,
            at: HashMap::new(),
            streams: Vec::new(),
            root: None,
        };
        let mut inflated = 0usize;
        for offset in object_streams {
            let Some((members, data)) = me.object_stream(offset, &mut inflated) else {
                continue;
            };
            let stream = me.streams.len();
            me.streams.push(data);
            for (n, at) in members {
                // The object stream's own place in the file orders it against others.
                let newer = found.get(&n).is_none_or(|(pos, _)| *pos < offset);
                if newer {
                    found.insert(n, (offset, Loc::Stream { stream, offset: at }));
                }
            }
        }
        me.at = found.into_iter().map(|(n, (_, loc))| (n, loc)).collect();
        me.root = me.find_root();
        me
    }

    /// The trailer's (or the last cross-reference stream's) `/Root`.
    fn find_root(&self) -> Option<u32> {
        let b = &self.bytes;
        let key = b"/Root";
        let mut end = b.len();
        while let Some(k) = b[..end].windows(key.len()).rposition(|w| w == key) {
            let mut lx = Lexer::new(b, k + key.len());
            if let Some(Obj::Ref(n)) = lx.value(0) {
                if self.at.contains_key(&n) {
                    return Some(n);
                }
            }
            end = k;
        }
        None
    }

    /// An object stream's members (number, offset in the data) and its inflated data.
    fn object_stream(
        &self,
        offset: usize,
        inflated: &mut usize,
    ) -> Option<(Vec<(u32, usize)>, Vec<u8>)> {
        let mut lx = Lexer::new(&self.bytes, offset);
        let Some(Obj::Dict(d)) = lx.value(0) else {
            return None;
        };
        if d.get(b"Type").and_then(Obj::as_name) != Some(b"ObjStm") {
            return None;
        }
        let flate = match d.get(b"Filter") {
            Some(Obj::Name(n)) => n == b"FlateDecode",
            Some(Obj::Array(a)) => a.len() == 1 && a[0].as_name() == Some(b"FlateDecode"),
            None => false,
            _ => return None,
        };
        let raw = lx.stream_data(d.get(b"Length").and_then(Obj::as_num))?;
        let left = MAX_INFLATED.checked_sub(*inflated)?;
        let data = if flate {
            inflate(raw, left)
        } else {
            raw.to_vec()
        };
        if data.len() > left {
            return None;
        }
        *inflated += data.len();
        let count = d.get(b"N").and_then(Obj::as_num)? as usize;
        let first = d.get(b"First").and_then(Obj::as_num)? as usize;
        let mut head = Lexer::new(&data, 0);
        let mut members = Vec::new();
        for _ in 0..count.min(data.len() / 2) {
            let (Some(Obj::Num(n)), Some(Obj::Num(at))) = (head.value(0), head.value(0)) else {
                break;
            };
            if n >= 0.0 && n <= u32::MAX as f64 && at >= 0.0 {
                members.push((n as u32, first.saturating_add(at as usize)));
            }
        }
        Some((members, data))
    }

    /// The document catalog's number.
    pub(super) fn root(&self) -> Option<u32> {
        self.root
    }

    /// Object `n`, or `Null` when there is none.
    pub(super) fn get(&self, n: u32) -> Obj {
        let value = match self.at.get(&n) {
            Some(Loc::File(at)) => Lexer::new(&self.bytes, *at).value(0),
            Some(Loc::Stream { stream, offset }) => {
                Lexer::new(&self.streams[*stream], *offset).value(0)
            }
            None => None,
        };
        value.unwrap_or(Obj::Null)
    }

    /// Stream object `n`: its dictionary, its data (inflated when it is Flate-encoded; at
    /// most `limit + 1` bytes, so more than `limit` says it was cut), and what reading it
    /// cost (the larger of its raw and its inflated bytes); `None` for another filter or a
    /// damaged stream.
    pub(super) fn stream(&self, n: u32, limit: usize) -> Option<(Dict, Vec<u8>, usize)> {
        let mut lx = match self.at.get(&n)? {
            Loc::File(at) => Lexer::new(&self.bytes, *at),
            // Streams are never inside object streams.
            Loc::Stream { .. } => return None,
        };
        let Some(Obj::Dict(d)) = lx.value(0) else {
            return None;
        };
        let length = d
            .get(b"Length")
            .map(|l| self.resolve(l))
            .and_then(|l| l.as_num());
        let raw = lx.stream_data(length)?;
        let data = match d.get(b"Filter").map(|f| self.resolve(f)) {
            None => raw.get(..raw.len().min(limit + 1))?.to_vec(),
            Some(Obj::Name(f)) if f == b"FlateDecode" => inflate(raw, limit),
            Some(Obj::Array(a)) if a.len() == 1 && a[0].as_name() == Some(b"FlateDecode") => {
                inflate(raw, limit)
            }
            _ => return None,
        };
        let cost = raw.len().max(data.len());
        Some((d, data, cost))
    }

    /// `o` itself, or the object it refers to (references to references followed a few
    /// times, never in a loop).
    pub(super) fn resolve(&self, o: &Obj) -> Obj {
        let mut o = o.clone();
        for _ in 0..8 {
            match o {
                Obj::Ref(n) => o = self.get(n),
                other => return other,
            }
        }
        Obj::Null
    }
}

/// Zlib data inflated, at most `limit + 1` bytes (a damaged tail gives what came before).
fn inflate(raw: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::ZlibDecoder::new(raw)
        .take(limit as u64 + 1)
        .read_to_end(&mut out);
    out
}

/// One token of a content stream: an operand, or the operator that takes the operands
/// before it.
#[derive(Debug, PartialEq)]
pub(super) enum Token<'a> {
    Operand(Obj),
    Operator(&'a [u8]),
}

/// A content stream's tokens in order. Inline images (`BI … ID data EI`) are stepped over
/// whole; a stray delimiter or a damaged operand is skipped, never an error.
pub(super) struct Content<'a>(Lexer<'a>);

impl<'a> Content<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Self(Lexer::new(data, 0))
    }
}

impl<'a> Iterator for Content<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let lx = &mut self.0;
        loop {
            lx.skip_space();
            let c = lx.peek()?;
            if matches!(c, b'/' | b'(' | b'<' | b'[')
                || c.is_ascii_digit()
                || matches!(c, b'+' | b'-' | b'.')
            {
                let at = lx.pos;
                match lx.value(0) {
                    Some(v) => return Some(Token::Operand(v)),
                    None => {
                        // Damaged: step past its first byte and go on.
                        lx.pos = at;
                        lx.advance(1);
                        continue;
                    }
                }
            }
            let t = lx.token();
            match t {
                b"" => lx.advance(1),
                b"true" => return Some(Token::Operand(Obj::Bool(true))),
                b"false" => return Some(Token::Operand(Obj::Bool(false))),
                b"null" => return Some(Token::Operand(Obj::Null)),
                b"BI" => {
                    // Its data ends at `EI` standing alone after `ID`.
                    let rest = &lx.b[lx.pos..];
                    let id = memchr::memmem::find(rest, b"ID").map_or(rest.len(), |k| k + 2);
                    let mut k = id;
                    let end = loop {
                        match memchr::memmem::find(&rest[k.min(rest.len())..], b"EI") {
                            Some(f) => {
                                let e = k + f;
                                let before = e == 0 || is_space(rest[e - 1]);
                                let after = rest.get(e + 2).is_none_or(|b| is_space(*b));
                                if before && after {
                                    break e + 2;
                                }
                                k = e + 2;
                            }
                            None => break rest.len(),
                        }
                    };
                    lx.advance(end);
                }
                op => return Some(Token::Operator(op)),
            }
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

/// Objects from bytes.
struct Lexer<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn new(b: &'a [u8], pos: usize) -> Self {
        Self { b, pos }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if is_space(c) {
                self.pos += 1;
            } else if c == b'%' {
                while self.peek().is_some_and(|c| c != b'\r' && c != b'\n') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Steps over `n` bytes, never past the end.
    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.b.len());
    }

    /// A regular token's bytes (a number or keyword).
    fn token(&mut self) -> &'a [u8] {
        self.pos = self.pos.min(self.b.len());
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !is_space(c) && !is_delimiter(c))
        {
            self.pos += 1;
        }
        &self.b[start..self.pos]
    }

    /// The next value; `None` at a keyword that is not one (`endobj`, `stream`), at the
    /// end, or past `MAX_DEPTH`.
    fn value(&mut self, depth: usize) -> Option<Obj> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space();
        match self.peek()? {
            b'/' => {
                self.pos += 1;
                Some(Obj::Name(unescape_name(self.token())))
            }
            b'(' => Some(Obj::Str(self.literal())),
            b'<' if self.b.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                let mut d = Vec::new();
                loop {
                    self.skip_space();
                    match self.peek()? {
                        b'>' if self.b.get(self.pos + 1) == Some(&b'>') => {
                            self.advance(2);
                            return Some(Obj::Dict(Dict(d)));
                        }
                        b'/' => {
                            self.pos += 1;
                            let key = unescape_name(self.token());
                            let v = self.value(depth + 1)?;
                            d.push((key, v));
                        }
                        _ => return None,
                    }
                }
            }
            b'<' => {
                // Hex digits and white space up to `>`; a damaged string ends at the first
                // other byte (which is left for what follows: a scan to the next `>` from
                // every `<` of a hostile stream would be quadratic).
                self.pos += 1;
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_hexdigit() || is_space(c))
                {
                    self.pos += 1;
                }
                let hex: Vec<u8> = self.b[start..self.pos]
                    .iter()
                    .copied()
                    .filter(u8::is_ascii_hexdigit)
                    .collect();
                if self.peek() == Some(b'>') {
                    self.advance(1);
                }
                let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                Some(Obj::Str(
                    hex.chunks(2)
                        .map(|p| digit(p[0]) << 4 | p.get(1).map_or(0, |c| digit(*c)))
                        .collect(),
                ))
            }
            b'[' => {
                self.pos += 1;
                let mut a = Vec::new();
                loop {
                    self.skip_space();
                    if self.peek()? == b']' {
                        self.pos += 1;
                        return Some(Obj::Array(a));
                    }
                    a.push(self.value(depth + 1)?);
                }
            }
            c if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.') => {
                let t = self.token();
                let n: f64 = std::str::from_utf8(t).ok()?.parse().ok()?;
                // `N G R`: a reference.
                if t.iter().all(u8::is_ascii_digit) {
                    let save = self.pos;
                    self.skip_space();
                    let g = self.token();
                    self.skip_space();
                    if !g.is_empty() && g.iter().all(u8::is_ascii_digit) && self.token() == b"R" {
                        return Some(Obj::Ref(u32::try_from(n as u64).ok()?));
                    }
                    self.pos = save;
                }
                Some(Obj::Num(n))
            }
            _ => match self.token() {
                b"true" => Some(Obj::Bool(true)),
                b"false" => Some(Obj::Bool(false)),
                b"null" => Some(Obj::Null),
                _ => None,
            },
        }
    }

    /// A literal string `( … )`, its escapes read.
    fn literal(&mut self) -> Vec<u8> {
        self.pos += 1;
        let mut out = Vec::new();
        let mut open = 1usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'(' => {
                    open += 1;
                    out.push(c);
                }
                b')' => {
                    open -= 1;
                    if open == 0 {
                        break;
                    }
                    out.push(c);
                }
                b'\\' => {
                    let Some(e) = self.peek() else { break };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v as u8);
                        }
                        b'\r' => {
                            if self.peek() == Some(b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        other => out.push(other),
                    }
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// A stream's data, after its dictionary: `Length` bytes when they end at
    /// `endstream`, else up to `endstream`.
    fn stream_data(&mut self, length: Option<f64>) -> Option<&'a [u8]> {
        self.skip_space();
        if self.token() != b"stream" {
            return None;
        }
        if self.peek() == Some(b'\r') {
            self.pos += 1;
        }
        if self.peek() == Some(b'\n') {
            self.pos += 1;
        }
        let start = self.pos;
        let rest = &self.b[start..];
        if let Some(n) = length.filter(|n| *n >= 0.0).map(|n| n as usize) {
            if n <= rest.len() {
                let mut after = Lexer::new(rest, n);
                after.skip_space();
                if after.token() == b"endstream" {
                    return Some(&rest[..n]);
                }
            }
        }
        let end = rest.windows(9).position(|w| w == b"endstream")?;
        Some(&rest[..end])
    }
}

/// A name's `#xx` escapes read.
fn unescape_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut k = 0;
    while k < raw.len() {
        if raw[k] == b'#' && k + 2 < raw.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&raw[k + 1..k + 3]).unwrap_or(""), 16)
            {
                out.push(v);
                k += 3;
                continue;
            }
        }
        out.push(raw[k]);
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_tokens_step_over_inline_images_and_damage() {
        let data = b"BT /F1 12 Tf <358A> Tj [(a) -20 <0001>] TJ ] ) BI /W 1 ID \x01EI\x02 EI ET";
        let tokens: Vec<Token<'_>> = Content::new(data).collect();
        let ops: Vec<&[u8]> = tokens
            .iter()
            .filter_map(|t| match t {
                Token::Operator(o) => Some(*o),
                _ => None,
            })
            .collect();
        assert_eq!(ops, [&b"BT"[..], b"Tf", b"Tj", b"TJ", b"ET"]);
        assert!(tokens.contains(&Token::Operand(Obj::Str(vec![0x35, 0x8A]))));
    }

    #[test]
    fn a_damaged_hex_string_ends_at_its_first_other_byte() {
        // Scanning each `<` of a hostile stream to the next `>` made `<</K <` repeated
        // quadratic; the string ends where its hex digits do, and what follows is read.
        let data = b"<12 3 /K (x)> Tj";
        let tokens: Vec<Token<'_>> = Content::new(data).collect();
        assert_eq!(tokens[0], Token::Operand(Obj::Str(vec![0x12, 0x30])));
        assert_eq!(tokens[1], Token::Operand(Obj::Name(b"K".to_vec())));
        assert_eq!(tokens[2], Token::Operand(Obj::Str(b"x".to_vec())));
        assert_eq!(tokens.last(), Some(&Token::Operator(b"Tj")));
        // A long run of them still gives every name.
        let data = b"<</K <".repeat(50_000);
        let names = Content::new(&data)
            .filter(|t| matches!(t, Token::Operand(Obj::Name(_))))
            .count();
        assert_eq!(names, 50_000);
    }

    #[test]
    fn objects_are_found_without_a_cross_reference_table() {
        let pdf = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\
2 0 obj <</A [1 -2.5 (a\\)b\\051) <414> /N#41me true null 3 0 R]>> endobj\n\
3 0 obj\n(old)\nendobj\n3 0 obj\n(new)\nendobj\ntrailer << /Root 1 0 R >>\n";
        let o = Objects::parse(pdf.to_vec());
        assert_eq!(o.root(), Some(1));
        let Obj::Dict(d) = o.get(2) else { panic!() };
        assert_eq!(
            d.get(b"A"),
            Some(&Obj::Array(vec![
                Obj::Num(1.0),
                Obj::Num(-2.5),
                Obj::Str(b"a)b)".to_vec()),
                Obj::Str(b"A@".to_vec()),
                Obj::Name(b"NAme".to_vec()),
                Obj::Bool(true),
                Obj::Null,
                Obj::Ref(3),
            ]))
        );
        // The later definition wins (an incremental update).
        assert_eq!(o.get(3), Obj::Str(b"new".to_vec()));
        assert_eq!(o.get(9), Obj::Null);
    }

    #[test]
    fn objects_in_object_streams_are_found_and_bounded() {
        use std::io::Write;
        let members = b"5 0 6 11 << /X 7 >> [/Y (z)]";
        let head_len = 9; // "5 0 6 12 "
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(members).unwrap();
        let data = z.finish().unwrap();
        let mut pdf = format!(
            "%PDF-1.5\n4 0 obj\n<< /Type /ObjStm /N 2 /First {head_len} /Filter /FlateDecode /Length {} >>\nstream\n",
            data.len()
        )
        .into_bytes();
        pdf.extend_from_slice(&data);
        pdf.extend_from_slice(b"\nendstream\nendobj\n");
        let o = Objects::parse(pdf);
        let Obj::Dict(d) = o.get(5) else {
            panic!("{:?}", o.get(5))
        };
        assert_eq!(d.get(b"X"), Some(&Obj::Num(7.0)));
        assert_eq!(
            o.get(6),
            Obj::Array(vec![Obj::Name(b"Y".to_vec()), Obj::Str(b"z".to_vec())])
        );
    }

    #[test]
    fn truncated_objects_end_without_reading_past_the_end() {
        for pdf in [
            &b"1 0 obj << /Type /ObjStm /N 1 /First 2 >"[..],
            b"1 0 obj << /Type /ObjStm /N 1 /First 2 >>",
            b"1 0 obj << /Type /ObjStm /N 1 /First 2 >> stream",
            b"1 0 obj <41",
            b"1 0 obj (unclosed \\",
            b"1 0 obj /Name#4",
            b"1 0 obj [1 0",
        ] {
            let o = Objects::parse(pdf.to_vec());
            let _ = o.get(1);
            let mut lx = Lexer::new(pdf, pdf.len() + 5);
            assert_eq!(lx.value(0), None);
            assert_eq!(lx.stream_data(None), None);
        }
    }

    #[test]
    fn hostile_nesting_and_loops_end() {
        let mut pdf = b"1 0 obj ".to_vec();
        pdf.extend(std::iter::repeat_n(b'[', 100_000));
        pdf.extend_from_slice(b"\nendobj\n2 0 obj 3 0 R endobj 3 0 obj 2 0 R endobj");
        let o = Objects::parse(pdf);
        assert_eq!(o.get(1), Obj::Null);
        assert_eq!(o.resolve(&Obj::Ref(2)), Obj::Null);
    }
}
