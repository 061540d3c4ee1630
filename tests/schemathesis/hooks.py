"""schemathesis hooks for docreader, loaded through `hooks` in schemathesis.toml from the
working directory tests/schemathesis/run.sh prepares (it holds file_ids.json).

1. POST /read reaches real files. Most generated `file_id`s name no file (404), so reads
   would never reach the extractors. A string `file_id` is swapped for the id of a real
   upload: one whose format takes every option the body gives when there is one (OPTIONS
   mirrors src/options.rs; it only steers the choice, a stale entry fails nothing), else
   any. The pick comes from a checksum of the generated body, so shrinking and replays see
   the same file; about one in eight bodies keeps its made-up id.

2. A schema-valid POST /read may be refused with 400 only for what the file's content
   decides, which no schema can state: an option that does not fit the file's format
   (`unsupported_option`: `sheet` on a PDF), a sheet the workbook does not have, `range`
   without `sheet` on a workbook of several sheets; and two things JSON Schema cannot
   express: `inverted_range` (the order of two numbers inside one string) and a `query`
   that is not a valid Rust regex. schemathesis.toml lets 400 through positive_data_acceptance
   for POST /read; the check below fails every other 400 a schema-valid read gets, with the
   server's code and message, so a constraint missing from the schema (a required field, an
   enum, a minimum, a pattern) still shows.

3. POST /upload: UploadForm allows form fields besides `file` (the server ignores plain
   fields), so schemathesis makes up field names, some with control characters. Those
   cannot be sent: a part's Content-Disposition is a header, and control characters are not
   allowed in header values (RFC 9110), so the server rightly answers 400 "malformed
   multipart body". Such cases are dropped before they are sent (UTF-8 names go through).
   The same holds for a one-shot read's form (OneShotForm, POST /read as multipart), whose
   `options` part is a string holding a JSON object: a refusal of what that string holds is
   one JSON Schema cannot state of a string, as a regex is (ONE_SHOT_OPTIONS below).
"""
import json
import re
import zlib

import schemathesis

# -- 1. POST /read reaches real files ----------------------------------------------------


def _load_files(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)["files"]
    except (OSError, ValueError, KeyError):
        return []


FILES = _load_files("file_ids.json")

# Options each format family takes besides deadline_ms and max_chars (src/options.rs).
OPTIONS = {
    "text": {"offset", "limit", "byte_offset", "byte_length", "query", "query_mode", "context_lines", "profile",
             "hidden_text"},
    "html": {"offset", "limit", "byte_offset", "byte_length", "query", "query_mode", "context_lines", "raw",
             "hidden_text"},
    "pdf": {"pages", "query", "query_mode", "context_lines", "min_text_per_page", "ocr", "ocr_lang",
            "password", "include_boxes", "hidden_text"},
    "pptx": {"pages", "hidden_text"},
    "docx": {"mode", "max_paragraphs", "paragraph_offset", "query", "query_mode", "context_lines", "hidden_text"},
    "excel": {"sheet", "sheets_after", "range", "max_cells", "profile", "hidden_text"},
    "image": {"min_text_per_page", "ocr", "ocr_lang", "include_boxes"},
    "email": {"offset", "limit", "hidden_text"},
}
ANY_FORMAT = {"deadline_ms", "max_chars", "max_tokens", "output", "file_id", "path"}


@schemathesis.hook("map_case").apply_to(method="POST", path="/read")
def real_file_ids(ctx, case):
    """Point most string `file_id`s at real uploads that take the options given."""
    body = case.body
    if not FILES or not isinstance(body, dict) or not isinstance(body.get("file_id"), str):
        return case
    # The whole body decides, not file_id alone: generated ids are mostly "" or short.
    pick = zlib.crc32(json.dumps(body, sort_keys=True, default=str).encode("utf-8", "surrogatepass"))
    if (pick >> 16) % 8 == 7:
        return case
    given = {k for k, v in body.items() if v is not None} - ANY_FORMAT
    candidates = [f for f in FILES if given <= OPTIONS.get(f.get("format"), set())] or FILES
    case.body = {**body, "file_id": candidates[pick % len(candidates)]["file_id"]}
    return case


# -- 2. Schema-valid reads are refused with 400 only for content-based reasons -----------

CONTENT_BASED_400 = {"unsupported_option", "inverted_range"}
# invalid_option messages that depend on the workbook (src/extract/excel/mod.rs), a `section`
# that names several outline entries of the document (src/extract/outline.rs), and the one
# for a `query` that is not a Rust regex (`query_mode: regex`), a syntax JSON Schema has no
# way to state.
CONTENT_BASED_INVALID_OPTION = ("no sheet named ", "range needs sheet: ", 'section "',
                                "query is not a valid regular expression")


def _error(response):
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return None, (response.content or b"")[:200].decode("utf-8", "replace")
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("code"), str(body["error"].get("message", ""))
    return None, json.dumps(body)[:200]


@schemathesis.check
def read_400_only_for_content(ctx, response, case):
    """A schema-valid POST /read answered 400 must be a content-based refusal."""
    if case.method.upper() != "POST" or case.path != "/read" or response.status_code != 400:
        return None
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    code, message = _error(response)
    if code in CONTENT_BASED_400 or (code == "invalid_option" and message.startswith(CONTENT_BASED_INVALID_OPTION)):
        return None
    # A one-shot read (multipart): its `options` part is a string holding a JSON object of
    # read options, which JSON Schema cannot state of a string (as it cannot a regex).
    if case.media_type == "multipart/form-data" and code in ("invalid_request", "invalid_option") \
            and message.startswith(ONE_SHOT_OPTIONS):
        return None
    _refuse_400(code, message)


ONE_SHOT_OPTIONS = ("the options part must be a JSON object", "bad option: ",
                    "a one-shot read reads the file it carries", "keep must be true or false")


# GET /files/{id}/pages/{n}: what JSON Schema cannot state about its parameters.
PAGE_400 = ("give dpi or width, not both", "an image has pixels, not a dpi", "only PDFs take a password")


@schemathesis.check
def page_400_only_for_content(ctx, response, case):
    """A schema-valid page request answered 400 must be one the schema cannot forbid."""
    if case.method.upper() != "GET" or not case.path.endswith("/pages/{n}") or response.status_code != 400:
        return None
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    code, message = _error(response)
    if code in ("invalid_option", "unsupported_option") and message.startswith(PAGE_400):
        return None
    _refuse_400(code, message)


def _refuse_400(code, message):
    raise AssertionError(
        f"Schema-valid request refused with 400 {code}: {message}\n"
        "Only a refusal the file's content decides (unsupported_option, a missing sheet) or one "
        "JSON Schema cannot express (inverted_range, a bad regex) may meet a schema-valid read; "
        "the schema should forbid this request instead "
        "(a required field, an enum, a minimum, a pattern)"
    )


# -- 3. Uploads whose form field names cannot be sent are not generated ------------------

# What an HTTP field value may not hold (HTAB aside): C0 controls and DEL.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


@schemathesis.hook("filter_case").apply_to(method="POST", path="/upload")
def sendable_form_field_names(ctx, case):
    """Keep only uploads whose form field names can go in a multipart header."""
    body = case.body
    if not isinstance(body, dict):
        return True
    return not any(isinstance(name, str) and _CONTROL.search(name) for name in body)


@schemathesis.hook("filter_case").apply_to(method="POST", path="/read")
def sendable_one_shot_field_names(ctx, case):
    """The same for a one-shot read's multipart form (OneShotForm takes other fields too).
    Also dropped: a field given as a list of fewer than two values. A form sends a list as
    one part per value, so an empty list is no part at all and a one-value list one part:
    on the wire the same form as a valid one, which the schema's `type` cannot tell apart
    (two or more parts are sent, and a second `options` part is refused)."""
    body = case.body
    if case.media_type != "multipart/form-data" or not isinstance(body, dict):
        return True
    if any(isinstance(v, list) and len(v) < 2 for v in body.values()):
        return False
    return not any(isinstance(name, str) and _CONTROL.search(name) for name in body)
