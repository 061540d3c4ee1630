//! `section` reads: one entry of the document's outline. The document is read whole as
//! its typed model (the outline needs every heading, and a section's end is the next
//! heading of its level or above, wherever that is); the entry is found, its blocks are
//! rendered as the read asked (plain text, Markdown, json's blocks, chunks), and the
//! budget cuts between blocks, `next` naming the section and its block to read on from.

use std::time::Instant;

use super::ReadService;
use crate::detect::Format;
use crate::envelope::{self, Envelope, Next};
use crate::error::{ApiError, ErrorCode};
use crate::extract::outline;
use crate::extract::Input;
use crate::findings::FindingKind;
use crate::model::{Block, Document, Span, UnitBlocks};
use crate::options::{Options, Output, ReadRequest, MAX_CHARS};
use crate::read::ReadPlan;

/// What reads a document whole as its model: `output: "json"` within the largest budget,
/// its format's other budgets lifted, no section, no range (the strict rule keeps ranges
/// from a section read). `ocr` and the rest are the request's own.
pub fn whole_request(req: &ReadRequest, format: Format) -> ReadRequest {
    let fits = crate::options::options_for(format);
    let mut r = req.clone();
    r.section = None;
    r.section_block = None;
    r.output = Some(Output::Json);
    r.chunk_tokens = None;
    r.furniture = None;
    r.max_tokens = None;
    r.max_chars = Some(MAX_CHARS as i64);
    if fits.contains(&"max_paragraphs") {
        r.max_paragraphs = Some(i64::MAX);
    }
    if fits.contains(&"max_cells") {
        r.max_cells = Some(i64::MAX);
    }
    r
}

impl ReadService {
    /// The plan that reads a planned read's document whole as its model (`whole_request`).
    fn whole_plan(&self, plan: &ReadPlan) -> Result<ReadPlan, ApiError> {
        let mut whole = plan.clone();
        whole.opts = Options::parse(
            whole_request(plan.opts.request(), plan.format),
            self.limits.max_chars,
        )?;
        Ok(whole)
    }

    /// A `section` read (see the module's account).
    pub(super) async fn run_section(
        &self,
        tenant: &str,
        input: Input,
        file_id: Option<String>,
        plan: &ReadPlan,
        asked: &str,
    ) -> Result<Envelope, ApiError> {
        let started = Instant::now();
        let whole = self.whole_plan(plan)?;
        let env = self
            .executor
            .run(tenant, input, file_id, &whole, &self.limits)
            .await?;
        let mut env = section_of(env, &plan.opts, asked)?;
        env.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(env)
    }

    /// The outline of a prepared read's document, read whole (`document_info`), with the
    /// warnings of a read that could not finish (then the outline is what it reached).
    pub async fn outline(
        &self,
        prepared: super::Prepared,
    ) -> Result<(Vec<outline::OutlineEntry>, Option<String>), ApiError> {
        let super::Prepared {
            resolved,
            plan,
            tenant,
            ..
        } = prepared;
        let plan = self.whole_plan(&plan)?;
        let upload = resolved.upload.as_ref().map(|(id, _)| id.clone());
        let env = self
            .executor
            .run(&tenant, resolved.input, upload, &plan, &self.limits)
            .await?;
        let cut = (env.truncated || env.next.is_some()).then(|| stopped(&env));
        let doc = env.document.unwrap_or_default();
        Ok((outline::outline(&doc), cut))
    }
}

/// Why a whole read stopped short (its warnings, or the budget).
fn stopped(env: &Envelope) -> String {
    if env.truncated {
        format!("the document is over {MAX_CHARS} characters")
    } else if env.warnings.is_empty() {
        "the read stopped before the document's end".to_string()
    } else {
        env.warnings.join("; ")
    }
}

/// A rendered block of the section: its unit (index in the document), its text, whether
/// it joins the one before it by a line break, and the block.
struct Piece<'d> {
    unit: usize,
    text: String,
    line: bool,
    block: &'d Block,
}

/// The section `asked` names, of a document read whole (`env`), as the read asked.
fn section_of(mut env: Envelope, opts: &Options, asked: &str) -> Result<Envelope, ApiError> {
    let doc = env.document.take().unwrap_or_default();
    let located = outline::locate(&doc);
    let complete = !env.truncated && env.next.is_none();
    let short = |what: &str| {
        ApiError::new(
            if env.truncated {
                ErrorCode::TooLarge
            } else {
                ErrorCode::Timeout
            },
            format!(
                "{what}: the document could not be read whole ({})",
                stopped(&env)
            ),
        )
        .with_hint("Give the read more time (deadline_ms), or read the document by pages or budget and next.")
    };
    let i = match outline::resolve(&located, asked) {
        Ok(i) => i,
        Err(e) if complete => return Err(e),
        Err(_) => return Err(short(&format!("section \"{asked}\" was not found"))),
    };
    let level = located[i].entry.level;
    let ends_inside = located[i + 1..].iter().any(|l| l.entry.level <= level);
    if !ends_inside && outline::heading_count(&doc) > located.len() {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!(
                "section {} \"{}\" may go on past the outline's first {} headings",
                located[i].entry.id,
                located[i].entry.title,
                located.len()
            ),
        )
        .with_hint("Read the document by pages or budget and next."));
    }
    if !complete && !ends_inside {
        return Err(short(&format!(
            "section {} \"{}\" may go on past what was read",
            located[i].entry.id, located[i].entry.title
        )));
    }
    let markdown = opts.markdown();
    let drop_furniture = (markdown || opts.chunks()) && !opts.keep_furniture();
    let pieces: Vec<Piece> = outline::section_blocks(&doc, &located, i)
        .into_iter()
        .filter(|(_, b)| !(drop_furniture && crate::extract::chunks::is_furniture(b)))
        .filter_map(|(unit, block)| {
            let (text, line) = outline::rendered(block, markdown)?;
            Some(Piece {
                unit,
                text,
                line,
                block,
            })
        })
        .collect();
    let from = opts.section_block;
    if from > 0 && from >= pieces.len() {
        return Err(ApiError::new(
            ErrorCode::OutOfRange,
            format!(
                "section_block {from} is past the end of section {} ({} blocks)",
                located[i].entry.id,
                pieces.len()
            ),
        )
        .with_hint("Read on with the section_block `next` gives; a read without `next` read the section to its end."));
    }
    let (full, spans, ends) = lay_out(&doc, &pieces, from);
    let pieces = &pieces[from.min(pieces.len())..];
    let char_count = full.chars().count() as u64;
    // Whole pieces while they fit the budget (characters, or estimated tokens).
    // A token budget holds the closing line of a cut text too.
    let tail = crate::tokens::estimate(&format!("\n{}", envelope::truncation_line(char_count)));
    let fits = |end: usize| match opts.max_tokens {
        Some(t) => crate::tokens::estimate(&full[..end]) + tail <= t,
        None => full[..end].chars().count() <= opts.max_chars,
    };
    // The whole section without a closing line, else whole blocks with one.
    let whole = match opts.max_tokens {
        Some(t) => crate::tokens::estimate(&full) <= t,
        None => full.chars().count() <= opts.max_chars,
    };
    let taken = if whole {
        ends.len()
    } else {
        ends[..ends.len().saturating_sub(1)].partition_point(|&e| fits(e))
    };
    let id = located[i].entry.id.clone();
    let mut next = None;
    let (text, spans) = if taken == ends.len() {
        (full.clone(), spans)
    } else {
        let mut n = Next {
            section: Some(id.clone()),
            section_block: Some((from + taken.max(1)) as u64),
            ..Default::default()
        };
        let kept = if taken > 0 {
            ends[taken - 1]
        } else {
            // Not even the first block fits: as much of it as does, and the budget that
            // reads it whole.
            let first = &full[..ends[0]];
            n.section_block = Some(from as u64);
            let (chars, tokens) = (first.chars().count(), crate::tokens::estimate(first));
            if chars > MAX_CHARS
                || (opts.max_tokens.is_some() && tokens + tail > crate::tokens::MAX_BUDGET)
            {
                return Err(ApiError::new(
                    ErrorCode::TooLarge,
                    format!(
                        "block {from} of section {id} is {chars} characters, more than the largest budget reads"
                    ),
                )
                .with_hint("Read the document by pages or byte windows instead of by section."));
            }
            match opts.max_tokens {
                Some(t) => {
                    n.max_tokens = Some(
                        (tokens + tail)
                            .max(crate::tokens::MIN_BUDGET)
                            .min(crate::tokens::MAX_BUDGET),
                    );
                    let room = t.saturating_sub(tail).max(1);
                    envelope::first_chars(first, crate::tokens::prefix_within(first, room)).len()
                }
                None => {
                    n.max_chars = Some(first.chars().count() as u64);
                    envelope::cut_within(first, opts.max_chars).len()
                }
            }
        };
        crate::extract::carry_on(&mut n, opts);
        next = Some(n);
        let kept_text = full[..kept].to_string();
        let end = kept_text.len();
        (
            envelope::close_truncated(kept_text, char_count),
            crate::model::clip(spans, end),
        )
    };
    let shown = if taken == ends.len() {
        pieces.len()
    } else {
        taken
    };
    let truncated = next.is_some();
    // The blocks the text shows, by unit.
    let mut units: Vec<UnitBlocks> = Vec::new();
    for p in &pieces[..shown] {
        let unit = &doc.units[p.unit].unit;
        match units.last_mut() {
            Some(u) if u.unit == *unit => u.blocks.push(p.block.clone()),
            _ => units.push(UnitBlocks::new(unit.clone(), vec![p.block.clone()])),
        }
    }
    if truncated {
        if let Some(last) = units.last_mut() {
            last.complete = false;
        }
    }
    let section_doc = Document { units };
    let (document, chunks) = match opts.output {
        Some(Output::Json) => (Some(section_doc), None),
        Some(Output::Chunks) => {
            let mut chunks = crate::extract::chunks::cut(
                &section_doc,
                &text,
                &spans,
                opts.chunk_tokens,
                opts.keep_furniture(),
            );
            // Each chunk's heading path starts above the section, where its heading stands
            // (a read on from inside the section has not its heading: under all of it).
            let entry = &located[i].entry;
            let above = if from == 0 {
                &entry.path[..entry.path.len() - 1]
            } else {
                &entry.path[..]
            };
            for c in chunks
                .iter_mut()
                .filter(|c| from > 0 || !c.heading_path.is_empty())
            {
                c.heading_path.splice(0..0, above.iter().cloned());
            }
            (None, Some(chunks))
        }
        _ => (None, None),
    };
    // The entry and those under it.
    let end = located[i + 1..]
        .iter()
        .position(|l| l.entry.level <= level)
        .map_or(located.len(), |k| i + 1 + k);
    env.outline = Some(located[i..end].iter().map(|l| l.entry.clone()).collect());
    // What the extractor found hidden on the section's units stays; the text's own
    // findings are found again in the section's text.
    let extra = env
        .security
        .take()
        .map(|s| s.findings)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !from_text(f.kind))
        .filter(|f| {
            spans.iter().any(|s| {
                let place = crate::model::Place::of(&s.unit);
                place.page == f.place.page
                    && place.slide == f.place.slide
                    && place.sheet == f.place.sheet
                    && place.chapter == f.place.chapter
            })
        })
        .collect();
    env.security = crate::findings::scan(&text, &spans, extra);
    if opts.max_tokens.is_some() {
        env.tokens = Some(crate::tokens::estimate(&text));
    }
    // What was read is the section's units, not the whole read's.
    let numbers = |kind: crate::model::UnitKind| -> Vec<u64> {
        spans
            .iter()
            .filter(|s| s.unit.kind == kind)
            .filter_map(|s| s.unit.number)
            .collect()
    };
    let (pages, slides, chapters) = (
        numbers(crate::model::UnitKind::Page),
        numbers(crate::model::UnitKind::Slide),
        numbers(crate::model::UnitKind::Chapter),
    );
    if env.report.pages_read.is_some() {
        env.report.pages_read = Some(pages.len() as u64);
        env.report.page_range_read = Some(crate::options::format_pages(&pages));
    }
    if env.report.slide_range_read.is_some() {
        env.report.slide_range_read = Some(crate::options::format_pages(&slides));
    }
    if env.report.chapter_range_read.is_some() {
        env.report.chapter_range_read = Some(crate::options::format_pages(&chapters));
    }
    env.char_count = char_count;
    env.truncated = truncated;
    env.text = text;
    env.spans = spans;
    env.next = next;
    env.document = document;
    env.chunks = chunks;
    Ok(env)
}

/// Whether a finding kind is one the text's own scan finds (not the extractor's).
fn from_text(kind: FindingKind) -> bool {
    matches!(
        kind,
        FindingKind::TagCharacters
            | FindingKind::ZeroWidth
            | FindingKind::BidiOverride
            | FindingKind::HomoglyphWord
            | FindingKind::InjectionPattern
            | FindingKind::MarkerLookalike
    )
}

/// The section's pieces from `from` on as one text: each unit's marker line where the
/// unit starts (a format with units; not again for a unit a read on goes on in), blocks
/// apart by a blank line (a run of list items or lines by a line break), each piece with
/// the break after it, so that the texts of a read and its reads on join into the whole.
/// Its spans, and where each piece (with its break) ends, in bytes.
fn lay_out(doc: &Document, pieces: &[Piece], from: usize) -> (String, Vec<Span>, Vec<usize>) {
    let mut text = String::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut ends = Vec::with_capacity(pieces.len().saturating_sub(from));
    for j in from..pieces.len() {
        let p = &pieces[j];
        let u = &doc.units[p.unit].unit;
        if j == from || pieces[j - 1].unit != p.unit {
            let head = text.len();
            let goes_on = j == from && j > 0 && pieces[j - 1].unit == p.unit;
            if !goes_on {
                if let Some(m) = outline::marker(u) {
                    text.push_str(&m);
                }
            }
            spans.push(Span {
                unit: u.clone(),
                head,
                body: text.len(),
                end: text.len(),
            });
        }
        text.push_str(&p.text);
        if let Some(s) = spans.last_mut() {
            s.end = text.len();
        }
        text.push_str(match pieces.get(j + 1) {
            None => "\n",
            Some(q) if q.unit == p.unit && q.line => "\n",
            Some(_) => "\n\n",
        });
        ends.push(text.len());
    }
    (text, spans, ends)
}
