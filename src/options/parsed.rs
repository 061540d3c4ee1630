//! `Options`: a read's options parsed once — integers checked against their bounds with
//! their defaults applied, page and chapter spans parsed, the query compiled, the budgets
//! validated. The read plan makes it; extractors read typed fields and never parse an
//! option again (the parsers live here and in `rule`, private to `options`).
//!
//! Every integer option is one `Int`: its name, its bounds, what it is when not given.
//! `every_int_matches_the_schema` holds the OpenAPI schema's `minimum`/`maximum` to this
//! table, so the attributes on `ReadRequest`'s fields cannot drift from what is enforced.

use super::{resolve_pages, Query, ReadRequest, MAX_CHARS};
use crate::error::ApiError;

/// An integer option and its bounds (inclusive).
#[derive(Debug, Clone, Copy)]
pub struct Int {
    pub name: &'static str,
    pub min: i64,
    pub max: i64,
}

impl Int {
    const fn at_least(name: &'static str, min: i64) -> Self {
        Self {
            name,
            min,
            max: i64::MAX,
        }
    }

    const fn between(name: &'static str, min: i64, max: i64) -> Self {
        Self { name, min, max }
    }

    /// The value given, checked; `None` when not given.
    pub fn check(self, v: Option<i64>) -> Result<Option<u64>, ApiError> {
        match v {
            None => Ok(None),
            Some(n) if (self.min..=self.max).contains(&n) => Ok(Some(n as u64)),
            Some(n) if self.max == i64::MAX => Err(ApiError::invalid_option(format!(
                "{} must be an integer ≥ {}, got {n}",
                self.name, self.min
            ))),
            Some(n) => Err(ApiError::invalid_option(format!(
                "{} must be between {} and {}, got {n}",
                self.name, self.min, self.max
            ))),
        }
    }
}

pub const OFFSET: Int = Int::at_least("offset", 0);
pub const LIMIT: Int = Int::at_least("limit", 1);
pub const BYTE_OFFSET: Int = Int::at_least("byte_offset", 0);
pub const BYTE_LENGTH: Int = Int::at_least("byte_length", 1);
pub const MAX_CELLS: Int = Int::at_least("max_cells", 1);
pub const MAX_PARAGRAPHS: Int = Int::at_least("max_paragraphs", 1);
pub const PARAGRAPH_OFFSET: Int = Int::at_least("paragraph_offset", 0);
pub const SECTION_BLOCK: Int = Int::at_least("section_block", 0);
pub const CONTEXT_LINES: Int = Int::between("context_lines", 0, 20);
pub const MIN_TEXT_PER_PAGE: Int = Int::at_least("min_text_per_page", 0);
pub const CHUNK_TOKENS: Int = Int::between(
    "chunk_tokens",
    super::MIN_CHUNK_TOKENS as i64,
    super::MAX_CHUNK_TOKENS as i64,
);
pub const DEADLINE_MS: Int = Int::at_least("deadline_ms", 1);
pub const MAX_CHARS_INT: Int = Int::between("max_chars", 1, MAX_CHARS as i64);
pub const MAX_TOKENS: Int = Int::between(
    "max_tokens",
    crate::tokens::MIN_BUDGET as i64,
    crate::tokens::MAX_BUDGET as i64,
);

/// Every integer option of `ReadRequest`.
pub const INTS: &[Int] = &[
    OFFSET,
    LIMIT,
    BYTE_OFFSET,
    BYTE_LENGTH,
    MAX_CELLS,
    MAX_PARAGRAPHS,
    PARAGRAPH_OFFSET,
    SECTION_BLOCK,
    CONTEXT_LINES,
    MIN_TEXT_PER_PAGE,
    CHUNK_TOKENS,
    DEADLINE_MS,
    MAX_CHARS_INT,
    MAX_TOKENS,
];

/// What `max_cells` is when not given.
pub const DEFAULT_MAX_CELLS: u64 = 1000;
/// What `max_paragraphs` is when not given.
pub const DEFAULT_MAX_PARAGRAPHS: usize = 200;
/// What `min_text_per_page` is when not given.
pub const DEFAULT_MIN_TEXT_PER_PAGE: usize = 50;

/// Page, slide or chapter spans as asked (`"1-3,7"`), parsed; resolved against a
/// document's count by `select`.
#[derive(Debug, Clone)]
pub struct Spans {
    /// As the client wrote it (errors and warnings quote it).
    pub spec: String,
    pub spans: Vec<(u64, u64)>,
}

impl Spans {
    fn parse(spec: &Option<String>) -> Result<Option<Self>, ApiError> {
        spec.as_ref()
            .map(|s| {
                Ok(Self {
                    spans: super::parse_spans(s)?,
                    spec: s.clone(),
                })
            })
            .transpose()
    }
}

/// A read's options, parsed once (see the module's account). It derefs to the request,
/// for the options that need no parsing (`sheet`, `hidden_text`, `output`, …); the typed
/// fields below shadow the request's raw fields of the same name.
#[derive(Debug, Clone)]
pub struct Options {
    req: ReadRequest,
    /// The character budget (the service's default when not given).
    pub max_chars: usize,
    /// The token budget, when one was given (never beside `max_chars`).
    pub max_tokens: Option<u64>,
    /// The chunk size of `output: "chunks"` (default 512).
    pub chunk_tokens: u64,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub byte_offset: Option<u64>,
    pub byte_length: Option<u64>,
    pub max_cells: u64,
    pub max_paragraphs: usize,
    pub paragraph_offset: usize,
    /// With `section`: the section's block to start from.
    pub section_block: usize,
    pub min_text_per_page: usize,
    pub deadline_ms: Option<u64>,
    /// The query, compiled with its mode and context lines.
    pub query: Option<Query>,
    pub pages: Option<Spans>,
    pub chapters: Option<Spans>,
}

impl std::ops::Deref for Options {
    type Target = ReadRequest;
    fn deref(&self) -> &ReadRequest {
        &self.req
    }
}

impl Options {
    /// Parse and check every option whose value can be wrong whatever the format
    /// (`max_chars_default`: the service's budget when the request gives none).
    pub fn parse(req: ReadRequest, max_chars_default: usize) -> Result<Self, ApiError> {
        let max_tokens = req.max_tokens()?;
        let chunk_tokens = req.chunk_tokens()?;
        let query = req.query()?;
        Ok(Self {
            max_chars: MAX_CHARS_INT
                .check(req.max_chars)?
                .map_or(max_chars_default, |n| n as usize),
            max_tokens,
            chunk_tokens,
            offset: OFFSET.check(req.offset)?,
            limit: LIMIT.check(req.limit)?,
            byte_offset: BYTE_OFFSET.check(req.byte_offset)?,
            byte_length: BYTE_LENGTH.check(req.byte_length)?,
            max_cells: MAX_CELLS.check(req.max_cells)?.unwrap_or(DEFAULT_MAX_CELLS),
            max_paragraphs: MAX_PARAGRAPHS
                .check(req.max_paragraphs)?
                .map_or(DEFAULT_MAX_PARAGRAPHS, |n| n as usize),
            paragraph_offset: PARAGRAPH_OFFSET.check(req.paragraph_offset)?.unwrap_or(0) as usize,
            section_block: SECTION_BLOCK.check(req.section_block)?.unwrap_or(0) as usize,
            min_text_per_page: MIN_TEXT_PER_PAGE
                .check(req.min_text_per_page)?
                .map_or(DEFAULT_MIN_TEXT_PER_PAGE, |n| n as usize),
            deadline_ms: DEADLINE_MS.check(req.deadline_ms)?,
            query,
            pages: Spans::parse(&req.pages)?,
            chapters: Spans::parse(&req.chapters)?,
            req,
        })
    }

    /// The request as the client sent it (to carry on in `next`, to send to a worker).
    pub fn request(&self) -> &ReadRequest {
        &self.req
    }

    /// Budget the read in characters (a token-budgeted read's inner passes; a read of
    /// several files sharing one budget).
    pub fn set_max_chars(&mut self, chars: usize) {
        self.req.max_tokens = None;
        self.max_tokens = None;
        self.req.max_chars = Some(chars as i64);
        self.max_chars = chars;
    }

    /// Budget the read in estimated tokens.
    pub fn set_max_tokens(&mut self, tokens: u64) {
        self.req.max_chars = None;
        self.req.max_tokens = Some(tokens as i64);
        self.max_tokens = Some(tokens);
    }

    /// The pages (or slides) a read selects of `total`: all without `pages`; a span past
    /// the end is clipped with a warning, a selection wholly past it is `out_of_range`.
    pub fn select_pages(
        &self,
        total: u64,
        unit: &str,
        container: &str,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<u64>, ApiError> {
        select(self.pages.as_ref(), total, unit, container, warnings)
    }

    /// The chapters an EPUB read selects of `total`.
    pub fn select_chapters(
        &self,
        total: u64,
        container: &str,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<u64>, ApiError> {
        select(
            self.chapters.as_ref(),
            total,
            "chapter",
            container,
            warnings,
        )
    }
}

/// On the wire to a worker process: the request and the character budget it runs with
/// (the service's default, when the request gives none); the worker parses it again.
impl serde::Serialize for Options {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (&self.req, self.max_chars).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Options {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (mut req, max_chars) = <(ReadRequest, usize)>::deserialize(d)?;
        // The budget was checked where the read was planned (or set there, for a budget
        // shared by several files): carried as it is, not checked again.
        let given = req.max_chars.take();
        let mut opts =
            Options::parse(req, max_chars).map_err(|e| serde::de::Error::custom(e.message))?;
        opts.req.max_chars = given;
        Ok(opts)
    }
}

fn select(
    spans: Option<&Spans>,
    total: u64,
    unit: &str,
    container: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<u64>, ApiError> {
    match spans {
        Some(s) => {
            let sel = resolve_pages(&s.spec, &s.spans, total, unit, container)?;
            warnings.extend(sel.warning);
            Ok(sel.pages)
        }
        None => Ok((1..=total).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    /// The schema's bounds are the ones enforced: each integer option's `minimum` and
    /// `maximum` in openapi.json are its `Int`'s, and every integer field has an `Int`.
    #[test]
    fn every_int_matches_the_schema() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(ReadRequest::schema()).unwrap();
        let props = schema["properties"].as_object().unwrap();
        let integers: Vec<&String> = props
            .iter()
            .filter(|(_, p)| p.to_string().contains("\"integer\""))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(integers.len(), INTS.len(), "{integers:?}");
        for int in INTS {
            let p = &props[int.name];
            assert_eq!(p["minimum"].as_f64(), Some(int.min as f64), "{}", int.name);
            let max = p["maximum"].as_f64();
            if int.max == i64::MAX {
                assert_eq!(max, None, "{}", int.name);
            } else {
                assert_eq!(max, Some(int.max as f64), "{}", int.name);
            }
        }
    }

    #[test]
    fn defaults_and_bounds_are_applied_once() {
        let o = Options::parse(ReadRequest::default(), 15_000).unwrap();
        assert_eq!(o.max_chars, 15_000);
        assert_eq!(o.max_cells, DEFAULT_MAX_CELLS);
        assert_eq!(o.max_paragraphs, DEFAULT_MAX_PARAGRAPHS);
        assert_eq!(o.min_text_per_page, DEFAULT_MIN_TEXT_PER_PAGE);
        assert_eq!(o.offset, None);
        for (req, name) in [
            (
                ReadRequest {
                    limit: Some(0),
                    ..Default::default()
                },
                "limit must be an integer ≥ 1, got 0",
            ),
            (
                ReadRequest {
                    max_chars: Some(0),
                    ..Default::default()
                },
                "max_chars must be between 1 and 50000000, got 0",
            ),
            (
                ReadRequest {
                    query: Some("x".into()),
                    context_lines: Some(21),
                    ..Default::default()
                },
                "context_lines must be between 0 and 20, got 21",
            ),
        ] {
            let e = Options::parse(req, 15_000).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidOption);
            assert_eq!(e.message, name);
        }
    }

    /// A worker reads the options it is sent as they were planned: a budget the service set
    /// (a default, or what is left of a budget several files share) is carried as it is,
    /// even past what a client may ask for.
    #[test]
    fn options_cross_to_a_worker_as_planned() {
        let mut o = Options::parse(
            ReadRequest {
                pages: Some("2-3".into()),
                query: Some("x".into()),
                ..Default::default()
            },
            15_000,
        )
        .unwrap();
        let wire = serde_json::to_string(&o).unwrap();
        let back: Options = serde_json::from_str(&wire).unwrap();
        assert_eq!(back.max_chars, 15_000);
        assert_eq!(back.request().max_chars, None);
        assert_eq!(back.pages.unwrap().spans, [(2, 3)]);
        assert!(back.query.is_some());
        o.set_max_chars(60_000_000);
        let back: Options = serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(back.max_chars, 60_000_000);
        assert_eq!(back.request().max_chars, Some(60_000_000));
    }

    #[test]
    fn a_budget_set_replaces_the_other() {
        let mut o = Options::parse(
            ReadRequest {
                max_tokens: Some(100),
                ..Default::default()
            },
            15_000,
        )
        .unwrap();
        o.set_max_chars(400);
        assert_eq!((o.max_chars, o.max_tokens), (400, None));
        assert_eq!(o.request().max_chars, Some(400));
        assert_eq!(o.request().max_tokens, None);
    }
}
