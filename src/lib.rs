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

    /// The layers of docs/architecture.md's block, top first (names on one line share it).
    fn layers() -> Vec<Vec<String>> {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"),
        )
        .expect("docs/architecture.md");
        let after = doc
            .split("<!-- layers:")
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
        let mut out = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    // `crate::{a, b::c}`: each item's first name (one line's worth).
                    let inner = group.split('}').next().unwrap_or("");
                    for item in inner.split(',') {
                        let name: String = item
                            .trim()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if !name.is_empty() {
                            out.insert(name);
                        }
                    }
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
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
        let layers = layers();
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

    #[test]
    fn the_scan_sees_grouped_and_inline_paths() {
        let code =
            "use crate::{db, search::Pending};\nlet x = crate::jobs::run(); // crate::http\n";
        let got: Vec<String> = uses(code).into_iter().collect();
        assert_eq!(got, ["db", "jobs", "search"]);
    }
}
