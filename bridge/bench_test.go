package bridge

import (
	"context"
	"testing"
)

// BenchmarkRunActionTrue is the cost of the sandbox per action: a
// read-only /bin/true in a small repository, with the namespaces (the
// masks mounted, a fresh /proc) and with Landlock alone.
func BenchmarkRunActionTrue(b *testing.B) {
	fsys, root := rtWorkdir(b)
	wp := rtPolicy(root, map[string]Action{"true": {Argv: []string{"/bin/true"}, Argument: ArgumentNone}})
	for _, mode := range []struct {
		name string
		noNS bool
	}{{"namespaces", false}, {"landlock-only", true}} {
		b.Run(mode.name, func(b *testing.B) {
			namespacesDisabled.Store(mode.noNS)
			defer namespacesDisabled.Store(false)
			for b.Loop() {
				if _, err := RunAction(context.Background(), fsys, "w", wp, "true", "", RunLimits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
