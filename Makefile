# mcp-workbench — see README.md (users) and CLAUDE.md (contributors).

GO      ?= go
BIN     := bin/mcp-workbench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
NPM_DIR := testdata/npm

.PHONY: all build demo test test-deps lint clean

all: build

## build: the static binary bin/mcp-workbench
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mcp-workbench

## demo: build, then open the example config's toolboxes and make real calls
demo: build
	$(GO) build -o bin/workbench-demo ./cmd/workbench-demo
	./bin/workbench-demo -bin $(BIN) -config workbench-config.example.json

## test: lint, install the pinned test servers, run every test with -race
test: lint test-deps
	$(GO) test -race -count=1 ./...

## test-deps: the official MCP servers the end-to-end tests use, pinned in testdata/npm
test-deps: $(NPM_DIR)/node_modules/.package-lock.json

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin dist $(NPM_DIR)/node_modules
