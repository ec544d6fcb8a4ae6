//go:build !amd64 && !arm64

package sandbox

// seccompArches: no filter for this architecture; the Unix-socket
// control then needs Landlock ABI 9.
var seccompArches []seccompArch
