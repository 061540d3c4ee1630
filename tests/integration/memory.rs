//! Document memory: a page is OCR'd once per tenant and bytes; later reads (the same
//! pages, another range, a query) reuse it; tenants never share it; deleting forgets.

use serde_json::json;

use crate::common::*;

fn scan() -> Vec<u8> {
    std::fs::read(corpus_dir().join("pdf/testOCR.pdf")).expect("corpus pdf/testOCR.pdf")
}

#[tokio::test]
async fn a_second_read_does_no_ocr() {
    for workers in [0, 1] {
        let keys = "key-aaaaaaaaaaaaaaaa:alice,key-bbbbbbbbbbbbbbbb:bob";
        let mut app = TestApp::with(|a| {
            a.api_keys = Some(keys.into());
            a.workers = workers;
            a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
        })
        .await;
        app.token = Some("key-aaaaaaaaaaaaaaaa".into());
        let id = app.upload_id("scan.pdf", &scan()).await;
        let first = app.read(json!({"file_id": id})).await;
        assert_eq!(first.status, 200, "{}", first.json);
        assert_eq!(first.json["cached"], false);
        assert_eq!(first.json["ocr_pages"], 1);
        assert!(first.json.get("ocr_pages_from_memory").is_none());
        let second = app.read(json!({"file_id": id, "query": "happy"})).await;
        assert_eq!(second.json["cached"], true, "{}", second.json);
        assert_eq!(second.json["ocr_pages_from_memory"], 1);
        assert_eq!(second.json["matches"], 1);
        let third = app.read(json!({"file_id": id})).await;
        assert_eq!(third.json["text"], first.json["text"]);
        assert_eq!(third.json["cached"], true);
        let metrics = app.get("/metrics").await.json.as_str().unwrap().to_string();
        assert!(
            metrics.contains("docreader_cache_hits_total 2"),
            "{metrics}"
        );

        // Another tenant's read of the same bytes does its own OCR.
        app.token = Some("key-bbbbbbbbbbbbbbbb".into());
        let bobs = app.upload_id("same.pdf", &scan()).await;
        let r = app.read(json!({"file_id": bobs})).await;
        assert_eq!(
            r.json["cached"], false,
            "memory must not cross tenants: {}",
            r.json
        );

        // Deleting the last upload of the bytes forgets them.
        app.token = Some("key-aaaaaaaaaaaaaaaa".into());
        assert_eq!(app.delete(&format!("/files/{id}")).await.status, 200);
        let again = app.upload_id("scan.pdf", &scan()).await;
        let r = app.read(json!({"file_id": again})).await;
        assert_eq!(r.json["cached"], false, "{}", r.json);
    }
}

/// Lines OCR'd for a plain read carry no page layout (the model runs only for reads with
/// structure): a Markdown read of those pages reads them again with their layout, once, and
/// from then on both kinds of read take the lines with their roles from the memory.
#[tokio::test]
async fn a_structured_read_does_not_take_lines_read_without_their_layout() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("layout_scan.pdf", &fixture("pdf/layout_scan.pdf"))
        .await;
    let roles = |r: &Resp| -> usize {
        r.json["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["lines"].as_array().unwrap().iter())
            .filter(|l| l.get("role").is_some())
            .count()
    };
    let plain = app
        .read(json!({"file_id": id, "include_boxes": true}))
        .await;
    assert_eq!(plain.status, 200, "{}", plain.json);
    assert!(plain.json.get("ocr_pages_from_memory").is_none());
    assert_eq!(
        roles(&plain),
        0,
        "a plain read runs no layout: {}",
        plain.json["boxes"]
    );
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    assert!(
        md.json.get("ocr_pages_from_memory").is_none(),
        "read again for its layout: {}",
        md.json
    );
    assert!(
        md.json["text"]
            .as_str()
            .unwrap()
            .contains("# Water Quality in the Northern Basin\n"),
        "{}",
        md.json["text"]
    );
    let again = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(again.json["ocr_pages_from_memory"], 2, "{}", again.json);
    assert_eq!(
        again.json["outline"].as_array().unwrap().len(),
        2,
        "{}",
        again.json
    );
    let plain = app
        .read(json!({"file_id": id, "include_boxes": true}))
        .await;
    assert_eq!(plain.json["ocr_pages_from_memory"], 2, "{}", plain.json);
    assert!(roles(&plain) >= 6, "{}", plain.json["boxes"]);
}
