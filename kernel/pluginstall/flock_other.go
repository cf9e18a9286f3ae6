//go:build !unix

package pluginstall

import (
	"context"
	"fmt"
	"runtime"
)

// lockPlugins needs flock, which this system lacks: installs refuse to
// run rather than run unserialised.
func lockPlugins(ctx context.Context, dir string) (func(), error) {
	return nil, fmt.Errorf("plugin installs need flock, which %s lacks", runtime.GOOS)
}
