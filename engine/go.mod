module github.com/sdods/sdods/engine

go 1.22
