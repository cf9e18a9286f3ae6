module github.com/sparrow-cli/sparrow/cmd/sparrow-perf

go 1.26.0
