//! What a hostile client or a careless operator must not get through (issue #15): archives
//! disguised as documents, attachment amplification, and the like.

use serde_json::json;

use crate::common::*;

/// A message with `n` small text attachments, each with its own content.
fn eml_with_attachments(n: usize) -> Vec<u8> {
    let mut m = String::from(
        "From: a@example.com\r\nTo: b@example.com\r\nSubject: many parts\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n--XX\r\n\
         Content-Type: text/plain\r\n\r\nSee the attachments.\r\n",
    );
    for i in 0..n {
        m.push_str(&format!(
            "--XX\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"part{i}.txt\"\r\n\r\nattachment number {i}\r\n"
        ));
    }
    m.push_str("--XX--\r\n");
    m.into_bytes()
}

#[tokio::test]
async fn one_read_stores_a_bounded_number_of_attachments() {
    let app = TestApp::with(|a| a.limits.max_attachments_per_read = 5).await;
    let r = app
        .upload_and_read("many.eml", &eml_with_attachments(40), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let atts = r.json["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 40, "every attachment is listed");
    let stored = atts.iter().filter(|a| a["file_id"].is_string()).count();
    assert_eq!(stored, 5, "{}", r.json["attachments"]);
    let unstored = atts
        .iter()
        .filter(|a| {
            a["note"]
                .as_str()
                .is_some_and(|n| n.starts_with("not stored"))
        })
        .count();
    assert_eq!(unstored, 35);
    // The tenant holds the message and five attachments, not forty-one uploads.
    let files = app.get("/files?limit=1000").await;
    assert_eq!(files.json["files"].as_array().unwrap().len(), 6);
    // Reading it again stores nothing new.
    let id = files.json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "many.eml")
        .unwrap()["file_id"]
        .clone();
    let again = app.read(json!({"file_id": id})).await;
    assert_eq!(again.status, 200);
    let files = app.get("/files?limit=1000").await;
    assert_eq!(files.json["files"].as_array().unwrap().len(), 6);
}

/// Archives whose first member is named like a PDF or an image are refused at upload, like
/// any archive (before, `%PDF-` anywhere in the first KiB, or image magic in a tar member's
/// name, made them documents).
#[tokio::test]
async fn archives_named_inside_like_documents_are_refused() {
    let app = TestApp::new().await;
    let mut tar = vec![0u8; 2048];
    tar[..12].copy_from_slice(b"%PDF-1.4.pdf");
    tar[257..263].copy_from_slice(b"ustar\0");
    let mut gif_tar = vec![0u8; 2048];
    gif_tar[..10].copy_from_slice(b"GIF89a.gif");
    gif_tar[257..263].copy_from_slice(b"ustar\0");
    let mut gz = vec![0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3];
    gz.extend_from_slice(b"%PDF-1.4.pdf\0\x03\0%%EOF\n");
    for (name, bytes) in [("a.pdf", tar), ("b.gif", gif_tar), ("c.pdf", gz)] {
        let r = app.upload(name, &bytes).await;
        assert_error(&r, 415, "blocked_type");
    }
    assert_eq!(app.stored_blobs(), 0);
}

/// A file deleted while its OCR read runs leaves no document memory behind (before, the
/// read's memory was written after the delete forgot it, and a later upload of the same
/// bytes read as `cached`).
#[tokio::test]
async fn a_delete_during_an_ocr_read_leaves_no_memory() {
    let app = TestApp::new().await;
    let pdf = fixture("pdf/thirty_short.pdf");
    let id = app.upload_id("thirty.pdf", &pdf).await;
    let read = app.read(json!({"file_id": id, "ocr": "force", "pages": "1-6"}));
    let delete = async {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        app.delete(&format!("/files/{id}")).await
    };
    let (r, d) = tokio::join!(read, delete);
    assert_eq!(d.status, 200, "{}", d.json);
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["elapsed_ms"].as_u64().unwrap() > 150,
        "the read must still be running when the delete lands: {}",
        r.json["elapsed_ms"]
    );
    let again = app.upload_id("thirty.pdf", &pdf).await;
    let r = app
        .read(json!({"file_id": again, "ocr": "force", "pages": "1-6"}))
        .await;
    assert_eq!(r.json["cached"], false, "{}", r.json);
    assert!(r.json.get("ocr_pages_from_memory").is_none(), "{}", r.json);
}
