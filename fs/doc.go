// Package fs owns the workdirs and the path policy: which directories an
// administrator exposed (config.go: slots, flags, limits), how an agent's
// path becomes a file beneath one of them and nothing else (path.go's
// textual rules, then resolve.go's openat2 RESOLVE_BENEATH|NO_SYMLINKS, or
// a component-by-component walk where the kernel lacks it), what is hidden
// or denied (policy.go), and every operation on what is reached: listing,
// walking and finding (list.go, walk.go, find.go), reading windows and
// tails (read.go, tail.go), revision-guarded writes (write.go) behind a
// writer lease (lease.go). Every error is an *errs.Error with one of the
// codes of package errs; no host path ever appears in one.
package fs
