-- Document memory: OCR results per page, so a page is recognised once per tenant and
-- bytes. Never shared across tenants (a hit must not reveal another tenant's upload).
CREATE TABLE page_memory (
    tenant    TEXT NOT NULL,
    sha256    TEXT NOT NULL,
    variant   TEXT NOT NULL,   -- engine + render settings that change the result
    page      INTEGER NOT NULL,
    lines     TEXT NOT NULL,   -- JSON: [{text, box, confidence}]
    bytes     INTEGER NOT NULL,
    last_used TEXT NOT NULL,
    PRIMARY KEY (tenant, sha256, variant, page)
);
CREATE INDEX page_memory_lru ON page_memory (last_used);
