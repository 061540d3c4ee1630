//! OCR with the real PP-OCR models: images made here from a PDF page rendered by PDFium,
//! a blank image, EXIF-free PNGs from the fixtures, boxes.

use serde_json::json;

use crate::common::*;

/// A PNG of a fixture PDF page (0-based), rendered by PDFium at `dpi`.
fn render_png(pdf: &str, page: u16, dpi: f32) -> Vec<u8> {
    docreader::extract::pdf::render_page_png(
        &repo().join("fixtures/pdf").join(pdf),
        page as u64 + 1,
        dpi,
    )
    .unwrap()
}

#[tokio::test]
async fn images_are_read_by_ocr() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            json!({"include_boxes": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "image");
    assert_eq!(r.json["mime"], "image/png");
    assert_eq!(r.json["ocr_engine"], "ppocr");
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "good");
    let text = r.json["text"].as_str().unwrap();
    assert!(text.contains("Hello OCR world"), "{text}");
    let b = &r.json["boxes"][0];
    assert!(
        b["text"].is_string()
            && b["box"].as_array().unwrap().len() == 4
            && b["confidence"].as_f64().unwrap() > 0.5,
        "{b}"
    );
    assert_error(
        &app.upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            json!({"offset": 1}),
        )
        .await,
        400,
        "unsupported_option",
    );
    assert_error(
        &app.upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            json!({"ocr": "none"}),
        )
        .await,
        422,
        "no_ocr_engine",
    );
}

#[tokio::test]
async fn a_rendered_page_comes_back_with_its_words_and_spaces() {
    let app = TestApp::new().await;
    let png = render_png("three_pages.pdf", 1, 200.0);
    let r = app.upload_and_read("scan.png", &png, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    for line in [
        "Beta page two",
        "The needle is on this line.",
        "The quick brown fox jumps over the lazy dog.",
    ] {
        assert!(text.contains(line), "missing {line:?} in {text}");
    }
}

#[tokio::test]
async fn small_condensed_type_keeps_its_word_spaces() {
    // 9 pt DejaVu Sans Condensed at 150 dpi, a noisy scan (fixtures/make_condensed_scan.py):
    // narrow word gaps. PP-OCRv4 recognition read 1 of these 20 lines back exactly, running
    // words together ("theroadswere closed"); PP-OCRv6 tiny reads 17.
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "condensed.jpg",
            &fixture("images/condensed_scan.jpg"),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let read: std::collections::HashSet<&str> = r.json["text"]
        .as_str()
        .unwrap()
        .lines()
        .map(str::trim)
        .collect();
    let reference = String::from_utf8(fixture("images/condensed_scan.txt")).unwrap();
    let missing: Vec<&str> = reference.lines().filter(|l| !read.contains(l)).collect();
    assert_eq!(reference.lines().count(), 20);
    assert!(
        missing.len() <= 5,
        "{} of 20 lines not read back exactly: {missing:#?}\n{}",
        missing.len(),
        r.json["text"]
    );
}

/// Tables on scans and two columns of prose side by side (#44 items 3 and 5; the page made
/// by fixtures/make_table_scan.py): a table without rules, its rows read by the detector in
/// parts, is a pipe table in Markdown and a `table` block in `json`, image and scanned PDF
/// alike; the prose columns, which the row grouping reads across, are read column after
/// column in every output (plain text too); plain text keeps the table's rows as lines.
#[tokio::test]
async fn a_scanned_table_is_a_table_and_prose_columns_are_read_in_order() {
    let app = TestApp::new().await;
    let table = "| Test | Result | Reference Range | Flag |\n|---|---|---|---|\n\
                 | Glucose | 118 mg/dL | 70-100 mg/dL | HIGH |\n\
                 | HbA1c | 6.8% | <5.7% | HIGH |\n\
                 | Creatinine | 1.1 mg/dL | 0.7-1.3 mg/dL |  |\n\
                 | Hemoglobin | 14.2 g/dL | 13.5-17.5 g/dL |  |\n\
                 | Platelets | 245,000 | 150,000-400,000 | LOW |\n";
    let columns = "The patient was seen in\nthe morning and the re-\nsults were discussed\n\
                   with the family before\nthe visit ended. A fol-\nlow-up is planned for\n\
                   the spring, after the\nnext round of tests.\n";
    for (name, bytes) in [
        ("table_scan.png", fixture("images/table_scan.png")),
        ("table_scan.pdf", fixture("pdf/table_scan.pdf")),
    ] {
        let r = app
            .upload_and_read(name, &bytes, json!({"output": "markdown"}))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        let md = r.json["text"].as_str().unwrap();
        assert!(
            md.contains(&format!(
                "LABORATORY RESULTS\n\n{table}\nResults were checked"
            )),
            "{name}: {md}"
        );
        assert!(md.ends_with(columns), "{name}: {md}");
        let r = app
            .upload_and_read(name, &bytes, json!({"output": "json"}))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        let tables = document_blocks(&r.json, |b| b["kind"] == "table");
        assert_eq!(tables.len(), 1, "{name}: {}", r.json["document"]);
        assert_eq!(tables[0]["header_rows"], 1);
        assert_eq!(
            tables[0]["rows"][3],
            json!(["Creatinine", "1.1 mg/dL", "0.7-1.3 mg/dL", ""])
        );
        assert_eq!(tables[0]["rows"].as_array().unwrap().len(), 6);
        let r = app.upload_and_read(name, &bytes, json!({})).await;
        let t = r.json["text"].as_str().unwrap();
        assert!(
            !t.contains('|') && t.contains("\nGlucose 118 mg/dL 70-100 mg/dL HIGH\n"),
            "{name}: {t}"
        );
        assert!(t.trim_end().ends_with(columns.trim_end()), "{name}: {t}");
    }
}

#[tokio::test]
async fn a_blank_image_is_empty_with_a_note_never_invented_text() {
    let app = TestApp::new().await;
    let blank = image::RgbImage::from_pixel(640, 480, image::Rgb([255, 255, 255]));
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(blank)
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let r = app
        .upload_and_read("blank.png", &png.into_inner(), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "");
    assert_eq!(r.json["note"], "OCR found no text in the image");
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "degraded");
    assert_eq!(
        (r.json["width"].clone(), r.json["height"].clone()),
        (json!(640), json!(480))
    );
}

#[tokio::test]
async fn damaged_images_are_corrupt() {
    let app = TestApp::new().await;
    let mut png = fixture("images/hello.png");
    png.truncate(200);
    assert_error(
        &app.upload_and_read("cut.png", &png, json!({})).await,
        422,
        "corrupt",
    );
}

/// A named language still lets lines in other scripts be read (#43 item 7): a sign in
/// Korean, English, Russian and Chinese read with `ocr_lang: "ko"` (made by
/// fixtures/make_script_fixtures.py). Tesseract reads the page in Korean and English, and
/// reads the Russian line as `BbIxo, K CTAHLMWM MeTPO` and the Chinese one as `HAA`; the
/// page read as `auto` reads it puts each right, and says which engine read it.
#[tokio::test]
async fn a_named_language_keeps_lines_in_other_scripts() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("sign.png", &fixture("images/sign_korean.png"))
        .await;
    let r = app
        .read(json!({"file_id": id, "ocr_lang": "ko", "include_boxes": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_engine"], "tesseract");
    let text = r.json["text"].as_str().unwrap();
    for line in [
        "출구 안내",
        "Exit information",
        "Subway Line 2 City Hall Station",
        "Выход к станции метро",
        "出口在左边",
        "Restrooms on the second floor",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    assert!(!text.contains("HAA") && !text.contains("CTAH"), "{text}");
    // In order, top to bottom.
    assert!(
        text.find("Выход").unwrap() < text.find("出口").unwrap(),
        "{text}"
    );
    assert!(
        text.find("Station").unwrap() < text.find("Выход").unwrap(),
        "{text}"
    );
    let boxes = r.json["boxes"].as_array().unwrap();
    let engine_of = |t: &str| {
        boxes
            .iter()
            .find(|b| b["text"] == t)
            .map(|b| b["engine"].clone())
            .unwrap_or_else(|| panic!("{t:?} in {boxes:?}"))
    };
    assert_eq!(engine_of("Выход к станции метро"), "tesseract:rus+eng");
    assert_eq!(engine_of("出口在左边"), "ppocr");
    assert!(engine_of("Exit information").is_null());
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "good", "{}", r.json);
    // Tesseract asked for by name reads alone, as it reads.
    let r = app
        .read(json!({"file_id": id, "ocr": "tesseract", "ocr_lang": "ko"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        !r.json["text"].as_str().unwrap().contains("出口在左边"),
        "{}",
        r.json
    );
}

#[tokio::test]
async fn languages_beyond_ppocr_are_read_by_tesseract() {
    let app = TestApp::new().await;
    let korean = std::fs::read(corpus_dir().join("image/english_and_korean.png")).unwrap();
    let id = app.upload_id("korean.png", &korean).await;
    let r = app
        .read(json!({"file_id": id, "ocr_lang": "ko", "include_boxes": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_engine"], "tesseract");
    let text = r.json["text"].as_str().unwrap();
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(squeezed.contains("안녕하세요"), "{text}");
    // English rides along with Korean.
    assert!(text.contains("RULES AND INSTRUCTIONS"), "{text}");
    let b = &r.json["boxes"][0];
    assert!(
        b["box"].as_array().unwrap().len() == 4 && b["confidence"].as_f64().unwrap() > 0.5,
        "{b}"
    );
    // Without the hint the image goes to PP-OCR, which has no Hangul.
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.json["ocr_engine"], "ppocr");
    // PP-OCR asked for by name cannot read Korean; an unknown language says what is there.
    assert_error(
        &app.read(json!({"file_id": id, "ocr": "ppocr", "ocr_lang": "ko"}))
            .await,
        400,
        "unsupported_option",
    );
    let r = app.read(json!({"file_id": id, "ocr_lang": "xx"})).await;
    assert_error(&r, 400, "unsupported_option");
    assert!(
        r.json["error"]["hint"].as_str().unwrap().contains("kor"),
        "{}",
        r.json
    );
    // Tesseract by name reads Latin text too.
    let r = app
        .upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            json!({"ocr": "tesseract"}),
        )
        .await;
    assert_eq!(r.json["ocr_engine"], "tesseract", "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().contains("Hello OCR world"),
        "{}",
        r.json
    );
}

/// European languages in Latin script are read by the built-in engine, accents and all
/// (make native installs no Tesseract data for them).
#[tokio::test]
async fn latin_languages_are_read_by_ppocr_with_their_accents() {
    let app = TestApp::new().await;
    let euro = std::fs::read(corpus_dir().join("image/eurotext.tif")).unwrap();
    let id = app.upload_id("eurotext.tif", &euro).await;
    for lang in ["de", "fr", "es,pt", "it"] {
        let r = app.read(json!({"file_id": id, "ocr_lang": lang})).await;
        assert_eq!(r.status, 200, "{lang}: {}", r.json);
        assert_eq!(r.json["ocr_engine"], "ppocr", "{lang}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        for words in [
            "über den faulen",
            "«rapide»",
            "marrón rápido",
            "cão preguiçoso",
        ] {
            assert!(text.contains(words), "{lang}: no {words:?} in {text}");
        }
    }
    // The engine's name before PP-OCRv6 recognition is still accepted.
    let r = app.read(json!({"file_id": id, "ocr": "ppocr-v4"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_engine"], "ppocr", "{}", r.json);
    // Romanian's ș and ț are not in PP-OCR's dictionary: Tesseract is asked (as `ron`), and
    // without its Romanian data the read says which package to install.
    let r = app.read(json!({"file_id": id, "ocr_lang": "ro"})).await;
    if !r.json["error"].is_null() {
        assert_error(&r, 400, "unsupported_option");
        assert!(
            r.json["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("tesseract-ocr-ron"),
            "{}",
            r.json
        );
    } else {
        assert_eq!(r.json["ocr_engine"], "tesseract", "{}", r.json);
    }
    // PP-OCR asked for by name says which languages it reads.
    let r = app
        .read(json!({"file_id": id, "ocr": "ppocr", "ocr_lang": "ro"}))
        .await;
    assert_error(&r, 400, "unsupported_option");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("de, fr"),
        "{}",
        r.json
    );
}

#[tokio::test]
async fn scanned_pdf_pages_by_tesseract_are_remembered_apart() {
    let app = TestApp::new().await;
    let scan = std::fs::read(corpus_dir().join("pdf/testOCR.pdf")).unwrap();
    let id = app.upload_id("scan.pdf", &scan).await;
    let r = app.read(json!({"file_id": id, "ocr": "tesseract"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_engine"], "tesseract");
    assert_eq!(r.json["ocr_pages"], 1);
    assert_eq!(r.json["cached"], false);
    // Another engine's result is not reused: PP-OCR runs for itself…
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.json["ocr_engine"], "ppocr", "{}", r.json);
    assert_eq!(r.json["cached"], false, "{}", r.json);
    // …and each engine's second read comes from memory.
    let r = app.read(json!({"file_id": id, "ocr": "tesseract"})).await;
    assert_eq!(r.json["cached"], true, "{}", r.json);
}

#[tokio::test]
async fn a_deadline_stops_ocr_inside_a_page() {
    // A dense page (40 lines) takes seconds to recognise; the deadline is checked between
    // model runs, so the read stops soon after it instead of finishing the page.
    let app = TestApp::new().await;
    // How long a page like it takes here, read whole (another page: OCR results are
    // remembered per document); the deadline is half of that, wherever the tests run (a
    // fixed 800 ms was passed by a fast machine's whole read).
    let other = render_png("thirty_pages.pdf", 1, 300.0);
    let other = app.upload_id("dense2.png", &other).await;
    let r = app.read(json!({"file_id": other})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let whole = r.json["elapsed_ms"].as_u64().unwrap();
    let png = render_png("thirty_pages.pdf", 0, 300.0);
    let id = app.upload_id("dense.png", &png).await;
    let r = app
        .read(json!({"file_id": id, "deadline_ms": (whole / 2).max(100)}))
        .await;
    assert_error(&r, 504, "timeout");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("while a page was being recognised"),
        "{}",
        r.json
    );
    // Without a deadline the same page reads whole.
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().lines().count() >= 30,
        "{}",
        r.json
    );
}

/// Each "Page 1 line …" of a native read of thirty_pages.pdf must be a line of the OCR
/// read, exactly, but for at most `slack` of the 40.
fn assert_lines_read_back(native: &serde_json::Value, ocr: &serde_json::Value, slack: usize) {
    let read: std::collections::HashSet<&str> = ocr["text"]
        .as_str()
        .unwrap()
        .lines()
        .map(str::trim)
        .collect();
    let lines: Vec<&str> = native["text"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("Page 1 line"))
        .collect();
    assert_eq!(lines.len(), 40);
    let missing: Vec<&&str> = lines.iter().filter(|l| !read.contains(l.trim())).collect();
    assert!(
        missing.len() <= slack,
        "lines not read back exactly: {missing:#?}"
    );
}

#[tokio::test]
async fn every_line_of_a_dense_page_comes_back() {
    // 40 long lines rendered at 300 dpi and OCR'd (`ocr: force`) must give back each line
    // of the page's own text layer. The angle classifier, shown a whole long line squeezed
    // to 192 px, used to call some lines upside down, and those lines were lost.
    let app = TestApp::new().await;
    let id = app
        .upload_id("dense.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    let native = app
        .read(json!({"file_id": id, "pages": "1", "max_chars": 20000}))
        .await;
    let ocr = app
        .read(json!({"file_id": id, "pages": "1", "max_chars": 20000, "ocr": "force"}))
        .await;
    assert_eq!(ocr.json["ocr_pages"], 1, "{}", ocr.json);
    assert_lines_read_back(&native.json, &ocr.json, 1);
}

#[tokio::test]
async fn lines_of_a_skewed_scan_come_back_whole_and_in_order() {
    // 4° is past the whole-page deskew threshold: the lines are cut out along their own
    // direction, and that reading, sure enough, is kept without levelling the page and
    // reading it again. It must hold every line, in order.
    let (native, r) = read_turned_page(4.0).await;
    assert_lines_read_back(&native, &r, 2);
    let text = r["text"].as_str().unwrap();
    let at: Vec<usize> = (1..=40)
        .filter_map(|n| text.find(&format!("Page 1 line {n}:")))
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "lines out of order: {text}"
    );
}

#[tokio::test]
async fn a_page_turned_ten_degrees_reads_in_sentence_order() {
    // Tika's testRotated+10.png: paragraphs whose short last lines sit left, on a page
    // turned 10°. Grouped into rows by their axis-aligned boxes, a short line joined the
    // row of a long line two lines up ("room such just easy. hearts sister …"); rows are
    // now grouped across the lines' own direction.
    let app = TestApp::new().await;
    let bytes = std::fs::read(corpus_dir().join("image/testRotated+10.png")).unwrap();
    let r = app
        .upload_and_read("testRotated+10.png", &bytes, json!({"max_chars": 20000}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap().replace('\n', " ");
    for sentence in [
        "Its had resolving otherwise she contented therefore.",
        "Say most yet head room such just easy.",
        "Solicitude uncommonly use her motionless not collecting age.",
    ] {
        assert!(text.contains(sentence), "{sentence:?} not in {text}");
    }
}

/// `png` turned by `degrees` (positive: clockwise), bilinear, on a white canvas of the
/// same size: what a sheet fed into a scanner slightly askew looks like.
fn slanted(png: &[u8], degrees: f32) -> Vec<u8> {
    let img = image::load_from_memory(png).unwrap().to_rgb8();
    let (w, h) = img.dimensions();
    let (s, c) = degrees.to_radians().sin_cos();
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let out = image::RgbImage::from_fn(w, h, |x, y| {
        let (dx, dy) = (x as f32 - cx, y as f32 - cy);
        let (sx, sy) = (cx + c * dx + s * dy, cy - s * dx + c * dy);
        if sx < 0.0 || sy < 0.0 || sx >= (w - 1) as f32 || sy >= (h - 1) as f32 {
            return image::Rgb([255, 255, 255]);
        }
        let (x0, y0) = (sx as u32, sy as u32);
        let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
        let px = |x: u32, y: u32| img.get_pixel(x, y)[0] as f32;
        let v = px(x0, y0) * (1.0 - fx) * (1.0 - fy)
            + px(x0 + 1, y0) * fx * (1.0 - fy)
            + px(x0, y0 + 1) * (1.0 - fx) * fy
            + px(x0 + 1, y0 + 1) * fx * fy;
        let v = v.round() as u8;
        image::Rgb([v, v, v])
    });
    let mut buf = std::io::Cursor::new(Vec::new());
    out.write_to(&mut buf, image::ImageFormat::Png).unwrap();
    buf.into_inner()
}

#[tokio::test]
async fn lines_of_a_slightly_slanted_scan_are_cut_out_level() {
    // 1° is below the whole-page deskew threshold, but over a 1,500 px line it is 26 px:
    // an axis-aligned box would take in parts of the lines above and below.
    let (native, r) = read_turned_page(1.0).await;
    assert_lines_read_back(&native, &r, 2);
}

/// Page 1 of thirty_pages.pdf read from its text layer, and OCR'd from a 200 dpi rendering
/// turned by `degrees`: (native envelope, OCR envelope).
async fn read_turned_page(degrees: f32) -> (serde_json::Value, serde_json::Value) {
    let app = TestApp::new().await;
    let native = app
        .upload_and_read(
            "dense.pdf",
            &fixture("pdf/thirty_pages.pdf"),
            json!({"pages": "1", "max_chars": 20000}),
        )
        .await;
    let png = slanted(&render_png("thirty_pages.pdf", 0, 200.0), degrees);
    let r = app
        .upload_and_read("turned.png", &png, json!({"max_chars": 20000}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    (native.json, r.json)
}

/// `good` needs every OCR'd line at 0.8 or more: Korean lines read by the built-in
/// (Chinese and English) model come out as Chinese-looking nonsense at 0.54–0.81 per line
/// while the mean is 0.93; before, that was `good`.
#[tokio::test]
async fn good_means_every_line_is_sure() {
    let app = TestApp::new().await;
    let png = std::fs::read(corpus_dir().join("image/english_and_korean.png")).unwrap();
    let r = app
        .upload_and_read(
            "english_and_korean.png",
            &png,
            json!({"include_boxes": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let q = &r.json["ocr_quality"];
    assert_eq!(q["quality_flag"], "degraded", "{q}");
    let unsure = r.json["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["confidence"].as_f64().unwrap() < 0.8)
        .count() as u64;
    assert!(unsure > 0);
    assert_eq!(q["unsure_lines"], unsure, "{q}");
    // A clean English page stays `good`, with no unsure line.
    let r = app
        .upload_and_read("hello.png", &fixture("images/hello.png"), json!({}))
        .await;
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "good", "{}", r.json);
    assert!(r.json["ocr_quality"].get("unsure_lines").is_none());
}

/// Edit distance between two strings, by characters.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// fixtures/images/script_*.png (fixtures/make_script_fixtures.py): English lines mixed
/// with one other script each, every line's text known.
fn script_cases() -> serde_json::Map<String, serde_json::Value> {
    let cases: serde_json::Value =
        serde_json::from_slice(&fixture("images/script_cases.json")).unwrap();
    cases.as_object().unwrap().clone()
}

/// Lines in a script the built-in engine has no letters for are found on their own (no
/// `ocr_lang`) and read by Tesseract in that script, with English alongside; every line
/// of every page comes back right (before: Korean and Thai came back as Chinese-looking
/// nonsense, Russian as `Ao6pbIé AeHb` with the page `good`, and Hindi lines were lost).
#[tokio::test]
async fn lines_in_other_scripts_are_read_in_their_script() {
    let installed = docreader::ocr::tesseract::installed();
    for lang in ["kor", "jpn", "rus", "ara", "tha", "hin"] {
        assert!(
            installed.iter().any(|l| l == lang),
            "Tesseract's {lang} is not installed: `make native` installs it"
        );
    }
    let app = TestApp::new().await;
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for (file, case) in script_cases() {
        let script = case["script"].as_str().unwrap();
        if matches!(script, "Greek" | "Hebrew") {
            continue; // the next test's
        }
        let r = app
            .upload_and_read(
                &file,
                &fixture(&format!("images/{file}")),
                json!({"include_boxes": true}),
            )
            .await;
        assert_eq!(r.status, 200, "{file}: {}", r.json);
        let got: Vec<String> = r.json["text"]
            .as_str()
            .unwrap()
            .lines()
            .map(squeeze)
            .collect();
        let want: Vec<String> = case["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| squeeze(l["text"].as_str().unwrap()))
            .collect();
        assert_eq!(got.len(), want.len(), "{file}: {got:#?}");
        for (g, w) in got.iter().zip(&want) {
            // One character in ten at most (PP-OCR reads 丸の内 as 丸O内 at 0.93).
            assert!(
                edits(g, w) * 10 <= w.chars().count(),
                "{file}: {g:?} for {w:?}"
            );
        }
        let q = &r.json["ocr_quality"];
        assert_eq!(q["quality_flag"], "good", "{file}: {q}");
        let routed: Vec<&serde_json::Value> = r.json["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b.get("engine").is_some())
            .collect();
        assert!(routed.len() >= 2, "{file}: {}", r.json["boxes"]);
        assert_eq!(q["other_script_lines"], routed.len() as u64, "{file}: {q}");
        for b in routed {
            assert_eq!(b["script"], script, "{file}: {b}");
            assert!(
                b["engine"].as_str().unwrap().starts_with("tesseract:")
                    && b["engine"].as_str().unwrap().ends_with("+eng"),
                "{file}: {b}"
            );
        }
        // The page PP-OCR reads for its English lines: still PP-OCR's read.
        assert_eq!(r.json["ocr_engine"], "ppocr");
    }

    // The corpus's English and Korean page without `ocr_lang`: its Korean comes back.
    let png = std::fs::read(corpus_dir().join("image/english_and_korean.png")).unwrap();
    let r = app
        .upload_and_read(
            "english_and_korean.png",
            &png,
            json!({"include_boxes": true}),
        )
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("안녕하세요") && text.contains("RULES AND INSTRUCTIONS"),
        "{text}"
    );
    assert!(
        !text.contains("号部则"),
        "PP-OCR's reading of the Korean is gone: {text}"
    );
}

/// A line in a script no installed engine reads is left out of the text, never guessed,
/// and the read says so: `quality_flag: unsupported_script` with the script and the box of
/// each such line (before: Greek came back as `Kαλnμépα gαç` and an upside-down reading,
/// `good`; Hebrew as Latin-looking nonsense). The server runs with Tesseract's data as this
/// machine has it less Greek and Hebrew (`DOCREADER_TESSDATA`), so the test holds whether
/// or not they are installed here.
#[test]
fn lines_in_scripts_with_no_engine_are_left_out_and_said() {
    let data = docreader::ocr::tesseract::tessdata().expect("Tesseract's data: `make native`");
    let without = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&data).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("ell.") || name.starts_with("heb.") {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), without.path().join(&name)).unwrap();
    }
    let images = repo().join("fixtures/images");
    let srv = Server::start(
        &["--allowed-roots", images.to_str().unwrap()],
        &[("DOCREADER_TESSDATA", without.path().to_str().unwrap())],
    );
    let mut checked = 0;
    for (file, case) in script_cases() {
        let script = case["script"].as_str().unwrap();
        if !matches!(script, "Greek" | "Hebrew") {
            continue;
        }
        let body = json!({"path": images.join(&file), "include_boxes": true}).to_string();
        let (status, env) = crate::server::http(
            &srv.addr,
            "POST",
            "/read",
            "application/json",
            body.as_bytes(),
        );
        assert_eq!(status, 200, "{file}: {env}");
        let english: Vec<&str> = case["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["script"] == "Latin")
            .map(|l| l["text"].as_str().unwrap())
            .collect();
        let got: Vec<&str> = env["text"].as_str().unwrap().lines().collect();
        assert_eq!(got, english, "{file}");
        let q = &env["ocr_quality"];
        assert_eq!(q["quality_flag"], "unsupported_script", "{file}: {q}");
        let unread = q["unsupported_script"].as_array().unwrap();
        assert_eq!(unread.len(), 3, "{file}: {q}");
        for u in unread {
            assert_eq!(u["script"], script, "{file}: {u}");
            assert_eq!(u["box"].as_array().unwrap().len(), 4);
        }
        // With `include_boxes` the left-out lines are there, with no text.
        let boxes = env["boxes"].as_array().unwrap();
        let empty: Vec<_> = boxes.iter().filter(|b| b["text"] == "").collect();
        assert_eq!(empty.len(), 3, "{file}");
        assert!(empty
            .iter()
            .all(|b| b["script"] == script && b.get("engine").is_none()));
        checked += 1;
    }
    assert_eq!(checked, 2, "the Greek and the Hebrew image");
}

/// Issue #43 item 7: images are read as a viewer shows them. Text drawn only in the alpha
/// channel (black everywhere, the glyphs opaque, the page clear), a 16-bit RGBA image,
/// grey with alpha, and a palette whose background entry is transparent: each composited
/// onto white before OCR (the alpha-only one read as an empty black page before). A CMYK
/// JPEG is read as its colours show.
#[tokio::test]
async fn see_through_images_are_read_over_white() {
    use image::{ImageEncoder, Rgba};
    let app = TestApp::new().await;
    let hello = image::load_from_memory(&fixture("images/hello.png"))
        .unwrap()
        .to_luma8();
    let (w, h) = hello.dimensions();
    let ink = |x: u32, y: u32| 255 - hello.get_pixel(x, y)[0];
    let png = |bytes: &[u8], color: image::ExtendedColorType| {
        let mut out = Vec::new();
        image::codecs::png::PngEncoder::new(&mut out)
            .write_image(bytes, w, h, color)
            .unwrap();
        out
    };
    // Black everywhere; the glyphs opaque.
    let alpha_only = image::RgbaImage::from_fn(w, h, |x, y| Rgba([0, 0, 0, ink(x, y)]));
    let rgba16: Vec<u8> = alpha_only
        .pixels()
        .flat_map(|p| {
            let a = p[3] as u16 * 257;
            [0u16, 0, 0, a].into_iter().flat_map(|v| v.to_be_bytes())
        })
        .collect();
    // Grey with alpha: dark grey glyphs, the page clear.
    let la: Vec<u8> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .flat_map(|(x, y)| [40u8, ink(x, y)])
        .collect();
    // A palette PNG: entry 0 black and see-through, entry 1 black and opaque.
    let palette = {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Indexed);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_palette(vec![0, 0, 0, 0, 0, 0]);
        enc.set_trns(vec![0u8, 255]);
        let mut wr = enc.write_header().unwrap();
        let idx: Vec<u8> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| u8::from(ink(x, y) > 127))
            .collect();
        wr.write_image_data(&idx).unwrap();
        wr.finish().unwrap();
        out
    };
    for (name, bytes) in [
        (
            "alpha_only.png",
            png(alpha_only.as_raw(), image::ExtendedColorType::Rgba8),
        ),
        ("rgba16.png", png(&rgba16, image::ExtendedColorType::Rgba16)),
        ("grey_alpha.png", png(&la, image::ExtendedColorType::La8)),
        ("palette.png", palette),
        // A CMYK JPEG (Adobe's inverted CMYK, as Pillow and Photoshop write it).
        ("hello_cmyk.jpg", fixture("images/hello_cmyk.jpg")),
    ] {
        let r = app.upload_and_read(name, &bytes, json!({})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        assert!(text.contains("Hello OCR world"), "{name}: {text:?}");
    }
}

/// The layout of OCR'd pages (issue #44 item 4): a scanned report's title over two lines is
/// one heading, its numbered section heading another, its running header and page number
/// are furniture — left out of Markdown (kept on request and in plain text), header and
/// footer blocks in `json` — and the outline holds the two headings. The roles come back
/// with each line's box and live in the document memory with the lines: a second read
/// recognises nothing and has them all. One page of a single title-like line, or a title
/// at an invoice's top, loses nothing.
#[tokio::test]
async fn scanned_pages_get_headings_and_furniture_from_their_layout() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("layout_scan.pdf", &fixture("pdf/layout_scan.pdf"))
        .await;
    let read = |opts: serde_json::Value| {
        let mut body = json!({ "file_id": id });
        body.as_object_mut()
            .unwrap()
            .extend(opts.as_object().unwrap().clone());
        app.read(body)
    };
    let md = read(json!({"output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    assert_eq!(md.json["ocr_pages"], 2, "{}", md.json);
    let text = md.json["text"].as_str().unwrap();
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# Water Quality in the Northern Basin",
            "## 2. How the water was sampled"
        ],
        "{text}"
    );
    assert!(
        text.contains("The northern basin feeds three towns"),
        "{text}"
    );
    for furniture in ["Basin Water Report 2024", "Page 1 of 2", "Page 2 of 2"] {
        assert!(!text.contains(furniture), "{furniture:?} in {text}");
    }
    assert!(
        md.json["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("left out of the Markdown of 2 pages")),
        "{}",
        md.json["warnings"]
    );

    // Read again: from the document memory, with the roles.
    let kept = read(json!({"output": "markdown", "furniture": "keep"})).await;
    assert_eq!(kept.status, 200, "{}", kept.json);
    assert_eq!(kept.json["ocr_pages_from_memory"], 2, "{}", kept.json);
    let text = kept.json["text"].as_str().unwrap();
    for furniture in [
        "Basin Water Report 2024 · page 1",
        "Page 1 of 2",
        "Page 2 of 2",
    ] {
        assert!(text.contains(furniture), "{furniture:?} not in {text}");
    }
    assert!(
        text.contains("# Water Quality in the Northern Basin\n"),
        "{text}"
    );

    // A plain read runs no layout model; it takes the lines the structured reads left in
    // the memory, roles and all.
    let plain = read(json!({"include_boxes": true})).await;
    assert_eq!(plain.json["ocr_pages_from_memory"], 2, "{}", plain.json);
    let text = plain.json["text"].as_str().unwrap();
    assert!(
        text.contains("Page 2 of 2") && text.contains("Water Quality in the\nNorthern Basin"),
        "plain text keeps every line as read: {text}"
    );
    let roles: Vec<(String, String)> = plain.json["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["lines"].as_array().unwrap().iter())
        .filter_map(|l| {
            Some((
                l["role"].as_str()?.to_string(),
                l["text"].as_str().unwrap().to_string(),
            ))
        })
        .collect();
    for (role, line) in [
        ("title", "Northern Basin"),
        ("header", "Basin Water Report 2024 · page 2"),
        ("footer", "Page 1 of 2"),
    ] {
        assert!(
            roles.iter().any(|(r, t)| r == role && t.contains(line)),
            "no {role} {line:?} in {roles:?}"
        );
    }

    let doc = read(json!({"output": "json"})).await;
    assert_eq!(doc.status, 200, "{}", doc.json);
    let first: Vec<(String, String)> = doc.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] != "line")
        .map(|b| {
            (
                b["kind"].as_str().unwrap().to_string(),
                b["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            ("header".into(), "Basin Water Report 2024 · page 1".into()),
            (
                "heading".into(),
                "Water Quality in the Northern Basin".into()
            ),
            ("footer".into(), "Page 1 of 2".into()),
        ],
        "{}",
        doc.json["document"]["units"][0]
    );
    let outline: Vec<(u64, &str, u64)> = doc.json["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["level"].as_u64().unwrap(),
                e["title"].as_str().unwrap(),
                e["unit"]["number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outline,
        [
            (1, "Water Quality in the Northern Basin", 1),
            (2, "2. How the water was sampled", 2)
        ]
    );

    // Images: a title at an invoice's top stays (no number: not a running header), and a
    // line alone on its image is no heading.
    let invoice = std::fs::read(corpus_dir().join("image/invoice_image.png")).unwrap();
    let r = app
        .upload_and_read("invoice.png", &invoice, json!({"output": "markdown"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().contains("INVOICE"),
        "{}",
        r.json
    );
    let one = std::fs::read(corpus_dir().join("image/testOCR.png")).unwrap();
    let r = app
        .upload_and_read("one.png", &one, json!({"output": "markdown"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"].as_str().unwrap().trim(),
        "This file contains some words.",
        "{}",
        r.json
    );
}

/// Without the layout model installed (#44 item 4), a structured read of a scan still gives
/// all its text, and says that its headings and furniture were not looked for; a plain
/// read says nothing. Run through the real binary with a native dir that holds every part
/// but the model.
#[test]
fn a_structured_read_without_the_layout_model_says_so() {
    let real = docreader::native::dirs()
        .into_iter()
        .find(|d| d.join("layout_cdla.onnx").is_file())
        .expect("the layout model is installed (`make native`)");
    let home = tempfile::TempDir::new().unwrap();
    let native = home.path().join("native");
    std::fs::create_dir(&native).unwrap();
    for entry in std::fs::read_dir(&real).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "layout_cdla.onnx" {
            std::os::unix::fs::symlink(entry.path(), native.join(entry.file_name())).unwrap();
        }
    }
    let read = |args: &[&str]| -> serde_json::Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_docreader"))
            .args(["read", "--json"])
            .args(args)
            .arg(repo().join("fixtures/pdf/layout_scan.pdf"))
            .env("DOCREADER_NATIVE_DIR", &native)
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .output()
            .expect("run docreader read");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let md = read(&["--output", "markdown", "--furniture", "keep"]);
    let warnings = md["warnings"].to_string();
    assert!(
        warnings.contains("layout_cdla.onnx) is not installed"),
        "{warnings}"
    );
    let text = md["text"].as_str().unwrap();
    // The lines are all there (furniture kept), and no heading was made of them.
    assert!(!text.contains("\n#"), "{text}");
    let plain = read(&[]);
    for line in plain["text"].as_str().unwrap().lines() {
        assert!(text.contains(line.trim()), "{line:?} missing from {text}");
    }
    assert!(
        !plain["warnings"].to_string().contains("layout"),
        "{}",
        plain["warnings"]
    );
}
