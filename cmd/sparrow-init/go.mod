module github.com/sparrow-cli/sparrow/cmd/sparrow-init

go 1.26.0

require github.com/sparrow-cli/sparrow/sdk v0.0.0

require (
	github.com/landlock-lsm/go-landlock v0.11.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.77 // indirect
)

replace github.com/sparrow-cli/sparrow/sdk => ../../sdk
