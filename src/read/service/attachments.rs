//! Files found inside a document (e-mail attachments), stored as uploads of the tenant
//! and named in the envelope with their ids.

use super::*;

/// Keep attachments found in the document as uploads of the same tenant and list their
/// ids; one that is refused (blocked type, too large) is listed with its error instead.
/// At most `max_attachments_per_read` of them and `max_attachment_bytes_per_read` bytes are
/// stored (a message with thousands of parts must not become thousands of uploads); the
/// rest are listed as not stored, with why. If storing fails inside the service, the ones
/// this read stored are removed again: a read leaves all of its attachments or none.
pub(super) async fn store_attachments(
    st: &Storage,
    limits: &Limits,
    tenant: &str,
    env: &mut Envelope,
) {
    let found = std::mem::take(&mut env.attachments);
    if found.is_empty() {
        return;
    }
    let Some(listed) = env.report.attachments.as_mut() else {
        return;
    };
    let (mut count, mut bytes) = (0usize, 0u64);
    let mut stored: Vec<String> = Vec::new();
    let mut failed: Option<ApiError> = None;
    for (i, att) in found.into_iter().enumerate() {
        let Some(entry) = listed.get_mut(i) else {
            break;
        };
        if !st.store_attachments {
            entry.note = Some("this deployment does not store attachments".into());
            continue;
        }
        let size = att.bytes.len() as u64;
        if count >= limits.max_attachments_per_read
            || bytes.saturating_add(size) > limits.max_attachment_bytes_per_read
        {
            entry.note = Some(format!(
                "not stored: one read stores at most {} attachments and {} bytes",
                limits.max_attachments_per_read, limits.max_attachment_bytes_per_read
            ));
            continue;
        }
        count += 1;
        bytes += size;
        match st.files.store_bytes(tenant, &att.name, &att.bytes).await {
            Ok((rec, created)) => {
                if created {
                    stored.push(rec.file_id.clone());
                }
                entry.file_id = Some(rec.file_id);
                entry.format = Some(rec.format);
            }
            Err(e) if e.code == ErrorCode::Internal => {
                failed = Some(e);
                break;
            }
            Err(e) => {
                entry.error = Some(crate::report::AttachmentError {
                    code: e.code,
                    message: e.message,
                });
            }
        }
    }
    if let Some(e) = failed {
        tracing::error!(
            cause = e.cause.as_deref().unwrap_or(""),
            "attachments not stored"
        );
        for id in &stored {
            let _ = st.files.forget(tenant, id).await;
        }
        for entry in listed.iter_mut() {
            entry.file_id = None;
            entry.format = None;
            entry.note = Some(
                "not stored: the service failed to store this message's attachments; read it again"
                    .into(),
            );
        }
    }
}

/// What a message's attachments are, said without keeping them: a read of a file that is
/// not kept (a one-shot read) keeps nothing. Each is checked as an upload would be (its
/// type from its bytes, an executable or archive named as refused), up to as many as a
/// read would store, off the async runtime (a zip's directory is read to tell its type).
pub(super) async fn attachments_not_kept(limits: &Limits, env: &mut Envelope) {
    let found = std::mem::take(&mut env.attachments);
    let Some(listed) = env.report.attachments.as_mut() else {
        return;
    };
    let count = found.len();
    let max = limits.max_attachments_per_read;
    let checked = tokio::task::spawn_blocking(move || {
        found
            .iter()
            .take(max)
            .map(|att| {
                let head = &att.bytes[..att.bytes.len().min(sniff::HEAD_LEN)];
                let name = crate::store::clean_name(&att.name);
                sniff::sniff(head, att.bytes.len() as u64, &name, || {
                    std::io::Cursor::new(&att.bytes[..])
                })
                .map(|format| format.family().as_str().to_string())
                .map_err(|refusal| {
                    let e = refusal.into_error();
                    crate::report::AttachmentError {
                        code: e.code,
                        message: format!("{name}: {}", e.message),
                    }
                })
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    for (i, entry) in listed.iter_mut().take(count).enumerate() {
        entry.note = Some(
            "not kept: a one-shot read keeps nothing (\"keep\": true keeps the message and its attachments)"
                .into(),
        );
        match checked.get(i) {
            Some(Ok(format)) => entry.format = Some(format.clone()),
            Some(Err(e)) => entry.error = Some(e.clone()),
            None => {}
        }
    }
}
