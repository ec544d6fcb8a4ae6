package wire

import "regexp"

// MaxReleaseTagLen bounds a release tag.
const MaxReleaseTagLen = 64

// releaseTagRE is vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-beta.N, no
// number with a leading zero; Go's $ is the end of the text (no newline
// before it).
var releaseTagRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-beta\.(0|[1-9][0-9]*))?$`)

// CheckReleaseTag says why tag is not a release tag, or "". Both ends
// check: the tools before a call, the bridge before it runs anything.
func CheckReleaseTag(tag string) string {
	if len(tag) > MaxReleaseTagLen || !releaseTagRE.MatchString(tag) {
		return "release_tag must be vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-beta.N (decimal numbers without leading zeros, such as v1.2.3 or v1.3.0-beta.2)"
	}
	return ""
}
