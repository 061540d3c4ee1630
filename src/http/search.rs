//! `POST /search` (ranked hits across the tenant's indexed documents) and
//! `POST /files/{id}/index` (read a whole document so all of it is searchable).

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Tenant;
use super::responses::error_responses;
use super::AppState;
use crate::error::ApiError;
use crate::extract::ProgressSink;
use crate::options::ReadRequest;
use crate::search::{SearchRequest, SearchResults};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/search", post(search))
        .route("/files/{id}/index", post(index))
}

error_responses!(
    /// The errors `POST /search` answers with.
    SearchErrors:
    InvalidRequest, InvalidOption, Unauthorized,
    Forbidden => "search is off on this service (DOCREADER_INDEX_READS=off)",
);

/// Search the caller's documents: BM25-ranked hits (file, page/slide/sheet/chapter, line,
/// snippet), best first. What is searched is what reads of the tenant's uploads returned,
/// and whole documents indexed with `POST /files/{id}/index`. Chinese, Japanese and Korean
/// match from two characters. Another tenant's documents are never searched. Files named
/// in `file_ids` (the first 10) that were never read are read whole first.
#[utoipa::path(post, path = "/search", tag = "read", request_body = SearchRequest,
    responses(
        (status = 200, description = "the hits", body = SearchResults),
        SearchErrors),
    security((), ("bearer" = [])))]
pub async fn search(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    body: Result<Json<SearchRequest>, JsonRejection>,
) -> Result<Json<SearchResults>, ApiError> {
    let Json(req) = body.map_err(|e| {
        ApiError::invalid_request(format!("the body is not a valid search: {}", e.body_text()))
            .with_hint("Send {\"query\": \"words to find\"} (and optionally file_ids, limit).")
    })?;
    let hits = run(&st, &tenant, &req).await?;
    Ok(Json(SearchResults { status: "ok", hits }))
}

/// The most never-read files one search reads whole first (the rest are searched as they
/// are): a search must not turn into a thousand reads.
const INDEX_ON_SEARCH: usize = 10;

/// A search, after reading whole the files it names that were never indexed.
pub async fn run(
    st: &AppState,
    tenant: &str,
    req: &SearchRequest,
) -> Result<Vec<crate::search::Hit>, ApiError> {
    search_on(st)?;
    // What reads returned before this search is in the index.
    st.files.indexing.settled().await;
    for id in req.file_ids.iter().flatten().take(INDEX_ON_SEARCH) {
        let known = crate::search::indexed(st.files.indexing.db(), tenant, id)
            .await
            .map_err(crate::db::failure)?;
        if !known {
            // Unknown ids and unreadable files are simply not found by the search.
            if let Err(e) = index_whole(st, tenant, id).await {
                tracing::info!(
                    code = e.code.as_str(),
                    "could not index a file named in a search"
                );
            }
        }
    }
    // And what those reads made (also when one of them failed part way).
    st.files.indexing.settled().await;
    crate::search::search(st.files.indexing.db(), tenant, req).await
}

/// What `POST /files/{id}/index` did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Indexed {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub file_id: String,
    /// Reads it took to cover the document (following `next`).
    pub reads: u64,
    /// Characters of the document now searchable.
    pub chars: u64,
}

/// The most reads indexing one document takes (a workbook read sheet by sheet).
const MAX_INDEX_READS: u64 = 1000;

error_responses!(
    /// The errors `POST /files/{id}/index` answers with.
    IndexErrors:
    Unauthorized,
    Forbidden => "search is off on this service (DOCREADER_INDEX_READS=off)",
    NotFound, TooLarge, BlockedType, BinaryContent, LegacyFormat, UnsupportedFormat, Encrypted,
    Corrupt, NoOcrEngine, ExtractionCrashed, Internal, Unavailable, Timeout,
);

/// Read a whole document (every page, sheet, slide, chapter; scanned pages are OCR'd) so
/// that all of it is searchable. Runs as reads do, on the same executor.
#[utoipa::path(post, path = "/files/{id}/index", tag = "read",
    params(("id" = String, Path, description = "file id")),
    responses(
        (status = 200, description = "indexed", body = Indexed),
        IndexErrors),
    security((), ("bearer" = [])))]
pub async fn index(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Json<Indexed>, ApiError> {
    let (reads, chars) = index_whole(&st, &tenant, &id).await?;
    Ok(Json(Indexed {
        status: "ok",
        file_id: id,
        reads,
        chars,
    }))
}

/// Read a document from its start to its end, following `next`; each read indexes what it
/// returned.
pub async fn index_whole(st: &AppState, tenant: &str, id: &str) -> Result<(u64, u64), ApiError> {
    search_on(st)?;
    let file = st.files.get(tenant, id).await?;
    let base = serde_json::json!({"file_id": id, "max_chars": 50_000_000});
    let mut req: ReadRequest = serde_json::from_value(base.clone()).map_err(ApiError::internal)?;
    if file.format == "excel" {
        req.max_cells = Some(1_000_000);
    }
    let (mut reads, mut chars) = (0, 0);
    // Whole only when every read went into the index (a read from an offset, a cell range
    // or a byte window does not: `search::indexable`) and none left pages out.
    let (mut to_the_end, mut all_indexed) = (false, true);
    loop {
        all_indexed &= crate::search::indexable(&req);
        let mut prepared = st.reader.prepare(tenant, req.clone()).await?;
        prepared.index_on_demand();
        let env = st.reader.run(prepared, ProgressSink::default()).await?;
        reads += 1;
        // (A text that went into the index left `char_count` saying what it held.)
        chars += match env.text.is_empty() {
            true => env.char_count,
            false => env.text.chars().count() as u64,
        };
        // (A read cut by its deadline is `partial`: its `next` reads the rest, indexed too.)
        all_indexed &= env
            .report
            .skipped_pages
            .as_ref()
            .is_none_or(|p| p.is_empty());
        let Some(next) = env.next.filter(|n| !n.is_empty()) else {
            to_the_end = true;
            break;
        };
        if reads >= MAX_INDEX_READS {
            break;
        }
        // The read's options, with the values that read on.
        let mut v = serde_json::to_value(&req).map_err(ApiError::internal)?;
        if let (Some(o), Ok(serde_json::Value::Object(n))) =
            (v.as_object_mut(), serde_json::to_value(&next))
        {
            o.extend(n);
        }
        req = serde_json::from_value(v).map_err(ApiError::internal)?;
    }
    // Searchable when this answers: the reads' indexing (done after each read) is written;
    // and the hits say the file is indexed whole when every `next` was followed into the
    // index (best effort, as indexing is: a failure costs the hits' `whole` only).
    if to_the_end && all_indexed {
        if let Err(e) = st.files.indexing.mark_whole(tenant, id).await {
            tracing::warn!(error = %e, "could not record that a file is indexed whole");
        }
    } else {
        st.files.indexing.settled().await;
    }
    Ok((reads, chars))
}

/// Search and indexing refused where the operator turned the index off.
fn search_on(st: &AppState) -> Result<(), ApiError> {
    let off = st
        .reader
        .storage
        .as_ref()
        .is_some_and(|s| s.index_reads == crate::config::IndexReads::Off);
    if off {
        return Err(ApiError::new(
            crate::error::ErrorCode::Forbidden,
            "search is off on this service (DOCREADER_INDEX_READS=off)",
        )
        .with_hint("Read the documents with POST /read (a `query` finds lines in one document), or ask the operator to set DOCREADER_INDEX_READS to all or on_demand."));
    }
    Ok(())
}
