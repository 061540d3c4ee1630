//! Several files in one read (`file_ids`, issue #19): one result per file in order, one
//! budget used up in file order, a bad file failing only its own entry, options that do
//! not fit some files refused up front naming them.

use serde_json::json;

use crate::common::*;

fn line_file(tag: &str, lines: usize) -> Vec<u8> {
    (0..lines)
        .map(|i| format!("{tag} line {i:03} of the file\n"))
        .collect::<String>()
        .into_bytes()
}

#[tokio::test]
async fn each_file_gets_its_own_result_in_order() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let xlsx = app
        .upload_id("book.xlsx", &fixture("office/book.xlsx"))
        .await;
    let whole_pdf = app.read(json!({"file_id": pdf})).await;
    let r = app
        .read(json!({"file_ids": [pdf, "f_00000000000000000000000000000000", xlsx]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    let results = r.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["status"], "ok");
    assert_eq!(results[0]["file_id"], pdf.as_str());
    assert_eq!(results[0]["text"], whole_pdf.json["text"]);
    assert_eq!(results[1]["status"], "error");
    assert_eq!(results[1]["error"]["code"], "not_found");
    assert!(results[1]["error"]["hint"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));
    assert_eq!(results[2]["status"], "ok");
    assert_eq!(results[2]["format"], "excel");
}

#[tokio::test]
async fn the_budget_is_used_up_in_file_order() {
    let app = TestApp::new().await;
    // 40 lines of 23 characters: 920 characters each.
    let a = app.upload_id("a.txt", &line_file("a", 40)).await;
    let b = app.upload_id("b.txt", &line_file("b", 40)).await;
    let c = app.upload_id("c.txt", &line_file("c", 40)).await;
    let r = app
        .read(json!({"file_ids": [a, b, c], "max_chars": 1500}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let res = r.json["results"].as_array().unwrap();
    assert_eq!(res[0]["truncated"], false, "{}", res[0]);
    assert_eq!(res[1]["truncated"], true, "{}", res[1]);
    // The second file got what the first left (580 characters), in whole lines.
    let shown = strip_truncation(res[1]["text"].as_str().unwrap());
    assert!(
        (557..=580).contains(&shown.chars().count()),
        "{}",
        shown.len()
    );
    assert!(shown.starts_with("b line 000"));
    let next = &res[1]["next"];
    assert_eq!(next["offset"], json!(shown.lines().count()));
    assert_eq!(res[2]["status"], "not_read", "{}", res[2]);
    assert_eq!(res[2]["file_id"], c.as_str());
    assert!(res[2]["message"]
        .as_str()
        .unwrap()
        .contains("max_chars 1500"));
    // Its next reads on in that file alone.
    let on = app
        .read(json!({"file_id": b, "max_chars": 10000, "offset": next["offset"]}))
        .await;
    assert_eq!(
        format!("{shown}{}", on.json["text"].as_str().unwrap()),
        String::from_utf8(line_file("b", 40)).unwrap()
    );
    // A token budget is shared the same way.
    let r = app
        .read(json!({"file_ids": [a, b, c], "max_tokens": 300}))
        .await;
    let res = r.json["results"].as_array().unwrap();
    let spent: u64 = res.iter().filter_map(|e| e["tokens"].as_u64()).sum();
    assert!(spent <= 300, "{spent} tokens: {}", r.json);
    assert_eq!(res[0]["next"]["max_tokens"], 300, "{}", res[0]);
}

#[tokio::test]
async fn options_that_do_not_fit_some_files_are_refused_naming_them() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let csv = app.upload_id("t.csv", b"a,b\n1,2\n").await;
    let r = app
        .read(json!({"file_ids": [pdf, csv], "pages": "1"}))
        .await;
    assert_error(&r, 400, "unsupported_option");
    let msg = r.json["error"]["message"].as_str().unwrap();
    assert!(msg.contains(&csv) && !msg.contains(&pdf), "{msg}");
    let ids: Vec<String> = (0..11).map(|_| pdf.clone()).collect();
    assert_error(
        &app.read(json!({"file_ids": ids})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_ids": []})).await,
        400,
        "invalid_option",
    );
    for other in [
        json!({"file_id": pdf}),
        json!({"url": "http://127.0.0.1/x.pdf"}),
    ] {
        let mut body = json!({"file_ids": [pdf]});
        body.as_object_mut()
            .unwrap()
            .extend(other.as_object().unwrap().clone());
        assert_error(&app.read(body).await, 400, "invalid_request");
    }
    assert_error(
        &app.read(json!({"file_ids": [pdf], "max_chars": 10, "max_tokens": 100}))
            .await,
        400,
        "invalid_option",
    );
}
