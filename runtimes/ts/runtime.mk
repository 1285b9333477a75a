# The TypeScript runtime (runtimes/ts): npm workspaces @sdods/rules and @sdods/rule-server.
# Included by the root Makefile.
TS_RUNTIME := runtimes/ts
TS_ENGINE := node $(TS_RUNTIME)/packages/rules/dist/engine.js

.PHONY: test-typescript conformance-typescript build-typescript bench-typescript fuzz-typescript

$(TS_RUNTIME)/node_modules/.package-lock.json: $(TS_RUNTIME)/package-lock.json
	cd $(TS_RUNTIME) && npm ci --no-audit --no-fund --loglevel=error

build-typescript: $(TS_RUNTIME)/node_modules/.package-lock.json ## build the TypeScript runtime and rule server
	cd $(TS_RUNTIME) && npm run --silent build

# The Go rule server's black-box tests (impl/rules/ruleserver) run against the TypeScript rule
# server (SDODS_RULESERVER=typescript: createRuleServer in-process tests through its command, the
# process tests through the same command with the Go command's flags, environment and log lines;
# see tsserver_test.go). Every test of the package runs except these, which concern the Go server's
# own code, not its HTTP behaviour:
#   TestFromEnvGCPercent              the Go collector's target (GOGC, runtime/debug)
#   TestDockerfile, TestKubernetesManifests  the deployment files of the Go command's image
#   TestStatusMatchesTheDocument      the Go code → status table against openapi/rules.yaml (the TS
#                                     statuses are checked by the HTTP tests)
#   TestRulesetScan, TestRulesetScanMatchesFullParse, FuzzRulesetScanMatchesFullParse
#                                     the Go server's scan for the ruleset member, against its full parse
#   TestDirectRouteMatchesPipeline    the Go server's two internal routes (direct and ?via=pipeline)
#                                     answer alike; the TS server has one route
#   TestSweepLeavesAConnectionWithAnUnreadRequest, TestAcceptQueuedTakesTheQueuedConnections
#                                     the Go drain's idle sweep and accept queue, unit by unit (the TS
#                                     server's are tested in its server.test.ts)
# TestYAMLReadersAgree runs only here: the two servers' YAML readers on the same files.
TS_SERVER_SKIP := ^(TestFromEnvGCPercent|TestDockerfile|TestKubernetesManifests|TestStatusMatchesTheDocument|TestRulesetScan|TestRulesetScanMatchesFullParse|FuzzRulesetScanMatchesFullParse|TestDirectRouteMatchesPipeline|TestSweepLeavesAConnectionWithAnUnreadRequest|TestAcceptQueuedTakesTheQueuedConnections)$$

test-typescript: build-typescript ## unit tests of the TypeScript runtime, the rule server, the manifest client and the React hook
	cd $(TS_RUNTIME) && npm test --silent
	SDODS_RULESERVER=typescript $(GO) test -count=1 -skip '$(TS_SERVER_SKIP)' ./impl/rules/ruleserver/
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
