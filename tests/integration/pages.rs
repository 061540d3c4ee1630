//! `GET /files/{id}/pages/{n}`: pages drawn as pictures, in the server and in workers.

use axum::body::Body;
use axum::http::Request;
use image::{DynamicImage, GenericImageView};

use crate::common::*;

async fn pool(n: usize) -> TestApp {
    TestApp::with(|a| {
        a.workers = n;
        a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
    })
    .await
}

fn picture(r: &Resp, mime: &str) -> DynamicImage {
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.headers["content-type"], mime);
    image::load_from_memory(&r.body).expect("a picture that decodes")
}

/// Pixels darker than mid-grey: ink.
fn ink(img: &DynamicImage) -> usize {
    img.to_luma8().pixels().filter(|p| p[0] < 128).count()
}

#[tokio::test]
async fn pdf_pages_are_drawn_at_the_size_asked() {
    for app in [TestApp::new().await, pool(1).await] {
        let id = app
            .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
            .await;
        // A4 at 72 dpi is its size in points.
        let p2 = picture(
            &app.get(&format!("/files/{id}/pages/2?dpi=72")).await,
            "image/png",
        );
        assert_eq!(p2.dimensions(), (595, 842));
        // Text in the top left (the page's five lines), nothing at the bottom.
        let top = p2.crop_imm(0, 0, 595, 150);
        let bottom = p2.crop_imm(0, 600, 595, 242);
        assert!(ink(&top) > 1000, "no text drawn: {} dark pixels", ink(&top));
        assert_eq!(ink(&bottom), 0);
        // Another page is another picture; the default is 96 dpi.
        let p1 = picture(&app.get(&format!("/files/{id}/pages/1")).await, "image/png");
        assert_eq!(p1.dimensions(), (793, 1123));
        let p1_72 = picture(
            &app.get(&format!("/files/{id}/pages/1?dpi=72")).await,
            "image/png",
        );
        assert_ne!(p1_72.to_rgb8().into_raw(), p2.to_rgb8().into_raw());
        // By width; WebP is lossless, so the same pixels as PNG.
        let png = picture(
            &app.get(&format!("/files/{id}/pages/3?width=300")).await,
            "image/png",
        );
        assert_eq!(png.dimensions(), (300, 425));
        let webp = picture(
            &app.get(&format!("/files/{id}/pages/3?width=300&format=webp"))
                .await,
            "image/webp",
        );
        assert_eq!(webp.to_rgb8().into_raw(), png.to_rgb8().into_raw());
    }
}

#[tokio::test]
async fn images_and_tiff_pages_are_drawn_too() {
    let app = TestApp::new().await;
    let bytes = fixture("images/hello.png");
    let id = app.upload_id("hello.png", &bytes).await;
    let drawn = picture(&app.get(&format!("/files/{id}/pages/1")).await, "image/png");
    let original = image::load_from_memory(&bytes).unwrap();
    assert_eq!(drawn.to_rgb8().into_raw(), original.to_rgb8().into_raw());
    let half = picture(
        &app.get(&format!(
            "/files/{id}/pages/1?width={}",
            original.width() / 2
        ))
        .await,
        "image/png",
    );
    assert_eq!(half.width(), original.width() / 2);
    assert_error(
        &app.get(&format!("/files/{id}/pages/2")).await,
        416,
        "out_of_range",
    );
    // An image has pixels, not a dpi.
    assert_error(
        &app.get(&format!("/files/{id}/pages/1?dpi=150")).await,
        400,
        "unsupported_option",
    );

    let tiff = std::fs::read(corpus_dir().join("image/testTIFF_multipage.tif")).unwrap();
    let id = app.upload_id("pages.tif", &tiff).await;
    let first = picture(&app.get(&format!("/files/{id}/pages/1")).await, "image/png");
    let second = picture(&app.get(&format!("/files/{id}/pages/2")).await, "image/png");
    assert!(ink(&second) > 0);
    assert_ne!(first.to_rgb8().into_raw(), second.to_rgb8().into_raw());
    let past = app.get(&format!("/files/{id}/pages/99")).await;
    assert_error(&past, 416, "out_of_range");
    assert!(
        past.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the TIFF has"),
        "{}",
        past.json
    );
}

#[tokio::test]
async fn page_images_are_refused_clearly() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let get = |q: String| {
        let app = &app;
        async move { app.get(&q).await }
    };
    assert_error(
        &get(format!("/files/{id}/pages/4")).await,
        416,
        "out_of_range",
    );
    assert_error(
        &get(format!("/files/{id}/pages/0")).await,
        400,
        "invalid_range",
    );
    assert_error(
        &get(format!("/files/{id}/pages/first")).await,
        400,
        "invalid_range",
    );
    // Past the int64 the schema gives the number: no page number (schemathesis, a random seed).
    assert_error(
        &get(format!("/files/{id}/pages/9223372036854775808")).await,
        400,
        "invalid_range",
    );
    assert_error(
        &get(format!("/files/{id}/pages/9223372036854775807")).await,
        416,
        "out_of_range",
    );
    assert_error(
        &get(format!("/files/{id}/pages/1?dpi=72&width=100")).await,
        400,
        "invalid_option",
    );
    assert_error(
        &get(format!("/files/{id}/pages/1?dpi=5000")).await,
        400,
        "invalid_option",
    );
    assert_error(
        &get(format!("/files/{id}/pages/1?width=0")).await,
        400,
        "invalid_option",
    );
    assert_error(
        &get(format!("/files/{id}/pages/1?format=gif")).await,
        400,
        "invalid_option",
    );
    assert_error(
        &get(format!("/files/{id}/pages/1?zoom=2")).await,
        400,
        "invalid_option",
    );
    assert_error(
        &get("/files/f_missing/pages/1".into()).await,
        404,
        "not_found",
    );
    // Past the pixel budget: refused, and the hint's dpi is one that fits.
    let big = get(format!("/files/{id}/pages/1?dpi=1200")).await;
    assert_error(&big, 413, "too_large");
    let hint = big.json["error"]["hint"].as_str().unwrap();
    let dpi: f32 = hint
        .trim_start_matches("Ask for a dpi of at most ")
        .trim_end_matches('.')
        .parse()
        .unwrap_or_else(|_| panic!("no dpi in the hint: {hint}"));
    assert!(dpi > 250.0 && dpi < 1200.0, "{hint}");
    let fits = get(format!("/files/{id}/pages/1?dpi={dpi}")).await;
    let img = picture(&fits, "image/png");
    assert!(img.width() as u64 * img.height() as u64 <= 9_000_000);
    // Not a PDF or an image.
    let docx = app
        .upload_id("report.docx", &fixture("office/report.docx"))
        .await;
    assert_error(
        &get(format!("/files/{docx}/pages/1")).await,
        415,
        "unsupported_format",
    );
}

#[tokio::test]
async fn a_held_copy_is_answered_by_its_etag() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let first = app.get(&format!("/files/{id}/pages/1?dpi=50")).await;
    assert_eq!(first.status, 200);
    let etag = first.headers["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let cache = first.headers["cache-control"].to_str().unwrap();
    assert!(
        cache.contains("private") && cache.contains("immutable"),
        "{cache}"
    );
    let again = app
        .send(
            Request::get(format!("/files/{id}/pages/1?dpi=50"))
                .header("if-none-match", &etag)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.headers["etag"].to_str().unwrap(), etag);
    // Another size, page or format is another picture with another tag.
    for other in ["1?dpi=51", "2?dpi=50", "1?dpi=50&format=webp"] {
        let r = app.get(&format!("/files/{id}/pages/{other}")).await;
        assert_eq!(r.status, 200);
        assert_ne!(r.headers["etag"].to_str().unwrap(), etag, "{other}");
    }
}

#[tokio::test]
async fn encrypted_pdfs_take_their_password_in_a_header() {
    let app = TestApp::new().await;
    let pdf = std::fs::read(corpus_dir().join("pdf/libreoffice-writer-password.pdf")).unwrap();
    let id = app.upload_id("locked.pdf", &pdf).await;
    let with = |pw: Option<&'static str>| {
        let mut req = Request::get(format!("/files/{id}/pages/1?dpi=40"));
        if let Some(pw) = pw {
            req = req.header("x-document-password", pw);
        }
        app.send(req.body(Body::empty()).unwrap())
    };
    assert_error(&with(None).await, 422, "encrypted");
    assert_error(&with(Some("wrong")).await, 422, "encrypted");
    let drawn = with(Some("openpassword")).await;
    // A cache keeps the picture apart by key and password: a request without the password
    // is not answered from a copy drawn with it (Chromium did, before `Vary`).
    let vary = drawn.headers["vary"].to_str().unwrap().to_ascii_lowercase();
    assert!(
        vary.contains("x-document-password") && vary.contains("authorization"),
        "{vary}"
    );
    let img = picture(&drawn, "image/png");
    assert!(ink(&img) > 0);
}

#[tokio::test]
async fn other_tenants_pages_are_not_found() {
    let keys = "key-aaaaaaaaaaaaaaaa:alice,key-bbbbbbbbbbbbbbbb:bob";
    let mut app = TestApp::with(|a| a.api_keys = Some(keys.into())).await;
    app.token = Some("key-aaaaaaaaaaaaaaaa".into());
    let id = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    assert_eq!(app.get(&format!("/files/{id}/pages/1")).await.status, 200);
    app.token = Some("key-bbbbbbbbbbbbbbbb".into());
    assert_error(
        &app.get(&format!("/files/{id}/pages/1")).await,
        404,
        "not_found",
    );
    app.token = None;
    assert_error(
        &app.get(&format!("/files/{id}/pages/1")).await,
        401,
        "unauthorized",
    );
}
