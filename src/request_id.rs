//! The id of the request a task serves (a task-local), so that error bodies, the read
//! executor and worker log lines can name it without being handed it. The HTTP layer sets
//! it (`http::request_id`); below it, it is only read.

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Run a future (a request, or a task spawned for one) under the request's id.
pub async fn scope<F: std::future::Future>(id: String, fut: F) -> F::Output {
    REQUEST_ID.scope(id, fut).await
}

/// The id of the request being served on this task, if any.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(|s| s.clone()).ok()
}
