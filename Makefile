# Sparrow — one cli · grows with you.
#
#   make build     bin/sparrow and every first-party plugin into bin/plugins/
#   make test      every module's tests (-race for the kernel) and the proto drift check
#   make demo      build, then show Sparrow finding, verifying and driving its plugins
#   make bench     benchmarks recorded in docs/PERFORMANCE.md
#   make proto     regenerate sdk/proto from the .proto files (pinned generators)
#   make install   PREFIX=/usr/local: sparrow into PREFIX/bin, plugins into PREFIX/lib/sparrow/plugins
#   make dist      every first-party plugin for DIST_PLATFORMS, packaged and signed into dist/mirror
#   make clean

GO      ?= go
PREFIX  ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS := -s -w -X github.com/sparrow-cli/sparrow/kernel.Version=$(VERSION)
# grpcnotrace drops gRPC's x/net/trace debug pages (and html/template) from
# every binary: smaller, faster to start, less to trust.
TAGS    := grpcnotrace
BUF     := $(GO) run github.com/bufbuild/buf/cmd/buf@v1.61.0

# Every first-party plugin is a directory plugins/<kind>s/<name>/ holding
# plugin.hcl and cmd/<entry>/main.go. A WASM plugin (runtime = "wasm") is
# built for GOOS=wasip1 GOARCH=wasm into its manifest's entry:
# cmd/search/ becomes search.wasm for entry = "search.wasm".
PLUGIN_MANIFESTS := $(wildcard plugins/*/*/plugin.hcl)
# manifest_attr FILE NAME prints the first top-level string NAME = "..." of FILE.
manifest_attr = sed -nE 's/^[[:space:]]*$(2)[[:space:]]*=[[:space:]]*"([^"]*)".*/\1/p' $(1) | head -n 1

# `make dist` cross-builds for these (CGO_ENABLED=0) and signs with
# $SPARROW_RELEASE_KEY when set, else with a build key in dist/.
DIST_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64

.PHONY: all build sparrow plugins test test-sdk test-kernel test-plugins test-cli test-examples proto proto-check bench demo install dist clean

all: build

build: sparrow plugins

# sparrow-init, installed beside sparrow, confines each plugin process; it
# holds nothing but confine.Init, so it starts in a fraction of sparrow's time.
sparrow:
	$(GO) build -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/sparrow ./cmd/sparrow
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/sparrow-init ./cmd/sparrow-init

plugins:
	@set -e; for m in $(PLUGIN_MANIFESTS); do \
	  dir=$$(dirname $$m); name=$$(basename $$dir); out=bin/plugins/$$name; \
	  mkdir -p $$out; \
	  if [ "$$($(call manifest_attr,$$m,runtime))" = wasm ]; then \
	    entry=$$($(call manifest_attr,$$m,entry)); \
	    echo "  plugin $$name: $$entry (wasm)"; \
	    GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $$out/$$entry ./$$dir/cmd/$${entry%.wasm}; \
	  else \
	    for c in $$dir/cmd/*/; do \
	      entry=$$(basename $$c); \
	      echo "  plugin $$name: $$entry"; \
	      $(GO) build -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $$out/$$entry ./$$c; \
	    done; \
	  fi; \
	  cp $$m $$out/plugin.hcl; \
	done

test: build test-sdk test-kernel test-plugins test-cli proto-check

test-sdk:
	$(GO) test -race ./sdk/...

test-kernel:
	$(GO) test -race ./kernel/...

test-plugins:
	$(GO) test -race ./plugins/...

test-cli:
	$(GO) test ./cmd/sparrow/... ./cmd/sparrow-dist/... ./cmd/sparrow-perf/... ./cmd/sparrow-init/...

# buf and the generators are pinned and run through `go run`: nothing to
# install but Go.
proto:
	cd sdk && $(BUF) lint && $(BUF) generate

# Fails when the committed generated code differs from a fresh generation.
proto-check:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	cd sdk && $(BUF) generate -o $$tmp && \
	for f in proto/sparrow/v1/*.pb.go; do \
	  cmp -s $$f $$tmp/$$f || { echo "proto drift: $$f differs from a fresh 'make proto'"; exit 1; }; \
	done; \
	n=$$(ls $$tmp/proto/sparrow/v1/*.pb.go | wc -l); m=$$(ls proto/sparrow/v1/*.pb.go | wc -l); \
	[ $$n -eq $$m ] || { echo "proto drift: $$n generated files, $$m committed"; exit 1; }; \
	echo "proto: generated code matches the .proto files"

# `make bench` first runs the end-to-end harness (a fake model on loopback,
# `sparrow run` against the bare-exec and minimal-loop baselines), then the
# micro-benchmarks. RUNS sets the harness's runs per case.
RUNS ?= 5
bench: build
	$(GO) run ./cmd/sparrow-perf -sparrow bin/sparrow -plugins bin/plugins -turns 10,60 -runs $(RUNS)
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./kernel/pluginhost/ ./kernel/checkpoint/ ./cmd/sparrow/
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -count 5 ./kernel/gate/ ./kernel/recorder/ ./sdk/event/
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -benchtime 500ms ./kernel/redact/
	$(GO) test -run '^$$' -bench . -benchtime 40x -count 5 ./plugins/sandboxes/local-hardened/
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -count 5 ./plugins/sandboxes/local/ ./plugins/sandboxes/worktree/
	$(GO) test -run '^$$' -bench . -count 3 ./kernel/wasmtool/

demo: build
	@./scripts/demo.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/sparrow/plugins
	install -m 0755 bin/sparrow bin/sparrow-init $(DESTDIR)$(PREFIX)/bin/
	cp -R bin/plugins/. $(DESTDIR)$(PREFIX)/lib/sparrow/plugins/

# Same build flags as `plugins`; dist/ is never committed (.gitignore).
dist:
	$(GO) run ./cmd/sparrow-dist -out dist -platforms $(DIST_PLATFORMS) -go $(GO) -tags $(TAGS) -ldflags "$(LDFLAGS)"

clean:
	rm -rf bin dist
