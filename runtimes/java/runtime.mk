# The Java runtime (runtimes/java): JDK 17 only. CI cannot reach Maven Central, so the build that
# runs here compiles with javac and packages with jar; pom.xml is what users build with Maven.
# Tests run on JUnit 5 from Debian's junit5 package (console launcher), installed where missing.

.PHONY: java-jar java-junit test-java conformance-java fuzz-java bench-java

JAVA_DIR := runtimes/java
JAVA_BUILD := $(JAVA_DIR)/build
JAVA_JAR := $(JAVA_BUILD)/sdods-rules.jar
JAVA_SRC := $(shell find $(JAVA_DIR)/src/main -name '*.java' 2>/dev/null)
JAVA_TEST_SRC := $(shell find $(JAVA_DIR)/src/test -name '*.java' 2>/dev/null)
JUNIT_CONSOLE := /usr/share/java/junit-platform-console-standalone.jar
JAVAC := javac --release 17 -encoding UTF-8 -Xlint:all -Werror

java-jar: $(JAVA_JAR) ## build the Java runtime's jar (javac, jar)

$(JAVA_JAR): $(JAVA_SRC)
	@rm -rf $(JAVA_BUILD)/classes && mkdir -p $(JAVA_BUILD)/classes
	$(JAVAC) -d $(JAVA_BUILD)/classes $(JAVA_SRC)
	jar --create --file $@ --main-class dev.sdods.rules.Engine --module-version 1.0.0-alpha.2 -C $(JAVA_BUILD)/classes .

java-junit: ## install Debian's junit5 (console launcher) where missing
	@if [ ! -f $(JUNIT_CONSOLE) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing junit5"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq junit5 >/dev/null; \
	  else echo "JUnit 5 is missing: install it (Debian: sudo apt-get install junit5)"; exit 1; fi; fi

test-java: $(JAVA_JAR) java-junit ## the Java runtime: compile, then its JUnit tests
	@rm -rf $(JAVA_BUILD)/test-classes && mkdir -p $(JAVA_BUILD)/test-classes
	$(JAVAC) -cp $(JAVA_BUILD)/classes:$(JUNIT_CONSOLE) -d $(JAVA_BUILD)/test-classes $(JAVA_TEST_SRC)
	java -Dsdods.root=$(CURDIR) -jar $(JUNIT_CONSOLE) --disable-banner --details=summary --fail-if-no-tests \
	  -cp $(JAVA_BUILD)/classes:$(JAVA_BUILD)/test-classes --scan-classpath

conformance-java: $(JAVA_JAR) ## certify the Java runtime over the engine protocol at both levels
	$(GO) build -o $(BIN)/ ./cmd/rulecheck
	$(BIN)/rulecheck conformance -q --level compiler --engine "java -jar $(JAVA_JAR) engine" --json $(BIN)/conformance-java.json
	$(BIN)/rulecheck conformance -q --level evaluator --engine "java -jar $(JAVA_JAR) engine" --json $(BIN)/conformance-java-evaluator.json

RUNTIME_TESTS += test-java
RUNTIME_CONFORMANCE += conformance-java

fuzz-java: $(JAVA_JAR) ## differential run: random requests answered by the Java runtime and the Go engine must agree
	SDODS_JAVA_JAR=$(CURDIR)/$(JAVA_JAR) SDODS_FUZZ_N=$${SDODS_FUZZ_N:-20000} $(GO) test -count=1 -v -run TestDifferential ./runtimes/java/difffuzz/ | grep -E 'differences|^(ok|FAIL|---)'

bench-java: ## the Java runtime against the Go engine: fixtures and expression cases, medians and ratios (a few minutes)
	bash $(JAVA_DIR)/bench.sh
