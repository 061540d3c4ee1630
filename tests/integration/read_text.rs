//! The text family through `POST /read`: exact decoding, windows, queries, truncation
//! and the `next` property, and the strict option rule.

use serde_json::{json, Value};

use crate::common::*;

#[tokio::test]
async fn every_encoding_fixture_decodes_exactly() {
    let cases: Vec<Value> = serde_json::from_slice(&fixture("text/cases.json")).unwrap();
    assert!(cases.len() >= 16);
    let app = TestApp::new().await;
    for c in cases {
        let name = c["file"].as_str().unwrap();
        let r = app
            .upload_and_read(name, &fixture(&format!("text/{name}")), json!({}))
            .await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["encoding"], c["encoding"], "{name}");
        assert_eq!(r.json["text"], c["text"], "{name} decoded differently");
        assert_eq!(r.json["format"], "text");
        assert_eq!(r.json["truncated"], false);
        assert!(r.json.get("next").is_none());
    }
}

#[tokio::test]
async fn source_code_is_byte_exact() {
    let app = TestApp::new().await;
    let bytes = fixture("text/tabs_crlf.py");
    let r = app.upload_and_read("tabs_crlf.py", &bytes, json!({})).await;
    assert_eq!(r.json["text"].as_str().unwrap().as_bytes(), &bytes[..]);
    assert_eq!(r.json["total_lines"], 4);
    assert_eq!(r.json["size"], bytes.len());
    // Config files are never parsed or pretty-printed.
    let cfg = b"{\"a\":1,   \"b\" :[1,2]}\n# not json\n";
    let r = app.upload_and_read("settings.json", cfg, json!({})).await;
    assert_eq!(r.json["text"].as_str().unwrap().as_bytes(), cfg);
    assert_eq!(r.json["mime"], "application/json");
}

fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("line {i} of the file\n")).collect()
}

#[tokio::test]
async fn offset_and_limit() {
    let app = TestApp::new().await;
    let id = app.upload_id("log.txt", numbered(97).as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "offset": 10, "limit": 2}))
        .await;
    assert_eq!(r.json["text"], "line 10 of the file\nline 11 of the file\n");
    assert_eq!(r.json["total_lines"], 97);
    let r = app.read(json!({"file_id": id, "offset": 96})).await;
    assert_eq!(r.json["text"], "line 96 of the file\n");
    let r = app.read(json!({"file_id": id, "offset": 120})).await;
    assert_error(&r, 416, "out_of_range");
    assert_eq!(
        r.json["error"]["message"],
        "offset 120 but the file has 97 lines"
    );
    assert_error(
        &app.read(json!({"file_id": id, "offset": 97})).await,
        416,
        "out_of_range",
    );
    assert_error(
        &app.read(json!({"file_id": id, "limit": -1})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "limit": 0})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "offset": "ten"})).await,
        400,
        "invalid_option",
    );
}

#[tokio::test]
async fn empty_file() {
    let app = TestApp::new().await;
    let id = app.upload_id("empty.txt", b"").await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "");
    assert_eq!(r.json["total_lines"], 0);
    assert_eq!(r.json["char_count"], 0);
    let r = app.read(json!({"file_id": id, "offset": 0})).await;
    assert_error(&r, 416, "out_of_range");
    assert_eq!(
        r.json["error"]["message"],
        "offset 0 but the file has 0 lines"
    );
    assert_error(
        &app.read(json!({"file_id": id, "byte_offset": 0})).await,
        416,
        "out_of_range",
    );
}

#[tokio::test]
async fn line_endings_cr_only_and_crlf_count_as_lines() {
    let app = TestApp::new().await;
    let id = app.upload_id("mac.csv", b"a,b\rc,d\re,f\r").await;
    let r = app
        .read(json!({"file_id": id, "offset": 1, "limit": 1}))
        .await;
    assert_eq!(r.json["text"], "c,d\r");
    assert_eq!(r.json["total_lines"], 3);
}

#[tokio::test]
async fn byte_windows() {
    let app = TestApp::new().await;
    let text = "héllo wörld ".repeat(10);
    let id = app.upload_id("u.txt", text.as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "byte_offset": 0, "byte_length": 6}))
        .await;
    assert_eq!(r.json["text"], "héllo");
    // Starting inside "é" moves forward to the next character, with a warning.
    let r = app
        .read(json!({"file_id": id, "byte_offset": 2, "byte_length": 5}))
        .await;
    assert_eq!(r.json["text"], "llo ");
    assert_eq!(r.json["warnings"].as_array().unwrap().len(), 1);
    let size = text.len();
    let r = app.read(json!({"file_id": id, "byte_offset": size})).await;
    assert_error(&r, 416, "out_of_range");
    assert_eq!(
        r.json["error"]["message"],
        format!("byte_offset {size} but the file has {size} bytes")
    );
    let r = app
        .read(json!({"file_id": id, "byte_offset": 0, "offset": 1}))
        .await;
    assert_error(&r, 400, "invalid_option");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("exclude each other"));
}

#[tokio::test]
async fn queries() {
    let app = TestApp::new().await;
    let body = "alpha\nbeta\nGamma ray\ndelta\nepsilon\nzeta\neta\ntheta gamma\n";
    let id = app.upload_id("greek.txt", body.as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "query": "gamma", "context_lines": 1}))
        .await;
    assert_eq!(r.json["matches"], 2);
    assert_eq!(
        r.json["text"],
        "2-beta\n3:Gamma ray\n4-delta\n--\n7-eta\n8:theta gamma\n"
    );
    let r = app.read(json!({"file_id": id, "query": "^[a-z]eta$", "query_mode": "regex", "context_lines": 0})).await;
    assert_eq!(r.json["text"], "2:beta\n--\n6:zeta\n");
    let r = app
        .read(json!({"file_id": id, "query": "^GAMMA", "query_mode": "iregex", "context_lines": 0}))
        .await;
    assert_eq!(r.json["text"], "3:Gamma ray\n");
    let r = app.read(json!({"file_id": id, "query": "omega"})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (r.json["matches"].clone(), r.json["text"].clone()),
        (json!(0), json!(""))
    );
    let r = app
        .read(json!({"file_id": id, "query": "(", "query_mode": "regex"}))
        .await;
    assert_error(&r, 400, "invalid_option");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("regular expression"));
    assert_error(
        &app.read(json!({"file_id": id, "query": "a", "context_lines": 21}))
            .await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "query_mode": "regex"}))
            .await,
        400,
        "invalid_option",
    );
    // A query within a line window reports real line numbers.
    let r = app
        .read(json!({"file_id": id, "query": "eta", "offset": 5, "context_lines": 0}))
        .await;
    assert_eq!(r.json["text"], "6:zeta\n7:eta\n8:theta gamma\n");
}

#[tokio::test]
async fn options_that_do_not_fit_are_refused_with_no_text() {
    let app = TestApp::new().await;
    let id = app.upload_id("a.txt", b"text\n").await;
    for opt in [
        json!({"pages": "1"}),
        json!({"sheet": "Sheet1"}),
        json!({"password": "x"}),
        json!({"page_range": "1-2"}),
    ] {
        let mut body = json!({"file_id": id});
        body.as_object_mut()
            .unwrap()
            .extend(opt.as_object().unwrap().clone());
        let r = app.read(body).await;
        assert_error(&r, 400, "unsupported_option");
        assert!(r.json.get("text").is_none());
        assert!(
            r.json["error"]["hint"].as_str().unwrap().contains("offset"),
            "{}",
            r.json
        );
    }
    let r = app.read(json!({"file_id": id, "colour": "red"})).await;
    assert_error(&r, 400, "invalid_option");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("colour"));
}

#[tokio::test]
async fn truncation_marks_and_counts() {
    let app = TestApp::new().await;
    let body = numbered(50);
    let r = app
        .upload_and_read("n.txt", body.as_bytes(), json!({"max_chars": 100}))
        .await;
    assert_eq!(r.json["truncated"], true);
    assert_eq!(r.json["char_count"], body.chars().count());
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.ends_with(&format!(
            "\n... (truncated, total {} chars)",
            body.chars().count()
        )),
        "{text}"
    );
    assert_eq!(r.json["next"], json!({"offset": 5}));
    // The default budget is 15000.
    let big = numbered(2000);
    let r = app
        .upload_and_read("big.txt", big.as_bytes(), json!({}))
        .await;
    assert_eq!(r.json["truncated"], true);
    assert!(
        strip_truncation(r.json["text"].as_str().unwrap())
            .chars()
            .count()
            <= 15000
    );
}

#[tokio::test]
async fn following_next_reproduces_the_whole_file() {
    let app = TestApp::new().await;
    let long_line = "x".repeat(777);
    let mixed = format!(
        "short\r\n{long_line}\nmid line here\r{}\nend",
        "ü".repeat(300)
    );
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("numbered.txt", numbered(300).into_bytes()),
        ("mixed.txt", mixed.clone().into_bytes()),
        ("gbk.csv", fixture("text/gbk.csv")),
        ("utf16.txt", fixture("text/utf16le_bom.txt")),
        ("utf32.txt", fixture("text/utf32le_bom.txt")),
        ("utf32be.txt", fixture("text/utf32be_nobom.txt")),
        ("sjis.txt", fixture("text/shift_jis.txt")),
    ];
    for (name, bytes) in files {
        let id = app.upload_id(name, &bytes).await;
        let whole = app
            .read(json!({"file_id": id, "max_chars": 10_000_000}))
            .await
            .json["text"]
            .as_str()
            .unwrap()
            .to_string();
        for max_chars in [37, 100, 1000] {
            let (got, reads) = follow(&app, &id, json!({"max_chars": max_chars})).await;
            assert_eq!(got, whole, "{name} with max_chars {max_chars}");
            if whole.chars().count() > max_chars {
                assert!(reads > 1);
            }
            // Byte windows followed with next rebuild it too.
            let (got, _) =
                follow(&app, &id, json!({"max_chars": max_chars, "byte_offset": 0})).await;
            assert_eq!(got, whole, "{name} by bytes with max_chars {max_chars}");
        }
        // A line window with a limit is covered exactly, nothing past it.
        let (got, _) = follow(&app, &id, json!({"max_chars": 50, "offset": 1, "limit": 3})).await;
        let exact = app
            .read(json!({"file_id": id, "offset": 1, "limit": 3, "max_chars": 10_000_000}))
            .await;
        assert_eq!(got, exact.json["text"].as_str().unwrap(), "{name} window");
    }
}

#[tokio::test]
async fn default_byte_window_says_how_to_read_on() {
    let app = TestApp::with(|a| a.limits.default_byte_length = 100).await;
    let body = "0123456789".repeat(25);
    let id = app.upload_id("digits.txt", body.as_bytes()).await;
    let r = app.read(json!({"file_id": id, "byte_offset": 0})).await;
    assert_eq!(r.json["text"].as_str().unwrap().len(), 100);
    assert_eq!(r.json["next"], json!({"byte_offset": 100}));
    let r = app.read(json!({"file_id": id, "byte_offset": 200})).await;
    assert_eq!(r.json["text"].as_str().unwrap().len(), 50);
    assert!(r.json.get("next").is_none());
}

/// Issue #43 item 6: the 7-bit ISO-2022 encodings. ISO-2022-JP passed the UTF-8 check as
/// ASCII and came back as escape sequences; ISO-2022-KR was refused as binary for its
/// SO/SI bytes. chardet's own test files (fixtures/text/chardet/SOURCES.md); byte and
/// line windows followed with `next` rebuild exactly the text of one read.
#[tokio::test]
async fn iso_2022_texts_are_decoded() {
    let app = TestApp::new().await;
    for (name, encoding, want) in [
        (
            "iso-2022-jp.txt",
            "ISO-2022-JP",
            "    コンソール アプリケーション : universalchardet プロジェクトの概要\n",
        ),
        (
            "iso-2022-kr.txt",
            "ISO-2022-KR",
            "역사적 예수 연구자들은 복음서나 사도들의 서신서 속의 교리적 예수가 아닌,",
        ),
    ] {
        let id = app
            .upload_id(name, &fixture(&format!("text/chardet/{name}")))
            .await;
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["encoding"], encoding, "{name}");
        assert_eq!(r.json["encoding_confidence"], "certain", "{name}");
        let whole = r.json["text"].as_str().unwrap().to_string();
        assert!(whole.contains(want), "{name}: {whole}");
        assert!(
            !whole.contains('\u{1b}') && !whole.contains('\u{e}'),
            "{name}"
        );
        // Byte windows, each from where the last one ended: whole lines (a window may
        // start only where the shift state is known), together the text.
        let size = fixture(&format!("text/chardet/{name}")).len() as u64;
        let (got, reads) = read_in_byte_windows(&app, &id, size, 97, name).await;
        assert_eq!(got, whole, "{name}: byte windows");
        assert!(reads >= 1, "{name}");
        // A character budget inside a window resumes after the last whole line.
        let (got, _) = follow(&app, &id, json!({"max_chars": 150})).await;
        assert_eq!(got, whole, "{name}: max_chars");
        let (got, reads) = follow(&app, &id, json!({"byte_offset": 0, "max_chars": 150})).await;
        assert_eq!(got, whole, "{name}: a byte window cut by max_chars");
        assert!(reads >= 2, "{name}");
    }
}

/// A file of `size` bytes read in byte windows of `length`, each from where the last one
/// ended: their texts joined, and how many reads it took. Every read answers 200 and moves
/// on.
async fn read_in_byte_windows(
    app: &TestApp,
    id: &str,
    size: u64,
    length: u64,
    name: &str,
) -> (String, usize) {
    let (mut offset, mut got, mut reads) = (0u64, String::new(), 0);
    while offset < size {
        let r = app
            .read(json!({"file_id": id, "byte_offset": offset, "byte_length": length}))
            .await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        got.push_str(r.json["text"].as_str().unwrap());
        let end = r.json["byte_range"][1].as_u64().unwrap();
        assert!(end > offset, "{name}: no progress at {offset}");
        offset = end;
        reads += 1;
    }
    (got, reads)
}

/// IBM855 (DOS Cyrillic; neither a WHATWG encoding nor a chardetng guess, #43 item 6) is
/// recognised among the Cyrillic single-byte encodings and decoded: chardet's own test file
/// (fixtures/text/chardet/SOURCES.md), and byte windows that rebuild it.
#[tokio::test]
async fn ibm855_text_is_recognised() {
    let app = TestApp::new().await;
    let bytes = fixture("text/chardet/ibm855.txt");
    let id = app.upload_id("ibm855.txt", &bytes).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["encoding"], "IBM855", "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("В гимназии он не был в числе первых учеников"),
        "{text}"
    );
    // Byte windows over the same bytes, each from where the last one ended (positions in
    // the file's own single bytes), together the text; and a character budget followed.
    let (got, _) = read_in_byte_windows(&app, &id, bytes.len() as u64, 97, "ibm855.txt").await;
    assert_eq!(got, text, "byte windows");
    let (got, reads) = follow(&app, &id, json!({"max_chars": 150})).await;
    assert_eq!(got, text, "max_chars");
    assert!(reads >= 2);
}

/// KOI8-U beside KOI8-R (#43 item 6): Ukrainian text in KOI8-U (its і, ї, є and ґ are
/// letters KOI8-R lacks) is KOI8-U, Russian text in KOI8-R stays KOI8-R, each decoded whole.
#[tokio::test]
async fn koi8_u_and_koi8_r_are_told_apart() {
    let app = TestApp::new().await;
    for (name, encoding, text) in [
        (
            "ukrainian.txt",
            encoding_rs::KOI8_U,
            "Київ - столиця України. Їжак їсть яблука, а ґава співає. Європейські інтереси і єдність.\n",
        ),
        (
            "russian.txt",
            encoding_rs::KOI8_R,
            "Москва - столица России. Съешь же ещё этих мягких французских булок, да выпей чаю.\n",
        ),
    ] {
        let whole = text.repeat(20);
        let (bytes, _, bad) = encoding.encode(&whole);
        assert!(!bad);
        let r = app.upload_and_read(name, &bytes, json!({})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["encoding"], encoding.name(), "{name}: {}", r.json);
        assert_eq!(r.json["text"], whole, "{name}");
    }
}

/// Johab (Korean) and EUC-TW (Chinese in CNS 11643): no WHATWG encodings, so neither
/// encoding_rs's nor chardetng's (it read them as windows-1252 and GBK, #43 item 6).
/// chardet's own test files (fixtures/text/chardet/SOURCES.md), the EUC-TW one with a line
/// of plane-2 characters (four bytes each) added; byte windows and character budgets
/// rebuild each text.
#[tokio::test]
async fn johab_and_euc_tw_texts_are_recognised() {
    let app = TestApp::new().await;
    let mut euc_tw = fixture("text/chardet/euc_tw.txt");
    // 乂 and 乜 (plane 2), then 一 written the long way (plane 1 behind 8E A1).
    euc_tw.extend_from_slice(b"\n\x8e\xa2\xa1\xa1\x8e\xa2\xa1\xa2 \x8e\xa1\xc4\xa1\n");
    let cases = [
        (
            "johab.txt",
            fixture("text/chardet/johab.txt"),
            "Johab",
            "메모장에서 이 문서를 잘 보려면 창을 최대화한 후에 자동 줄 바꿈에 체크하십시오.",
        ),
        (
            "euc_tw.txt",
            euc_tw,
            "EUC-TW",
            "維基大典（Wikipedia）者，網路為礎；集天下知、四海言、眾人志，書百科焉。",
        ),
    ];
    for (name, bytes, encoding, phrase) in cases {
        let id = app.upload_id(name, &bytes).await;
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["encoding"], encoding, "{name}: {}", r.json);
        let text = r.json["text"].as_str().unwrap().to_string();
        assert!(text.contains(phrase), "{name}: {text}");
        assert!(!text.contains('\u{FFFD}'), "{name}: {text}");
        if encoding == "EUC-TW" {
            assert!(text.ends_with("\n乂乜 一\n"), "{text:?}");
        }
        let (got, _) = read_in_byte_windows(&app, &id, bytes.len() as u64, 301, name).await;
        assert_eq!(got, text, "{name}: byte windows");
        let (got, reads) = follow(&app, &id, json!({"max_chars": 150})).await;
        assert_eq!(got, text, "{name}: max_chars");
        assert!(reads >= 2);
        // A window asked from inside the first two-byte character (its second byte is an
        // ASCII letter in Johab, a valid first byte in EUC-TW) starts at the next one.
        let k = bytes.iter().position(|b| *b >= 0x80).unwrap();
        let r = app
            .read(json!({"file_id": id, "byte_offset": k + 1, "byte_length": 40}))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["byte_range"][0], k + 2, "{name}: {}", r.json);
        let window = r.json["text"].as_str().unwrap();
        let rest: String = text[k..].chars().skip(1).collect();
        assert!(
            !window.is_empty() && rest.starts_with(window),
            "{name}: {window:?}"
        );
        assert!(
            r.json["warnings"]
                .to_string()
                .contains("inside a character"),
            "{}",
            r.json
        );
    }
}

/// Cyrillic words inside a lot of ASCII markup are Cyrillic: chardet's own Mac Cyrillic RSS
/// feed (its declaration, `MacCyrillic`, is no WHATWG label) was read as windows-1252 — whole
/// words of accented letters, which Latin-script text does not make, now send it to the
/// Cyrillic tie-breaker (#43 item 6).
#[tokio::test]
async fn cyrillic_in_ascii_markup_is_not_latin() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("feed.xml", &fixture("text/chardet/mac_cyrillic_feed.xml"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["encoding"], "x-mac-cyrillic", "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("быстрая, мощная и расширяемая система обработки шаблонов"),
        "{text}"
    );
}

/// An English forum page whose only bytes above 0x7F are two pound signs before amounts
/// (chardet's own test file) was read as windows-1250: `Ł825` (#43). It reads as
/// windows-1252, as a file and as HTML.
#[tokio::test]
async fn pounds_before_amounts_are_not_polish() {
    let app = TestApp::new().await;
    let bytes = fixture("text/chardet/windows_1252_pounds.html");
    for name in ["page.html", "page.txt"] {
        let id = app.upload_id(name, &bytes).await;
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["encoding"], "windows-1252", "{name}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        assert!(
            text.contains("lift £825. not bad for a £2 bet"),
            "{name}: {text}"
        );
    }
}
