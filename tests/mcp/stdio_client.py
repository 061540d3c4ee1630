#!/usr/bin/env python3
"""Drives `docreader mcp` over stdio with the official MCP Python SDK's stdio client (issue
#45 item 5), as a desktop agent host does: it starts the binary itself (from `/`, as hosts
do), lists the tools, reads a local file by `path` under the allowed root, is refused one
outside it, gets progress notifications while a scan is read with OCR, uploads a small file
as base64, indexes, searches and deletes it, and is told
that upload URLs need the HTTP server. Exits non-zero with a message on the first failure.

    python stdio_client.py BIN DATA_DIR ROOT

ROOT holds pdf/three_pages.pdf (the repository's fixtures folder).
tests/integration/mcp.rs runs it.
"""
import asyncio
import base64
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from checks import check, text_of


async def main():
    binary, data_dir, root = sys.argv[1:4]
    server = StdioServerParameters(
        command=binary,
        args=["mcp", "--allowed-roots", root],
        # JSON logs: none of them may reach stdout, the protocol's stream (the workers'
        # included), or the client fails to parse it.
        env={"DOCREADER_DATA_DIR": data_dir, "DOCREADER_LOG_FORMAT": "json"},
        cwd="/",
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            for name in ("read_document", "list_documents", "document_info", "search_documents",
                         "upload_document", "render_page", "delete_document", "index_document",
                         "start_read", "read_result"):
                check(name in (init.instructions or ""), f"the instructions name {name}")
            tools = {t.name: t for t in (await s.list_tools()).tools}
            check(len(tools) == 10, f"tools: {list(tools)}")
            props = tools["read_document"].input_schema["properties"]
            check("path" in props and "async" not in props and "callback_url" not in props,
                  f"stdio's read_document takes path, not jobs: {sorted(props)}")

            # A local file, by its path under the allowed root.
            pdf = os.path.join(root, "pdf", "three_pages.pdf")
            r = await s.call_tool("read_document", {"path": pdf})
            check(not r.is_error, f"read by path: {text_of(r)}")
            text = text_of(r)
            check(text.startswith("[three_pages.pdf · pdf]") and "pages 1-3 of 3" in text, f"header: {text[:200]}")
            check("NEEDLE" in text, "the PDF's text")
            r = await s.call_tool("read_document", {"path": pdf, "pages": "2", "include_units": True})
            units = r.structured_content["units"]
            check([u["number"] for u in units] == [2], f"units of page 2: {units}")
            # A long read reports progress as it goes (the SDK's progress callback): a typed
            # page and a scanned one read with OCR.
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            scan = os.path.join(root, "pdf", "scan_page.pdf")
            r = await s.call_tool("read_document", {"path": scan}, progress_callback=on_progress)
            check(not r.is_error and "OCR by" in text_of(r), f"the scan read: {text_of(r)[:300]}")
            check(seen and seen[-1][1] == 2 and all(t == 2 for _, t, _ in seen), f"progress: {seen}")
            progress = [p for p, _, _ in seen]
            check(progress == sorted(set(progress)) and progress[-1] == 2, f"progress rises to 2 of 2: {seen}")
            check(any("ocr" in (m or "") for _, _, m in seen), f"the OCR stage is said: {seen}")
            # The same local read as a job (start_read, then read_result waits for it).
            job = (await s.call_tool("start_read", {"path": pdf})).structured_content
            check(job and job.get("job_id", "").startswith("j_"), f"start_read by path: {job}")
            done = await s.call_tool("read_result", {"job_id": job["job_id"], "wait_seconds": 50})
            check(not done.is_error and done.structured_content["state"] == "done"
                  and "NEEDLE" in text_of(done), f"read_result by path: {text_of(done)[:300]}")
            # Outside the root: refused, and the answer says what to do.
            r = await s.call_tool("read_document", {"path": "/etc/hostname"})
            check(r.is_error and "outside_allowed_roots" in text_of(r), f"outside the root: {text_of(r)}")

            # Upload, index, search, delete.
            body = ("intro line\n" + "filler\n" * 3000 + "Quokka census total 42\n").encode()
            up = await s.call_tool("upload_document", {"name": "census.txt",
                                                        "content_base64": base64.b64encode(body).decode()})
            check(not up.is_error, f"upload_document: {text_of(up)}")
            fid = up.structured_content["file"]["file_id"]
            listed = await s.call_tool("list_documents", {})
            check(fid in text_of(listed), "the upload is listed")
            idx = await s.call_tool("index_document", {"file_id": fid})
            check(not idx.is_error and "Indexed" in text_of(idx), f"index_document: {text_of(idx)}")
            hits = (await s.call_tool("search_documents", {"query": "Quokka"})).structured_content["hits"]
            check(hits and hits[0]["file_id"] == fid and hits[0]["line"] == 3002, f"search: {hits}")
            gone = await s.call_tool("delete_document", {"file_id": fid})
            check(not gone.is_error, f"delete_document: {text_of(gone)}")
            again = await s.call_tool("delete_document", {"file_id": fid})
            check(again.is_error and "not_found" in text_of(again), f"deleted twice: {text_of(again)}")

            # No HTTP server behind this connection: no upload URLs, said plainly.
            u = await s.call_tool("upload_document", {"name": "big.pdf"})
            check(u.is_error and "path" in text_of(u), f"an upload URL over stdio: {text_of(u)}")
    print("mcp stdio client: all checks passed")


asyncio.run(main())
