module github.com/sparrow-cli/sparrow/cmd/sparrow

go 1.26
