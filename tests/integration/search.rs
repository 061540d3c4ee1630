//! Search across a tenant's documents (issue #19): what reads returned is found by page,
//! slide, sheet and line; Chinese matches from two characters; never across tenants;
//! gone with the file; `POST /files/{id}/index` makes a never-read document searchable.

use axum::body::Body;
use axum::http::Request;
use serde_json::{json, Value};

use crate::common::*;

async fn search(app: &TestApp, body: Value) -> Resp {
    app.send(
        Request::post("/search")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
    .await
}

async fn index(app: &TestApp, id: &str) -> Resp {
    app.send(
        Request::post(format!("/files/{id}/index"))
            .body(Body::empty())
            .unwrap(),
    )
    .await
}

fn hits(r: &Resp) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["hits"].as_array().unwrap().clone()
}

#[tokio::test]
async fn what_was_read_is_found_where_it_stands() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let deck = app
        .upload_id("deck.pptx", &fixture("office/deck.pptx"))
        .await;
    let book = app
        .upload_id("book.xlsx", &fixture("office/book.xlsx"))
        .await;
    let zh = app
        .upload_id(
            "wiki.txt",
            &std::fs::read(corpus_dir().join("text/sample-chinese.txt")).unwrap(),
        )
        .await;
    // Not read yet: not found.
    assert!(hits(&search(&app, json!({"query": "needle"})).await).is_empty());
    for id in [&pdf, &deck, &book, &zh] {
        assert_eq!(app.read(json!({"file_id": id})).await.status, 200);
    }
    let h = hits(&search(&app, json!({"query": "needle capitals"})).await);
    assert_eq!(h[0]["file_id"], pdf.as_str(), "{h:?}");
    assert_eq!(
        h[0]["page"], 3,
        "the page with both words ranks first: {h:?}"
    );
    assert_eq!(h[0]["line"], 2);
    assert_eq!(h[0]["snippet"], "A second NEEDLE, in capitals.");
    assert_eq!(h[0]["name"], "three.pdf");
    let h = hits(&search(&app, json!({"query": "speaker note"})).await);
    assert_eq!(
        (h[0]["file_id"].as_str(), h[0]["slide"].as_u64()),
        (Some(deck.as_str()), Some(1))
    );
    let h = hits(&search(&app, json!({"query": "Label"})).await);
    assert_eq!(h[0]["sheet"], "Data", "{h:?}");
    // Two Chinese characters (FTS5's trigram tokenizer could not match them).
    let h = hits(&search(&app, json!({"query": "百科"})).await);
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0]["file_id"], zh.as_str());
    assert!(h[0]["snippet"].as_str().unwrap().contains("百科"));
    // file_ids narrows; limit caps.
    let h = hits(&search(&app, json!({"query": "slide page", "file_ids": [deck]})).await);
    assert!(h.iter().all(|x| x["file_id"] == deck.as_str()) && !h.is_empty());
    let h = hits(&search(&app, json!({"query": "the", "limit": 2})).await);
    assert!(h.len() <= 2);
    // Bad searches say why.
    assert!(hits(&search(&app, json!({"query": " ;- "})).await).is_empty());
    assert_error(
        &search(&app, json!({"query": ""})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &search(&app, json!({"query": "x", "limit": 0})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &search(&app, json!({"q": "x"})).await,
        400,
        "invalid_request",
    );
    // Deleted: gone from the index.
    assert_eq!(app.delete(&format!("/files/{pdf}")).await.status, 200);
    let h = hits(&search(&app, json!({"query": "needle"})).await);
    assert!(h.iter().all(|x| x["file_id"] != pdf.as_str()), "{h:?}");
}

#[tokio::test]
async fn search_never_crosses_tenants_and_index_reads_whole_documents() {
    let (alice, bob) = ("alice-key-0123456789", "bob-key-0123456789ab");
    let mut app = TestApp::with(|a| a.api_keys = Some(format!("{alice}:alice,{bob}:bob"))).await;
    app.token = Some(alice.into());
    let id = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    // Only page 1 read: later pages are not searchable yet. Page 30's text comes from
    // another upload of the same bytes (its read indexes that upload, not this one).
    app.read(json!({"file_id": id, "pages": "1"})).await;
    let twin = app
        .upload_id("twin.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    let page30 = app
        .read(json!({"file_id": twin, "pages": "30", "max_chars": 100000}))
        .await;
    let last_line = page30.json["text"]
        .as_str()
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    let only_id = json!({"query": last_line, "file_ids": [id], "limit": 3});
    let before = hits(&search(&app, only_id.clone()).await);
    assert!(before.iter().all(|h| h["page"] != 30), "{before:?}");
    let r = index(&app, &id).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["chars"].as_u64().unwrap() > 1000);
    let h = hits(&search(&app, only_id).await);
    assert_eq!(h[0]["page"], 30, "{last_line}: {h:?}");
    // Bob sees nothing of Alice's, even naming her file.
    app.token = Some(bob.into());
    assert!(hits(&search(&app, json!({"query": last_line})).await).is_empty());
    assert!(hits(&search(&app, json!({"query": last_line, "file_ids": [id]})).await).is_empty());
    let r = index(&app, &id).await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn an_index_kept_inside_the_main_database_moves_to_its_own_file() {
    // Earlier versions kept the index in docreader.db; it now lives in search.db, so that
    // indexing never holds up an upload's row (issue #23). An index of the old layout is
    // moved at start and still found.
    let app = TestApp::new().await;
    let id = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let main_db = app.data_dir().join("docreader.db");
    let url = format!("sqlite://{}", main_db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::raw_sql(
        "CREATE TABLE search_units (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, \
         file_id TEXT NOT NULL, unit TEXT NOT NULL, unit_key TEXT NOT NULL, text TEXT NOT NULL, \
         UNIQUE (tenant, file_id, unit, unit_key)); \
         CREATE VIRTUAL TABLE search_fts USING fts5(terms, tokenize = 'unicode61 remove_diacritics 2');",
    )
    .execute(&pool)
    .await
    .unwrap();
    let text = "Quarterly figures\nthe zebracorn ledger balances";
    sqlx::query("INSERT INTO search_units (id, tenant, file_id, unit, unit_key, text) VALUES (7, 'local', ?, 'page', '2', ?)")
        .bind(&id)
        .bind(text)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO search_fts (rowid, terms) VALUES (7, ?)")
        .bind(text)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let args = docreader::config::ServeArgs::with_data_dir(app.data_dir());
    let state = docreader::AppState::new(&args).await.expect("state");
    let again = TestApp {
        router: docreader::app(state),
        dir: tempfile::tempdir().unwrap(),
        token: None,
    };
    let h = hits(&search(&again, json!({"query": "zebracorn"})).await);
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0]["file_id"], id.as_str());
    assert_eq!(h[0]["name"], "three.pdf");
    assert_eq!(h[0]["page"], 2);
    assert_eq!(h[0]["line"], 2);
    // Gone from docreader.db.
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let left: Vec<(String,)> =
        sqlx::query_as("SELECT name FROM sqlite_master WHERE name LIKE 'search%'")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

/// Issue #45 item 7: words in double quotes match only where they stand together; a
/// Markdown read is not indexed (its syntax would be), the plain reading is.
#[tokio::test]
async fn quoted_words_match_as_a_phrase_and_markdown_is_not_indexed() {
    let app = TestApp::new().await;
    let together = app
        .upload_id("a.txt", b"intro\nthe net total is 42 euros\n")
        .await;
    let apart = app
        .upload_id("b.txt", b"net of tax\nthe total rises to 50\n")
        .await;
    for id in [&together, &apart] {
        assert_eq!(app.read(json!({"file_id": id})).await.status, 200);
    }
    let loose = hits(&search(&app, json!({"query": "net total"})).await);
    assert_eq!(loose.len(), 2, "{loose:?}");
    let phrase = hits(&search(&app, json!({"query": "\"Net Total\""})).await);
    assert_eq!(phrase.len(), 1, "{phrase:?}");
    assert_eq!(phrase[0]["file_id"], together.as_str());
    assert_eq!(phrase[0]["line"], 2);
    // A phrase and a word: the phrase must match, the word ranks.
    let both = hits(&search(&app, json!({"query": "\"net total\" euros"})).await);
    assert_eq!(both.len(), 1, "{both:?}");

    let docx = app
        .upload_id("report.docx", &fixture("office/report.docx"))
        .await;
    let md = app
        .read(json!({"file_id": docx, "output": "markdown"}))
        .await;
    assert!(
        md.json["text"].as_str().unwrap().contains("| Name"),
        "{}",
        md.json
    );
    assert!(
        hits(&search(&app, json!({"query": "Name"})).await).is_empty(),
        "a Markdown read is not indexed"
    );
    // Named, the file is read whole (plain) into the index: the snippet is a line of the
    // plain text, not the Markdown table's row (`| Name | Amount |`).
    let named = hits(&search(&app, json!({"query": "Name", "file_ids": [docx]})).await);
    assert!(!named.is_empty());
    let plain = app.read(json!({"file_id": docx})).await;
    let plain = plain.json["text"].as_str().unwrap();
    for h in &named {
        let snippet = h["snippet"].as_str().unwrap();
        assert!(!snippet.starts_with('|'), "{snippet}");
        assert!(
            plain.lines().any(|l| l.trim() == snippet.trim()),
            "{snippet}"
        );
    }
}

/// `DOCREADER_INDEX_READS` (issue #46 item 1): `on_demand` indexes only what is asked for
/// (a search naming the file, `POST /files/{id}/index`), never a read on its own; `off`
/// refuses search and indexing with a hint, never an empty answer that looks like no match.
#[tokio::test]
async fn the_operator_chooses_what_reads_add_to_the_index() {
    use docreader::config::IndexReads;
    let app = TestApp::with(|a| a.index_reads = IndexReads::OnDemand).await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    assert_eq!(app.read(json!({"file_id": pdf})).await.status, 200);
    assert!(
        hits(&search(&app, json!({"query": "needle"})).await).is_empty(),
        "a read alone indexes nothing"
    );
    let named = hits(&search(&app, json!({"query": "needle", "file_ids": [pdf]})).await);
    assert_eq!(named[0]["page"], 2, "{named:?}");
    let other = app
        .upload_id("deck.pptx", &fixture("office/deck.pptx"))
        .await;
    assert_eq!(index(&app, &other).await.status, 200);
    assert!(!hits(&search(&app, json!({"query": "speaker note"})).await).is_empty());

    let app = TestApp::with(|a| a.index_reads = IndexReads::Off).await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    assert_eq!(app.read(json!({"file_id": pdf})).await.status, 200);
    let r = search(&app, json!({"query": "needle"})).await;
    assert_error(&r, 403, "forbidden");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("DOCREADER_INDEX_READS"));
    assert_error(&index(&app, &pdf).await, 403, "forbidden");
}

/// Every hit says how much of its file the index holds (#45 item 7): a PDF read three pages
/// of thirty is found there but says so, and is whole once indexed whole; a text read whole
/// is whole at once.
#[tokio::test]
async fn hits_say_how_much_of_their_file_is_indexed() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    let txt = app
        .upload_id("note.txt", b"A short note about quokkas.\nSecond line.\n")
        .await;
    let r = app.read(json!({"file_id": pdf, "pages": "1-3"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(app.read(json!({"file_id": txt})).await.status, 200);

    let h = hits(&search(&app, json!({"query": "line"})).await);
    let of = |h: &[Value], id: &str| {
        h.iter()
            .find(|x| x["file_id"] == id)
            .unwrap_or_else(|| panic!("no hit of {id}: {h:?}"))["coverage"]
            .clone()
    };
    assert_eq!(
        of(&h, &pdf),
        json!({"indexed_units": 3, "total_units": 30, "whole": false}),
        "{h:?}"
    );
    assert_eq!(
        of(&h, &txt),
        json!({"indexed_units": 1, "total_units": 1, "whole": true}),
        "{h:?}"
    );

    // A read of the rest with a small budget: more pages, still not one whole read.
    let r = app
        .read(json!({"file_id": pdf, "pages": "4-30", "max_chars": 200}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let c = of(&hits(&search(&app, json!({"query": "line"})).await), &pdf);
    assert_eq!(c["whole"], false, "{c}");
    assert!(c["indexed_units"].as_u64().unwrap() > 3, "{c}");

    let r = index(&app, &pdf).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        of(&hits(&search(&app, json!({"query": "line"})).await), &pdf),
        json!({"indexed_units": 30, "total_units": 30, "whole": true})
    );

    // Deleted, its coverage goes with it: uploaded again, it starts from nothing.
    assert_eq!(app.delete(&format!("/files/{pdf}")).await.status, 200);
    let again = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    assert_eq!(
        app.read(json!({"file_id": again, "pages": "2"}))
            .await
            .status,
        200
    );
    assert_eq!(
        of(&hits(&search(&app, json!({"query": "line"})).await), &again),
        json!({"indexed_units": 1, "total_units": 30, "whole": false})
    );
}

#[tokio::test]
async fn a_read_indexes_up_to_its_cap_and_an_index_request_the_rest() {
    // Issue #46 item 1: a read adds at most DOCREADER_INDEX_MAX_MB of text to the index by
    // itself (a unit cut at a line), in parts whose hits still name their unit's line;
    // `POST /files/{id}/index` adds the rest.
    let app = TestApp::with(|a| a.index_max_mb = 1).await;
    let text: String = (1..=60_000)
        .map(|i| format!("row {i} tok{i}x value\n"))
        .collect();
    assert!(text.len() > 1_400_000);
    let id = app.upload_id("rows.txt", text.as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "max_chars": 2_000_000}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"].as_str().unwrap().len(), text.len());

    let find = |h: &[Value], line: u64| {
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0]["file_id"], id.as_str());
        assert_eq!(h[0]["line"], line, "{h:?}");
        assert_eq!(h[0]["snippet"], format!("row {line} tok{line}x value"));
    };
    // Line 30,000 stands in the index's ~14th part: its line is the document's.
    let h = hits(&search(&app, json!({"query": "tok30000x"})).await);
    find(&h, 30_000);
    assert_eq!(
        h[0]["coverage"],
        json!({"indexed_units": 1, "total_units": 1, "whole": false}),
        "past the cap, the file is not whole in the index"
    );
    assert!(hits(&search(&app, json!({"query": "tok59999x"})).await).is_empty());

    let r = index(&app, &id).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let h = hits(&search(&app, json!({"query": "tok59999x"})).await);
    find(&h, 59_999);
    assert_eq!(
        h[0]["coverage"],
        json!({"indexed_units": 1, "total_units": 1, "whole": true})
    );
    find(&hits(&search(&app, json!({"query": "tok1x"})).await), 1);
}
