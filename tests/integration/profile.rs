//! `profile: true`: tables (CSV/TSV, sheets, ranges) profiled column by column, checked
//! against figures computed here from the files' own rows.

use serde_json::{json, Value};

use crate::common::*;

/// Min, max and mean of the numbers in `values`, and how many are empty.
fn stats(values: &[&str]) -> (f64, f64, f64, u64) {
    let nums: Vec<f64> = values
        .iter()
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let empty = values.iter().filter(|v| v.trim().is_empty()).count() as u64;
    let min = nums.iter().copied().fold(f64::INFINITY, f64::min);
    let max = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (
        min,
        max,
        nums.iter().sum::<f64>() / nums.len() as f64,
        empty,
    )
}

/// A profile's column names, in order.
fn column_names(p: &Value) -> Vec<&str> {
    p["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-6 * b.abs().max(1.0)
}

#[tokio::test]
async fn a_csv_is_profiled_whole_whatever_part_is_shown() {
    let app = TestApp::new().await;
    let bytes = std::fs::read(corpus_dir().join("csv/uspop.csv")).unwrap();
    let id = app.upload_id("uspop.csv", &bytes).await;
    let r = app.read(json!({"file_id": id, "profile": true})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let p = &r.json["profile"];
    // The file's own rows, split here (uspop.csv has no quotes).
    let text = String::from_utf8(bytes).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(p["header"], true);
    assert_eq!(p["rows"], rows.len() as u64);
    assert_eq!(p["column_count"], 5);
    let names = column_names(p);
    assert_eq!(
        names,
        ["City", "State", "Population", "Latitude", "Longitude"]
    );
    let kinds: Vec<&str> = p["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "text", "integer", "decimal", "decimal"]);
    for (i, col) in [(2, "Population"), (3, "Latitude"), (4, "Longitude")] {
        let values: Vec<&str> = rows.iter().map(|r| r[i]).collect();
        let (min, max, mean, empty) = stats(&values);
        let c = &p["columns"][i];
        assert!(
            close(&c["min"], min) && close(&c["max"], max) && close(&c["mean"], mean),
            "{col}: {c}"
        );
        assert_eq!(c["nulls"], empty, "{col}");
    }
    let states: std::collections::HashSet<&str> = rows.iter().map(|r| r[1]).collect();
    assert_eq!(p["columns"][1]["distinct"], states.len() as u64);
    assert_eq!(p["columns"][1]["distinct_exact"], true);
    // The same profile when only five lines are shown, or a query picks lines.
    let part = app
        .read(json!({"file_id": id, "profile": true, "offset": 10, "limit": 5}))
        .await;
    assert_eq!(&part.json["profile"], p);
    assert_eq!(part.json["text"].as_str().unwrap().lines().count(), 5);
    let hits = app
        .read(json!({"file_id": id, "profile": true, "query": "Kenai"}))
        .await;
    assert_eq!(&hits.json["profile"], p);
    // Without the option, no profile.
    let plain = app.read(json!({"file_id": id})).await;
    assert!(plain.json.get("profile").is_none());
}

#[tokio::test]
async fn quoted_fields_and_old_mac_line_ends_are_rows() {
    let app = TestApp::new().await;
    let id = app
        .upload_id(
            "game.csv",
            &std::fs::read(corpus_dir().join("csv/game.csv")).unwrap(),
        )
        .await;
    let p = app.read(json!({"file_id": id, "profile": true})).await.json["profile"].clone();
    // 100,000 lines of `hello,","," ",world,1,"!"`: six fields, the quoted comma is one.
    assert_eq!(
        (p["rows"].as_u64(), p["column_count"].as_u64()),
        (Some(100_000), Some(6)),
        "{p}"
    );
    assert_eq!(p["header"], false);
    assert_eq!(p["columns"][1]["type"], "text");
    assert_eq!(p["columns"][2]["type"], "empty"); // " ": blank
    assert_eq!(p["columns"][4]["type"], "integer");
    let id = app
        .upload_id(
            "mac.csv",
            &std::fs::read(corpus_dir().join("csv/mac_newlines.csv")).unwrap(),
        )
        .await;
    let p = app.read(json!({"file_id": id, "profile": true})).await.json["profile"].clone();
    assert_eq!(
        (p["rows"].as_u64(), p["header"].as_bool()),
        (Some(2), Some(true)),
        "{p}"
    );
    assert_eq!(p["columns"][1]["mean"], 3.5);
}

#[tokio::test]
async fn sheets_and_ranges_are_profiled() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("book.xlsx", &fixture("office/book.xlsx"))
        .await;
    let r = app
        .read(json!({"file_id": id, "profile": true, "sheet": "Data", "max_chars": 1_000_000}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let sheet = r.json["sheets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Data")
        .unwrap()
        .clone();
    let p = &sheet["profile"];
    // The sheet's rows as the read shows them (tab-separated, header first).
    let text = r.json["text"].as_str().unwrap();
    let body = text.split("--- Sheet: Data").nth(1).unwrap();
    let rows: Vec<Vec<&str>> = body
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows[0], ["Id", "Value", "Label", "Date"]);
    let data = &rows[1..];
    assert_eq!(
        (p["header"].as_bool(), p["rows"].as_u64()),
        (Some(true), Some(data.len() as u64)),
        "{p}"
    );
    let values: Vec<&str> = data.iter().map(|r| r[1]).collect();
    let (min, max, mean, _) = stats(&values);
    let c = &p["columns"][1];
    assert_eq!(c["name"], "Value");
    assert!(
        close(&c["min"], min) && close(&c["max"], max) && close(&c["mean"], mean),
        "{c}"
    );
    let dates: Vec<&str> = data
        .iter()
        .filter_map(|r| r.get(3).copied())
        .filter(|d| !d.is_empty())
        .collect();
    assert_eq!(p["columns"][3]["type"], "date");
    assert_eq!(p["columns"][3]["earliest"], *dates.iter().min().unwrap());
    assert_eq!(p["columns"][3]["latest"], *dates.iter().max().unwrap());
    // A profile of the whole sheet even when the budget shows only the start of it.
    let cut = app
        .read(json!({"file_id": id, "profile": true, "sheet": "Data", "max_cells": 8}))
        .await;
    assert_eq!(cut.json["truncated"], true);
    assert_eq!(
        &cut.json["sheets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "Data")
            .unwrap()["profile"],
        p
    );
    // A range: its rows only, no header guessed among numbers.
    let range = app
        .read(json!({"file_id": id, "profile": true, "sheet": "Data", "range": "B2:B11"}))
        .await;
    let rp = &range.json["sheets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Data")
        .unwrap()["profile"];
    assert_eq!(
        (rp["rows"].as_u64(), rp["header"].as_bool()),
        (Some(10), Some(false)),
        "{rp}"
    );
    assert_eq!(rp["columns"][0]["name"], "A");
    let (min, max, _, _) = stats(&values[..10]);
    assert!(
        close(&rp["columns"][0]["min"], min) && close(&rp["columns"][0]["max"], max),
        "{rp}"
    );
}

#[tokio::test]
async fn profile_fits_tables_only() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    assert_error(
        &app.read(json!({"file_id": pdf, "profile": true})).await,
        400,
        "unsupported_option",
    );
    let txt = app.upload_id("notes.txt", b"just lines\nof text\n").await;
    assert_error(
        &app.read(json!({"file_id": txt, "profile": true})).await,
        400,
        "unsupported_option",
    );
    let csv = app
        .upload_id(
            "uspop.csv",
            &std::fs::read(corpus_dir().join("csv/uspop.csv")).unwrap(),
        )
        .await;
    let r = app
        .read(json!({"file_id": csv, "profile": true, "byte_offset": 0}))
        .await;
    assert_error(&r, 400, "invalid_option");
}

/// A title row (one filled cell over a wider table) is the profile's `title`, not its
/// header nor a row of data; an empty header cell names its column as a table without a
/// header would (`column 2` in CSV, `B` in a sheet), in CSV and xlsx alike (issue #45
/// item 11).
#[tokio::test]
async fn a_title_row_is_not_the_header_in_csv_and_xlsx() {
    let app = TestApp::new().await;
    let csv = "Quarterly sales 2024,,\nregion,,amount\nNorth,a,10\nSouth,b,12\n";
    let r = app
        .upload_and_read("sales.csv", csv.as_bytes(), json!({"profile": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let p = &r.json["profile"];
    assert_eq!(p["title"], "Quarterly sales 2024", "{p}");
    assert_eq!(
        (p["header"].as_bool(), p["rows"].as_u64()),
        (Some(true), Some(2)),
        "{p}"
    );
    let names = column_names(p);
    assert_eq!(names, ["region", "column 2", "amount"], "{p}");
    assert_eq!(p["columns"][2]["type"], "integer", "{p}");

    // The same table as a workbook's sheet.
    let cell = |r: &str, v: &str| format!(r#"<c r="{r}" t="inlineStr"><is><t>{v}</t></is></c>"#);
    let num = |r: &str, v: u32| format!(r#"<c r="{r}"><v>{v}</v></c>"#);
    let sheet = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">{}</row><row r="2">{}{}</row><row r="3">{}{}{}</row><row r="4">{}{}{}</row></sheetData></worksheet>"#,
        cell("A1", "Quarterly sales 2024"),
        cell("A2", "region"),
        cell("C2", "amount"),
        cell("A3", "North"),
        cell("B3", "a"),
        num("C3", 10),
        cell("A4", "South"),
        cell("B4", "b"),
        num("C4", 12),
    );
    let parts: Vec<(&str, String)> = vec![
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
        ("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string()),
        ("xl/workbook.xml", r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sales" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_string()),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, body) in &parts {
        z.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut z, body.as_bytes()).unwrap();
    }
    let xlsx = z.finish().unwrap().into_inner();
    let r = app
        .upload_and_read("sales.xlsx", &xlsx, json!({"profile": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let p = &r.json["sheets"][0]["profile"];
    assert_eq!(p["title"], "Quarterly sales 2024", "{p}");
    assert_eq!(
        (p["header"].as_bool(), p["rows"].as_u64()),
        (Some(true), Some(2)),
        "{p}"
    );
    let names = column_names(p);
    assert_eq!(names, ["region", "B", "amount"], "{p}");
}
