# docreader: `make run` serves on 127.0.0.1:8080, `make test` runs every test.
# Native parts (PDFium, …) come from pinned PyPI wheels via scripts/fetch_native.py,
# cached outside target/ (see README.md).

CARGO ?= cargo
ADDR ?= 127.0.0.1:8080
DATA_DIR ?= ./data

.PHONY: run test native openapi fmt bench-pdf image test-container

run: native
	$(CARGO) run --release --locked -- serve --addr $(ADDR) --data-dir $(DATA_DIR)

# The native libraries read these when they load; the binary sets them at start-up, the
# test binaries (many threads) cannot, so they are set here.
TEST_ENV = OMP_THREAD_LIMIT=1 ORT_DISABLE_TELEMETRY=1 RUST_BACKTRACE=0

# Unit and integration tests (the shared corpus included), then schemathesis against the
# binary those tests built (every operation fuzzed against openapi/openapi.json); the
# Kubernetes manifests validated first (seconds, no cluster).
test: native
	bash tests/kubernetes/validate.sh
	$(TEST_ENV) $(CARGO) test --locked --all-targets
	$(CARGO) build --locked --example fuzz
	$(TEST_ENV) $${CARGO_TARGET_DIR:-target}/debug/examples/fuzz --seconds $(FUZZ_SECONDS) --seed 1
	DOCREADER_BIN=$${CARGO_TARGET_DIR:-target}/debug/docreader bash tests/schemathesis/run.sh
	DOCREADER_BIN=$${CARGO_TARGET_DIR:-target}/debug/docreader bash tests/console/run.sh
	DOCREADER_BIN=$${CARGO_TARGET_DIR:-target}/debug/docreader bash tests/scale/run.sh

# Many replicas against real Postgres and SeaweedFS behind nginx (tests/scale/run.sh; part
# of `make test`), with the binary already built.
.PHONY: test-scale
test-scale: native
	DOCREADER_BIN=$(DOCREADER_BIN) bash tests/scale/run.sh

# Mutation fuzzing of every extractor inside workers (examples/fuzz.rs): `make fuzz MINUTES=60`.
# `make test` runs it for FUZZ_SECONDS with a fixed seed (the same inputs every run).
MINUTES ?= 10
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz: native
	$(CARGO) build --locked --bin docreader --example fuzz
	$(TEST_ENV) $${CARGO_TARGET_DIR:-target}/debug/examples/fuzz --minutes $(MINUTES)

native:
	python3 scripts/fetch_native.py

# The container image (docker/Containerfile): a release build packaged with podman, no base
# image needed (docker/mkroot.sh assembles the root from what the binary loads).
IMAGE ?= localhost/docreader:latest
image: native
	$(CARGO) build --release --locked
	bash docker/build-image.sh $(IMAGE)

# The image run as users run it, behind nginx: tests/container/run.sh (root; installs podman,
# runc and nginx from Debian when missing); then docker/compose.yaml with podman-compose,
# two replicas, Postgres, SeaweedFS and nginx (tests/container/compose.sh; stand-ins for the
# upstream images, built from this machine's binaries).
test-container: image
	SKIP_IMAGE_BUILD=1 IMAGE=$(IMAGE) bash tests/container/run.sh
	IMAGE=$(IMAGE) bash tests/container/compose.sh

# The Kubernetes manifests (docker/kubernetes/) against the API's schemas, strictly, and the
# relations their comments state (part of `make test`).
.PHONY: test-kubernetes
test-kubernetes:
	bash tests/kubernetes/validate.sh

openapi:
	$(CARGO) run --quiet --locked -- openapi --out openapi/openapi.json

fmt:
	$(CARGO) fmt

bench-pdf: native
	bash bench/pdf/run.sh

# The pinned Python test environment (tests/python/requirements.txt) in <cache>/venv,
# built once and again only when the requirements change; prints its python.
.PHONY: pyenv schemathesis
pyenv:
	python3 scripts/pyenv.py

# schemathesis (--checks all) against the already built binary, served on a free port
# (tests/schemathesis/run.sh; it never builds: run `cargo build` first).
DOCREADER_BIN ?= target/debug/docreader
schemathesis: native
	DOCREADER_BIN=$(DOCREADER_BIN) bash tests/schemathesis/run.sh
