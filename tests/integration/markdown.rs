//! `output: "markdown"`: headings, lists with their numbers and GFM pipe tables for the
//! formats that have them, through the real service; budgets, ranges and `next` hold for
//! the Markdown as they do for text.

use serde_json::{json, Value};

use crate::common::*;

async fn markdown(app: &TestApp, name: &str, bytes: &[u8], opts: Value) -> (String, Resp) {
    let id = app.upload_id(name, bytes).await;
    let mut body = json!({"file_id": id, "output": "markdown"});
    body.as_object_mut()
        .unwrap()
        .extend(opts.as_object().unwrap().clone());
    let r = app.read(body).await;
    assert_eq!(r.status, 200, "{}", r.json);
    (id, r)
}

fn text(r: &Resp) -> &str {
    r.json["text"].as_str().unwrap()
}

#[tokio::test]
async fn word_headings_lists_and_tables() {
    let app = TestApp::new().await;
    let (_, r) = markdown(&app, "lists.docx", &fixture("office/lists.docx"), json!({})).await;
    let md = text(&r);
    // Heading 1 under the title is `##`; a heading numbered through its style keeps its
    // number; list items nest by four spaces; a label Markdown has no list for stays.
    for want in [
        "## Article I Definitions\n\nTerms used below.\n\n1. Scope\n    - 1.1. Parties\n",
        "\n### 1.1 Obligations\n",
        "- A. Alpha\n    - (i) detail\n",
    ] {
        assert!(md.contains(want), "{want:?} not in {md}");
    }
    let (_, r) = markdown(
        &app,
        "report.docx",
        &fixture("office/report.docx"),
        json!({}),
    )
    .await;
    let md = text(&r);
    assert!(
        md.contains("- First bullet\n- Second bullet\n1. Step one\n    - a. Sub step\n2. Step two\n\n| Name | Amount |\n|---|---|\n| Line one line two | 1,200.50 |\n| inner a \\| inner b | nested |\n"),
        "{md}"
    );
    assert!(!md.contains("--- Table"), "{md}");
    // OpenDocument text: outline headings with their numbers, lists, tables.
    let (_, r) = markdown(&app, "memo.odt", &fixture("office/memo.odt"), json!({})).await;
    assert!(
        text(&r).starts_with("## 1. Introduction\n\nTwo  spaces and\ta tab in one paragraph.\n\n### 1.1. Scope\n\n1. First step\n    - a) Detail one\n"),
        "{}",
        r.json
    );
    assert!(text(&r).contains("| Item | Count |\n|---|---|\n| Merged across |  |\n"));
    // The text read is as before: no Markdown in it.
    let plain = app
        .upload_and_read("report.docx", &fixture("office/report.docx"), json!({}))
        .await;
    assert!(text(&plain).contains("--- Table 1 ---\nName | Amount\n"));
    assert!(!text(&plain).contains("|---|"));
}

/// Following `next` through a Word document, a workbook, a deck, a CSV and an HTML page
/// with small budgets gives back exactly the Markdown of one read of it all: `next`
/// carries `output`, so no piece comes back as plain text.
#[tokio::test]
async fn next_reads_on_in_markdown() {
    let app = TestApp::new().await;
    let cases = [
        (
            "long.docx",
            fixture("office/long.docx"),
            json!({"max_paragraphs": 7}),
            json!({"max_paragraphs": 100000, "max_chars": 1000000}),
        ),
        (
            "deck.pptx",
            fixture("office/deck.pptx"),
            json!({"max_chars": 120}),
            json!({}),
        ),
        (
            "report.html",
            fixture("html/hidden.html"),
            json!({"max_chars": 80}),
            json!({}),
        ),
        (
            "gbk.csv",
            fixture("text/gbk.csv"),
            json!({"max_chars": 90}),
            json!({}),
        ),
    ];
    for (name, bytes, small, whole) in cases {
        let (id, all) = markdown(&app, name, &bytes, whole).await;
        assert!(all.json.get("next").is_none(), "{name}: {}", all.json);
        let mut first = json!({"output": "markdown"});
        first
            .as_object_mut()
            .unwrap()
            .extend(small.as_object().unwrap().clone());
        let (joined, reads) = follow(&app, &id, first).await;
        assert!(reads > 1, "{name}: read in one go");
        assert_eq!(joined, text(&all), "{name}");
    }
}

#[tokio::test]
async fn workbook_sheets_are_pipe_tables() {
    let app = TestApp::new().await;
    let (id, r) = markdown(
        &app,
        "book.xlsx",
        &fixture("office/book.xlsx"),
        json!({"max_cells": 100000}),
    )
    .await;
    let md = text(&r);
    assert!(
        md.contains("--- Sheet: Data (52 rows × 4 cols) ---\n\n| Id | Value | Label | Date |\n|---|---|---|---|\n| 1 | 1.5 | item | 2024-01-03 |\n"),
        "{md}"
    );
    // A cut read and its `next` (a range of the sheet) are Markdown too; a piece that
    // starts below the sheet's first row has an empty header row, its first row is data.
    let cut = app
        .read(json!({"file_id": id, "output": "markdown", "max_cells": 40}))
        .await;
    let next = &cut.json["next"];
    assert_eq!(next["output"], "markdown", "{}", cut.json);
    assert_eq!(next["range"], "A11:D52");
    let mut body = json!({"file_id": id});
    body.as_object_mut()
        .unwrap()
        .extend(next.as_object().unwrap().clone());
    let on = app.read(body).await;
    assert!(
        text(&on)
            .contains("\n| | | | |\n|---|---|---|---|\n| 10 | 15 | item | 2024-01-12 |\n| 11 |"),
        "{}",
        on.json
    );
}

#[tokio::test]
async fn slides_csv_and_html() {
    let app = TestApp::new().await;
    let (_, r) = markdown(&app, "deck.pptx", &fixture("office/deck.pptx"), json!({})).await;
    assert!(
        text(&r)
            .contains("--- Slide 2 ---\n\nMiddle slide\n\n| Q1 | Q2 |\n|---|---|\n| 10 | 20 |\n"),
        "{}",
        r.json
    );
    let (_, r) = markdown(
        &app,
        "gbk.csv",
        &fixture("text/gbk.csv"),
        json!({"profile": true}),
    )
    .await;
    let md = text(&r);
    let lines: Vec<&str> = md.lines().collect();
    assert!(
        lines[0].starts_with("| ") && lines[1].starts_with("|---|"),
        "{md}"
    );
    assert!(
        lines.iter().all(|l| l.starts_with('|') && l.ends_with('|')),
        "{md}"
    );
    assert_eq!(r.json["encoding"], "GBK");
    // The profile is of the table, not of its Markdown.
    assert!(
        r.json["profile"]["columns"].as_array().unwrap().len() > 1,
        "{}",
        r.json
    );
    let (id, r) = markdown(&app, "report.html", &fixture("html/hidden.html"), json!({})).await;
    assert_eq!(
        text(&r),
        "Quarterly report – Q3\n\n# Revenue grew 12 %\n\nSales rose in every region — see the table.\n\n\
| Region | Growth |\n|---|---|\n| North | 14 % |\n| South East | 9 % |\n\n- First ✓\n- Second ¾\n\nThe end & that's all.\n"
    );
    // The source has no Markdown form.
    let both = app
        .read(json!({"file_id": id, "output": "markdown", "raw": true}))
        .await;
    assert_error(&both, 400, "unsupported_option");
    let bad = app.read(json!({"file_id": id, "output": "html"})).await;
    assert_error(&bad, 400, "invalid_option");
}

/// PDF headings only where they are clear: lines drawn wholly in a clearly larger font
/// (levels by size) and lines that are a bookmark's title on its page (levels by depth);
/// body text — a word that repeats a heading, a line of body size — stays plain. A real
/// paper (the corpus's tracemonkey.pdf) gets its title and numbered sections and nothing
/// else of its body. The text output has no marks.
#[tokio::test]
async fn pdf_headings_from_font_sizes_and_bookmarks() {
    let app = TestApp::new().await;
    let (id, r) = markdown(
        &app,
        "headings.pdf",
        &fixture("pdf/headings.pdf"),
        json!({}),
    )
    .await;
    assert_eq!(
        text(&r),
        "--- Page 1 ---\n# Annual Report\n\n## 1. Introduction\n\nThis report covers the year and its Results in detail. Results\n\n## 2. Results\n\nRevenue grew by four percent over the year before.\n--- Page 2 ---\n# Appendix\n\nTables and sources follow on this page.\n"
    );
    assert!(
        r.json["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("other tables without rulings come as plain lines")),
        "{}",
        r.json
    );
    let plain = app.read(json!({"file_id": id})).await;
    assert!(!text(&plain).contains('#'), "{}", plain.json);
    assert!(plain
        .json
        .get("warnings")
        .is_none_or(|w| !w.to_string().contains("Markdown")));
    let (_, r) = markdown(
        &app,
        "tracemonkey.pdf",
        &std::fs::read(corpus_dir().join("pdf/tracemonkey.pdf")).unwrap(),
        json!({"max_chars": 10_000_000}),
    )
    .await;
    let heads: Vec<&str> = text(&r)
        .lines()
        .filter(|l| l.starts_with("# ") || l.starts_with("## ") || l.starts_with("### "))
        .collect();
    for want in [
        // The title, broken over two lines in the paper, one heading (#45 item 11).
        "# Trace-based Just-in-Time Type Specialization for Dynamic Languages",
        "### 1. Introduction",
        "### 3. Trace Trees",
        "### 10. Future Work",
        "## References",
    ] {
        assert!(heads.contains(&want), "{want:?} not in {heads:?}");
    }
    assert!(heads.len() < 25, "body text promoted: {heads:?}");

    // An author and date line in a larger size under the title is no heading (#44 item 6):
    // the corpus's multicolumn.pdf.
    let (_, r) = markdown(
        &app,
        "multicolumn.pdf",
        &std::fs::read(corpus_dir().join("pdf/multicolumn.pdf")).unwrap(),
        json!({"pages": "1"}),
    )
    .await;
    let t = text(&r);
    assert!(
        t.contains("# Two-Column Document with Lorem Ipsum\n"),
        "{t}"
    );
    assert!(t.contains("\nYour Name\n\nJanuary 3, 2024\n"), "{t}");
    assert!(
        !t.contains("# Your Name") && !t.contains("# January"),
        "{t}"
    );
    assert!(t.contains("## Abstract\n"), "{t}");
}

/// PDF tables where ruling lines draw them: a grid of rules becomes a pipe table between
/// the text above and below (pipes in cells escaped); the same table with its rules across
/// only is one too (its columns from the gaps every row leaves). A real one: the corpus's
/// tiny.pdf; tables without any rule stay lines (structure::ruled_tables_…).
#[tokio::test]
async fn pdf_tables_from_ruling_lines_only() {
    let app = TestApp::new().await;
    let (_, r) = markdown(&app, "table.pdf", &fixture("pdf/table.pdf"), json!({})).await;
    assert_eq!(
        text(&r),
        "--- Page 1 ---\nPrice list for the week\n\n| Item | Qty | Price |\n|---|---|---|\n| Apples | 3 | 1.20 |\n| Pears \\| ripe | 12 | 0.80 |\n\nPrices include tax.\n--- Page 2 ---\nPrice list for the week\n\n| Item | Qty | Price |\n|---|---|---|\n| Apples | 3 | 1.20 |\n| Pears \\| ripe | 12 | 0.80 |\n\nPrices include tax.\n"
    );
    let (_, r) = markdown(
        &app,
        "tiny.pdf",
        &std::fs::read(corpus_dir().join("pdf/tiny.pdf")).unwrap(),
        json!({}),
    )
    .await;
    assert!(
        text(&r).contains("Table 1. Selected Numbers\n\n| Name | Celsius | Fahrenheit |\n|---|---|---|\n| Water Freezing Point | 0 | 32 |\n"),
        "{}",
        text(&r)
    );
}

/// A title broken over two lines in one size is one heading (#45 item 11); numbered
/// sections on consecutive lines stay headings of their own, and the author line under the
/// title (body size) is no heading.
#[tokio::test]
async fn a_two_line_pdf_title_is_one_heading() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "two_line_title.pdf",
            &fixture("pdf/two_line_title.pdf"),
            json!({"output": "markdown"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"],
        "--- Page 1 ---\n# Reading Documents at Scale with One Envelope and Honest Ranges\n\nAda Lovelace and Charles Babbage\n\nThis paper describes a reader of documents for agents.\n\n## 1. Introduction\n\n## 2. Method\n\nThe method reads every page and keeps its place.\n"
    );
}

/// A docx of one body part and its relationships (the hyperlinks' targets).
fn docx_with_links(body: &str, rels: &str) -> Vec<u8> {
    use std::io::Write;
    let parts = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#.to_string()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.to_string()),
        ("word/_rels/document.xml.rels", format!(r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}</Relationships>"#)),
        ("word/document.xml", format!(r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>{body}</w:body></w:document>"#)),
    ];
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in parts {
        z.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(text.as_bytes()).unwrap();
    }
    z.finish().unwrap().into_inner()
}

#[tokio::test]
async fn word_and_powerpoint_hyperlinks_are_markdown_links() {
    let app = TestApp::new().await;
    let corpus = |rel: &str| std::fs::read(corpus_dir().join(rel)).unwrap();
    // Word (`w:hyperlink r:id`, also in a table cell), Word 2003 XML (`w:hlink w:dest`),
    // PowerPoint (`a:hlinkClick` in a run's properties; two runs of one link are one).
    for (name, file, want) in [
        (
            "various.docx",
            "docx/testWORD_various.docx",
            "[This is a hyperlink](http://tika.apache.org/)",
        ),
        (
            "tables.docx",
            "docx/docx_tables.docx",
            "| [A link example](https://tabul.com/) |",
        ),
        (
            "word2003.xml",
            "xml/testWORD2003.xml",
            "| [tika](https://tika.apache.org/) |",
        ),
        (
            "groups.pptx",
            "pptx/testPPT_groups.pptx",
            "Text box5 [tika link](http://tika.apache.org/)",
        ),
        (
            "various.pptx",
            "pptx/testPPT_various.pptx",
            "[This is a hyperlink](http://tika.apache.org/)",
        ),
    ] {
        let bytes = corpus(file);
        let (id, r) = markdown(&app, name, &bytes, json!({})).await;
        assert!(text(&r).contains(want), "{name}: {}", text(&r));
        // Text and the typed document keep the link's words only.
        let plain = app.read(json!({"file_id": id})).await;
        assert!(!text(&plain).contains("]("), "{name}: {}", text(&plain));
        let typed = app.read(json!({"file_id": id, "output": "json"})).await;
        assert!(
            !typed.json["document"].to_string().contains("]("),
            "{name}: {}",
            typed.json["document"]
        );
    }
    // A link inside the document (a footnote's `#_ftn1`) stays text.
    let (_, r) = markdown(
        &app,
        "various.pptx",
        &corpus("pptx/testPPT_various.pptx"),
        json!({}),
    )
    .await;
    assert!(!text(&r).contains("(#_ftn"), "{}", text(&r));

    // Only web and mail addresses become links; brackets in the words are escaped and the
    // address's spaces and parentheses encoded.
    let body = r#"<w:p><w:r><w:t xml:space="preserve">See </w:t></w:r><w:hyperlink r:id="rId2"><w:r><w:t>the [draft] terms</w:t></w:r></w:hyperlink><w:r><w:t xml:space="preserve"> and </w:t></w:r><w:hyperlink r:id="rId3"><w:r><w:t>click me</w:t></w:r></w:hyperlink><w:r><w:t xml:space="preserve">, </w:t></w:r><w:hyperlink r:id="rId4"><w:r><w:t>write</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p>"#;
    let rels = r#"<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/terms (v2).pdf" TargetMode="External"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="javascript:alert(1)" TargetMode="External"/><Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="mailto:legal@example.com" TargetMode="External"/>"#;
    let (_, r) = markdown(&app, "links.docx", &docx_with_links(body, rels), json!({})).await;
    assert_eq!(
        text(&r).trim(),
        r"See [the \[draft\] terms](https://example.com/terms%20%28v2%29.pdf) and click me, [write](mailto:legal@example.com).",
    );
}

/// Links written other ways than `w:hyperlink`: Word's field-coded hyperlinks (`HYPERLINK`
/// in `w:instrText` between `w:fldChar`s, and `w:fldSimple`), OpenDocument's `text:a` in a
/// text document and on a slide. A field's code never shows; a link inside the document
/// (`\l`), another field (`PAGEREF`) and a `javascript:` address stay text. Plain text keeps
/// the words only.
#[tokio::test]
async fn field_coded_and_opendocument_links_are_markdown_links() {
    let app = TestApp::new().await;
    let run = |t: &str| format!(r#"<w:r><w:t xml:space="preserve">{t}</w:t></w:r>"#);
    let fld = |kind: &str| format!(r#"<w:r><w:fldChar w:fldCharType="{kind}"/></w:r>"#);
    let code =
        |c: &str| format!(r#"<w:r><w:instrText xml:space="preserve">{c}</w:instrText></w:r>"#);
    let field = |c: &str, shown: &str| {
        format!(
            "{}{}{}{}{}",
            fld("begin"),
            code(c),
            fld("separate"),
            run(shown),
            fld("end")
        )
    };
    let body = [
        "<w:p>".to_string(),
        run("Read "),
        field(
            r#" HYPERLINK "https://example.com/terms" \o "Terms" "#,
            "the terms",
        ),
        run(", "),
        field(r#" HYPERLINK \l "_Toc1" "#, "section 2"),
        run("."),
        "</w:p><w:p>".to_string(),
        run("Write "),
        r#"<w:fldSimple w:instr=" HYPERLINK &quot;mailto:a@example.com&quot; ">"#.to_string(),
        run("to us"),
        "</w:fldSimple>".to_string(),
        run(" or "),
        field(r#" HYPERLINK "javascript:go()" "#, "click"),
        run(" (page "),
        field(r#" PAGEREF _Toc1 \h "#, "3"),
        run(")"),
        "</w:p><w:p>".to_string(),
        // A field that begins in one paragraph and ends in the next links nothing; a field
        // inside a `w:hyperlink` is linked once, by the hyperlink; `\l` adds its place.
        fld("begin"),
        code(r#" HYPERLINK "https://example.com/far" "#),
        fld("separate"),
        run("Starts here"),
        "</w:p><w:p>".to_string(),
        run("ends here"),
        fld("end"),
        run(". "),
        r#"<w:hyperlink r:id="rId9">"#.to_string(),
        field(r#" HYPERLINK "https://example.com/inner" "#, "both"),
        "</w:hyperlink>".to_string(),
        run(" "),
        field(
            r#" HYPERLINK "https://example.com/doc" \l "part2" "#,
            "part two",
        ),
        "</w:p>".to_string(),
    ]
    .concat();
    let rels = r#"<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/outer" TargetMode="External"/>"#;
    let bytes = docx_with_links(&body, rels);
    let (id, r) = markdown(&app, "fields.docx", &bytes, json!({})).await;
    assert_eq!(
        text(&r).trim(),
        "Read [the terms](https://example.com/terms), section 2.\n\nWrite [to us](mailto:a@example.com) or click (page 3)\n\nStarts here\n\nends here. [both](https://example.com/outer) [part two](https://example.com/doc#part2)",
        "{}",
        text(&r)
    );
    let plain = app.read(json!({"file_id": id})).await;
    assert_eq!(
        text(&plain).trim(),
        "Read the terms, section 2.\nWrite to us or click (page 3)\nStarts here\nends here. both part two"
    );

    let p = r##"<text:p>See <text:a xlink:type="simple" xlink:href="https://example.org/odf"><text:span>the spec</text:span></text:a>, <text:a xlink:href="#Heading">below</text:a> and <text:a xlink:href="mailto:b@example.org">mail</text:a>.</text:p>"##;
    let odt = odf_package(
        "application/vnd.oasis.opendocument.text",
        &format!("<office:text>{p}</office:text>"),
    );
    let odp = odf_package(
        "application/vnd.oasis.opendocument.presentation",
        &format!(
            r#"<office:presentation><draw:page draw:name="p1"><draw:frame presentation:class="outline" svg:x="1cm" svg:y="1cm" svg:width="10cm" svg:height="5cm"><draw:text-box>{p}</draw:text-box></draw:frame></draw:page></office:presentation>"#
        ),
    );
    let want = "See [the spec](https://example.org/odf), below and [mail](mailto:b@example.org).";
    for (name, bytes) in [("links.odt", odt), ("links.odp", odp)] {
        let (id, r) = markdown(&app, name, &bytes, json!({})).await;
        assert!(text(&r).contains(want), "{name}: {}", text(&r));
        let plain = app.read(json!({"file_id": id})).await;
        assert_eq!(plain.status, 200, "{name}: {}", plain.json);
        assert!(
            text(&plain).contains("See the spec, below and mail."),
            "{name}: {}",
            text(&plain)
        );
    }
}
