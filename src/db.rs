//! The metadata database: who uploaded what under which id, document memory, upload
//! tokens and the search index. Two implementations behind one type, chosen by
//! configuration: SQLite under the data dir (the embedded default) or Postgres
//! (`DOCREADER_DATABASE_URL=postgres://…`, shared by replicas, issue #22).
//!
//! Queries are written once, in the SQL both accept (`$1` placeholders, `ON CONFLICT`,
//! `RETURNING`, `CAST(… AS BIGINT)`), and run on either pool by `on!`; only search differs
//! (FTS5 on SQLite, a tsvector on Postgres: `crate::search`).

use std::path::Path;
use std::str::FromStr;

use serde::Serialize;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::SqlitePool;
use utoipa::ToSchema;

use crate::error::{ApiError, ErrorCode};

/// The database: SQLite (embedded) or Postgres (shared by replicas).
#[derive(Debug, Clone)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Run the same sqlx code on whichever pool `db` holds (`pool` names it in `body`).
macro_rules! on {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite($pool) => $body,
            $crate::db::Db::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on;

/// A value bound to a statement's `$n`, in order: the claims bind numbers and text.
#[derive(Debug, Clone, Copy)]
pub enum Bind<'a> {
    Int(i64),
    Text(&'a str),
}

/// What one kind of claim says to [`Db::claim_due`]; the shape (peek, then claim, skipping
/// rows locked by other replicas) is `claim_due`'s.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// The table whose rows are claimed, keyed by `id`.
    pub table: &'a str,
    /// The peek's condition (is any row perhaps due?) and its values.
    pub peek: &'a str,
    pub peek_binds: &'a [Bind<'a>],
    /// What the claim writes to the row it takes.
    pub set: &'a str,
    /// Which rows may be taken (the candidate row is `c`), and which first.
    pub due: &'a str,
    pub order: &'a str,
    /// The columns handed back from the row taken.
    pub returning: &'a str,
    /// The values of `set`'s, `due`'s and `order`'s `$1`, `$2`, …
    pub binds: &'a [Bind<'a>],
}

impl Db {
    pub fn is_shared(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// What a claim's inner `SELECT … LIMIT 1` ends with: on Postgres, replicas claiming at
    /// once skip each other's rows (`FOR UPDATE SKIP LOCKED`); SQLite runs the statement
    /// under its single write lock.
    fn skip_locked(&self) -> &'static str {
        match self {
            Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
            Db::Sqlite(_) => "",
        }
    }

    /// Claim the next due row of `claim.table`, or `None` when none is due. A read first
    /// (`SELECT id … WHERE {peek} LIMIT 1`): an idle poll takes no write lock (SQLite has one
    /// writer, which uploads and reads need). Then one statement, so two claimers never
    /// take the same row:
    ///
    /// `UPDATE {table} SET {set} WHERE id = (SELECT id FROM {table} c WHERE {due}
    /// ORDER BY {order} LIMIT 1{skip}) RETURNING {returning}`
    ///
    /// where `{skip}` is `FOR UPDATE SKIP LOCKED` on Postgres (replicas claiming at once
    /// skip each other's rows) and nothing on SQLite. Used by the job runners
    /// (`jobs/runner.rs`) and the callback deliverer (`callbacks.rs`).
    pub async fn claim_due<T>(&self, claim: Claim<'_>) -> Result<Option<T>, sqlx::Error>
    where
        T: Send
            + Unpin
            + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
    {
        let Claim {
            table,
            peek,
            peek_binds,
            set,
            due,
            order,
            returning,
            binds,
        } = claim;
        let q = format!("SELECT id FROM {table} WHERE {peek} LIMIT 1");
        let any: Option<(String,)> = on!(self, p => {
            let mut q = sqlx::query_as(&q);
            for b in peek_binds {
                q = match *b {
                    Bind::Int(v) => q.bind(v),
                    Bind::Text(v) => q.bind(v),
                };
            }
            q.fetch_optional(p).await
        })?;
        if any.is_none() {
            return Ok(None);
        }
        let skip = self.skip_locked();
        let q = format!(
            "UPDATE {table} SET {set} WHERE id = (SELECT id FROM {table} c WHERE {due} \
             ORDER BY {order} LIMIT 1{skip}) RETURNING {returning}"
        );
        on!(self, p => {
            let mut q = sqlx::query_as(&q);
            for b in binds {
                q = match *b {
                    Bind::Int(v) => q.bind(v),
                    Bind::Text(v) => q.bind(v),
                };
            }
            q.fetch_optional(p).await
        })
    }

    /// One round trip (readiness).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        on!(self, p => sqlx::query("SELECT 1").execute(p).await.map(drop))
    }
}

/// A database failure as the client sees it: a database that cannot be reached is
/// `unavailable` (503, `Retry-After`: the replica recovers by itself when it returns);
/// anything else is `internal`.
pub fn failure(e: sqlx::Error) -> ApiError {
    if unreachable(&e) {
        ApiError::new(ErrorCode::Unavailable, "the database is unavailable").with_cause(e)
    } else {
        ApiError::internal(e)
    }
}

/// Whether an error means the database is out of reach (rather than a bad query).
pub fn unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // Postgres: connection exceptions (08…), shutting down (57P01–57P03), too many
        // connections (53300); SQLite: busy, locked.
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03" | "53300" | "5" | "6")
        }),
        _ => false,
    }
}

/// Where the database is, for messages: the URL without its password.
pub fn display_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "(an unparsable database URL)".to_string(),
    }
}

/// Open the database, creating it if needed, and apply its migrations: Postgres when
/// `url` is given, else SQLite under `data_dir`. The error is one line naming what failed.
pub async fn open(data_dir: &Path, url: Option<&str>) -> Result<Db, String> {
    match url {
        Some(url) => open_postgres(url).await,
        None => open_sqlite(data_dir)
            .await
            .map(Db::Sqlite)
            .map_err(|e| format!("cannot open the database under {}: {e}", data_dir.display())),
    }
}

async fn open_postgres(url: &str) -> Result<Db, String> {
    let shown = display_url(url);
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!(
            "DOCREADER_DATABASE_URL must be a postgres:// URL, got {shown}"
        ));
    }
    let opts = PgConnectOptions::from_str(url).map_err(|e| format!("database {shown}: {e}"))?;
    let pool = PgPoolOptions::new()
        .max_connections(PG_POOL as u32)
        // A database that went away fails requests quickly (503), not after 30 s.
        .acquire_timeout(std::time::Duration::from_secs(5))
        .connect_with(opts)
        .await
        .map_err(|e| format!("cannot reach the database {shown}: {e}"))?;
    // sqlx holds an advisory lock while it migrates: replicas starting together take turns.
    sqlx::migrate!("./migrations/postgres")
        .run(&pool)
        .await
        .map_err(|e| format!("cannot migrate the database {shown}: {e}"))?;
    Ok(Db::Postgres(pool))
}

async fn open_sqlite(data_dir: &Path) -> Result<SqlitePool, sqlx::Error> {
    std::fs::create_dir_all(data_dir).map_err(sqlx::Error::Io)?;
    let url = format!("sqlite://{}", data_dir.join("docreader.db").display());
    let opts = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(std::time::Duration::from_secs(10));
    migrate_unsynced(opts.clone(), sqlx::migrate!("./migrations/sqlite")).await?;
    // A file's connection cannot go away as a server's can: no ping (a round trip to the
    // connection's thread) before each statement.
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .test_before_acquire(false)
        .connect_with(opts)
        .await?;
    Ok(pool)
}

/// Run a SQLite database's migrations on a connection of its own that does not wait for
/// the disk at each commit (`synchronous = NORMAL`): a fresh data dir's start paid two
/// fsyncs for each of its migrations (~15 ms of a 28 ms start). Safe in WAL mode: a power
/// loss may lose the last migrations' commits, never the database's consistency (each
/// migration and its row in `_sqlx_migrations` commit together, and are applied again at
/// the next start); and the first commit the server makes with `synchronous = FULL` (an
/// upload's row) syncs the log holding them too.
async fn migrate_unsynced(
    opts: SqliteConnectOptions,
    migrator: sqlx::migrate::Migrator,
) -> Result<(), sqlx::Error> {
    use sqlx::{ConnectOptions, Connection};
    let mut conn = opts
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
        .connect()
        .await?;
    migrator.run(&mut conn).await?;
    conn.close().await
}

/// The database of derived data (the search index). On SQLite: a file of its own,
/// `search.db`, so that indexing a read takes its write lock, never that of the uploads'
/// rows; written without waiting for the disk (`synchronous = NORMAL`: a power loss may
/// lose its last writes, never its consistency, and what is lost is rebuilt by reading
/// the file again). Its connections attach `docreader.db` as `app` (the uploads' names and
/// whether one still exists). `search::open` moves an index that earlier versions kept
/// inside `docreader.db` here the first time. On Postgres: the same pool.
pub async fn open_derived(data_dir: &Path, db: &Db) -> Result<Db, String> {
    let Db::Sqlite(_) = db else {
        return Ok(db.clone());
    };
    let failed = |e: sqlx::Error| {
        format!(
            "cannot open the search index under {}: {e}",
            data_dir.display()
        )
    };
    let url = format!("sqlite://{}", data_dir.join("search.db").display());
    let app = data_dir.join("docreader.db").display().to_string();
    let opts = SqliteConnectOptions::from_str(&url)
        .map_err(failed)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
        .busy_timeout(std::time::Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .test_before_acquire(false)
        .after_connect(move |conn, _| {
            let app = app.clone();
            Box::pin(async move {
                sqlx::query("ATTACH DATABASE ? AS app")
                    .bind(app)
                    .execute(conn)
                    .await
                    .map(drop)
            })
        })
        .connect_with(opts)
        .await
        .map_err(failed)?;
    // On the pool itself: this database never waits for the disk (`synchronous = NORMAL`).
    sqlx::migrate!("./migrations/sqlite_search")
        .run(&pool)
        .await
        .map_err(|e| failed(e.into()))?;
    Ok(Db::Sqlite(pool))
}

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

const COLS: &str = "id AS file_id, tenant, name, size, sha256, format, mime, created_at";

/// An upload's row, with its bytes when the blob file is not synced yet (SQLite only:
/// `files::RowQueue`).
pub type NewRow<'a> = (&'a FileRecord, Option<&'a [u8]>);

/// The statement that inserts upload rows (one or several). On SQLite into the view
/// `new_uploads`, whose trigger writes each row to `files` and its bytes, when it has them,
/// to `unsynced_blobs`; on Postgres, whose rows never keep bytes, into `files`.
macro_rules! insert_rows {
    ($into:expr, $with_bytes:expr, $rows:expr) => {{
        let mut q = sqlx::QueryBuilder::new($into);
        q.push_values($rows, |mut b, (r, bytes)| {
            b.push_bind(&r.file_id)
                .push_bind(&r.tenant)
                .push_bind(&r.name)
                .push_bind(r.size)
                .push_bind(&r.sha256)
                .push_bind(&r.format)
                .push_bind(&r.mime)
                .push_bind(&r.created_at);
            if $with_bytes {
                b.push_bind(bytes);
            }
        });
        q
    }};
}

const INSERT_SQLITE: &str =
    "INSERT INTO new_uploads (id, tenant, name, size, sha256, format, mime, created_at, bytes) ";
const INSERT_POSTGRES: &str =
    "INSERT INTO files (id, tenant, name, size, sha256, format, mime, created_at) ";

/// One upload's row.
pub async fn insert(db: &Db, row: NewRow<'_>) -> Result<(), sqlx::Error> {
    match db {
        Db::Sqlite(p) => insert_rows!(INSERT_SQLITE, true, [row])
            .build()
            .execute(p)
            .await
            .map(drop),
        Db::Postgres(p) => {
            debug_assert!(row.1.is_none(), "only SQLite rows keep bytes");
            insert_rows!(INSERT_POSTGRES, false, [row])
                .build()
                .execute(p)
                .await
                .map(drop)
        }
    }
}

/// Upload rows in one statement (all or none: one sync of the log for them all), on the
/// row writer's own SQLite connection.
pub async fn insert_group_on(
    conn: &mut sqlx::SqliteConnection,
    rows: &[NewRow<'_>],
) -> Result<(), sqlx::Error> {
    insert_rows!(INSERT_SQLITE, true, rows.iter().copied())
        .build()
        .execute(conn)
        .await
        .map(drop)
}

/// The rows whose bytes are still kept (their blob file may not be on disk): id and
/// sha256.
pub async fn unsynced_rows(pool: &SqlitePool) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT f.id, f.sha256 FROM unsynced_blobs u JOIN files f ON f.id = u.file_id")
        .fetch_all(pool)
        .await
}

/// The bytes kept with a row, if still kept.
pub async fn unsynced_bytes(pool: &SqlitePool, id: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
    sqlx::query_scalar("SELECT bytes FROM unsynced_blobs WHERE file_id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// Let go of the rows' copies of their bytes (their blob files are on disk).
pub async fn clear_unsynced(pool: &SqlitePool, ids: &[String]) -> Result<(), sqlx::Error> {
    for chunk in ids.chunks(500) {
        let mut q = sqlx::QueryBuilder::new("DELETE FROM unsynced_blobs WHERE file_id IN (");
        let mut list = q.separated(", ");
        for id in chunk {
            list.push_bind(id);
        }
        q.push(")").build().execute(pool).await?;
    }
    Ok(())
}

/// A tenant's file; another tenant's id is simply not found.
pub async fn get(db: &Db, tenant: &str, id: &str) -> Result<Option<FileRecord>, sqlx::Error> {
    let q = format!("SELECT {COLS} FROM files WHERE id = $1 AND tenant = $2");
    on!(db, p => sqlx::query_as(&q).bind(id).bind(tenant).fetch_optional(p).await)
}

pub async fn list(
    db: &Db,
    tenant: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<FileRecord>, sqlx::Error> {
    let q = format!(
        "SELECT {COLS} FROM files WHERE tenant = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3"
    );
    on!(db, p => sqlx::query_as(&q).bind(tenant).bind(limit).bind(offset).fetch_all(p).await)
}

/// A tenant's upload of exactly these bytes under exactly this name, if any.
pub async fn find_same(
    db: &Db,
    tenant: &str,
    sha256: &str,
    name: &str,
) -> Result<Option<FileRecord>, sqlx::Error> {
    let q = format!(
        "SELECT {COLS} FROM files WHERE tenant = $1 AND sha256 = $2 AND name = $3 ORDER BY created_at LIMIT 1"
    );
    on!(db, p => sqlx::query_as(&q).bind(tenant).bind(sha256).bind(name).fetch_optional(p).await)
}

/// Delete a tenant's file row; returns its sha256 when a row was deleted.
pub async fn delete(db: &Db, tenant: &str, id: &str) -> Result<Option<String>, sqlx::Error> {
    let q = "DELETE FROM files WHERE id = $1 AND tenant = $2 RETURNING sha256";
    let row: Option<(String,)> =
        on!(db, p => sqlx::query_as(q).bind(id).bind(tenant).fetch_optional(p).await)?;
    Ok(row.map(|r| r.0))
}

/// OCR lines remembered for a tenant's bytes: page → JSON lines.
pub async fn memory_get(
    db: &Db,
    tenant: &str,
    sha256: &str,
    variant: &str,
) -> Result<Vec<(i64, String)>, sqlx::Error> {
    let q =
        "SELECT page, lines FROM page_memory WHERE tenant = $1 AND sha256 = $2 AND variant = $3";
    let rows: Vec<(i64, String)> = on!(db, p => sqlx::query_as(q)
        .bind(tenant)
        .bind(sha256)
        .bind(variant)
        .fetch_all(p)
        .await)?;
    if !rows.is_empty() {
        let q = "UPDATE page_memory SET last_used = $1 WHERE tenant = $2 AND sha256 = $3 AND variant = $4";
        on!(db, p => sqlx::query(q)
            .bind(chrono::Utc::now().to_rfc3339())
            .bind(tenant)
            .bind(sha256)
            .bind(variant)
            .execute(p)
            .await
            .map(drop))?;
    }
    Ok(rows)
}

/// The bytes that have document memory.
pub async fn memory_keys(db: &Db) -> Result<Vec<String>, sqlx::Error> {
    let q = "SELECT DISTINCT sha256 FROM page_memory";
    let rows: Vec<(String,)> = on!(db, p => sqlx::query_as(q).fetch_all(p).await)?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// Remember a page's OCR lines, then evict the least recently used past `max_bytes`.
pub async fn memory_put(
    db: &Db,
    tenant: &str,
    sha256: &str,
    variant: &str,
    page: i64,
    lines: &str,
    max_bytes: i64,
) -> Result<(), sqlx::Error> {
    let q = "INSERT INTO page_memory (tenant, sha256, variant, page, lines, bytes, last_used) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, sha256, variant, page) \
             DO UPDATE SET lines = excluded.lines, bytes = excluded.bytes, last_used = excluded.last_used";
    on!(db, p => sqlx::query(q)
        .bind(tenant)
        .bind(sha256)
        .bind(variant)
        .bind(page)
        .bind(lines)
        .bind(lines.len() as i64)
        .bind(chrono::Utc::now().to_rfc3339())
        .execute(p)
        .await
        .map(drop))?;
    let q = "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM page_memory";
    let (total,): (i64,) = on!(db, p => sqlx::query_as(q).fetch_one(p).await)?;
    if total > max_bytes {
        // Drop the oldest rows until under the cap (a bounded pass).
        let q = "DELETE FROM page_memory WHERE (tenant, sha256, variant, page) IN \
                 (SELECT tenant, sha256, variant, page FROM page_memory ORDER BY last_used LIMIT \
                 (SELECT COUNT(*) FROM page_memory) / 4 + 1)";
        on!(db, p => sqlx::query(q).execute(p).await.map(drop))?;
    }
    Ok(())
}

/// Forget a tenant's memory of some bytes (its last upload of them is gone).
pub async fn memory_forget(db: &Db, tenant: &str, sha256: &str) -> Result<(), sqlx::Error> {
    let q = "DELETE FROM page_memory WHERE tenant = $1 AND sha256 = $2";
    on!(db, p => sqlx::query(q).bind(tenant).bind(sha256).execute(p).await.map(drop))
}

/// How many uploads of a tenant reference these bytes.
pub async fn tenant_refs(db: &Db, tenant: &str, sha256: &str) -> Result<i64, sqlx::Error> {
    let q = "SELECT COUNT(*) FROM files WHERE tenant = $1 AND sha256 = $2";
    let (n,): (i64,) =
        on!(db, p => sqlx::query_as(q).bind(tenant).bind(sha256).fetch_one(p).await)?;
    Ok(n)
}

/// How many uploads (of any tenant) still reference these bytes.
pub async fn refs(db: &Db, sha256: &str) -> Result<i64, sqlx::Error> {
    let q = "SELECT COUNT(*) FROM files WHERE sha256 = $1";
    let (n,): (i64,) = on!(db, p => sqlx::query_as(q).bind(sha256).fetch_one(p).await)?;
    Ok(n)
}

/// Keep an upload token (its sha256) for a tenant's file name until `expires_at` (unix s).
pub async fn token_insert(
    db: &Db,
    token_sha256: &str,
    tenant: &str,
    name: &str,
    expires_at: i64,
) -> Result<(), sqlx::Error> {
    // Expired tokens go as new ones come: the table holds only live ones.
    let q = "DELETE FROM upload_tokens WHERE expires_at < $1";
    on!(db, p => sqlx::query(q)
        .bind(chrono::Utc::now().timestamp() - 3600)
        .execute(p)
        .await
        .map(drop))?;
    let q = "INSERT INTO upload_tokens (token_sha256, tenant, name, expires_at) VALUES ($1, $2, $3, $4)";
    on!(db, p => sqlx::query(q)
        .bind(token_sha256)
        .bind(tenant)
        .bind(name)
        .bind(expires_at)
        .execute(p)
        .await
        .map(drop))
}

/// Claim a live, unused token for one upload: its tenant and file name, or `None` when it
/// is unknown, expired, used or being used. One statement, so two claims cannot both win.
pub async fn token_claim(
    db: &Db,
    token_sha256: &str,
) -> Result<Option<(String, String)>, sqlx::Error> {
    let now = chrono::Utc::now().timestamp();
    let q =
        "UPDATE upload_tokens SET claimed_at = $1 WHERE token_sha256 = $2 AND claimed_at IS NULL \
             AND expires_at >= $3 RETURNING tenant, name";
    on!(db, p => sqlx::query_as(q)
        .bind(now)
        .bind(token_sha256)
        .bind(now)
        .fetch_optional(p)
        .await)
}

/// Settle a claimed token: used for good by `file_id`, or free again when the upload failed.
pub async fn token_settle(
    db: &Db,
    token_sha256: &str,
    file_id: Option<&str>,
) -> Result<(), sqlx::Error> {
    let q = match file_id {
        Some(_) => "UPDATE upload_tokens SET file_id = $1 WHERE token_sha256 = $2",
        None => "UPDATE upload_tokens SET claimed_at = NULL, file_id = $1 WHERE token_sha256 = $2",
    };
    on!(db, p => sqlx::query(q)
        .bind(file_id)
        .bind(token_sha256)
        .execute(p)
        .await
        .map(drop))
}

/// Connections to Postgres each replica keeps at most.
pub const PG_POOL: usize = 16;

/// Held while a blob gains or loses a reference (an upload stores it, a delete may remove
/// it), so "is it still referenced?" and "store it" never interleave. Embedded: the
/// store's lock in this process. Postgres: a transaction-scoped advisory lock on the
/// bytes' hash, which every replica takes, released when the transaction ends (also when
/// the replica dies: its connection closes). The lock's transaction holds a pooled
/// connection while the guarded statements take others, so the holders at once are
/// capped (`gate`, half the pool): a burst of uploads waits its turn instead of using up
/// the pool and failing as `unavailable`.
pub enum BytesLock<'a> {
    Local(tokio::sync::MutexGuard<'a, ()>),
    Shared(
        sqlx::Transaction<'static, sqlx::Postgres>,
        tokio::sync::SemaphorePermit<'a>,
    ),
}

impl BytesLock<'_> {
    pub async fn take<'a>(
        db: &Db,
        local: &'a tokio::sync::Mutex<()>,
        gate: &'a tokio::sync::Semaphore,
        sha256: &str,
    ) -> Result<BytesLock<'a>, sqlx::Error> {
        match db {
            Db::Sqlite(_) => Ok(BytesLock::Local(local.lock().await)),
            Db::Postgres(p) => {
                let permit = gate.acquire().await.map_err(|_| sqlx::Error::PoolClosed)?;
                let mut tx = p.begin().await?;
                let key = i64::from_str_radix(&sha256[..15], 16).unwrap_or(0);
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(key)
                    .execute(&mut *tx)
                    .await?;
                Ok(BytesLock::Shared(tx, permit))
            }
        }
    }

    pub async fn release(self) {
        if let BytesLock::Shared(tx, _permit) = self {
            // A rollback frees the lock as well as a commit: nothing was written in it.
            let _ = tx.rollback().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Bind, Claim, Db};

    /// `claim_due` takes the first due row by the caller's order, binds text and numbers
    /// in order, hands back the caller's columns, and answers `None` when nothing is due.
    #[tokio::test]
    async fn claim_due_takes_the_first_due_row_once() {
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect("sqlite::memory:")
            .await
            .unwrap();
        sqlx::query(
            "CREATE TABLE t (id TEXT PRIMARY KEY, due INTEGER NOT NULL, turn INTEGER NOT NULL, \
             owner TEXT)",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO t VALUES ('a', 5, 2, NULL), ('b', 1, 1, NULL), ('c', 9, 0, NULL)")
            .execute(&pool)
            .await
            .unwrap();
        let db = &Db::Sqlite(pool);
        let claim = |now: i64| async move {
            db.claim_due::<(String, String)>(Claim {
                table: "t",
                peek: "owner IS NULL AND due <= $1",
                peek_binds: &[Bind::Int(now)],
                set: "owner = $1",
                due: "c.owner IS NULL AND c.due <= $2",
                order: "c.turn",
                returning: "id, owner",
                binds: &[Bind::Text("me"), Bind::Int(now)],
            })
            .await
            .unwrap()
        };
        assert_eq!(claim(0).await, None);
        assert_eq!(claim(6).await, Some(("b".into(), "me".into())));
        assert_eq!(claim(6).await, Some(("a".into(), "me".into())));
        assert_eq!(claim(6).await, None);
    }

    /// A data dir whose small uploads kept their bytes in their rows (0007) keeps them
    /// through 0008, which moves them to `unsynced_blobs`.
    #[tokio::test]
    async fn bytes_kept_in_rows_move_to_their_own_table() {
        use sqlx::{Connection, Executor};
        let mut c = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        let migrator = sqlx::migrate!("./migrations/sqlite");
        for m in migrator.iter().filter(|m| m.version <= 7) {
            c.execute(&*m.sql).await.unwrap();
        }
        c.execute(
            "INSERT INTO files (id, tenant, name, size, sha256, format, mime, created_at, unsynced) VALUES \
             ('f_a', 't', 'a.txt', 3, 'aa', 'text', 'text/plain', '2026-12-03T00:00:00.000Z', x'616263'), \
             ('f_b', 't', 'b.txt', 3, 'bb', 'text', 'text/plain', '2026-12-03T00:00:00.000Z', NULL)",
        )
        .await
        .unwrap();
        let eighth = migrator.iter().find(|m| m.version == 8).unwrap();
        c.execute(&*eighth.sql).await.unwrap();
        let kept: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT file_id, bytes FROM unsynced_blobs")
                .fetch_all(&mut c)
                .await
                .unwrap();
        assert_eq!(kept, vec![("f_a".to_string(), b"abc".to_vec())]);
        let files: i64 = sqlx::query_scalar("SELECT count(*) FROM files")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(files, 2);
        // The column is gone; rows and bytes now go in through `new_uploads`.
        assert!(c.execute("SELECT unsynced FROM files").await.is_err());
        c.execute(
            "INSERT INTO new_uploads (id, tenant, name, size, sha256, format, mime, created_at, bytes) VALUES \
             ('f_c', 't', 'c.txt', 3, 'cc', 'text', 'text/plain', '2026-12-03T00:00:00.000Z', x'646566'), \
             ('f_d', 't', 'd.txt', 3, 'dd', 'text', 'text/plain', '2026-12-03T00:00:00.000Z', NULL)",
        )
        .await
        .unwrap();
        c.execute("DELETE FROM files WHERE id = 'f_a'")
            .await
            .unwrap();
        let kept: Vec<String> =
            sqlx::query_scalar("SELECT file_id FROM unsynced_blobs ORDER BY file_id")
                .fetch_all(&mut c)
                .await
                .unwrap();
        assert_eq!(kept, vec!["f_c".to_string()]);
    }
}
