# mcp-workbench — see README.md (users) and CONTRIBUTING.md (contributors).

GO      ?= go
BIN     := bin/mcp-workbench
# The version the binary reports (cmd/mcp-workbench/version.go): a clean
# checkout of a release tag vX.Y.Z reports X.Y.Z; any other checkout the
# source's version with its commit, such as 0.1.0-dev+0123456789ab.dirty.
# VERSION=X.Y.Z overrides it; it must be a semantic version.
SOURCE_VERSION := $(shell sed -n 's/^const sourceVersion = "\(.*\)"$$/\1/p' cmd/mcp-workbench/version.go)
GIT_DIRTY = $(shell git status --porcelain 2>/dev/null | grep -q . && echo .dirty)
GIT_TAG   = $(if $(GIT_DIRTY),,$(shell git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null))
GIT_REV   = $(shell git rev-parse --short=12 HEAD 2>/dev/null)
VERSION  ?= $(or $(GIT_TAG),$(if $(GIT_REV),$(SOURCE_VERSION)+$(GIT_REV)$(GIT_DIRTY)))
LDFLAGS := -s -w $(if $(VERSION),-X main.version=$(VERSION))
ifneq ($(VERSION),)
ifeq ($(shell echo '$(VERSION)' | grep -Eq '^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$$' && echo ok),)
$(error VERSION=$(VERSION) is not a semantic version (X.Y.Z, optionally with -pre-release or +build))
endif
endif

NPM_DIR := testdata/npm
# The official MCP conformance suite and the Node (22 or newer) it needs,
# pinned: its client authorization scenarios run against the workbench.
CONFORMANCE_DIR := testdata/conformance

# The Claude Desktop bundle tool (mcpb), pinned: the release packs a bundle
# per platform with it (deploy/mcpb).
MCPB_DIR := testdata/mcpb

# The pinned tools, each installed into bin/tools on first use (make tools):
# staticcheck for make lint; GoReleaser, which builds the release
# (.goreleaser.yaml), and actionlint, which checks .github/workflows, for
# make dist and make release-check.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
GORELEASER_VERSION := v2.15.1
GORELEASER := bin/tools/goreleaser-$(GORELEASER_VERSION)/goreleaser
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := bin/tools/actionlint-$(ACTIONLINT_VERSION)/actionlint

.PHONY: all build demo test test-deps lint tools bench dist release-check release-deps actionlint \
	release-notes source-version goreleaser-version clean search-eval screen-eval hosts-e2e wine-test

all: build

## build: the static binary bin/mcp-workbench
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mcp-workbench

## demo: build, then open the example config's toolboxes and make real calls
demo: build
	$(GO) build -o bin/workbench-demo ./cmd/workbench-demo
	./bin/workbench-demo -bin $(BIN) -config workbench-config.example.json

## test: lint, install the pinned test servers, run every test with -race,
## then a short run of every benchmark so that they never rot (toolbox opens
## start dozens of processes each, and the context ones npx servers, so they
## run once, not 100 times)
test: lint test-deps
	$(GO) test -race -count=1 -timeout 10m ./...
	$(MAKE) --no-print-directory search-eval
	$(MAKE) --no-print-directory screen-eval
	$(GO) test -run '^$$' -bench 'Call|Throughput|Startup$$' -benchtime 100x ./cmd/mcp-workbench
	$(GO) test -run '^$$' -bench 'StartupBinary' -benchtime 2x ./cmd/mcp-workbench
	$(GO) test -run '^$$' -bench '^Benchmark(Context|Open|OpenCatalog|RefusedToolList)$$' -benchtime 1x ./cmd/mcp-workbench
	$(GO) test -short -run '^$$' -bench '^BenchmarkShared$$' -benchtime 1x ./cmd/mcp-workbench
	$(GO) test -run '^$$' -bench 'Relay' -benchtime 100x ./internal/workbench
	$(GO) test -run '^$$' -bench 'SearchCatalog' -benchtime 3x ./internal/workbench
	$(GO) test -run '^$$' -bench . -benchtime 10x ./internal/search

## search-eval: open_toolbox's tool search against testdata/search (the captured
## tool lists with our request sets, and two published sets in public/):
## recall@1, recall@5, MRR and bytes returned, overall and per kind, beside a
## plain BM25 baseline, and first-step tasks as goal and as first action (fails
## under each set's floor). The scale benchmark (400 and 10,000 tools):
## go test -run '^$' -bench SearchScale -benchtime 200x ./internal/search (README)
search-eval:
	$(GO) test -run TestSearchEval -v -count=1 ./internal/search

## screen-eval: tool screening over the captured tool lists of 16 real servers,
## configured together: how many tools it flags, and which (the README's
## false-positive count; fails if it changes)
screen-eval:
	$(GO) test -run TestScreenRealServers -v -count=1 ./internal/pins

## bench: the benchmarks at full size, then the table of direct vs workbench,
## the one of sharing and the one of HTTP replicas behind haproxy
bench: test-deps
	@mkdir -p bin
	$(GO) test -c -o bin/bench.test ./cmd/mcp-workbench
	{ ./bin/bench.test -test.run '^$$' -test.bench '^Benchmark(Call|Throughput)$$' -test.benchtime 10000x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkCallLarge$$' -test.benchtime 1000x && \
	  ./bin/bench.test -test.run '^$$' -test.bench 'Startup' -test.benchtime 200x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkRefusedToolList$$' -test.benchtime 1x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkOpen(Catalog)?$$' -test.benchtime 10x && \
	  ./bin/bench.test -test.run '^$$' -test.bench 'Context' -test.benchtime 5x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkShared$$/^sessions=' -test.benchtime 3x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkShared$$/^call$$' -test.benchtime 10000x && \
	  ./bin/bench.test -test.run '^$$' -test.bench '^BenchmarkHTTPReplicas$$' -test.benchtime 1x && \
	  $(GO) test -run '^$$' -bench '^BenchmarkRelay$$' -benchtime 100000x ./internal/workbench && \
	  $(GO) test -run '^$$' -bench '^BenchmarkSearchCatalog$$' -benchmem -benchtime 50x ./internal/workbench && \
	  $(GO) test -run '^$$' -bench . -benchmem -benchtime 200x ./internal/search; } | tee bin/bench.txt
	@echo
	@$(GO) run ./cmd/benchtable < bin/bench.txt

## test-deps: the official MCP servers the end-to-end tests use, pinned in
## testdata/npm, and the conformance suite, pinned in testdata/conformance;
## haproxy (Debian's package, which .ci/run installs) must be there for the
## tests of HTTP replicas behind it
test-deps: $(NPM_DIR)/node_modules/.package-lock.json $(CONFORMANCE_DIR)/node_modules/.package-lock.json
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || { echo "test-deps: haproxy is not installed (apt-get install haproxy)" >&2; exit 1; }

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund

$(CONFORMANCE_DIR)/node_modules/.package-lock.json: $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund
	@$(CONFORMANCE_DIR)/node_modules/.bin/node --version | grep -q '^v22\.' || { echo "test-deps: $(CONFORMANCE_DIR) has no Node 22" >&2; exit 1; }

## hosts-e2e: real hosts, pinned in testdata/hosts (Codex CLI, Gemini CLI,
## Copilot CLI, OpenCode),
## each configured by mcp-workbench install and run against a scripted model
## API on 127.0.0.1: a search and a use_tool call through the workbench to
## the official memory server, and Codex's and Gemini CLI's hooks blocking a
## denied call
## (cmd/mcp-workbench/hosts_*_e2e_test.go, build tag hosts; a missing host
## fails them)
HOSTS_DIR := testdata/hosts
hosts-e2e: build test-deps $(HOSTS_DIR)/node_modules/.package-lock.json
	WB_HOSTS_WORKBENCH=$(CURDIR)/$(BIN) $(GO) test -tags hosts -count=1 -timeout 15m -run '^TestHosts' -v ./cmd/mcp-workbench

$(HOSTS_DIR)/node_modules/.package-lock.json: $(HOSTS_DIR)/package.json $(HOSTS_DIR)/package-lock.json
	cd $(HOSTS_DIR) && npm ci --no-audit --no-fund --ignore-scripts

## wine-test: the Windows build's tests under wine (Debian's wine 8, with the
## rig of .ci/wine-setup in bin/wine): the core packages' test binaries,
## cross-compiled, run from their folders, and the Windows end to end test
## of the real .exe (.ci/run runs it beside make test)
wine-test: $(NPM_DIR)/node_modules/.package-lock.json
	bash .ci/wine-test

## lint: gofmt, go vet (also for Windows and macOS on both its processors,
## whose files and tests must compile: vet type-checks every test file of the
## build), and staticcheck over the linux and windows builds together
lint: $(STATICCHECK)
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=darwin GOARCH=amd64 $(GO) vet ./...
	$(STATICCHECK) -f binary ./... > bin/staticcheck-linux.bin
	GOOS=windows $(STATICCHECK) -f binary ./... > bin/staticcheck-windows.bin
	$(STATICCHECK) -merge bin/staticcheck-linux.bin bin/staticcheck-windows.bin

## tools: the pinned tools, in bin/tools
tools: $(STATICCHECK) $(GORELEASER) $(ACTIONLINT)

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@$(STATICCHECK) -version | grep -qF "($(STATICCHECK_VERSION:v%=%))" || { echo "lint: $(STATICCHECK) is not staticcheck $(STATICCHECK_VERSION)" >&2; exit 1; }

$(GORELEASER):
	GOBIN=$(CURDIR)/$(dir $(GORELEASER)) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	@$(GORELEASER) --version 2>&1 | grep -qE "GitVersion: +v?$(GORELEASER_VERSION:v%=%)$$" || { echo "tools: $(GORELEASER) is not GoReleaser $(GORELEASER_VERSION)" >&2; exit 1; }

$(ACTIONLINT):
	GOBIN=$(CURDIR)/$(dir $(ACTIONLINT)) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	@$(ACTIONLINT) -version | head -n 1 | grep -qxF "$(ACTIONLINT_VERSION)" || { echo "tools: $(ACTIONLINT) is not actionlint $(ACTIONLINT_VERSION)" >&2; exit 1; }

## release-deps: what the release build needs beside Go: mcpb (pinned in
## testdata/mcpb) and the Node that runs it
release-deps: $(MCPB_DIR)/node_modules/.package-lock.json

$(MCPB_DIR)/node_modules/.package-lock.json: $(MCPB_DIR)/package.json $(MCPB_DIR)/package-lock.json
	cd $(MCPB_DIR) && npm ci --no-audit --no-fund

# What make dist and make release-check leave out, because it needs the
# release workflow (signing: its OIDC identity) or a tool this machine lacks
# (the image: docker buildx; the SBOMs: syft). Publishing is never part of
# a snapshot.
SNAPSHOT_SKIP = sign$(if $(shell docker buildx version 2>/dev/null),,$(COMMA)docker)$(if $(shell command -v syft 2>/dev/null),,$(COMMA)sbom)
COMMA := ,
# A snapshot's version: the source's with "snapshot" and its commit
# (0.2.0-dev+snapshot.0123456789ab, .dirty for uncommitted changes). Unlike
# the version a build without -X main.version reports (the same without
# "snapshot."), so that release-check sees that the release stamps it.
SNAPSHOT_VERSION = $(SOURCE_VERSION)+snapshot.$(or $(GIT_REV),unknown)$(GIT_DIRTY)

## dist: a snapshot of the whole release in dist/ with GoReleaser (archives,
## deb and rpm, Claude Desktop bundles, checksums; the image and SBOMs when
## docker buildx and syft are installed), versioned as make build does
dist: $(GORELEASER) release-deps
	@echo "dist: leaving out $(SNAPSHOT_SKIP)"
	SNAPSHOT_VERSION=$(SNAPSHOT_VERSION) $(GORELEASER) release --snapshot --clean --skip=$(SNAPSHOT_SKIP)

## actionlint: lint .github/workflows
actionlint: $(ACTIONLINT)
	$(ACTIONLINT)

## release-check: what a release would do, short of publishing: goreleaser
## check, actionlint, the snapshot of every platform (leaving out signing,
## the image and SBOMs, which need the release workflow, docker buildx or
## syft), then the linux/amd64 archive, deb and Claude Desktop bundle
## unpacked and their binaries run (.ci/release-check). CI runs it.
release-check: $(GORELEASER) $(ACTIONLINT) release-deps
	$(GORELEASER) check
	$(ACTIONLINT)
	v='$(SNAPSHOT_VERSION)' && \
	SNAPSHOT_VERSION=$$v $(GORELEASER) release --snapshot --clean --skip=sign,docker,sbom && \
	bash .ci/release-check dist $$v $(MCPB_DIR)/node_modules/.bin/mcpb

## release-notes: the section of CHANGELOG.md for RELEASE (X.Y.Z; default
## the source's version), into bin/release-notes.md: the release's notes
RELEASE ?= $(SOURCE_VERSION)
release-notes:
	@mkdir -p bin
	bash .ci/release-notes $(RELEASE) CHANGELOG.md > bin/release-notes.md

source-version:
	@echo $(SOURCE_VERSION)

goreleaser-version:
	@echo $(GORELEASER_VERSION)

clean:
	rm -rf bin dist $(NPM_DIR)/node_modules $(CONFORMANCE_DIR)/node_modules $(MCPB_DIR)/node_modules
