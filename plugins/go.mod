module github.com/sparrow-cli/sparrow/plugins

go 1.26
