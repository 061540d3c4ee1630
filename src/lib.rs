//! docreader: one service that reads any document and hands back its text in one JSON
//! envelope. `app(state)` is the whole HTTP service; `read::ReadService` is the one way a
//! read runs, with or without a server.
//!
//! Layers look only down, in the order docs/architecture.md lists them (`http` at the top,
//! `error` at the bottom); `layering::every_crate_path_looks_down` holds every `crate::`
//! path in `src/` to it.

pub mod callbacks;
pub mod config;
pub mod db;
pub mod deadline;
pub mod detect;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod fetch;
pub mod files;
pub mod findings;
pub mod http;
pub mod jobs;
pub mod metrics;
pub mod model;
pub mod native;
pub mod ocr;
pub mod options;
pub mod read;
pub mod report;
pub mod request_id;
pub mod search;
pub mod store;
pub mod tokens;
pub mod worker;

pub use http::{app, AppState};

#[cfg(test)]
mod layering {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The layers of docs/architecture.md's block after `marker`, top first (names on one
    /// line share it).
    fn layers(marker: &str) -> Vec<Vec<String>> {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"),
        )
        .expect("docs/architecture.md");
        let after = doc
            .split(marker)
            .nth(1)
            .expect("the layers block in docs/architecture.md");
        let block = after
            .split("```text\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .expect("the layers block's lines");
        block
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    }

    /// The top-level modules a file's code names through `crate::` (comments left out).
    fn uses(code: &str) -> BTreeSet<String> {
        names_after(code, |rest| {
            rest.find("crate::").map(|at| at + "crate::".len())
        })
    }

    /// The modules of `extract` a file `up` levels below it names: through
    /// `crate::extract::`, or through exactly `up` `super::`s.
    fn extract_uses(code: &str, up: usize) -> BTreeSet<String> {
        names_after(code, |rest| {
            let mut from = 0;
            loop {
                let a = rest[from..].find("crate::extract::").map(|i| from + i);
                let b = rest[from..].find("super::").map(|i| from + i);
                match (a, b) {
                    (Some(a), b) if b.is_none_or(|b| a < b) => {
                        return Some(a + "crate::extract::".len())
                    }
                    (_, Some(b)) => {
                        let mut end = b;
                        let mut k = 0;
                        while rest[end..].starts_with("super::") {
                            end += "super::".len();
                            k += 1;
                        }
                        if k == up {
                            return Some(end);
                        }
                        from = end;
                    }
                    _ => return None,
                }
            }
        })
    }

    /// The first names after each place `next` finds in each line (comments left out);
    /// `{a, b::c}` groups give each item's first name.
    fn names_after(code: &str, next: impl Fn(&str) -> Option<usize>) -> BTreeSet<String> {
        // Comments out, then one string: a group `cargo fmt` wraps over lines reads whole.
        let code: String = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ");
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let mut out = BTreeSet::new();
        let mut rest = code.as_str();
        while let Some(at) = next(rest) {
            rest = &rest[at..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::{c, d}}`: the first name of each item at the group's own
                // depth (`a`, `b`), nested groups being below those names.
                let (mut depth, mut item_start) = (0usize, 0usize);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            out.insert(ident(&group[item_start..i]));
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.insert(ident(&group[item_start..i]));
                            item_start = i + 1;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            out.insert(ident(rest));
        }
        out.remove("");
        out
    }

    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn every_crate_path_looks_down() {
        let layers = layers("<!-- layers:");
        let rank = |m: &str| layers.iter().position(|l| l.iter().any(|n| n == m));
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut all = Vec::new();
        files(&src, &mut all);
        let mut wrong = Vec::new();
        for path in all {
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let module = rel
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            if module == "main" || module == "lib" {
                continue;
            }
            let Some(own) = rank(&module) else {
                wrong.push(format!(
                    "{rel}: module `{module}` is in no layer of docs/architecture.md"
                ));
                continue;
            };
            let code = std::fs::read_to_string(&path).unwrap();
            for used in uses(&code) {
                if used == module {
                    continue;
                }
                match rank(&used) {
                    Some(r) if r > own => {}
                    Some(_) => wrong.push(format!(
                        "{rel}: `{module}` uses `{used}`, which is not below it"
                    )),
                    None => wrong.push(format!("{rel}: uses `{used}`, in no layer")),
                }
            }
        }
        assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
    }

    /// Inside `extract`, the same rule over its own modules (the second block of
    /// docs/architecture.md): a format's extractor may use what formats share and read
    /// another format inside it (an e-mail's RTF body), never the other way round.
    #[test]
    fn every_extract_path_looks_down() {
        let layers = layers("<!-- extract layers:");
        let rank = |m: &str| layers.iter().position(|l| l.iter().any(|n| n == m));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/extract");
        // `extract`'s modules; other names after `super::` are its own items (`Input`,
        // `Extractor`, `read_blocking`, …).
        let root = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
        let modules: BTreeSet<&str> = root
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub mod "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        let mut all = Vec::new();
        files(&dir, &mut all);
        let mut wrong = Vec::new();
        for path in all {
            let rel = path
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == "mod.rs" {
                continue;
            }
            // The file's module path below `extract`: `pdf/report.rs` is pdf::report,
            // `pdf/mod.rs` is pdf, `chart.rs` is chart.
            let parts: Vec<&str> = rel
                .trim_end_matches(".rs")
                .split('/')
                .filter(|p| *p != "mod")
                .collect();
            let module = parts[0];
            let Some(own) = rank(module) else {
                wrong.push(format!(
                    "extract/{rel}: `{module}` is in no layer of docs/architecture.md's extract block"
                ));
                continue;
            };
            let code = std::fs::read_to_string(&path).unwrap();
            for used in extract_uses(&code, parts.len()) {
                if used == module || !modules.contains(used.as_str()) {
                    continue;
                }
                match rank(&used) {
                    Some(r) if r > own => {}
                    Some(_) => wrong.push(format!(
                        "extract/{rel}: `{module}` uses `{used}`, which is not below it"
                    )),
                    None => wrong.push(format!("extract/{rel}: uses `{used}`, in no layer")),
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "layering inside extract broken:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn the_extract_scan_counts_its_supers() {
        let code = "use super::super::{xml, package::Package};\nuse super::cells::x;\nlet a = crate::extract::html::render();\n";
        let got: Vec<String> = extract_uses(code, 2).into_iter().collect();
        assert_eq!(got, ["html", "package", "xml"]);
        let got: Vec<String> = extract_uses(code, 1).into_iter().collect();
        assert_eq!(got, ["cells", "html"]);
    }

    /// docs/architecture.md has a line for every source file, and names none that is gone
    /// (its table's first column), so the map of the code stays true as files come and go.
    #[test]
    fn every_source_file_has_its_line_in_the_architecture() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
        let src = root.join("src");
        let mut all = Vec::new();
        files(&src, &mut all);
        let mut wrong = Vec::new();
        for path in &all {
            let rel = path.strip_prefix(&src).unwrap().to_string_lossy();
            if !doc.contains(&format!("`{rel}`")) {
                wrong.push(format!("{rel}: no line in docs/architecture.md"));
            }
        }
        for row in doc.lines().filter(|l| l.starts_with("| `")) {
            let first = row.split('|').nth(1).unwrap_or("");
            for named in first.split('`').skip(1).step_by(2) {
                if named.ends_with(".rs") && !src.join(named).is_file() {
                    wrong.push(format!("{named}: in docs/architecture.md, not in src/"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// A group wrapped over lines, and groups inside a group, give the names at the
    /// group's own depth only.
    #[test]
    fn the_scan_reads_wrapped_and_nested_groups() {
        let code =
            "use crate::{\n    db::{self, Db},\n    search, // crate::http\n    jobs::Jobs,\n};\n";
        let got: Vec<String> = uses(code).into_iter().collect();
        assert_eq!(got, ["db", "jobs", "search"]);
        let code = "use super::super::{\n    xml::{attr, walk},\n    package,\n};\n";
        let got: Vec<String> = extract_uses(code, 2).into_iter().collect();
        assert_eq!(got, ["package", "xml"]);
    }

    #[test]
    fn the_scan_sees_grouped_and_inline_paths() {
        let code =
            "use crate::{db, search::Pending};\nlet x = crate::jobs::run(); // crate::http\n";
        let got: Vec<String> = uses(code).into_iter().collect();
        assert_eq!(got, ["db", "jobs", "search"]);
    }
}
