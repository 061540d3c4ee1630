//! `output: "chunks"` (issue #44 item 8): the typed document cut for retrieval on every
//! format family — within `chunk_tokens`, a heading starting each section, a long table cut
//! between rows with its header repeated, each chunk's place in `text`; budgets and `next`
//! as in any read; running headers and footers left out unless `furniture: "keep"`.

use serde_json::{json, Value};

use crate::common::*;

fn chunks(r: &Resp) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json.get("document").is_none(),
        "chunks replace the document"
    );
    r.json["chunks"]
        .as_array()
        .unwrap_or_else(|| panic!("no chunks: {}", r.json))
        .clone()
}

/// Letters and digits in words, lowercased: what two renderings of one text share.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether a chunk is one table row (with the header rows a cut table repeats): the one
/// kind of chunk allowed over the budget.
fn one_row(text: &str) -> bool {
    text.lines().all(|l| l.starts_with('|')) && text.lines().count() <= 3
}

/// The checks every chunked read must pass: within the budget (but a lone row), the
/// token count the estimator gives, units the text shows, places in `text` in order whose
/// words are the chunk's, headings only where a chunk starts.
fn check(name: &str, r: &Resp, budget: u64) -> Vec<Value> {
    let got = chunks(r);
    assert!(!got.is_empty(), "{name}: no chunks");
    let text: Vec<char> = r.json["text"].as_str().unwrap().chars().collect();
    let shown: Vec<Value> = r.json["units"]
        .as_array()
        .map(|us| {
            us.iter()
                .map(|u| {
                    let mut u = u.clone();
                    u.as_object_mut().unwrap().remove("start");
                    u.as_object_mut().unwrap().remove("end");
                    u
                })
                .collect()
        })
        .unwrap_or_default();
    let mut last_start = 0;
    let mut heads = std::collections::HashSet::new();
    for c in &got {
        let t = c["text"].as_str().unwrap();
        let tokens = c["tokens"].as_u64().unwrap();
        assert_eq!(tokens, docreader::tokens::estimate(t), "{name}: {c}");
        assert!(tokens <= budget || one_row(t), "{name}: over {budget}: {c}");
        assert!(!t.trim().is_empty(), "{name}: empty chunk");
        for u in c["units"].as_array().unwrap() {
            assert!(
                shown.is_empty() || shown.contains(u),
                "{name}: unit {u} not shown"
            );
        }
        // A heading opens its chunk: after the first line only headings right under it.
        let mut lines = t.lines().filter(|l| !l.is_empty());
        let mut in_head = lines.next().is_some_and(|l| l.starts_with('#'));
        for l in lines {
            if l.starts_with("# ") || l.starts_with("## ") || l.starts_with("### ") {
                assert!(in_head, "{name}: a heading inside a chunk: {t:?}");
            } else {
                in_head = false;
            }
        }
        if let (Some(s), Some(e)) = (c["start"].as_u64(), c["end"].as_u64()) {
            let (s, e) = (s as usize, e as usize);
            assert!(
                s < e && e <= text.len(),
                "{name}: {s}..{e} of {}",
                text.len()
            );
            assert!(s >= last_start, "{name}: chunks out of order");
            last_start = s;
            // The chunk's first and last words stand in its place in the text.
            let place = words(&text[s..e].iter().collect::<String>());
            // A table's header rows a piece repeats stand where its first piece is.
            let first_line = t.lines().next().unwrap_or("");
            let repeated = first_line.starts_with('|') && !heads.insert(first_line.to_string());
            // What the rendering adds before a note, figure or attachment (`[Note by …]`,
            // `Attachments:`) is not the text's.
            let body: Vec<&str> = t
                .lines()
                .skip(if repeated { 2 } else { 0 })
                .map(
                    |l| match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                        Some((_, rest)) => rest,
                        None => l.strip_prefix("Attachments: ").unwrap_or(l),
                    },
                )
                .collect();
            let own = words(&body.join("\n"));
            let own: Vec<&String> = own.iter().filter(|w| w.chars().count() > 1).collect();
            if let (Some(first), Some(last)) = (own.first(), own.last()) {
                assert!(place.contains(first), "{name}: {first:?} not in {place:?}");
                assert!(place.contains(last), "{name}: {last:?} not in {place:?}");
            }
        }
    }
    got
}

/// Every format family is chunked, within its budget, and what it says holds.
#[tokio::test]
async fn every_format_family_is_chunked() {
    let app = TestApp::new().await;
    let corpus = |rel: &str| std::fs::read(corpus_dir().join(rel)).unwrap();
    // One paragraph far larger than a chunk: cut between words.
    let long: String = (0..3000).map(|i| format!("word{i} ")).collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("long.txt", long.into_bytes()),
        ("notes.txt", fixture("text/forged_marker.txt")),
        ("prices.csv", fixture("text/gbk.csv")),
        ("hidden.html", fixture("html/hidden.html")),
        ("headings.pdf", fixture("pdf/headings.pdf")),
        ("table.pdf", fixture("pdf/table.pdf")),
        ("report.docx", fixture("office/report.docx")),
        ("long.docx", fixture("office/long.docx")),
        ("memo.odt", fixture("office/memo.odt")),
        ("deck.pptx", fixture("office/deck.pptx")),
        ("plan.odp", fixture("office/plan.odp")),
        ("book.xlsx", fixture("office/book.xlsx")),
        ("prices.ods", fixture("office/prices.ods")),
        ("voyage.epub", fixture("office/voyage.epub")),
        ("mail.eml", corpus("eml/testRFC822-multipart.eml")),
        ("contract.rtf", fixture("rtf/contract.rtf")),
    ];
    for (name, bytes) in cases {
        for budget in [64u64, 512] {
            let r = app
                .upload_and_read(
                    name,
                    &bytes,
                    json!({"output": "chunks", "chunk_tokens": budget, "include_units": true, "max_chars": 200000, "furniture": "keep"}),
                )
                .await;
            let got = check(name, &r, budget);
            // The chunks hold the words of the units' text (but its marker lines, and the
            // labels only the text writes), none lost.
            let said: std::collections::HashSet<String> = got
                .iter()
                .flat_map(|c| words(c["text"].as_str().unwrap()))
                .collect();
            // The units' own text (not a workbook's list of sheets before them).
            let text: Vec<char> = strip_truncation(r.json["text"].as_str().unwrap())
                .chars()
                .collect();
            let plain: String = r.json["units"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| {
                    let (a, b) = (u["start"].as_u64().unwrap(), u["end"].as_u64().unwrap());
                    let b = (b as usize).min(text.len());
                    text[(a as usize).min(b)..b].iter().collect::<String>() + "\n"
                })
                .collect();
            let plain = plain.as_str();
            let missing: Vec<String> = plain
                .lines()
                .filter(|l| !(l.starts_with("--- ") && l.ends_with(" ---")))
                .filter(|l| !(l.starts_with('[') && l.ends_with(']')))
                .flat_map(words)
                .filter(|w| !said.contains(w))
                .collect();
            let total = words(plain).len().max(1);
            assert!(
                missing.is_empty(),
                "{name}: {} of {total} words not in any chunk: {missing:?}",
                missing.len()
            );
        }
    }
}

#[tokio::test]
async fn a_heading_starts_a_chunk_and_a_long_table_repeats_its_header() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "headings.pdf",
            &fixture("pdf/headings.pdf"),
            json!({"output": "chunks", "chunk_tokens": 512}),
        )
        .await;
    let got = check("headings.pdf", &r, 512);
    let paths: Vec<Value> = got.iter().map(|c| c["heading_path"].clone()).collect();
    // Three sections, three chunks, each under its heading path, though one would hold
    // them all: page 2's "Appendix" is a heading by its bookmark (in json and chunks as in
    // Markdown).
    assert_eq!(
        paths,
        [
            json!(["Annual Report", "1. Introduction"]),
            json!(["Annual Report", "2. Results"]),
            json!(["Appendix"])
        ],
        "{got:?}"
    );
    assert!(got[0]["text"]
        .as_str()
        .unwrap()
        .starts_with("# Annual Report\n\n## 1. Introduction\n"));
    assert!(got[1]["text"]
        .as_str()
        .unwrap()
        .starts_with("## 2. Results\n"));
    assert_eq!(got[1]["units"], json!([{"kind": "page", "number": 1}]));
    assert!(got[2]["text"].as_str().unwrap().starts_with("# Appendix\n"));
    assert_eq!(got[2]["units"], json!([{"kind": "page", "number": 2}]));
    // A section that goes on over a page has both pages as its units.
    let r = app
        .upload_and_read(
            "survey.pdf",
            &fixture("pdf/sections.pdf"),
            json!({"output": "chunks", "chunk_tokens": 512}),
        )
        .await;
    let got = check("sections.pdf", &r, 512);
    let sites = got
        .iter()
        .find(|c| c["heading_path"].as_array().unwrap().last() == Some(&json!("1.1 Sites")))
        .unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(
        sites["units"],
        json!([{"kind": "page", "number": 1}, {"kind": "page", "number": 2}])
    );

    // A sheet of 60 rows in chunks of 64 tokens: every piece starts with the header row,
    // no row is cut, every row is in one piece.
    let r = app
        .upload_and_read(
            "book.xlsx",
            &fixture("office/book.xlsx"),
            json!({"output": "chunks", "chunk_tokens": 64, "sheet": "Data", "max_chars": 200000}),
        )
        .await;
    let got = check("book.xlsx", &r, 64);
    assert!(got.len() > 3, "{got:?}");
    let header = "| Id | Value | Label | Date |";
    let mut rows = Vec::new();
    for c in &got {
        let t = c["text"].as_str().unwrap();
        let mut lines = t.lines();
        assert_eq!(lines.next(), Some(header), "{t}");
        assert_eq!(lines.next(), Some("|---|---|---|---|"), "{t}");
        for l in lines {
            assert_eq!(l.matches(" | ").count(), 3, "a cut row: {l}");
            rows.push(l.to_string());
        }
        assert_eq!(c["units"], json!([{"kind": "sheet", "name": "Data"}]));
    }
    // The sheet's rows as `output: "json"` gives them (its first row the header).
    let typed = app
        .upload_and_read(
            "book.xlsx",
            &fixture("office/book.xlsx"),
            json!({"output": "json", "sheet": "Data", "max_chars": 200000}),
        )
        .await;
    let data_rows: usize = typed.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "table")
        .map(|b| b["rows"].as_array().unwrap().len() - 1)
        .sum();
    assert_eq!(rows.len(), data_rows, "every row in one chunk");
    let ids: Vec<String> = rows
        .iter()
        .map(|r| {
            r.split(" | ")
                .next()
                .unwrap()
                .trim_start_matches("| ")
                .to_string()
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.dedup();
    assert_eq!(ids, sorted, "no row twice");
}

/// A chunked read cut by its budget reads on with `next` (in chunks of the same size): the
/// pages' chunks come once each, in order, to the end.
#[tokio::test]
async fn chunks_read_on_with_next() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_short.pdf"))
        .await;
    let all = app
        .read(json!({"file_id": id, "output": "chunks", "chunk_tokens": 100, "max_chars": 1000000}))
        .await;
    let whole: Vec<String> = chunks(&all)
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_string())
        .collect();
    let mut body =
        json!({"file_id": id, "output": "chunks", "chunk_tokens": 100, "max_chars": 300});
    let (mut got, mut reads) = (Vec::new(), 0);
    loop {
        reads += 1;
        assert!(reads < 100, "no end");
        let r = app.read(body.clone()).await;
        for c in chunks(&r) {
            got.push(c["text"].as_str().unwrap().to_string());
        }
        let Some(next) = r.json.get("next").cloned() else {
            break;
        };
        assert_eq!(next["output"], "chunks", "next keeps the output");
        assert_eq!(next["chunk_tokens"], 100, "next keeps the chunk size");
        body = json!({"file_id": id});
        body.as_object_mut()
            .unwrap()
            .extend(next.as_object().unwrap().clone());
        if body.get("max_chars").is_none() {
            body["max_chars"] = json!(300);
        }
    }
    assert!(reads > 2, "the budget did not cut: {reads} reads");
    // Read on in parts, a page's text is the same; only where chunks join pages differs.
    assert_eq!(
        words(&got.join("\n")),
        words(&whole.join("\n")),
        "chunks read on differ from one read's"
    );
}

/// Running headers and footers: out of the chunks and the Markdown by default, each in a
/// chunk of its own (outside every section) with `furniture: "keep"`; the text keeps them
/// either way.
#[tokio::test]
async fn furniture_is_left_out_of_chunks_unless_kept() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("side.docx", &fixture("office/side_stories.docx"))
        .await;
    let r = app.read(json!({"file_id": id, "output": "chunks"})).await;
    let got = check("side.docx", &r, 512);
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .contains("ACME Corp letterhead"));
    let all: String = got.iter().map(|c| c["text"].as_str().unwrap()).collect();
    assert!(all.contains("Body of the letter."), "{all}");
    assert!(!all.contains("ACME Corp letterhead"), "{all}");
    assert!(!all.contains("footer"), "{all}");

    let r = app
        .read(json!({"file_id": id, "output": "chunks", "furniture": "keep"}))
        .await;
    let got = check("side.docx", &r, 512);
    let texts: Vec<&str> = got.iter().map(|c| c["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        [
            "Body of the letter.",
            "ACME Corp letterhead",
            "Page footer internal footer note",
            "White footer words here"
        ],
        "{got:?}"
    );
    assert!(got.iter().all(|c| c["heading_path"] == json!([])));

    // Markdown leaves them out too (and says so), Word's and OpenDocument's alike;
    // `furniture: "keep"` keeps them; their footnotes and comments stay.
    let memo = app.upload_id("memo.odt", &fixture("office/memo.odt")).await;
    for (file, header, stays) in [
        (&id, "ACME Corp letterhead", "Body of the letter."),
        (
            &memo,
            "Quarterly memo, internal",
            "Footnote about the spaces.",
        ),
    ] {
        let md = app
            .read(json!({"file_id": file, "output": "markdown"}))
            .await;
        let t = md.json["text"].as_str().unwrap();
        assert!(!t.contains(header) && !t.contains("--- Headers ---"), "{t}");
        assert!(!t.contains("--- Footers ---") && t.contains(stays), "{t}");
        assert!(
            md.json["warnings"]
                .to_string()
                .contains("furniture: \\\"keep\\\""),
            "{}",
            md.json
        );
        let kept = app
            .read(json!({"file_id": file, "output": "markdown", "furniture": "keep"}))
            .await;
        let k = kept.json["text"].as_str().unwrap();
        assert!(k.contains("--- Headers ---") && k.contains(header), "{k}");
        let plain = app.read(json!({"file_id": file})).await;
        assert!(plain.json["text"].as_str().unwrap().contains(header));
    }
}

/// What chunks do not combine with, and chunk options without chunks, are refused.
#[tokio::test]
async fn chunk_options_are_refused_where_they_do_not_apply() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("report.docx", &fixture("office/report.docx"))
        .await;
    for (body, status, code) in [
        (json!({"chunk_tokens": 100}), 400, "unsupported_option"),
        (
            json!({"furniture": "keep", "output": "json"}),
            400,
            "unsupported_option",
        ),
        (
            json!({"output": "chunks", "chunk_tokens": 5}),
            400,
            "invalid_option",
        ),
        (
            json!({"output": "chunks", "chunk_tokens": 100000}),
            400,
            "invalid_option",
        ),
        (
            json!({"output": "chunks", "furniture": "some"}),
            400,
            "invalid_option",
        ),
        (
            json!({"output": "chunks", "query": "Alpha"}),
            400,
            "unsupported_option",
        ),
    ] {
        let mut b = body.clone();
        b["file_id"] = json!(id);
        let r = app.read(b).await;
        assert_error(&r, status, code);
    }
}

/// Shapes that would break the budget or the places: headings in a row (and one larger
/// than a chunk), a table whose header is larger than half a chunk, a table of header
/// rows only, and a table whose cells repeat ("1" in every row) — within `chunk_tokens`,
/// the header repeated only where it leaves room, the pieces placed in order without
/// overlapping.
#[tokio::test]
async fn hostile_shapes_stay_within_the_budget_and_in_place() {
    let app = TestApp::new().await;
    let budget = 48;
    let mut html = String::from("<html><body>");
    for i in 0..60 {
        html.push_str(&format!("<h2>Heading number {i}</h2>"));
    }
    html.push_str(&format!("<h1>{}</h1>", "very long title ".repeat(40)));
    html.push_str("<table><tr>");
    for c in 0..12 {
        html.push_str(&format!("<th>Column heading {c}</th>"));
    }
    html.push_str("</tr>");
    for r in 0..20 {
        html.push_str("<tr>");
        for c in 0..12 {
            html.push_str(&format!(
                "<td>{}</td>",
                if c == 0 { r.to_string() } else { "1".into() }
            ));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table><table>");
    for r in 0..30 {
        html.push_str(&format!("<tr><th>Head {r}</th><th>Side {r}</th></tr>"));
    }
    html.push_str("</table><table><tr><th>k</th><th>v</th></tr>");
    for r in 0..40 {
        html.push_str(&format!("<tr><td>row{r}</td><td>1</td></tr>"));
    }
    html.push_str("</table></body></html>");
    let r = app
        .upload_and_read(
            "shapes.html",
            html.as_bytes(),
            json!({"output": "chunks", "chunk_tokens": budget, "include_units": true}),
        )
        .await;
    let got = check("shapes.html", &r, budget);
    // The wide header (12 columns) is more than half a chunk: it heads its table's first
    // piece only; the narrow one (k, v) heads every piece of its table.
    let wide = got
        .iter()
        .filter(|c| c["text"].as_str().unwrap().contains("Column heading 0"))
        .count();
    assert_eq!(wide, 1, "{got:?}");
    let narrow: Vec<&str> = got
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .filter(|t| t.contains("row3") || t.contains("row39"))
        .collect();
    assert!(
        narrow.iter().all(|t| t.starts_with("| k | v |")),
        "{narrow:?}"
    );
    // Every row of the header-only table is in a chunk, none twice.
    let heads: usize = got
        .iter()
        .map(|c| c["text"].as_str().unwrap().matches("| Head ").count())
        .sum();
    assert_eq!(heads, 30, "{got:?}");
    // Placed in order, never overlapping.
    let mut end = 0;
    for c in &got {
        if let (Some(s), Some(e)) = (c["start"].as_u64(), c["end"].as_u64()) {
            assert!(s >= end, "{s} < {end}: {c}");
            end = e;
        }
    }
}
