#!/usr/bin/env python3
"""Drives docreader's /mcp with the official MCP Python SDK (issue #19), as an agent's host
does: initialize, list the tools, list and describe documents, read a document a part at
a time by following `next` (a token budget) until the answer says it is complete (the parts
together must equal one whole read over HTTP), read several files in one call, upload a small
file as base64 and a bigger one by an upload_url, read them back, search, refuse an
executable, a wrong option (a tool error that says what to do), and
another tenant's file (not found). Exits non-zero with a message on the first failure.

    python client.py http://127.0.0.1:PORT KEY_ALICE KEY_BOB FILE.pdf

It uploads FILE.pdf (thirty short pages) as each tenant and reads it whole over HTTP first.

tests/integration/mcp.rs runs it against the real binary.
"""
import asyncio
import base64
import json
import os
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from checks import check, text_of


async def session(base, key, body):
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(f"{base}/mcp", http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)


async def upload(http, base, key, path):
    with open(path, "rb") as f:
        r = await http.post(f"{base}/upload", headers={"Authorization": f"Bearer {key}"},
                            files={"file": (path.rsplit("/", 1)[-1], f.read(), "application/pdf")})
    check(r.status_code == 200, f"upload: {r.status_code} {r.text}")
    return r.json()["files"][0]["file_id"]


async def main():
    base, key_a, key_b, pdf = sys.argv[1:5]
    async with httpx2.AsyncClient(timeout=60) as http:
        file_a = await upload(http, base, key_a, pdf)
        file_b = await upload(http, base, key_b, pdf)
        # A typed page and a scanned one (fixtures/pdf/scan_page.pdf).
        scan_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "pdf",
                                 "scan_page.pdf")
        scan = await upload(http, base, key_a, scan_path)
        survey = await upload(http, base, key_a, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                                "fixtures", "pdf", "sections.pdf"))
        book = await upload(http, base, key_a, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                             "fixtures", "office", "book.xlsx"))
        r = await http.post(f"{base}/read", headers={"Authorization": f"Bearer {key_a}"},
                            json={"file_id": file_a, "max_chars": 10000000})
        check(r.status_code == 200, f"whole read: {r.text}")
        whole = r.json()["text"]

    async def as_alice(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        check(set(tools) == {"read_document", "list_documents", "document_info", "upload_document", "search_documents",
                             "render_page", "delete_document", "index_document", "start_read", "read_result"},
              f"tools: {list(tools)}")
        for t in tools.values():
            ro = t.name not in ("upload_document", "delete_document", "index_document", "start_read")
            check(t.annotations is not None and t.annotations.read_only_hint is ro, f"{t.name} readOnlyHint")
            check(len(t.description or "") > 80, f"{t.name} has a description a model can use")
            check(t.title, f"{t.name} has a title")
            # Every tool that answers with structured content declares its shape (the SDK
            # validates each successful call's structured content against it, so every call
            # below checks it); render_page answers with a picture.
            if t.name == "render_page":
                check(t.output_schema is None, "render_page has no structured content to describe")
            else:
                check(t.output_schema is not None and t.output_schema.get("type") == "object",
                      f"{t.name} has an outputSchema")
        check(tools["delete_document"].annotations.destructive_hint is True, "delete_document is destructive")
        check(tools["read_document"].annotations.idempotent_hint is True, "read_document is idempotent")
        props = tools["read_document"].input_schema["properties"]
        check("pages" in props, "read_document's schema has the read options")
        # Only what this endpoint takes: no server paths, jobs or callbacks; no url without
        # hosts to fetch from.
        for gone in ("path", "async", "callback_url", "url", "page_range"):
            check(gone not in props, f"read_document's schema offers {gone}")
        # Short enough to send on every turn (it was 8.9k characters): each option's first
        # sentence; the whole documentation is the HTTP API's.
        size = len(json.dumps(tools["read_document"].input_schema))
        check(size < 6000, f"read_document's schema is {size} characters")
        check(all(len(p.get("description", "")) <= 121 for p in props.values()),
              "each option's description is one sentence")

        # A page as a picture: a PNG of the width asked, its size in the caption.
        pic = await s.call_tool("render_page", {"file_id": file_a, "page": 2, "width": 400})
        check(not pic.is_error, f"render_page: {text_of(pic)}")
        images = [c for c in pic.content if c.type == "image"]
        check(len(images) == 1 and images[0].mime_type == "image/png", f"render_page content: {pic.content}")
        png = base64.b64decode(images[0].data)
        check(png[:8] == b"\x89PNG\r\n\x1a\n", "a PNG")
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        check(width == 400 and f"{width}×{height}" in text_of(pic), f"render_page size: {width}×{height}, {text_of(pic)}")
        past = await s.call_tool("render_page", {"file_id": file_a, "page": 31})
        check(past.is_error and "out_of_range" in text_of(past), f"render_page past the end: {text_of(past)}")
        other = await s.call_tool("render_page", {"file_id": file_b})
        check(other.is_error and "not_found" in text_of(other), f"another tenant's page: {text_of(other)}")

        listed = await s.call_tool("list_documents", {})
        check(not listed.is_error and file_a in text_of(listed), f"list_documents: {text_of(listed)}")
        check(file_b not in text_of(listed), "another tenant's file is not listed")

        info = await s.call_tool("document_info", {"file_id": file_a})
        check(not info.is_error, f"document_info: {text_of(info)}")
        check(info.structured_content["structure"]["total_pages"] == 30, f"info: {info.structured_content}")

        # Page through with a small budget: each answer's header says how to read on.
        got, reads, args = "", 0, {"file_id": file_a, "max_tokens": 150}
        while True:
            reads += 1
            check(reads < 50, "next never ends")
            r = await s.call_tool("read_document", args)
            check(not r.is_error, f"read_document: {text_of(r)}")
            env = r.structured_content
            head, _, body = text_of(r).partition("\n")
            check(body == env["text"], "the text after the header is the envelope's text")
            if not env.get("truncated"):
                check("complete" in head, f"the last header says complete: {head}")
                got += env["text"]
                break
            check("read on" in head and "next" in env, f"a cut answer says how to read on: {head}")
            text = env["text"]
            cut = text.rfind("\n... (truncated, total ")
            got += text[:cut] if cut >= 0 else text
            check(env["tokens"] <= 150 and env["next"].get("max_tokens") == 150, f"the budget holds and is carried: {env}")
            args = {"file_id": file_a, **env["next"]}
        check(reads > 1, "the budget split the read")
        check(got == whole, "the parts rebuild one whole read")

        # The typed document over MCP (issue #42): the structured content carries it, and
        # the SDK has checked it against read_document's outputSchema on the way.
        typed = await s.call_tool("read_document", {"file_id": file_a, "output": "json", "pages": "1-2"})
        check(not typed.is_error, f"read_document json: {text_of(typed)}")
        units = typed.structured_content["document"]["units"]
        check([u["number"] for u in units] == [1, 2] and all(u["blocks"] for u in units),
              f"json units: {units}")
        # Chunks over MCP (issue #44): the same document cut within chunk_tokens, checked by
        # the SDK against the outputSchema too.
        cut = await s.call_tool("read_document", {"file_id": file_a, "output": "chunks", "chunk_tokens": 64,
                                                  "pages": "1-2"})
        check(not cut.is_error, f"read_document chunks: {text_of(cut)}")
        chunks = cut.structured_content["chunks"]
        check(chunks and all(0 < c["tokens"] <= 64 for c in chunks)
              and {u["number"] for c in chunks for u in c["units"]} == {1, 2}, f"chunks: {chunks}")

        # What the envelope says reaches the model in the header (issue #45 item 1): a scan
        # read without OCR is not "complete", its skipped page and the warning are named,
        # and the totals read as such; read with OCR, the engine and quality are said.
        r = await s.call_tool("read_document", {"file_id": scan, "ocr": "none"})
        head = text_of(r).partition("\n")[0]
        check(not r.is_error, f"scan without OCR: {text_of(r)}")
        check("pages 1-2 of 2" in head, f"pages and their total: {head}")
        check("incomplete" in head and "· complete" not in head, f"a skipped page is no complete read: {head}")
        check("NOT READ: page 2 needs OCR" in head and 'ocr "auto" and pages "2"' in head,
              f"the skipped page and how to read it: {head}")
        check('Note: page 2 needs OCR and ocr is "none"' in head, f"the warning: {head}")
        check(text_of(r).partition("\n")[2] == r.structured_content["text"], "one header line, then the text")
        r = await s.call_tool("read_document", {"file_id": scan})
        head = text_of(r).partition("\n")[0]
        check(not r.is_error and "OCR by ppocr on 1 page, quality" in head, f"OCR said: {head}")
        check("· complete" in head and "NOT READ" not in head, f"read whole with OCR: {head}")

        # document_info says what the file holds and what a read would run, not what its
        # probe (no OCR, one character) happened to read (issue #45 item 2).
        info = (await s.call_tool("document_info", {"file_id": scan})).structured_content
        st = info["structure"]
        check(st["total_pages"] == 2 and st["metadata"]["page_size"]["width_pt"] == 595, f"scan info: {info}")
        for probe_only in ("pages_read", "page_range_read", "ocr_quality", "skipped_pages", "pages_ocr", "ocr_pages"):
            check(probe_only not in st, f"{probe_only} is the probe's, not the file's: {info}")
        check(info["ocr"]["engine"] == "ppocr" and "scans" in info["ocr"]["runs_on"], f"the OCR a read runs: {info}")
        # The outline (issue #44 item 7): document_info lists the headings with their ids,
        # and read_document reads one entry by `section`, with `next` naming it.
        info = (await s.call_tool("document_info", {"file_id": survey})).structured_content
        check([(e["id"], e["title"]) for e in info["outline"]][:3]
              == [("s1", "Field Survey Report"), ("s1.1", "1 Scope"), ("s1.1.1", "1.1 Sites")],
              f"the outline: {info}")
        r = await s.call_tool("read_document", {"file_id": survey, "section": "s1.1.2"})
        check(not r.is_error and r.structured_content["text"]
              == "--- Page 2 ---\n1.2 Seasons\n\nVisits fell in spring and in autumn.\n", f"a section: {text_of(r)}")
        r = await s.call_tool("read_document", {"file_id": survey, "section": "s1.1", "max_chars": 60})
        check(not r.is_error and r.structured_content["next"]["section"] == "s1.1", f"a section's next: {text_of(r)}")
        info = (await s.call_tool("document_info", {"file_id": book})).structured_content
        sheets = info["structure"]["sheets"]
        check([x["name"] for x in sheets] == ["Data", "Hidden", "Phantom"] and sheets[0]["rows"] == 52,
              f"the sheets and their sizes: {info}")
        check(all("read" not in x for x in sheets) and "ocr" not in info, f"no sheet 'not_read' by a probe: {info}")

        # Without a budget, the tool still caps the answer (about 8k tokens).
        r = await s.call_tool("read_document", {"file_id": file_a})
        check(not r.is_error and 0 < r.structured_content["tokens"] <= 8000, f"default read: {r.structured_content}")

        # Several files in one call: one result each, in order; an unknown one fails alone.
        r = await s.call_tool("read_document", {"file_ids": [file_a, "f_00000000000000000000000000000000"],
                                                "max_tokens": 2000})
        check(not r.is_error, f"file_ids: {text_of(r)}")
        res = r.structured_content["results"]
        check([x["status"] for x in res] == ["ok", "error"], f"file_ids results: {res}")
        check("not_found" in text_of(r), "the failed file is named in the text")

        # Hints name the tools to call, not HTTP routes (issue #45 item 4).
        gone = await s.call_tool("read_document", {"file_id": "f_00000000000000000000000000000000"})
        check(gone.is_error and "not_found" in text_of(gone), f"an unknown file: {text_of(gone)}")
        check("list_documents" in text_of(gone) and "GET /files" not in text_of(gone)
              and "POST /upload" not in text_of(gone), f"the hint speaks MCP: {text_of(gone)}")

        bad = await s.call_tool("read_document", {"file_id": file_a, "sheet": "Sheet1"})
        check(bad.is_error, "a wrong option is a tool error")
        check("unsupported_option" in text_of(bad) and "What to do" in text_of(bad), f"wrong option: {text_of(bad)}")

        # A small file through the tool, then read back by its file_id.
        csv = "city,people\nTartu,97000\n".encode()
        up = await s.call_tool("upload_document", {"name": "cities.csv",
                                                   "content_base64": base64.b64encode(csv).decode()})
        check(not up.is_error, f"upload_document: {text_of(up)}")
        new_id = up.structured_content["file"]["file_id"]
        r = await s.call_tool("read_document", {"file_id": new_id})
        check(not r.is_error and r.structured_content["text"] == csv.decode(), f"read back: {text_of(r)}")
        # One-shot (#46 item 2): the file carried in the read_document call, read once and
        # not kept (no file_id, not listed); with keep it is an upload like any other.
        def listed_ids(listing):
            return {f["file_id"] for f in listing.structured_content["files"]}
        before = listed_ids(await s.call_tool("list_documents", {}))
        once = await s.call_tool("read_document", {"name": "towns.csv", "content_base64": base64.b64encode(
            "town,people\nNarva,53000\n".encode()).decode(), "max_chars": 1000})
        check(not once.is_error and once.structured_content["text"] == "town,people\nNarva,53000\n",
              f"a one-shot read: {text_of(once)}")
        check(once.structured_content.get("file_id") is None, f"a one-shot read names no file: {once.structured_content}")
        check(listed_ids(await s.call_tool("list_documents", {})) == before, "a one-shot read keeps nothing")
        kept = await s.call_tool("read_document", {"name": "towns.csv", "keep": True, "content_base64":
                                                   base64.b64encode(b"town,people\nValga,12000\n").decode()})
        kept_id = kept.structured_content.get("file_id")
        check(not kept.is_error and kept_id and kept_id in listed_ids(await s.call_tool("list_documents", {})),
              f"keep: {text_of(kept)}")
        exe = base64.b64encode(b"\x7fELF\x02\x01\x01" + bytes(120)).decode()
        for args, code in [({"name": "notes.txt", "content_base64": exe}, "blocked_type"),
                           ({"name": "a.csv", "content_base64": "bm90", "file_id": kept_id}, "invalid_option"),
                           ({"name": "a.csv"}, "invalid_option"),
                           ({"content_base64": "bm90"}, "invalid_option"),
                           ({"name": "a.csv", "content_base64": "not base64!"}, "invalid_option")]:
            bad = await s.call_tool("read_document", args)
            check(bad.is_error and code in text_of(bad), f"read_document {list(args)}: {text_of(bad)}")
        check(listed_ids(await s.call_tool("list_documents", {})) == before | {kept_id},
              "refused one-shot reads keep nothing")
        bad = await s.call_tool("start_read", {"name": "a.csv", "content_base64": "bm90"})
        check(bad.is_error and "invalid_option" in text_of(bad), f"start_read with content: {text_of(bad)}")
        check("content_base64" not in tools["start_read"].input_schema["properties"], "start_read takes stored files")

        # A bigger file by upload_url: the host PUTs the bytes with plain HTTP, no key.
        up = await s.call_tool("upload_document", {"name": "thirty.pdf"})
        check(not up.is_error and up.structured_content["upload_url"].startswith("http"), f"upload_url: {text_of(up)}")
        url = up.structured_content["upload_url"]
        async with httpx2.AsyncClient(timeout=60) as http:
            with open(pdf, "rb") as f:
                put = await http.put(url, content=f.read())
            check(put.status_code == 200, f"PUT to the upload_url: {put.status_code} {put.text}")
            again = await http.put(url, content=b"again")
            check(again.status_code == 404, f"an upload_url works once: {again.status_code}")
        put_id = put.json()["files"][0]["file_id"]
        r = await s.call_tool("read_document", {"file_id": put_id, "max_chars": 1000000})
        check(not r.is_error and r.structured_content["text"] == whole, "the PUT file reads as the uploaded one")
        # A tool answer is written whole: over HTTP it is held to 1,000,000 characters.
        big = await s.call_tool("read_document", {"file_id": put_id, "max_chars": 10000000})
        check(big.is_error and "invalid_option" in text_of(big) and "1000000" in text_of(big), f"max_chars past the tool limit: {text_of(big)}")
        big = await s.call_tool("read_document", {"file_id": put_id, "max_tokens": 300000})
        check(big.is_error and "invalid_option" in text_of(big), f"max_tokens past the tool limit: {text_of(big)}")

        elf = base64.b64encode(b"\x7fELF\x02\x01\x01" + bytes(120)).decode()
        bad = await s.call_tool("upload_document", {"name": "notes.txt", "content_base64": elf})
        check(bad.is_error and "blocked_type" in text_of(bad), f"an executable: {text_of(bad)}")

        # Search: the CSV uploaded above was read; a word of it is found there.
        found = await s.call_tool("search_documents", {"query": "Tartu"})
        check(not found.is_error, f"search_documents: {text_of(found)}")
        hits = found.structured_content["hits"]
        check(hits and hits[0]["file_id"] == new_id and "Tartu" in hits[0]["snippet"], f"search hits: {hits}")
        bad = await s.call_tool("search_documents", {"query": "x", "limit": 500})
        check(bad.is_error and "invalid_option" in text_of(bad), f"a bad limit: {text_of(bad)}")
        # Bob's file, named: not searched.
        none = await s.call_tool("search_documents", {"query": "page", "file_ids": [file_b]})
        check(not none.is_error and none.structured_content["hits"] == [], "another tenant's file is never searched")

        other = await s.call_tool("read_document", {"file_id": file_b})
        check(other.is_error and "not_found" in text_of(other), f"another tenant's file: {text_of(other)}")
        # index_document reads a never-read file whole into search; delete_document removes
        # it (and only the caller's own).
        stored = await s.call_tool("upload_document", {"name": "ledger.txt", "content_base64": base64.b64encode(
            ("ledger opening\n" + "filler line\n" * 4000 + "Zanzibar closing balance\n").encode()).decode()})
        check(not stored.is_error, f"upload ledger: {text_of(stored)}")
        ledger = stored.structured_content["file"]["file_id"]
        idx = await s.call_tool("index_document", {"file_id": ledger})
        check(not idx.is_error and idx.structured_content["chars"] > 40000, f"index_document: {text_of(idx)}")
        found = await s.call_tool("search_documents", {"query": "Zanzibar", "file_ids": [ledger]})
        check(found.structured_content["hits"] and found.structured_content["hits"][0]["line"] == 4002,
              f"the end of an indexed document is found: {found.structured_content}")
        gone = await s.call_tool("delete_document", {"file_id": file_b})
        check(gone.is_error and "not_found" in text_of(gone), f"another tenant's file is not deleted: {text_of(gone)}")
        gone = await s.call_tool("delete_document", {"file_id": ledger})
        check(not gone.is_error and gone.structured_content["deleted"] == ledger, f"delete_document: {text_of(gone)}")
        after = await s.call_tool("read_document", {"file_id": ledger})
        check(after.is_error and "not_found" in text_of(after), f"a deleted file: {text_of(after)}")
        found = await s.call_tool("search_documents", {"query": "Zanzibar"})
        check(found.structured_content["hits"] == [], "a deleted file leaves search")
        return True

    await session(base, key_a, as_alice)

    # No key: the endpoint refuses before MCP starts.
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Accept": "application/json, text/event-stream"})
        check(r.status_code == 401, f"no key: HTTP {r.status_code}")
    print("mcp client: all checks passed")


asyncio.run(main())
