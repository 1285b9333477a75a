# The TypeScript runtime (runtimes/ts): npm workspaces @sdods/rules and @sdods/rule-server.
# Included by the root Makefile.
TS_RUNTIME := runtimes/ts
TS_ENGINE := node $(TS_RUNTIME)/packages/rules/dist/engine.js

.PHONY: test-typescript conformance-typescript build-typescript bench-typescript fuzz-typescript

$(TS_RUNTIME)/node_modules/.package-lock.json: $(TS_RUNTIME)/package-lock.json
	cd $(TS_RUNTIME) && npm ci --no-audit --no-fund --loglevel=error

build-typescript: $(TS_RUNTIME)/node_modules/.package-lock.json ## build the TypeScript runtime and rule server
	cd $(TS_RUNTIME) && npm run --silent build

# The Go rule server's black-box HTTP tests, run against createRuleServer (impl/rules/ruleserver/tsserver_test.go).
TS_SERVER_TESTS := TestMalformedText|TestToken|TestIfNoneMatch|TestMalformedPercentEncoding|TestPayloadTooLargeWhileUploading|TestEvaluate|TestListingAndReadiness|TestDuplicateRulesetRefused|TestNotReadyWithoutRules|TestReloadUnderLoad|TestYAMLReadersAgree

test-typescript: build-typescript ## unit tests of the TypeScript runtime, the rule server, the manifest client and the React hook
	cd $(TS_RUNTIME) && npm test --silent
	SDODS_RULESERVER=typescript $(GO) test -count=1 -run '$(TS_SERVER_TESTS)' ./impl/rules/ruleserver/
	$(GO) build -o $(BIN)/ ./cmd/rules
	node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules 3000
	SDODS_NO_CODEGEN=1 node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules 3000
	FUZZ_RULES=1 node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules 1000
	FUZZ_TEXT=1 node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules 3000

fuzz-typescript: build-typescript ## differential fuzzing of the TypeScript runtime against the Go rules engine (COUNT, SEED)
	$(GO) build -o $(BIN)/ ./cmd/rules
	node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules $${COUNT:-30000} $${SEED:-20261126}
	FUZZ_RULES=1 node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules $${COUNT:-30000} $${SEED:-20261126}
	FUZZ_TEXT=1 node $(TS_RUNTIME)/packages/rules/dist/fuzz/differential.js $(BIN)/rules $${COUNT:-30000} $${SEED:-20261126}

conformance-typescript: build-typescript ## the conformance suite (the seed's 1899 and the additions) against the TypeScript runtime, compiler and evaluator levels
	$(GO) build -o $(BIN)/ ./cmd/rulecheck
	$(BIN)/rulecheck conformance -q --level compiler --engine "$(TS_ENGINE)" --json $(BIN)/conformance-typescript-compiler.json
	$(BIN)/rulecheck conformance -q --level evaluator --engine "$(TS_ENGINE)" --json $(BIN)/conformance-typescript-evaluator.json
	@echo "closures only (no code generation, as under a Content-Security-Policy without unsafe-eval):"
	SDODS_NO_CODEGEN=1 $(BIN)/rulecheck conformance -q --level compiler --engine "$(TS_ENGINE)" --json $(BIN)/conformance-typescript-closures.json

bench-typescript: build-typescript ## benchmarks of the TypeScript runtime (docs/benchmarks.md)
	bash $(TS_RUNTIME)/bench.sh $${ROUNDS:-3}

RUNTIME_TESTS += test-typescript
RUNTIME_CONFORMANCE += conformance-typescript
