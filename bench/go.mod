module github.com/sdods/sdods/bench

go 1.26.0

require (
	github.com/expr-lang/expr v1.17.8
	github.com/google/cel-go v0.31.0
	github.com/sdods/sdods/engine v0.0.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
)

require (
	cel.dev/expr v0.25.1 // indirect
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/antlr4-go/antlr/v4 v4.13.1 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/exp v0.0.0-20260824195058-e88cd73687aa // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20240826202546-f6391c0de4c7 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240826202546-f6391c0de4c7 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

replace github.com/sdods/sdods/engine => ../engine
