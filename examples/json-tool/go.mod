module example.com/json-tool

go 1.26.0

require github.com/sparrow-cli/sparrow/sdk v0.0.0

replace github.com/sparrow-cli/sparrow/sdk => ../../sdk
