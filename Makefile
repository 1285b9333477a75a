# sdods — see README.md. `make run` and `make test` are the two commands a newcomer needs.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
GO122 ?= go1.22.12
BIN := .bin
export GOFLAGS := -buildvcs=false

.PHONY: deps run token test test-go s3-test-server test-engine test-engine-go test-engine-go122 test-ts test-web webui check-webui ui-screenshots build generate check-generated lint lint-go lint-engine lint-openapi tools clean help FORCE

# Each runtime of another language (runtimes/<language>/) brings its own targets in runtime.mk and
# names them here: RUNTIME_TESTS (its unit tests, run by make test) and RUNTIME_CONFORMANCE (the
# suite over the engine protocol, run by make conformance after the Go engine's).
RUNTIME_TESTS :=
RUNTIME_CONFORMANCE :=
# json-logic-js, the reference implementation impl/rules/rulecheck/jsonlogic's differential test drives.
JSONLOGIC_JS := impl/rules/rulecheck/jsonlogic/testdata/js
# The independent MCP clients impl/server/mcp's tests drive against a real sdods
# (@modelcontextprotocol/inspector, @modelcontextprotocol/conformance) and the Node.js 22 they need.
MCP_NPM := impl/server/mcp/testdata/npm
# The S3 server of impl/server/blob's tests (versitygw), at the version impl/server/blob/s3test names.
VERSITYGW_VERSION := $(shell sed -n 's/^const VersityGWVersion = "\(.*\)"/\1/p' impl/server/blob/s3test/s3test.go)
VERSITYGW := $(BIN)/versitygw-$(VERSITYGW_VERSION)/versitygw
-include $(sort $(wildcard runtimes/*/runtime.mk))

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

run: ## start the test automation server on the local (or a private) PostgreSQL and print what it did
	@DATABASE_URL="$$(bash scripts/devdb.sh)" $(GO) run ./cmd/sdods serve --create-db

token: ## create an API token in the database make run uses: make token ARGS="--user EMAIL --scopes runs:read --name ci"
	@DATABASE_URL="$$(bash scripts/devdb.sh)" $(GO) run ./cmd/sdods token create $(ARGS)

# Every target is safe under make -j (.ci/run runs the phases at once): the files several targets
# need are targets of their own, made once per make run (node_modules, $(BIN)/rules and
# $(BIN)/rulecheck, the runtimes' builds). test-go comes first: it is the longest.
test: deps test-go test-web test-engine test-ts $(RUNTIME_TESTS) ## run every test

deps: ## install what the tests need from the system's packages (Chromium for browser steps, wrk for the rule server's drain test and benchmark) where missing
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: install it (Debian: sudo apt-get install chromium)"; exit 1; fi; fi
	@if ! command -v wrk >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing wrk"; (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }) >/dev/null; \
	  else echo "wrk is missing: install it (Debian: sudo apt-get install wrk)"; exit 1; fi; fi

test-go: $(JSONLOGIC_JS)/node_modules $(MCP_NPM)/node_modules web/node_modules $(VERSITYGW) ## root module tests against the real PostgreSQL (and a real S3 server)
	@admin="$$(bash scripts/devdb.sh | sed -E 's#/sdods\?#/postgres?#')"; \
	 SDODS_TEST_VERSITYGW="$(abspath $(VERSITYGW))" \
	 SDODS_TEST_DATABASE_URL="$${SDODS_TEST_DATABASE_URL:-$$admin}" $(GO) test -count=1 -timeout 25m ./...

# json-logic-js (JSONLOGIC_JS, defined at the top) for the jsonlogic differential test; the test
# also runs npm ci itself when node_modules is missing.
$(JSONLOGIC_JS)/node_modules: $(JSONLOGIC_JS)/package-lock.json
	cd $(JSONLOGIC_JS) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The MCP clients (MCP_NPM, defined at the top); the tests also run npm ci themselves when
# node_modules is missing.
$(MCP_NPM)/node_modules: $(MCP_NPM)/package-lock.json
	cd $(MCP_NPM) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The S3 server impl/server/blob's tests run the S3 store against (versitygw, Apache-2.0), built from the
# Go module proxy once: its version is the one impl/server/blob/s3test names.
$(VERSITYGW):
	GOBIN="$(abspath $(dir $@))" GOWORK=off $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

s3-test-server: $(VERSITYGW) ## build the S3 server of impl/server/blob's tests into .bin

test-engine: test-engine-go test-engine-go122 ## engine module: standard library only, tested with Go 1.22 and the current Go

test-engine-go: ## engine module: standard library only, go vet and its tests with the current Go
	@cd engine && deps="$$($(GO) list -m all)" && [ "$$deps" = "github.com/sdods/sdods/engine" ] \
	  || { echo "engine/ must depend on nothing but the standard library; go list -m all says:"; echo "$$deps"; exit 1; }
	cd engine && $(GO) vet ./... && $(GO) test -count=1 ./...

test-engine-go122: ## engine module: its tests with Go 1.22 (the oldest Go it supports)
	cd engine && GOTOOLCHAIN=$(GO122) GOFLAGS=-buildvcs=false $(GO) test -count=1 ./...

# The web UI (web/, React + Vite). Its production build is committed under impl/server/webui/dist and
# embedded in sdods, so make run needs no Node; make webui rebuilds it after a change to web/ and
# check-webui fails when the committed build is not what web/ builds. Its end-to-end test
# (TestWebUIEndToEnd, web/e2e/run.mjs) runs in test-go against a real server and the system Chromium.
web/node_modules: web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

webui: web/node_modules ## rebuild the web UI into impl/server/webui/dist (commit it)
	cd web && npm run --silent build

check-webui: web/node_modules ## fail when impl/server/webui/dist is not the build of web/
	@out="$$(mktemp -d)"; trap 'rm -rf "$$out"' EXIT; \
	 (cd web && SDODS_WEBUI_OUT="$$out" npx vite build --logLevel error) && \
	 diff -r "$$out" impl/server/webui/dist >/dev/null || { echo "impl/server/webui/dist is out of date: run make webui and commit it"; exit 1; }

test-web: web/node_modules check-webui ## type-check the web UI, its component tests (Vitest), the build drift check
	cd web && npm run --silent typecheck && NODE_OPTIONS="--require ./scripts/node20.cjs" npx vitest run

ui-screenshots: web/node_modules ## refresh docs/ui/*.png from the end-to-end test's walk through the UI
	@admin="$$(bash scripts/devdb.sh | sed -E 's#/sdods\?#/postgres?#')"; \
	 SDODS_UI_SCREENSHOTS="$(abspath docs/ui)" SDODS_TEST_DATABASE_URL="$${SDODS_TEST_DATABASE_URL:-$$admin}" \
	 $(GO) test -count=1 -run 'TestWebUIEndToEnd$$|TestWebUIInsightsAndSchedules$$' ./impl/server/app

test-ts: clients/ts/node_modules ## type-check the TypeScript client
	cd clients/ts && npm run --silent typecheck

clients/ts/node_modules: clients/ts/package-lock.json
	cd clients/ts && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

build: ## build the binaries into bin/
	$(GO) build -o bin/ ./cmd/...

image-binary: ## build sdods exactly as deploy/sdods.Dockerfile does (static, stripped) into bin/image/
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/image/sdods ./cmd/sdods

$(BIN)/oapi-codegen: go.mod
	$(GO) build -o $(BIN)/ github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
$(BIN)/sqlc: go.mod
	$(GO) build -o $(BIN)/ github.com/sqlc-dev/sqlc/cmd/sqlc
$(BIN)/staticcheck: go.mod
	$(GO) build -o $(BIN)/ honnef.co/go/tools/cmd/staticcheck

tools: $(BIN)/oapi-codegen $(BIN)/sqlc $(BIN)/staticcheck ## build the pinned generators and linters

generate: $(BIN)/oapi-codegen $(BIN)/sqlc clients/ts/node_modules ## regenerate gen/ and clients/ from openapi/, schema/ and queries/
	bash openapi/generate.sh
	$(BIN)/sqlc generate
	$(GO) run ./internal/codegen/stubgen -in gen/serverapi -out gen/serverstub/unimplemented.gen.go
	$(GO) test ./impl/server/httpapi -run 'TestAPIStatus$$' -update >/dev/null
	cd clients/ts && npm run --silent generate

check-generated: generate ## fail when generated code differs from what is committed
	@if [ -n "$$(git status --porcelain -- gen clients docs/api-status.md)" ]; then \
	  echo "generated code is out of date; run make generate and commit:"; git status --porcelain -- gen clients docs/api-status.md; \
	  git --no-pager diff --stat -- gen clients; exit 1; fi

lint: lint-go lint-engine lint-openapi ## gofmt, go vet, staticcheck on both modules; Redocly on the API documents

lint-go: $(BIN)/staticcheck ## gofmt on every Go file; go vet and staticcheck on the root module
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; [ -z "$$out" ] || { echo "gofmt would change:"; echo "$$out"; exit 1; }
	$(GO) vet ./...
	$(BIN)/staticcheck $$($(GO) list ./... | grep -v '/gen/')

lint-engine: $(BIN)/staticcheck ## go vet and staticcheck on the engine module
	cd engine && $(GO) vet ./... && ../$(BIN)/staticcheck ./...

lint-openapi: clients/ts/node_modules ## Redocly on the API documents
	cd clients/ts && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run --silent lint:openapi

clean: ## remove build output (not the private database)
	rm -rf bin $(BIN)

.PHONY: dist conformance conformance-go
DIST := dist
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
# dist/rules-<os>-<arch>[.exe] of each platform: one target each, so make -j builds them at once.
DIST_BINARIES := $(foreach p,$(PLATFORMS),$(DIST)/rules-$(subst /,-,$(p))$(if $(filter windows/%,$(p)),.exe))

dist: $(DIST_BINARIES) $(DIST)/rules.wasm ## the single-file rules command: CGO_ENABLED=0 for six platforms, and WebAssembly (wasip1), into dist/

# FORCE: remade on every make run; go build decides what is stale.
$(DIST_BINARIES): FORCE
	@mkdir -p $(DIST)
	@p="$(basename $(notdir $@))"; p="$${p#rules-}"; \
	 echo "$@"; CGO_ENABLED=0 GOOS="$${p%-*}" GOARCH="$${p#*-}" $(GO) build -trimpath -ldflags=-s -o $@ ./cmd/rules

$(DIST)/rules.wasm: FORCE
	@mkdir -p $(DIST)
	CGO_ENABLED=0 GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -ldflags=-s -o $@ ./cmd/rules

# The rules and rulecheck commands every conformance target and the runtimes' tests run, built once
# per make run before any of them starts (their own go build lines then find them up to date), so
# that under make -j no target rewrites a command another one is running.
$(BIN)/rules $(BIN)/rulecheck: FORCE
	$(GO) build -o $(BIN)/ ./cmd/$(notdir $@)
$(RUNTIME_TESTS) $(RUNTIME_CONFORMANCE) conformance-go: $(BIN)/rules $(BIN)/rulecheck

FORCE:

conformance: conformance-go $(RUNTIME_CONFORMANCE) ## rulecheck sync --check, the suite (1899 seed cases + additions) native and WebAssembly, the file commands under WebAssembly; then each runtime's conformance

conformance-go: ## the Go engine: rulecheck sync --check, the suite native and WebAssembly, the file commands under WebAssembly
	CGO_ENABLED=0 GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -ldflags=-s -o $(BIN)/rules.wasm ./cmd/rules
	$(BIN)/rulecheck sync --check
	$(BIN)/rulecheck conformance -q --engine "$(BIN)/rules engine" --json $(BIN)/conformance-native.json
	$(BIN)/rulecheck conformance -q --engine "node --no-warnings conformance/wasi.mjs $(BIN)/rules.wasm engine" --json $(BIN)/conformance-wasm.json
	node conformance/files.mjs --reference "$(BIN)/rules" --engine "node --no-warnings conformance/wasi.mjs $(BIN)/rules.wasm"
