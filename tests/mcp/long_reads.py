#!/usr/bin/env python3
"""Long reads over MCP with the official Python SDK (issue #45 item 3), against a server
whose MCP reads have a deadline too short for OCR (DOCREADER_MCP_DEADLINE_MS): a
read_document that runs out of time answers in time (partial with `next`, or a timeout
error that names start_read), never after the client gave up; start_read runs the same
read as a job that is not held to that deadline, and read_result waits for it and gives
its text under read_document's header. Exits non-zero on the first failure.

    python long_reads.py http://127.0.0.1:PORT KEY SCAN.pdf

tests/integration/mcp.rs runs it against the real binary.
"""
import asyncio
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from checks import check, text_of


async def main():
    base, key, scan_path = sys.argv[1:4]
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        with open(scan_path, "rb") as f:
            r = await http.post(f"{base}/upload", files={"file": ("scan.pdf", f.read(), "application/pdf")})
        check(r.status_code == 200, f"upload: {r.status_code} {r.text}")
        scan = r.json()["files"][0]["file_id"]
        async with streamable_http_client(f"{base}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()

                # The server's MCP deadline holds a read that gives none: the OCR page is not
                # done in time, and the answer says so and what to do.
                r = await s.call_tool("read_document", {"file_id": scan})
                if r.is_error:
                    check("timeout" in text_of(r) and "start_read" in text_of(r),
                          f"a read out of time names start_read: {text_of(r)}")
                else:
                    env = r.structured_content
                    check(env.get("partial") is True and env.get("next"),
                          f"a read cut by the MCP deadline is partial with next: {text_of(r)[:300]}")

                # The same read as a job: not held to the MCP deadline.
                started = await s.call_tool("start_read", {"file_id": scan})
                check(not started.is_error, f"start_read: {text_of(started)}")
                job = started.structured_content
                check(job["job_id"].startswith("j_") and job["state"] in ("queued", "running"),
                      f"start_read answers at once with the job: {job}")
                check("read_result" in text_of(started), f"start_read says what to call: {text_of(started)}")

                now = await s.call_tool("read_result", {"job_id": job["job_id"], "wait_seconds": 0})
                check(not now.is_error, f"read_result at once: {text_of(now)}")
                if now.structured_content["state"] != "done":
                    check("again" in text_of(now), f"a running job says to call again: {text_of(now)}")

                for _ in range(6):
                    done = await s.call_tool("read_result", {"job_id": job["job_id"], "wait_seconds": 50})
                    check(not done.is_error, f"read_result: {text_of(done)}")
                    if done.structured_content["state"] == "done":
                        break
                check(done.structured_content["state"] == "done", f"the job ended: {done.structured_content}")
                head, _, body = text_of(done).partition("\n")
                check("OCR by" in head and "· complete" in head, f"read_result's header: {head}")
                check(body == done.structured_content["envelope"]["text"] and body.strip(),
                      "the job's text follows the header")

                # A deadline the call gives wins over the server's MCP default; over HTTP too,
                # a call with a progress token gets progress notifications as pages are done.
                seen = []

                async def on_progress(progress, total, message):
                    seen.append((progress, total, message))

                r = await s.call_tool("read_document", {"file_id": scan, "deadline_ms": 120000},
                                      progress_callback=on_progress)
                check(not r.is_error and "· complete" in text_of(r).partition("\n")[0],
                      f"a read with its own deadline: {text_of(r)[:300]}")
                progress = [p for p, _, _ in seen]
                check(seen and progress == sorted(set(progress)) and progress[-1] == 2
                      and all(t == 2 for _, t, _ in seen), f"progress over HTTP: {seen}")

                gone = await s.call_tool("read_result", {"job_id": "j_00000000000000000000000000000000"})
                check(gone.is_error and "not_found" in text_of(gone), f"an unknown job: {text_of(gone)}")
                bad = await s.call_tool("read_result", {"job_id": job["job_id"], "wait_seconds": 600})
                check(bad.is_error and "wait_seconds" in text_of(bad), f"a wait too long: {text_of(bad)}")
                many = await s.call_tool("start_read", {"file_ids": [scan, scan]})
                check(many.is_error and "file_ids" in text_of(many), f"start_read of several files: {text_of(many)}")
    print("mcp long reads: all checks passed")


asyncio.run(main())
