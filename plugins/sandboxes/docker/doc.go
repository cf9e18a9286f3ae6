// Package docker is the Docker sandbox backend: one container per run,
// started with `docker run` at Prepare and removed at Teardown, commands
// run in it with `docker exec`. The workspace is bind-mounted read-write,
// denied paths are masked with empty mounts, network is off unless the
// policy allows it, and the container runs as the plugin's own uid:gid.
//
// Nothing outlives the plugin: the container's main process reads the
// attached stdin of `docker run -i`, so it ends (and --rm removes the
// container) when the plugin dies; Cleanup and Teardown remove it with
// `docker rm -f` as well. Requests it cannot honour get exit 127 and the
// reason on stderr. README.md lists the exact command lines.
package docker
