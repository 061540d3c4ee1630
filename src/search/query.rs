//! Querying the index: `SearchRequest`, the ranked `Hit`s with their best line and
//! coverage.

use super::*;

/// Body of `POST /search`.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Words to find (any of them; documents with more, and rarer, words rank first).
    /// Chinese, Japanese and Korean match from two characters.
    #[schema(min_length = 1, max_length = 1000)]
    pub query: String,
    /// Only these files (default: all the tenant's files).
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub file_ids: Option<Vec<String>>,
    /// At most this many hits (default 10, at most 100).
    #[serde(default, deserialize_with = "crate::options::whole_number")]
    #[schema(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// One place a query matched.
#[derive(Debug, Serialize, ToSchema)]
pub struct Hit {
    pub file_id: String,
    /// Every upload of the same bytes that holds this hit (`file_id` first): identical
    /// files uploaded several times are one hit.
    pub file_ids: Vec<String>,
    /// The file's name.
    pub name: String,
    /// The page, slide, sheet or chapter of the hit, when the format has them.
    #[serde(flatten)]
    pub place: crate::model::Place,
    /// The 1-based line of the best match, within the page/slide/sheet/chapter (or the
    /// document's text).
    pub line: u64,
    /// That line (at most 240 characters around the match).
    pub snippet: String,
    /// BM25 relevance: higher is better.
    pub score: f64,
    /// How much of the file the index holds: a search finds only what was read.
    pub coverage: HitCoverage,
}

/// How much of a hit's file is in the index.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct HitCoverage {
    /// Units (pages, slides, sheets, chapters; 1 for a text without them) of the file
    /// whose text is indexed.
    pub indexed_units: u64,
    /// The units the file has, as its reads said (`null` when none said).
    pub total_units: Option<u64>,
    /// Whether all of the file's text is indexed: one read returned it whole, or it was
    /// indexed whole (`POST /files/{id}/index`, MCP `index_document`, a search naming it in
    /// `file_ids`). When `false`, words in the parts not read are not found: index the file
    /// whole to search all of it.
    pub whole: bool,
}

/// The answer of `POST /search`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResults {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    /// Best first.
    pub hits: Vec<Hit>,
}

/// Search the tenant's indexed documents.
pub async fn search(db: &Db, tenant: &str, req: &SearchRequest) -> Result<Vec<Hit>, ApiError> {
    let limit = req.limit.unwrap_or(10);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::invalid_option(format!(
            "limit must be between 1 and 100, got {limit}"
        )));
    }
    if req.query.is_empty() {
        return Err(ApiError::invalid_option("query is empty")
            .with_hint("Give words or characters, e.g. {\"query\": \"invoice total\"}."));
    }
    if req.query.chars().count() > 1000 {
        return Err(ApiError::invalid_option(
            "query is longer than 1000 characters",
        ));
    }
    // The request's shape first: a query with nothing to find does not excuse it.
    let ids = req.file_ids.clone().unwrap_or_default();
    if ids.len() > 1000 {
        return Err(ApiError::invalid_option(
            "file_ids takes at most 1000 files",
        ));
    }
    // The work one search may cost is bounded: its first MAX_TERMS words, at most
    // CANDIDATES units ranked, each scanned for its snippet over its first SNIPPET_SCAN
    // characters; the scoring of lines runs on the blocking pool, never on a runtime thread
    // (two searches over a tenant's 20 MB once held /healthz for 46 s).
    let query = &req.query;
    // A query of only spaces and punctuation has nothing to find.
    let Some(fts) = match_query(query) else {
        return Ok(Vec::new());
    };
    // Identical bytes uploaded several times are one hit: more units are ranked than
    // asked for, and the copies folded into the first.
    let candidates = (limit * 4).min(CANDIDATES);
    // The file filter is a JSON array bound as one parameter (no SQL built from input).
    let rows: Vec<(String, String, String, String, String, String, f64)> =
        match db {
            Db::Sqlite(p) => sqlx::query_as(
                "SELECT u.file_id, f.name, f.sha256, u.unit, u.unit_key, substr(u.text, 1, ?), -bm25(search_fts) AS score \
         FROM search_fts JOIN search_units u ON u.id = search_fts.rowid \
         JOIN app.files f ON f.id = u.file_id AND f.tenant = u.tenant \
         WHERE search_fts MATCH ? AND u.tenant = ? \
         AND (? = 0 OR u.file_id IN (SELECT value FROM json_each(?))) \
         ORDER BY bm25(search_fts) LIMIT ?",
            )
            .bind(SNIPPET_SCAN as i64)
            .bind(&fts)
            .bind(tenant)
            .bind(ids.len() as i64)
            .bind(serde_json::to_string(&ids).unwrap_or_default())
            .bind(candidates)
            .fetch_all(p)
            .await,
            Db::Postgres(p) => {
                let Some(tsq) = ts_query(query) else {
                    return Ok(Vec::new());
                };
                sqlx::query_as(
                    "SELECT u.file_id, f.name, f.sha256, u.unit, u.unit_key, substr(u.text, 1, $5), \
                 CAST(ts_rank_cd(u.terms, q) AS DOUBLE PRECISION) AS score \
                 FROM search_units u CROSS JOIN CAST($1 AS tsquery) q \
                 JOIN files f ON f.id = u.file_id AND f.tenant = u.tenant \
                 WHERE u.terms @@ q AND u.tenant = $2 \
                 AND (cardinality($3::text[]) = 0 OR u.file_id = ANY($3::text[])) \
                 ORDER BY score DESC, u.id LIMIT $4",
                )
                .bind(tsq)
                .bind(tenant)
                .bind(&ids)
                .bind(candidates)
                .bind(SNIPPET_SCAN as i32)
                .fetch_all(p)
                .await
            }
        }
        .map_err(crate::db::failure)?;
    let words = parse_query(query).words();
    let limit = limit as usize;
    let mut hits = tokio::task::spawn_blocking(move || hits_of(rows, &words, limit))
        .await
        .map_err(ApiError::internal)?;
    add_coverage(db, tenant, &mut hits)
        .await
        .map_err(crate::db::failure)?;
    Ok(hits)
}

/// Each hit's `coverage`: its file's units in the index and what its reads said.
pub(super) async fn add_coverage(
    db: &Db,
    tenant: &str,
    hits: &mut [Hit],
) -> Result<(), sqlx::Error> {
    let mut ids: Vec<&str> = hits.iter().map(|h| h.file_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<(String, i64, Option<i64>, bool)> = match db {
        Db::Sqlite(p) => {
            sqlx::query_as(
                "SELECT u.file_id, SUM(instr(u.unit_key, char(31)) = 0), c.total_units, coalesce(c.whole, 0) \
                 FROM search_units u LEFT JOIN search_coverage c \
                 ON c.tenant = u.tenant AND c.file_id = u.file_id \
                 WHERE u.tenant = ? AND u.file_id IN (SELECT value FROM json_each(?)) \
                 GROUP BY u.file_id",
            )
            .bind(tenant)
            .bind(serde_json::to_string(&ids).unwrap_or_default())
            .fetch_all(p)
            .await?
        }
        Db::Postgres(p) => sqlx::query_as(
            "SELECT u.file_id, COUNT(*) FILTER (WHERE strpos(u.unit_key, chr(31)) = 0), MAX(c.total_units), COALESCE(BOOL_OR(c.whole), FALSE) \
                 FROM search_units u LEFT JOIN search_coverage c \
                 ON c.tenant = u.tenant AND c.file_id = u.file_id \
                 WHERE u.tenant = $1 AND u.file_id = ANY($2::text[]) \
                 GROUP BY u.file_id",
        )
        .bind(tenant)
        .bind(&ids)
        .fetch_all(p)
        .await?,
    };
    for h in hits.iter_mut() {
        if let Some((_, n, total, whole)) = rows.iter().find(|r| r.0 == h.file_id) {
            let indexed = (*n).max(0) as u64;
            let total = total.map(|t| (t.max(0) as u64).max(indexed));
            h.coverage = HitCoverage {
                indexed_units: indexed,
                total_units: total,
                whole: *whole,
            };
        }
    }
    Ok(())
}

/// Words of a query that count (the rest are left out of the search).
pub(super) const MAX_TERMS: usize = 32;
/// Units ranked for one search, before identical bytes are folded.
pub(super) const CANDIDATES: i64 = 400;
/// Characters of a unit scanned for its snippet.
pub(super) const SNIPPET_SCAN: usize = 256 * 1024;

/// The ranked rows as hits: identical bytes folded into their best hit (its `file_ids`
/// naming every upload of them), each with its best line.
pub(super) fn hits_of(
    rows: Vec<(String, String, String, String, String, String, f64)>,
    words: &[String],
    limit: usize,
) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut seen: std::collections::HashMap<(String, String, String), usize> = Default::default();
    for (file_id, name, sha, unit, key, text, score) in rows {
        if let Some(&i) = seen.get(&(sha.clone(), unit.clone(), key.clone())) {
            if !hits[i].file_ids.contains(&file_id) {
                hits[i].file_ids.push(file_id);
            }
            continue;
        }
        if hits.len() == limit {
            continue;
        }
        seen.insert((sha, unit.clone(), key.clone()), hits.len());
        let (line, snippet) = best_line(&text, words);
        // A part of a long unit (`writer::parts`): its place is its unit's, its lines count
        // on from where it starts.
        let (unit_key, first_line) = unit_of_part(&key);
        hits.push(Hit {
            file_ids: vec![file_id.clone()],
            file_id,
            name,
            place: crate::model::Place::of(&crate::model::Unit::stored(&unit, unit_key)),
            line: first_line + line - 1,
            snippet,
            score: (score * 1000.0).round() / 1000.0,
            coverage: HitCoverage::default(),
        });
    }
    hits
}

/// The line holding most of the query's words (1-based), cut to 240 characters around
/// the first one. Lines are compared lowercased character by character, so a character
/// whose lowercase is longer (`İ` → `i̇`) cannot shift the cut off the line.
pub(super) fn best_line(text: &str, words: &[String]) -> (u64, String) {
    let mut best = (0usize, 0usize, "");
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        let n = words.iter().filter(|w| lower.contains(w.as_str())).count();
        if n > best.1 {
            best = (i, n, line);
        }
    }
    if best.1 == 0 {
        best.2 = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    }
    let line = best.2.trim();
    let chars: Vec<char> = line.chars().collect();
    // The lowercase line, each of its characters tagged with the original's index.
    let mut lower = String::with_capacity(line.len());
    let mut origin: Vec<usize> = Vec::with_capacity(line.len());
    for (i, c) in chars.iter().enumerate() {
        for l in c.to_lowercase() {
            lower.push(l);
            origin.extend(std::iter::repeat_n(i, l.len_utf8()));
        }
    }
    let at = words
        .iter()
        .filter_map(|w| lower.find(w.as_str()))
        .min()
        .map(|b| origin.get(b).copied().unwrap_or(0))
        .unwrap_or(0);
    let start = at.saturating_sub(80).min(chars.len());
    let end = (start + 240).min(chars.len());
    (best.0 as u64 + 1, chars[start..end].iter().collect())
}
