//! The error responses of the OpenAPI description, derived from the one table of codes
//! (`ErrorCode`): an operation names the codes it may answer with, `error_responses!` makes
//! a type for its `#[utoipa::path(responses(…))]`, and the status of each response, the
//! codes listed under it and their order come from `ErrorCode` — never written by hand.

use std::collections::BTreeMap;

use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::ToSchema;

use crate::error::{ErrorBody, ErrorCode};

/// `error_responses!(Name: Code, Code => "note", …);` defines the unit struct `Name`, whose
/// `utoipa::IntoResponses` answers one `ErrorBody` response per status of the codes listed
/// (see [`responses`]). Doc comments before `Name` go on the struct. Use it beside the
/// operation's other responses: `responses((status = 200, body = X), Name)`.
macro_rules! error_responses {
    ($(#[$meta:meta])* $vis:vis $name:ident: $($code:ident $(=> $note:literal)?),+ $(,)?) => {
        $(#[$meta])*
        $vis struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
            > {
                $crate::http::responses::responses(&[$((
                    $crate::error::ErrorCode::$code,
                    None::<&'static str> $(.or(Some($note)))?,
                )),+])
            }
        }
    };
}
pub(crate) use error_responses;

/// One response per status of `codes`, keyed by the status: its description is the codes'
/// wire names in the table's order (`ErrorCode::ALL`) joined by ", ", then, when some of
/// them carry a note, ": " and the notes (joined by "; "); its body is `ErrorBody`.
pub fn responses(
    codes: &[(ErrorCode, Option<&str>)],
) -> BTreeMap<String, RefOr<utoipa::openapi::response::Response>> {
    for (i, (code, _)) in codes.iter().enumerate() {
        assert!(
            !codes[..i].iter().any(|(c, _)| c == code),
            "{} is listed twice",
            code.as_str()
        );
    }
    let mut by_status: BTreeMap<u16, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for code in ErrorCode::ALL {
        let Some((_, note)) = codes.iter().find(|(c, _)| c == code) else {
            continue;
        };
        let (names, notes) = by_status.entry(code.status()).or_default();
        names.push(code.as_str());
        notes.extend(note);
    }
    by_status
        .into_iter()
        .map(|(status, (names, notes))| {
            let mut description = names.join(", ");
            if !notes.is_empty() {
                description.push_str(": ");
                description.push_str(&notes.join("; "));
            }
            let body = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(ErrorBody::name())))
                .build();
            let response = ResponseBuilder::new()
                .description(description)
                .content("application/json", body)
                .build();
            (status.to_string(), RefOr::T(response))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use utoipa::IntoResponses;

    error_responses!(Sample: TooLarge => "over a limit", Corrupt, InvalidOption, Encrypted);

    fn described(r: &utoipa::openapi::RefOr<utoipa::openapi::response::Response>) -> String {
        let v = serde_json::to_value(r).unwrap();
        assert_eq!(
            v["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorBody",
            "{v}"
        );
        v["description"].as_str().unwrap().to_string()
    }

    /// Codes land under their own status, one response each, in the table's order; a
    /// note follows the codes after a colon.
    #[test]
    fn codes_are_grouped_by_status_with_their_notes() {
        let got = Sample::responses();
        let statuses: Vec<&str> = got.keys().map(String::as_str).collect();
        assert_eq!(statuses, ["400", "413", "422"]);
        assert_eq!(described(&got["400"]), "invalid_option");
        assert_eq!(described(&got["413"]), "too_large: over a limit");
        assert_eq!(described(&got["422"]), "encrypted, corrupt");
    }

    /// Two notes under one status both show, after the codes.
    #[test]
    fn notes_of_one_status_are_joined() {
        use crate::error::ErrorCode::*;
        let got = super::responses(&[
            (UrlNotAllowed, Some("no URL inputs")),
            (OutsideAllowedRoots, Some("not under a root")),
        ]);
        assert_eq!(
            described(&got["403"]),
            "outside_allowed_roots, url_not_allowed: not under a root; no URL inputs"
        );
    }

    #[test]
    #[should_panic(expected = "listed twice")]
    fn a_code_listed_twice_is_refused() {
        use crate::error::ErrorCode::*;
        super::responses(&[(NotFound, None), (NotFound, Some("again"))]);
    }
}
