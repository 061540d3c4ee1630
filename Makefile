# docreader: `make run` serves on 127.0.0.1:8080, `make test` runs every test.
# Native parts (PDFium, …) come from pinned PyPI wheels via scripts/fetch_native.py,
# cached outside target/ (see README.md).

CARGO ?= cargo
ADDR ?= 127.0.0.1:8080
DATA_DIR ?= ./data

.PHONY: run test native openapi fmt bench-pdf

run: native
	$(CARGO) run --release --locked -- serve --addr $(ADDR) --data-dir $(DATA_DIR)

test: native
	RUST_BACKTRACE=0 $(CARGO) test --locked --all-targets

native:
	python3 scripts/fetch_native.py

openapi:
	$(CARGO) run --quiet --locked -- openapi --out openapi/openapi.json

fmt:
	$(CARGO) fmt

bench-pdf: native
	bash bench/pdf/run.sh
