package ruleserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/yamlrules"
)

func BenchmarkEngineOnly(b *testing.B) {
	src, _ := os.ReadFile(filepath.Join(fixtures, "signup", "signup.yaml"))
	doc, _ := yamlrules.ReadYAML(src)
	rs, err := engine.Compile(doc.JSON)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req, err := engine.ParseRequest(benchBody)
		if err != nil {
			b.Fatal(err)
		}
		res, err := rs.Evaluate(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := res.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEngineParts(b *testing.B) {
	src, _ := os.ReadFile(filepath.Join(fixtures, "signup", "signup.yaml"))
	doc, _ := yamlrules.ReadYAML(src)
	rs, _ := engine.Compile(doc.JSON)
	req, _ := engine.ParseRequest(benchBody)
	res, _ := rs.Evaluate(req)
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = engine.ParseRequest(benchBody)
		}
	})
	b.Run("evaluate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = rs.Evaluate(req)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = res.JSON()
		}
	})
}
