"""What the SDK-driven checks in this folder share (client.py, stdio_client.py,
long_reads.py import it: each runs as a script, so this folder is on its path)."""
import sys


def check(cond, what):
    """Stop the run with `FAIL: what` on stderr when `cond` does not hold."""
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def text_of(result):
    """A tool result's text content, joined."""
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
