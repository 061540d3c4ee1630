//! SQLite through sqlx: the `files` table (who uploaded what, under which id).

use std::path::Path;
use std::str::FromStr;

use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::SqlitePool;
use utoipa::ToSchema;

/// One upload, as listed by `/files` and returned by `/upload`.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct FileRecord {
    pub file_id: String,
    /// The client's file name (metadata only; it never decides where bytes are stored).
    pub name: String,
    pub size: i64,
    pub sha256: String,
    /// Format family: pdf, docx, pptx, excel, image, email, text.
    pub format: String,
    pub mime: String,
    /// RFC 3339 UTC.
    pub created_at: String,
    #[serde(skip)]
    #[schema(ignore)]
    pub tenant: String,
}

/// Open (creating if needed) the database under the data dir and apply migrations.
pub async fn open(data_dir: &Path) -> Result<SqlitePool, sqlx::Error> {
    std::fs::create_dir_all(data_dir).map_err(sqlx::Error::Io)?;
    let url = format!("sqlite://{}", data_dir.join("docreader.db").display());
    let opts = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(std::time::Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(opts)
        .await?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

/// A connection to the same database for derived data (the search index), written
/// without waiting for the disk (`synchronous = NORMAL`): a power loss may lose its last
/// writes, never the database's consistency, and what is lost is rebuilt by reading the
/// file again. File records keep `open`'s full sync. One connection: its writes are one
/// at a time anyway.
pub async fn open_derived(data_dir: &Path) -> Result<SqlitePool, sqlx::Error> {
    let url = format!("sqlite://{}", data_dir.join("docreader.db").display());
    let opts = SqliteConnectOptions::from_str(&url)?
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
        .busy_timeout(std::time::Duration::from_secs(10));
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(opts)
        .await
}

const COLS: &str = "id AS file_id, tenant, name, size, sha256, format, mime, created_at";

pub async fn insert(pool: &SqlitePool, r: &FileRecord) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO files (id, tenant, name, size, sha256, format, mime, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(&r.file_id)
        .bind(&r.tenant)
        .bind(&r.name)
        .bind(r.size)
        .bind(&r.sha256)
        .bind(&r.format)
        .bind(&r.mime)
        .bind(&r.created_at)
        .execute(pool)
        .await?;
    Ok(())
}

/// A tenant's file; another tenant's id is simply not found.
pub async fn get(
    pool: &SqlitePool,
    tenant: &str,
    id: &str,
) -> Result<Option<FileRecord>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLS} FROM files WHERE id = ? AND tenant = ?"
    ))
    .bind(id)
    .bind(tenant)
    .fetch_optional(pool)
    .await
}

pub async fn list(
    pool: &SqlitePool,
    tenant: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<FileRecord>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLS} FROM files WHERE tenant = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?"
    ))
    .bind(tenant)
    .bind(limit)
    .bind(offset)
    .fetch_all(pool)
    .await
}

/// A tenant's upload of exactly these bytes under exactly this name, if any.
pub async fn find_same(
    pool: &SqlitePool,
    tenant: &str,
    sha256: &str,
    name: &str,
) -> Result<Option<FileRecord>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLS} FROM files WHERE tenant = ? AND sha256 = ? AND name = ? ORDER BY created_at LIMIT 1"
    ))
    .bind(tenant)
    .bind(sha256)
    .bind(name)
    .fetch_optional(pool)
    .await
}

/// Delete a tenant's file row; returns its sha256 when a row was deleted.
pub async fn delete(
    pool: &SqlitePool,
    tenant: &str,
    id: &str,
) -> Result<Option<String>, sqlx::Error> {
    let row: Option<(String,)> =
        sqlx::query_as("DELETE FROM files WHERE id = ? AND tenant = ? RETURNING sha256")
            .bind(id)
            .bind(tenant)
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|r| r.0))
}

/// OCR lines remembered for a tenant's bytes: page → JSON lines.
pub async fn memory_get(
    pool: &SqlitePool,
    tenant: &str,
    sha256: &str,
    variant: &str,
) -> Result<Vec<(i64, String)>, sqlx::Error> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT page, lines FROM page_memory WHERE tenant = ? AND sha256 = ? AND variant = ?",
    )
    .bind(tenant)
    .bind(sha256)
    .bind(variant)
    .fetch_all(pool)
    .await?;
    if !rows.is_empty() {
        sqlx::query(
            "UPDATE page_memory SET last_used = ? WHERE tenant = ? AND sha256 = ? AND variant = ?",
        )
        .bind(chrono::Utc::now().to_rfc3339())
        .bind(tenant)
        .bind(sha256)
        .bind(variant)
        .execute(pool)
        .await?;
    }
    Ok(rows)
}

/// Remember a page's OCR lines, then evict the least recently used past `max_bytes`.
pub async fn memory_put(
    pool: &SqlitePool,
    tenant: &str,
    sha256: &str,
    variant: &str,
    page: i64,
    lines: &str,
    max_bytes: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT OR REPLACE INTO page_memory (tenant, sha256, variant, page, lines, bytes, last_used) VALUES (?, ?, ?, ?, ?, ?, ?)")
        .bind(tenant)
        .bind(sha256)
        .bind(variant)
        .bind(page)
        .bind(lines)
        .bind(lines.len() as i64)
        .bind(chrono::Utc::now().to_rfc3339())
        .execute(pool)
        .await?;
    let (total,): (i64,) = sqlx::query_as("SELECT COALESCE(SUM(bytes), 0) FROM page_memory")
        .fetch_one(pool)
        .await?;
    if total > max_bytes {
        // Drop the oldest rows until under the cap (a bounded pass).
        sqlx::query(
            "DELETE FROM page_memory WHERE rowid IN (SELECT rowid FROM page_memory ORDER BY last_used LIMIT \
             (SELECT COUNT(*) FROM page_memory) / 4 + 1)",
        )
        .execute(pool)
        .await?;
    }
    Ok(())
}

/// Forget a tenant's memory of some bytes (its last upload of them is gone).
pub async fn memory_forget(
    pool: &SqlitePool,
    tenant: &str,
    sha256: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM page_memory WHERE tenant = ? AND sha256 = ?")
        .bind(tenant)
        .bind(sha256)
        .execute(pool)
        .await?;
    Ok(())
}

/// How many uploads of a tenant reference these bytes.
pub async fn tenant_refs(
    pool: &SqlitePool,
    tenant: &str,
    sha256: &str,
) -> Result<i64, sqlx::Error> {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM files WHERE tenant = ? AND sha256 = ?")
        .bind(tenant)
        .bind(sha256)
        .fetch_one(pool)
        .await?;
    Ok(n)
}

/// How many uploads (of any tenant) still reference these bytes.
pub async fn refs(pool: &SqlitePool, sha256: &str) -> Result<i64, sqlx::Error> {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM files WHERE sha256 = ?")
        .bind(sha256)
        .fetch_one(pool)
        .await?;
    Ok(n)
}

/// Keep an upload token (its sha256) for a tenant's file name until `expires_at` (unix s).
pub async fn token_insert(
    pool: &SqlitePool,
    token_sha256: &str,
    tenant: &str,
    name: &str,
    expires_at: i64,
) -> Result<(), sqlx::Error> {
    // Expired tokens go as new ones come: the table holds only live ones.
    sqlx::query("DELETE FROM upload_tokens WHERE expires_at < ?")
        .bind(chrono::Utc::now().timestamp() - 3600)
        .execute(pool)
        .await?;
    sqlx::query(
        "INSERT INTO upload_tokens (token_sha256, tenant, name, expires_at) VALUES (?, ?, ?, ?)",
    )
    .bind(token_sha256)
    .bind(tenant)
    .bind(name)
    .bind(expires_at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Claim a live, unused token for one upload: its tenant and file name, or `None` when it
/// is unknown, expired, used or being used. One statement, so two claims cannot both win.
pub async fn token_claim(
    pool: &SqlitePool,
    token_sha256: &str,
) -> Result<Option<(String, String)>, sqlx::Error> {
    let now = chrono::Utc::now().timestamp();
    sqlx::query_as(
        "UPDATE upload_tokens SET claimed_at = ? WHERE token_sha256 = ? AND claimed_at IS NULL \
         AND expires_at >= ? RETURNING tenant, name",
    )
    .bind(now)
    .bind(token_sha256)
    .bind(now)
    .fetch_optional(pool)
    .await
}

/// Settle a claimed token: used for good by `file_id`, or free again when the upload failed.
pub async fn token_settle(
    pool: &SqlitePool,
    token_sha256: &str,
    file_id: Option<&str>,
) -> Result<(), sqlx::Error> {
    let q = match file_id {
        Some(_) => "UPDATE upload_tokens SET file_id = ? WHERE token_sha256 = ?",
        None => "UPDATE upload_tokens SET claimed_at = NULL, file_id = ? WHERE token_sha256 = ?",
    };
    sqlx::query(q)
        .bind(file_id)
        .bind(token_sha256)
        .execute(pool)
        .await?;
    Ok(())
}
